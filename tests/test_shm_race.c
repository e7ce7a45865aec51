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
#include "ring_records.h"

#define MSGS            200000u

struct race {
        void *mem;
        struct ring prod, cons;
        enum wait_strategy strategy;
        int prod_err;
};

static void *producer(void *arg)
{
        struct race *rc = arg;
        struct wait_policy wp;
        int r = 0;

        wait_policy_init(&wp, rc->strategy);
        for (uint64_t seq = 0; seq < MSGS && r >= 0; seq++)
                r = ring_rec_send(&rc->prod, &wp, seq);
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
                unsigned char buf[RING_REC_MAX];
                const void *v;
                size_t len;
                int r = ring_peek(&rc->cons, &v, &len);

                if (r == -EAGAIN) {
                        wait_deadline_in(&dl, RING_REC_HANG_NS);
                        if (ring_wait_readable(&rc->cons, &wp, &dl) < 0)
                                return "wait for data timed out";
                        continue;
                }
                if (r < 0)
                        return "peek failed";
                if (seq & 2) {
                        if (!ring_rec_check(v, len, seq))
                                return "bad record (peek)";
                        if (ring_release(&rc->cons) < 0)
                                return "release failed";
                } else {
                        r = ring_pop(&rc->cons, buf, sizeof(buf));
                        if (r < 0 || !ring_rec_check(buf, (size_t)r, seq))
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
