// QOS in the account book (core/qos.h, core/accounts_qos.cc): sacctmgr's QOS changes, the QOS
// lists of accounts and users with their inheritance, the QOS a job gets, and hostile values
// refused whole.
#include "core/qos.h"

#include <gtest/gtest.h>

#include "core/account_command.h"
#include "core/accounts.h"

namespace trellis {
namespace {

// Applies one sacctmgr command line (its words after "sacctmgr -i").
Result<std::string> run_words(AccountBook& book, std::vector<std::string> words) {
  Result<AccountCommand> command = parse_account_command(words);
  if (!command) return command.error();
  EXPECT_EQ(command->action, AccountCommand::kChange);
  return book.apply(command->change);
}

AccountBook science_book() {
  AccountBook book;
  for (std::vector<std::string> words : std::vector<std::vector<std::string>>{
           {"add", "account", "science"},
           {"add", "account", "physics", "parent=science"},
           {"add", "account", "chem", "parent=science"},
           {"add", "user", "alice", "account=physics"},
           {"add", "user", "bob", "account=chem,physics", "defaultaccount=chem"},
           {"add", "qos", "high"},
           {"add", "qos", "standby", "Priority=0", "Description=preemptible"}}) {
    Result<std::string> done = run_words(book, words);
    EXPECT_TRUE(done) << words[2] << ": " << done.error().message;
  }
  return book;
}

TEST(Qos, NormalExistsFromTheStartAndCannotBeDeleted) {
  AccountBook book;
  ASSERT_EQ(book.qos().size(), 1u);
  EXPECT_EQ(book.qos()[0].name, "normal");
  EXPECT_EQ(book.qos()[0].description, "Normal QOS default");
  Result<std::string> gone = run_words(book, {"delete", "qos", "normal"});
  ASSERT_FALSE(gone);
  EXPECT_EQ(book.qos().size(), 1u);
  // Without accounts every job runs in normal, or in a QOS that exists.
  EXPECT_EQ(*book.job_qos("anyone", "", ""), "normal");
  Result<std::string> unknown = book.job_qos("anyone", "", "high");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, Error::Code::kNotFound);
  EXPECT_NE(unknown.error().message.find("qos high does not exist"), std::string::npos);
}

TEST(Qos, SettingsParseAndRoundTripThroughTheStoreText) {
  AccountBook book = science_book();
  ASSERT_TRUE(run_words(book, {"modify", "qos", "high", "set", "Priority=100", "MaxJobsPerUser=2",
                               "MaxSubmitJobsPerUser=3", "MaxTRESPerUser=node=2", "GrpTRES=node=4",
                               "MaxWall=01:00:00", "UsageFactor=2.0", "Flags=DenyOnLimit"}));
  const Qos* high = book.find_qos("high");
  ASSERT_NE(high, nullptr);
  EXPECT_EQ(high->priority, 100);
  EXPECT_EQ(high->max_jobs_per_user, 2);
  EXPECT_EQ(high->max_submit_per_user, 3);
  EXPECT_EQ(high->max_tres_per_user.count("node"), 2);
  EXPECT_EQ(high->grp_tres.count("node"), 4);
  EXPECT_EQ(high->max_wall, 3600);
  EXPECT_DOUBLE_EQ(high->usage_factor, 2.0);
  EXPECT_TRUE(high->deny_on_limit);
  EXPECT_EQ(high->description, "high");
  Qos back;
  back.name = "high";
  back.description = "high";
  ASSERT_TRUE(decode_qos_settings(encode_qos_settings(*high), back));
  EXPECT_EQ(back, *high);
  EXPECT_EQ(format_wall(3600), "01:00:00");
  EXPECT_EQ(format_wall(2 * 86400 + 61), "2-00:01:01");
  EXPECT_EQ(format_usage_factor(1), "1.000000");
  // -1 clears a limit; Flags-= takes a flag away.
  ASSERT_TRUE(run_words(book, {"modify", "qos", "high", "set", "MaxJobsPerUser=-1", "MaxWall=-1",
                               "Flags-=DenyOnLimit", "GrpTRES=node=-1"}));
  high = book.find_qos("high");
  EXPECT_FALSE(high->max_jobs_per_user);
  EXPECT_FALSE(high->max_wall);
  EXPECT_FALSE(high->deny_on_limit);
  EXPECT_TRUE(high->grp_tres.empty());
  EXPECT_EQ(high->max_submit_per_user, 3);  // untouched
}

TEST(Qos, HostileValuesAreRefusedAndChangeNothing) {
  AccountBook book = science_book();
  const AccountBook before = book;
  const std::vector<std::vector<std::string>> bad = {
      {"add", "qos", "high"},                                     // already exists
      {"add", "qos", "bad name!"},                                // a name sacctmgr cannot keep
      {"modify", "qos", "nosuch", "set", "Priority=1"},           // no such QOS
      {"modify", "qos", "high", "set", "Priority=-5"},            // negative priority
      {"modify", "qos", "high", "set", "Priority=99999999999"},   // beyond 32 bits
      {"modify", "qos", "high", "set", "MaxWall=bogus"},          // not a time
      {"modify", "qos", "high", "set", "UsageFactor=x"},          // not a number
      {"modify", "qos", "high", "set", "UsageFactor=nan"},        // not a finite number
      {"modify", "qos", "high", "set", "UsageFactor=-1"},         // negative
      {"modify", "qos", "high", "set", "GrpTRES=node=x"},         // malformed TRES
      {"modify", "qos", "high", "set", "Flags=NoReserve"},        // a flag Trellis does not keep
      {"modify", "qos", "high", "set", "Preempt=standby"},        // preemption is not built
      {"modify", "qos", "high", "set", "Priority=5", "Bogus=1"},  // one bad key: nothing changes
      {"delete", "qos", "nosuch"},
      {"modify", "user", "alice", "set", "qos+=nosuch"},           // no such QOS
      {"modify", "user", "alice", "set", "defaultqos=high"},       // not one of alice's QOS
      {"modify", "account", "physics", "set", "defaultqos=high"},  // accounts have none
      {"modify", "user", "alice", "set", "qos-=normal"},           // would leave none
  };
  for (const std::vector<std::string>& words : bad) {
    Result<std::string> done = run_words(book, words);
    std::string line;
    for (const std::string& w : words) line += w + " ";
    EXPECT_FALSE(done) << line;
    if (!done) {
      EXPECT_FALSE(done.error().message.empty()) << line;
    }
    EXPECT_EQ(book, before) << line;
  }
  // The parser itself refuses += on a key that is no list.
  EXPECT_FALSE(parse_account_command({"modify", "qos", "high", "set", "priority+=3"}));
}

TEST(Qos, AssociationsInheritTheirAccountsQosListsAndMayAddOrTakeAway) {
  AccountBook book = science_book();
  EXPECT_EQ(book.allowed_qos("alice", "physics"), std::vector<std::string>{"normal"});
  // An account's list reaches every association below it that has none of its own.
  ASSERT_TRUE(run_words(book, {"modify", "account", "science", "set", "qos+=standby"}));
  EXPECT_EQ(book.allowed_qos("alice", "physics"), (std::vector<std::string>{"normal", "standby"}));
  EXPECT_EQ(book.allowed_qos("bob", "chem"), (std::vector<std::string>{"normal", "standby"}));
  EXPECT_EQ(book.allowed_qos("", "root"), std::vector<std::string>{"normal"});
  // A user's own list starts from what it inherited.
  ASSERT_TRUE(run_words(book, {"modify", "user", "alice", "set", "qos+=high"}));
  EXPECT_EQ(book.allowed_qos("alice", "physics"),
            (std::vector<std::string>{"high", "normal", "standby"}));
  ASSERT_TRUE(run_words(book, {"modify", "user", "alice", "set", "defaultqos=high"}));
  EXPECT_EQ(*book.job_qos("alice", "physics", ""), "high");
  EXPECT_EQ(*book.job_qos("alice", "physics", "STANDBY"), "standby");
  // bob may not use high: the error names the user, account, QOS and what he may use.
  Result<std::string> refused = book.job_qos("bob", "chem", "high");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, Error::Code::kPermissionDenied);
  EXPECT_NE(refused.error().message.find("user bob in account chem may not use qos high (its "
                                         "QOS: normal,standby)"),
            std::string::npos)
      << refused.error().message;
  // qos= replaces the list; a user whose list has no normal gets its first QOS by default.
  ASSERT_TRUE(
      run_words(book, {"modify", "user", "bob", "where", "account=chem", "set", "qos=standby"}));
  EXPECT_EQ(book.allowed_qos("bob", "chem"), std::vector<std::string>{"standby"});
  EXPECT_EQ(*book.job_qos("bob", "chem", ""), "standby");
  EXPECT_EQ(book.allowed_qos("bob", "physics"), (std::vector<std::string>{"normal", "standby"}));
  // A QOS in some list cannot be deleted; once taken away it can.
  Result<std::string> in_use = run_words(book, {"delete", "qos", "high"});
  ASSERT_FALSE(in_use);
  EXPECT_NE(in_use.error().message.find("user alice in account physics"), std::string::npos)
      << in_use.error().message;
  ASSERT_TRUE(run_words(book, {"modify", "user", "alice", "set", "defaultqos=-1", "qos-=high"}));
  ASSERT_TRUE(run_words(book, {"delete", "qos", "high"}));
  EXPECT_EQ(book.find_qos("high"), nullptr);
  // A book rebuilt from its rows is the same book (how the store reads it back).
  Result<AccountBook> again =
      AccountBook::from_rows(book.accounts(), book.users(), book.associations(), book.qos());
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(*again, book);
}

TEST(Qos, UnknownQosInStoredRowsIsRefused) {
  AccountBook book = science_book();
  std::vector<Association> rows = book.associations();
  rows[0].qos = {"vanished"};
  Result<AccountBook> broken =
      AccountBook::from_rows(book.accounts(), book.users(), rows, book.qos());
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message.find("vanished"), std::string::npos);
}

}  // namespace
}  // namespace trellis
