/*
 * proto_results: every result and PUB body, encoded as the daemon does and
 * decoded as a client does (unknown keys ignored, the rest strict); and
 * the fuzzer's regression inputs replayed through the request path.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
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

TestSuite(proto_results, .init = setup, .fini = teardown);

#define S(lit) ((struct proto_str){ (lit), sizeof(lit) - 1 })

Test(proto_results, hello_and_load_results_round_trip)
{
        struct proto_hello_result ha = { PROTO_VERSION, S("fmud 0.1.0"), S("ipc:///run/fmud/pub"),
                                         PROTO_MAX_MSG }, hb;
        struct proto_load_result la = { .session = 4, .generation = 1 }, lb;
        const struct pv *res;

        proto_reply_ok_begin(&w, 1);
        proto_hello_result_encode(&w, &ha);
        cr_assert(proto_hello_result_decode(msg_result(&m, &w), &hb, err, sizeof(err)) == 0, "%s",
                  err);
        cr_assert(hb.version == PROTO_VERSION && str_eq(hb.server, "fmud 0.1.0") &&
                  str_eq(hb.pub_endpoint, "ipc:///run/fmud/pub") && hb.max_msg == PROTO_MAX_MSG);
        msg_fini(&m);
        proto_reply_ok_begin(&w, 2);
        proto_load_result_encode(&w, &la);
        res = msg_result(&m, &w);
        cr_assert(proto_load_result_decode(res, &lb, err, sizeof(err)) == 0, "%s", err);
        cr_assert(lb.session == 4 && lb.generation == 1);
        /* Without warnings the key is left out, as before. */
        cr_assert(pv_get(res, "warnings") == NULL);
        cr_assert(proto_load_result_warnings(res, NULL, 0, err, sizeof(err)) == 0);
}

Test(proto_results, load_result_carries_warnings)
{
        struct proto_str warn[2] = { S("a.fmu:modelDescription.xml:6: 'p': unit"), S("second") };
        struct proto_load_result la = { .session = 4, .generation = 1, .n_warnings = 2,
                                        .warnings = warn }, lb;
        struct proto_str got[2];
        const struct pv *res;

        proto_reply_ok_begin(&w, 2);
        proto_load_result_encode(&w, &la);
        res = msg_result(&m, &w);
        cr_assert(proto_load_result_decode(res, &lb, err, sizeof(err)) == 0, "%s", err);
        cr_assert(lb.session == 4 && lb.generation == 1);
        cr_assert(proto_load_result_warnings(res, got, 2, err, sizeof(err)) == 2, "%s", err);
        cr_assert(str_eq(got[0], "a.fmu:modelDescription.xml:6: 'p': unit"));
        cr_assert(str_eq(got[1], "second"));
}

Test(proto_results, list_result_round_trips)
{
        struct proto_session_brief s[2] = {
                { 1, 1, S("loop"), PROTO_STATE_RUNNING, 2.5, false, S(""), S(""), S("") },
                { 2, 3, S("bench"), PROTO_STATE_FAULTED, 0, true, S("ipc 0x0080000001"),
                  S("uid 1000"), S("instance") },
        };
        struct proto_list_result a = { 2, s }, b;

        proto_reply_ok_begin(&w, 1);
        proto_list_result_encode(&w, &a);
        cr_assert(proto_list_result_decode(msg_result(&m, &w), &b, &mem, err, sizeof(err)) == 0,
                  "%s", err);
        cr_assert(b.n == 2 && b.sessions[1].session == 2 && b.sessions[1].generation == 3);
        cr_assert(str_eq(b.sessions[0].name, "loop") && b.sessions[0].state == PROTO_STATE_RUNNING);
        cr_assert(b.sessions[1].state == PROTO_STATE_FAULTED && b.sessions[0].time == 2.5);
        /* transient and owner travel only for a transient session. */
        cr_assert(!b.sessions[0].transient && b.sessions[0].owner.len == 0);
        /* kind only for an FMI-level instance. */
        cr_assert(b.sessions[0].kind.len == 0 && str_eq(b.sessions[1].kind, "instance"));
        cr_assert(b.sessions[1].transient && str_eq(b.sessions[1].owner, "ipc 0x0080000001"));
        /* The user who loaded it, when the daemon knows one. */
        cr_assert(b.sessions[0].user.len == 0 && str_eq(b.sessions[1].user, "uid 1000"));
}

Test(proto_results, snapshots_result_round_trips)
{
        struct proto_snapshot_info s[2] = {
                { .snapshot = 1, .time = 0, .taken = 1.8e9, .generation = 1 },
                { .snapshot = 3, .time = 2.5, .taken = 1.8e9 + 1, .generation = 2 },
        };
        struct proto_snapshots_result b;

        proto_reply_ok_begin(&w, 1);
        proto_snapshots_result_encode(&w, &(struct proto_snapshots_result){ 2, s });
        cr_assert(proto_snapshots_result_decode(msg_result(&m, &w), &b, &mem, err,
                                                sizeof(err)) == 0, "%s", err);
        cr_assert(b.n == 2 && b.snapshots[1].snapshot == 3 && b.snapshots[1].generation == 2);
        cr_assert(b.snapshots[1].time == 2.5 && b.snapshots[1].taken == 1.8e9 + 1);
}

/* When a snapshot was taken is a wall-clock time: not NaN, infinite or negative. */
Test(proto_results, a_snapshot_taken_at_no_time_is_refused)
{
        const double bad[] = { NAN, INFINITY, -1 };
        const char *const why[] = { "result.snapshots[0].taken: expected a finite number",
                                    "result.snapshots[0].taken: expected a finite number",
                                    "result.snapshots[0].taken: negative" };
        struct proto_snapshots_result b;

        for (size_t i = 0; i < 3; i++) {
                struct proto_snapshot_info s = { .snapshot = 1, .taken = bad[i] };

                msg_fini(&m);
                pw_reset(&w);
                proto_reply_ok_begin(&w, 1);
                proto_snapshots_result_encode(&w, &(struct proto_snapshots_result){ 1, &s });
                cr_assert(proto_snapshots_result_decode(msg_result(&m, &w), &b, &mem, err,
                                                        sizeof(err)) == -EBADMSG);
                cr_assert(strcmp(err, why[i]) == 0, "%s", err);
                cr_assert(mem == NULL);
        }
}

static void status_fixture(struct proto_session_status *s, struct proto_inst_status in[2],
                           struct proto_layer ly[3])
{
        ly[0] = (struct proto_layer){ S("seccomp"), PROTO_LAYER_ACTIVE, S("allowlist") };
        ly[1] = (struct proto_layer){ S("landlock"), PROTO_LAYER_UNAVAILABLE, S("kernel 5.10") };
        ly[2] = (struct proto_layer){ S("namespaces"), PROTO_LAYER_OFF, S("") };
        in[0] = (struct proto_inst_status){ S("Plant"), S("/c/plant.fmu"), 4242, 1, 1000, 12.5,
                                            80.0, 9.5, S(""), 2, ly, true, 1e-6, true, S("adams"),
                                            120, 300, 40, 7, 3, 5, S("") };
        in[1] = (struct proto_inst_status){ S("Ctrl"), S("/c/ctrl.fmu"), 4243, 4, 250, 10.0, 20.0,
                                            8.0, S("doStep returned fmi3Error"), 1, ly + 2, false,
                                            0, false, S(""), 0, 0, 0, 0, 0, 0,
                                            S("fast (priority 1), slow (priority 2)") };
        *s = (struct proto_session_status){
                .session = 3, .generation = 2, .name = S("loop"), .state = PROTO_STATE_PAUSED,
                .time = 4.5, .start = 0, .stop = 10, .step = 0.001, .points = 4500,
                .extra_points = 7, .events = 9, .real_time_factor = 1.02, .warp = 1,
                .lag_s = 0.25, .lag_max_s = 0.5,
                .lateness = { 12, 340, 5600, 7800 }, .lateness_window = { 1, 2, 3, 4 },
                .overruns = 6, .overrun = S("soft"),
                .message = S(""), .recorder = S("io_uring"), .rows_recorded = 4508,
                .rows_dropped = 3, .results = S("writing"), .sandbox = S("strict"),
                .n_insts = 2, .insts = in,
        };
}

Test(proto_results, session_status_round_trips)
{
        struct proto_inst_status in[2];
        struct proto_session_status a, b;
        struct proto_layer ly[3];

        status_fixture(&a, in, ly);
        proto_reply_ok_begin(&w, 1);
        proto_session_status_encode(&w, &a);
        cr_assert(proto_session_status_decode(msg_result(&m, &w), &b, &mem, err, sizeof(err)) == 0,
                  "%s", err);
        cr_assert(b.session == 3 && b.generation == 2 && str_eq(b.name, "loop"));
        cr_assert(b.state == PROTO_STATE_PAUSED && b.time == 4.5 && b.points == 4500);
        cr_assert(b.stop == 10 && b.step == 0.001 && b.real_time_factor == 1.02 && b.warp == 1);
        cr_assert(b.lag_s == 0.25 && b.lag_max_s == 0.5);
        cr_assert(b.lateness.p50_us == 12 && b.lateness.p99_us == 340 &&
                  b.lateness.p999_us == 5600 && b.lateness.max_us == 7800);
        cr_assert(b.lateness_window.p50_us == 1 && b.lateness_window.max_us == 4);
        cr_assert(b.overruns == 6 && str_eq(b.overrun, "soft"));
        cr_assert(str_eq(b.sandbox, "strict") && b.message.len == 0);
        cr_assert(b.extra_points == 7 && b.events == 9 && str_eq(b.recorder, "io_uring") &&
                  b.rows_recorded == 4508 && b.rows_dropped == 3 && str_eq(b.results, "writing"));
        cr_assert(b.n_insts == 2 && (const void *)b.insts == mem);
        cr_assert(str_eq(b.insts[0].name, "Plant") && b.insts[0].pid == 4242 &&
                  b.insts[0].steps == 1000 && b.insts[0].step_us_max == 80.0);
        cr_assert(b.insts[1].multirate == 4 && b.insts[1].service_us_mean == 8.0 &&
                  str_eq(b.insts[1].fault, "doStep returned fmi3Error"));
        cr_assert(b.insts[0].n_layers == 2 && b.insts[1].n_layers == 1);
        /* A tolerance only where one was given. */
        cr_assert(b.insts[0].has_tolerance && b.insts[0].tolerance == 1e-6);
        cr_assert(!b.insts[1].has_tolerance);
        /* The integrator's counts only for a Model Exchange instance. */
        cr_assert(b.insts[0].has_integrator && str_eq(b.insts[0].integrator, "adams"));
        cr_assert(b.insts[0].me_steps == 120 && b.insts[0].me_rhs_evals == 300 &&
                  b.insts[0].me_root_evals == 40 && b.insts[0].me_jac_evals == 7 &&
                  b.insts[0].me_events == 3 && b.insts[0].me_event_iterations == 5);
        cr_assert(!b.insts[1].has_integrator && b.insts[1].integrator.len == 0);
        /* The partitions only for a Scheduled Execution instance. */
        cr_assert(b.insts[0].partitions.len == 0);
        cr_assert(str_eq(b.insts[1].partitions, "fast (priority 1), slow (priority 2)"));
        cr_assert(str_eq(b.insts[0].layers[1].name, "landlock") &&
                  b.insts[0].layers[1].state == PROTO_LAYER_UNAVAILABLE &&
                  str_eq(b.insts[0].layers[1].detail, "kernel 5.10"));
        cr_assert(str_eq(b.insts[1].layers[0].name, "namespaces") &&
                  b.insts[1].layers[0].state == PROTO_LAYER_OFF);
}

Test(proto_results, session_status_spells_its_keys_on_the_wire)
{
        static const char *const keys[] = { "state", "time", "points", "realTimeFactor",
                                             "session", "generation", "name", "start", "stop",
                                             "step", "warp", "message", "sandbox", "instances" };
        static const char *const inst_keys[] = { "name", "fmu", "pid", "multirate", "steps",
                                                 "stepUsMean", "stepUsMax", "serviceUsMean",
                                                 "fault", "sandbox" };
        struct proto_inst_status in[2];
        struct proto_session_status a;
        struct proto_layer ly[3];
        const struct pv *r, *i0, *l0;

        status_fixture(&a, in, ly);
        proto_reply_ok_begin(&w, 1);
        proto_session_status_encode(&w, &a);
        r = msg_result(&m, &w);
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
                cr_assert(pv_get(r, keys[i]) != NULL, "no key '%s'", keys[i]);
        cr_assert(pv_is_str(pv_get(r, "state"), "paused"));
        i0 = &pv_get(r, "instances")->a.items[0];
        for (size_t i = 0; i < sizeof(inst_keys) / sizeof(inst_keys[0]); i++)
                cr_assert(pv_get(i0, inst_keys[i]) != NULL, "no key '%s'", inst_keys[i]);
        l0 = &pv_get(i0, "sandbox")->a.items[0];
        cr_assert(pv_is_str(pv_get(l0, "layer"), "seccomp"));
        cr_assert(pv_is_str(pv_get(l0, "state"), "active"));
        cr_assert(pv_is_str(pv_get(l0, "detail"), "allowlist"));
}

Test(proto_results, result_decoders_ignore_unknown_keys)
{
        struct proto_progress p;

        proto_reply_ok_begin(&w, 1);
        pw_map(&w, 5);
        pw_str(&w, "state");
        pw_str(&w, "running");
        pw_str(&w, "time");
        pw_f64(&w, 1.0);
        pw_str(&w, "points");
        pw_u64(&w, 10);
        pw_str(&w, "cpuLoad");
        pw_map(&w, 0);
        pw_str(&w, "message");
        pw_str(&w, "ok");
        cr_assert(proto_progress_decode(msg_result(&m, &w), &p, err, sizeof(err)) == 0, "%s", err);
        cr_assert(p.state == PROTO_STATE_RUNNING && p.points == 10 && str_eq(p.message, "ok"));
}

Test(proto_results, result_decoders_are_strict_on_known_keys)
{
        struct proto_session_status s;
        struct proto_progress p;

        /* state spelt wrong */
        proto_reply_ok_begin(&w, 1);
        pw_map(&w, 3);
        pw_str(&w, "state");
        pw_str(&w, "Running");
        pw_str(&w, "time");
        pw_f64(&w, 1.0);
        pw_str(&w, "points");
        pw_u64(&w, 10);
        cr_assert(proto_progress_decode(msg_result(&m, &w), &p, err, sizeof(err)) == -EBADMSG);
        cr_assert(strstr(err, "result.state") != NULL, "%s", err);
        msg_fini(&m);
        /* points missing */
        proto_reply_ok_begin(&w, 1);
        pw_map(&w, 2);
        pw_str(&w, "state");
        pw_str(&w, "running");
        pw_str(&w, "time");
        pw_f64(&w, 1.0);
        cr_assert(proto_progress_decode(msg_result(&m, &w), &p, err, sizeof(err)) == -EBADMSG);
        cr_assert(strstr(err, "result.points") != NULL, "%s", err);
        msg_fini(&m);
        /* an instance whose sandbox is not an array, and one that is not a map */
        proto_reply_ok_begin(&w, 1);
        pw_map(&w, 7);
        pw_str(&w, "session");
        pw_u64(&w, 1);
        pw_str(&w, "generation");
        pw_u64(&w, 1);
        pw_str(&w, "state");
        pw_str(&w, "loaded");
        pw_str(&w, "time");
        pw_f64(&w, 0);
        pw_str(&w, "points");
        pw_u64(&w, 0);
        pw_str(&w, "realTimeFactor");
        pw_f64(&w, 0);
        pw_str(&w, "instances");
        pw_array(&w, 2);
        pw_map(&w, 2);
        pw_str(&w, "name");
        pw_str(&w, "A");
        pw_str(&w, "sandbox");
        pw_str(&w, "strict");
        pw_u64(&w, 1);
        cr_assert(proto_session_status_decode(msg_result(&m, &w), &s, &mem, err,
                                              sizeof(err)) == -EBADMSG);
        cr_assert(mem == NULL);
        cr_assert(strstr(err, "result.instances[0].sandbox") != NULL, "%s", err);
}

Test(proto_results, daemon_status_and_progress_round_trip)
{
        struct proto_daemon_status da = { PROTO_VERSION, S("fmud 0.1.0"), 3600.5, 3, 7,
                                          S("basic"), S("active"), UINT64_MAX, 1ull << 29 }, db;
        struct proto_progress pa = { PROTO_STATE_FINISHED, 10.0, 10001, S("reached stop time") },
                              pb;

        proto_reply_ok_begin(&w, 1);
        proto_daemon_status_encode(&w, &da);
        cr_assert(proto_daemon_status_decode(msg_result(&m, &w), &db, err, sizeof(err)) == 0,
                  "%s", err);
        cr_assert(db.version == PROTO_VERSION && db.uptime_s == 3600.5 && db.sessions == 3 &&
                  db.workers == 7 && str_eq(db.sandbox, "basic") && str_eq(db.server, "fmud 0.1.0"));
        cr_assert(str_eq(db.mlock, "active"));
        cr_assert(db.mlock_budget == UINT64_MAX && db.mlock_used == 1ull << 29);
        msg_fini(&m);
        proto_reply_ok_begin(&w, 2);
        proto_progress_encode(&w, &pa);
        cr_assert(proto_progress_decode(msg_result(&m, &w), &pb, err, sizeof(err)) == 0, "%s", err);
        cr_assert(pb.state == PROTO_STATE_FINISHED && pb.time == 10.0 && pb.points == 10001 &&
                  str_eq(pb.message, "reached stop time"));
}

Test(proto_results, get_subscribe_snapshot_results_round_trip)
{
        struct proto_subscribe_result sa = { S("s3.1") }, sb;
        struct proto_snapshot_result na = { 5, 2.25 }, nb;
        struct proto_get_result gb;

        proto_reply_ok_begin(&w, 1);
        proto_get_result_begin(&w, 3);
        pw_f64(&w, 1.5);
        pw_bool(&w, true);
        pw_array(&w, 2);
        pw_i64(&w, -1);
        pw_i64(&w, 2);
        cr_assert(proto_get_result_decode(msg_result(&m, &w), &gb, &mem, err, sizeof(err)) == 0,
                  "%s", err);
        cr_assert(gb.n == 3 && gb.values[0]->f == 1.5 && gb.values[1]->b);
        cr_assert(gb.values[2]->type == PV_ARRAY && gb.values[2]->a.items[0].i == -1);
        msg_fini(&m);
        proto_reply_ok_begin(&w, 2);
        proto_subscribe_result_encode(&w, &sa);
        cr_assert(proto_subscribe_result_decode(msg_result(&m, &w), &sb, err, sizeof(err)) == 0,
                  "%s", err);
        cr_assert(str_eq(sb.topic, "s3.1"));
        msg_fini(&m);
        proto_reply_ok_begin(&w, 3);
        proto_snapshot_result_encode(&w, &na);
        cr_assert(proto_snapshot_result_decode(msg_result(&m, &w), &nb, err, sizeof(err)) == 0,
                  "%s", err);
        cr_assert(nb.snapshot == 5 && nb.time == 2.25);
}

Test(proto_results, samples_and_events_round_trip)
{
        static const struct proto_str names[] = { S("Plant.x"), S("Ctrl.u") };
        struct proto_sample sa = { 3, 1, 0.5, 500, 1, 7000000000123ull, 1780000000123456789ull,
                                   2, names, NULL }, sb;
        struct proto_event ea = { 3, 2, PROTO_STATE_FAULTED, 1.25, S("Plant: doStep failed"), 2, 150, 9000 }, eb;
        int r;

        proto_sample_begin(&w, &sa);
        pw_array(&w, 2);
        pw_f64(&w, 1.0);
        pw_f64(&w, -2.0);
        r = msg_take(&m, &w);
        cr_assert(r == 0, "%s", m.err);
        cr_assert(proto_sample_decode(m.doc.root, &sb, &mem, err, sizeof(err)) == 0, "%s", err);
        cr_assert(sb.session == 3 && sb.generation == 1 && sb.time == 0.5 && sb.point == 500 &&
                  sb.flags == 1 && sb.n == 2);
        cr_assert_eq(sb.mono_ns, 7000000000123ull);
        cr_assert_eq(sb.real_ns, 1780000000123456789ull);
        cr_assert(sb.names && str_eq(sb.names[1], "Ctrl.u"));
        cr_assert(sb.values->type == PV_ARRAY && sb.values->a.items[1].f == -2.0);
        msg_fini(&m);
        free(mem);
        mem = NULL;

        /* Later samples carry no names. */
        sa.names = NULL;
        proto_sample_begin(&w, &sa);
        pw_array(&w, 2);
        pw_f64(&w, 1.0);
        pw_f64(&w, -2.0);
        cr_assert(msg_take(&m, &w) == 0);
        cr_assert(proto_sample_decode(m.doc.root, &sb, &mem, err, sizeof(err)) == 0, "%s", err);
        cr_assert(sb.names == NULL && sb.n == 2 && mem == NULL);
        msg_fini(&m);

        /* names and values must agree */
        sa.names = names;
        proto_sample_begin(&w, &sa);
        pw_array(&w, 1);
        pw_f64(&w, 1.0);
        cr_assert(msg_take(&m, &w) == 0);
        cr_assert(proto_sample_decode(m.doc.root, &sb, &mem, err, sizeof(err)) == -EBADMSG);
        msg_fini(&m);

        proto_event_encode(&w, &ea);
        cr_assert(msg_take(&m, &w) == 0);
        cr_assert(proto_event_decode(m.doc.root, &eb, err, sizeof(err)) == 0, "%s", err);
        cr_assert(eb.session == 3 && eb.generation == 2 && eb.state == PROTO_STATE_FAULTED &&
                  eb.time == 1.25 && str_eq(eb.message, "Plant: doStep failed"));
        cr_assert(eb.overruns == 2 && eb.lateness_p99_us == 150 && eb.lateness_max_us == 9000);
}

static void *slurp(const char *path, size_t *ret_len)
{
        FILE *f = fopen(path, "rb");
        char *buf;
        long n;

        cr_assert(f != NULL, "%s", path);
        cr_assert(fseek(f, 0, SEEK_END) == 0);
        n = ftell(f);
        cr_assert(n >= 0);
        rewind(f);
        buf = malloc((size_t)n + 1);
        cr_assert(fread(buf, 1, (size_t)n, f) == (size_t)n);
        fclose(f);
        *ret_len = (size_t)n;
        return buf;
}

/* The fuzzer's regression inputs: each decodes or is refused cleanly, and whatever
 * decodes re-encodes to an equal value. */
Test(proto_results, fuzz_regression_inputs_replay_cleanly)
{
        unsigned decoded = 0;
        glob_t g;

        cr_assert(glob(FMUD_TEST_SRC_DIR "/fuzz/proto/*", 0, NULL, &g) == 0);
        cr_assert(g.gl_pathc >= 4, "seed inputs missing");
        for (size_t i = 0; i < g.gl_pathc; i++) {
                struct proto_req req;
                struct msg again;
                size_t len;
                void *buf = slurp(g.gl_pathv[i], &len);
                int r;

                r = msg_decode(&m, buf, len, NULL);
                free(buf);
                cr_assert(r == 0 || r == -EBADMSG || r == -EMSGSIZE, "%s: %d", g.gl_pathv[i], r);
                if (r == 0) {
                        decoded++;
                        pw_pv(&w, m.doc.root);
                        cr_assert(msg_take(&again, &w) == 0, "%s", g.gl_pathv[i]);
                        cr_assert(pv_equal(m.doc.root, again.doc.root), "%s", g.gl_pathv[i]);
                        msg_fini(&again);
                        r = proto_req_decode(m.doc.root, &req, err, sizeof(err));
                        cr_assert(r == 0 || r == -EBADMSG || r == -EOPNOTSUPP);
                }
                msg_fini(&m);
        }
        cr_assert(decoded > 0, "no seed decodes");
        globfree(&g);
}
