/*
 * host: what a session tells about itself besides replies: the sandbox
 * layers of each worker in status, samples on a subscription's topic
 * (names first, decimated) until it is unsubscribed.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_host_drv.h"

#define MSD HDRV_EXAMPLE("msd.ssp")

Test(host, status_reports_each_workers_sandbox_layers)
{
        static const char *const names[] = { "environment", "limits", "privileges", "namespaces",
                                             "landlock", "seccomp" };
        struct proto_session_status st;
        struct hdrv d;
        struct hrep rep;
        void *mem = NULL;
        uint64_t s;

        hdrv_init_sandbox(&d, HOST_SANDBOX_BASIC);
        s = hdrv_load(&d, HDRV_FMU("Feedthrough"), NULL, NULL);
        hdrv_status(&d, s, &rep, &st, &mem);
        cr_assert(st.sandbox.len == 5 && !memcmp(st.sandbox.ptr, "basic", 5));
        cr_assert(st.n_insts == 1 && st.insts[0].n_layers == 6, "%u layers", st.insts[0].n_layers);
        for (size_t k = 0; k < 6; k++)
                cr_assert(st.insts[0].layers[k].name.len == strlen(names[k]) &&
                          !memcmp(st.insts[0].layers[k].name.ptr, names[k], strlen(names[k])));
        /* Basic mode leaves the namespaces out; the environment is always set up. */
        cr_assert(st.insts[0].layers[3].state == PROTO_LAYER_OFF);
        cr_assert(st.insts[0].layers[0].state == PROTO_LAYER_ACTIVE);
        free(mem);
        hrep_fini(&rep);
        hdrv_fini(&d);
}

Test(host, a_session_may_tighten_the_sandbox_but_not_loosen_it)
{
        struct proto_session_status st;
        struct hdrv d;
        struct hrep rep;
        void *mem = NULL;
        uint64_t s;

        hdrv_init_sandbox(&d, HOST_SANDBOX_BASIC);
        hdrv_wait(&d, hdrv_load_send(&d, HDRV_FMU("Feedthrough"), NULL,
                                     &(struct proto_load){ .sandbox = { "off", 3 } }), &rep);
        cr_assert(strstr(hrep_err(&rep, PROTO_E_DENIED), "weaker than the daemon's 'basic'"));
        hrep_fini(&rep);
        s = hdrv_load(&d, HDRV_FMU("Feedthrough"), NULL,
                      &(struct proto_load){ .sandbox = { "strict", 6 } });
        hdrv_status(&d, s, &rep, &st, &mem);
        cr_assert(st.sandbox.len == 6 && !memcmp(st.sandbox.ptr, "strict", 6));
        /* Strict asks for namespaces: each worker reports them active or why not. */
        cr_assert(st.n_insts == 1 && st.insts[0].layers[3].state != PROTO_LAYER_OFF);
        free(mem);
        hrep_fini(&rep);
        hdrv_fini(&d);
}

Test(host, subscribe_publishes_samples_until_unsubscribed)
{
        struct proto_str names[] = { { "mass1.x1", 8 }, { "mass2.F", 7 } }, bad = { "mass1.zz", 8 };
        struct proto_subscribe_result sr;
        struct proto_sample sm;
        struct proto_progress p;
        struct pv_doc doc;
        struct hdrv d;
        struct hrep rep;
        struct pw w;
        void *mem = NULL;
        char err[256], topic[64];
        uint64_t s;

        hdrv_init(&d, NULL);
        s = hdrv_load(&d, MSD, NULL, &(struct proto_load){ .has_decimation = true, .decimation = 1 });
        cr_assert(pw_init(&w) == 0);
        proto_subscribe_encode(&w, hdrv_id(&d), &(struct proto_subscribe){
                .t = { s, 1 }, .n = 1, .names = &bad });
        hdrv_wait(&d, hdrv_send(&d, &w), &rep);
        (void) hrep_err(&rep, PROTO_E_NO_VARIABLE);
        hrep_fini(&rep);
        proto_subscribe_encode(&w, hdrv_id(&d), &(struct proto_subscribe){
                .t = { s, 1 }, .n = 2, .names = names, .decimation = 2 });
        hdrv_wait(&d, hdrv_send(&d, &w), &rep);
        cr_assert(rep.r.ok, "%.*s", (int)rep.r.message_len, rep.r.message);
        cr_assert(proto_subscribe_result_decode(rep.r.result, &sr, err, sizeof(err)) == 0, "%s", err);
        cr_assert(sr.topic.len == 4 && !memcmp(sr.topic.ptr, "s1.1", 4));
        snprintf(topic, sizeof(topic), "%.*s", (int)sr.topic.len, sr.topic.ptr);
        hrep_fini(&rep);
        proto_step_encode(&w, hdrv_id(&d), &(struct proto_step){ .t = { s, 0 }, .n = 10 });
        hdrv_wait(&d, hdrv_send(&d, &w), &rep);
        hrep_progress(&rep, &p);
        hrep_fini(&rep);
        /* Every second point of ten; the first sample names its values. */
        cr_assert(hdrv_pub_count(&d, topic) == 5, "%zu samples", hdrv_pub_count(&d, topic));
        cr_assert(proto_sample_decode(hdrv_pub(&d, topic, 0, &doc), &sm, &mem, err, sizeof(err)) == 0,
                  "%s", err);
        cr_assert(sm.session == s && sm.generation == 1 && sm.point == 1 && sm.n == 2);
        cr_assert(sm.names && sm.names[1].len == 7 && !memcmp(sm.names[1].ptr, "mass2.F", 7));
        cr_assert(sm.values->a.n == 2 && sm.values->a.items[0].type == PV_FLOAT);
        free(mem);
        mem = NULL;
        pv_doc_fini(&doc);
        cr_assert(proto_sample_decode(hdrv_pub(&d, topic, 4, &doc), &sm, &mem, err, sizeof(err)) == 0,
                  "%s", err);
        cr_assert(sm.names == NULL && sm.point == 9 && sm.time == 0.09);
        free(mem);
        pv_doc_fini(&doc);
        proto_unsubscribe_encode(&w, hdrv_id(&d), &(struct proto_unsubscribe){
                .t = { s, 0 }, .topic = { topic, 4 } });
        hdrv_wait(&d, hdrv_send(&d, &w), &rep);
        cr_assert(rep.r.ok);
        hrep_fini(&rep);
        proto_unsubscribe_encode(&w, hdrv_id(&d), &(struct proto_unsubscribe){
                .t = { s, 0 }, .topic = { topic, 4 } });
        hdrv_wait(&d, hdrv_send(&d, &w), &rep);
        (void) hrep_err(&rep, PROTO_E_INVALID);
        hrep_fini(&rep);
        proto_step_encode(&w, hdrv_id(&d), &(struct proto_step){ .t = { s, 0 }, .n = 10 });
        hdrv_wait(&d, hdrv_send(&d, &w), &rep);
        hrep_fini(&rep);
        cr_assert(hdrv_pub_count(&d, topic) == 5);
        pw_fini(&w);
        hdrv_fini(&d);
}

/*
 * The rows of an Event Mode (before, flagged eventLeft, and after) and
 * extra points reach a subscription with their own flags: neither is
 * mistaken for first or dropped, which a row's flags copied onto the
 * sample's would make them.
 */
Test(host, event_and_extra_point_samples_say_so_and_only_the_first_is_first)
{
        struct proto_str names[] = { { "clock.count", 11 } };
        struct proto_sample sm;
        struct pv_doc doc;
        struct hdrv d;
        struct hrep rep;
        struct pw w;
        void *mem = NULL;
        size_t n, first = 0, dropped = 0, left = 0, extra = 0;
        uint64_t s;
        char err[256];

        hdrv_init(&d, NULL);
        s = hdrv_load(&d, HDRV_EXAMPLE("timeevent.ssp"), NULL, NULL);
        cr_assert(pw_init(&w) == 0);
        proto_subscribe_encode(&w, hdrv_id(&d), &(struct proto_subscribe){
                .t = { s, 1 }, .n = 1, .names = names });
        hdrv_wait(&d, hdrv_send(&d, &w), &rep);
        cr_assert(rep.r.ok, "%.*s", (int)rep.r.message_len, rep.r.message);
        hrep_fini(&rep);
        /* To t = 2: 20 grid points, events at 0.15, 0.65, 1.15 and 1.65 (extra points). */
        proto_step_encode(&w, hdrv_id(&d), &(struct proto_step){ .t = { s, 0 }, .n = 20 });
        hdrv_wait(&d, hdrv_send(&d, &w), &rep);
        hrep_fini(&rep);
        n = hdrv_pub_count(&d, "s1.1");
        cr_assert_eq(n, 20 + 4 * 2, "%zu samples", n);
        for (size_t i = 0; i < n; i++) {
                cr_assert(proto_sample_decode(hdrv_pub(&d, "s1.1", i, &doc), &sm, &mem, err,
                                              sizeof(err)) == 0, "%s", err);
                first += (sm.flags & PROTO_SAMPLE_FIRST) != 0;
                dropped += (sm.flags & PROTO_SAMPLE_DROPPED) != 0;
                left += (sm.flags & PROTO_SAMPLE_EVENT_LEFT) != 0;
                extra += (sm.flags & PROTO_SAMPLE_EXTRA) != 0;
                if (sm.flags & PROTO_SAMPLE_EVENT_LEFT)
                        cr_assert(sm.flags & PROTO_SAMPLE_EXTRA, "t %g flags %#x", sm.time,
                                  sm.flags);
                cr_assert_eq((sm.flags & PROTO_SAMPLE_FIRST) != 0, i == 0, "sample %zu", i);
                free(mem);
                mem = NULL;
                pv_doc_fini(&doc);
        }
        cr_assert_eq(first, 1);
        cr_assert_eq(dropped, 0);
        cr_assert_eq(left, 4);
        cr_assert_eq(extra, 8);
        pw_fini(&w);
        hdrv_fini(&d);
}
