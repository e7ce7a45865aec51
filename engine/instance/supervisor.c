/*
 * supervisor: one thread, one epoll, a pidfd per worker (see supervisor.h).
 *
 * Data the supervisor thread touches: the list of watches (lock), each
 * watch's 'status' and 'exited' (written once by the thread, 'exited'
 * last with release; read with acquire by anyone), and 'stopping' (lock).
 * A watch is found from an epoll event by its id, under the lock, never
 * by a pointer the event carries: the owner may have unwatched and freed
 * it meanwhile.
 *
 * Life: the thread, its epoll and its wake-up eventfd exist while some
 * worker is watched: the first watch starts them, the last unwatch stops
 * them (eventfd, join, close), so a process with no worker holds no
 * descriptor or thread for them. 'life' serializes start and stop; the
 * thread never takes it, so joining under it cannot deadlock.
 */
#include "engine/instance/supervisor.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#define EVENTS_MAX      16

struct sup_watch {
        struct sup_watch *next;         /* lock */
        uint64_t id;                    /* lock */
        pid_t pid;
        int pidfd;
        _Atomic int status;             /* waitpid() form, valid once 'exited' */
        _Atomic bool exited;
};

#define WAKE_ID         0               /* the eventfd's epoll id; watches count from 1 */

static pthread_mutex_t life = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct sup_watch *watches;       /* lock */
static uint64_t next_id = 1;            /* lock */
static int epfd = -1, wakefd = -1;      /* life; read by the thread while it runs */
static pthread_t thread;                /* life */
static bool running;                    /* life */
static bool stopping;                   /* lock */

/* The waitpid() status of a siginfo from waitid(). */
static int wstatus_of(const siginfo_t *si)
{
        if (si->si_code == CLD_EXITED)
                return (si->si_status & 0xff) << 8;
        if (si->si_code == CLD_KILLED)
                return si->si_status & 0x7f;
        if (si->si_code == CLD_DUMPED)
                return (si->si_status & 0x7f) | 0x80;
        return 0;
}

/* Under lock: record w's exit if it has one, and stop polling it. */
static void check(struct sup_watch *w)
{
        siginfo_t si;

        memset(&si, 0, sizeof(si));
        if (waitid((idtype_t)P_PIDFD, (id_t)w->pidfd, &si, WEXITED | WNOWAIT | WNOHANG) < 0) {
                /* Reaped already by its owner: it is gone; the owner knows how. */
                if (errno != ECHILD)
                        return;
        } else if (si.si_pid == 0) {
                return;         /* not yet: a spurious wake-up */
        } else {
                atomic_store_explicit(&w->status, wstatus_of(&si), memory_order_relaxed);
        }
        /* Pairs with the acquire in supervisor_exited(). */
        atomic_store_explicit(&w->exited, true, memory_order_release);
        (void) epoll_ctl(epfd, EPOLL_CTL_DEL, w->pidfd, NULL);
}

static void *run(void *arg)
{
        struct epoll_event ev[EVENTS_MAX];
        bool stop = false;

        (void) arg;
        while (!stop) {
                int n = epoll_wait(epfd, ev, EVENTS_MAX, -1);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return NULL;
                }
                pthread_mutex_lock(&lock);
                for (int i = 0; i < n; i++)
                        for (struct sup_watch *w = watches; w; w = w->next)
                                if (w->id == ev[i].data.u64) {
                                        check(w);
                                        break;
                                }
                stop = stopping;
                pthread_mutex_unlock(&lock);
        }
        return NULL;
}

static void close_fds(void)
{
        if (epfd >= 0)
                (void) close(epfd);
        if (wakefd >= 0)
                (void) close(wakefd);
        epfd = wakefd = -1;
}

/* Under life: the epoll, the eventfd and the thread, once. */
static int start(void)
{
        struct epoll_event ev = { .events = EPOLLIN, .data.u64 = WAKE_ID };
        sigset_t all, old;
        int r;

        if (running)
                return 0;
        epfd = epoll_create1(EPOLL_CLOEXEC);
        wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (epfd < 0 || wakefd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, wakefd, &ev) < 0) {
                r = -errno;
                close_fds();
                return r;
        }
        stopping = false;
        /* Signals are the daemon's main thread's business: the thread starts with all blocked. */
        sigfillset(&all);
        (void) pthread_sigmask(SIG_BLOCK, &all, &old);
        r = pthread_create(&thread, NULL, run, NULL);
        (void) pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r) {
                close_fds();
                return -r;
        }
        running = true;
        return 0;
}

/* Under life, with no watch left: wake the thread, join it, close. */
static void stop(void)
{
        uint64_t one = 1;

        pthread_mutex_lock(&lock);
        stopping = true;
        pthread_mutex_unlock(&lock);
        (void) !write(wakefd, &one, sizeof(one));
        (void) pthread_join(thread, NULL);
        close_fds();
        running = false;
}

int supervisor_watch(pid_t pid, struct sup_watch **ret)
{
        struct epoll_event ev = { .events = EPOLLIN };
        struct sup_watch *w;
        int r;

        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->pid = pid;
        w->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (w->pidfd < 0) {
                r = -errno;
                free(w);
                return r;
        }
        pthread_mutex_lock(&life);
        r = start();
        if (r == 0) {
                pthread_mutex_lock(&lock);
                w->id = next_id++;
                ev.data.u64 = w->id;
                if (epoll_ctl(epfd, EPOLL_CTL_ADD, w->pidfd, &ev) < 0) {
                        r = -errno;
                } else {
                        w->next = watches;
                        watches = w;
                }
                pthread_mutex_unlock(&lock);
                if (r < 0 && !watches)
                        stop();
        }
        pthread_mutex_unlock(&life);
        if (r < 0) {
                (void) close(w->pidfd);
                free(w);
                return r;
        }
        *ret = w;
        return 0;
}

void supervisor_unwatch(struct sup_watch *w)
{
        bool last;

        if (!w)
                return;
        pthread_mutex_lock(&life);
        pthread_mutex_lock(&lock);
        for (struct sup_watch **p = &watches; *p; p = &(*p)->next)
                if (*p == w) {
                        *p = w->next;
                        break;
                }
        /* Fails harmlessly when check() removed it already. */
        (void) epoll_ctl(epfd, EPOLL_CTL_DEL, w->pidfd, NULL);
        last = !watches;
        pthread_mutex_unlock(&lock);
        if (last && running)
                stop();
        pthread_mutex_unlock(&life);
        (void) close(w->pidfd);
        free(w);
}

bool supervisor_exited(const struct sup_watch *w, int *ret_wstatus)
{
        if (!w || !atomic_load_explicit(&w->exited, memory_order_acquire))
                return false;
        if (ret_wstatus)
                *ret_wstatus = atomic_load_explicit(&w->status, memory_order_relaxed);
        return true;
}
