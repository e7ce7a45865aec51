/*
 * shm_race: producer and consumer as two threads on one ring mapping, for
 * ThreadSanitizer (the tsan preset) as much as for the other builds.
 *
 * A plain program, not a Criterion suite: Criterion cannot start under
 * ThreadSanitizer (its BoxFort arena is mapped at fixed addresses that fall
 * inside TSan's shadow memory, and it aborts with "Could not initialize
 * inheritable arena"). test_ring.c runs the same kind of stress under
 * Criterion for the dev and asan presets. Exit status 0 means every record
 * arrived in order with the right length and checksum and no wait was lost.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shm/ring.h"

#define MSGS            200000u
#define MAX_LEN         300u
#define HANG_NS         (60ull * 1000000000u)

struct race {
        void *mem;
        struct ring prod, cons;
        enum wait_strategy strategy;
        int prod_err;
};

static uint32_t mix(uint64_t x)
{
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdull;
        x ^= x >> 33;
        return (uint32_t)x;
}

static uint32_t checksum(const unsigned char *b, size_t len)
{
        uint32_t h = 2166136261u;

        for (size_t i = 0; i < len; i++)
                h = (h ^ b[i]) * 16777619u;
        return h;
}

/* Record seq: a length from seq; [seq:8][sum:4][bytes] when at least 12 long. */
static size_t fill(unsigned char *b, uint64_t seq)
{
        size_t len = mix(seq) % (MAX_LEN + 1);
        uint32_t sum;

        if (len < 12) {
                memset(b, (int)(seq & 0xff), len);
                return len;
        }
        for (size_t i = 12; i < len; i++)
                b[i] = (unsigned char)mix(seq + i);
        sum = checksum(b + 12, len - 12);
        memcpy(b, &seq, 8);
        memcpy(b + 8, &sum, 4);
        return len;
}

static int check(const unsigned char *b, size_t len, uint64_t seq)
{
        uint64_t got;
        uint32_t sum;

        if (len != mix(seq) % (MAX_LEN + 1))
                return 0;
        if (len < 12) {
                for (size_t i = 0; i < len; i++)
                        if (b[i] != (unsigned char)(seq & 0xff))
                                return 0;
                return 1;
        }
        memcpy(&got, b, 8);
        memcpy(&sum, b + 8, 4);
        return got == seq && sum == checksum(b + 12, len - 12);
}

static void *producer(void *arg)
{
        struct race *rc = arg;
        struct wait_policy wp;
        struct timespec dl;
        unsigned char buf[MAX_LEN];
        int r = 0;

        wait_policy_init(&wp, rc->strategy);
        for (uint64_t seq = 0; seq < MSGS && r >= 0; seq++) {
                size_t len = fill(buf, seq);
                void *w;

                for (;;) {
                        if (seq & 1)
                                r = ring_push(&rc->prod, buf, len);
                        else if ((r = ring_reserve(&rc->prod, len, &w)) == 0) {
                                memcpy(w, buf, len);
                                r = ring_commit(&rc->prod, len);
                        }
                        if (r != -ENOSPC)
                                break;
                        wait_deadline_in(&dl, HANG_NS);
                        r = ring_wait_writable(&rc->prod, &wp, &dl);
                        if (r < 0)
                                break;
                }
        }
        rc->prod_err = r < 0 ? r : 0;
        return NULL;
}

/* Consume every record; returns 0 or a description of the first failure. */
static const char *consume(struct race *rc)
{
        struct wait_policy wp;
        struct timespec dl;
        uint64_t seq = 0;

        wait_policy_init(&wp, rc->strategy);
        while (seq < MSGS) {
                unsigned char buf[MAX_LEN];
                const void *v;
                size_t len;
                int r = ring_peek(&rc->cons, &v, &len);

                if (r == -EAGAIN) {
                        wait_deadline_in(&dl, HANG_NS);
                        if (ring_wait_readable(&rc->cons, &wp, &dl) < 0)
                                return "wait for data timed out";
                        continue;
                }
                if (r < 0)
                        return "peek failed";
                if (seq & 2) {
                        if (!check(v, len, seq))
                                return "bad record (peek)";
                        if (ring_release(&rc->cons) < 0)
                                return "release failed";
                } else {
                        r = ring_pop(&rc->cons, buf, sizeof(buf));
                        if (r < 0 || !check(buf, (size_t)r, seq))
                                return "bad record (pop)";
                }
                seq++;
        }
        return NULL;
}

static int run(enum wait_strategy s, uint32_t slot_size, uint32_t capacity)
{
        struct ring_params rp = { .slot_size = slot_size, .capacity = capacity };
        struct race rc = { .strategy = s };
        size_t size = ring_bytes(slot_size, capacity);
        const char *fail;
        pthread_t t;

        if (posix_memalign(&rc.mem, 64, size) != 0 || ring_format(rc.mem, size, &rp) < 0 ||
            ring_init(&rc.prod, rc.mem, size, RING_PRODUCER) < 0 ||
            ring_init(&rc.cons, rc.mem, size, RING_CONSUMER) < 0) {
                fprintf(stderr, "shm_race: setup failed\n");
                return 1;
        }
        if (pthread_create(&t, NULL, producer, &rc) != 0) {
                fprintf(stderr, "shm_race: pthread_create failed\n");
                return 1;
        }
        fail = consume(&rc);
        pthread_join(t, NULL);
        free(rc.mem);
        if (fail || rc.prod_err) {
                fprintf(stderr, "shm_race: %s, slot %u x %u: %s (producer: %s)\n",
                        wait_strategy_name(s), slot_size, capacity, fail ? fail : "ok",
                        strerror(-rc.prod_err));
                return 1;
        }
        printf("shm_race: %s, slot %u x %u: %u records ok\n",
               wait_strategy_name(s), slot_size, capacity, MSGS);
        return 0;
}

int main(void)
{
        int bad = 0;

        /* Small rings, so both sides hit full and empty and sleep often. */
        bad |= run(WAIT_ADAPTIVE, 64, 64);
        bad |= run(WAIT_FUTEX, 32, 32);
        bad |= run(WAIT_SPIN_FUTEX, 128, 8);
        return bad;
}
