// The account book's rules (core/accounts.h) and TRES strings (core/tres.h): what sacctmgr's
// changes do, and that a change breaking a rule is refused whole.
#include "core/accounts.h"

#include <gtest/gtest.h>

#include "core/fair_share.h"
#include "core/tres.h"

namespace trellis {
namespace {

AccountChange change(AccountChange::Verb verb, AccountChange::Entity entity,
                     std::vector<std::string> names, std::map<std::string, std::string> set = {},
                     std::map<std::string, std::string> where = {}) {
  return AccountChange{.verb = verb,
                       .entity = entity,
                       .names = std::move(names),
                       .where = std::move(where),
                       .set = std::move(set)};
}

AccountBook physics_and_chem() {
  AccountBook book;
  EXPECT_TRUE(book.apply(change(AccountChange::kAdd, AccountChange::kAccount, {"science"})));
  EXPECT_TRUE(book.apply(change(AccountChange::kAdd, AccountChange::kAccount, {"Physics"},
                                {{"parent", "science"}, {"fairshare", "40"}})));
  EXPECT_TRUE(book.apply(change(AccountChange::kAdd, AccountChange::kAccount, {"chem"},
                                {{"parent", "science"}, {"fairshare", "60"}})));
  EXPECT_TRUE(book.apply(change(AccountChange::kAdd, AccountChange::kUser, {"alice"},
                                {{"account", "physics,chem"}, {"defaultaccount", "chem"}})));
  EXPECT_TRUE(book.apply(
      change(AccountChange::kAdd, AccountChange::kUser, {"bob"}, {{"account", "physics"}})));
  return book;
}

TEST(AccountBook, WithoutUsersEveryJobIsAcceptedUncharged) {
  AccountBook book;
  EXPECT_FALSE(book.enforced());
  ASSERT_TRUE(book.job_account("anyone", ""));
  EXPECT_EQ(*book.job_account("anyone", ""), "");
  EXPECT_EQ(book.accounts().size(), 1u);
  EXPECT_EQ(book.accounts()[0].name, "root");
}

TEST(AccountBook, AJobIsChargedToItsAccountOrTheUsersDefault) {
  AccountBook book = physics_and_chem();
  EXPECT_TRUE(book.enforced());
  EXPECT_EQ(*book.job_account("alice", ""), "chem");
  EXPECT_EQ(*book.job_account("alice", "PHYSICS"), "physics");
  EXPECT_EQ(*book.job_account("bob", ""), "physics");
  Result<std::string> other = book.job_account("bob", "chem");
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().code, Error::Code::kPermissionDenied);
  EXPECT_NE(other.error().message.find("user bob has no association with account chem"),
            std::string::npos)
      << other.error().message;
  Result<std::string> unknown = book.job_account("bob", "biology");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("account biology does not exist"), std::string::npos);
  Result<std::string> stranger = book.job_account("carol", "");
  ASSERT_FALSE(stranger);
  EXPECT_NE(stranger.error().message.find("user carol has no association"), std::string::npos);
}

TEST(AccountBook, ARefusedChangeChangesNothing) {
  AccountBook book = physics_and_chem();
  const AccountBook before = book;
  struct Case {
    AccountChange change;
    std::string says;
  };
  std::vector<Case> cases = {
      {change(AccountChange::kAdd, AccountChange::kAccount, {"bio"}, {{"parent", "nowhere"}}),
       "parent account nowhere does not exist"},
      {change(AccountChange::kAdd, AccountChange::kAccount, {"chem"}),
       "account chem already exists"},
      {change(AccountChange::kAdd, AccountChange::kAccount, {"bio"}, {{"fairshare", "-5"}}),
       "is not a number of shares"},
      {change(AccountChange::kAdd, AccountChange::kAccount, {"bio"},
              {{"fairshare", "99999999999999999999"}}),
       "is not a number of shares"},
      {change(AccountChange::kAdd, AccountChange::kAccount, {"bio"}, {{"fairshare", "2000000000"}}),
       "is more than"},
      {change(AccountChange::kAdd, AccountChange::kAccount, {"bio"}, {{"grptres", "node=x"}}),
       "GrpTRES: 'node=x': 'x' is not a count"},
      {change(AccountChange::kAdd, AccountChange::kAccount, {"bio"}, {{"grptres", "warp=4"}}),
       "unknown TRES 'warp'"},
      {change(AccountChange::kAdd, AccountChange::kAccount, {"b i o"}), "has a character"},
      {change(AccountChange::kAdd, AccountChange::kAccount, {"bio"}, {{"colour", "red"}}),
       "unknown field 'colour'"},
      {change(AccountChange::kAdd, AccountChange::kUser, {"carol"}), "a user needs an account"},
      {change(AccountChange::kAdd, AccountChange::kUser, {"carol"}, {{"account", "bio"}}),
       "account bio does not exist"},
      {change(AccountChange::kModify, AccountChange::kAccount, {"science"},
              {{"parent", "physics"}}),
       "its own ancestor"},
      {change(AccountChange::kModify, AccountChange::kUser, {"bob"}, {{"defaultaccount", "chem"}}),
       "bob has no association with account chem"},
      {change(AccountChange::kDelete, AccountChange::kAccount, {"science"}),
       "has sub-account physics"},
      {change(AccountChange::kDelete, AccountChange::kAccount, {"physics"}), "has user alice"},
      {change(AccountChange::kDelete, AccountChange::kAccount, {"root"}), "root account cannot"},
      {change(AccountChange::kDelete, AccountChange::kUser, {"carol"}),
       "user carol does not exist"},
      // A change naming two accounts, the second bad: the first is not added either.
      {change(AccountChange::kAdd, AccountChange::kAccount, {"bio,chem"}),
       "account chem already exists"},
  };
  for (const Case& c : cases) {
    Result<std::string> done = book.apply(c.change);
    ASSERT_FALSE(done) << describe(c.change);
    EXPECT_NE(done.error().message.find(c.says), std::string::npos)
        << describe(c.change) << ": " << done.error().message;
    EXPECT_EQ(book, before) << describe(c.change);
  }
}

TEST(AccountBook, ModifyAndDeleteAsSacctmgrDoes) {
  AccountBook book = physics_and_chem();
  ASSERT_TRUE(book.apply(change(AccountChange::kModify, AccountChange::kUser, {"alice"},
                                {{"fairshare", "7"}}, {{"account", "physics"}})));
  EXPECT_EQ(book.find_association("alice", "physics")->shares, 7);
  EXPECT_EQ(book.find_association("alice", "chem")->shares, 1);
  ASSERT_TRUE(book.apply(change(AccountChange::kModify, AccountChange::kAccount, {},
                                {{"grptres", "node=4,gres/gpu=8"}, {"maxsubmitjobs", "10"}},
                                {{"name", "physics"}})));
  const Account* physics = book.find_account("physics");
  EXPECT_EQ(physics->limits.grp_tres.count("node"), 4);
  EXPECT_EQ(physics->limits.max_submit, 10);
  ASSERT_TRUE(book.apply(change(AccountChange::kModify, AccountChange::kAccount, {"physics"},
                                {{"grptres", "node=-1"}, {"maxsubmitjobs", "-1"}})));
  EXPECT_FALSE(book.find_account("physics")->limits.grp_tres.count("node"));
  EXPECT_EQ(format_tres(book.find_account("physics")->limits.grp_tres), "gres/gpu=8");
  EXPECT_FALSE(book.find_account("physics")->limits.max_submit);

  // Deleting alice's default association moves her default to what is left; deleting her last
  // deletes her.
  ASSERT_TRUE(book.apply(
      change(AccountChange::kDelete, AccountChange::kUser, {"alice"}, {}, {{"account", "chem"}})));
  EXPECT_EQ(book.find_user("alice")->default_account, "physics");
  ASSERT_TRUE(book.apply(change(AccountChange::kDelete, AccountChange::kUser, {"alice"})));
  EXPECT_EQ(book.find_user("alice"), nullptr);
  EXPECT_EQ(book.find_association("alice", "physics"), nullptr);
  ASSERT_TRUE(book.apply(change(AccountChange::kDelete, AccountChange::kAccount, {"chem"})));
  EXPECT_EQ(book.find_account("chem"), nullptr);
}

TEST(AccountBook, TheShareTreeHoldsEveryAccountAndAssociation) {
  AccountBook book = physics_and_chem();
  std::map<std::string, int> user_node;
  ShareTree tree = book.share_tree(&user_node);
  int science = tree.find_account("science");
  int physics = tree.find_account("physics");
  ASSERT_GE(science, 0);
  ASSERT_GE(physics, 0);
  EXPECT_EQ(tree.nodes()[physics].parent, science);
  EXPECT_EQ(tree.nodes()[physics].shares, 40);
  EXPECT_EQ(tree.user_count(), 3);  // alice twice (two associations), bob
  EXPECT_EQ(user_node.at("alice/chem"), tree.find_user(tree.find_account("chem"), "alice"));
  EXPECT_EQ(user_node.at("bob/physics"), tree.find_user(physics, "bob"));
}

TEST(AccountBook, RowsFromAStoreAreChecked) {
  AccountBook book = physics_and_chem();
  Result<AccountBook> same =
      AccountBook::from_rows(book.accounts(), book.users(), book.associations(), book.qos());
  ASSERT_TRUE(same) << same.error().message;
  EXPECT_EQ(*same, book);
  std::vector<Association> broken = book.associations();
  broken.push_back(Association{.user = "bob", .account = "gone"});
  Result<AccountBook> bad =
      AccountBook::from_rows(book.accounts(), book.users(), broken, book.qos());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("account gone"), std::string::npos) << bad.error().message;
}

TEST(Tres, ParsesFormatsAndRefusesWhatIsMalformed) {
  Result<Tres> tres = parse_tres("gres/gpu=8,Node=4,mem=2G,cpu=64", "GrpTRES");
  ASSERT_TRUE(tres) << tres.error().message;
  EXPECT_EQ(tres->count("node"), 4);
  EXPECT_EQ(tres->count("mem"), 2048);
  EXPECT_EQ(format_tres(*tres), "cpu=64,mem=2048,node=4,gres/gpu=8");
  EXPECT_EQ(parse_tres("gpu=2", "x")->count("gres/gpu"), 2);
  EXPECT_EQ(parse_tres("mem=512K", "x")->count("mem"), 1);  // rounded up to a megabyte
  EXPECT_TRUE(parse_tres("", "x")->empty());
  for (const char* bad :
       {"node", "=4", "node=", "node=4,", ",node=4", "node=4,node=5", "node=-2", "node=1.5",
        "mem=2X", "gres/=1", "cpu=99999999999999999", "mem=9999999999999T"}) {
    Result<Tres> parsed = parse_tres(bad, "GrpTRES");
    EXPECT_FALSE(parsed) << bad;
    if (!parsed) EXPECT_EQ(parsed.error().message.rfind("GrpTRES: ", 0), 0u) << bad;
  }
  Tres merged = merge_tres(*parse_tres("node=4,cpu=8", "x"), *parse_tres("node=-1,cpu=16", "x"));
  EXPECT_EQ(format_tres(merged), "cpu=16");
}

}  // namespace
}  // namespace trellis
