// The SQL store's accounts (sql_store.h, schemas 12 and 13): the tables accounts,
// account_users, associations and qos hold an AccountBook (core/accounts.h, core/qos.h). A change
// reads the book with the root account's row locked (so two changes, from any controller, apply one
// after the other), applies it with the book's own rules, and writes back the rows that differ, all
// in one transaction.
#include <algorithm>

#include "store/sql_rows.h"
#include "store/sql_store.h"

namespace trellis {

using sql::Rows;
using sql::Session;
using sql::transaction;

namespace {

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ",") + name;
  return out;
}
std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    if (end > begin) out.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}

Result<AdminLevel> admin_level_of(const std::string& text) {
  for (AdminLevel level : {AdminLevel::kNone, AdminLevel::kOperator, AdminLevel::kAdministrator})
    if (admin_level_name(level) == text) return level;
  return fail(Error::Code::kInternal, "admin level '" + text + "' is not one the store writes");
}

// The book as the tables hold it; with `lock`, the root account's row is locked first.
Result<AccountBook> read_book(Session& db, bool lock) {
  if (lock) {
    Result<Rows> root = db.query("SELECT name FROM accounts WHERE name = 'root'" +
                                 std::string(db.dialect().for_update));
    if (!root) return root.error();
  }
  Result<Rows> accounts = db.query(
      "SELECT name, parent, shares, description, organization, limits, qos FROM accounts ORDER "
      "BY name");
  if (!accounts) return accounts.error();
  Result<Rows> users =
      db.query("SELECT name, default_account, admin_level FROM account_users ORDER BY name");
  if (!users) return users.error();
  Result<Rows> associations = db.query(
      "SELECT user_name, account, shares, limits, qos, default_qos FROM associations ORDER BY "
      "user_name, account");
  if (!associations) return associations.error();
  Result<Rows> qos = db.query("SELECT name, description, settings FROM qos ORDER BY name");
  if (!qos) return qos.error();
  std::vector<Account> account_rows;
  for (size_t r = 0; r < accounts->size(); ++r) {
    Result<AssocLimits> limits = decode_limits(accounts->text(r, 5));
    if (!limits)
      return db.fail(Error::Code::kInternal,
                     "account " + accounts->text(r, 0) + ": " + limits.error().message);
    account_rows.push_back(Account{.name = accounts->text(r, 0),
                                   .parent = accounts->text(r, 1),
                                   .shares = accounts->int64(r, 2),
                                   .description = accounts->text(r, 3),
                                   .organization = accounts->text(r, 4),
                                   .limits = *limits,
                                   .qos = split_names(accounts->text(r, 6))});
  }
  std::vector<AccountUser> user_rows;
  for (size_t r = 0; r < users->size(); ++r) {
    Result<AdminLevel> admin = admin_level_of(users->text(r, 2));
    if (!admin) return admin.error();
    user_rows.push_back(AccountUser{
        .name = users->text(r, 0), .default_account = users->text(r, 1), .admin = *admin});
  }
  std::vector<Association> association_rows;
  for (size_t r = 0; r < associations->size(); ++r) {
    Result<AssocLimits> limits = decode_limits(associations->text(r, 3));
    if (!limits)
      return db.fail(Error::Code::kInternal, "association " + associations->text(r, 0) + "/" +
                                                 associations->text(r, 1) + ": " +
                                                 limits.error().message);
    association_rows.push_back(Association{.user = associations->text(r, 0),
                                           .account = associations->text(r, 1),
                                           .shares = associations->int64(r, 2),
                                           .limits = *limits,
                                           .qos = split_names(associations->text(r, 4)),
                                           .default_qos = associations->text(r, 5)});
  }
  std::vector<Qos> qos_rows;
  for (size_t r = 0; r < qos->size(); ++r) {
    Qos row;
    row.name = qos->text(r, 0);
    row.description = qos->text(r, 1);
    if (Status s = decode_qos_settings(qos->text(r, 2), row); !s)
      return db.fail(Error::Code::kInternal, s.error().message);
    qos_rows.push_back(std::move(row));
  }
  Result<AccountBook> book =
      AccountBook::from_rows(std::move(account_rows), std::move(user_rows),
                             std::move(association_rows), std::move(qos_rows));
  if (!book) return db.fail(Error::Code::kInternal, book.error().message);
  return book;
}

// Writes the rows of `after` that differ from `before`: deleted, then changed or added.
Status write_book(Session& db, const AccountBook& before, const AccountBook& after) {
  for (const Account& a : before.accounts())
    if (!after.find_account(a.name))
      if (Status s = sql::run(db, "DELETE FROM accounts WHERE name = ?", {a.name}); !s) return s;
  for (const AccountUser& u : before.users())
    if (!after.find_user(u.name))
      if (Status s = sql::run(db, "DELETE FROM account_users WHERE name = ?", {u.name}); !s)
        return s;
  for (const Association& a : before.associations())
    if (!after.find_association(a.user, a.account))
      if (Status s = sql::run(db, "DELETE FROM associations WHERE user_name = ? AND account = ?",
                              {a.user, a.account});
          !s)
        return s;
  for (const Qos& q : before.qos())
    if (!after.find_qos(q.name))
      if (Status s = sql::run(db, "DELETE FROM qos WHERE name = ?", {q.name}); !s) return s;
  for (const Qos& q : after.qos()) {
    const Qos* was = before.find_qos(q.name);
    if (was && *was == q) continue;
    if (Status s = sql::run(db,
                            "INSERT INTO qos (name, description, settings) VALUES (?, ?, ?) ON "
                            "CONFLICT (name) DO UPDATE SET description = excluded.description, "
                            "settings = excluded.settings",
                            {q.name, q.description, encode_qos_settings(q)});
        !s)
      return s;
  }
  for (const Account& a : after.accounts()) {
    const Account* was = before.find_account(a.name);
    if (was && *was == a) continue;
    if (Status s = sql::run(
            db,
            "INSERT INTO accounts (name, parent, shares, description, organization, limits, qos) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET parent = "
            "excluded.parent, shares = excluded.shares, description = excluded.description, "
            "organization = excluded.organization, limits = excluded.limits, qos = excluded.qos",
            {a.name, a.parent, a.shares, a.description, a.organization, encode_limits(a.limits),
             join_names(a.qos)});
        !s)
      return s;
  }
  for (const AccountUser& u : after.users()) {
    const AccountUser* was = before.find_user(u.name);
    if (was && *was == u) continue;
    if (Status s = sql::run(db,
                            "INSERT INTO account_users (name, default_account, admin_level) "
                            "VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET default_account = "
                            "excluded.default_account, admin_level = excluded.admin_level",
                            {u.name, u.default_account, std::string(admin_level_name(u.admin))});
        !s)
      return s;
  }
  for (const Association& a : after.associations()) {
    const Association* was = before.find_association(a.user, a.account);
    if (was && *was == a) continue;
    if (Status s = sql::run(db,
                            "INSERT INTO associations (user_name, account, shares, limits, qos, "
                            "default_qos) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (user_name, "
                            "account) DO UPDATE SET shares = excluded.shares, limits = "
                            "excluded.limits, qos = excluded.qos, default_qos = "
                            "excluded.default_qos",
                            {a.user, a.account, a.shares, encode_limits(a.limits),
                             join_names(a.qos), a.default_qos});
        !s)
      return s;
  }
  return Ok{};
}

}  // namespace

Result<AccountBook> SqlStore::account_book() {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return transaction(db, "account_book", false,
                     [&](bool&) -> Result<AccountBook> { return read_book(db, false); });
}

Result<std::string> SqlStore::change_accounts(const AccountChange& change, Seconds now) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return transaction(db, "change_accounts", true, [&](bool& changed) -> Result<std::string> {
    Result<AccountBook> before = read_book(db, true);
    if (!before) return before.error();
    AccountBook after = *before;
    Result<std::string> done = after.apply(change);
    if (!done) return done.error();
    if (Status s = write_book(db, *before, after); !s) return s.error();
    if (after == *before) return done;
    sql::log_event(db, now, "accounts", 0, "", describe(change));
    changed = true;
    return done;
  });
}

}  // namespace trellis
