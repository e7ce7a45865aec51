/*
 * daemon: every FMI 3.0 type through an fmi batch (PROTOCOL.md "fmi"):
 * the Feedthrough test FMU's outputs equal its inputs after a step, so a
 * value of each type set, stepped and got must come back the same, at the
 * edges of its range; a value outside its type's range is refused before
 * any call is made. A batch of Binary values larger than the default
 * message size is taken whole when max_message allows it.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_fixture.h"
#include "support/tmpdir.h"

#define FEEDTHROUGH     FMUD_TEST_FMU_DIR "/Feedthrough.fmu"

static struct fmud_daemon d;
static struct daemon_raw raw;
static struct daemon_raw_reply rep;
static bool have_rep;

static void setup(void)
{
        daemon_start(&d, NULL);
        daemon_raw_open(&d, &raw);
}

static void teardown(void)
{
        if (have_rep)
                daemon_raw_reply_fini(&rep);
        daemon_raw_close(&raw);
        daemon_stop(&d);
}

TestSuite(daemon_fmi_types, .init = setup, .fini = teardown, .timeout = 120);

static void exchange(struct pw *w)
{
        if (have_rep)
                daemon_raw_reply_fini(&rep);
        daemon_raw_send_pw(&raw, w);
        pw_fini(w);
        daemon_raw_recv(&raw, &rep);
        have_rep = true;
}

static void call(struct pw *w, uint64_t inst, const char *fn, uint32_t n_more)
{
        pw_map(w, 2 + n_more);
        pw_str(w, "instance");
        pw_u64(w, inst);
        pw_str(w, "fn");
        pw_str(w, fn);
}

/* The start of a set (its value follows) or a get of one value reference. */
static void typed(struct pw *w, uint64_t inst, const char *fn, const char *type, uint32_t vr)
{
        call(w, inst, fn, fn[0] == 's' ? 3 : 2);
        pw_str(w, "type");
        pw_str(w, type);
        pw_str(w, "vrs");
        pw_array(w, 1);
        pw_u64(w, vr);
        if (fn[0] == 's') {
                pw_str(w, "values");
                pw_array(w, 1);
        }
}

static const uint8_t BIN[4] = { 0, 1, 0xfe, 0xff };

/* Write value k of the table into w. */
static void value(struct pw *w, int k)
{
        switch (k) {
        case 0: pw_f64(w, 1.25); break;                         /* Float32 */
        case 1: pw_f64(w, -2.5e300); break;                     /* Float64 */
        case 2: pw_i64(w, INT8_MIN); break;
        case 3: pw_u64(w, UINT8_MAX); break;
        case 4: pw_i64(w, INT16_MIN); break;
        case 5: pw_u64(w, UINT16_MAX); break;
        case 6: pw_i64(w, INT32_MIN); break;
        case 7: pw_u64(w, UINT32_MAX); break;
        case 8: pw_i64(w, INT64_MIN); break;
        case 9: pw_u64(w, UINT64_MAX); break;
        case 10: pw_bool(w, false); break;
        case 11: pw_str(w, "h\xc3\xa9llo, world"); break;      /* String */
        case 12: pw_bin(w, BIN, sizeof(BIN)); break;            /* Binary */
        default: break;
        }
}

static const char *const TYPES[13] = { "Float32", "Float64", "Int8", "UInt8", "Int16", "UInt16",
                                       "Int32", "UInt32", "Int64", "UInt64", "Boolean",
                                       "String", "Binary" };

Test(daemon_fmi_types, every_type_goes_through_a_step_unchanged)
{
        const struct pv *r, *v;
        uint64_t inst = 0;
        struct pw w;

        cr_assert(pw_init(&w) == 0);
        proto_instantiate_encode(&w, 1, &(struct proto_instantiate){
                .fmu = daemon_str(FEEDTHROUGH) });
        exchange(&w);
        cr_assert(rep.rep.ok, "%s", rep.message);
        cr_assert(pv_u64(pv_get(rep.rep.result, "instance"), &inst) == 0);
        cr_assert(pw_init(&w) == 0);
        proto_req_begin(&w, 2, PROTO_OP_FMI, 1);
        pw_str(&w, "calls");
        pw_array(&w, 13 + 3 + 13);
        /* Inputs are vr 1, 3, ... 25; their outputs the next vr. */
        for (int k = 0; k < 13; k++) {
                typed(&w, inst, "set", TYPES[k], 1 + 2 * (uint32_t)k);
                value(&w, k);
        }
        call(&w, inst, "enterInitializationMode", 0);
        call(&w, inst, "exitInitializationMode", 0);
        call(&w, inst, "doStep", 2);
        pw_str(&w, "t");
        pw_f64(&w, 0);
        pw_str(&w, "h");
        pw_f64(&w, 0.5);
        for (int k = 0; k < 13; k++)
                typed(&w, inst, "get", TYPES[k], 2 + 2 * (uint32_t)k);
        exchange(&w);
        cr_assert(rep.rep.ok, "%s", rep.message);
        cr_assert(pv_get(rep.rep.result, "refused") == NULL, "a call was refused");
        r = pv_get(rep.rep.result, "results");
        cr_assert(r != NULL && r->type == PV_ARRAY);
        cr_assert(eq(u32, r->a.n, 29));
        for (int k = 0; k < 13; k++) {
                struct pw want;
                struct pv_doc doc = { 0 };

                v = &r->a.items[16 + k];
                cr_assert(v->type == PV_ARRAY && v->a.n == 1, "%s: one value", TYPES[k]);
                /* The value as the daemon decodes what was sent: compare decoded values. */
                cr_assert(pw_init(&want) == 0);
                value(&want, k);
                cr_assert(pv_decode(pw_data(&want), pw_size(&want), NULL, &doc, NULL, 0) == 0);
                cr_assert(pv_equal(&v->a.items[0], doc.root), "%s came back changed", TYPES[k]);
                pv_doc_fini(&doc);
                pw_fini(&want);
        }
}

Test(daemon_fmi_types, a_value_outside_its_types_range_is_refused_before_any_call)
{
        static const struct { const char *type; int64_t v; } bad[] = {
                { "Int8", 128 }, { "UInt8", -1 }, { "Int16", -32769 }, { "UInt16", 65536 },
                { "Int32", 2147483648 }, { "UInt32", -5 },
        };
        char want[96];
        struct pw w;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                cr_assert(pw_init(&w) == 0);
                proto_req_begin(&w, 10 + i, PROTO_OP_FMI, 1);
                pw_str(&w, "calls");
                pw_array(&w, 1);
                typed(&w, 1, "set", bad[i].type, 5);
                pw_i64(&w, bad[i].v);
                exchange(&w);
                cr_assert(not(rep.rep.ok), "%s %lld accepted", bad[i].type,
                          (long long)bad[i].v);
                cr_assert(eq(int, rep.rep.code, PROTO_E_BAD_REQUEST));
                snprintf(want, sizeof(want), "args.calls[0].values[0]: not a value of type %s",
                         bad[i].type);
                cr_assert(strstr(rep.message, want) != NULL, "'%s' does not say '%s'",
                          rep.message, want);
        }
}

/* ---- A batch above the default message size, under a larger max_message ---- */

static char *big_dir;

static void big_setup(void)
{
        static const char conf[] = "[control]\nmax_message = 64M\n";
        char path[4096];

        big_dir = tmpdir_new("fmud-fmi-big");
        cr_assert(big_dir != NULL);
        cr_assert(tmpdir_write(big_dir, "fmud.conf", conf, strlen(conf)) == 0);
        snprintf(path, sizeof(path), "%s/fmud.conf", big_dir);
        daemon_start(&d, (const char *const[]){ "--config", path, NULL });
        daemon_raw_open(&d, &raw);
}

static void big_teardown(void)
{
        teardown();
        tmpdir_free(big_dir);
        big_dir = NULL;
}

Test(daemon_fmi_big, a_batch_above_the_default_message_size_is_checked_whole,
     .init = big_setup, .fini = big_teardown, .timeout = 120)
{
        enum { N_CALLS = 20, BYTES = 1000000 };
        uint8_t *bytes = calloc(1, BYTES);
        struct pw w;

        cr_assert(bytes != NULL);
        cr_assert(pw_init(&w) == 0);
        proto_req_begin(&w, 1, PROTO_OP_FMI, 1);
        pw_str(&w, "calls");
        pw_array(&w, N_CALLS);
        for (int i = 0; i < N_CALLS; i++) {
                typed(&w, 4242, "set", "Binary", 0);
                pw_bin(&w, bytes, BYTES);
        }
        free(bytes);
        cr_assert(gt(sz, pw_size(&w), (size_t)PROTO_MAX_MSG));
        exchange(&w);
        /* Checked by the daemon as any batch, not lost to a limit below max_message. */
        cr_assert(not(rep.rep.ok));
        cr_assert(eq(int, rep.rep.code, PROTO_E_NO_SESSION), "%s", rep.message);
        cr_assert(eq(str, rep.message, "calls[0]: no instance 4242"));
}
