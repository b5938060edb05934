/* The runtime area: the POSIX shared-memory segment through which a job's processes tell the
 * node agent when they block (seed 002's "c_area" between SCore-D's user-level runtime and its
 * node daemon). Written by the processes (src/runtime/runtime.c, include/trellis/runtime.h),
 * read by the agent (daemon/job_activity.h). C and C++: the fields are C11 _Atomic in C and
 * std::atomic in C++, which the assertions below pin to the same size and alignment.
 *
 * One segment per task (job, attempt, node), named by the agent (runtime_area_name) and passed
 * to the processes in TRELLIS_RUNTIME_AREA. The first process to attach creates it (mode 0600,
 * owned by the job's user) at exactly TRELLIS_AREA_SIZE bytes of zeros and initializes the
 * header: version, slot_count and slot_size first, then magic by compare-exchange 0 ->
 * TRELLIS_AREA_MAGIC (release), so that whoever reads the magic (acquire) sees the rest. A
 * segment of another size, magic, version or slot geometry is not a runtime area of this
 * version: writers refuse to use it and the reader ignores it.
 *
 * Slots: one per attached process, at most TRELLIS_AREA_SLOTS. A process claims a free slot
 * (pid 0) by compare-exchange pid 0 -> -1 ("being claimed"), writes start_time and zero
 * counters, then publishes its pid (release). A slot whose process has died (no such pid, or a
 * pid of another start time) may be claimed back the same way from its stale pid. The reader
 * trusts a slot only for a live process with that pid AND that start time, so slots of dead
 * processes, and of pids reused since, are ignored.
 *
 * The waiting rule (the thesis's ordering): a process increments message_waits (or
 * input_waits) BEFORE it blocks and decrements it AFTER it wakes (release stores), so that a
 * reader looking while the process is frozen never sees "not waiting" for a process blocked in
 * a wait it announced. Counters, not flags, so that nested announcements (a library call inside
 * another) stay correct; they never go below zero.
 */
#ifndef TRELLIS_RUNTIME_AREA_LAYOUT_H
#define TRELLIS_RUNTIME_AREA_LAYOUT_H

#include <stdint.h>

#ifdef __cplusplus
#include <atomic>
#define TRELLIS_ATOMIC(type) std::atomic<type>
#else
#include <stdatomic.h>
#define TRELLIS_ATOMIC(type) _Atomic(type)
#endif

#define TRELLIS_AREA_MAGIC 0x41524c54u /* "TLRA" in memory on little-endian hosts */
#define TRELLIS_AREA_VERSION 1u
#define TRELLIS_AREA_SLOTS 256

/* One attached process. */
struct trellis_area_slot {
  TRELLIS_ATOMIC(int32_t) pid;           /* 0 = free, -1 = being claimed, else the owner */
  TRELLIS_ATOMIC(int32_t) message_waits; /* open waits for a message from the job */
  TRELLIS_ATOMIC(int32_t) input_waits;   /* open waits for input from outside the job */
  TRELLIS_ATOMIC(int32_t) reserved;      /* 0; keeps start_time 8-aligned */
  /* The owner's start time in clock ticks after boot (/proc/PID/stat field 22); 0 = unknown,
   * then the reader cannot tell the owner from a later process with its pid and ignores it. */
  TRELLIS_ATOMIC(int64_t) start_time;
};

struct trellis_area {
  TRELLIS_ATOMIC(uint32_t) magic;      /* TRELLIS_AREA_MAGIC once initialized, 0 before */
  TRELLIS_ATOMIC(uint32_t) version;    /* TRELLIS_AREA_VERSION */
  TRELLIS_ATOMIC(uint32_t) slot_count; /* TRELLIS_AREA_SLOTS */
  TRELLIS_ATOMIC(uint32_t) slot_size;  /* sizeof(struct trellis_area_slot) */
  struct trellis_area_slot slots[TRELLIS_AREA_SLOTS];
};

/* The segment's exact size in bytes. */
#define TRELLIS_AREA_SIZE (16 + 24 * TRELLIS_AREA_SLOTS)

/* The same layout from C and C++: lock-free atomics of the plain types' size (so that an atomic
 * in the segment is just the integer, whatever language wrote it), and the same offsets. */
#ifdef __cplusplus
static_assert(std::atomic<int32_t>::is_always_lock_free && sizeof(std::atomic<int32_t>) == 4 &&
                  alignof(std::atomic<int32_t>) == 4,
              "std::atomic<int32_t> must be a lock-free int32_t");
static_assert(std::atomic<uint32_t>::is_always_lock_free && sizeof(std::atomic<uint32_t>) == 4,
              "std::atomic<uint32_t> must be a lock-free uint32_t");
static_assert(std::atomic<int64_t>::is_always_lock_free && sizeof(std::atomic<int64_t>) == 8 &&
                  alignof(std::atomic<int64_t>) == 8,
              "std::atomic<int64_t> must be a lock-free, 8-aligned int64_t");
static_assert(sizeof(trellis_area_slot) == 24 && sizeof(trellis_area) == TRELLIS_AREA_SIZE,
              "the runtime area's layout changed: bump TRELLIS_AREA_VERSION");
#else
_Static_assert(ATOMIC_INT_LOCK_FREE == 2 && sizeof(_Atomic(int32_t)) == 4 &&
                   _Alignof(_Atomic(int32_t)) == 4,
               "_Atomic(int32_t) must be a lock-free int32_t");
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2 && sizeof(_Atomic(int64_t)) == 8 &&
                   _Alignof(_Atomic(int64_t)) == 8,
               "_Atomic(int64_t) must be a lock-free, 8-aligned int64_t");
_Static_assert(sizeof(struct trellis_area_slot) == 24 &&
                   sizeof(struct trellis_area) == TRELLIS_AREA_SIZE,
               "the runtime area's layout changed: bump TRELLIS_AREA_VERSION");
#endif

#endif /* TRELLIS_RUNTIME_AREA_LAYOUT_H */
