#include "alloc/buddy/buddy_allocator.h"

#include <bit>
#include <span>
#include <vector>

#include "alloc/baseline.h"
#include "alloc/registry.h"

namespace trellis {

int buddy_block_size(int nodes) {
  return static_cast<int>(std::bit_ceil(static_cast<unsigned>(nodes)));
}

BuddyAllocator::BuddyAllocator(const Machine& machine, Curve curve)
    : Allocator(machine), curve_(std::move(curve)), identity_(identity_order()) {}

Status BuddyAllocator::check(const Request& request) const {
  if (auto ok = Allocator::check(request); !ok) return ok;
  const int largest = static_cast<int>(std::bit_floor(static_cast<unsigned>(curve_.size())));
  if (buddy_block_size(request.nodes) > largest)
    return never_fits("a buddy block for " + std::to_string(request.nodes) + " nodes has " +
                      std::to_string(buddy_block_size(request.nodes)) +
                      " nodes, but the largest on " + machine().describe() + " has " +
                      std::to_string(largest));
  return Ok{};
}

namespace {

using Word = NodeSet::Word;
constexpr Word kAllFree = ~Word{0};

// kAligned[j]: the bits at multiples of 2^j in a word (the first ranks of aligned blocks of 2^j).
constexpr Word kAligned[7] = {kAllFree,
                              0x5555555555555555ULL,
                              0x1111111111111111ULL,
                              0x0101010101010101ULL,
                              0x0001000100010001ULL,
                              0x0000000100000001ULL,
                              0x0000000000000001ULL};

// The free aligned blocks of 2^j ranks (j <= 6) inside `free`, a word of ranks: bit i is set when
// i is a multiple of 2^j and ranks i .. i + 2^j - 1 are all free.
Word free_blocks(Word free, int j) {
  for (int k = 0; k < j; ++k) free &= free >> (1 << k);
  return free & kAligned[j];
}

// Of `blocks` (free aligned blocks of 2^j, j < 6, as free_blocks() gives them), those whose buddy
// is not free: the maximal ones. (A free buddy would make the parent block free, and the parent
// the maximal one.)
Word maximal_blocks(Word blocks, int j) {
  const int size = 1 << j;
  const Word low_halves = kAligned[j + 1], high_halves = kAligned[j] & ~kAligned[j + 1];
  const Word buddy_free = ((blocks >> size) & low_halves) | ((blocks << size) & high_halves);
  return blocks & ~buddy_free;
}

// The even bits of `x` (bits 0, 2, 4, ...), packed into the low 32 bits.
Word even_bits(Word x) {
  x &= 0x5555555555555555ULL;
  x = (x | (x >> 1)) & 0x3333333333333333ULL;
  x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
  x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
  return (x | (x >> 16)) & 0x00000000FFFFFFFFULL;
}

using Block = BuddyAllocator::Block;

// The smallest maximal free block of at least 2^want_order ranks, at the lowest rank, among the
// ranks whose free bits are `ranks` (bits past the machine are zero, so a block that would reach
// past the last node is never free); first = -1 if none.
Block smallest_maximal_block(std::span<const Word> ranks, int want_order) {
  // Blocks inside one word (up to 32 ranks), in one pass over the words: in each, the smallest
  // size with a maximal block, kept if smaller than any found in a word before. A word with no
  // free rank has no free block, and a word that is all free has none whose buddy is busy.
  if (want_order < 6) {
    Block best;
    for (size_t w = 0; w < ranks.size(); ++w) {
      if (ranks[w] == 0 || ranks[w] == kAllFree) continue;
      Word blocks = free_blocks(ranks[w], want_order);
      for (int j = want_order; j < 6 && (best.first < 0 || j < best.order); ++j) {
        if (j > want_order) blocks &= (blocks >> (1 << (j - 1))) & kAligned[j];
        if (blocks == 0) break;  // no free block of this size here, so none larger
        if (Word maximal = maximal_blocks(blocks, j)) {
          best = {static_cast<int>(w) * NodeSet::kWordBits + std::countr_zero(maximal), j};
          break;
        }
      }
      if (best.first >= 0 && best.order == want_order) break;  // nothing can beat it
    }
    if (best.first >= 0) return best;
  }
  // Blocks of whole words: level[b] says the aligned block b of 2^(6 + i) ranks is free, for
  // i = 0, 1, ... in turn; the next level's bit b is this level's bits 2b and 2b + 1 together.
  std::vector<Word> level((ranks.size() + NodeSet::kWordBits - 1) / NodeSet::kWordBits, 0);
  for (size_t w = 0; w < ranks.size(); ++w)
    if (ranks[w] == kAllFree) level[w / NodeSet::kWordBits] |= Word{1} << (w % NodeSet::kWordBits);
  for (int j = 6;; ++j) {
    if (j >= want_order) {
      for (size_t w = 0; w < level.size(); ++w) {
        const Word with_free_buddy = ((level[w] >> 1) & kAligned[1] & level[w]) |
                                     ((level[w] << 1) & ~kAligned[1] & level[w]);
        if (Word maximal = level[w] & ~with_free_buddy)
          return {(static_cast<int>(w) * NodeSet::kWordBits + std::countr_zero(maximal)) << j, j};
      }
    }
    // The next level, in place: word w / 2 of it comes from words w and w + 1 of this one.
    bool any = false;
    for (size_t w = 0; w < level.size(); ++w) {
      const Word pairs = even_bits(level[w] & (level[w] >> 1));
      if (w % 2 == 0) {
        level[w / 2] = pairs;
      } else {
        level[w / 2] |= pairs << 32;
      }
      any = any || pairs != 0;
    }
    if (!any) return {};  // no free block of this size, so none larger
    level.resize((level.size() + 1) / 2);
  }
}

}  // namespace

bool BuddyAllocator::identity_order() const {
  for (int r = 0; r < curve_.size(); ++r)
    if (curve_.node_at(r) != r) return false;
  return true;
}

std::optional<int> BuddyAllocator::find_block(const NodeSet& free, int nodes) const {
  const Block block = choose(free, nodes);
  if (block.first < 0) return std::nullopt;
  return block.first;
}

BuddyAllocator::Block BuddyAllocator::choose(const NodeSet& free, int nodes) const {
  const int want_order = std::countr_zero(static_cast<unsigned>(buddy_block_size(nodes)));
  if (identity_) return smallest_maximal_block(free.words(), want_order);
  return smallest_maximal_block(curve_.to_ranks(free).words(), want_order);
}

Result<Placement> BuddyAllocator::allocate(const NodeSet& free, const Request& request) const {
  if (auto ok = check(request); !ok) return ok.error();
  if (auto ok = require_free_count(free, request.nodes); !ok) return ok.error();
  const int want = buddy_block_size(request.nodes);
  const int want_order = std::countr_zero(static_cast<unsigned>(want));
  const Block block = choose(free, request.nodes);
  if (block.first < 0) return does_not_fit_now();
  // The block is split down to the job's size, keeping the low half: the job gets its first ranks.
  Placement p{NodeSet(free.size()), std::nullopt, {}};
  if (identity_) {
    p.nodes.set_range(block.first, block.first + request.nodes);
  } else {
    for (int r = block.first; r < block.first + request.nodes; ++r) p.nodes.set(curve_.node_at(r));
  }
  p.note =
      "buddy block of " + std::to_string(want) + " at rank " + std::to_string(block.first) +
      (block.order > want_order ? " (split from " + std::to_string(1 << block.order) + ")" : "");
  return p;
}

void register_buddy_allocators(AllocatorRegistry& registry) {
  registry.add(
      {"buddy", "binary buddy: aligned power-of-two blocks along a curve (option curve=...)", "any",
       [](const Machine& m, const AllocatorOptions& given) -> Result<std::unique_ptr<Allocator>> {
         ComponentOptions o = given.for_component("buddy");
         if (auto ok = o.only({"curve"}); !ok) return ok.error();
         CurveKind kind = m.torus() && m.torus()->dims() <= 3 ? CurveKind::kHilbert
                          : m.torus()                         ? CurveKind::kSnake
                                                              : CurveKind::kRowMajor;
         if (auto c = o.get("curve")) {
           auto parsed = parse_curve_kind(*c);
           if (!parsed) return o.bad_value("curve", parsed.error().message);
           kind = *parsed;
         }
         auto curve = Curve::for_machine(kind, m);
         if (!curve) return o.bad_value("curve", curve.error().message);
         return make_allocator<BuddyAllocator>(m, std::move(*curve));
       }});
}

}  // namespace trellis
