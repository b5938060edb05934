// Shares files (sim/user_accounts.h) and fair-share over what they give (core/fair_share.h): any
// text parses or gets an error naming the line; what parses holds shares from 0 to 10^9 for
// names of users and groups, and a tree of those shares, with usage drawn from the input, gets
// Fair Tree and classic factors in [0, 1], a level fair-share that is never negative, and one
// user ranked first.
#include "core/fair_share.h"
#include "fuzz_support.h"
#include "sim/user_accounts.h"

using namespace trellis;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(fuzz::as_text(data, size));
  Result<std::map<std::string, double>> shares = parse_shares(text, "fuzz.shares");
  if (!shares) {
    FUZZ_CHECK(shares.error().message.rfind("fuzz.shares:", 0) == 0,
               "an error that does not name the file: " + shares.error().message);
    return 0;
  }
  ShareTree tree;
  const int users = tree.add_account("users", ShareTree::kRoot, 1);
  size_t byte = 0;
  for (const auto& [name, n] : *shares) {
    FUZZ_CHECK(n >= 0 && n <= 1e9, name + ": shares out of range");
    FUZZ_CHECK(name.size() >= 2 && (name[0] == 'u' || name[0] == 'g'), "a name of neither kind");
    const int node = name[0] == 'g' ? tree.add_account(name, ShareTree::kRoot, n)
                                    : tree.add_user(name, users, n);
    if (name[0] == 'g') tree.add_user(name + "-member", node, 1);
    const int user = name[0] == 'g' ? node + 1 : node;
    tree.add_usage(user, size > 0 ? data[byte++ % size] : 0);
  }
  if (tree.user_count() == 0) return 0;
  for (const std::vector<ShareResult>& fs : {fair_tree(tree), classic_fair_share(tree)})
    for (const ShareResult& r : fs) {
      FUZZ_CHECK(r.factor >= 0 && r.factor <= 1, "a factor outside [0, 1]");
      FUZZ_CHECK(r.level_fs >= 0, "a negative or NaN level fair-share");
    }
  std::vector<ShareResult> ranked = fair_tree(tree);
  bool first = false;
  for (size_t i = 0; i < ranked.size(); ++i)
    if (tree.nodes()[i].is_user && ranked[i].factor == 1) first = true;
  FUZZ_CHECK(first, "no user ranked first by Fair Tree");
  return 0;
}
