#include "daemon/absent_names.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace trellis {

AbsentNames::AbsentNames(const std::string& directory) {
  fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd_ < 0) return;
  // IN_ONLYDIR: a directory or nothing. (IN_Q_OVERFLOW and IN_IGNORED come without asking.)
  if (::inotify_add_watch(fd_, directory.c_str(), IN_CREATE | IN_MOVED_TO | IN_ONLYDIR) < 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

AbsentNames::~AbsentNames() {
  if (fd_ >= 0) ::close(fd_);
}

bool AbsentNames::watching() const {
  std::lock_guard lock(mutex_);
  return fd_ >= 0;
}

void AbsentNames::drain() {
  alignas(inotify_event) char events[4096];
  for (;;) {
    ssize_t got = ::read(fd_, events, sizeof events);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return;  // EAGAIN: nothing new
    names_.clear();
    ++creations_;
    // The directory gone (IN_IGNORED) or unreadable: no watch from now on.
    for (ssize_t at = 0; at + static_cast<ssize_t>(sizeof(inotify_event)) <= got;) {
      const auto* event = reinterpret_cast<const inotify_event*>(events + at);
      if (event->mask & IN_IGNORED) {
        ::close(fd_);
        fd_ = -1;
        return;
      }
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
    }
  }
}

bool AbsentNames::known_missing(const std::string& name, uint64_t* mark) {
  std::lock_guard lock(mutex_);
  if (fd_ < 0) return false;
  drain();
  *mark = creations_;
  return fd_ >= 0 && names_.contains(name);
}

void AbsentNames::missing(const std::string& name, uint64_t mark) {
  std::lock_guard lock(mutex_);
  if (fd_ < 0) return;
  drain();
  if (fd_ >= 0 && creations_ == mark) names_.insert(name);
}

}  // namespace trellis
