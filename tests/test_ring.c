/* ring: SPSC slot ring semantics and a two-thread stress run. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shm/ring.h"
#include "ring_fixture.h"
#include "ring_records.h"

Test(ring, pop_returns_eagain_when_empty)
{
        struct pair p;
        char b[16];
        const void *v;
        size_t n;

        pair_open(&p, 16, 8, 0);
        cr_assert(eq(int, ring_pop(&p.cons, b, sizeof(b)), -EAGAIN));
        cr_assert(eq(int, ring_peek(&p.cons, &v, &n), -EAGAIN));
        cr_assert(eq(int, ring_release(&p.cons), -EINVAL));
        pair_close(&p);
}

Test(ring, push_returns_enospc_when_full_and_succeeds_after_a_pop)
{
        struct pair p;
        char b[16];

        pair_open(&p, 32, 8, 0);
        for (int i = 0; i < 8; i++)
                cr_assert(eq(int, ring_push(&p.prod, "12345678", 8), 0));
        cr_assert(eq(int, ring_push(&p.prod, "x", 1), -ENOSPC));
        cr_assert(eq(int, ring_pop(&p.cons, b, sizeof(b)), 8));
        cr_assert(eq(int, ring_push(&p.prod, "x", 1), 0));
        cr_assert(eq(int, ring_push(&p.prod, "x", 1), -ENOSPC));
        pair_close(&p);
}

Test(ring, wraps_around_the_capacity_many_times)
{
        struct pair p;

        pair_open(&p, 32, 4, 0);
        /* max_record here is 2 slots less a header: 48 bytes. */
        for (unsigned i = 0; i < 100000; i++)
                roundtrip(&p, i % 49, i);
        cr_assert(atomic_load(&hdr(&p)->tail) > 100000);
        cr_assert(eq(u64, atomic_load(&hdr(&p)->tail), atomic_load(&hdr(&p)->head)));
        pair_close(&p);
}

Test(ring, carries_every_slot_size_from_smallest_to_largest)
{
        for (uint32_t slot = RING_SLOT_MIN; slot <= RING_SLOT_MAX; slot *= 2) {
                struct pair p;
                uint32_t max;

                pair_open(&p, slot, 8, 0);
                max = ring_max_record_limit(slot, 8);
                cr_assert(eq(u32, p.prod.max_record, max));
                size_t hdr_len = sizeof(struct ring_rec);
                size_t lens[] = { 0, 1, slot - hdr_len, slot - hdr_len + 1, slot, 2 * slot, max - 1, max };
                for (unsigned round = 0; round < 3; round++)
                        for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
                                roundtrip(&p, lens[i], round * 16 + (unsigned)i);
                pair_close(&p);
        }
}

Test(ring, multi_slot_record_at_the_wrap_boundary_is_padded_and_contiguous)
{
        struct pair p;
        unsigned char in[70], out[128];
        const void *v;
        size_t n;

        pair_open(&p, 32, 16, 0);
        for (unsigned i = 0; i < 14; i++)
                roundtrip(&p, 3, i);
        /* 70 bytes + header = 3 slots; only 2 remain before the end: pad 2, start at 0. */
        fill_pattern(in, sizeof(in), 99);
        cr_assert(eq(int, ring_push(&p.prod, in, sizeof(in)), 0));
        cr_assert(eq(u64, atomic_load(&hdr(&p)->tail), 14 + 2 + 3));
        cr_assert(eq(int, ring_peek(&p.cons, &v, &n), 0));
        cr_assert(eq(sz, n, sizeof(in)));
        cr_assert(eq(ptr, (void *)v, (unsigned char *)p.mem + sizeof(struct ring_hdr) + sizeof(struct ring_rec)));
        cr_assert(eq(int, ring_pop(&p.cons, out, sizeof(out)), (int)sizeof(in)));
        cr_assert(eq(int, memcmp(in, out, sizeof(in)), 0));
        /* Every record length at every start slot, around the boundary many times. */
        for (unsigned i = 0; i < 5000; i++)
                roundtrip(&p, (i * 7) % (ring_max_record_limit(32, 16) + 1), i);
        pair_close(&p);
}

Test(ring, record_after_padding_frees_its_padding_and_slots_on_pop)
{
        struct pair p;
        char b[128];

        pair_open(&p, 32, 8, 0);
        for (unsigned i = 0; i < 6; i++)
                roundtrip(&p, 1, i);
        /* Slot 6: a 4-slot record pads 2 slots, needs 6 free of 8. */
        cr_assert(eq(int, ring_push(&p.prod, b, 100), 0));
        cr_assert(eq(int, ring_pop(&p.cons, b, sizeof(b)), 100));
        cr_assert(eq(u64, atomic_load(&hdr(&p)->head), 12));
        pair_close(&p);
}

Test(ring, zero_length_records_take_one_slot)
{
        struct pair p;
        char b[8];

        pair_open(&p, RING_SLOT_MIN, 4, 0);
        for (int i = 0; i < 4; i++)
                cr_assert(eq(int, ring_push(&p.prod, NULL, 0), 0));
        cr_assert(eq(int, ring_push(&p.prod, NULL, 0), -ENOSPC));
        for (int i = 0; i < 4; i++)
                cr_assert(eq(int, ring_pop(&p.cons, b, 0), 0));
        cr_assert(eq(int, ring_pop(&p.cons, b, 0), -EAGAIN));
        pair_close(&p);
}

Test(ring, max_length_records_pass_and_longer_ones_are_refused_without_breaking)
{
        struct pair p;

        pair_open(&p, 64, 16, 300);
        cr_assert(eq(u32, p.prod.max_record, 300));
        roundtrip(&p, 300, 1);
        cr_assert(eq(int, ring_push(&p.prod, NULL, 301), -EMSGSIZE));
        roundtrip(&p, 300, 2);
        pair_close(&p);
}

Test(ring, pop_returns_enobufs_and_keeps_the_record_when_the_buffer_is_small)
{
        struct pair p;
        char b[32];

        pair_open(&p, 16, 8, 0);
        cr_assert(eq(int, ring_push(&p.prod, "0123456789", 10), 0));
        cr_assert(eq(int, ring_pop(&p.cons, b, 9), -ENOBUFS));
        cr_assert(eq(int, ring_pop(&p.cons, b, sizeof(b)), 10));
        cr_assert(eq(int, memcmp(b, "0123456789", 10), 0));
        pair_close(&p);
}

Test(ring, reserve_commit_and_peek_release_are_zero_copy)
{
        struct pair p;
        const void *v, *v2;
        void *w;
        size_t n;

        pair_open(&p, 32, 8, 0);
        cr_assert(eq(int, ring_commit(&p.prod, 0), -EINVAL));
        cr_assert(eq(int, ring_reserve(&p.prod, 100, &w), 0));
        cr_assert(eq(sz, (uintptr_t)w % 8, 0));
        fill_pattern(w, 100, 5);
        cr_assert(eq(int, ring_commit(&p.prod, 101), -EINVAL));
        /* Nothing is visible before the commit. */
        cr_assert(eq(int, ring_peek(&p.cons, &v, &n), -EAGAIN));
        cr_assert(eq(int, ring_commit(&p.prod, 60), 0));
        cr_assert(eq(int, ring_commit(&p.prod, 60), -EINVAL));
        /* 60 bytes + header: 3 slots of 32, not the 4 that 100 would take. */
        cr_assert(eq(u64, atomic_load(&hdr(&p)->tail), 3));
        cr_assert(eq(int, ring_peek(&p.cons, &v, &n), 0));
        cr_assert(eq(ptr, (void *)v, w));
        cr_assert(eq(sz, n, 60));
        cr_assert(eq(int, pattern_ok(v, 60, 5), 1));
        cr_assert(eq(int, ring_peek(&p.cons, &v2, &n), 0));
        cr_assert(eq(ptr, (void *)v2, (void *)v));
        /* The slots stay the consumer's until release. */
        cr_assert(eq(u64, atomic_load(&hdr(&p)->head), 0));
        cr_assert(eq(int, ring_release(&p.cons), 0));
        cr_assert(eq(u64, atomic_load(&hdr(&p)->head), 3));
        cr_assert(eq(int, ring_peek(&p.cons, &v, &n), -EAGAIN));
        pair_close(&p);
}

Test(ring, roles_are_enforced)
{
        struct pair p;
        const void *v;
        void *w;
        size_t n;

        pair_open(&p, 16, 8, 0);
        cr_assert(eq(int, ring_reserve(&p.cons, 1, &w), -EINVAL));
        cr_assert(eq(int, ring_peek(&p.prod, &v, &n), -EINVAL));
        pair_close(&p);
}

Test(ring, format_refuses_bad_geometry)
{
        static alignas(64) unsigned char mem[4096];
        struct ring_params rp = { .slot_size = 24, .capacity = 8 };

        cr_assert(eq(sz, ring_bytes(24, 8), 0));
        cr_assert(eq(sz, ring_bytes(16, 6), 0));
        cr_assert(eq(sz, ring_bytes(4, 8), 0));
        cr_assert(eq(sz, ring_bytes(8, 8), 0));         /* no room for a record header */
        cr_assert(eq(sz, ring_bytes(16, 1), 0));
        cr_assert(eq(int, ring_format(mem, sizeof(mem), &rp), -EINVAL));
        rp = (struct ring_params){ .slot_size = 16, .capacity = 8 };
        cr_assert(eq(int, ring_format(mem, sizeof(mem), &rp), -EINVAL));   /* size != ring_bytes */
        cr_assert(eq(int, ring_format(mem + 8, ring_bytes(16, 8), &rp), -EINVAL));
        rp.max_record = ring_max_record_limit(16, 8) + 1;
        cr_assert(eq(int, ring_format(mem, ring_bytes(16, 8), &rp), -EINVAL));
}

/* --- two threads on one mapping: the race test (run it under the tsan preset) --- */

#define STRESS_MSGS     2000000u

struct stress {
        struct pair p;
        uint64_t bad;
};

static void *stress_producer(void *arg)
{
        struct stress *s = arg;
        struct wait_policy wp;

        wait_policy_init(&wp, WAIT_ADAPTIVE);
        for (uint64_t seq = 0; seq < STRESS_MSGS; seq++)
                if (ring_rec_send(&s->p.prod, &wp, seq) < 0) {
                        s->bad++;
                        return NULL;
                }
        return NULL;
}

Test(ring, two_threads_pass_millions_of_checked_records, .timeout = 240)
{
        struct stress s = { .bad = 0 };
        struct wait_policy wp;
        struct timespec dl;
        pthread_t t;
        uint64_t bad = 0, seq = 0;
        int stop_err = 0;

        pair_open(&s.p, 64, 64, 0);
        wait_policy_init(&wp, WAIT_ADAPTIVE);
        cr_assert(eq(int, pthread_create(&t, NULL, stress_producer, &s), 0));
        while (seq < STRESS_MSGS) {
                const void *v;
                size_t len;
                int r;

                r = ring_peek(&s.p.cons, &v, &len);
                if (r == -EAGAIN) {
                        wait_deadline_in(&dl, RING_REC_HANG_NS);
                        r = ring_wait_readable(&s.p.cons, &wp, &dl);
                        stop_err = r;
                        if (r < 0)
                                break;
                        continue;
                }
                stop_err = r;
                if (r < 0)
                        break;
                if (seq & 2) {
                        if (!ring_rec_check(v, len, seq))
                                bad++;
                        r = ring_release(&s.p.cons);
                } else {
                        unsigned char buf[RING_REC_MAX];

                        r = ring_pop(&s.p.cons, buf, sizeof(buf));
                        if (r < 0 || !ring_rec_check(buf, (size_t)r, seq))
                                bad++;
                }
                if (r < 0)
                        break;
                seq++;
        }
        cr_assert(eq(int, pthread_join(t, NULL), 0));
        cr_assert(eq(u64, seq, STRESS_MSGS), "stopped with %d", stop_err);
        cr_assert(eq(u64, bad, 0));
        cr_assert(eq(u64, s.bad, 0));
        pair_close(&s.p);
}
