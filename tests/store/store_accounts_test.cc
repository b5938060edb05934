// Accounts on both engines (schema 12): a change is one transaction that another store handle
// (another controller) reads back whole, a refused change leaves the tables as they were, every
// change is logged, and a job keeps the account it was charged to.
#include <gtest/gtest.h>

#include <algorithm>

#include "store_fixture.h"

namespace trellis::store_test {
namespace {

AccountChange account_change(AccountChange::Verb verb, AccountChange::Entity entity,
                             std::vector<std::string> names,
                             std::map<std::string, std::string> set = {},
                             std::map<std::string, std::string> where = {}) {
  return AccountChange{.verb = verb,
                       .entity = entity,
                       .names = std::move(names),
                       .where = std::move(where),
                       .set = std::move(set)};
}

TEST_P(StoreTest, AccountChangesAreKeptWholeAndSeenByAnotherController) {
  AccountBook empty = value_of(store_->account_book());
  EXPECT_EQ(empty, AccountBook());
  EXPECT_OK(store_->change_accounts(
      account_change(AccountChange::kAdd, AccountChange::kAccount, {"physics"},
                     {{"fairshare", "40"}, {"grptres", "node=4"}, {"maxsubmitjobs", "3"}}),
      10));
  EXPECT_OK(store_->change_accounts(
      account_change(AccountChange::kAdd, AccountChange::kAccount, {"chem"}), 11));
  EXPECT_OK(store_->change_accounts(
      account_change(AccountChange::kAdd, AccountChange::kUser, {"alice"},
                     {{"account", "physics,chem"}, {"adminlevel", "Operator"}}),
      12));
  EXPECT_OK(store_->change_accounts(
      account_change(AccountChange::kModify, AccountChange::kUser, {"alice"},
                     {{"fairshare", "5"}, {"maxjobs", "2"}}, {{"account", "chem"}}),
      13));

  std::unique_ptr<SqlStore> other = value_of(open_another(false), "open");
  AccountBook seen = value_of(other->account_book());
  AccountBook here = value_of(store_->account_book());
  EXPECT_EQ(seen, here);
  const Account* physics = seen.find_account("physics");
  ASSERT_NE(physics, nullptr);
  EXPECT_EQ(physics->shares, 40);
  EXPECT_EQ(physics->limits.grp_tres.count("node"), 4);
  EXPECT_EQ(physics->limits.max_submit, 3);
  ASSERT_NE(seen.find_user("alice"), nullptr);
  EXPECT_EQ(seen.find_user("alice")->default_account, "physics");
  EXPECT_EQ(seen.find_user("alice")->admin, AdminLevel::kOperator);
  const Association* chem = seen.find_association("alice", "chem");
  ASSERT_NE(chem, nullptr);
  EXPECT_EQ(chem->shares, 5);
  EXPECT_EQ(chem->limits.max_jobs, 2);
  EXPECT_EQ(seen.find_association("alice", "physics")->shares, 1);

  // QOS (schema 13): a QOS with its settings, an account's and an association's QOS lists and a
  // default QOS come back the same through the other handle; deleting one clears its row.
  EXPECT_OK(
      store_->change_accounts(account_change(AccountChange::kAdd, AccountChange::kQos, {"high"},
                                             {{"priority", "100"},
                                              {"maxwall", "1:00:00"},
                                              {"usagefactor", "2"},
                                              {"flags", "DenyOnLimit"},
                                              {"description", "urgent work"}}),
                              13));
  EXPECT_OK(store_->change_accounts(
      account_change(AccountChange::kAdd, AccountChange::kQos, {"spare"}), 13));
  EXPECT_OK(store_->change_accounts(account_change(AccountChange::kModify, AccountChange::kAccount,
                                                   {"chem"}, {{"qos+", "spare"}}),
                                    13));
  EXPECT_OK(store_->change_accounts(
      account_change(AccountChange::kModify, AccountChange::kUser, {"alice"},
                     {{"qos+", "high"}, {"defaultqos", "high"}}, {{"account", "physics"}}),
      13));
  AccountBook with_qos = value_of(other->account_book());
  EXPECT_EQ(with_qos, value_of(store_->account_book()));
  ASSERT_NE(with_qos.find_qos("high"), nullptr);
  EXPECT_EQ(with_qos.find_qos("high")->priority, 100);
  EXPECT_EQ(with_qos.find_qos("high")->max_wall, 3600);
  EXPECT_EQ(with_qos.find_qos("high")->description, "urgent work");
  EXPECT_TRUE(with_qos.find_qos("high")->deny_on_limit);
  EXPECT_EQ(with_qos.allowed_qos("alice", "physics"), (std::vector<std::string>{"high", "normal"}));
  EXPECT_EQ(with_qos.allowed_qos("alice", "chem"), (std::vector<std::string>{"normal", "spare"}));
  EXPECT_EQ(with_qos.find_association("alice", "physics")->default_qos, "high");
  EXPECT_OK(store_->change_accounts(
      account_change(AccountChange::kModify, AccountChange::kAccount, {"chem"}, {{"qos", "-1"}}),
      13));
  EXPECT_OK(store_->change_accounts(
      account_change(AccountChange::kDelete, AccountChange::kQos, {"spare"}), 13));
  EXPECT_EQ(value_of(other->account_book()).find_qos("spare"), nullptr);
  EXPECT_OK(store_->change_accounts(
      account_change(AccountChange::kModify, AccountChange::kUser, {"alice"},
                     {{"qos", "-1"}, {"defaultqos", "-1"}}, {{"account", "physics"}}),
      13));
  EXPECT_OK(store_->change_accounts(
      account_change(AccountChange::kDelete, AccountChange::kQos, {"high"}), 13));
  here = value_of(store_->account_book());
  EXPECT_EQ(value_of(other->account_book()), here);

  // A refused change (from the other handle) changes nothing and logs nothing.
  std::vector<std::string> before = event_kinds();
  Result<std::string> refused = other->change_accounts(
      account_change(AccountChange::kDelete, AccountChange::kAccount, {"physics"}), 14);
  ASSERT_FALSE(refused);
  EXPECT_TRUE(has(refused.error().message, "has user alice")) << refused.error().message;
  EXPECT_EQ(value_of(store_->account_book()), here);
  EXPECT_EQ(event_kinds(), before);
  Result<std::string> malformed =
      store_->change_accounts(account_change(AccountChange::kModify, AccountChange::kAccount,
                                             {"physics"}, {{"grptres", "node=4,,cpu=2"}}),
                              15);
  ASSERT_FALSE(malformed);
  EXPECT_TRUE(has(malformed.error().message, "GrpTRES")) << malformed.error().message;
  EXPECT_EQ(value_of(store_->account_book()), here);

  // Deleting: the association, then the user with its last one, then the account.
  EXPECT_OK(other->change_accounts(account_change(AccountChange::kDelete, AccountChange::kUser,
                                                  {"alice"}, {}, {{"account", "physics"}}),
                                   16));
  EXPECT_EQ(value_of(store_->account_book()).find_user("alice")->default_account, "chem");
  EXPECT_OK(store_->change_accounts(
      account_change(AccountChange::kDelete, AccountChange::kUser, {"alice"}), 17));
  EXPECT_OK(store_->change_accounts(
      account_change(AccountChange::kDelete, AccountChange::kAccount, {"physics"}), 18));
  AccountBook after = value_of(other->account_book());
  EXPECT_EQ(after.find_user("alice"), nullptr);
  EXPECT_EQ(after.find_account("physics"), nullptr);
  EXPECT_NE(after.find_account("chem"), nullptr);
  std::vector<std::string> kinds = event_kinds();
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "accounts"), 15);  // 7, and 8 of QOS
}

TEST_P(StoreTest, AJobKeepsTheAccountAndQosItWasChargedTo) {
  StoredJob job = simple_job("charged");
  job.account = "physics";
  job.qos = "high";
  JobId id = add(job);
  StoredJob stored = get(id);
  EXPECT_EQ(stored.account, "physics");
  EXPECT_EQ(stored.qos, "high");
  JobId plain = add(simple_job("plain"));
  EXPECT_EQ(get(plain).account, "");
}

}  // namespace
}  // namespace trellis::store_test
