/*
 * ring_records: the checked records of the two-thread ring stress tests
 * (test_ring.c under Criterion, test_shm_race.c as a plain program for
 * ThreadSanitizer). Record seq has a length derived from seq, up to
 * RING_REC_MAX; from 12 bytes on it is [seq:8][sum:4][bytes], shorter
 * ones repeat seq's low byte.
 */
#ifndef FMUD_TEST_RING_RECORDS_H
#define FMUD_TEST_RING_RECORDS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "shm/ring.h"

#define RING_REC_MAX    300u
#define RING_REC_HANG_NS (60ull * 1000000000u)

static inline uint32_t ring_rec_mix(uint64_t x)
{
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdull;
        x ^= x >> 33;
        return (uint32_t)x;
}

static inline uint32_t ring_rec_checksum(const unsigned char *b, size_t len)
{
        uint32_t h = 2166136261u;

        for (size_t i = 0; i < len; i++)
                h = (h ^ b[i]) * 16777619u;
        return h;
}

/* Write record seq into b (RING_REC_MAX bytes); returns its length. */
static inline size_t ring_rec_fill(unsigned char *b, uint64_t seq)
{
        size_t len = ring_rec_mix(seq) % (RING_REC_MAX + 1);
        uint32_t sum;

        if (len < 12) {
                memset(b, (int)(seq & 0xff), len);
                return len;
        }
        for (size_t i = 12; i < len; i++)
                b[i] = (unsigned char)ring_rec_mix(seq + i);
        sum = ring_rec_checksum(b + 12, len - 12);
        memcpy(b, &seq, 8);
        memcpy(b + 8, &sum, 4);
        return len;
}

/* 1 if b[0..len) is record seq, else 0. */
static inline int ring_rec_check(const unsigned char *b, size_t len, uint64_t seq)
{
        uint64_t got;
        uint32_t sum;

        if (len != ring_rec_mix(seq) % (RING_REC_MAX + 1))
                return 0;
        if (len < 12) {
                for (size_t i = 0; i < len; i++)
                        if (b[i] != (unsigned char)(seq & 0xff))
                                return 0;
                return 1;
        }
        memcpy(&got, b, 8);
        memcpy(&sum, b + 8, 4);
        return got == seq && sum == ring_rec_checksum(b + 12, len - 12);
}

/*
 * Send record seq: odd ones through ring_push(), even ones zero-copy
 * (ring_reserve(), ring_commit()); while the ring is full, wait up to
 * RING_REC_HANG_NS for room. Returns 0 or the first error.
 */
static inline int ring_rec_send(struct ring *prod, struct wait_policy *wp, uint64_t seq)
{
        unsigned char buf[RING_REC_MAX];
        size_t len = ring_rec_fill(buf, seq);
        struct timespec dl;
        void *w;
        int r;

        for (;;) {
                if (seq & 1)
                        r = ring_push(prod, buf, len);
                else if ((r = ring_reserve(prod, len, &w)) == 0) {
                        memcpy(w, buf, len);
                        r = ring_commit(prod, len);
                }
                if (r != -ENOSPC)
                        return r;
                wait_deadline_in(&dl, RING_REC_HANG_NS);
                r = ring_wait_writable(prod, wp, &dl);
                if (r < 0)
                        return r;
        }
}

#endif
