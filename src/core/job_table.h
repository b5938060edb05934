// JobTable<T>: a value per job id, for lookups in a scheduler's or simulator's inner loop (a gang
// switch looks up every job of every slot). Ids are usually dense (1..n in a trace, a counter in
// a controller), so ids up to a bound that grows with the largest id index a vector of values
// directly (memory: the largest id times the value's size, so keep values small); any others go
// through a hash map. Values move when the vector grows: do not keep pointers across emplace().
//
//   JobTable<int> t;
//   t.emplace(7, 1);
//   if (int* v = t.find(7)) ++*v;
//   t.erase(7);
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/job.h"

namespace trellis {

template <typename T>
class JobTable {
 public:
  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }

  T* find(JobId id) {
    if (id >= 0 && static_cast<std::size_t>(id) < dense_.size()) {
      if (auto& slot = dense_[static_cast<std::size_t>(id)]) return &*slot;
    }
    // An id may sit in the map from before the vector grew to cover it: look there too.
    if (sparse_.empty()) return nullptr;
    auto it = sparse_.find(id);
    return it == sparse_.end() ? nullptr : &it->second;
  }
  const T* find(JobId id) const { return const_cast<JobTable*>(this)->find(id); }
  // The value of `id`, which must be in the table.
  T& at(JobId id) {
    T* found = find(id);
    assert(found != nullptr && "JobTable::at of a job that is not in the table");
    return *found;
  }
  const T& at(JobId id) const { return const_cast<JobTable*>(this)->at(id); }

  // Adds `value` for `id` unless it is there; returns the value in the table and whether it was
  // added.
  std::pair<T*, bool> emplace(JobId id, T value) {
    if (T* there = find(id)) return {there, false};
    ++count_;
    if (id >= 0 && static_cast<std::size_t>(id) < 2 * dense_.size() + kSlack) {
      const auto at = static_cast<std::size_t>(id);
      if (at >= dense_.size()) dense_.resize(std::max(at + 1, 2 * dense_.size()));
      dense_[at] = std::move(value);
      return {&*dense_[at], true};
    }
    return {&sparse_.emplace(id, std::move(value)).first->second, true};
  }
  // Removes `id`; false if it was not there.
  bool erase(JobId id) {
    if (id >= 0 && static_cast<std::size_t>(id) < dense_.size() &&
        dense_[static_cast<std::size_t>(id)]) {
      dense_[static_cast<std::size_t>(id)].reset();
    } else if (sparse_.erase(id) == 0) {
      return false;
    }
    --count_;
    return true;
  }
  void clear() {
    dense_.clear();
    sparse_.clear();
    count_ = 0;
  }

  // Whether `f(id, value)` holds for every entry (in no particular order). Costs the largest
  // dense id, not the entries: for occasional use.
  template <typename F>
  bool all_of(F f) const {
    for (std::size_t id = 0; id < dense_.size(); ++id)
      if (dense_[id] && !f(static_cast<JobId>(id), *dense_[id])) return false;
    for (const auto& [id, value] : sparse_)
      if (!f(id, value)) return false;
    return true;
  }
  template <typename F>
  void for_each(F f) const {
    all_of([&](JobId id, const T& value) {
      f(id, value);
      return true;
    });
  }

 private:
  // Ids below twice the vector's size plus this index it (it grows to cover them): ids that
  // grow by one stay there, a few huge ids (SWF allows 2^53) go to the map.
  static constexpr std::size_t kSlack = 1 << 16;

  std::vector<std::optional<T>> dense_;  // by id: one lookup, no hashing, in the inner loops
  std::unordered_map<JobId, T> sparse_;
  std::size_t count_ = 0;
};

}  // namespace trellis
