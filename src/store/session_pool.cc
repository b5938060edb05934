#include "store/session_pool.h"

#include <algorithm>

namespace trellis::sql {

SessionPool::SessionPool(std::unique_ptr<Session> first, Opener open_more, int most)
    : open_more_(std::move(open_more)),
      most_(open_more_ ? static_cast<size_t>(std::max(most, 1)) : 1) {
  slots_.push_back(std::make_unique<Slot>());
  slots_.front()->session = std::move(first);
}

SessionPool::Lease::Lease(Lease&& other) noexcept
    : pool_(other.pool_), slot_(other.slot_), session_(other.session_) {
  other.pool_ = nullptr;
}

SessionPool::Lease::~Lease() {
  if (pool_) pool_->give_back(slot_);
}

SessionPool::Lease SessionPool::acquire() {
  std::unique_lock lock(mutex_);
  while (true) {
    for (size_t i = 0; i < slots_.size(); ++i) {
      Slot& slot = *slots_[i];
      if (!slot.busy && slot.session) {
        slot.busy = true;
        return Lease(this, i, slot.session.get());
      }
    }
    if (slots_.size() < most_) {
      // Opened outside the lock (a connection takes a round trip or more); the slot is held
      // busy meanwhile so that no one else opens past the limit.
      size_t at = slots_.size();
      slots_.push_back(std::make_unique<Slot>());
      slots_.back()->busy = true;
      lock.unlock();
      Result<std::unique_ptr<Session>> opened = open_more_();
      lock.lock();
      if (opened) {
        slots_[at]->session = std::move(*opened);
        return Lease(this, at, slots_[at]->session.get());
      }
      // Not now: no more are opened, the slot stays empty, and the caller waits for one of the
      // open sessions like everyone else.
      most_ = slots_.size();
      slots_[at]->busy = false;
      returned_.notify_all();
      continue;
    }
    returned_.wait(lock);
  }
}

void SessionPool::give_back(size_t slot) {
  {
    std::lock_guard lock(mutex_);
    slots_[slot]->busy = false;
  }
  returned_.notify_all();
}

void SessionPool::for_each(const std::function<void(const Session&)>& visit) {
  std::unique_lock lock(mutex_);
  for (size_t i = 0; i < slots_.size(); ++i) {
    returned_.wait(lock, [&] { return !slots_[i]->busy; });
    if (!slots_[i]->session) continue;  // one that could not be opened
    slots_[i]->busy = true;
    Session* session = slots_[i]->session.get();
    lock.unlock();
    visit(*session);
    lock.lock();
    slots_[i]->busy = false;
    returned_.notify_all();
  }
}

size_t SessionPool::size() const {
  std::lock_guard lock(mutex_);
  return static_cast<size_t>(std::count_if(slots_.begin(), slots_.end(),
                                           [](const auto& s) { return s->session != nullptr; }));
}

}  // namespace trellis::sql
