// What a control-tree port reads from anyone who connects (daemon/tree/tree_wire.h frames, then
// a TreeMessage, its TreeBody and the tree's shape), fed the fuzzer's bytes: frames come off whole
// or end the connection, a body that passes check_tree_body() gives every agent of its tree one
// place (a parent listed before it, children within the list), and a refusal decodes or errs.
#include <set>

#include "daemon/tree/tree_reply.h"
#include "daemon/tree/tree_shape.h"
#include "daemon/tree/tree_wire.h"
#include "fuzz_support.h"
#include "trellis/v1/trellis.pb.h"

using namespace trellis;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string buffer(reinterpret_cast<const char*>(data), size);
  for (int frames = 0; frames < 64; ++frames) {
    const size_t before = buffer.size();
    Result<std::optional<Frame>> frame = take_frame(buffer);
    if (!frame || !*frame) break;  // the connection ends, or waits for more
    FUZZ_CHECK(buffer.size() < before, "a frame was taken without consuming bytes");
    const Frame& f = **frame;
    FUZZ_CHECK(f.payload.size() <= kMaxFrameBytes, "a frame longer than the limit");
    if (f.kind == FrameKind::kRefusal) {
      (void)decode_refusal(f.payload);
      continue;
    }
    v1::TreeMessage message;
    if (!message.ParseFromString(f.payload)) continue;
    v1::TreeBody body;
    if (!body.ParseFromString(message.body())) continue;
    if (!check_tree_body(body)) continue;
    std::vector<std::string> agents(body.agents().begin(), body.agents().end());
    if (agents.size() > 200) continue;  // the shape's invariants on small trees; cheap inputs
    std::set<std::string> below_someone;
    for (const std::string& agent : agents) {
      std::optional<TreePosition> me = tree_position(agents, body.fanout(), agent);
      FUZZ_CHECK(me.has_value(), agent);
      FUZZ_CHECK(me->depth == 0 ? me->parent.empty() : !me->parent.empty(), agent);
      FUZZ_CHECK(static_cast<int>(me->children.size()) <= body.fanout(), agent);
      for (const TreeChild& child : me->children)
        FUZZ_CHECK(below_someone.insert(child.agent).second, "an agent with two parents");
    }
    FUZZ_CHECK(below_someone.size() + 1 == agents.size(), "an agent no parent reaches");
  }
  return 0;
}
