/*
 * notify: the service manager's notification protocol (sd_notify) without
 * libsystemd: one datagram "KEY=VALUE\n..." on the AF_UNIX socket named
 * by $NOTIFY_SOCKET (a path, or '@' for an abstract name).
 *
 * DESIGN: READY=1 once serving, WATCHDOG=1 every half of $WATCHDOG_USEC
 * (when $WATCHDOG_PID is unset or ours), RELOADING=1 / READY=1 around a
 * SIGHUP reload, STOPPING=1 on the way out. Without $NOTIFY_SOCKET every
 * call is a no-op returning 0.
 *
 * Threads: the main (control) thread only.
 */
#ifndef FMUD_DAEMON_NOTIFY_H
#define FMUD_DAEMON_NOTIFY_H

#include <stdint.h>

/* Send state (e.g. "READY=1"). Returns 1 sent, 0 no socket, or -errno. */
int notify_send(const char *state);
/* The watchdog ping period in microseconds (half of $WATCHDOG_USEC), or 0 when none. */
uint64_t notify_watchdog_period_us(void);

#endif
