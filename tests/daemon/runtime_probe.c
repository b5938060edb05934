/* trellis-runtime-probe: a job's process using the runtime (include/trellis/runtime.h), driven
 * by tests/daemon/job_activity_test.cc. A C program, so it also checks that the header and the
 * library work from C.
 *
 *   trellis-runtime-probe [attach]
 *
 * With "attach" it attaches first and prints "attach RC ERRNO". Then it reads one-character
 * commands from stdin and answers on stdout, one line each:
 *   m / i   begin a wait for a message / for input, print "begin", block reading one byte of
 *           stdin (the message), end the wait, print "end"
 *   a       attach (again), print "attach RC ERRNO"
 *   d       detach, print "detached"
 *   f       fork a child that begins an input wait (a no-op: the child is not attached), then
 *           attaches, begins a message wait, prints "child RC ERRNO" and sleeps; the parent
 *           prints "forked PID"
 *   s       spin on the CPU forever
 *   q or end of input: exit 0
 *
 *   trellis-runtime-probe wait-message
 *
 * attaches, announces a wait for a message and blocks for ever: a job's process deadlocked on a
 * message that never comes (tests/daemon/live_gang_test.cc runs it as a job).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "trellis/runtime.h"

static void say(const char* line) {
  size_t length = strlen(line);
  while (length > 0) {
    ssize_t n = write(1, line, length);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    line += n;
    length -= (size_t)n;
  }
}

/* Prints "WHAT RC ERRNO" for an attach that returned rc. */
static void say_attach(const char* what, int rc, int error) {
  char line[64];
  snprintf(line, sizeof line, "%s %d %d\n", what, rc, rc == 0 ? 0 : error);
  say(line);
}

static void attach_and_say(const char* what) {
  int rc = trellis_runtime_attach();
  say_attach(what, rc, errno);
}

static int read_byte(char* c) {
  for (;;) {
    ssize_t n = read(0, c, 1);
    if (n < 0 && errno == EINTR) continue;
    return n == 1;
  }
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "wait-message") == 0) {
    if (trellis_runtime_attach() != 0) return 1;
    trellis_wait_begin(TRELLIS_WAIT_MESSAGE);
    for (;;) pause();
  }
  if (argc > 1 && strcmp(argv[1], "attach") == 0) attach_and_say("attach");
  volatile unsigned long spins = 0;
  char command = 0;
  while (read_byte(&command)) {
    switch (command) {
      case 'm':
      case 'i': {
        int kind = command == 'm' ? TRELLIS_WAIT_MESSAGE : TRELLIS_WAIT_INPUT;
        trellis_wait_begin(kind);
        say("begin\n");
        char message = 0;
        int got = read_byte(&message);
        trellis_wait_end(kind);
        say("end\n");
        if (!got) return 0;
        break;
      }
      case 'a':
        attach_and_say("attach");
        break;
      case 'd':
        trellis_runtime_detach();
        say("detached\n");
        break;
      case 'f': {
        pid_t child = fork();
        if (child == 0) {
          trellis_wait_begin(TRELLIS_WAIT_INPUT); /* not attached yet: must not touch the parent */
          int rc = trellis_runtime_attach();
          int error = errno;
          trellis_wait_begin(TRELLIS_WAIT_MESSAGE); /* before saying so: the test then looks */
          say_attach("child", rc, error);
          for (;;) pause();
        }
        char line[64];
        snprintf(line, sizeof line, "forked %ld\n", (long)child);
        say(line);
        break;
      }
      case 's':
        for (;;) ++spins;
      case 'q':
        return 0;
      default:
        break;
    }
  }
  return 0;
}
