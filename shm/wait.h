/*
 * wait: how one side of a channel waits for its peer to move a shared index.
 *
 * A wait checks a 64-bit index in shared memory until it differs from the
 * value the caller last saw. It spins on the index for a short budget (with
 * a cpu pause), then calls sched_yield() for a further budget, then sleeps
 * in FUTEX_WAIT on a 32-bit word in shared memory. The peer publishes a new
 * index with wait_publish(), which enters the kernel (FUTEX_WAKE) only when
 * the waiter has announced that it is going to sleep. A ring's consumer
 * also watches the stamp of the record it expects (wait_until_stamp()): the
 * producer stores it just before the index, in the record's own cache line,
 * so a spinning consumer learns of the record one line transfer sooner.
 *
 * DESIGN: on these machines a futex wake-up costs 3 to 100 µs (the idle
 * state of the woken core decides), spinning on the index about 0.3 µs. So a
 * waiter spins first, but only while the peer can run elsewhere: with more
 * runnable waiters than cores, or with the peer on the waiter's own cpu
 * (where the scheduler likes to keep a waker and its wakee), a spinner only
 * holds the cpu the peer needs, and sched_yield() (which hands the cpu to
 * whoever is runnable there and returns at once otherwise) is the fast path.
 * The strategy is a parameter so that bench/ring_rtt can measure each one;
 * fmud uses WAIT_ADAPTIVE. Measured on 2 cpus with 4 workers, per round:
 * adaptive 7.5 to 10.6 µs, the futex alone 14 to 19, spin-then-futex 118
 * (the spin budget lost at nearly every wait), pure spinning tens of ms
 * (scheduler time slices). The price: up to yield_ns of sched_yield() per
 * long wait, busy time on an otherwise idle cpu; sessions of long steps
 * and many idle workers may lower it. Figures: docs/BENCHMARKS.md.
 *
 * A dead or hung peer never publishes: every wait takes an absolute
 * CLOCK_MONOTONIC deadline and the caller decides what a timeout means.
 */
#ifndef FMUD_SHM_WAIT_H
#define FMUD_SHM_WAIT_H

#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/*
 * Shared: lives in the channel mapping, next to the index it guards; both
 * processes map it MAP_SHARED. One waiter (the side that reads the index),
 * one waker (the side that writes it).
 * This layout is ABI: it is part of struct ring_hdr.
 */
struct wait_word {
        /*
         * Futex word. Bumped by the waker before FUTEX_WAKE; the waiter reads
         * it before its last check of the index and passes that value to
         * FUTEX_WAIT, which pairs with the bump (the kernel refuses to sleep
         * when the word has moved).
         */
        _Atomic uint32_t seq;
        /*
         * Waiters between "I am going to sleep" and "I am awake again".
         * seq_cst: the waiter's increment and its reload of the index pair
         * with the waker's seq_cst store of the index and its load of this
         * word (see wait_publish()).
         */
        _Atomic uint32_t sleepers;
        /*
         * owner: waker. The cpu it last published from, +1 (0: unknown).
         * Relaxed both ways: a hint for WAIT_ADAPTIVE, which does not spin
         * while the peer last ran on its own cpu (spinning there only keeps
         * the peer off the cpu). Any value is safe.
         */
        _Atomic uint32_t waker_cpu;
        uint32_t reserved;
};
static_assert(sizeof(struct wait_word) == 16, "wait_word is shared ABI");
static_assert(sizeof(_Atomic uint32_t) == sizeof(uint32_t), "futex word must be a plain 32-bit word");
static_assert(ATOMIC_INT_LOCK_FREE == 2, "shm atomics must be lock-free");
static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "shm atomics must be lock-free");

enum wait_strategy {
        WAIT_ADAPTIVE,          /* spin (only with a core to spare), yield, futex: the default */
        WAIT_SPIN,              /* spin on the index until the deadline */
        WAIT_SPIN_FUTEX,        /* spin for the budget, then futex */
        WAIT_FUTEX,             /* futex at once */
        WAIT_STRATEGY_COUNT,
};

/* Local to one process: how to wait. Plain data; copy it freely. */
struct wait_policy {
        enum wait_strategy strategy;
        uint32_t spin_ns;       /* pure spin budget per wait (WAIT_SPIN_FUTEX, WAIT_ADAPTIVE) */
        uint32_t yield_ns;      /* sched_yield budget per wait (WAIT_ADAPTIVE) */
        /*
         * Runnable waiters the caller knows of, itself included (the daemon
         * knows how many workers it has posted to; a worker reads the hint
         * the daemon leaves in its channel). 0 means unknown and counts as 1.
         * WAIT_ADAPTIVE skips the pure spin when this exceeds the online cpus,
         * and also when the peer last ran on the waiter's own cpu.
         */
        uint32_t runnable;
};

#define WAIT_SPIN_NS_DEFAULT    20000u          /* 20 µs: ~60 one-way hand-offs */
#define WAIT_YIELD_NS_DEFAULT   200000u         /* 200 µs: about two idle wake-ups */

/* Fill in the defaults for strategy s. Any process or thread. */
void wait_policy_init(struct wait_policy *p, enum wait_strategy s);

/* "adaptive", "spin", "spin-futex", "futex"; NULL for an unknown value. */
const char *wait_strategy_name(enum wait_strategy s);
/* The inverse of wait_strategy_name(): 0 and *ret_s, or -EINVAL. */
int wait_strategy_parse(const char *name, enum wait_strategy *ret_s);

/* Zero a wait word. Only the creator of the mapping, before sharing it. */
void wait_word_init(struct wait_word *w);

/*
 * Wait until *idx != seen. Returns 0 once it differs (the caller then reads
 * the index again with acquire), -ETIMEDOUT when the absolute CLOCK_MONOTONIC
 * deadline has passed first (also for a deadline already in the past when
 * the index has not moved), or another -errno from FUTEX_WAIT. A NULL
 * deadline waits for ever: only for callers that have another way to notice
 * a dead peer. Called by the one process that reads idx.
 */
int wait_until_ne(const _Atomic uint64_t *idx, uint64_t seen, struct wait_word *w,
                  const struct wait_policy *p, const struct timespec *deadline);

/*
 * As wait_until_ne(), and also done (0) once *early == want. The spin polls
 * only *early, looking at *idx between its clock reads; the yield phase
 * looks at both, and so does a sleeper before and after its sleep, which
 * only a store of *idx wakes. For a writer that stores the early word
 * (release) before it publishes the index with wait_publish(), so that a
 * spinning waiter sees the news one cache line sooner; a writer that holds
 * the index (ring_commit_held()) wakes no sleeper it misses.
 */
int wait_until_stamp(const _Atomic uint64_t *idx, uint64_t seen, const _Atomic uint64_t *early,
                     uint64_t want, struct wait_word *w, const struct wait_policy *p,
                     const struct timespec *deadline);

/*
 * Store v into *idx (a release store and more: seq_cst) and wake the peer if
 * it sleeps on w. Costs one locked instruction, plus a FUTEX_WAKE only when
 * the peer has gone to sleep. Called by the one process that writes idx.
 */
void wait_publish(_Atomic uint64_t *idx, uint64_t v, struct wait_word *w);
/* The same for a caller that already read its cpu with wait_cpu(). */
void wait_publish_from(_Atomic uint64_t *idx, uint64_t v, struct wait_word *w, uint32_t cpu);

/* *ret = now (CLOCK_MONOTONIC) + ns. Any process or thread. */
void wait_deadline_in(struct timespec *ret, uint64_t ns);

/* Online cpus as seen by this process, cached after the first call (>= 1). */
unsigned wait_ncpu(void);
/* This thread's cpu + 1, or 0 when unknown. Cheap: glibc reads it from the rseq area. */
uint32_t wait_cpu(void);
/*
 * Whether the waker of w last published from a cpu other than cpu (this
 * thread's, from wait_cpu()); false when the waker's is unknown. A hint,
 * as waker_cpu is.
 */
bool wait_waker_elsewhere(const struct wait_word *w, uint32_t cpu);

#endif
