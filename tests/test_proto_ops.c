/*
 * proto_ops: every typed request, encoded, decoded as the daemon does
 * (pv_decode, proto_req_decode, the op's decoder) and compared; and the
 * strictness of the decoders: unknown keys, wrong types, embedded NULs,
 * counts and ranges.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "proto_fixture.h"

static struct msg m;
static struct pw w;
static void *mem;
static char err[256];

static void setup(void)
{
        cr_assert(pw_init(&w) == 0);
        mem = NULL;
        err[0] = '\0';
}

static void teardown(void)
{
        msg_fini(&m);
        pw_fini(&w);
        free(mem);
}

TestSuite(proto_ops, .init = setup, .fini = teardown);

#define S(lit) ((struct proto_str){ (lit), sizeof(lit) - 1 })

Test(proto_ops, hello_round_trips)
{
        struct proto_hello a = { .version = PROTO_VERSION, .client = S("fmuctl 0.1.0") }, b;
        const struct pv *args;

        proto_hello_encode(&w, 1, &a);
        args = msg_req(&m, &w, PROTO_OP_HELLO, 1);
        cr_assert(proto_hello_decode(args, &b, err, sizeof(err)) == 0, "%s", err);
        cr_assert(b.version == PROTO_VERSION && str_eq(b.client, "fmuctl 0.1.0"));
}

Test(proto_ops, hello_needs_a_version)
{
        struct proto_hello b;
        const struct pv *args;

        proto_req_begin(&w, 1, PROTO_OP_HELLO, 1);
        pw_str(&w, "client");
        pw_str(&w, "x");
        args = msg_req(&m, &w, PROTO_OP_HELLO, 1);
        cr_assert(proto_hello_decode(args, &b, err, sizeof(err)) == -EBADMSG);
        cr_assert(strstr(err, "version") != NULL, "%s", err);
}

Test(proto_ops, load_round_trips_with_every_override)
{
        static const struct proto_assign mr[] = { { S("Plant"), S("4") }, { S("Ctrl"), S("2") } };
        static const struct proto_assign st[] = { { S("Plant.k"), S("1.5") } };
        static const struct proto_str rec[] = { S("Plant.x"), S("Ctrl.u"), S("Plant.v") };
        struct proto_load a = {
                .path = S("/srv/loop.ssp"), .out = S("/tmp/o.csv"),
                .has_start = true, .start = -1.0, .has_stop = true, .stop = 10.0,
                .has_step = true, .step = 0.001, .has_budget = true, .budget = INFINITY,
                .has_warp = true, .warp = 0.0, .has_decimation = true, .decimation = 7,
                .has_tolerance = true, .tolerance = 1e-6,
                .algorithm = S("gauss-seidel"),
                .sandbox = S("basic"), .strict = true, .transient = true,
                .n_multirate = 2, .multirate = mr, .n_starts = 1, .starts = st,
                .n_record = 3, .record = rec,
        }, b;
        const struct pv *args;

        proto_load_encode(&w, 2, &a);
        args = msg_req(&m, &w, PROTO_OP_LOAD, 2);
        cr_assert(proto_load_decode(args, &b, &mem, err, sizeof(err)) == 0, "%s", err);
        cr_assert(str_eq(b.path, "/srv/loop.ssp") && str_eq(b.out, "/tmp/o.csv"));
        cr_assert(b.has_start && b.start == -1.0 && b.has_stop && b.stop == 10.0);
        cr_assert(b.has_step && b.step == 0.001 && b.has_budget && isinf(b.budget));
        cr_assert(b.has_warp && b.warp == 0.0 && b.has_decimation && b.decimation == 7);
        cr_assert(b.has_tolerance && b.tolerance == 1e-6);
        cr_assert(str_eq(b.algorithm, "gauss-seidel"));
        cr_assert(str_eq(b.sandbox, "basic"));
        cr_assert(b.strict && b.transient);
        cr_assert(b.n_multirate == 2 && str_eq(b.multirate[1].name, "Ctrl") &&
                  str_eq(b.multirate[1].value, "2"));
        cr_assert(b.n_starts == 1 && str_eq(b.starts[0].name, "Plant.k") &&
                  str_eq(b.starts[0].value, "1.5"));
        cr_assert(b.n_record == 3 && str_eq(b.record[0], "Plant.x") &&
                  str_eq(b.record[2], "Plant.v"));
        /* The three arrays live in the one block the caller frees. */
        cr_assert((const void *)b.multirate == mem);
}

Test(proto_ops, load_minimal_takes_the_defaults)
{
        struct proto_load a = { .path = S("/a.fmu") }, b;
        const struct pv *args;

        proto_load_encode(&w, 3, &a);
        args = msg_req(&m, &w, PROTO_OP_LOAD, 3);
        cr_assert(args->m.n == 1, "only path is sent");
        cr_assert(proto_load_decode(args, &b, &mem, err, sizeof(err)) == 0, "%s", err);
        cr_assert(str_eq(b.path, "/a.fmu") && b.out.len == 0 && b.out.ptr != NULL);
        cr_assert(!b.has_start && !b.has_stop && !b.has_step && !b.has_budget && !b.has_warp &&
                  !b.has_decimation && !b.has_tolerance);
        cr_assert(b.algorithm.len == 0 && b.sandbox.len == 0 && !b.n_multirate && !b.n_starts && !b.n_record);
        cr_assert(!b.strict);
        cr_assert(mem == NULL);
}

/* Build {id, op, args: {key: <value written by fn>, ...}} with extra pairs; decode the args. */
typedef void args_fn(struct pw *w);

static const struct pv *args_of(enum proto_op op, uint32_t n, args_fn *fn)
{
        proto_req_begin(&w, 9, op, n);
        fn(&w);
        return msg_req(&m, &w, op, 9);
}

static int load_with(uint32_t n, args_fn *fn)
{
        struct proto_load b;
        const struct pv *args = args_of(PROTO_OP_LOAD, n, fn);

        return proto_load_decode(args, &b, &mem, err, sizeof(err));
}

static void unknown_key(struct pw *p)
{
        pw_str(p, "path");
        pw_str(p, "/a.ssp");
        pw_str(p, "stopTime");
        pw_f64(p, 3);
}

static void path_relative(struct pw *p)
{
        pw_str(p, "path");
        pw_str(p, "a.ssp");
}

static void path_nul(struct pw *p)
{
        pw_str(p, "path");
        pw_strn(p, "/a\0.ssp", 7);
}

static void path_int(struct pw *p)
{
        pw_str(p, "path");
        pw_u64(p, 1);
}

static void stop_str(struct pw *p)
{
        pw_str(p, "path");
        pw_str(p, "/a");
        pw_str(p, "stop");
        pw_str(p, "10");
}

static void strict_str(struct pw *p)
{
        pw_str(p, "path");
        pw_str(p, "/a");
        pw_str(p, "strict");
        pw_str(p, "yes");
}

static void transient_str(struct pw *p)
{
        pw_str(p, "path");
        pw_str(p, "/a");
        pw_str(p, "transient");
        pw_str(p, "yes");
}

static void stop_int(struct pw *p)
{
        pw_str(p, "path");
        pw_str(p, "/a");
        pw_str(p, "stop");
        pw_u64(p, 10);
}

static void stop_nan(struct pw *p)
{
        pw_str(p, "path");
        pw_str(p, "/a");
        pw_str(p, "stop");
        pw_f64(p, NAN);
}

static void step_zero(struct pw *p)
{
        pw_str(p, "path");
        pw_str(p, "/a");
        pw_str(p, "step");
        pw_f64(p, 0);
}

static void tolerance_one(struct pw *p)
{
        pw_str(p, "path");
        pw_str(p, "/a");
        pw_str(p, "tolerance");
        pw_f64(p, 1.0);
}

static void tolerance_inf(struct pw *p)
{
        pw_str(p, "path");
        pw_str(p, "/a");
        pw_str(p, "tolerance");
        pw_f64(p, INFINITY);
}

static void algo_bad(struct pw *p)
{
        pw_str(p, "path");
        pw_str(p, "/a");
        pw_str(p, "algorithm");
        pw_str(p, "newton");
}

static void record_nul(struct pw *p)
{
        pw_str(p, "path");
        pw_str(p, "/a");
        pw_str(p, "record");
        pw_array(p, 2);
        pw_str(p, "a.x");
        pw_strn(p, "b\0y", 3);
}

static void multirate_int(struct pw *p)
{
        pw_str(p, "path");
        pw_str(p, "/a");
        pw_str(p, "multirate");
        pw_map(p, 1);
        pw_str(p, "Plant");
        pw_u64(p, 4);
}

static void starts_key_nul(struct pw *p)
{
        pw_str(p, "path");
        pw_str(p, "/a");
        pw_str(p, "starts");
        pw_map(p, 1);
        pw_strn(p, "P\0.k", 4);
        pw_str(p, "1");
}

static void no_path(struct pw *p)
{
        pw_str(p, "out");
        pw_str(p, "/o.csv");
}

Test(proto_ops, load_refuses_unknown_keys_naming_them)
{
        cr_assert(load_with(2, unknown_key) == -EBADMSG);
        cr_assert(strstr(err, "'stopTime'") != NULL, "%s", err);
}

Test(proto_ops, load_refuses_bad_paths)
{
        cr_assert(load_with(1, path_relative) == -EBADMSG);
        cr_assert(strstr(err, "args.path") != NULL, "%s", err);
        msg_fini(&m);
        cr_assert(load_with(1, path_nul) == -EBADMSG);
        cr_assert(strstr(err, "NUL") != NULL, "%s", err);
        msg_fini(&m);
        cr_assert(load_with(1, path_int) == -EBADMSG);
        cr_assert(strstr(err, "args.path") != NULL, "%s", err);
        msg_fini(&m);
        cr_assert(load_with(1, no_path) == -EBADMSG);
        cr_assert(strstr(err, "args.path: missing") != NULL, "%s", err);
}

Test(proto_ops, load_refuses_wrong_types_and_ranges_naming_the_key)
{
        cr_assert(load_with(2, stop_str) == -EBADMSG);
        cr_assert(strstr(err, "args.stop") != NULL, "%s", err);
        msg_fini(&m);
        cr_assert(load_with(2, stop_nan) == -EBADMSG);
        cr_assert(strstr(err, "args.stop") != NULL, "%s", err);
        msg_fini(&m);
        cr_assert(load_with(2, step_zero) == -EBADMSG);
        cr_assert(strstr(err, "args.step") != NULL, "%s", err);
        msg_fini(&m);
        cr_assert(load_with(2, tolerance_one) == -EBADMSG);
        cr_assert(strstr(err, "args.tolerance: must be above 0 and below 1") != NULL, "%s", err);
        msg_fini(&m);
        cr_assert(load_with(2, tolerance_inf) == -EBADMSG);
        cr_assert(strstr(err, "args.tolerance") != NULL, "%s", err);
        msg_fini(&m);
        cr_assert(load_with(2, algo_bad) == -EBADMSG);
        cr_assert(strstr(err, "args.algorithm") != NULL, "%s", err);
        msg_fini(&m);
        cr_assert(load_with(2, record_nul) == -EBADMSG);
        cr_assert(strstr(err, "args.record[1]") != NULL, "%s", err);
        msg_fini(&m);
        cr_assert(load_with(2, multirate_int) == -EBADMSG);
        cr_assert(strstr(err, "args.multirate") != NULL, "%s", err);
        msg_fini(&m);
        cr_assert(load_with(2, starts_key_nul) == -EBADMSG);
        cr_assert(strstr(err, "args.starts") != NULL, "%s", err);
        msg_fini(&m);
        cr_assert(load_with(2, strict_str) == -EBADMSG);
        cr_assert(strstr(err, "args.strict: expected a boolean") != NULL, "%s", err);
        msg_fini(&m);
        cr_assert(load_with(2, transient_str) == -EBADMSG);
        cr_assert(strstr(err, "args.transient: expected a boolean") != NULL, "%s", err);
}

Test(proto_ops, load_takes_an_exact_integer_for_a_float)
{
        struct proto_load b;
        const struct pv *args = args_of(PROTO_OP_LOAD, 2, stop_int);

        cr_assert(proto_load_decode(args, &b, &mem, err, sizeof(err)) == 0, "%s", err);
        cr_assert(b.has_stop && b.stop == 10.0);
}

Test(proto_ops, target_round_trips_for_every_target_op)
{
        static const enum proto_op ops[] = { PROTO_OP_UNLOAD, PROTO_OP_START, PROTO_OP_PAUSE,
                                             PROTO_OP_RESUME, PROTO_OP_STOP, PROTO_OP_SNAPSHOT,
                                             PROTO_OP_STATUS };

        for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
                struct proto_target a = { .session = 12 + i, .generation = UINT64_MAX }, b;
                const struct pv *args;

                proto_target_encode(&w, i, ops[i], &a);
                args = msg_req(&m, &w, ops[i], i);
                cr_assert(proto_target_decode(args, &b, err, sizeof(err)) == 0, "%s", err);
                cr_assert(b.session == 12 + i && b.generation == UINT64_MAX);
                msg_fini(&m);
        }
}

static void target_negative(struct pw *p)
{
        pw_str(p, "session");
        pw_i64(p, -1);
}

static void target_extra(struct pw *p)
{
        pw_str(p, "session");
        pw_u64(p, 1);
        pw_str(p, "force");
        pw_bool(p, true);
}

Test(proto_ops, target_refuses_negative_session_and_extra_keys)
{
        struct proto_target b;
        const struct pv *args = args_of(PROTO_OP_START, 1, target_negative);

        cr_assert(proto_target_decode(args, &b, err, sizeof(err)) == -EBADMSG);
        cr_assert(strstr(err, "args.session") != NULL, "%s", err);
        msg_fini(&m);
        args = args_of(PROTO_OP_UNLOAD, 2, target_extra);
        cr_assert(proto_target_decode(args, &b, err, sizeof(err)) == -EBADMSG);
        cr_assert(strstr(err, "'force'") != NULL, "%s", err);
}

Test(proto_ops, target_defaults_to_zero)
{
        struct proto_target b = { 5, 5 };

        proto_req_begin(&w, 1, PROTO_OP_STATUS, 0);
        cr_assert(proto_target_decode(msg_req(&m, &w, PROTO_OP_STATUS, 1), &b, err,
                                      sizeof(err)) == 0);
        cr_assert(b.session == 0 && b.generation == 0);
}

Test(proto_ops, warp_step_run_until_round_trip)
{
        struct proto_warp wa = { { 1, 2 }, 2.5 }, wb;
        struct proto_step sa = { { 3, 4 }, 1000 }, sb;
        struct proto_run_until ra = { { 5, 6 }, 12.75 }, rb;

        proto_warp_encode(&w, 1, &wa);
        cr_assert(proto_warp_decode(msg_req(&m, &w, PROTO_OP_WARP, 1), &wb, err, sizeof(err)) == 0,
                  "%s", err);
        cr_assert(wb.t.session == 1 && wb.t.generation == 2 && wb.factor == 2.5);
        msg_fini(&m);
        proto_step_encode(&w, 2, &sa);
        cr_assert(proto_step_decode(msg_req(&m, &w, PROTO_OP_STEP, 2), &sb, err, sizeof(err)) == 0,
                  "%s", err);
        cr_assert(sb.t.session == 3 && sb.t.generation == 4 && sb.n == 1000);
        msg_fini(&m);
        proto_run_until_encode(&w, 3, &ra);
        cr_assert(proto_run_until_decode(msg_req(&m, &w, PROTO_OP_RUN_UNTIL, 3), &rb, err,
                                         sizeof(err)) == 0, "%s", err);
        cr_assert(rb.t.session == 5 && rb.t.generation == 6 && rb.time == 12.75);
}

Test(proto_ops, warp_and_step_refuse_out_of_range)
{
        struct proto_warp wa = { { 1, 0 }, -1 }, wb;
        struct proto_step sa = { { 1, 0 }, 0 }, sb;
        struct proto_run_until ra = { { 1, 0 }, INFINITY }, rb;

        proto_warp_encode(&w, 1, &wa);
        cr_assert(proto_warp_decode(msg_req(&m, &w, PROTO_OP_WARP, 1), &wb, err,
                                    sizeof(err)) == -EBADMSG);
        cr_assert(strstr(err, "args.factor") != NULL, "%s", err);
        msg_fini(&m);
        proto_step_encode(&w, 2, &sa);
        cr_assert(proto_step_decode(msg_req(&m, &w, PROTO_OP_STEP, 2), &sb, err,
                                    sizeof(err)) == -EBADMSG);
        cr_assert(strstr(err, "args.n") != NULL, "%s", err);
        msg_fini(&m);
        proto_run_until_encode(&w, 3, &ra);
        cr_assert(proto_run_until_decode(msg_req(&m, &w, PROTO_OP_RUN_UNTIL, 3), &rb, err,
                                         sizeof(err)) == -EBADMSG);
        cr_assert(strstr(err, "args.time") != NULL, "%s", err);
}

Test(proto_ops, step_defaults_to_one)
{
        struct proto_step sb;

        proto_req_begin(&w, 1, PROTO_OP_STEP, 1);
        pw_str(&w, "session");
        pw_u64(&w, 1);
        cr_assert(proto_step_decode(msg_req(&m, &w, PROTO_OP_STEP, 1), &sb, err, sizeof(err)) == 0);
        cr_assert(sb.n == 1);
}
