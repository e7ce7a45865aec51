/*
 * daemon: FMI-level instances (PROTOCOL.md "instantiate", "fmi", "free"):
 * a remote master creates instances of test FMUs in a real daemon and
 * calls their FMI functions in batches over the control socket.
 *
 * LinearOde steps x *= exp(-k h) with y_i = x + u_i, so a batch's outputs
 * are compared bit for bit with the same products computed here;
 * ClockedDeriv's Jacobian d y / d x is the matrix A = [1 2; 0 4] its
 * source documents. Requests are built by hand (daemon_raw) so that every
 * key and refusal on the wire is what is tested.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_fixture.h"

#define LINEAR_ODE      FMUD_TEST_FMU_DIR "/LinearOde.fmu"
#define CLOCKED_DERIV   FMUD_TEST_FMU_DIR "/ClockedDeriv.fmu"

static struct fmud_daemon d;
static struct daemon_raw raw;
static struct daemon_raw_reply rep;
static bool have_rep;
static uint64_t next_id = 1;

static void setup(void)
{
        daemon_start(&d, NULL);
        daemon_raw_open(&d, &raw);
}

static void teardown(void)
{
        if (have_rep)
                daemon_raw_reply_fini(&rep);
        have_rep = false;
        daemon_raw_close(&raw);
        daemon_stop(&d);
}

TestSuite(daemon_fmi, .init = setup, .fini = teardown, .timeout = 120);

/* Send w (a whole request) and read its reply into rep. */
static void exchange(struct pw *w)
{
        if (have_rep)
                daemon_raw_reply_fini(&rep);
        daemon_raw_send_pw(&raw, w);
        pw_fini(w);
        daemon_raw_recv(&raw, &rep);
        have_rep = true;
}

static void instantiate_req(struct pw *w, const char *fmu, const char *name, bool event_mode)
{
        cr_assert(pw_init(w) == 0);
        proto_req_begin(w, next_id++, PROTO_OP_INSTANTIATE, 1 + (name != NULL) + event_mode);
        pw_str(w, "fmu");
        pw_str(w, fmu);
        if (event_mode) {
                pw_str(w, "eventModeUsed");
                pw_bool(w, true);
        }
        if (name) {
                pw_str(w, "instanceName");
                pw_str(w, name);
        }
}

static uint64_t instantiate_as(const char *fmu, const char *name, bool event_mode)
{
        const struct pv *v;
        uint64_t id = 0;
        struct pw w;

        instantiate_req(&w, fmu, name, event_mode);
        exchange(&w);
        cr_assert(rep.rep.ok, "instantiate refused: %s", rep.message);
        v = pv_get(rep.rep.result, "instance");
        cr_assert(v && pv_u64(v, &id) == 0 && id > 0);
        return id;
}

static uint64_t instantiate(const char *fmu, const char *name)
{
        return instantiate_as(fmu, name, false);
}

static void batch_begin(struct pw *w, uint32_t n)
{
        cr_assert(pw_init(w) == 0);
        proto_req_begin(w, next_id++, PROTO_OP_FMI, 1);
        pw_str(w, "calls");
        pw_array(w, n);
}

/* A call's map header with instance and fn; n_more keys follow. */
static void call(struct pw *w, uint64_t inst, const char *fn, uint32_t n_more)
{
        pw_map(w, 2 + n_more);
        pw_str(w, "instance");
        pw_u64(w, inst);
        pw_str(w, "fn");
        pw_str(w, fn);
}

static void vrs(struct pw *w, const char *key, const uint32_t *v, uint32_t n)
{
        pw_str(w, key);
        pw_array(w, n);
        for (uint32_t i = 0; i < n; i++)
                pw_u64(w, v[i]);
}

static void set_f64(struct pw *w, uint64_t inst, const uint32_t *v, const double *x, uint32_t n)
{
        call(w, inst, "set", 3);
        pw_str(w, "type");
        pw_str(w, "Float64");
        vrs(w, "vrs", v, n);
        pw_str(w, "values");
        pw_array(w, n);
        for (uint32_t i = 0; i < n; i++)
                pw_f64(w, x[i]);
}

static void get_typed(struct pw *w, uint64_t inst, const char *type, const uint32_t *v,
                      uint32_t n)
{
        call(w, inst, "get", 2);
        pw_str(w, "type");
        pw_str(w, type);
        vrs(w, "vrs", v, n);
}

static void do_step(struct pw *w, uint64_t inst, double t, double h)
{
        call(w, inst, "doStep", 2);
        pw_str(w, "t");
        pw_f64(w, t);
        pw_str(w, "h");
        pw_f64(w, h);
}

static void with_state(struct pw *w, uint64_t inst, const char *fn, uint64_t state)
{
        call(w, inst, fn, 1);
        pw_str(w, "state");
        pw_u64(w, state);
}

/* The reply's results, asserting the batch ran whole with n results. */
static const struct pv *results(uint32_t n)
{
        const struct pv *r;

        cr_assert(rep.rep.ok, "fmi refused: %s", rep.message);
        cr_assert(pv_get(rep.rep.result, "refused") == NULL, "a call was refused");
        r = pv_get(rep.rep.result, "results");
        cr_assert(r && r->type == PV_ARRAY);
        cr_assert(eq(u32, r->a.n, n));
        return r->a.items;
}

static double num(const struct pv *v)
{
        double x = NAN;

        cr_assert(pv_f64(v, &x) == 0);
        return x;
}

/* Initialize inst (start 0, no tolerance) and leave it in Step Mode. */
static void initialize(uint64_t inst)
{
        struct pw w;

        batch_begin(&w, 2);
        call(&w, inst, "enterInitializationMode", 0);
        call(&w, inst, "exitInitializationMode", 0);
        exchange(&w);
        (void)results(2);
}

static const uint32_t U[10] = { 10, 11, 12, 13, 14, 15, 16, 17, 18, 19 };
static const uint32_t Y[10] = { 20, 21, 22, 23, 24, 25, 26, 27, 28, 29 };

Test(daemon_fmi, batches_compute_what_the_fmu_computes)
{
        uint64_t a = instantiate(LINEAR_ODE, "a");
        double u[10], x = 1.0, t = 0;
        struct pw w;

        initialize(a);
        for (int k = 0; k < 5; k++) {
                const struct pv *r;

                for (int i = 0; i < 10; i++)
                        u[i] = k * 10 + i;
                batch_begin(&w, 3);
                set_f64(&w, a, U, u, 10);
                do_step(&w, a, t, 0.1);
                get_typed(&w, a, "Float64", Y, 10);
                exchange(&w);
                r = results(3);
                cr_assert(eq(int, r[0].type, PV_NIL));
                cr_assert(pv_get(&r[1], "lastSuccessfulTime") != NULL);
                cr_assert(eq(dbl, num(pv_get(&r[1], "lastSuccessfulTime")), t + 0.1));
                x *= exp(-1.0 * 0.1);
                t += 0.1;
                cr_assert(eq(u32, r[2].a.n, 10));
                for (int i = 0; i < 10; i++)
                        cr_assert(eq(dbl, num(&r[2].a.items[i]), x + u[i]), "y%d at step %d", i, k);
        }
}

Test(daemon_fmi, one_batch_steps_two_instances)
{
        uint64_t a = instantiate(LINEAR_ODE, "a"), b = instantiate(LINEAR_ODE, "b");
        const uint32_t k_vr = 3, x_vr = 1;
        const double k2 = 2.0;
        const struct pv *r;
        struct pw w;

        cr_assert(a != b);
        /* b decays twice as fast: its k set in Initialization Mode. */
        batch_begin(&w, 5);
        call(&w, a, "enterInitializationMode", 0);
        call(&w, b, "enterInitializationMode", 0);
        set_f64(&w, b, &k_vr, &k2, 1);
        call(&w, a, "exitInitializationMode", 0);
        call(&w, b, "exitInitializationMode", 0);
        exchange(&w);
        (void)results(5);
        batch_begin(&w, 4);
        do_step(&w, a, 0, 0.5);
        do_step(&w, b, 0, 0.5);
        get_typed(&w, a, "Float64", &x_vr, 1);
        get_typed(&w, b, "Float64", &x_vr, 1);
        exchange(&w);
        r = results(4);
        cr_assert(eq(dbl, num(&r[2].a.items[0]), 1.0 * exp(-1.0 * 0.5)));
        cr_assert(eq(dbl, num(&r[3].a.items[0]), 1.0 * exp(-2.0 * 0.5)));
}

Test(daemon_fmi, fmu_state_restores_bit_identical_outputs)
{
        uint64_t a = instantiate(LINEAR_ODE, NULL), s, s2;
        const struct pv *r;
        double y1, y2;
        struct pw w;

        initialize(a);
        batch_begin(&w, 2);
        do_step(&w, a, 0, 0.3);
        call(&w, a, "getFMUState", 0);
        exchange(&w);
        r = results(2);
        cr_assert(pv_u64(pv_get(&r[1], "state"), &s) == 0 && s != 0);
        batch_begin(&w, 3);
        do_step(&w, a, 0.3, 0.2);
        get_typed(&w, a, "Float64", Y, 1);
        with_state(&w, a, "serializeFMUState", s);
        exchange(&w);
        r = results(3);
        y1 = num(&r[1].a.items[0]);
        cr_assert(eq(int, r[2].type, PV_BIN));
        cr_assert(r[2].s.len > 0);
        {
                /* Deserialize the bytes into a new state; restore it; step again. */
                uint32_t len = r[2].s.len;
                void *bytes = malloc(len);

                cr_assert(bytes != NULL);
                memcpy(bytes, r[2].s.ptr, len);
                batch_begin(&w, 4);
                call(&w, a, "deserializeFMUState", 1);
                pw_str(&w, "bytes");
                pw_bin(&w, bytes, len);
                with_state(&w, a, "setFMUState", s);
                do_step(&w, a, 0.3, 0.2);
                get_typed(&w, a, "Float64", Y, 1);
                exchange(&w);
                free(bytes);
        }
        r = results(4);
        cr_assert(pv_u64(pv_get(&r[0], "state"), &s2) == 0 && s2 != 0 && s2 != s);
        y2 = num(&r[3].a.items[0]);
        cr_assert(memcmp(&y1, &y2, sizeof(y1)) == 0, "%.17g then %.17g", y1, y2);
        /* The deserialized state restores the same point. */
        batch_begin(&w, 4);
        with_state(&w, a, "setFMUState", s2);
        do_step(&w, a, 0.3, 0.2);
        get_typed(&w, a, "Float64", Y, 1);
        with_state(&w, a, "freeFMUState", s2);
        exchange(&w);
        r = results(4);
        y2 = num(&r[2].a.items[0]);
        cr_assert(memcmp(&y1, &y2, sizeof(y1)) == 0, "%.17g then %.17g", y1, y2);
}

Test(daemon_fmi, directional_and_adjoint_derivatives_are_the_exact_jacobian)
{
        uint64_t c = instantiate_as(CLOCKED_DERIV, "cd", true);
        const uint32_t y[2] = { 7, 8 }, x[2] = { 1, 2 };
        const double A[2][2] = { { 1, 2 }, { 0, 4 } };
        const struct pv *r;
        struct pw w;

        initialize(c);
        batch_begin(&w, 4);
        for (int j = 0; j < 2; j++) {
                /* Directional: column j of A; adjoint: row j of A (its transpose times e_j). */
                call(&w, c, "getDirectionalDerivative", 3);
                vrs(&w, "unknowns", y, 2);
                vrs(&w, "knowns", x, 2);
                pw_str(&w, "seed");
                pw_array(&w, 2);
                pw_f64(&w, j == 0);
                pw_f64(&w, j == 1);
        }
        for (int j = 0; j < 2; j++) {
                call(&w, c, "getAdjointDerivative", 3);
                vrs(&w, "unknowns", y, 2);
                vrs(&w, "knowns", x, 2);
                pw_str(&w, "seed");
                pw_array(&w, 2);
                pw_f64(&w, j == 0);
                pw_f64(&w, j == 1);
        }
        exchange(&w);
        r = results(4);
        for (int j = 0; j < 2; j++)
                for (int i = 0; i < 2; i++) {
                        cr_assert(eq(dbl, num(&r[j].a.items[i]), A[i][j]), "dy%d/dx%d", i + 1,
                                  j + 1);
                        cr_assert(eq(dbl, num(&r[2 + j].a.items[i]), A[j][i]), "adjoint %d %d",
                                  j, i);
                }
}

Test(daemon_fmi, a_refused_call_names_index_function_and_rule_and_the_instance_goes_on)
{
        uint64_t a = instantiate(LINEAR_ODE, "a");
        const struct pv *r, *ref;
        const double one = 1.0;
        char msg[512];
        struct pw w;

        /* doStep before initialization: the worker refuses it, the FMU never sees it. */
        batch_begin(&w, 3);
        set_f64(&w, a, U, &one, 1);
        do_step(&w, a, 0, 0.1);
        call(&w, a, "enterInitializationMode", 0);
        exchange(&w);
        cr_assert(rep.rep.ok, "%s", rep.message);
        r = pv_get(rep.rep.result, "results");
        cr_assert(r != NULL);
        cr_assert(eq(u32, r->a.n, 1));
        ref = pv_get(rep.rep.result, "refused");
        cr_assert(ref != NULL);
        cr_assert(pv_is_str(pv_get(ref, "fn"), "doStep"));
        cr_assert(pv_is_str(pv_get(ref, "function"), "fmi3DoStep"));
        cr_assert(pv_is_str(pv_get(ref, "code"), "state"));
        {
                uint64_t idx = 99;

                cr_assert(pv_u64(pv_get(ref, "index"), &idx) == 0);
                cr_assert(eq(u64, idx, 1));
        }
        {
                const struct pv *m = pv_get(ref, "message");

                cr_assert(m && m->type == PV_STR);
                snprintf(msg, sizeof(msg), "%.*s", (int)m->s.len, m->s.ptr);
        }
        cr_assert(strstr(msg, "fmi3DoStep") != NULL, "%s", msg);
        cr_assert(strstr(msg, "Instantiated") != NULL || strstr(msg, "instantiated") != NULL,
                  "%s", msg);
        /* Nothing after the refusal ran; the instance initializes and steps as ever. */
        initialize(a);
        batch_begin(&w, 2);
        do_step(&w, a, 0, 0.1);
        get_typed(&w, a, "Float64", Y, 1);
        exchange(&w);
        r = results(2);
        cr_assert(eq(dbl, num(&r[1].a.items[0]), exp(-0.1) + 1.0));
}

/* Send a batch and assert it was refused whole with code and a message holding text. */
static void assert_refused(struct pw *w, enum proto_err code, const char *text)
{
        exchange(w);
        cr_assert(not(rep.rep.ok), "accepted, expected: %s", text);
        cr_assert(eq(int, rep.rep.code, code), "%s", rep.message);
        cr_assert(strstr(rep.message, text) != NULL, "'%s' does not say '%s'", rep.message, text);
}

/* A call refused inside the batch: code and text in "refused". */
static void assert_call_refused(struct pw *w, uint32_t index, const char *code, const char *text)
{
        const struct pv *ref, *m;
        uint64_t idx = 99;

        exchange(w);
        cr_assert(rep.rep.ok, "%s", rep.message);
        ref = pv_get(rep.rep.result, "refused");
        cr_assert(ref != NULL, "nothing refused, expected: %s", text);
        cr_assert(pv_u64(pv_get(ref, "index"), &idx) == 0);
        cr_assert(eq(u64, idx, index));
        cr_assert(pv_is_str(pv_get(ref, "code"), code));
        m = pv_get(ref, "message");
        cr_assert(m && m->type == PV_STR && memmem(m->s.ptr, m->s.len, text, strlen(text)),
                  "'%.*s' does not say '%s'", m ? (int)m->s.len : 0, m ? m->s.ptr : "", text);
}

Test(daemon_fmi, bad_batches_are_refused_with_their_reason)
{
        uint64_t a = instantiate(LINEAR_ODE, "a"), s;
        const uint32_t bad_vr = 999, x_vr = 1;
        struct pw w;

        initialize(a);
        /* No such instance. */
        batch_begin(&w, 1);
        call(&w, 4242, "terminate", 0);
        assert_refused(&w, PROTO_E_NO_SESSION, "calls[0]: no instance 4242");
        /* Too many calls. */
        batch_begin(&w, PROTO_FMI_MAX_CALLS + 1);
        for (uint32_t i = 0; i <= PROTO_FMI_MAX_CALLS; i++)
                call(&w, a, "terminate", 0);
        assert_refused(&w, PROTO_E_BAD_REQUEST, "1025 calls, more than 1024 in one batch");
        /* Too many value references in one call. */
        batch_begin(&w, 1);
        call(&w, a, "get", 2);
        pw_str(&w, "type");
        pw_str(&w, "Float64");
        pw_str(&w, "vrs");
        pw_array(&w, PROTO_FMI_MAX_VALUES + 1);
        for (uint32_t i = 0; i <= PROTO_FMI_MAX_VALUES; i++)
                pw_u64(&w, 1);
        assert_refused(&w, PROTO_E_BAD_REQUEST, "args.calls[0].vrs: 4097 value references, "
                       "more than 4096");
        /* An unknown function, a key the function does not take, a value of the wrong type. */
        batch_begin(&w, 1);
        call(&w, a, "stepTwice", 0);
        assert_refused(&w, PROTO_E_BAD_REQUEST, "args.calls[0].fn: expected an FMI function");
        batch_begin(&w, 1);
        call(&w, a, "terminate", 1);
        pw_str(&w, "t");
        pw_f64(&w, 1);
        assert_refused(&w, PROTO_E_BAD_REQUEST, "args.calls[0].t: terminate takes no such "
                       "argument");
        batch_begin(&w, 1);
        call(&w, a, "set", 3);
        pw_str(&w, "type");
        pw_str(&w, "Float64");
        vrs(&w, "vrs", U, 1);
        pw_str(&w, "values");
        pw_array(&w, 1);
        pw_str(&w, "one");
        assert_refused(&w, PROTO_E_BAD_REQUEST, "args.calls[0].values[0]: not a value of type Float64");
        /*
         * Fewer values than value references: well formed (an array a
         * structural parameter sized 0 has none, FMI 3.0 section 2.4.7.2),
         * so the worker counts them against these scalars.
         */
        batch_begin(&w, 1);
        call(&w, a, "set", 3);
        pw_str(&w, "type");
        pw_str(&w, "Float64");
        vrs(&w, "vrs", U, 2);
        pw_str(&w, "values");
        pw_array(&w, 1);
        pw_f64(&w, 1);
        assert_call_refused(&w, 0, "invalid", "nValues = 1, but the 2 variables have 2 values "
                            "(one per element)");
        batch_begin(&w, 1);
        call(&w, a, "get", 3);
        pw_str(&w, "type");
        pw_str(&w, "Float64");
        vrs(&w, "vrs", U, 1);
        pw_str(&w, "nValues");
        pw_u64(&w, PROTO_FMI_MAX_ELEMENTS + 1);
        assert_refused(&w, PROTO_E_BAD_REQUEST, "args.calls[0].nValues: 1048577 for 1 value "
                       "references");
        /* More values than the variables have elements: the worker counts them. */
        batch_begin(&w, 1);
        call(&w, a, "get", 3);
        pw_str(&w, "type");
        pw_str(&w, "Float64");
        vrs(&w, "vrs", &x_vr, 1);
        pw_str(&w, "nValues");
        pw_u64(&w, 2);
        assert_call_refused(&w, 0, "invalid", "nValues = 2, but the variable has 1 value (one per "
                            "element)");
        /* The FMU's rules, in the worker: an unknown vr, a vr of another type. */
        batch_begin(&w, 1);
        get_typed(&w, a, "Float64", &bad_vr, 1);
        assert_call_refused(&w, 0, "no-variable", "999");
        batch_begin(&w, 1);
        get_typed(&w, a, "Int32", &x_vr, 1);
        assert_call_refused(&w, 0, "type", "fmi3GetInt32");
        /* Nothing was harmed: the instance still steps. */
        batch_begin(&w, 2);
        do_step(&w, a, 0, 0.1);
        call(&w, a, "getFMUState", 0);
        exchange(&w);
        cr_assert(pv_u64(pv_get(&results(2)[1], "state"), &s) == 0 && s != 0);
}

Test(daemon_fmi, a_batch_whose_results_outgrow_the_reply_limit_stops_at_that_call)
{
        /* 600 gets of 4096 Float64: some 22 MB of results, over the 16 MB limit. */
        const uint32_t n_calls = 600, n_vals = PROTO_FMI_MAX_VALUES;
        uint64_t a = instantiate(LINEAR_ODE, "a"), idx = 0;
        const struct pv *r, *ref, *m;
        size_t per_call = 0, with_next;
        struct pw w;

        initialize(a);
        batch_begin(&w, n_calls);
        for (uint32_t i = 0; i < n_calls; i++) {
                call(&w, a, "get", 2);
                pw_str(&w, "type");
                pw_str(&w, "Float64");
                pw_str(&w, "vrs");
                pw_array(&w, n_vals);
                for (uint32_t k = 0; k < n_vals; k++)
                        pw_u64(&w, Y[k % 10]);
        }
        exchange(&w);
        cr_assert(rep.rep.ok, "refused whole: %s", rep.message);
        ref = pv_get(rep.rep.result, "refused");
        cr_assert(ref != NULL, "no call refused");
        cr_assert(pv_is_str(pv_get(ref, "code"), "too-large"));
        cr_assert(pv_u64(pv_get(ref, "index"), &idx) == 0);
        m = pv_get(ref, "message");
        cr_assert(m && m->type == PV_STR);
        cr_assert(memmem(m->s.ptr, m->s.len, "limit of 16777216 bytes", 23) != NULL,
                  "%.*s", (int)m->s.len, m->s.ptr);
        /* Every result before the refused call is there, whole; the refused call is the first
         * whose result would not fit (each get's result is the same size). */
        r = pv_get(rep.rep.result, "results");
        cr_assert(r && r->type == PV_ARRAY);
        cr_assert(eq(u64, r->a.n, idx));
        cr_assert(idx > 0 && idx < n_calls);
        for (uint32_t i = 0; i < r->a.n; i++) {
                cr_assert(eq(u32, r->a.items[i].a.n, n_vals));
                cr_assert(eq(dbl, num(&r->a.items[i].a.items[n_vals - 1]),
                             num(&r->a.items[0].a.items[n_vals - 1])));
        }
        per_call = 3 + 9 * (size_t)n_vals;      /* array32 header, then float64s */
        with_next = (idx + 1) * per_call;
        cr_assert(with_next > (16u << 20) - 4096, "refused at %llu", (unsigned long long)idx);
        cr_assert(idx * per_call <= 16u << 20);
        /* The instance is not harmed: it steps and answers as ever. */
        batch_begin(&w, 2);
        do_step(&w, a, 0, 0.1);
        get_typed(&w, a, "Float64", Y, 1);
        exchange(&w);
        r = results(2);
        cr_assert(eq(dbl, num(&r[1].a.items[0]), exp(-0.1)));
}
