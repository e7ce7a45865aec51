/*
 * ring_held: commits that hold the tail (ring_commit_held()) are taken on
 * their stamps by a consumer that polls or comes to wait, however many are
 * held; tail moves on a flush, a plain commit, or a held commit that finds
 * the consumer asleep.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "shm/ring.h"
#include "ring_fixture.h"

Test(ring, held_commits_are_taken_on_their_stamps_and_published_by_a_flush)
{
        unsigned char in[40], out[64];
        struct pair p;

        pair_open(&p, 32, 16, 0);
        /* Five records of one and two slots, none published by tail. */
        for (unsigned i = 0; i < 5; i++) {
                fill_pattern(in, 1 + 20 * (i % 2), i);
                cr_assert(eq(int, ring_push_held(&p.prod, in, 1 + 20 * (i % 2)), 0));
        }
        cr_assert(eq(u64, atomic_load(&hdr(&p)->tail), 0));
        for (unsigned i = 0; i < 5; i++) {
                cr_assert(eq(int, ring_pop(&p.cons, out, sizeof(out)), (int)(1 + 20 * (i % 2))));
                cr_assert(eq(int, pattern_ok(out, 1 + 20 * (i % 2), i), 1));
        }
        cr_assert(eq(int, ring_pop(&p.cons, out, sizeof(out)), -EAGAIN));
        /* The flush stores tail over all of them, 7 slots; a second changes nothing. */
        ring_flush(&p.prod);
        cr_assert(eq(u64, atomic_load(&hdr(&p)->tail), 7));
        ring_flush(&p.prod);
        cr_assert(eq(u64, atomic_load(&hdr(&p)->tail), 7));
        cr_assert(eq(int, ring_pop(&p.cons, out, sizeof(out)), -EAGAIN));
        /* A plain commit publishes the held ones before it too. */
        cr_assert(eq(int, ring_push_held(&p.prod, "a", 1), 0));
        cr_assert(eq(int, ring_push(&p.prod, "b", 1), 0));
        cr_assert(eq(u64, atomic_load(&hdr(&p)->tail), 9));
        cr_assert(eq(int, ring_pop(&p.cons, out, sizeof(out)), 1));
        cr_assert(eq(int, ring_pop(&p.cons, out, sizeof(out)), 1));
        cr_assert(eq(int, out[0], 'b'));
        pair_close(&p);
}

Test(ring, held_commits_wrap_with_their_padding_and_space_comes_back)
{
        unsigned char in[70], out[128];
        struct pair p;

        pair_open(&p, 32, 8, 0);
        /* Three laps of 3-slot records, each held, each taken: padding included. */
        for (unsigned i = 0; i < 9; i++) {
                fill_pattern(in, sizeof(in), i);
                cr_assert(eq(int, ring_push_held(&p.prod, in, sizeof(in)), 0), "record %u", i);
                cr_assert(eq(int, ring_pop(&p.cons, out, sizeof(out)), (int)sizeof(in)));
                cr_assert(eq(int, pattern_ok(out, sizeof(in), i), 1));
        }
        cr_assert(eq(u64, atomic_load(&hdr(&p)->tail), 0));
        ring_flush(&p.prod);
        roundtrip(&p, 5, 99);
        pair_close(&p);
}

struct sleeper {
        struct pair *p;
        int got;
};

static void *sleep_then_pop(void *arg)
{
        struct sleeper *s = arg;
        struct wait_policy wp;
        struct timespec deadline;
        char b[8];

        wait_policy_init(&wp, WAIT_FUTEX);
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += 60;
        s->got = -EAGAIN;
        while (s->got == -EAGAIN) {
                s->got = ring_pop(&s->p->cons, b, sizeof(b));
                if (s->got == -EAGAIN && ring_wait_readable(&s->p->cons, &wp, &deadline) < 0)
                        break;
        }
        return NULL;
}

/* A consumer that comes to wait after a held commit finds it on its stamp: no flush needed. */
Test(ring, a_consumer_waiting_after_a_held_commit_finds_it_on_its_stamp)
{
        struct timespec deadline;
        struct wait_policy wp;
        struct pair p;
        char b[8];

        wait_policy_init(&wp, WAIT_FUTEX);
        pair_open(&p, 32, 8, 0);
        for (int round = 0; round < 20; round++) {
                cr_assert(eq(int, ring_push_held(&p.prod, "x", 1), 0));
                clock_gettime(CLOCK_MONOTONIC, &deadline);
                deadline.tv_sec += 60;
                cr_assert(eq(int, ring_wait_readable(&p.cons, &wp, &deadline), 0));
                cr_assert(eq(int, ring_pop(&p.cons, b, sizeof(b)), 1), "round %d", round);
        }
        cr_assert(eq(u64, atomic_load(&hdr(&p)->tail), 0));
        pair_close(&p);
}

/* A consumer already asleep on tail is woken by the held commit itself: no flush needed. */
Test(ring, a_held_commit_publishes_for_a_consumer_asleep)
{
        struct sleeper s = { 0 };
        struct pair p;
        pthread_t t;

        pair_open(&p, 32, 8, 0);
        s.p = &p;
        for (int round = 0; round < 20; round++) {
                cr_assert(eq(int, pthread_create(&t, NULL, sleep_then_pop, &s), 0));
                while (atomic_load(&hdr(&p)->data.sleepers) == 0)
                        sched_yield();
                cr_assert(eq(int, ring_push_held(&p.prod, "y", 1), 0));
                cr_assert(eq(int, pthread_join(t, NULL), 0));
                cr_assert(eq(int, s.got, 1), "round %d: %d", round, s.got);
                cr_assert(eq(u64, atomic_load(&hdr(&p)->tail), (uint64_t)round + 1));
        }
        pair_close(&p);
}

Test(ring, flush_and_held_commit_are_for_the_producer)
{
        struct pair p;

        pair_open(&p, 32, 8, 0);
        cr_assert(eq(int, ring_push_held(&p.cons, "x", 1), -EINVAL));
        ring_flush(&p.cons);
        cr_assert(eq(u64, atomic_load(&hdr(&p)->head), 0));
        cr_assert(eq(u64, atomic_load(&hdr(&p)->tail), 0));
        pair_close(&p);
}
