// trellis-spawner: the agent's helper that forks job shepherds (daemon/shepherd_spawner.h).
// trellis-agent starts it with the socket it talks over and the exit-notice pipe as
// descriptors; it is not meant to be run by hand.
#include <fcntl.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "daemon/shepherd_spawner.h"

int main(int argc, char** argv) {
  auto descriptor = [](const char* text) {
    char* end = nullptr;
    long fd = std::strtol(text, &end, 10);
    return end != text && *end == '\0' && fd >= 0 && fd < 1024 && ::fcntl(int(fd), F_GETFD) >= 0
               ? int(fd)
               : -1;
  };
  int socket = argc >= 2 ? descriptor(argv[1]) : -1;
  int notice = argc >= 3 ? descriptor(argv[2]) : -1;
  if (socket < 0 || (argc >= 3 && notice < 0) || argc > 3) {
    std::fprintf(stderr,
                 "usage: trellis-spawner SOCKET_FD [NOTICE_FD]\n"
                 "trellis-agent's helper that forks the shepherds of job tasks; the agent starts\n"
                 "it with open descriptors. It is not meant to be run by hand.\n");
    return 2;
  }
  trellis::serve_spawner(socket, notice);
}
