/* The job-side runtime of Trellis's global state detection (seed 002): a process of a job tells
 * the node agent when it blocks waiting for a message from another process of its job, or for
 * input from outside the job. At each gang switch the agent freezes the job and reads these
 * announcements: a job whose processes all wait for input is idle (its slot can go to another
 * job); one whose processes on every node all wait for messages is deadlocked.
 *
 * Link with the static library trellis_runtime (plain C11; usable from C and C++):
 *
 *   #include <trellis/runtime.h>
 *
 *   trellis_runtime_attach();               // once, at start; failing is harmless
 *   ...
 *   trellis_wait_begin(TRELLIS_WAIT_MESSAGE);
 *   n = recv(peer, buffer, size, 0);        // blocks until another process of the job sends
 *   trellis_wait_end(TRELLIS_WAIT_MESSAGE);
 *
 * The ordering rule: call begin just BEFORE the call that blocks and end just AFTER it returns,
 * never the other way round, so that a process frozen while it blocks is always seen waiting.
 * Announce a wait only when the whole process waits: a process with another thread computing
 * meanwhile is running, not waiting (the agent judges a process by its announcements alone
 * while it has an open one). Nested and repeated calls are counted: the process is waiting
 * while it has more begins than ends of a kind; an end without a begin is ignored.
 *
 * A process that does not attach (or whose attach failed) is judged by the agent from /proc
 * alone: idle when it used no CPU time since the agent last looked. Announcing waits lets the
 * agent tell waiting for a message (possible deadlock) from waiting for input (idle), which
 * /proc cannot, and see a wait at once instead of one time slice later.
 *
 * The shared segment (layout and versioning in src/runtime/area_layout.h): a header (magic
 * number 0x41524c54, version, slot count, slot size) and a table of 256 slots, one per attached
 * process: its pid and start time, and how many waits of each kind it has open, as lock-free
 * 32-bit atomics written with release ordering. At most 256 processes per task can attach at
 * once; the slots of processes that died are reused.
 *
 * Thread-safety: every call may be made from any thread (waits take no lock and make no
 * allocation), but detach only while no other thread is between a begin and its end. After
 * fork() the child is not attached (its waits are no-ops) until it calls trellis_runtime_attach
 * itself; a process that execs must attach again (it gets its slot back).
 */
#ifndef TRELLIS_RUNTIME_H
#define TRELLIS_RUNTIME_H

#ifdef __cplusplus
extern "C" {
#endif

/* The environment variable naming the task's segment (e.g. "/trellis-12.1.n3"); the agent sets
 * it for every process it launches. */
#define TRELLIS_RUNTIME_AREA_ENV "TRELLIS_RUNTIME_AREA"

/* Kinds of wait. */
#define TRELLIS_WAIT_MESSAGE 1 /* for a message from another process of the same job */
#define TRELLIS_WAIT_INPUT 2   /* for input from outside the job (a terminal, a socket, a file) */

/* Opens the segment named by TRELLIS_RUNTIME_AREA (creating it, mode 0600, if no process of the
 * task has yet) and registers this process in it. Returns 0, or -1 with errno set:
 *   ENOENT   the variable is unset or empty
 *   EPROTO   the segment exists but is not a runtime area of this version (size, magic)
 *   EPERM    the segment belongs to another user or others may write it (not trusted)
 *   ENOSPC   every slot is held by a live process
 *   others   from shm_open, ftruncate, fstat or mmap
 * Idempotent: a process already attached gets 0 at once. */
int trellis_runtime_attach(void);

/* Announces that this process is about to block waiting (kind: TRELLIS_WAIT_MESSAGE or
 * TRELLIS_WAIT_INPUT), and that it has woken up. No-ops when not attached or for other kinds. */
void trellis_wait_begin(int kind);
void trellis_wait_end(int kind);

/* Unregisters this process (its slot becomes free; its open waits are dropped). Optional: the
 * agent ignores the slots of processes that have died. The segment stays mapped, and attaching
 * again is allowed. */
void trellis_runtime_detach(void);

#ifdef __cplusplus
}
#endif

#endif /* TRELLIS_RUNTIME_H */
