/*
 * crash: the worker's last words when the FMU kills it, and whether the
 * FMU ran into the address-space limit.
 *
 * DESIGN: the daemon learns how a worker died from its wait status; that
 * is the truth, and enough. The worker adds detail it alone knows: a
 * handler for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT, running on an
 * alternate stack (a stack overflow still gets it), sends one log event
 * in category CRASH_CATEGORY ("signal 11 code 1 address 0x0 limit N
 * near 0|1"), then restores the default action and raises the signal
 * again, so the process dies of it as if nothing had been installed.
 * Only async-signal-safe work happens in the handler: the message is
 * formatted by hand, the address-space check uses getrlimit, open/read
 * of /proc/self/status and mmap. The event goes out only when the
 * crashing thread is the worker's main thread: that thread never resumes,
 * so a push it interrupted cannot interleave with ours; a crash on a
 * thread the FMU started gets no last words. The daemon treats the event
 * as untrusted detail: it uses it only when the wait status shows the
 * same signal.
 *
 * "Near the limit": RLIMIT_AS is finite and the peak address space
 * (VmPeak) came within a margin (an eighth of the limit, 32 to 64 MiB) of
 * it, or a mapping of that size cannot be made now. An FMU whose allocation failed there was out of
 * memory.
 */
#ifndef FMUD_WORKER_CRASH_H
#define FMUD_WORKER_CRASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct worker;

#define CRASH_CATEGORY  "fmud.crash"

/* Install the handlers for w (once per process; later calls only re-arm). Main thread. */
void crash_install(struct worker *w);
/*
 * Whether the address space is at its limit (see DESIGN); *ret_limit is
 * RLIMIT_AS in bytes (0: unlimited). Async-signal-safe.
 */
bool crash_near_limit(uint64_t *ret_limit);
/* "256 MiB", "4 GiB", "1000000 bytes": a limit for messages. Not async-signal-safe. */
void crash_format_limit(uint64_t bytes, char *buf, size_t size);

/*
 * log.c: send message (len bytes, at most CALL_MSG_MAX) as a Fatal log
 * event in CRASH_CATEGORY, past the per-call limit, dropped when the ring
 * is full. Async-signal-safe.
 */
void log_last_words(struct worker *w, const char *message, size_t len);

#endif
