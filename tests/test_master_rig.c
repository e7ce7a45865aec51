/*
 * master_rig: rig ports through the rig channel (shm/rig.h), with the rig
 * played by the test on its own mapping of the memfd, point by point:
 * a write lands at its point exactly once and whole, late and missing
 * writes and bad ones are counted and the session goes on, a rig that
 * stops beating gets its policy (hold, safe, pause); an attached rig counts
 * in the workers' spin hint while its master steps; and the ports a
 * scenario may not declare are refused with the reason.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "engine/instance/inst_int.h"
#include "shm/channel.h"
#include "shm/rig.h"
#include "test_master_sys.h"

static bool has_error(const struct msys *x, const char *text)
{
        for (size_t i = 0; i < x->diags.n; i++)
                if (x->diags.v[i].severity == DIAG_ERROR && strstr(x->diags.v[i].message, text))
                        return true;
        return false;
}

/*
 * Long enough that a slow step never looks like a vanished rig: a rig
 * vanishes only when a test says so (vanish()).
 */
#define TIMEOUT_MS 10000u

/* spec loaded and started, and a rig attached to its channel. */
static struct rig *attach_spec(struct msys *x, const struct msys_spec *spec)
{
        struct rig *r;
        int fd;

        msys_load(x, spec);
        msys_start(x);
        fd = dup(master_rig_fd(x->m));
        cr_assert(fd >= 0);
        cr_assert(eq(int, rig_attach(fd, &r), 0));
        return r;
}

/* One Feedthrough: a rig writes Float64_input and Int32_input, reads both outputs. */
static struct rig *load(struct msys *x, const char *policy)
{
        char attrs[512];
        struct msys_spec spec = {
                .elements = MSYS_COMP("ft", "Feedthrough"),
                .stop = 1.0,
                .attrs = attrs,
        };

        snprintf(attrs, sizeof(attrs), "stepSize=\"0.01\" rigInputs=\"ft.Float64_input=-1 "
                 "ft.Int32_input=-1\" rigOutputs=\"ft.Float64_output ft.Int32_output\" "
                 "rigPolicy=\"%s\" rigTimeoutMs=\"%u\"", policy, TIMEOUT_MS);
        return attach_spec(x, &spec);
}

/* The outputs of the point the master is at, as the rig reads them. */
static uint64_t read_point(struct rig *r, double *vals)
{
        uint64_t point, skipped;
        double t;

        cr_assert(eq(int, rig_read(r, &point, &t, vals, &skipped), 0));
        return point;
}

static void step(struct msys *x)
{
        cr_assert(eq(int, master_step(x->m, 1), MASTER_RUNNING), "%s", master_message(x->m));
}

/*
 * The rig stops beating: its last heartbeat is moved back to the clock's
 * start, past any timeout, so the master's next point sees it gone
 * whatever the time the steps take. Its next write or wait beats again.
 */
static void vanish(struct rig *r)
{
        struct rig_hdr *h = mmap(NULL, sizeof(*h), PROT_READ | PROT_WRITE, MAP_SHARED,
                                 rig_fd(r), 0);

        cr_assert(h != MAP_FAILED);
        cr_assert(rig_now_ns() > 1 + TIMEOUT_MS * 1000000ull);
        atomic_store(&h->heartbeat, 1);
        munmap(h, sizeof(*h));
}

Test(master_rig, each_write_lands_whole_at_its_point_exactly_once)
{
        struct master_rig_stats st;
        uint32_t n_in, n_out;
        const struct rig_port *in;
        double out[2];
        struct msys x;
        struct rig *r = load(&x, "hold");

        in = rig_ports(r, false, &n_in);
        (void) rig_ports(r, true, &n_out);
        cr_assert(eq(u32, n_in, 2));
        cr_assert(eq(u32, n_out, 2));
        cr_assert(eq(str, (char *)in[0].name, "ft.Float64_input"));
        cr_assert(eq(u32, in[1].type, RIG_INT32));
        for (uint64_t p = 0; p < 50; p++) {
                double v[2] = { (double)p * 3, (double)p * 3 };

                cr_assert(eq(u64, read_point(r, out), p));
                cr_assert(eq(int, rig_write(r, p, v), 0));
                step(&x);
        }
        /* Row k holds the outputs of the step from k - 1, which took the write for k - 1. */
        for (size_t i = 0; i < x.n_rows; i++) {
                const struct mrow *row = &x.rows[i];
                double f = row->v[msys_col(&x, "ft.Float64_output")];
                double n = row->v[msys_col(&x, "ft.Int32_output")];

                if (row->point == 0)
                        continue;
                cr_assert(eq(dbl, f, (double)(row->point - 1) * 3), "point %llu",
                          (unsigned long long)row->point);
                cr_assert(eq(dbl, n, f));
        }
        master_rig_stats(x.m, &st);
        cr_assert(eq(u64, st.applied, 50));
        cr_assert(eq(u64, st.late + st.missing + st.bad + st.dropped, 0));
        cr_assert(eq(int, st.state, MASTER_RIG_ATTACHED));
        rig_close(r);
        msys_fini(&x);
}

Test(master_rig, the_newest_of_several_writes_wins_and_later_points_wait)
{
        struct master_rig_stats st;
        double out[2], a[2] = { 1, 1 }, b[2] = { 2, 2 }, c[2] = { 7, 7 };
        struct msys x;
        struct rig *r = load(&x, "hold");

        (void) read_point(r, out);
        cr_assert(eq(int, rig_write(r, 0, a), 0));
        cr_assert(eq(int, rig_write(r, 0, b), 0));
        cr_assert(eq(int, rig_write(r, 2, c), 0));     /* for point 2: not before */
        step(&x);
        step(&x);
        (void) read_point(r, out);
        cr_assert(eq(dbl, out[0], 2));
        cr_assert(eq(dbl, out[1], 2));
        step(&x);
        (void) read_point(r, out);
        cr_assert(eq(dbl, out[0], 7));
        master_rig_stats(x.m, &st);
        cr_assert(eq(u64, st.applied, 2));
        cr_assert(eq(u64, st.missing, 1));      /* point 1 had none */
        rig_close(r);
        msys_fini(&x);
}

Test(master_rig, late_and_bad_writes_are_counted_and_the_session_goes_on)
{
        struct master_rig_stats st;
        double out[2], late[2] = { 4, 4 }, nan_int[2] = { 1, NAN }, big[2] = { 1, 1e12 },
               frac[2] = { 1, 0.5 };
        struct msys x;
        struct rig *r = load(&x, "hold");

        step(&x);
        step(&x);
        rig_beat(r);
        cr_assert(eq(int, rig_write(r, 0, late), 0));  /* for point 0, taken at 2 */
        cr_assert(eq(int, rig_write(r, 2, nan_int), 0));
        cr_assert(eq(int, rig_write(r, 2, big), 0));
        cr_assert(eq(int, rig_write(r, 2, frac), 0));
        step(&x);
        (void) read_point(r, out);
        cr_assert(eq(dbl, out[0], 4));
        master_rig_stats(x.m, &st);
        cr_assert(eq(u64, st.late, 1));
        cr_assert(eq(u64, st.bad, 3));
        cr_assert(eq(u64, st.applied, 1));
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        rig_close(r);
        msys_fini(&x);
}

Test(master_rig, garbage_in_the_write_ring_is_counted_and_the_next_write_applies)
{
        struct master_rig_stats st;
        double out[2], v[2] = { 6, 6 };
        struct msys x;
        struct rig *r = load(&x, "hold");
        int fd = dup(master_rig_fd(x.m));
        struct rig_hdr *h;
        unsigned char *base;
        struct ring_hdr *in;

        cr_assert(fd >= 0);
        h = mmap(NULL, sizeof(*h), PROT_READ, MAP_SHARED, fd, 0);
        cr_assert(h != MAP_FAILED);
        base = mmap(NULL, h->total_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        cr_assert(base != MAP_FAILED);
        in = (struct ring_hdr *)(base + h->in_off);
        /* A record of no known kind, published, and a tail far beyond any the ring holds. */
        memset(base + h->in_off + sizeof(*in), 0xa5, 64);
        atomic_store(&in->tail, 3);
        rig_beat(r);
        step(&x);
        atomic_store(&in->tail, 1000000);
        step(&x);
        master_rig_stats(x.m, &st);
        cr_assert(eq(u64, st.bad, 2));
        cr_assert(eq(u64, st.applied, 0));
        /* A rig that opens the channel again writes from where the master reads. */
        rig_close(r);
        cr_assert(eq(int, rig_attach(dup(master_rig_fd(x.m)), &r), 0));
        cr_assert(eq(int, rig_write(r, 2, v), 0));
        step(&x);
        (void) read_point(r, out);
        cr_assert(eq(dbl, out[0], 6));
        master_rig_stats(x.m, &st);
        cr_assert(eq(u64, st.applied, 1));
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        munmap(base, h->total_size);
        munmap(h, sizeof(*h));
        close(fd);
        rig_close(r);
        msys_fini(&x);
}

static void vanished(const char *policy, double expect)
{
        struct master_rig_stats st;
        double out[2], v[2] = { 5, 5 };
        struct msys x;
        struct rig *r = load(&x, policy);

        (void) read_point(r, out);
        cr_assert(eq(int, rig_write(r, 0, v), 0));
        step(&x);
        vanish(r);
        step(&x);
        step(&x);
        (void) read_point(r, out);
        cr_assert(eq(dbl, out[0], expect));
        cr_assert(eq(dbl, out[1], expect));
        master_rig_stats(x.m, &st);
        cr_assert(eq(int, st.state, MASTER_RIG_VANISHED));
        /* A rig that beats again is attached again, and its writes apply. */
        v[0] = v[1] = 9;
        cr_assert(eq(int, rig_write(r, 3, v), 0));
        step(&x);
        step(&x);
        (void) read_point(r, out);
        cr_assert(eq(dbl, out[0], 9));
        master_rig_stats(x.m, &st);
        cr_assert(eq(int, st.state, MASTER_RIG_ATTACHED));
        rig_close(r);
        msys_fini(&x);
}

/*
 * Writes the rig queued for later points before it went silent are not
 * applied once it has vanished: under safe, every point after it holds the
 * safe values, and the queued writes count as late.
 */
Test(master_rig, writes_queued_before_a_rig_vanished_are_not_applied)
{
        struct master_rig_stats st;
        double out[2], v[2] = { 5, 5 };
        struct msys x;
        struct rig *r = load(&x, "safe");

        (void) read_point(r, out);
        cr_assert(eq(int, rig_write(r, 0, v), 0));
        step(&x);
        for (uint64_t p = 2; p <= 5; p++) {
                v[0] = v[1] = (double)(100 + p);
                cr_assert(eq(int, rig_write(r, p, v), 0));
        }
        vanish(r);
        for (int i = 0; i < 6; i++) {
                step(&x);
                (void) read_point(r, out);
                cr_assert(eq(dbl, out[0], -1), "step %d", i);
                cr_assert(eq(dbl, out[1], -1), "step %d", i);
        }
        master_rig_stats(x.m, &st);
        cr_assert(eq(int, st.state, MASTER_RIG_VANISHED));
        cr_assert(eq(u64, st.applied, 1));
        cr_assert(eq(u64, st.late, 4));
        rig_close(r);
        msys_fini(&x);
}

/* Every integer type's full range reaches the FMU, UInt64 too. */
Test(master_rig, a_uint64_rig_input_is_applied)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("ft", "Feedthrough"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\" rigInputs=\"ft.UInt64_input ft.UInt32_input\" "
                         "rigOutputs=\"ft.UInt64_output ft.UInt32_output\" rigTimeoutMs=\"10000\"",
        };
        struct master_rig_stats st;
        double out[2], v[2] = { 1000, 7 };
        struct msys x;
        struct rig *r = attach_spec(&x, &spec);

        (void) read_point(r, out);
        cr_assert(eq(int, rig_write(r, 0, v), 0));
        step(&x);
        (void) read_point(r, out);
        cr_assert(eq(dbl, out[0], 1000));
        cr_assert(eq(dbl, out[1], 7));
        master_rig_stats(x.m, &st);
        cr_assert(eq(u64, st.applied, 1));
        cr_assert(eq(u64, st.bad, 0));
        rig_close(r);
        msys_fini(&x);
}

/* A rig with inputs only is told every point, so that it can write for the next. */
Test(master_rig, a_rig_with_inputs_only_reads_every_point)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("ft", "Feedthrough"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\" rigInputs=\"ft.Float64_input\" "
                         "rigTimeoutMs=\"10000\"",
                .settings = MSYS_RECORD("ft.Float64_output"),
        };
        struct master_rig_stats st;
        double v = 0, none[1];
        struct msys x;
        struct rig *r = attach_spec(&x, &spec);

        for (uint64_t p = 0; p < 5; p++) {
                cr_assert(eq(u64, read_point(r, none), p));
                v = (double)(10 + p);
                cr_assert(eq(int, rig_write(r, p, &v), 0));
                step(&x);
        }
        master_rig_stats(x.m, &st);
        cr_assert(eq(u64, st.applied, 5));
        cr_assert(eq(u64, st.late + st.missing, 0));
        cr_assert(eq(dbl, x.rows[x.n_rows - 1].v[msys_col(&x, "ft.Float64_output")], 14));
        rig_close(r);
        msys_fini(&x);
}

/*
 * A restore discards the writes pending for the run it left: a write for a
 * later point would otherwise block the rig's first write after it, and
 * come back as a value of the old run when its point came round.
 */
Test(master_rig, a_restore_discards_the_writes_of_the_run_it_left)
{
        struct master_rig_stats st0, st;
        struct master_saved *sv = NULL;
        double out[2], v[2];
        uint64_t state = 0;
        struct msys x;
        struct rig *r = load(&x, "hold");

        (void) read_point(r, out);
        v[0] = v[1] = 1;
        cr_assert(eq(int, rig_write(r, 0, v), 0));
        step(&x);
        cr_assert(eq(u64, read_point(r, out), 1));
        cr_assert(eq(int, inst_get_fmu_state(session_inst(x.s, 0), &state), INST_OK));
        cr_assert(eq(int, master_save(x.m, &sv), 0), "%s", master_message(x.m));
        master_rig_stats(x.m, &st0);
        v[0] = v[1] = 10;
        cr_assert(eq(int, rig_write(r, 1, v), 0));
        step(&x);
        (void) read_point(r, out);
        v[0] = v[1] = 30;
        cr_assert(eq(int, rig_write(r, 3, v), 0));      /* ahead, still pending */
        cr_assert(eq(int, inst_set_fmu_state(session_inst(x.s, 0), state), INST_OK));
        cr_assert(eq(int, master_restore(x.m, sv), 0));
        cr_assert(eq(dbl, master_time(x.m), master_saved_time(sv)));
        /* The rig's first write for the restored run applies at its point. */
        v[0] = v[1] = 99;
        cr_assert(eq(int, rig_write(r, 1, v), 0));
        step(&x);
        cr_assert(eq(u64, read_point(r, out), 2));
        cr_assert(eq(dbl, out[0], 99));
        step(&x);
        step(&x);
        (void) read_point(r, out);
        cr_assert(eq(dbl, out[0], 99), "a write of the old run came back");
        master_rig_stats(x.m, &st);
        cr_assert(eq(u64, st.late - st0.late, 1));
        master_saved_free(sv);
        rig_close(r);
        msys_fini(&x);
}

/* The spin hint the master gave the worker with its last request (shm/channel.h). */
static uint32_t hint(struct msys *x)
{
        return chan_active(session_inst(x->s, 0)->chan);
}

Test(master_rig, an_attached_rig_counts_in_the_workers_spin_hint)
{
        double out[2], v[2] = { 1, 1 };
        struct msys x;
        struct rig *r = load(&x, "hold");

        /* No rig yet: the step in flight and the master. */
        (void) read_point(r, out);
        step(&x);
        step(&x);
        cr_assert(eq(u32, hint(&x), 2));
        /* Attached (it beats): the rig yields for a cpu too, so the worker must not spin. */
        cr_assert(eq(int, rig_write(r, 2, v), 0));
        step(&x);
        step(&x);
        cr_assert(eq(u32, hint(&x), 3));
        /* Gone: counted no more. */
        vanish(r);
        step(&x);
        step(&x);
        cr_assert(eq(u32, hint(&x), 2));
        /* Back and then freed with the session: the count goes with it. */
        rig_beat(r);
        step(&x);
        step(&x);
        cr_assert(eq(u32, hint(&x), 3));
        rig_close(r);
        msys_fini(&x);
        r = load(&x, "hold");
        step(&x);
        step(&x);
        cr_assert(eq(u32, hint(&x), 2));
        rig_close(r);
        msys_fini(&x);
}

Test(master_rig, a_rig_counts_only_while_its_master_steps)
{
        struct msys_spec plain = { .elements = MSYS_COMP("ft", "Feedthrough"), .stop = 1.0,
                                   .attrs = "stepSize=\"0.01\"" };
        double out[2], v[2] = { 1, 1 };
        struct msys a, b;
        struct rig *r = load(&a, "hold");

        msys_load(&b, &plain);
        msys_start(&b);
        /* a's rig attached: counted while a steps. */
        (void) read_point(r, out);
        cr_assert(eq(int, rig_write(r, 2, v), 0));
        step(&a);
        step(&a);
        cr_assert(eq(u32, hint(&a), 3));
        /* a idle between its stepping calls: b's worker is not told of a's rig. */
        step(&b);
        cr_assert(eq(u32, hint(&b), 2));
        /* Stepping again, a counts its rig again. */
        step(&a);
        cr_assert(eq(u32, hint(&a), 3));
        rig_close(r);
        msys_fini(&a);
        msys_fini(&b);
}

Test(master_rig, a_vanished_rig_under_hold_keeps_the_last_values)
{
        vanished("hold", 5);
}

Test(master_rig, a_vanished_rig_under_safe_gets_the_safe_values)
{
        vanished("safe", -1);
}

Test(master_rig, a_vanished_rig_under_pause_pauses_the_session_and_says_why)
{
        double out[2], v[2] = { 5, 5 };
        struct msys x;
        struct rig *r = load(&x, "pause");

        (void) read_point(r, out);
        cr_assert(eq(int, rig_write(r, 0, v), 0));
        step(&x);
        vanish(r);
        cr_assert(eq(int, master_run(x.m), MASTER_PAUSED));
        cr_assert(strstr(master_message(x.m), "rig vanished") != NULL, "%s", master_message(x.m));
        cr_assert(eq(u64, master_point(x.m), 2));
        /* Run again with the rig still silent: paused again, a point later. */
        cr_assert(eq(int, master_run(x.m), MASTER_PAUSED));
        cr_assert(strstr(master_message(x.m), "rig still silent") != NULL, "%s",
                  master_message(x.m));
        cr_assert(eq(u64, master_point(x.m), 3));
        /*
         * A rig that beats again lets the run go on to its end, and the
         * message says it came back instead of a pause that is over.
         */
        cr_assert(eq(int, rig_write(r, 3, v), 0));
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(strstr(master_message(x.m), "rig back at t = 0.029999999999999999 after "
                         "vanishing at t = 0.01 (rig policy pause)") != NULL, "%s",
                  master_message(x.m));
        rig_close(r);
        msys_fini(&x);
}

static void refused(const char *attrs, const char *why)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("ft", "Feedthrough") MSYS_COMP("lin", "LinearOde"),
                .connections = MSYS_CONN("ft", "Float64_output", "lin", "u0"),
                .stop = 1.0,
                .attrs = attrs,
        };
        struct msys x;

        cr_assert(eq(int, msys_load_try(&x, &spec), -EINVAL));
        cr_assert(has_error(&x, why), "no error '%s'", why);
        msys_fini(&x);
}

Test(master_rig, a_connected_input_is_refused_with_its_connection_named)
{
        refused("rigInputs=\"lin.u0\"", "rig input: connected from 'ft.Float64_output'");
}

Test(master_rig, unknown_non_numeric_misdirected_and_bad_safe_ports_are_refused)
{
        refused("rigInputs=\"ft.nothing\"", "rig input: no such variable");
        refused("rigInputs=\"ft.String_input\"", "String: only Float32, Float64, integer and "
                "Boolean scalars are rig ports");
        refused("rigInputs=\"ft.Float64_output\"", "not an input");
        refused("rigOutputs=\"ft.Float64_input\"", "not an output");
        refused("rigInputs=\"ft.Int32_input=0.5\"", "safe value \"0.5\" is not a Int32 value");
        refused("rigInputs=\"ft.Float64_input=nan\"", "safe value \"nan\" is not a Float64 value");
        refused("rigInputs=\"ft.Float32_input=1e300\"",
                "safe value \"1e300\" is not a Float32 value");
        refused("rigInputs=\"ft.Int32_input ft.Int32_input\"", "named twice");
        refused("rigPolicy=\"later\"", "rigPolicy \"later\": expected hold, safe or pause");
        refused("rigTimeoutMs=\"0\"", "rigTimeoutMs: expected 1 to 60000 ms");
}

/* A Boolean rig input's safe value is written as set takes it, true or false, or 1 and 0. */
Test(master_rig, a_boolean_safe_value_may_be_true_or_false)
{
        struct msys x;

        msys_load(&x, &(struct msys_spec){
                .elements = MSYS_COMP("ft", "Feedthrough"),
                .stop = 1.0,
                .attrs = "rigInputs=\"ft.Boolean_input=true\" rigPolicy=\"safe\"",
        });
        cr_assert(eq(sz, x.sc->rig.n_in, 1));
        cr_assert(x.sc->rig.in[0].has_safe);
        cr_assert(eq(dbl, x.sc->rig.in[0].safe, 1.0));
        msys_fini(&x);
}

Test(master_rig, more_ports_than_the_bound_are_refused)
{
        char attrs[8192] = "rigOutputs=\"";

        for (unsigned i = 0; i <= RIG_PORTS_MAX; i++)
                strcat(attrs, i % 2 ? "ft.Float64_output " : "ft.Int32_output ");
        strcat(attrs, "\"");
        refused(attrs, "rig outputs: 257 ports, more than 256");
}
