// The plan the agent hands trellis-shepherd over a pipe (daemon/shepherd.h): any bytes decode or
// get an error, and a decoded plan encodes back to bytes that decode to the same plan.
#include "daemon/shepherd.h"
#include "fuzz_support.h"

using namespace trellis;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Result<ShepherdPlan> plan = decode_plan(std::string(fuzz::as_text(data, size)));
  if (!plan) return 0;
  std::string encoded = encode_plan(*plan);
  Result<ShepherdPlan> again = decode_plan(encoded);
  FUZZ_CHECK(again.ok(), "an encoded plan does not decode: " + again.error().message);
  FUZZ_CHECK(encode_plan(*again) == encoded, "encode(decode(encode(plan))) differs");
  return 0;
}
