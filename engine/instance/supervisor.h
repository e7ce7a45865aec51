/*
 * supervisor: notices a worker's exit when nobody is talking to it.
 *
 * DESIGN: one supervisor thread per daemon process, started on the first
 * supervisor_watch(), waits in epoll on a pidfd per watched worker
 * (pidfd_open: readable once the process has exited). When one becomes
 * readable it reads the exit status with waitid(P_PIDFD, WEXITED |
 * WNOWAIT): the worker stays a zombie, so the thread that owns the
 * instance still reaps it, exactly once, with waitpid() (spawn.c), and
 * the pid cannot be reused while anyone may still signal it. The status
 * is published with a release store; any thread reads it.
 *
 * So an idle instance (a paused session, a worker killed from outside)
 * shows as dead at once: inst_health() says so from any thread, and the
 * instance's next call fails with -ESRCH without sending anything.
 *
 * Threads: supervisor_watch() and supervisor_unwatch() from the thread
 * that owns the watched worker; supervisor_exited() from any thread. The
 * supervisor thread touches only the watch list (under a mutex) and each
 * watch's published fields. It runs while some worker is watched (the
 * last unwatch joins it), so an idle process holds no thread or
 * descriptor for it. A process that forks keeps it in the parent only
 * (workers exec at once).
 */
#ifndef FMUD_ENGINE_SUPERVISOR_H
#define FMUD_ENGINE_SUPERVISOR_H

#include <stdbool.h>
#include <sys/types.h>

struct sup_watch;

/*
 * Watch child process pid (not yet reaped). 0 and *ret, or -errno
 * (-ENOSYS without pidfd_open, -ENOMEM, the errno of epoll or
 * pthread_create); without a watch, deaths are found by the calls only.
 */
int supervisor_watch(pid_t pid, struct sup_watch **ret);
/* Stop watching and free w (before or after the process is reaped). NULL is a no-op. */
void supervisor_unwatch(struct sup_watch *w);
/*
 * Any thread: whether the supervisor has seen the process exit; then
 * *ret_wstatus (when not NULL) is its status in waitpid() form.
 */
bool supervisor_exited(const struct sup_watch *w, int *ret_wstatus);

#endif
