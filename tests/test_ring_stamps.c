/*
 * ring_stamps: a record is seen before the tail that covers it, by its
 * stamp, and only a stamp of this lap is taken for one.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "shm/ring.h"
#include "ring_fixture.h"

Test(ring, a_stamped_record_is_taken_before_tail_covers_it)
{
        struct pair p;
        struct wait_policy wp;
        struct timespec past = { 0, 0 };
        char b[16];

        wait_policy_init(&wp, WAIT_ADAPTIVE);
        pair_open(&p, 32, 8, 0);
        cr_assert(eq(int, ring_push(&p.prod, "abc", 3), 0));
        /* The producer between its stamp and its tail store. */
        atomic_store(&hdr(&p)->tail, 0);
        cr_assert(eq(int, ring_wait_readable(&p.cons, &wp, &past), 0));
        cr_assert(eq(int, ring_pop(&p.cons, b, sizeof(b)), 3));
        cr_assert(eq(int, memcmp(b, "abc", 3), 0));
        /* Tail one commit behind is no violation, just nothing new. */
        cr_assert(eq(int, ring_pop(&p.cons, b, sizeof(b)), -EAGAIN));
        cr_assert(eq(int, ring_wait_readable(&p.cons, &wp, &past), -ETIMEDOUT));
        atomic_store(&hdr(&p)->tail, 1);
        cr_assert(eq(int, ring_push(&p.prod, "de", 2), 0));
        cr_assert(eq(int, ring_pop(&p.cons, b, sizeof(b)), 2));
        /* Behind both records taken: a producer that holds its tail (ring_commit_held()). */
        atomic_store(&hdr(&p)->tail, 0);
        cr_assert(eq(int, ring_pop(&p.cons, b, sizeof(b)), -EAGAIN));
        /* Once seen covering them, tail cannot go back. */
        atomic_store(&hdr(&p)->tail, 2);
        cr_assert(eq(int, ring_pop(&p.cons, b, sizeof(b)), -EAGAIN));
        atomic_store(&hdr(&p)->tail, 1);
        cr_assert(eq(int, ring_pop(&p.cons, b, sizeof(b)), -EPROTO));
        pair_close(&p);
}

Test(ring, padding_and_its_record_taken_on_stamps_allow_tail_before_the_padding)
{
        struct pair p;
        unsigned char in[70], out[128];

        pair_open(&p, 32, 8, 0);
        for (unsigned i = 0; i < 6; i++)
                roundtrip(&p, 1, i);
        /* Slot 6: a 3-slot record pads 2 slots and starts at 0; tail not yet stored. */
        fill_pattern(in, sizeof(in), 7);
        cr_assert(eq(int, ring_push(&p.prod, in, sizeof(in)), 0));
        atomic_store(&hdr(&p)->tail, 6);
        cr_assert(eq(int, ring_pop(&p.cons, out, sizeof(out)), (int)sizeof(in)));
        cr_assert(eq(int, pattern_ok(out, sizeof(in), 7), 1));
        cr_assert(eq(int, ring_pop(&p.cons, out, sizeof(out)), -EAGAIN));
        atomic_store(&hdr(&p)->tail, 11);
        roundtrip(&p, 5, 8);
        pair_close(&p);
}

Test(ring, only_this_laps_stamp_is_a_stamp)
{
        struct pair p;
        struct ring_rec *rec;
        const void *v;
        size_t n;
        uint64_t stale;

        pair_open(&p, 32, 8, 0);
        for (unsigned i = 0; i < 11; i++)
                roundtrip(&p, 1, i);
        /* Slot 3 of lap 2 (index 11) holds a record header of lap 1, index 3. */
        rec = (struct ring_rec *)((unsigned char *)(hdr(&p) + 1) + 3 * 32);
        stale = atomic_load(&rec->stamp);
        cr_assert(eq(u64, stale, ring_stamp(&p.cons, 3)));
        cr_assert(eq(int, ring_peek(&p.cons, &v, &n), -EAGAIN));
        /* That stamp with its low byte overwritten by a payload: the two indices differ there only. */
        atomic_store(&rec->stamp, (stale & ~0xffull) | (ring_stamp(&p.cons, 11) & 0xff));
        cr_assert(eq(int, ring_peek(&p.cons, &v, &n), -EAGAIN));
        /* A payload that holds the bare index, or the index with the salt, where a stamp goes. */
        atomic_store(&rec->stamp, 11);
        cr_assert(eq(int, ring_peek(&p.cons, &v, &n), -EAGAIN));
        atomic_store(&rec->stamp, 11 ^ hdr(&p)->salt);
        cr_assert(eq(int, ring_peek(&p.cons, &v, &n), -EAGAIN));
        atomic_store(&rec->stamp, ring_stamp(&p.cons, 11));
        cr_assert(eq(int, ring_peek(&p.cons, &v, &n), 0));
        cr_assert(eq(sz, n, 1));
        pair_close(&p);
}
