#include "shell/pmi1_server.h"

#include <charconv>

#include "shell/pmi1_wire.h"

namespace trellis {
namespace {

std::string not_supported(std::string_view what) {
  return what.empty() ? "" : std::string(what) + "_is_not_supported_by_trellis";
}

// Replies carry messages as one token: spaces become '_' (clients print msg= as it is).
std::string token(std::string text) {
  for (char& c : text)
    if (c == ' ' || c == '\t' || c == '\n') c = '_';
  return text;
}

}  // namespace

Pmi1Server::Pmi1Server(Options options) : options_(std::move(options)) {
  clients_.resize(options_.ranks.size());
  for (const auto& [key, value] : options_.preput) global_[key] = value;
}

std::string Pmi1Server::who(int client) const {
  int rank = client >= 0 && static_cast<size_t>(client) < options_.ranks.size()
                 ? options_.ranks[static_cast<size_t>(client)]
                 : -1;
  return "rank " + std::to_string(rank) + " on " + options_.node;
}

bool Pmi1Server::initialized_not_finalized(int client) const {
  if (client < 0 || static_cast<size_t>(client) >= clients_.size()) return false;
  const Client& c = clients_[static_cast<size_t>(client)];
  return c.initialized && !c.finalized;
}

void Pmi1Server::fail_step(int client, int exit_code, std::string reason, Effects& out) {
  if (failed_) return;
  failed_ = true;
  out.failure = Failure{client, exit_code, std::move(reason)};
}

void Pmi1Server::receive(int client, std::string_view bytes, Effects& out) {
  if (client < 0 || static_cast<size_t>(client) >= clients_.size()) return;
  Client& c = clients_[static_cast<size_t>(client)];
  if (c.failed) return;
  c.buffer.append(bytes);
  size_t start = 0;
  for (size_t end; (end = c.buffer.find('\n', start)) != std::string::npos; start = end + 1) {
    line(client, std::string_view(c.buffer).substr(start, end - start), out);
    if (c.failed) {
      c.buffer.clear();
      return;
    }
  }
  c.buffer.erase(0, start);
  if (c.buffer.size() >= kPmi1MaxLine) {
    out.replies.emplace_back(client, pmi1_reply("error", {{"rc", "-1"}, {"msg", "line_too_long"}}));
    c.failed = true;
    fail_step(
        client, 1,
        who(client) + " sent a PMI line longer than " + std::to_string(kPmi1MaxLine - 1) + " bytes",
        out);
    c.buffer.clear();
  }
}

void Pmi1Server::line(int client, std::string_view text, Effects& out) {
  Client& c = clients_[static_cast<size_t>(client)];
  auto reply = [&](std::string_view cmd,
                   std::vector<std::pair<std::string_view, std::string>> fields) {
    out.replies.emplace_back(client, pmi1_reply(cmd, fields));
  };
  if (c.in_spawn) {  // the lines of an mcmd=spawn request, up to endcmd
    if (text == "endcmd") {
      c.in_spawn = false;
      reply("spawn_result", {{"rc", "-1"}, {"msg", not_supported("spawn")}});
    }
    return;
  }
  auto malformed = [&](const std::string& why) {
    reply("error", {{"rc", "-1"}, {"msg", token(why)}});
    c.failed = true;
    fail_step(client, 1, who(client) + " sent a malformed PMI line: " + why, out);
  };
  Result<Pmi1Request> parsed = parse_pmi1_line(text);
  if (!parsed) return malformed(parsed.error().message);
  const Pmi1Request& r = *parsed;
  auto need = [&](std::string_view key) -> const std::string* {
    const std::string* value = r.field(key);
    if (!value) malformed("cmd=" + r.cmd + " without " + std::string(key) + "=");
    return value;
  };

  if (r.mcmd) {
    if (r.cmd != "spawn") return malformed("unknown mcmd=" + r.cmd);
    c.in_spawn = true;
    return;
  }
  if (r.cmd == "init") {
    const std::string* version = need("pmi_version");
    if (!version) return;
    const std::string* sub = r.field("pmi_subversion");
    if (*version != "1") {
      // PMI-2 has its own framing after this line; only PMI-1 is spoken here.
      reply("response_to_init", {{"rc", "-1"},
                                 {"pmi_version", "1"},
                                 {"pmi_subversion", "1"},
                                 {"msg", "only_PMI_version_1_is_served"}});
      return;
    }
    c.initialized = true;
    reply("response_to_init",
          {{"rc", "0"}, {"pmi_version", "1"}, {"pmi_subversion", sub && *sub == "0" ? "0" : "1"}});
  } else if (r.cmd == "get_maxes") {
    reply("maxes", {{"rc", "0"},
                    {"kvsname_max", std::to_string(kPmi1KvsnameMax)},
                    {"keylen_max", std::to_string(kPmi1KeyMax)},
                    {"vallen_max", std::to_string(kPmi1ValueMax)}});
  } else if (r.cmd == "get_appnum") {
    reply("appnum", {{"rc", "0"}, {"appnum", std::to_string(options_.appnum)}});
  } else if (r.cmd == "get_universe_size") {
    reply("universe_size", {{"rc", "0"}, {"size", std::to_string(options_.size)}});
  } else if (r.cmd == "get_my_kvsname") {
    reply("my_kvsname", {{"rc", "0"}, {"kvsname", options_.kvsname}});
  } else if (r.cmd == "put") {
    const std::string* kvsname = need("kvsname");
    if (!kvsname) return;
    const std::string* key = need("key");
    if (!key) return;
    const std::string* value = need("value");
    if (!value) return;
    std::string refused;
    if (*kvsname != options_.kvsname)
      refused = "kvsname " + *kvsname + " is not this step's (" + options_.kvsname + ")";
    else if (key->empty())
      refused = "empty key";
    else if (key->size() > kPmi1KeyMax)
      refused = "key of " + std::to_string(key->size()) + " bytes; keylen_max is " +
                std::to_string(kPmi1KeyMax);
    else if (value->size() > kPmi1ValueMax)
      refused = "value of " + std::to_string(value->size()) + " bytes; vallen_max is " +
                std::to_string(kPmi1ValueMax);
    if (!refused.empty()) {
      reply("put_result", {{"rc", "-1"}, {"msg", token(refused)}});
      return;
    }
    pending_[*key] = *value;
    reply("put_result", {{"rc", "0"}});
  } else if (r.cmd == "get") {
    const std::string* kvsname = need("kvsname");
    if (!kvsname) return;
    const std::string* key = need("key");
    if (!key) return;
    if (*kvsname != options_.kvsname) {
      reply("get_result",
            {{"rc", "-1"}, {"msg", token("kvsname " + *kvsname + " is not this step's")}});
      return;
    }
    const std::string* value = nullptr;
    if (auto p = pending_.find(*key); p != pending_.end())
      value = &p->second;
    else if (auto g = global_.find(*key); g != global_.end())
      value = &g->second;
    if (!value) {
      reply("get_result", {{"rc", "-1"}, {"msg", token("key " + *key + " not found")}});
      return;
    }
    reply("get_result", {{"rc", "0"}, {"msg", "success"}, {"value", *value}});
  } else if (r.cmd == "barrier_in") {
    if (c.in_barrier) return malformed("barrier_in twice before barrier_out");
    c.in_barrier = true;
    if (++entered_ == static_cast<int>(clients_.size())) {
      exchanging_ = true;
      out.exchange = true;
    }
  } else if (r.cmd == "finalize") {
    c.finalized = true;
    reply("finalize_ack", {{"rc", "0"}});
  } else if (r.cmd == "abort") {
    int code = 1;
    const std::string* exitcode = r.field("exitcode");
    if (!exitcode) exitcode = r.field("exit_code");
    if (exitcode) {
      int parsed_code = 0;
      auto [end, ec] =
          std::from_chars(exitcode->data(), exitcode->data() + exitcode->size(), parsed_code);
      if (ec == std::errc() && end == exitcode->data() + exitcode->size()) code = parsed_code;
    }
    const std::string* message = r.field("error_msg");
    std::string reason = who(client) + " called PMI abort (exit code " + std::to_string(code) + ")";
    if (message && !message->empty()) reason += ": " + *message;
    fail_step(client, code == 0 ? 1 : code, reason, out);
  } else if (r.cmd == "publish_name" || r.cmd == "unpublish_name" || r.cmd == "lookup_name") {
    reply(r.cmd + "_result", {{"rc", "-1"}, {"msg", not_supported(r.cmd)}});
  } else {
    malformed("unknown command cmd=" + r.cmd);
  }
}

std::string Pmi1Server::take_contribution() {
  std::string bytes;
  for (const auto& [key, value] : pending_) append_kv_record(bytes, key, value);
  pending_.clear();
  return bytes;
}

void Pmi1Server::exchanged(std::string_view all, Effects& out) {
  if (!exchanging_) return;
  exchanging_ = false;
  Result<std::vector<KeyValue>> pairs = decode_kv_records(all);
  if (!pairs) {
    fail_step(
        -1, 1,
        "the PMI exchange of " + options_.node + " came back malformed: " + pairs.error().message,
        out);
    return;
  }
  for (auto& [key, value] : *pairs) global_[std::move(key)] = std::move(value);
  ++barriers_;
  entered_ = 0;
  for (size_t i = 0; i < clients_.size(); ++i) {
    if (!clients_[i].in_barrier) continue;
    clients_[i].in_barrier = false;
    out.replies.emplace_back(static_cast<int>(i), pmi1_reply("barrier_out", {{"rc", "0"}}));
  }
}

void Pmi1Server::exchange_failed(const std::string& why, Effects& out) {
  exchanging_ = false;
  fail_step(-1, 1, "the PMI exchange of " + options_.node + " failed: " + why, out);
}

}  // namespace trellis
