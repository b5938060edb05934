/* trellis-work SECONDS [TICK_MS]: a job's process that "computes" for SECONDS of its own running
 * time and then exits 0. Time during which it is frozen (a gang switch, a cgroup freeze,
 * SIGSTOP) does not count, so a job of these processes takes SECONDS of running time on a
 * dedicated node, however the node is time-shared.
 *
 * Why not a calibrated busy loop, as the thesis's section 7.3 experiment used: trellis bench
 * gang-live emulates 64 nodes on a host of a few cores, where 64 busy loops would measure how
 * the host's cores are shared, not how the gang scheduler shares the nodes. This process instead
 * sleeps in short ticks and counts the wall time between wake-ups. A gap much longer than a
 * tick means it was frozen in that tick: it is credited half a tick (it ran for some unknown
 * part of the tick before the freeze, half on average), so the error per freeze is at most half
 * a tick and averages out over many freezes.
 *
 * It uses no measurable CPU, so a gang controller with idle detection on would take it for a
 * process waiting for input: run it with idle detection off ([controller] idle_detection).
 *
 * Exit status: 0 when done; 2 for a bad argument (with a message on stderr). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A number from the command line, or -1 if `text` is not one whole positive number. */
static double positive_number(const char* text) {
  char* end = NULL;
  errno = 0;
  double value = strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !(value > 0) || value > 1e9) return -1;
  return value;
}

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr,
            "usage: trellis-work SECONDS [TICK_MS]\n"
            "  Runs for SECONDS of its own running time (frozen time does not count), waking\n"
            "  every TICK_MS milliseconds (default 5) to look at the clock, then exits 0.\n");
    return 2;
  }
  const double seconds = positive_number(argv[1]);
  if (seconds < 0) {
    fprintf(stderr, "trellis-work: SECONDS: expected a positive number, found '%s'\n", argv[1]);
    return 2;
  }
  double tick_ms = 5;
  if (argc == 3) {
    tick_ms = positive_number(argv[2]);
    if (tick_ms < 0 || tick_ms > 1000) {
      fprintf(stderr, "trellis-work: TICK_MS: expected a number from 0 to 1000, found '%s'\n",
              argv[2]);
      return 2;
    }
  }
  const double tick = tick_ms / 1000;
  /* Longer than any wake-up delay of a busy host, shorter than any gang slot worth having. */
  const double frozen_gap = tick + (4 * tick > 0.02 ? 4 * tick : 0.02);
  struct timespec pause;
  pause.tv_sec = (time_t)tick;
  pause.tv_nsec = (long)((tick - (double)pause.tv_sec) * 1e9);

  double worked = 0;
  double last = now_seconds();
  while (worked < seconds) {
    double left = seconds - worked;
    struct timespec step = pause;
    if (left < tick) { /* the last, shorter tick */
      step.tv_sec = (time_t)left;
      step.tv_nsec = (long)((left - (double)step.tv_sec) * 1e9);
    }
    nanosleep(&step, NULL); /* interrupted early by a signal: the gap below is what counts */
    double now = now_seconds();
    double gap = now - last;
    worked += gap <= frozen_gap ? gap : tick / 2;
    last = now;
  }
  return 0;
}
