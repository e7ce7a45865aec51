/*
 * proto_realtime: the real-time load arguments (rtPriority,
 * rtWorkerPriority, rtCpus, rtWorkerCpus, rtBestEffort), their ranges, and
 * the session status's realtime array and the daemon status's mlock.
 */
#include <criterion/criterion.h>
#include <errno.h>
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

TestSuite(proto_realtime, .init = setup, .fini = teardown);

#define S(lit) ((struct proto_str){ (lit), sizeof(lit) - 1 })

Test(proto_realtime, load_round_trips_the_realtime_options)
{
        struct proto_load a = {
                .path = S("/s/a.ssp"), .has_rt_priority = true, .rt_priority = 50,
                .has_rt_worker_priority = true, .rt_worker_priority = 49, .rt_cpus = S("1"),
                .rt_worker_cpus = S("0,2-3"), .rt_best_effort = true, .rt_mlock = true,
        }, b;
        const struct pv *args;

        proto_load_encode(&w, 2, &a);
        args = msg_req(&m, &w, PROTO_OP_LOAD, 2);
        cr_assert(pv_get(args, "rtPriority") && pv_get(args, "rtWorkerCpus"));
        cr_assert(proto_load_decode(args, &b, &mem, err, sizeof(err)) == 0, "%s", err);
        cr_assert(b.has_rt_priority && b.rt_priority == 50);
        cr_assert(b.has_rt_worker_priority && b.rt_worker_priority == 49);
        cr_assert(str_eq(b.rt_cpus, "1") && str_eq(b.rt_worker_cpus, "0,2-3"));
        cr_assert(b.rt_best_effort);
        cr_assert(b.rt_mlock);
}

Test(proto_realtime, load_without_realtime_leaves_the_keys_out)
{
        struct proto_load a = { .path = S("/s/a.ssp") }, b;
        const struct pv *args;

        proto_load_encode(&w, 3, &a);
        args = msg_req(&m, &w, PROTO_OP_LOAD, 3);
        cr_assert(!pv_get(args, "rtPriority") && !pv_get(args, "rtCpus") &&
                  !pv_get(args, "rtBestEffort"));
        cr_assert(proto_load_decode(args, &b, &mem, err, sizeof(err)) == 0, "%s", err);
        cr_assert(!b.has_rt_priority && !b.has_rt_worker_priority && !b.rt_best_effort &&
                  !b.rt_mlock);
        cr_assert(b.rt_cpus.len == 0 && b.rt_worker_cpus.len == 0);
}

static int load_priority(const char *key, uint64_t prio)
{
        struct proto_load b;
        const struct pv *args;

        proto_req_begin(&w, 9, PROTO_OP_LOAD, 2);
        pw_str(&w, "path");
        pw_str(&w, "/a.ssp");
        pw_str(&w, key);
        pw_u64(&w, prio);
        args = msg_req(&m, &w, PROTO_OP_LOAD, 9);
        return proto_load_decode(args, &b, &mem, err, sizeof(err));
}

Test(proto_realtime, load_refuses_a_priority_above_99_naming_the_key)
{
        cr_assert(load_priority("rtPriority", 100) == -EBADMSG);
        cr_assert(strcmp(err, "args.rtPriority: expected 0 (none) to 99") == 0, "%s", err);
        msg_fini(&m);
        pw_fini(&w);
        cr_assert(pw_init(&w) == 0);
        cr_assert(load_priority("rtWorkerPriority", 1000) == -EBADMSG);
        cr_assert(strcmp(err, "args.rtWorkerPriority: expected 0 (none) to 99") == 0, "%s", err);
        msg_fini(&m);
        pw_fini(&w);
        cr_assert(pw_init(&w) == 0);
        cr_assert(load_priority("rtPriority", 99) == 0, "%s", err);
}

Test(proto_realtime, session_status_round_trips_its_realtime_options)
{
        struct proto_layer ly = { S("seccomp"), PROTO_LAYER_ACTIVE, S("allowlist") };
        struct proto_inst_status in = { .name = S("Plant"), .n_layers = 1, .layers = &ly };
        struct proto_rt_option rt[3] = {
                { S("master-priority"), S("active"), S("") },
                { S("worker-cpus"), S("refused: Invalid argument (task 42)"), S("") },
                { S("worker-mlock"), S("refused: Cannot allocate memory"), S("Plant") },
        };
        struct proto_session_status a = {
                .session = 3, .generation = 1, .state = PROTO_STATE_LOADED, .n_insts = 1,
                .insts = &in, .n_realtime = 3, .realtime = rt,
        }, b;

        proto_reply_ok_begin(&w, 1);
        proto_session_status_encode(&w, &a);
        cr_assert(proto_session_status_decode(msg_result(&m, &w), &b, &mem, err,
                                              sizeof(err)) == 0, "%s", err);
        cr_assert(b.n_insts == 1 && str_eq(b.insts[0].layers[0].name, "seccomp"));
        cr_assert(b.n_realtime == 3);
        cr_assert(str_eq(b.realtime[0].name, "master-priority") &&
                  str_eq(b.realtime[0].state, "active") && b.realtime[0].instance.len == 0);
        cr_assert(str_eq(b.realtime[1].name, "worker-cpus") &&
                  str_eq(b.realtime[1].state, "refused: Invalid argument (task 42)"));
        cr_assert(str_eq(b.realtime[2].name, "worker-mlock") &&
                  str_eq(b.realtime[2].state, "refused: Cannot allocate memory") &&
                  str_eq(b.realtime[2].instance, "Plant"));
}

Test(proto_realtime, session_status_with_options_and_no_instances)
{
        struct proto_rt_option rt = { S("dma-latency"), S("refused: Permission denied"), S("") };
        struct proto_session_status a = {
                .session = 4, .generation = 1, .state = PROTO_STATE_LOADED, .n_realtime = 1,
                .realtime = &rt,
        }, b;

        proto_reply_ok_begin(&w, 1);
        proto_session_status_encode(&w, &a);
        cr_assert(proto_session_status_decode(msg_result(&m, &w), &b, &mem, err,
                                              sizeof(err)) == 0, "%s", err);
        cr_assert(b.n_insts == 0 && b.insts == NULL && b.n_realtime == 1);
        cr_assert(str_eq(b.realtime[0].name, "dma-latency") &&
                  str_eq(b.realtime[0].state, "refused: Permission denied"));
}

Test(proto_realtime, session_status_refuses_a_malformed_option)
{
        struct proto_session_status b;

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
        pw_str(&w, "realtime");
        pw_array(&w, 1);
        pw_map(&w, 1);
        pw_str(&w, "option");
        pw_str(&w, "master-priority");
        cr_assert(proto_session_status_decode(msg_result(&m, &w), &b, &mem, err,
                                              sizeof(err)) == -EBADMSG);
        cr_assert(strstr(err, "result.realtime[0]") && strstr(err, "state"), "%s", err);
}
