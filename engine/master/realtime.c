/*
 * realtime: the real-time options of a session (realtime.h), applied to
 * the master thread and to the workers' threads.
 *
 * DESIGN: every option stands on its own: one that the kernel refuses is
 * remembered with its errno and the others still apply, so status can
 * report each one; whether a refusal refuses the session is the caller's
 * choice (rt_refused(), best-effort). The dma-latency holder is one
 * descriptor shared by every session of the process, counted under a
 * mutex: the kernel's request lasts while the file is open.
 */
#include "engine/master/realtime.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#define DMA_LATENCY_PATH        "/dev/cpu_dma_latency"

static pthread_mutex_t dma_lock = PTHREAD_MUTEX_INITIALIZER;
static int dma_fd = -1;                 /* under dma_lock */
static unsigned dma_refs;               /* under dma_lock */

const char *rt_opt_name(enum rt_opt o)
{
        static const char *const names[RT_OPT_COUNT] = {
                "master-priority", "worker-priority", "master-cpus", "worker-cpus",
                "timer-slack", "dma-latency",
        };

        return (unsigned)o < RT_OPT_COUNT ? names[o] : "?";
}

bool rt_any(const struct rt_opts *o)
{
        return o->master_priority || o->worker_priority || o->master_cpus[0] ||
               o->worker_cpus[0];
}

/* One number of a cpu list: below CPU_SETSIZE; advances *s. */
static int cpu_number(const char **s, unsigned *ret)
{
        unsigned long v;
        char *end;

        if (**s < '0' || **s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoul(*s, &end, 10);
        if (errno || v >= CPU_SETSIZE)
                return -EINVAL;
        *s = end;
        *ret = (unsigned)v;
        return 0;
}

static int cpus_parse(const char *list, cpu_set_t *set)
{
        const char *s = list;
        unsigned a, b;

        CPU_ZERO(set);
        if (!*s || strlen(list) >= RT_CPUS_MAX)
                return -EINVAL;
        for (;;) {
                if (cpu_number(&s, &a) < 0)
                        return -EINVAL;
                b = a;
                if (*s == '-') {
                        s++;
                        if (cpu_number(&s, &b) < 0 || b < a)
                                return -EINVAL;
                }
                for (unsigned c = a; c <= b; c++)
                        CPU_SET(c, set);
                if (!*s)
                        return 0;
                if (*s++ != ',')
                        return -EINVAL;
        }
}

int rt_cpus_check(const char *list, char *msg, size_t size)
{
        cpu_set_t set;

        if (cpus_parse(list, &set) == 0)
                return 0;
        snprintf(msg, size, "cpu list '%.64s': expected cpus and ranges below %d, "
                 "as in 0-1,3", list, CPU_SETSIZE);
        return -EINVAL;
}

/* Remember o's outcome; the first refusal of an option is the one reported. */
static void note(struct rt_state *st, enum rt_opt o, int err, const char *fmt, long a)
{
        st->asked[o] = true;
        if (!err || st->err[o])
                return;
        st->err[o] = err;
        if (fmt)
                snprintf(st->why[o], sizeof(st->why[o]), fmt, a);
}

static int dma_acquire(void)
{
        int32_t zero = 0;
        int r = 0, fd;

        pthread_mutex_lock(&dma_lock);
        if (dma_fd < 0) {
                fd = open(DMA_LATENCY_PATH, O_WRONLY | O_CLOEXEC);
                if (fd < 0) {
                        r = -errno;
                } else if (write(fd, &zero, sizeof(zero)) != (ssize_t)sizeof(zero)) {
                        r = -errno;
                        close(fd);
                } else {
                        dma_fd = fd;
                }
        }
        if (r == 0)
                dma_refs++;
        pthread_mutex_unlock(&dma_lock);
        return r;
}

void rt_release(struct rt_state *st)
{
        if (!st->dma_held)
                return;
        st->dma_held = false;
        pthread_mutex_lock(&dma_lock);
        if (dma_refs && --dma_refs == 0 && dma_fd >= 0) {
                close(dma_fd);
                dma_fd = -1;
        }
        pthread_mutex_unlock(&dma_lock);
}

void rt_apply_self(const struct rt_opts *o, struct rt_state *st)
{
        struct sched_param sp = { .sched_priority = o->master_priority };
        cpu_set_t set;
        int r;

        if (o->master_priority) {
                r = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
                note(st, RT_MASTER_PRIORITY, r, NULL, 0);
        }
        if (o->master_cpus[0]) {
                r = cpus_parse(o->master_cpus, &set) < 0 ? EINVAL :
                    sched_setaffinity(0, sizeof(set), &set) < 0 ? errno : 0;
                note(st, RT_MASTER_CPUS, r, NULL, 0);
        }
        if (!o->master_priority && !o->worker_priority)
                return;
        r = prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL) < 0 ? errno : 0;
        note(st, RT_TIMER_SLACK, r, "master thread", 0);
        if (!st->dma_held) {
                r = dma_acquire();
                note(st, RT_DMA_LATENCY, -r, DMA_LATENCY_PATH, 0);
                st->dma_held = r == 0;
        }
}

/* A worker thread's timer slack, from outside: /proc/TID/timerslack_ns (CAP_SYS_NICE). */
static int timer_slack_of(pid_t tid)
{
        char path[64];
        int fd, r = 0;

        snprintf(path, sizeof(path), "/proc/%d/timerslack_ns", (int)tid);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return errno;
        if (write(fd, "1", 1) != 1)
                r = errno;
        close(fd);
        return r;
}

/* A thread that ended since /proc listed it (ESRCH, ENOENT) needs nothing; its process does. */
static int task_err(int err, pid_t tid, pid_t pid)
{
        return (err == ESRCH || err == ENOENT) && tid != pid ? 0 : err;
}

static void apply_task(const struct rt_opts *o, const cpu_set_t *set, pid_t pid, pid_t tid,
                       struct rt_state *st)
{
        struct sched_param sp = { .sched_priority = o->worker_priority };

        if (o->worker_priority) {
                note(st, RT_WORKER_PRIORITY,
                     task_err(sched_setscheduler(tid, SCHED_FIFO, &sp) < 0 ? errno : 0, tid, pid),
                     "task %ld", tid);
                note(st, RT_TIMER_SLACK, task_err(timer_slack_of(tid), tid, pid), "task %ld",
                     tid);
        }
        if (set)
                note(st, RT_WORKER_CPUS,
                     task_err(sched_setaffinity(tid, sizeof(*set), set) < 0 ? errno : 0, tid,
                              pid), "task %ld", tid);
}

void rt_apply_worker(const struct rt_opts *o, pid_t pid, struct rt_state *st)
{
        cpu_set_t set, *sp = NULL;
        char path[64];
        struct dirent *e;
        DIR *d;

        if (!o->worker_priority && !o->worker_cpus[0])
                return;
        if (o->worker_cpus[0]) {
                if (cpus_parse(o->worker_cpus, &set) < 0) {
                        note(st, RT_WORKER_CPUS, EINVAL, NULL, 0);
                        return;
                }
                sp = &set;
        }
        snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
        d = opendir(path);
        if (!d) {
                /* No /proc: the main thread only, which later threads inherit from. */
                apply_task(o, sp, pid, pid, st);
                return;
        }
        while ((e = readdir(d)))
                if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
                        apply_task(o, sp, pid, (pid_t)strtol(e->d_name, NULL, 10), st);
        closedir(d);
}

int rt_refused(const struct rt_state *st, char *msg, size_t size)
{
        for (int o = 0; o < RT_OPT_COUNT; o++) {
                if (!st->asked[o] || !st->err[o])
                        continue;
                snprintf(msg, size, "realtime %s: %s%s%s%s", rt_opt_name((enum rt_opt)o),
                         strerror(st->err[o]), st->why[o][0] ? " (" : "", st->why[o],
                         st->why[o][0] ? ")" : "");
                return o;
        }
        return -1;
}

void rt_describe(const struct rt_state *st, enum rt_opt o, char *buf, size_t size)
{
        if ((unsigned)o >= RT_OPT_COUNT || !st->asked[o])
                snprintf(buf, size, "%s", "");
        else if (!st->err[o])
                snprintf(buf, size, "active");
        else
                snprintf(buf, size, "refused: %s%s%s%s", strerror(st->err[o]),
                         st->why[o][0] ? " (" : "", st->why[o], st->why[o][0] ? ")" : "");
}

int rt_lock_memory(void)
{
        return mlockall(MCL_CURRENT | MCL_FUTURE) < 0 ? -errno : 0;
}
