/*
 * ring_hostile: a hostile peer rewrites the shared header and records;
 * the ring refuses what it forged and stays refused where it must.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdint.h>

#include "shm/ring.h"
#include "ring_fixture.h"

Test(ring, tail_moved_back_is_eproto_and_sticky)
{
        struct pair p;
        char b[16];

        pair_open(&p, 32, 8, 0);
        for (unsigned i = 0; i < 5; i++)
                roundtrip(&p, 1, i);
        /* Nothing new: the consumer reads tail, 5, and takes it as the least from now on. */
        cr_assert(eq(int, ring_pop(&p.cons, b, sizeof(b)), -EAGAIN));
        atomic_store(&hdr(&p)->tail, 3);
        cr_assert(eq(int, ring_pop(&p.cons, b, sizeof(b)), -EPROTO));
        atomic_store(&hdr(&p)->tail, 6);
        cr_assert(eq(int, ring_pop(&p.cons, b, sizeof(b)), -EPROTO));
        cr_assert(eq(int, ring_wait_readable(&p.cons, &(struct wait_policy){ 0 }, NULL), -EPROTO));
        pair_close(&p);
}

Test(ring, tail_more_than_capacity_ahead_is_eproto)
{
        struct pair p;
        const void *v;
        size_t n;

        pair_open(&p, 16, 8, 0);
        atomic_store(&hdr(&p)->tail, 9);
        cr_assert(eq(int, ring_peek(&p.cons, &v, &n), -EPROTO));
        pair_close(&p);
}

Test(ring, tail_that_moves_backwards_is_eproto)
{
        struct pair p;
        char b[16];

        pair_open(&p, 32, 8, 0);
        for (unsigned i = 0; i < 3; i++)
                cr_assert(eq(int, ring_push(&p.prod, "a", 1), 0));
        for (unsigned i = 0; i < 3; i++)
                cr_assert(eq(int, ring_pop(&p.cons, b, sizeof(b)), 1));
        atomic_store(&hdr(&p)->tail, UINT64_MAX);       /* -1: far behind, or 2^64 ahead */
        cr_assert(eq(int, ring_pop(&p.cons, b, sizeof(b)), -EPROTO));
        pair_close(&p);
}

Test(ring, head_ahead_of_tail_or_backwards_is_eproto_for_the_producer)
{
        struct pair p;
        struct pair q;

        pair_open(&p, 32, 8, 0);
        for (unsigned i = 0; i < 8; i++)
                cr_assert(eq(int, ring_push(&p.prod, "a", 1), 0));
        atomic_store(&hdr(&p)->head, 9);
        cr_assert(eq(int, ring_push(&p.prod, "a", 1), -EPROTO));
        cr_assert(eq(int, ring_push(&p.prod, "a", 1), -EPROTO));
        pair_close(&p);

        pair_open(&q, 32, 8, 0);
        for (unsigned i = 0; i < 4; i++)
                roundtrip(&q, 1, i);
        for (unsigned i = 0; i < 8; i++)
                cr_assert(eq(int, ring_push(&q.prod, "a", 1), 0));
        atomic_store(&hdr(&q)->head, 2);        /* was 4: moved backwards */
        cr_assert(eq(int, ring_push(&q.prod, "a", 1), -EPROTO));
        pair_close(&q);
}

Test(ring, huge_record_length_is_emsgsize)
{
        struct pair p;
        const void *v;
        size_t n;

        pair_open(&p, 16, 8, 0);
        cr_assert(eq(int, ring_push(&p.prod, "abc", 3), 0));
        atomic_store(&((struct ring_rec *)(hdr(&p) + 1))->len, 0xffffffffu);
        cr_assert(eq(int, ring_peek(&p.cons, &v, &n), -EMSGSIZE));
        cr_assert(eq(int, ring_peek(&p.cons, &v, &n), -EMSGSIZE));
        pair_close(&p);
}

Test(ring, record_longer_than_the_published_data_is_ebadmsg)
{
        struct pair p;
        struct ring_rec *rec;
        const void *v;
        size_t n;

        pair_open(&p, 16, 8, 0);
        cr_assert(eq(int, ring_push(&p.prod, "abc", 3), 0));
        /* Not stamped, so tail is what says: within max_record (48) but 4 slots, and 1 published. */
        rec = (struct ring_rec *)(hdr(&p) + 1);
        atomic_store(&rec->stamp, 0);
        atomic_store(&rec->len, 40);
        cr_assert(eq(int, ring_peek(&p.cons, &v, &n), -EBADMSG));
        pair_close(&p);
}

Test(ring, record_running_past_the_end_of_the_slots_is_ebadmsg)
{
        struct pair p;
        struct ring_rec *last;
        const void *v;
        size_t n;
        char b[16];

        for (int stamp = 0; stamp < 2; stamp++) {
                pair_open(&p, 32, 8, 0);
                for (unsigned i = 0; i < 7; i++)
                        roundtrip(&p, 1, i);
                /* A forged 3-slot record at slot 7, published by tail or by its stamp: it would wrap. */
                last = (struct ring_rec *)((unsigned char *)(hdr(&p) + 1) + 7 * 32);
                atomic_store(&last->kind, RING_REC_DATA);
                atomic_store(&last->len, 70);
                if (stamp)
                        atomic_store(&last->stamp, ring_stamp(&p.cons, 7));
                else
                        atomic_store(&hdr(&p)->tail, 10);
                cr_assert(eq(int, ring_peek(&p.cons, &v, &n), -EBADMSG));
                cr_assert(eq(int, ring_pop(&p.cons, b, sizeof(b)), -EBADMSG));
                pair_close(&p);
        }
}

Test(ring, unknown_kind_and_padding_from_slot_zero_are_ebadmsg)
{
        struct pair p, q;
        const void *v;
        size_t n;

        pair_open(&p, 16, 8, 0);
        cr_assert(eq(int, ring_push(&p.prod, "abc", 3), 0));
        atomic_store(&((struct ring_rec *)(hdr(&p) + 1))->kind, 0x12345678u);
        cr_assert(eq(int, ring_peek(&p.cons, &v, &n), -EBADMSG));
        pair_close(&p);

        pair_open(&q, 16, 8, 0);
        cr_assert(eq(int, ring_push(&q.prod, "abc", 3), 0));
        atomic_store(&((struct ring_rec *)(hdr(&q) + 1))->kind, RING_REC_PAD);
        cr_assert(eq(int, ring_peek(&q.cons, &v, &n), -EBADMSG));
        pair_close(&q);
}

Test(ring, padding_longer_than_the_published_data_is_ebadmsg)
{
        struct pair p;
        struct ring_rec *rec;
        const void *v;
        size_t n;

        pair_open(&p, 32, 8, 0);
        for (unsigned i = 0; i < 5; i++)
                roundtrip(&p, 1, i);
        /* A pad at slot 5 covers 3 slots, but only 1 is published (and none is stamped). */
        rec = (struct ring_rec *)((unsigned char *)(hdr(&p) + 1) + 5 * 32);
        atomic_store(&rec->kind, RING_REC_PAD);
        atomic_store(&hdr(&p)->tail, 6);
        cr_assert(eq(int, ring_peek(&p.cons, &v, &n), -EBADMSG));
        pair_close(&p);
}

Test(ring, init_refuses_a_forged_header)
{
        struct pair p;
        struct ring r;

        pair_open(&p, 16, 8, 0);
        hdr(&p)->magic = 0;
        cr_assert(eq(int, ring_init(&r, p.mem, p.size, RING_CONSUMER), -EBADMSG));
        hdr(&p)->magic = RING_MAGIC;
        hdr(&p)->version = RING_VERSION + 1;
        cr_assert(eq(int, ring_init(&r, p.mem, p.size, RING_CONSUMER), -EPROTONOSUPPORT));
        hdr(&p)->version = RING_VERSION;
        hdr(&p)->capacity = 16;         /* would run past the region */
        cr_assert(eq(int, ring_init(&r, p.mem, p.size, RING_CONSUMER), -ERANGE));
        hdr(&p)->capacity = 7;
        cr_assert(eq(int, ring_init(&r, p.mem, p.size, RING_CONSUMER), -ERANGE));
        hdr(&p)->capacity = 8;
        hdr(&p)->max_record = 1000;
        cr_assert(eq(int, ring_init(&r, p.mem, p.size, RING_CONSUMER), -ERANGE));
        hdr(&p)->max_record = 8;
        atomic_store(&hdr(&p)->tail, 100);
        cr_assert(eq(int, ring_init(&r, p.mem, p.size, RING_CONSUMER), -EPROTO));
        pair_close(&p);
}
