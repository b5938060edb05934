// The PMI-1 "simple" wire protocol that MPICH (and MVAPICH, Intel MPI) speak with the launcher of
// their ranks over an inherited socket (PMI_FD): one request line, one answer line, in lock step.
// Each line is space-separated `key=value` tokens ending with '\n'; the first names the command,
// `cmd=NAME` (or `mcmd=spawn`, which starts a multi-line request ended by `endcmd`). The value of a
// `value=` token is read to the end of the line, spaces and '=' included (Open MPI's and Flux's
// values hold both). Specification: Flux RFC 13; client: MPICH's src/pmi/simple/simple_pmi.c.
//
//   Result<Pmi1Request> r = parse_pmi1_line("cmd=put kvsname=7.0 key=k value=a b=c");
//   r->cmd;                 // "put"
//   *r->field("value");     // "a b=c"
//   pmi1_reply("put_result", {{"rc", "0"}});   // "cmd=put_result rc=0\n"
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

namespace trellis {

// The longest line a client sends or takes, newline included (MPICH's PMIU_MAXLINE).
inline constexpr size_t kPmi1MaxLine = 1024;

struct Pmi1Request {
  std::string cmd;    // "init", "put", ...; "spawn" for an `mcmd=spawn` line
  bool mcmd = false;  // the line started with mcmd= (a multi-line request)
  std::vector<std::pair<std::string, std::string>> fields;  // the other tokens, in order
  // The value of `key`, or nullptr when absent (the last one when repeated).
  const std::string* field(std::string_view key) const;
};

// Parses one line, without its '\n'. Errors say what is wrong and where (column, 1-based): an
// empty line, a token without '=', an empty key, a first token that is not cmd= or mcmd=, bytes
// that cannot be in a line (NUL, '\r' ... control characters other than tab).
Result<Pmi1Request> parse_pmi1_line(std::string_view line);

// "cmd=NAME k1=v1 k2=v2\n". Values must not hold '\n' (they are cut there).
std::string pmi1_reply(std::string_view cmd,
                       const std::vector<std::pair<std::string_view, std::string>>& fields);

}  // namespace trellis
