// trellis-shepherd: the parent of an agent's job processes (daemon/shepherd.h). trellis-agent
// starts it with the socket it talks over and the exit-notice pipe as descriptors; it is not
// meant to be run by hand.
#include <fcntl.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "daemon/shepherd.h"

int main(int argc, char** argv) {
  auto descriptor = [](const char* text) {
    char* end = nullptr;
    long fd = std::strtol(text, &end, 10);
    return end != text && *end == '\0' && fd >= 0 && fd < 1024 && ::fcntl(int(fd), F_GETFD) >= 0
               ? int(fd)
               : -1;
  };
  // The last argument, --for=DIR, only names the agent it works for (on its command line).
  int socket = argc >= 2 ? descriptor(argv[1]) : -1;
  bool no_notice = argc >= 3 && std::string_view(argv[2]) == "-1";
  int notice = argc >= 3 && !no_notice ? descriptor(argv[2]) : -1;
  bool owner = argc == 4 && std::string_view(argv[3]).starts_with("--for=");
  if (socket < 0 || argc < 3 || (notice < 0 && !no_notice) || (argc == 4 && !owner) || argc > 4) {
    std::fprintf(stderr,
                 "usage: trellis-shepherd SOCKET_FD NOTICE_FD|-1 [--for=AGENT_STATE_DIR]\n"
                 "The parent of trellis-agent's job processes; the agent starts it with open\n"
                 "descriptors. It is not meant to be run by hand.\n");
    return 2;
  }
  trellis::serve_shepherd(socket, notice);
}
