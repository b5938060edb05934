// write_all: writes every byte to a file descriptor, again after a short write or EINTR, and gives
// up without a word on any other error (a closed pipe, a full disk: the callers have nowhere
// better to say so). It allocates nothing and calls only write(2), so a child between fork or
// clone and exec may use it; the shepherd, the job shell and the ranks' launch share it.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string_view>

namespace trellis {

inline void write_all(int fd, const char* data, size_t length) {
  while (length > 0) {
    ssize_t n = ::write(fd, data, length);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    length -= static_cast<size_t>(n);
  }
}

inline void write_all(int fd, std::string_view text) {
  write_all(fd, text.data(), text.size());
}

// A NUL-terminated string, without its NUL.
inline void write_text(int fd, const char* text) {
  write_all(fd, text, std::strlen(text));
}

}  // namespace trellis
