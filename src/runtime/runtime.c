/* The job-side runtime (include/trellis/runtime.h) over the runtime area (area_layout.h). */
#define _POSIX_C_SOURCE 200809L

#include "trellis/runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "area_layout.h"

/* The segment, mapped at the first attach and kept for the life of the process (a forked child
 * shares it), so that a slot pointer another thread still holds never dangles. */
static _Atomic(struct trellis_area*) area;
/* This process's slot; it is ours only while its pid is our pid (after fork() the child
 * inherits the parent's pointer, and finds another pid there). */
static _Atomic(struct trellis_area_slot*) own_slot;
/* Serializes attach and detach (waits take no lock). */
static atomic_flag state_lock = ATOMIC_FLAG_INIT;

static void lock_state(void) {
  while (atomic_flag_test_and_set_explicit(&state_lock, memory_order_acquire)) sched_yield();
}

static void unlock_state(void) {
  atomic_flag_clear_explicit(&state_lock, memory_order_release);
}

/* The state (field 3) and start time (field 22) of /proc/PID/stat ("self" for pid 0). Returns 0,
 * or -1 when the process does not exist or /proc cannot be read. The command name (field 2) may
 * hold spaces and parentheses: the fields start after its last ')'. */
static int read_stat(pid_t pid, char* state, long long* start_time) {
  char path[64];
  if (pid == 0) {
    snprintf(path, sizeof path, "/proc/self/stat");
  } else {
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
  }
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char text[1024]; /* fields 1 to 22 fit in far less */
  size_t length = 0;
  while (length < sizeof text - 1) {
    ssize_t n = read(fd, text + length, sizeof text - 1 - length);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    length += (size_t)n;
  }
  close(fd);
  text[length] = '\0';
  char* at = strrchr(text, ')');
  if (at == NULL) return -1;
  ++at;
  while (*at == ' ') ++at;
  if (*at == '\0') return -1;
  *state = *at;
  for (int field = 3; field < 22; ++field) { /* skip fields 3 to 21 */
    while (*at != '\0' && *at != ' ') ++at;
    while (*at == ' ') ++at;
  }
  char* end = NULL;
  long long value = strtoll(at, &end, 10);
  if (end == at) return -1;
  *start_time = value;
  return 0;
}

/* Whether the process that holds `slot` (pid `pid`) is gone: no such process, a zombie, or a
 * process of another start time (the pid was reused). */
static int owner_gone(struct trellis_area_slot* slot, pid_t pid) {
  char state = 0;
  long long start_time = 0;
  if (read_stat(pid, &state, &start_time) != 0) return 1;
  if (state == 'Z' || state == 'X' || state == 'x') return 1;
  long long recorded = atomic_load_explicit(&slot->start_time, memory_order_relaxed);
  return recorded != 0 && recorded != start_time;
}

/* Opens, checks and maps the segment; NULL with errno set when it cannot be used. */
static struct trellis_area* map_area(void) {
  const char* name = getenv(TRELLIS_RUNTIME_AREA_ENV);
  if (name == NULL || name[0] == '\0') {
    errno = ENOENT;
    return NULL;
  }
  int fd = shm_open(name, O_RDWR | O_CREAT, 0600);
  if (fd < 0) return NULL;
  struct stat st;
  int error = 0;
  if (fstat(fd, &st) != 0) {
    error = errno;
  } else if (!S_ISREG(st.st_mode)) {
    error = EPROTO;
  } else if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    error = EPERM; /* someone else could write our announcements */
  } else if (st.st_size == 0) {
    /* New (ours or another process's of the task): every process sizes it the same. */
    if (ftruncate(fd, TRELLIS_AREA_SIZE) != 0) error = errno;
  } else if (st.st_size != TRELLIS_AREA_SIZE) {
    error = EPROTO;
  }
  void* mapped = MAP_FAILED;
  if (error == 0) {
    mapped = mmap(NULL, TRELLIS_AREA_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mapped == MAP_FAILED) error = errno;
  }
  close(fd);
  if (error != 0) {
    errno = error;
    return NULL;
  }
  struct trellis_area* a = mapped;
  uint32_t magic = atomic_load_explicit(&a->magic, memory_order_acquire);
  if (magic == 0) { /* a fresh segment: initialize the header, magic last */
    atomic_store_explicit(&a->version, TRELLIS_AREA_VERSION, memory_order_relaxed);
    atomic_store_explicit(&a->slot_count, TRELLIS_AREA_SLOTS, memory_order_relaxed);
    atomic_store_explicit(&a->slot_size, sizeof(struct trellis_area_slot), memory_order_relaxed);
    if (atomic_compare_exchange_strong_explicit(&a->magic, &magic, TRELLIS_AREA_MAGIC,
                                                memory_order_acq_rel, memory_order_acquire)) {
      magic = TRELLIS_AREA_MAGIC;
    }
  }
  if (magic != TRELLIS_AREA_MAGIC ||
      atomic_load_explicit(&a->version, memory_order_relaxed) != TRELLIS_AREA_VERSION ||
      atomic_load_explicit(&a->slot_count, memory_order_relaxed) != TRELLIS_AREA_SLOTS ||
      atomic_load_explicit(&a->slot_size, memory_order_relaxed) !=
          sizeof(struct trellis_area_slot)) {
    munmap(mapped, TRELLIS_AREA_SIZE);
    errno = EPROTO;
    return NULL;
  }
  return a;
}

/* Takes `slot` from its holder `seen` (0 = free) for `me`; 0 when another process took it
 * first. Counters and start time are written before the pid is published. */
static int take_slot(struct trellis_area_slot* slot, int32_t seen, pid_t me, long long start) {
  if (!atomic_compare_exchange_strong_explicit(&slot->pid, &seen, -1, memory_order_acq_rel,
                                               memory_order_relaxed)) {
    return 0;
  }
  atomic_store_explicit(&slot->message_waits, 0, memory_order_relaxed);
  atomic_store_explicit(&slot->input_waits, 0, memory_order_relaxed);
  atomic_store_explicit(&slot->reserved, 0, memory_order_relaxed);
  atomic_store_explicit(&slot->start_time, start, memory_order_relaxed);
  atomic_store_explicit(&slot->pid, (int32_t)me, memory_order_release);
  return 1;
}

/* A slot for `me`: the one it held before an exec (same pid and start time), else a free one,
 * else one whose process is gone; NULL when every slot is held by a live process. */
static struct trellis_area_slot* claim_slot(struct trellis_area* a, pid_t me) {
  char state = 0;
  long long start = 0;
  int know_start = read_stat(0, &state, &start) == 0 && start > 0;
  if (!know_start) start = 0;
  for (int pass = 0; pass < 3; ++pass) {
    /* Passes 0 and 2 need /proc: without it every owner would look gone. */
    if (pass != 1 && !know_start) continue;
    for (int i = 0; i < TRELLIS_AREA_SLOTS; ++i) {
      struct trellis_area_slot* slot = &a->slots[i];
      int32_t seen = atomic_load_explicit(&slot->pid, memory_order_acquire);
      int wanted = 0;
      if (pass == 0) {
        wanted = seen == (int32_t)me &&
                 atomic_load_explicit(&slot->start_time, memory_order_relaxed) == start;
      } else if (pass == 1) {
        wanted = seen == 0;
      } else {
        wanted = seen > 0 && owner_gone(slot, seen);
      }
      if (wanted && take_slot(slot, seen, me, start)) return slot;
    }
  }
  return NULL;
}

/* This process's slot, or NULL when it is not attached. */
static struct trellis_area_slot* current_slot(void) {
  struct trellis_area_slot* slot = atomic_load_explicit(&own_slot, memory_order_acquire);
  if (slot == NULL) return NULL;
  if (atomic_load_explicit(&slot->pid, memory_order_relaxed) != (int32_t)getpid()) return NULL;
  return slot;
}

static _Atomic(int32_t)* wait_counter(struct trellis_area_slot* slot, int kind) {
  switch (kind) {
    case TRELLIS_WAIT_MESSAGE:
      return &slot->message_waits;
    case TRELLIS_WAIT_INPUT:
      return &slot->input_waits;
    default:
      return NULL;
  }
}

int trellis_runtime_attach(void) {
  lock_state();
  if (current_slot() != NULL) {
    unlock_state();
    return 0;
  }
  struct trellis_area* a = atomic_load_explicit(&area, memory_order_acquire);
  if (a == NULL) {
    a = map_area();
    if (a == NULL) {
      int error = errno;
      unlock_state();
      errno = error;
      return -1;
    }
    atomic_store_explicit(&area, a, memory_order_release);
  }
  struct trellis_area_slot* slot = claim_slot(a, getpid());
  if (slot == NULL) {
    unlock_state();
    errno = ENOSPC;
    return -1;
  }
  atomic_store_explicit(&own_slot, slot, memory_order_release);
  unlock_state();
  return 0;
}

void trellis_wait_begin(int kind) {
  struct trellis_area_slot* slot = current_slot();
  if (slot == NULL) return;
  _Atomic(int32_t)* counter = wait_counter(slot, kind);
  if (counter == NULL) return;
  /* Before the caller blocks: visible to a reader once this process is frozen. */
  atomic_fetch_add_explicit(counter, 1, memory_order_release);
}

void trellis_wait_end(int kind) {
  struct trellis_area_slot* slot = current_slot();
  if (slot == NULL) return;
  _Atomic(int32_t)* counter = wait_counter(slot, kind);
  if (counter == NULL) return;
  int32_t value = atomic_load_explicit(counter, memory_order_relaxed);
  while (value > 0 && !atomic_compare_exchange_weak_explicit(
                          counter, &value, value - 1, memory_order_release, memory_order_relaxed)) {
  }
}

void trellis_runtime_detach(void) {
  lock_state();
  struct trellis_area_slot* slot = current_slot();
  if (slot != NULL) {
    atomic_store_explicit(&own_slot, NULL, memory_order_release);
    atomic_store_explicit(&slot->message_waits, 0, memory_order_relaxed);
    atomic_store_explicit(&slot->input_waits, 0, memory_order_relaxed);
    atomic_store_explicit(&slot->start_time, 0, memory_order_relaxed);
    atomic_store_explicit(&slot->pid, 0, memory_order_release);
  }
  unlock_state();
}
