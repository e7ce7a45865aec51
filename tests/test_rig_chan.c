/*
 * rig_chan: the rig channel's memfd as a rig maps it (shm/rig.h): a
 * channel the engine made attaches with its ports; a memfd that is not
 * sealed, of the wrong size or with a header rewritten is refused before
 * anything in it is used; values of the wrong kind for a port's type are
 * told apart.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shm/rig.h"

static struct rig *engine_side(void)
{
        struct rig_port in[1] = { { .name = "u", .type = RIG_INT16, .has_safe = 1, .safe = -3 } };
        struct rig_port out[2] = { { .name = "y", .type = RIG_FLOAT64 },
                                   { .name = "on", .type = RIG_BOOLEAN } };
        struct rig_params p = { .n_in = 1, .n_out = 2, .in = in, .out = out,
                                .policy = RIG_SAFE, .timeout_ms = 10 };
        struct rig *e;

        cr_assert(eq(int, rig_create(&p, &e), 0));
        return e;
}

/*
 * A waiting rig beats at least four times a timeout: with the session's
 * timeout under 40 ms the slice is a quarter of it (1 ms: 250 us), else
 * 10 ms, so a rig blocked in rig_wait() is never seen as vanished.
 */
Test(rig_chan, a_waiting_rig_beats_well_within_the_timeout)
{
        static const struct { uint32_t timeout_ms; uint64_t slice_ns; } cases[] = {
                { 1, 250000 }, { 9, 2250000 }, { 40, 10000000 }, { 100, 10000000 },
        };
        struct rig_port in[1] = { { .name = "u", .type = RIG_FLOAT64 } };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct rig_params p = { .n_in = 1, .in = in, .policy = RIG_HOLD,
                                        .timeout_ms = cases[i].timeout_ms };
                struct rig *e, *r;

                cr_assert(eq(int, rig_create(&p, &e), 0));
                cr_assert(eq(int, rig_attach(dup(rig_fd(e)), &r), 0));
                cr_assert(eq(u64, rig_beat_slice_ns(r), cases[i].slice_ns), "timeout %u ms",
                          cases[i].timeout_ms);
                rig_close(r);
                rig_close(e);
        }
}

Test(rig_chan, a_rig_attaches_with_the_ports_and_exchanges_records)
{
        struct rig *e = engine_side(), *r;
        const struct rig_port *pt;
        uint64_t seq, point, skipped;
        double v = 7, got, outs[2] = { 1.5, 1 }, t;
        uint32_t n;

        cr_assert(eq(int, rig_attach(dup(rig_fd(e)), &r), 0));
        pt = rig_ports(r, true, &n);
        cr_assert(eq(u32, n, 2));
        cr_assert(eq(str, (char *)pt[1].name, "on"));
        pt = rig_ports(r, false, &n);
        cr_assert(eq(dbl, pt[0].safe, -3));
        cr_assert(eq(u64, rig_heartbeat(e), 0));
        cr_assert(eq(int, rig_write(r, 4, &v), 0));
        cr_assert(rig_heartbeat(e) > 0);
        cr_assert(eq(int, rig_take(e, 3, &seq, &point, &got), -EAGAIN));       /* for point 4 */
        cr_assert(eq(int, rig_take(e, 4, &seq, &point, &got), 0));
        cr_assert(eq(u64, seq, 1));
        cr_assert(eq(dbl, got, 7));
        cr_assert(eq(int, rig_publish(e, 4, 0.4, outs), 0));
        cr_assert(eq(int, rig_publish(e, 5, 0.5, outs), 0));
        cr_assert(eq(int, rig_read(r, &point, &t, outs, &skipped), 0));
        cr_assert(eq(u64, point, 5));
        cr_assert(eq(u64, skipped, 1));
        rig_close(r);
        rig_close(e);
}

Test(rig_chan, an_unsealed_or_rewritten_channel_is_refused)
{
        struct rig *e = engine_side(), *r;
        int fd = memfd_create("x", MFD_CLOEXEC), efd = dup(rig_fd(e));
        struct rig_hdr *h;

        cr_assert(fd >= 0);
        cr_assert(eq(int, ftruncate(fd, 4096), 0));
        cr_assert(eq(int, rig_attach(fd, &r), -EPERM));
        close(fd);
        h = mmap(NULL, sizeof(*h), PROT_READ | PROT_WRITE, MAP_SHARED, efd, 0);
        cr_assert(h != MAP_FAILED);
        h->n_out = 3;                   /* a layout that does not match the size */
        cr_assert(eq(int, rig_attach(efd, &r), -ERANGE));
        h->n_out = 2;
        h->magic = 0;
        cr_assert(eq(int, rig_attach(efd, &r), -EBADMSG));
        munmap(h, sizeof(*h));
        close(efd);
        rig_close(e);
}

Test(rig_chan, integer_and_boolean_ports_take_only_their_values)
{
        cr_assert(eq(int, rig_value_ok(RIG_INT32, NAN), 0));
        cr_assert(eq(int, rig_value_ok(RIG_INT8, 128), 0));
        cr_assert(eq(int, rig_value_ok(RIG_UINT8, -1), 0));
        cr_assert(eq(int, rig_value_ok(RIG_INT16, 0.5), 0));
        cr_assert(eq(int, rig_value_ok(RIG_BOOLEAN, 2), 0));
        cr_assert(eq(int, rig_value_ok(RIG_INT8, -128), 1));
        cr_assert(eq(int, rig_value_ok(RIG_BOOLEAN, 1), 1));
        /* Floats as a user's values: no NaN, infinities pass, a Float32 in its range. */
        cr_assert(eq(int, rig_value_ok(RIG_FLOAT64, NAN), 0));
        cr_assert(eq(int, rig_value_ok(RIG_FLOAT32, NAN), 0));
        cr_assert(eq(int, rig_value_ok(RIG_FLOAT64, INFINITY), 1));
        cr_assert(eq(int, rig_value_ok(RIG_FLOAT32, -INFINITY), 1));
        cr_assert(eq(int, rig_value_ok(RIG_FLOAT32, 1e300), 0));
        cr_assert(eq(int, rig_value_ok(RIG_FLOAT32, 1e-50), 0));
        cr_assert(eq(int, rig_value_ok(RIG_FLOAT32, 0.0), 1));
        cr_assert(eq(int, rig_value_ok(RIG_FLOAT32, 3.5e38), 0));
        cr_assert(eq(int, rig_value_ok(RIG_FLOAT32, 1.5), 1));
        cr_assert(eq(int, rig_value_ok(RIG_FLOAT64, 1e300), 1));
        cr_assert(eq(int, rig_value_ok((enum rig_type)0, 0), 0));
}

Test(rig_chan, a_port_type_rewritten_in_the_mapping_changes_nothing_the_engine_checks)
{
        struct rig *e = engine_side(), *r;
        int efd = dup(rig_fd(e));
        struct rig_port *tbl;
        const struct rig_port *pt;
        uint64_t seq, point;
        double big = 1e300, nan = NAN, ok = -7, got = 0;
        uint32_t n;

        tbl = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, efd, 0);
        cr_assert(tbl != MAP_FAILED);
        /* The Int16 input, made Float64 by the rig before it attaches. */
        tbl = (struct rig_port *)((unsigned char *)tbl + sizeof(struct rig_hdr));
        tbl[0].type = RIG_FLOAT64;
        cr_assert(eq(int, rig_attach(efd, &r), 0));
        pt = rig_ports(e, false, &n);
        cr_assert(eq(u32, n, 1));
        cr_assert(eq(u32, pt[0].type, RIG_INT16));
        cr_assert(eq(int, rig_write(r, 1, &big), 0));
        cr_assert(eq(int, rig_write(r, 1, &nan), 0));
        cr_assert(eq(int, rig_write(r, 1, &ok), 0));
        cr_assert(eq(int, rig_take(e, 1, &seq, &point, &got), -EBADMSG));
        cr_assert(eq(int, rig_take(e, 1, &seq, &point, &got), -EBADMSG));
        cr_assert(eq(int, rig_take(e, 1, &seq, &point, &got), 0));
        cr_assert(eq(dbl, got, -7));
        cr_assert(eq(u64, seq, 3));
        munmap((unsigned char *)tbl - sizeof(struct rig_hdr), 4096);
        rig_close(r);
        rig_close(e);
}

Test(rig_chan, a_rig_that_attaches_again_has_its_first_write_taken)
{
        struct rig *e = engine_side(), *r;
        uint64_t seq, point;
        double v = 5, got = 0;

        cr_assert(eq(int, rig_attach(dup(rig_fd(e)), &r), 0));
        cr_assert(eq(int, rig_write(r, 1, &v), 0));
        cr_assert(eq(int, rig_write(r, 1, &v), 0));
        cr_assert(eq(int, rig_take(e, 1, &seq, &point, &got), 0));
        cr_assert(eq(int, rig_take(e, 1, &seq, &point, &got), 0));
        cr_assert(eq(u64, seq, 2));
        rig_close(r);
        /* Restarted: its sequence starts again at 1. */
        cr_assert(eq(int, rig_attach(dup(rig_fd(e)), &r), 0));
        v = 9;
        cr_assert(eq(int, rig_write(r, 2, &v), 0));
        cr_assert(eq(int, rig_take(e, 2, &seq, &point, &got), 0));
        cr_assert(eq(u64, seq, 1));
        cr_assert(eq(u64, point, 2));
        cr_assert(eq(dbl, got, 9));
        rig_close(r);
        rig_close(e);
}

Test(rig_chan, a_write_for_a_point_beyond_the_horizon_is_bad_and_blocks_nothing)
{
        struct rig *e = engine_side(), *r;
        uint64_t seq, point;
        double v = 1, got = 0;

        cr_assert(eq(int, rig_attach(dup(rig_fd(e)), &r), 0));
        cr_assert(eq(int, rig_write(r, UINT64_MAX, &v), 0));
        cr_assert(eq(int, rig_take(e, 1, &seq, &point, &got), -EBADMSG));
        /* The last point the ring may wait for is kept; one past it is bad. */
        cr_assert(eq(int, rig_write(r, 1 + RIG_RING_SLOTS + 1, &v), 0));
        cr_assert(eq(int, rig_take(e, 1, &seq, &point, &got), -EBADMSG));
        cr_assert(eq(int, rig_write(r, 1 + RIG_RING_SLOTS, &v), 0));
        cr_assert(eq(int, rig_take(e, 1, &seq, &point, &got), -EAGAIN));
        cr_assert(eq(int, rig_take(e, 1 + RIG_RING_SLOTS, &seq, &point, &got), 0));
        cr_assert(eq(u64, point, 1 + RIG_RING_SLOTS));
        /* Every slot is free again: the ring takes a whole ring of writes. */
        for (unsigned i = 0; i < RIG_RING_SLOTS; i++)
                cr_assert(eq(int, rig_write(r, 70, &v), 0));
        rig_close(r);
        rig_close(e);
}

Test(rig_chan, a_point_ring_the_rig_broke_is_opened_again_and_the_next_rig_reads_it)
{
        struct rig *e = engine_side(), *r;
        int efd = dup(rig_fd(e));
        unsigned char *base;
        struct ring_hdr *out;
        struct stat st;
        uint64_t point, skipped;
        double outs[2] = { 1.5, 1 }, t;

        cr_assert(eq(int, fstat(efd, &st), 0));
        base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, efd, 0);
        cr_assert(base != MAP_FAILED);
        out = (struct ring_hdr *)(base + ((struct rig_hdr *)base)->out_off);
        cr_assert(eq(int, rig_attach(dup(rig_fd(e)), &r), 0));
        cr_assert(eq(int, rig_publish(e, 1, 0.1, outs), 0));
        /* The rig moves the ring's head past its tail, and goes. */
        atomic_store(&out->head, atomic_load(&out->tail) + 1000);
        rig_close(r);
        /* Enough points to fill the ring: the engine reads the head, finds it broken. */
        for (uint64_t p = 2; p < 3 * RIG_RING_SLOTS; p++)
                cr_assert(eq(int, rig_publish(e, p, 0.1 * (double)p, outs), 0), "point %llu",
                          (unsigned long long)p);
        cr_assert(eq(int, rig_attach(dup(rig_fd(e)), &r), 0));
        outs[0] = 0;
        cr_assert(eq(int, rig_read(r, &point, &t, outs, &skipped), 0));
        cr_assert(eq(u64, point, 3 * RIG_RING_SLOTS - 1));
        cr_assert(eq(dbl, outs[0], 1.5));
        munmap(base, (size_t)st.st_size);
        close(efd);
        rig_close(r);
        rig_close(e);
}

/*
 * One rig at a time (the rings have one writer and one reader): a second
 * claim is refused while the first rig holds the channel, and taken once
 * it closed; an observer that never claims is not in the way. The second
 * rig, attached while the first wrote, writes after the first's writes,
 * not over them.
 */
Test(rig_chan, a_second_rig_is_refused_until_the_first_closes)
{
        struct rig *e = engine_side(), *a, *b, *obs;
        struct rig_holder holder = { .quiet_ms = 99 };
        uint64_t seq, point;
        double v;

        cr_assert(eq(int, rig_attach(dup(rig_fd(e)), &obs), 0));
        cr_assert(eq(int, rig_attach(dup(rig_fd(e)), &a), 0));
        cr_assert(eq(int, rig_attach(dup(rig_fd(e)), &b), 0));
        cr_assert(eq(int, rig_claim(a, false, NULL), 0));
        cr_assert(rig_claim_held(a));
        cr_assert(eq(int, rig_claim(b, false, &holder), -EBUSY));
        cr_assert(not(holder.relay));
        cr_assert(holder.quiet_ms < RIG_CLAIM_GRACE_MS, "quiet for %llu ms",
                  (unsigned long long)holder.quiet_ms);
        cr_assert(not(rig_claim_held(b)));
        cr_assert(eq(int, rig_write(a, 0, (double[]){ 1 }), 0));
        rig_close(a);
        cr_assert(eq(int, rig_claim(b, false, NULL), 0));
        cr_assert(eq(int, rig_write(b, 0, (double[]){ 2 }), 0));
        cr_assert(not(rig_claim_held(obs)));
        cr_assert(eq(int, rig_take(e, 0, &seq, &point, &v), 0));
        cr_assert(eq(dbl, v, 1));
        cr_assert(eq(int, rig_take(e, 0, &seq, &point, &v), 0));
        cr_assert(eq(dbl, v, 2));
        cr_assert(eq(int, rig_take(e, 0, &seq, &point, &v), -EAGAIN));
        rig_close(b);
        /* A relay's claim says so to whoever is refused. */
        cr_assert(eq(int, rig_attach(dup(rig_fd(e)), &a), 0));
        cr_assert(eq(int, rig_attach(dup(rig_fd(e)), &b), 0));
        cr_assert(eq(int, rig_claim(a, true, NULL), 0));
        cr_assert(eq(int, rig_claim(b, false, &holder), -EBUSY));
        cr_assert(holder.relay);
        rig_close(a);
        rig_close(b);
        rig_close(obs);
        rig_close(e);
}

/*
 * A rig that vanished (no beat within the timeout, its claim older than
 * the grace) is replaced by the next rig's claim; the one replaced gets
 * -EOWNERDEAD from every call and touches neither the rings nor the
 * heartbeat again. The claim's time is set back in the mapping, as the
 * passing of RIG_CLAIM_GRACE_MS would.
 */
Test(rig_chan, a_vanished_rig_is_replaced_and_stays_off_the_channel)
{
        struct rig *e = engine_side(), *a, *b;
        struct rig_hdr *h = mmap(NULL, sizeof(*h), PROT_READ | PROT_WRITE, MAP_SHARED, rig_fd(e),
                                 0);
        uint64_t seq, point, hb, old = (rig_now_ns() / 1000000u - 2 * RIG_CLAIM_GRACE_MS) << 20;
        double v, t, outs[2];
        struct timespec now;

        cr_assert(h != MAP_FAILED);
        cr_assert(eq(int, rig_attach(dup(rig_fd(e)), &a), 0));
        cr_assert(eq(int, rig_attach(dup(rig_fd(e)), &b), 0));
        cr_assert(eq(int, rig_claim(a, false, NULL), 0));
        /* a claimed long ago and never beat: it vanished. */
        atomic_store(&h->claim, old | (atomic_load(&h->claim) & 0xfffff));
        cr_assert(eq(int, rig_claim(b, false, NULL), 0));
        cr_assert(not(rig_claim_held(a)));
        hb = rig_heartbeat(e);
        clock_gettime(CLOCK_MONOTONIC, &now);
        cr_assert(eq(int, rig_write(a, 0, (double[]){ 5 }), -EOWNERDEAD));
        cr_assert(eq(int, rig_wait(a, &now), -EOWNERDEAD));
        cr_assert(eq(int, rig_read(a, &point, &t, outs, &seq), -EOWNERDEAD));
        cr_assert(eq(u64, rig_heartbeat(e), hb));
        cr_assert(eq(int, rig_take(e, 0, &seq, &point, &v), -EAGAIN));
        /* Closing the replaced rig leaves the new claim alone. */
        rig_close(a);
        cr_assert(rig_claim_held(b));
        cr_assert(eq(int, rig_claim_renew(b), 0));
        cr_assert(rig_claim_held(b));
        cr_assert(eq(int, rig_write(b, 0, (double[]){ 6 }), 0));
        cr_assert(eq(int, rig_take(e, 0, &seq, &point, &v), 0));
        cr_assert(eq(dbl, v, 6));
        rig_close(b);
        /* A claim and a heartbeat far in the future (a hostile rig's) hold nothing. */
        atomic_store(&h->claim, UINT64_MAX);
        atomic_store(&h->heartbeat, UINT64_MAX - 1);
        cr_assert(eq(int, rig_attach(dup(rig_fd(e)), &b), 0));
        cr_assert(eq(int, rig_claim(b, false, NULL), 0));
        cr_assert(rig_claim_held(b));
        rig_close(b);
        munmap(h, sizeof(*h));
        rig_close(e);
}

/*
 * The engine's end: the points it published before stay readable, then
 * every call of the rig says the session is gone, and a rig waiting
 * without a deadline returns instead of waiting for ever.
 */
Test(rig_chan, a_rig_reads_what_was_published_before_the_end_then_is_told)
{
        struct rig *e = engine_side(), *r;
        uint64_t point, skipped;
        double v = 1, outs[2] = { 2.5, 0 }, t;

        cr_assert(eq(int, rig_attach(dup(rig_fd(e)), &r), 0));
        cr_assert(eq(int, rig_publish(e, 0, 0, outs), 0));
        rig_end(e);
        rig_close(e);
        cr_assert(eq(int, rig_wait(r, NULL), 0));
        cr_assert(eq(int, rig_read(r, &point, &t, outs, &skipped), 0));
        cr_assert(eq(u64, point, 0));
        cr_assert(eq(dbl, outs[0], 2.5));
        cr_assert(eq(int, rig_read(r, &point, &t, outs, &skipped), -EPIPE));
        cr_assert(eq(int, rig_wait(r, NULL), -EPIPE));
        cr_assert(eq(int, rig_write(r, 1, &v), -EPIPE));
        rig_end(r);     /* the rig's side cannot end the session: a no-op */
        rig_close(r);
}

/*
 * A rig that scribbles over the whole mapping (the header, the port
 * table, the rings' geometry and positions), then goes: the channel was
 * refused to every later rig for the session's life. The engine writes
 * the fixed parts back before it hands the channel to the next rig
 * (rig_restore()), which takes the broken positions over and exchanges
 * records with the ports as the engine made them.
 */
Test(rig_chan, a_channel_an_earlier_rig_scribbled_over_is_restored_for_the_next)
{
        struct rig *e = engine_side(), *r;
        int efd = dup(rig_fd(e));
        const struct rig_port *pt;
        unsigned char *base;
        struct stat st;
        uint64_t seq, point, skipped;
        double v = 5, got, outs[2] = { 2.5, 0 }, t;
        uint32_t n;
        int rc = -1;

        cr_assert(eq(int, fstat(efd, &st), 0));
        base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, efd, 0);
        cr_assert(base != MAP_FAILED);
        cr_assert(eq(int, rig_publish(e, 1, 0.1, outs), 0));
        memset(base, 0xa5, (size_t)st.st_size);
        cr_assert(rig_attach(dup(rig_fd(e)), &r) < 0);
        rig_restore(e);
        cr_assert(eq(int, rig_attach(dup(rig_fd(e)), &r), 0));
        pt = rig_ports(r, false, &n);
        cr_assert(eq(u32, n, 1));
        cr_assert(eq(str, (char *)pt[0].name, "u"));
        cr_assert(eq(dbl, pt[0].safe, -3));
        cr_assert(eq(int, rig_claim(r, false, NULL), 0));
        cr_assert(eq(int, rig_write(r, 2, &v), 0));
        /* The engine may find its ring broken once and open it again: the next write is taken. */
        for (int i = 0; i < 4 && (rc = rig_take(e, 2, &seq, &point, &got)) != 0; i++) {
                cr_assert(rc == -EPROTO || rc == -EBADMSG, "rig_take: %d", rc);
                cr_assert(eq(int, rig_write(r, 2, &v), 0));
        }
        cr_assert(eq(int, rc, 0));
        cr_assert(eq(dbl, got, 5));
        /* Its first read may find the point ring's positions broken and read on from there. */
        cr_assert(eq(int, rig_publish(e, 2, 0.2, outs), 0));
        rc = rig_read(r, &point, &t, outs, &skipped);
        if (rc == -EAGAIN) {
                cr_assert(eq(int, rig_publish(e, 3, 0.3, outs), 0));
                rc = rig_read(r, &point, &t, outs, &skipped);
        }
        cr_assert(eq(int, rc, 0));
        cr_assert(point == 2 || point == 3, "point %llu", (unsigned long long)point);
        cr_assert(eq(dbl, outs[0], 2.5));
        munmap(base, (size_t)st.st_size);
        close(efd);
        rig_close(r);
        rig_close(e);
}
