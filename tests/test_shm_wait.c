/* wait: deadlines, and wake-ups that are never lost, across threads and processes. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include "shm/wait.h"

/* Generous: only a lost wake-up or a hang ever reaches it. */
#define HANG_NS         (20ull * 1000000000u)

struct pingpong {
        alignas(64) _Atomic uint64_t ping;      /* written by the main side */
        alignas(64) _Atomic uint64_t pong;      /* written by the peer */
        alignas(64) struct wait_word wping;
        alignas(64) struct wait_word wpong;
        enum wait_strategy strategy;
        uint64_t rounds;
};

static struct pingpong *pingpong_new(enum wait_strategy s, uint64_t rounds)
{
        /* MAP_SHARED so that a forked peer shares it too. */
        struct pingpong *pp = mmap(NULL, sizeof(*pp), PROT_READ | PROT_WRITE,
                                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);

        cr_assert(not(eq(ptr, pp, MAP_FAILED)));
        atomic_init(&pp->ping, 0);
        atomic_init(&pp->pong, 0);
        wait_word_init(&pp->wping);
        wait_word_init(&pp->wpong);
        pp->strategy = s;
        pp->rounds = rounds;
        return pp;
}

/* The peer: wait for each ping, answer with a pong. Returns 0 or the failing wait's error. */
static int pong_side(struct pingpong *pp)
{
        struct wait_policy wp;
        struct timespec dl;

        wait_policy_init(&wp, pp->strategy);
        for (uint64_t i = 1; i <= pp->rounds; i++) {
                int r;

                wait_deadline_in(&dl, HANG_NS);
                r = wait_until_ne(&pp->ping, i - 1, &pp->wping, &wp, &dl);
                if (r < 0)
                        return r;
                if (atomic_load(&pp->ping) != i)
                        return -EPROTO;
                wait_publish(&pp->pong, i, &pp->wpong);
        }
        return 0;
}

static int ping_side(struct pingpong *pp)
{
        struct wait_policy wp;
        struct timespec dl;

        wait_policy_init(&wp, pp->strategy);
        for (uint64_t i = 1; i <= pp->rounds; i++) {
                int r;

                wait_publish(&pp->ping, i, &pp->wping);
                wait_deadline_in(&dl, HANG_NS);
                r = wait_until_ne(&pp->pong, i - 1, &pp->wpong, &wp, &dl);
                if (r < 0)
                        return r;
                if (atomic_load(&pp->pong) != i)
                        return -EPROTO;
        }
        return 0;
}

static void *pong_thread(void *arg)
{
        return (void *)(intptr_t)pong_side(arg);
}

Test(wait, past_deadline_returns_etimedout_for_every_strategy)
{
        struct timespec past = { .tv_sec = 0, .tv_nsec = 0 };
        _Atomic uint64_t idx = 7;
        struct wait_word w;
        struct wait_policy wp;

        wait_word_init(&w);
        for (int s = 0; s < WAIT_STRATEGY_COUNT; s++) {
                wait_policy_init(&wp, (enum wait_strategy)s);
                cr_assert(eq(int, wait_until_ne(&idx, 7, &w, &wp, &past), -ETIMEDOUT),
                          "%s", wait_strategy_name((enum wait_strategy)s));
                /* A moved index wins over a past deadline. */
                cr_assert(eq(int, wait_until_ne(&idx, 6, &w, &wp, &past), 0));
        }
        cr_assert(eq(u32, atomic_load(&w.sleepers), 0));
}

Test(wait, a_stamp_ends_the_wait_as_a_moved_index_does_for_every_strategy)
{
        struct timespec past = { .tv_sec = 0, .tv_nsec = 0 }, dl;
        _Atomic uint64_t idx = 7, stamp = 1;
        struct wait_word w;
        struct wait_policy wp;

        wait_word_init(&w);
        for (int s = 0; s < WAIT_STRATEGY_COUNT; s++) {
                wait_policy_init(&wp, (enum wait_strategy)s);
                /* Neither: the deadline, through every phase of a short wait. */
                wait_deadline_in(&dl, 2000000);
                cr_assert(eq(int, wait_until_stamp(&idx, 7, &stamp, 2, &w, &wp, &dl), -ETIMEDOUT),
                          "%s", wait_strategy_name((enum wait_strategy)s));
                /* Either one wins over a past deadline. */
                cr_assert(eq(int, wait_until_stamp(&idx, 6, &stamp, 2, &w, &wp, &past), 0));
                cr_assert(eq(int, wait_until_stamp(&idx, 7, &stamp, 1, &w, &wp, &past), 0));
        }
        cr_assert(eq(u32, atomic_load(&w.sleepers), 0));
}

Test(wait, short_deadline_returns_etimedout_no_earlier_than_the_deadline)
{
        _Atomic uint64_t idx = 0;
        struct wait_word w;
        struct wait_policy wp;
        struct timespec dl, now;

        wait_word_init(&w);
        for (int s = 0; s < WAIT_STRATEGY_COUNT; s++) {
                wait_policy_init(&wp, (enum wait_strategy)s);
                wait_deadline_in(&dl, 2000000);
                cr_assert(eq(int, wait_until_ne(&idx, 0, &w, &wp, &dl), -ETIMEDOUT));
                clock_gettime(CLOCK_MONOTONIC, &now);
                cr_assert(ge(i64, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec,
                             (int64_t)dl.tv_sec * 1000000000 + dl.tv_nsec));
        }
}

/* The waiter is known to be asleep in the kernel before the post: the futex path itself. */
static void *sleeper(void *arg)
{
        struct pingpong *pp = arg;
        struct wait_policy wp;
        struct timespec dl;

        wait_policy_init(&wp, WAIT_FUTEX);
        for (uint64_t i = 1; i <= pp->rounds; i++) {
                int r;

                wait_deadline_in(&dl, HANG_NS);
                r = wait_until_ne(&pp->ping, i - 1, &pp->wping, &wp, &dl);
                if (r < 0)
                        return (void *)(intptr_t)r;
                /* Tell the poster this round is done. */
                atomic_store(&pp->pong, i);
        }
        return NULL;
}

Test(wait, futex_sleeper_is_woken_by_every_post, .timeout = 120)
{
        struct pingpong *pp = pingpong_new(WAIT_FUTEX, 300);
        pthread_t t;
        void *rc;

        cr_assert(eq(int, pthread_create(&t, NULL, sleeper, pp), 0));
        for (uint64_t i = 1; i <= pp->rounds; i++) {
                /* Post only once it has announced its sleep; .timeout catches a hang. */
                while (atomic_load(&pp->wping.sleepers) == 0)
                        sched_yield();
                wait_publish(&pp->ping, i, &pp->wping);
                while (atomic_load(&pp->pong) != i)
                        sched_yield();
        }
        cr_assert(eq(int, pthread_join(t, &rc), 0));
        cr_assert(eq(ptr, rc, NULL));
        cr_assert(eq(u32, atomic_load(&pp->wping.sleepers), 0));
        cr_assert(atomic_load(&pp->wping.seq) > 0);
        munmap(pp, sizeof(*pp));
}

Test(wait, threads_ping_pong_with_every_strategy_and_lose_no_wakeup, .timeout = 240)
{
        static const uint64_t rounds[WAIT_STRATEGY_COUNT] = {
                [WAIT_ADAPTIVE] = 20000,
                [WAIT_SPIN] = 20000,
                [WAIT_SPIN_FUTEX] = 20000,
                [WAIT_FUTEX] = 5000,
        };

        for (int s = 0; s < WAIT_STRATEGY_COUNT; s++) {
                struct pingpong *pp = pingpong_new((enum wait_strategy)s, rounds[s]);
                pthread_t t;
                void *rc;

                cr_assert(eq(int, pthread_create(&t, NULL, pong_thread, pp), 0));
                cr_assert(eq(int, ping_side(pp), 0), "%s", wait_strategy_name((enum wait_strategy)s));
                cr_assert(eq(int, pthread_join(t, &rc), 0));
                cr_assert(eq(ptr, rc, NULL));
                munmap(pp, sizeof(*pp));
        }
}

Test(wait, processes_ping_pong_through_a_shared_futex, .timeout = 120)
{
        for (int s = 0; s < WAIT_STRATEGY_COUNT; s++) {
                struct pingpong *pp = pingpong_new((enum wait_strategy)s, s == WAIT_FUTEX ? 3000 : 10000);
                int status;
                pid_t pid;

                pid = fork();
                cr_assert(ge(int, pid, 0));
                if (pid == 0) {
                        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                        _exit(pong_side(pp) == 0 ? 0 : 1);
                }
                cr_assert(eq(int, ping_side(pp), 0), "%s", wait_strategy_name((enum wait_strategy)s));
                cr_assert(eq(int, waitpid(pid, &status, 0), pid));
                cr_assert(eq(int, WIFEXITED(status) && WEXITSTATUS(status) == 0, 1));
                munmap(pp, sizeof(*pp));
        }
}

Test(wait, adaptive_with_more_runnable_peers_than_cpus_still_delivers, .timeout = 120)
{
        struct pingpong *pp = pingpong_new(WAIT_ADAPTIVE, 10000);
        struct wait_policy wp;
        struct timespec dl;
        pthread_t t;
        void *rc;

        cr_assert(eq(int, pthread_create(&t, NULL, pong_thread, pp), 0));
        wait_policy_init(&wp, WAIT_ADAPTIVE);
        wp.runnable = wait_ncpu() + 1;
        for (uint64_t i = 1; i <= pp->rounds; i++) {
                wait_publish(&pp->ping, i, &pp->wping);
                wait_deadline_in(&dl, HANG_NS);
                cr_assert(eq(int, wait_until_ne(&pp->pong, i - 1, &pp->wpong, &wp, &dl), 0));
        }
        cr_assert(eq(int, pthread_join(t, &rc), 0));
        cr_assert(eq(ptr, rc, NULL));
        munmap(pp, sizeof(*pp));
}

Test(wait, strategy_names_round_trip)
{
        enum wait_strategy s;

        for (int i = 0; i < WAIT_STRATEGY_COUNT; i++) {
                cr_assert(eq(int, wait_strategy_parse(wait_strategy_name((enum wait_strategy)i), &s), 0));
                cr_assert(eq(int, (int)s, i));
        }
        cr_assert(eq(int, wait_strategy_parse("busy", &s), -EINVAL));
        cr_assert(eq(ptr, (void *)wait_strategy_name(WAIT_STRATEGY_COUNT), NULL));
        cr_assert(ge(u32, wait_ncpu(), 1));
}

Test(wait, the_waker_is_elsewhere_only_when_both_cpus_are_known_and_differ)
{
        struct wait_word w;
        _Atomic uint64_t idx = 0;
        cpu_set_t set;
        int cpu;

        /* Pinned, so that this thread's cpu cannot change under the test. */
        cpu = sched_getcpu();
        cr_assert(cpu >= 0);
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        cr_assert(eq(int, sched_setaffinity(0, sizeof(set), &set), 0));
        wait_word_init(&w);
        cr_assert(not(wait_waker_elsewhere(&w, wait_cpu())), "unknown waker");
        /* Publishing records the publisher's cpu: this one. */
        wait_publish(&idx, 1, &w);
        cr_assert(not(wait_waker_elsewhere(&w, wait_cpu())), "the waker is this thread");
        atomic_store(&w.waker_cpu, (uint32_t)cpu + 2);
        cr_assert(wait_waker_elsewhere(&w, wait_cpu()), "another cpu");
}
