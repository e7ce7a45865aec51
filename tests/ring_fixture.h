/*
 * ring_fixture: a ring formatted in plain memory with its producer and
 * consumer ends, and patterned records, for the ring tests (test_ring*.c).
 */
#ifndef FMUD_TESTS_RING_FIXTURE_H
#define FMUD_TESTS_RING_FIXTURE_H

#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shm/ring.h"

struct pair {
        void *mem;
        size_t size;
        struct ring prod, cons;
};

static inline void pair_open(struct pair *p, uint32_t slot_size, uint32_t capacity,
                             uint32_t max_record)
{
        struct ring_params rp = { .slot_size = slot_size, .capacity = capacity, .max_record = max_record };

        p->size = ring_bytes(slot_size, capacity);
        cr_assert(ne(sz, p->size, 0));
        /* Exactly the ring's bytes: ASan catches any access past the slot array. */
        cr_assert(eq(int, posix_memalign(&p->mem, 64, p->size), 0));
        memset(p->mem, 0xa5, p->size);
        cr_assert(eq(int, ring_format(p->mem, p->size, &rp), 0));
        cr_assert(eq(int, ring_init(&p->prod, p->mem, p->size, RING_PRODUCER), 0));
        cr_assert(eq(int, ring_init(&p->cons, p->mem, p->size, RING_CONSUMER), 0));
}

static inline void pair_close(struct pair *p)
{
        free(p->mem);
}

static inline struct ring_hdr *hdr(struct pair *p)
{
        return p->mem;
}

static inline void fill_pattern(unsigned char *b, size_t len, unsigned seed)
{
        for (size_t i = 0; i < len; i++)
                b[i] = (unsigned char)(seed * 131u + i * 7u + 1u);
}

static inline int pattern_ok(const unsigned char *b, size_t len, unsigned seed)
{
        for (size_t i = 0; i < len; i++)
                if (b[i] != (unsigned char)(seed * 131u + i * 7u + 1u))
                        return 0;
        return 1;
}

/* Push len pattern bytes, pop them back, and check length and content. */
static inline void roundtrip(struct pair *p, size_t len, unsigned seed)
{
        static unsigned char in[1 << 20], out[1 << 20];

        fill_pattern(in, len, seed);
        cr_assert(eq(int, ring_push(&p->prod, in, len), 0), "push %zu", len);
        cr_assert(eq(int, ring_pop(&p->cons, out, sizeof(out)), (int)len), "pop %zu", len);
        cr_assert(eq(int, pattern_ok(out, len, seed), 1), "content of %zu bytes", len);
}

#endif
