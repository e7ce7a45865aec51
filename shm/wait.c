/*
 * wait: spin, then yield, then futex on a word in shared memory.
 *
 * DESIGN, the lost wake-up argument. The waiter W and the waker P touch two
 * shared locations, the index I and the sleepers count S:
 *
 *      W: s = seq; S += 1 (seq_cst);  reload I (seq_cst);  FUTEX_WAIT(seq, s)
 *      P: I = v (seq_cst);            load S (seq_cst);    if S: seq += 1, FUTEX_WAKE
 *
 * All four middle accesses are seq_cst, so they fall into one total order.
 * If W's reload of I comes before P's store of I in that order, then W's
 * increment of S comes before P's load of S, and P sees S != 0 and wakes.
 * Otherwise W's reload sees the new I and W does not sleep. So either W
 * does not sleep or P wakes it. P's bump of seq closes the last gap: when it
 * lands between W's read of seq and W entering the kernel, FUTEX_WAIT sees
 * seq != s and returns EAGAIN at once instead of sleeping. Plain release and
 * acquire would not do: the pattern needs store-load ordering on both sides
 * (on x86 the seq_cst store is an xchg, the increment a lock xadd).
 *
 * A writer that stores an early word and holds the index back
 * (ring_commit_held()) reads S without the fence, so the argument above
 * does not hold for it: W may sleep with the early word written. W
 * re-checks the early word after its increment of S, which narrows that to
 * the writer's store-buffer delay, and then sleeps until the next store of
 * I or its deadline; its caller bounds the deadline.
 *
 * The futex is shared (no FUTEX_PRIVATE_FLAG): the word lives in a MAP_SHARED
 * memfd mapping and the kernel keys it by inode and offset.
 *
 * A hostile peer can write anything into S or seq. The worst it gets is a
 * missed or a spurious wake-up: the waiter's deadline bounds the first, the
 * loop below absorbs the second, and no value is used as a size or index.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shm/wait.h"

/*
 * Polls before the first clock read. A pause costs from ~1.5 ns to ~50 ns
 * (the Xeon of docs/BENCHMARKS.md), so these take 0.1 to 3 µs: short
 * against any spin budget, long enough for most hand-offs.
 */
#define WAIT_FREE_POLLS 64u

static const char *const strategy_names[WAIT_STRATEGY_COUNT] = {
        [WAIT_ADAPTIVE] = "adaptive",
        [WAIT_SPIN] = "spin",
        [WAIT_SPIN_FUTEX] = "spin-futex",
        [WAIT_FUTEX] = "futex",
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ __volatile__("yield" ::: "memory");
#else
        atomic_signal_fence(memory_order_seq_cst);
#endif
}

static uint64_t now_ns(void)
{
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t ts_ns(const struct timespec *ts)
{
        if (!ts)
                return UINT64_MAX;
        if (ts->tv_sec < 0)
                return 0;
        return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

static int futex_wait(_Atomic uint32_t *word, uint32_t val, const struct timespec *deadline)
{
        /* WAIT_BITSET takes an absolute CLOCK_MONOTONIC timeout; plain WAIT a relative one. */
        if (syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_BITSET, val, deadline,
                    NULL, FUTEX_BITSET_MATCH_ANY) < 0)
                return -errno;
        return 0;
}

static void futex_wake(_Atomic uint32_t *word)
{
        /* Fails only for a bad address, which a mapped word is not. */
        (void) syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void wait_policy_init(struct wait_policy *p, enum wait_strategy s)
{
        *p = (struct wait_policy){
                .strategy = s,
                .spin_ns = WAIT_SPIN_NS_DEFAULT,
                .yield_ns = WAIT_YIELD_NS_DEFAULT,
                .runnable = 0,
        };
}

const char *wait_strategy_name(enum wait_strategy s)
{
        if ((unsigned)s >= WAIT_STRATEGY_COUNT)
                return NULL;
        return strategy_names[s];
}

int wait_strategy_parse(const char *name, enum wait_strategy *ret_s)
{
        for (unsigned i = 0; i < WAIT_STRATEGY_COUNT; i++)
                if (strcmp(name, strategy_names[i]) == 0) {
                        *ret_s = (enum wait_strategy)i;
                        return 0;
                }
        return -EINVAL;
}

void wait_word_init(struct wait_word *w)
{
        atomic_init(&w->seq, 0);
        atomic_init(&w->sleepers, 0);
        atomic_init(&w->waker_cpu, 0);
        w->reserved = 0;
}

uint32_t wait_cpu(void)
{
        int cpu = sched_getcpu();

        return cpu < 0 ? 0 : (uint32_t)cpu + 1;
}

bool wait_waker_elsewhere(const struct wait_word *w, uint32_t cpu)
{
        uint32_t waker = atomic_load_explicit(&w->waker_cpu, memory_order_relaxed);

        return waker && waker != cpu;
}

unsigned wait_ncpu(void)
{
        /* sysconf() reads sysfs: far too slow for every wait, so cache it. Racing fillers agree. */
        static _Atomic unsigned cached;
        unsigned n = atomic_load_explicit(&cached, memory_order_relaxed);
        long v;

        if (n)
                return n;
        v = sysconf(_SC_NPROCESSORS_ONLN);
        n = v < 1 ? 1 : v > 65536 ? 65536 : (unsigned)v;
        atomic_store_explicit(&cached, n, memory_order_relaxed);
        return n;
}

void wait_deadline_in(struct timespec *ret, uint64_t ns)
{
        uint64_t t = now_ns() + ns;

        ret->tv_sec = (time_t)(t / 1000000000u);
        ret->tv_nsec = (long)(t % 1000000000u);
}

/*
 * What a wait watches: the index, and optionally a word that announces the
 * same news earlier (a ring's stamp), polled alone between the checks of
 * the index so that the index's cache line stays with its writer.
 */
struct watch {
        const _Atomic uint64_t *idx;
        uint64_t seen;
        const _Atomic uint64_t *early;  /* NULL: none */
        uint64_t want;
};

static bool index_moved(const struct watch *x)
{
        /* Pairs with the seq_cst (release) store in wait_publish(). */
        return atomic_load_explicit(x->idx, memory_order_acquire) != x->seen;
}

/* A cheap poll: the early word where there is one, else the index. */
static bool poll_once(const struct watch *x)
{
        if (x->early)
                /* Pairs with the writer's release store of the word (ring_commit()). */
                return atomic_load_explicit(x->early, memory_order_acquire) == x->want;
        return index_moved(x);
}

static bool ready(const struct watch *x)
{
        return poll_once(x) || (x->early && index_moved(x));
}

/*
 * Poll until there is news (0), the phase budget ends (-EAGAIN) or the
 * deadline passes (-ETIMEDOUT). With 'yield' every poll gives the core away.
 */
static int poll_watch(const struct watch *x, uint64_t until, uint64_t deadline, bool yield)
{
        for (unsigned i = 1;; i++) {
                if (yield ? ready(x) : poll_once(x))
                        return 0;
                if (yield)
                        (void) sched_yield();
                else
                        cpu_relax();
                /* Reading the clock costs 1.5 to 20 pauses; a yield costs far more. */
                if (yield || i % 64 == 0) {
                        uint64_t t = now_ns();

                        if (ready(x))
                                return 0;
                        if (t >= deadline)
                                return -ETIMEDOUT;
                        if (t >= until)
                                return -EAGAIN;
                }
        }
}

static int sleep_on(const struct watch *x, struct wait_word *w, const struct timespec *deadline)
{
        for (;;) {
                uint32_t s;
                int r;

                /* Read seq before the last check of idx: see the file header. */
                s = atomic_load_explicit(&w->seq, memory_order_seq_cst);
                atomic_fetch_add_explicit(&w->sleepers, 1, memory_order_seq_cst);
                /*
                 * Pairs with the seq_cst store of idx in wait_publish(). The
                 * early word too: a producer that holds its index
                 * (ring_commit_held()) publishes it when it sees a sleeper,
                 * and mostly sees this one if the word is not yet written.
                 */
                if (atomic_load_explicit(x->idx, memory_order_seq_cst) != x->seen ||
                    (x->early && poll_once(x))) {
                        atomic_fetch_sub_explicit(&w->sleepers, 1, memory_order_seq_cst);
                        return 0;
                }
                r = futex_wait(&w->seq, s, deadline);
                atomic_fetch_sub_explicit(&w->sleepers, 1, memory_order_seq_cst);
                if (ready(x))
                        return 0;
                /* EAGAIN: seq moved before we slept; EINTR: a signal. Both: look again. */
                if (r < 0 && r != -EAGAIN && r != -EINTR)
                        return r;
        }
}

static int wait_for(const struct watch *x, struct wait_word *w, const struct wait_policy *p,
                    const struct timespec *deadline)
{
        uint64_t spin_ns = 0, yield_ns = 0, start, end_ns;
        int r;

        if (ready(x))
                return 0;

        switch (p->strategy) {
        case WAIT_SPIN:
                spin_ns = UINT64_MAX;
                break;
        case WAIT_SPIN_FUTEX:
                spin_ns = p->spin_ns;
                break;
        case WAIT_ADAPTIVE:
                /*
                 * A spinner only delays a peer that needs its cpu: with more
                 * runnable waiters than cores, or when the peer last ran
                 * right here (the scheduler tends to keep a waker and its
                 * wakee together, and other load can push them together).
                 */
                if (p->runnable <= wait_ncpu() &&
                    atomic_load_explicit(&w->waker_cpu, memory_order_relaxed) != wait_cpu())
                        spin_ns = p->spin_ns;
                yield_ns = p->yield_ns;
                break;
        case WAIT_FUTEX:
        default:
                break;
        }

        end_ns = ts_ns(deadline);
        /*
         * The first polls go without the clock: a clock read costs 25 to
         * 80 ns on the machines measured, as much as the rest of a wait
         * that a peer on another cpu answers at once. The budgets start
         * after them.
         */
        if (spin_ns) {
                for (unsigned i = 0; i < WAIT_FREE_POLLS; i++) {
                        cpu_relax();
                        if (poll_once(x))
                                return 0;
                }
        } else if (yield_ns) {
                (void) sched_yield();
                if (ready(x))
                        return 0;
        }
        start = spin_ns || yield_ns ? now_ns() : 0;
        if (spin_ns) {
                uint64_t until = spin_ns > UINT64_MAX - start ? UINT64_MAX : start + spin_ns;

                r = poll_watch(x, until, end_ns, false);
                if (r != -EAGAIN)
                        return r;
                start = until;
        }
        if (yield_ns) {
                r = poll_watch(x, start + yield_ns, end_ns, true);
                if (r != -EAGAIN)
                        return r;
        }
        /* A sleeper looks at the early word too: a writer may hold the index (ring_commit_held()). */
        return sleep_on(x, w, deadline);
}

int wait_until_ne(const _Atomic uint64_t *idx, uint64_t seen, struct wait_word *w,
                  const struct wait_policy *p, const struct timespec *deadline)
{
        struct watch x = { .idx = idx, .seen = seen };

        return wait_for(&x, w, p, deadline);
}

int wait_until_stamp(const _Atomic uint64_t *idx, uint64_t seen, const _Atomic uint64_t *early,
                     uint64_t want, struct wait_word *w, const struct wait_policy *p,
                     const struct timespec *deadline)
{
        struct watch x = { .idx = idx, .seen = seen, .early = early, .want = want };

        return wait_for(&x, w, p, deadline);
}

void wait_publish(_Atomic uint64_t *idx, uint64_t v, struct wait_word *w)
{
        wait_publish_from(idx, v, w, wait_cpu());
}

void wait_publish_from(_Atomic uint64_t *idx, uint64_t v, struct wait_word *w, uint32_t cpu)
{
        /* Relaxed hint, read by WAIT_ADAPTIVE; written only when it changes to keep the line shared. */
        if (atomic_load_explicit(&w->waker_cpu, memory_order_relaxed) != cpu)
                atomic_store_explicit(&w->waker_cpu, cpu, memory_order_relaxed);
        /*
         * seq_cst store: a release for the data before it (pairs with the
         * reader's acquire load of idx) and the store half of the store-load
         * pair with sleep_on() (see the file header).
         */
        atomic_store_explicit(idx, v, memory_order_seq_cst);
        /* Pairs with the seq_cst increment in sleep_on(). */
        if (atomic_load_explicit(&w->sleepers, memory_order_seq_cst) == 0)
                return;
        /* Pairs with the seq read and the FUTEX_WAIT value check in sleep_on(). */
        atomic_fetch_add_explicit(&w->seq, 1, memory_order_seq_cst);
        futex_wake(&w->seq);
}
