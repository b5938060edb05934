#include "core/node_set.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>

namespace trellis {

NodeSet::NodeSet(int size) {
  if (size < 0) throw std::invalid_argument("NodeSet size must be >= 0");
  reshape(size);
  if (on_heap()) std::fill_n(words_, word_count(), Word{0});  // inline words start at zero
}

NodeSet& NodeSet::operator=(const NodeSet& other) {
  if (this != &other) {
    reshape(other.size_);
    std::copy_n(other.words_, word_count(), words_);
  }
  return *this;
}

NodeSet& NodeSet::operator=(NodeSet&& other) noexcept {
  if (this == &other) return *this;
  if (other.on_heap()) {  // take its block
    release();
    words_ = other.words_;
    capacity_ = other.capacity_;
    size_ = other.size_;
    other.words_ = other.inline_;
    other.capacity_ = kInlineWords;
  } else {  // fits inline: copy (keeping a block of ours, if any, for later)
    size_ = other.size_;
    std::copy_n(other.inline_, kInlineWords, words_);
  }
  other.size_ = 0;  // a moved-from set is empty, as a moved-from vector is
  return *this;
}

void NodeSet::reshape(int size) {
  const size_t need = static_cast<size_t>(size + kWordBits - 1) / kWordBits;
  if (need > static_cast<size_t>(capacity_)) {
    release();
    words_ = new Word[need];
    capacity_ = static_cast<int>(need);
  }
  size_ = size;
}

void NodeSet::release() {
  if (on_heap()) delete[] words_;
  words_ = inline_;
  capacity_ = kInlineWords;
  size_ = 0;
}

bool operator==(const NodeSet& a, const NodeSet& b) {
  return a.size_ == b.size_ && std::equal(a.words_, a.words_ + a.word_count(), b.words_);
}

NodeSet NodeSet::all(int size) {
  NodeSet s(size);
  std::fill_n(s.words_, s.word_count(), ~Word{0});
  s.clear_tail();
  return s;
}

NodeSet NodeSet::of(int size, const std::vector<NodeId>& ids) {
  NodeSet s(size);
  for (NodeId id : ids) {
    if (id < 0 || id >= size) throw std::out_of_range("NodeSet::of: id outside the set");
    s.set(id);
  }
  return s;
}

int NodeSet::count() const {
  int n = 0;
  for (Word w : words()) n += std::popcount(w);
  return n;
}

bool NodeSet::none() const {
  for (Word w : words())
    if (w) return false;
  return true;
}

static NodeSet::Word range_mask(int lo, int hi) {  // bits [lo, hi) of one word, 0 <= lo < hi <= 64
  NodeSet::Word upper = hi == 64 ? ~NodeSet::Word{0} : ((NodeSet::Word{1} << hi) - 1);
  return upper & ~((NodeSet::Word{1} << lo) - 1);
}

void NodeSet::set_range(NodeId first, NodeId last) {
  assert(0 <= first && first <= last && last <= size_);
  while (first < last) {
    int w = first >> 6, lo = first & 63;
    int hi = std::min(64, lo + (last - first));
    words_[w] |= range_mask(lo, hi);
    first += hi - lo;
  }
}

void NodeSet::reset_range(NodeId first, NodeId last) {
  assert(0 <= first && first <= last && last <= size_);
  while (first < last) {
    int w = first >> 6, lo = first & 63;
    int hi = std::min(64, lo + (last - first));
    words_[w] &= ~range_mask(lo, hi);
    first += hi - lo;
  }
}

void NodeSet::clear() {
  std::fill_n(words_, word_count(), Word{0});
}

static void require_same_size(const NodeSet& a, const NodeSet& b) {
  if (a.size() != b.size()) throw std::invalid_argument("NodeSet operands differ in size");
}

NodeSet& NodeSet::operator|=(const NodeSet& other) {
  require_same_size(*this, other);
  for (size_t i = 0, n = word_count(); i < n; ++i) words_[i] |= other.words_[i];
  return *this;
}

NodeSet& NodeSet::operator&=(const NodeSet& other) {
  require_same_size(*this, other);
  for (size_t i = 0, n = word_count(); i < n; ++i) words_[i] &= other.words_[i];
  return *this;
}

NodeSet& NodeSet::operator-=(const NodeSet& other) {
  require_same_size(*this, other);
  for (size_t i = 0, n = word_count(); i < n; ++i) words_[i] &= ~other.words_[i];
  return *this;
}

NodeSet& NodeSet::operator^=(const NodeSet& other) {
  require_same_size(*this, other);
  for (size_t i = 0, n = word_count(); i < n; ++i) words_[i] ^= other.words_[i];
  return *this;
}

NodeSet NodeSet::complement() const {
  NodeSet c = *this;
  for (Word& w : c.mutable_words()) w = ~w;
  c.clear_tail();
  return c;
}

bool NodeSet::intersects(const NodeSet& other) const {
  require_same_size(*this, other);
  for (size_t i = 0, n = word_count(); i < n; ++i)
    if (words_[i] & other.words_[i]) return true;
  return false;
}

bool NodeSet::is_subset_of(const NodeSet& other) const {
  require_same_size(*this, other);
  for (size_t i = 0, n = word_count(); i < n; ++i)
    if (words_[i] & ~other.words_[i]) return false;
  return true;
}

NodeId NodeSet::next(NodeId from) const {
  if (from < 0) from = 0;
  if (from >= size_) return -1;
  size_t w = from >> 6;
  Word bits = words_[w] & (~Word{0} << (from & 63));
  while (true) {
    if (bits) return static_cast<NodeId>(w * kWordBits + std::countr_zero(bits));
    if (++w == word_count()) return -1;
    bits = words_[w];
  }
}

NodeId NodeSet::next_absent(NodeId from) const {
  if (from < 0) from = 0;
  if (from >= size_) return size_;
  size_t w = from >> 6;
  Word holes = ~words_[w] & (~Word{0} << (from & 63));
  while (true) {
    if (holes) return std::min(size_, static_cast<NodeId>(w * kWordBits + std::countr_zero(holes)));
    if (++w == word_count()) return size_;
    holes = ~words_[w];
  }
}

std::vector<NodeId> NodeSet::to_vector() const {
  std::vector<NodeId> ids;
  ids.reserve(count());
  for_each([&](NodeId id) { ids.push_back(id); });
  return ids;
}

std::vector<std::pair<NodeId, NodeId>> NodeSet::runs() const {
  std::vector<std::pair<NodeId, NodeId>> result;
  for (NodeId first = next(0); first >= 0;) {
    NodeId end = next_absent(first);
    result.emplace_back(first, end - 1);
    first = end < size_ ? next(end) : -1;
  }
  return result;
}

void NodeSet::clear_tail() {
  if (size_ % kWordBits != 0) words_[word_count() - 1] &= (Word{1} << (size_ % kWordBits)) - 1;
}

}  // namespace trellis
