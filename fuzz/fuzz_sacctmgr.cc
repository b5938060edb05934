// sacctmgr's words (core/account_command.h) applied to a book of accounts (core/accounts.h):
// each line of the input is one command, split at spaces; any command parses or gets an error,
// a change the book refuses leaves it exactly as it was, and after every change the book holds
// its rules (a book rebuilt from its own rows is accepted and equal, every association has a QOS
// to run its jobs in, every QOS reads back from its stored settings), so no sequence of commands
// can leave a tree that the store would refuse to read back.
#include <sstream>

#include "core/account_command.h"
#include "core/accounts.h"
#include "fuzz_support.h"

using namespace trellis;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(fuzz::as_text(data, size));
  AccountBook book;
  std::istringstream lines(text);
  int commands = 0;
  for (std::string line; std::getline(lines, line) && commands < 64; ++commands) {
    std::istringstream split(line);
    std::vector<std::string> words;
    for (std::string word; split >> word;) words.push_back(word);
    Result<AccountCommand> command = parse_account_command(words);
    if (!command) {
      FUZZ_CHECK(!command.error().message.empty(), "an error without a message");
      continue;
    }
    if (command->action != AccountCommand::kChange) continue;
    const AccountBook before = book;
    Result<std::string> done = book.apply(command->change);
    if (!done) {
      FUZZ_CHECK(book == before, "a refused change changed the book: " + describe(command->change));
      continue;
    }
    Result<AccountBook> rebuilt =
        AccountBook::from_rows(book.accounts(), book.users(), book.associations(), book.qos());
    FUZZ_CHECK(rebuilt.ok(), "the book breaks its own rules after: " + describe(command->change) +
                                 (rebuilt ? "" : ": " + rebuilt.error().message));
    FUZZ_CHECK(*rebuilt == book, "the book does not read back the same");
    for (const Association& a : book.associations()) {
      Result<std::string> charged = book.job_account(a.user, a.account);
      FUZZ_CHECK(charged.ok() && *charged == a.account, "an association that cannot be charged");
      // Its jobs get a QOS it may use (its default, or one of its list).
      Result<std::string> qos = book.job_qos(a.user, a.account, "");
      FUZZ_CHECK(qos.ok() && book.find_qos(*qos) != nullptr, "an association with no QOS to use");
    }
    // Each QOS reads back from the text the store keeps.
    for (const Qos& q : book.qos()) {
      Qos back;
      back.name = q.name;
      back.description = q.description;
      FUZZ_CHECK(decode_qos_settings(encode_qos_settings(q), back).ok() && back == q,
                 "qos " + q.name + " does not read back from its settings");
    }
    ShareTree tree = book.share_tree();
    FUZZ_CHECK(tree.user_count() == static_cast<int>(book.associations().size()),
               "the share tree lost an association");
  }
  return 0;
}
