// The job shell's PMI-1 server (shell/pmi1_server.h), fed what hostile or broken ranks might
// send: the fuzzer's bytes are split among two local clients in chunks of any size (the first
// byte of each chunk picks the client and the chunk's length), with barriers answered as an
// exchange would answer them. Whatever comes in, the server answers with whole lines of
// key=value tokens (each starting with cmd=), reports at most one failure, asks for an exchange
// only once every client is in the barrier, and never reads on from a client it failed. The
// line parser (shell/pmi1_wire.h) and the exchange's records (shell/kv_records.h) are driven on
// the way. A second part decodes the shell-to-agent messages (shell/exchange_wire.h), which a
// job's user controls: a message that decodes encodes back to the same bytes.
#include <string>

#include "fuzz_support.h"
#include "shell/exchange_wire.h"
#include "shell/kv_records.h"
#include "shell/pmi1_server.h"
#include "shell/pmi1_wire.h"

using namespace trellis;

namespace {

void check_reply(const std::string& line) {
  FUZZ_CHECK(!line.empty() && line.back() == '\n', line);
  FUZZ_CHECK(line.find('\n') == line.size() - 1, line);
  Result<Pmi1Request> parsed = parse_pmi1_line(std::string_view(line).substr(0, line.size() - 1));
  FUZZ_CHECK(parsed, line + ": " + (parsed ? std::string() : parsed.error().message));
  FUZZ_CHECK(!parsed->mcmd, line);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input = fuzz::as_text(data, size);
  if (!input.empty() && (input[0] & 0x80)) {
    // The agent's side of its shells' socket.
    std::string buffer(input.substr(1));
    for (int i = 0; i < 64; ++i) {
      std::string before = buffer;
      Result<std::optional<ExchangeMessage>> m = take_exchange_message(buffer);
      if (!m || !*m) break;
      std::string again = encode_exchange_message(**m);
      FUZZ_CHECK(again.size() <= before.size() && before.compare(0, again.size(), again) == 0,
                 "a decoded message encodes to other bytes");
    }
    return 0;
  }
  Pmi1Server::Options options;
  options.size = 4;
  options.kvsname = "12.0";
  options.ranks = {0, 1};
  options.node = "n0";
  options.preput = {{"PMI_process_mapping", "(vector,(0,2,2))"}};
  Pmi1Server server(options);
  int failures = 0;
  size_t at = 0;
  while (at < input.size()) {
    unsigned char head = static_cast<unsigned char>(input[at++]);
    int client = head & 1;
    size_t length = std::min<size_t>(head >> 1, input.size() - at);
    Pmi1Server::Effects effects;
    server.receive(client, input.substr(at, length), effects);
    at += length;
    for (const auto& [to, line] : effects.replies) {
      FUZZ_CHECK(to == client, "an answer to the other client");
      check_reply(line);
      if (line.rfind("cmd=barrier_out", 0) == 0) FUZZ_CHECK(false, "barrier_out before exchange");
    }
    if (effects.failure) {
      ++failures;
      FUZZ_CHECK(failures == 1, "a second failure: " + effects.failure->reason);
      FUZZ_CHECK(!effects.failure->reason.empty(), "a failure without a reason");
    }
    if (effects.exchange) {
      FUZZ_CHECK(server.in_barrier(), "an exchange with nobody in the barrier");
      std::string mine = server.take_contribution();
      FUZZ_CHECK(decode_kv_records(mine), "the node's contribution does not decode");
      Pmi1Server::Effects done;
      server.exchanged(mine + encode_kv_records({{"other", "node"}}), done);
      for (const auto& [to, line] : done.replies) {
        check_reply(line);
        FUZZ_CHECK(line == "cmd=barrier_out rc=0\n", line);
      }
    }
  }
  return 0;
}
