#include "alloc/contiguous/box_search.h"

#include <string>

namespace trellis {

Result<SearchKind> parse_search_kind(std::string_view text) {
  if (text == "production") return SearchKind::kProduction;
  if (text == "brute") return SearchKind::kBruteForce;
  if (text == "embodiment1") return SearchKind::kEmbodiment1;
  return fail("search '" + std::string(text) + "' is not one of production, brute, embodiment1");
}

std::string_view to_string(SearchKind kind) {
  switch (kind) {
    case SearchKind::kProduction:
      return "production";
    case SearchKind::kBruteForce:
      return "brute";
    case SearchKind::kEmbodiment1:
      return "embodiment1";
  }
  return "?";
}

std::unique_ptr<BoxSearch> make_box_search(SearchKind kind, const Torus& machine) {
  switch (kind) {
    case SearchKind::kProduction:
      return make_production_search(machine);
    case SearchKind::kBruteForce:
      return make_brute_force_search(machine);
    case SearchKind::kEmbodiment1:
      return make_embodiment1_search(machine);
  }
  return nullptr;
}

}  // namespace trellis
