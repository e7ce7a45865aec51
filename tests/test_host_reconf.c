/*
 * host: a set of tunable structural parameters at a point, made in
 * Reconfiguration Mode (FMI 3.0 section 2.3.7). Feedthrough's n sizes its
 * vector input and output: an array the session does not hold takes the
 * new size in get and set, also in the same request and after a restore,
 * and a size of 0 (n's min, section 2.4.7.2) leaves arrays got and set as []
 * (connected, they carry nothing and still hold their size), not sampled;
 * one the session records (also with no elements) or connects is refused,
 * naming both sizes and what holds it, and nothing changes; a fixed
 * structural parameter is refused with the way to set it; a sampled array
 * of one element is an array, as get gives it.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_host_vals.h"

#define VEC_IN "Float64_vector_input"
#define VEC_OUT "Float64_vector_output"

/* Feedthrough recording only Float64_output, so nothing holds the vectors at their size. */
static uint64_t load_unheld(struct hdrv *d)
{
        static const struct proto_str rec[] = { { "Float64_output", 14 } };

        return hdrv_load(d, FT, NULL, &(struct proto_load){ .has_stop = true, .stop = 10,
                                                           .has_step = true, .step = 0.01,
                                                           .n_record = 1, .record = rec });
}

/* The values of one variable, as doubles; returns their count (at most max). */
static uint32_t get_vec(struct hdrv *d, uint64_t s, const char *name, double *out, uint32_t max)
{
        const char *const names[] = { name };
        struct proto_get_result v;
        struct hrep rep;
        void *mem = NULL;
        const struct pv *a;
        uint32_t n;

        hv_get(d, s, names, 1, &rep, &v, &mem);
        a = v.values[0];
        cr_assert(a->type == PV_ARRAY, "%s is no array", name);
        n = a->a.n;
        for (uint32_t i = 0; i < n && i < max; i++) {
                cr_assert(a->a.items[i].type == PV_FLOAT);
                out[i] = a->a.items[i].f;
        }
        free(mem);
        hrep_fini(&rep);
        return n;
}

/* The value of one scalar variable (a copy: no pointers into the reply). */
static struct pv get_scalar(struct hdrv *d, uint64_t s, const char *name)
{
        const char *const names[] = { name };
        struct proto_get_result v;
        struct hrep rep;
        void *mem = NULL;
        struct pv r;

        hv_get(d, s, names, 1, &rep, &v, &mem);
        r = *v.values[0];
        cr_assert(r.type == PV_UINT || r.type == PV_INT || r.type == PV_FLOAT, "%s", name);
        free(mem);
        hrep_fini(&rep);
        return r;
}

static uint64_t get_u(struct hdrv *d, uint64_t s, const char *name)
{
        struct pv v = get_scalar(d, s, name);

        cr_assert(v.type != PV_FLOAT);
        return v.type == PV_UINT ? v.u : (uint64_t)v.i;
}

static double get_f(struct hdrv *d, uint64_t s, const char *name)
{
        struct pv v = get_scalar(d, s, name);

        cr_assert(v.type == PV_FLOAT);
        return v.f;
}

/* Set n and the vector input in one request. */
static void set_n_and_vec(struct hdrv *d, uint64_t s, uint64_t n, const double *vals,
                          struct hrep *rep)
{
        struct pv items[16], arr = { .type = PV_ARRAY, .a = { items, (uint32_t)n } },
                  pn = { .type = PV_UINT, .u = n };
        struct proto_named_value nv[] = { { hv_str(VEC_IN), &arr }, { hv_str("n"), &pn } };

        cr_assert(n <= 16);
        for (uint64_t i = 0; i < n; i++)
                items[i] = (struct pv){ .type = PV_FLOAT, .f = vals[i] };
        hv_set(d, s, nv, 2, rep);
}

Test(host_reconf, an_array_nobody_holds_takes_the_size_set)
{
        static const double six[] = { 1, 2, 3, 4, 5, 6 };
        double got[16];
        struct hrep rep;
        struct hdrv d;
        uint64_t s;

        hdrv_init(&d, NULL);
        s = load_unheld(&d);
        hv_step(&d, s, 2);
        cr_assert(eq(u32, get_vec(&d, s, VEC_IN, got, 16), 4));
        /* The vector in the same request takes the size set there, whatever the order. */
        set_n_and_vec(&d, s, 6, six, &rep);
        cr_assert(rep.r.ok, "%.*s", (int)rep.r.message_len, rep.r.message);
        hrep_fini(&rep);
        cr_assert(eq(u64, get_u(&d, s, "n"), 6));
        cr_assert(eq(u32, get_vec(&d, s, VEC_IN, got, 16), 6));
        for (int i = 0; i < 6; i++)
                cr_assert(eq(dbl, got[i], six[i]));
        /* The FMU runs on with it: the output follows the input at the next point. */
        hv_step(&d, s, 1);
        cr_assert(eq(u32, get_vec(&d, s, VEC_OUT, got, 16), 6));
        for (int i = 0; i < 6; i++)
                cr_assert(eq(dbl, got[i], six[i]));
        /* A set of the old size is now refused, naming the size set. */
        {
                struct pv four[4] = { { .type = PV_FLOAT }, { .type = PV_FLOAT },
                                      { .type = PV_FLOAT }, { .type = PV_FLOAT } };
                const char *msg = hv_set_err(&d, s, VEC_IN,
                                             (struct pv){ .type = PV_ARRAY, .a = { four, 4 } },
                                             PROTO_E_TYPE);

                cr_assert(strstr(msg, "6") != NULL, "%s", msg);
        }
        /* Outside the description's max: refused as such, not as a resize. */
        {
                const char *msg = hv_set_err(&d, s, "n", PVU(65), PROTO_E_INVALID);

                cr_assert(strstr(msg, "'n' = 65 is outside its range [0, 64]") != NULL, "%s", msg);
        }
        cr_assert(eq(u32, get_vec(&d, s, VEC_IN, got, 16), 6));
        /* Shrinking keeps the first elements (Feedthrough's own rule). */
        hv_set_ok(&d, s, "n", PVU(2));
        cr_assert(eq(u32, get_vec(&d, s, VEC_IN, got, 16), 2));
        cr_assert(eq(dbl, got[0], 1));
        cr_assert(eq(dbl, got[1], 2));
        hdrv_fini(&d);
}

Test(host_reconf, a_size_of_0_leaves_arrays_with_no_elements_got_and_set_as_empty)
{
        struct pv one = { .type = PV_FLOAT, .f = 1 };
        double got[16];
        const char *msg;
        struct hdrv d;
        uint64_t s;

        hdrv_init(&d, NULL);
        s = load_unheld(&d);
        hv_step(&d, s, 1);
        /* n's min is 0: the vectors lose every element (FMI 3.0 section 2.4.7.2). */
        hv_set_ok(&d, s, "n", PVU(0));
        cr_assert(eq(u64, get_u(&d, s, "n"), 0));
        cr_assert(eq(u32, get_vec(&d, s, VEC_IN, got, 16), 0));
        /* An empty array is their value to set; one with an element is refused, naming 0. */
        hv_set_ok(&d, s, VEC_IN, (struct pv){ .type = PV_ARRAY, .a = { NULL, 0 } });
        msg = hv_set_err(&d, s, VEC_IN, (struct pv){ .type = PV_ARRAY, .a = { &one, 1 } },
                         PROTO_E_TYPE);
        cr_assert(strstr(msg, "an array of 0 Float64 values") != NULL, "%s", msg);
        /* The FMU steps on with them, and the scalars beside them are got as ever. */
        hv_set_ok(&d, s, "Float64_input", PVF(6.5));
        /* Nothing to read: [] also between a set and the next step, when no get may go out. */
        cr_assert(eq(u32, get_vec(&d, s, VEC_IN, got, 16), 0));
        hv_step(&d, s, 2);
        cr_assert(eq(u32, get_vec(&d, s, VEC_OUT, got, 16), 0));
        cr_assert(eq(dbl, get_f(&d, s, "Float64_output"), 6.5));
        cr_assert(eq(int, hdrv_state(&d, s), PROTO_STATE_PAUSED));
        /* An element of none: the index is out of range; two indices are the wrong form. */
        {
                const char *const first[] = { VEC_IN "[1]" }, *const two[] = { VEC_IN "[1,1]" };
                struct hrep rep;

                hv_get(&d, s, first, 1, &rep, NULL, NULL);
                msg = hrep_err(&rep, PROTO_E_NO_VARIABLE);
                cr_assert(strstr(msg, "out of the array's dimensions [0]") != NULL, "%s", msg);
                hrep_fini(&rep);
                hv_get(&d, s, two, 1, &rep, NULL, NULL);
                msg = hrep_err(&rep, PROTO_E_NO_VARIABLE);
                cr_assert(strstr(msg, "expected 1 1-based index") != NULL, "%s", msg);
                hrep_fini(&rep);
        }
        /* Nothing to sample: a subscription to one says so. */
        {
                struct proto_str name = { VEC_OUT, sizeof(VEC_OUT) - 1 };
                struct hrep rep;
                struct pw w;

                cr_assert(pw_init(&w) == 0);
                proto_subscribe_encode(&w, hdrv_id(&d), &(struct proto_subscribe){
                        .t = { s, 0 }, .n = 1, .names = &name });
                hdrv_wait(&d, hdrv_send(&d, &w), &rep);
                msg = hrep_err(&rep, PROTO_E_NO_VARIABLE);
                cr_assert(strstr(msg, "'" VEC_OUT "' has no elements") != NULL, "%s", msg);
                hrep_fini(&rep);
                pw_fini(&w);
        }
        /* Grown again: Feedthrough zeroes the elements it had not. */
        hv_set_ok(&d, s, "n", PVU(3));
        cr_assert(eq(u32, get_vec(&d, s, VEC_IN, got, 16), 3));
        for (int i = 0; i < 3; i++)
                cr_assert(eq(dbl, got[i], 0));
        hdrv_fini(&d);
}

Test(host_reconf, a_sampled_array_of_one_element_is_an_array_as_get_gives_it)
{
        static const struct proto_assign n1 = { { "n", 1 }, { "1", 1 } };
        static const struct proto_str rec[] = { { VEC_OUT, sizeof(VEC_OUT) - 1 } };
        struct proto_str name = { VEC_OUT, sizeof(VEC_OUT) - 1 };
        struct proto_subscribe_result sr;
        struct proto_sample sm;
        struct pv_doc doc;
        struct hrep rep;
        void *mem = NULL;
        char err[256], topic[64];
        struct hdrv d;
        struct pw w;
        uint64_t s;

        hdrv_init(&d, NULL);
        s = hdrv_load(&d, FT, NULL, &(struct proto_load){ .has_stop = true, .stop = 10,
                                                          .has_step = true, .step = 0.01,
                                                          .n_starts = 1, .starts = &n1,
                                                          .n_record = 1, .record = rec });
        cr_assert(pw_init(&w) == 0);
        proto_subscribe_encode(&w, hdrv_id(&d), &(struct proto_subscribe){
                .t = { s, 0 }, .n = 1, .names = &name });
        hdrv_wait(&d, hdrv_send(&d, &w), &rep);
        cr_assert(rep.r.ok, "%.*s", (int)rep.r.message_len, rep.r.message);
        cr_assert(proto_subscribe_result_decode(rep.r.result, &sr, err, sizeof(err)) == 0, "%s",
                  err);
        snprintf(topic, sizeof(topic), "%.*s", (int)sr.topic.len, sr.topic.ptr);
        hrep_fini(&rep);
        hv_step(&d, s, 1);
        cr_assert(hdrv_pub_count(&d, topic) >= 1);
        cr_assert(proto_sample_decode(hdrv_pub(&d, topic, 0, &doc), &sm, &mem, err,
                                      sizeof(err)) == 0, "%s", err);
        cr_assert(eq(u32, sm.values->a.n, 1));
        cr_assert(sm.values->a.items[0].type == PV_ARRAY, "a 1-element array sampled as "
                  "pv type %d", (int)sm.values->a.items[0].type);
        cr_assert(eq(u32, sm.values->a.items[0].a.n, 1));
        free(mem);
        pv_doc_fini(&doc);
        pw_fini(&w);
        hdrv_fini(&d);
}

Test(host_reconf, a_running_session_is_reconfigured_at_its_next_point)
{
        static const struct proto_str rec[] = { { "Float64_output", 14 } };
        double got[16];
        struct hrep rep;
        struct hdrv d;
        uint64_t s;

        hdrv_init(&d, NULL);
        /* Paced and long: once resumed, it is still running when the set comes. */
        s = hdrv_load(&d, FT, NULL, &(struct proto_load){ .has_warp = true, .warp = 1,
                                                          .has_stop = true, .stop = 1000,
                                                          .has_step = true, .step = 0.01,
                                                          .n_record = 1, .record = rec });
        hdrv_target(&d, PROTO_OP_START, s, 0, &rep);
        cr_assert(rep.r.ok, "%.*s", (int)rep.r.message_len, rep.r.message);
        hrep_fini(&rep);
        cr_assert(eq(int, hdrv_state(&d, s), PROTO_STATE_RUNNING));
        hv_set_ok(&d, s, "n", PVU(9));
        cr_assert(eq(u64, get_u(&d, s, "n"), 9));
        cr_assert(eq(u32, get_vec(&d, s, VEC_OUT, got, 16), 9));
        cr_assert(eq(int, hdrv_state(&d, s), PROTO_STATE_RUNNING));
        hdrv_fini(&d);
}

Test(host_reconf, a_recorded_array_is_not_resized_and_nothing_changes)
{
        double got[16];
        const char *msg;
        struct hdrv d;
        uint64_t s;

        hdrv_init(&d, NULL);
        s = hdrv_load(&d, FT, NULL, &(struct proto_load){ .has_stop = true, .stop = 10,
                                                          .has_step = true, .step = 0.01 });
        hv_step(&d, s, 1);
        msg = hv_set_err(&d, s, "n", PVU(6), PROTO_E_INVALID);
        cr_assert(strstr(msg, "'" VEC_OUT "' from [4] to [6]") != NULL, "%s", msg);
        cr_assert(strstr(msg, "(the results, 4 columns)") != NULL, "%s", msg);
        /* Refused before the FMU saw anything: the sizes and the run are as they were. */
        cr_assert(eq(u64, get_u(&d, s, "n"), 4));
        cr_assert(eq(u32, get_vec(&d, s, VEC_IN, got, 16), 4));
        hv_step(&d, s, 1);
        cr_assert(eq(u32, get_vec(&d, s, VEC_OUT, got, 16), 4));
        /* The same size resizes nothing: Reconfiguration Mode is entered and left. */
        hv_set_ok(&d, s, "n", PVU(4));
        hv_step(&d, s, 1);
        cr_assert(eq(u64, get_u(&d, s, "n"), 4));
        hdrv_fini(&d);
}

Test(host_reconf, an_array_recorded_with_no_elements_is_held_at_that_size)
{
        static const struct proto_assign n0 = { { "n", 1 }, { "0", 1 } };
        double got[16];
        const char *msg;
        struct hdrv d;
        uint64_t s;

        hdrv_init(&d, NULL);
        /* Every output recorded, the vectors with n = 0: they have no column. */
        s = hdrv_load(&d, FT, NULL, &(struct proto_load){ .has_stop = true, .stop = 10,
                                                          .has_step = true, .step = 0.01,
                                                          .n_starts = 1, .starts = &n0 });
        hv_step(&d, s, 1);
        cr_assert(eq(u32, get_vec(&d, s, VEC_OUT, got, 16), 0));
        /* Growing them would leave the results without the columns they record. */
        msg = hv_set_err(&d, s, "n", PVU(3), PROTO_E_INVALID);
        cr_assert(strstr(msg, "'" VEC_OUT "' from [0] to [3]") != NULL, "%s", msg);
        cr_assert(strstr(msg, "recorded with no elements") != NULL, "%s", msg);
        cr_assert(eq(u64, get_u(&d, s, "n"), 0));
        hdrv_fini(&d);
}

/* Two Feedthroughs, a's vector output feeding b's vector input; nothing recorded of them. */
static char *pair_ssd(struct hdrv *d)
{
        char *ssd = NULL;
        FILE *f;

        cr_assert(asprintf(&ssd, "%s/pair.ssd", d->out) > 0);
        f = fopen(ssd, "w");
        cr_assert(f != NULL);
        fprintf(f, "<?xml version=\"1.0\"?>\n"
                "<ssd:SystemStructureDescription version=\"1.0\" name=\"pair\" "
                "xmlns:ssd=\"http://ssp-standard.org/SSP1/SystemStructureDescription\" "
                "xmlns:ssc=\"http://ssp-standard.org/SSP1/SystemStructureCommon\" "
                "xmlns:fmud=\"urn:fmud:ssp:settings\">\n"
                "<ssd:System name=\"pair\"><ssd:Elements>\n"
                "<ssd:Component name=\"a\" source=\"%s\"/>\n"
                "<ssd:Component name=\"b\" source=\"%s\"/>\n"
                "</ssd:Elements><ssd:Connections>\n"
                "<ssd:Connection startElement=\"a\" startConnector=\"" VEC_OUT "\" "
                "endElement=\"b\" endConnector=\"" VEC_IN "\"/>\n"
                "</ssd:Connections></ssd:System>\n"
                "<ssd:DefaultExperiment startTime=\"0\" stopTime=\"1\"/>\n"
                "<ssd:Annotations><ssc:Annotation type=\"org.fmud.settings\">"
                "<fmud:Settings version=\"1\" stepSize=\"0.01\">"
                "<fmud:Record variable=\"a.Float64_output\"/>"
                "</fmud:Settings></ssc:Annotation></ssd:Annotations>\n"
                "</ssd:SystemStructureDescription>\n", FT, FT);
        cr_assert(fclose(f) == 0);
        return ssd;
}

Test(host_reconf, a_connected_array_is_refused_naming_both_ends_and_sizes)
{
        double got[16];
        const char *msg;
        struct hdrv d;
        char *ssd;
        uint64_t s;

        hdrv_init(&d, NULL);
        ssd = pair_ssd(&d);
        s = hdrv_load(&d, ssd, NULL, NULL);
        hv_step(&d, s, 1);
        msg = hv_set_err(&d, s, "a.n", PVU(6), PROTO_E_INVALID);
        cr_assert(strstr(msg, "'a." VEC_OUT "' from [4] to [6]") != NULL, "%s", msg);
        cr_assert(strstr(msg, "(the connection to 'b." VEC_IN "' [4]") != NULL, "%s", msg);
        msg = hv_set_err(&d, s, "b.n", PVU(2), PROTO_E_INVALID);
        cr_assert(strstr(msg, "'b." VEC_IN "' from [4] to [2]") != NULL, "%s", msg);
        cr_assert(strstr(msg, "(the connection from 'a." VEC_OUT "' [4]") != NULL, "%s", msg);
        hv_step(&d, s, 1);
        cr_assert(eq(u32, get_vec(&d, s, "b." VEC_OUT, got, 16), 4));
        free(ssd);
        hdrv_fini(&d);
}

Test(host_reconf, a_connection_of_arrays_with_no_elements_neither_moves_nor_holds_a_set)
{
        static const struct proto_assign n0[] = { { { "a.n", 3 }, { "0", 1 } },
                                                  { { "b.n", 3 }, { "0", 1 } } };
        struct pv one = { .type = PV_FLOAT, .f = 1 };
        double got[16];
        const char *msg;
        struct hdrv d;
        char *ssd;
        uint64_t s;

        hdrv_init(&d, NULL);
        ssd = pair_ssd(&d);
        s = hdrv_load(&d, ssd, NULL, &(struct proto_load){ .n_starts = 2, .starts = n0 });
        hv_step(&d, s, 1);
        cr_assert(eq(u32, get_vec(&d, s, "b." VEC_IN, got, 16), 0));
        /* The master sets nothing through it, so a set of b's input is no set it undoes. */
        hv_set_ok(&d, s, "b." VEC_IN, (struct pv){ .type = PV_ARRAY, .a = { NULL, 0 } });
        msg = hv_set_err(&d, s, "b." VEC_IN, (struct pv){ .type = PV_ARRAY, .a = { &one, 1 } },
                         PROTO_E_TYPE);
        cr_assert(strstr(msg, "an array of 0 Float64 values") != NULL, "%s", msg);
        /* It holds the size 0 all the same: growing one end is refused, naming both. */
        msg = hv_set_err(&d, s, "a.n", PVU(2), PROTO_E_INVALID);
        cr_assert(strstr(msg, "'a." VEC_OUT "' from [0] to [2]") != NULL, "%s", msg);
        cr_assert(strstr(msg, "(the connection to 'b." VEC_IN "' [0]") != NULL, "%s", msg);
        hv_step(&d, s, 1);
        free(ssd);
        hdrv_fini(&d);
}

Test(host_reconf, a_fixed_structural_parameter_is_set_only_at_load)
{
        const char *msg;
        struct hdrv d;
        uint64_t s;

        hdrv_init(&d, NULL);
        s = hdrv_load(&d, HDRV_FMU("VectorGain"), NULL, NULL);
        hv_step(&d, s, 1);
        msg = hv_set_err(&d, s, "n", PVU(5), PROTO_E_INVALID);
        cr_assert(strstr(msg, "'n' is a fixed structural parameter") != NULL &&
                  strstr(msg, "--start") != NULL,
                  "%s", msg);
        cr_assert(eq(u64, get_u(&d, s, "n"), 3));
        hdrv_fini(&d);
}

Test(host_reconf, a_restore_brings_back_the_sizes_saved)
{
        struct proto_snapshot_result sr;
        double got[16];
        char err[256];
        struct hrep rep;
        struct hdrv d;
        struct pw w;
        uint64_t s;

        hdrv_init(&d, NULL);
        s = load_unheld(&d);
        hv_step(&d, s, 1);
        hdrv_target(&d, PROTO_OP_SNAPSHOT, s, 0, &rep);
        cr_assert(rep.r.ok, "%.*s", (int)rep.r.message_len, rep.r.message);
        cr_assert(proto_snapshot_result_decode(rep.r.result, &sr, err, sizeof(err)) == 0, "%s", err);
        hrep_fini(&rep);
        hv_set_ok(&d, s, "n", PVU(7));
        cr_assert(eq(u32, get_vec(&d, s, VEC_IN, got, 16), 7));
        cr_assert(pw_init(&w) == 0);
        proto_restore_encode(&w, hdrv_id(&d), &(struct proto_restore){ .t = { s, 0 },
                                                                       .snapshot = sr.snapshot });
        hdrv_wait(&d, hdrv_send(&d, &w), &rep);
        pw_fini(&w);
        cr_assert(rep.r.ok, "%.*s", (int)rep.r.message_len, rep.r.message);
        hrep_fini(&rep);
        cr_assert(eq(u64, get_u(&d, s, "n"), 4));
        cr_assert(eq(u32, get_vec(&d, s, VEC_IN, got, 16), 4));
        hdrv_fini(&d);
}
