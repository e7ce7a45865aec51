/*
 * get_set: the GET and SET handlers (every type, Clocks included) and the
 * Clock timing functions (interval and shift, decimal and fraction).
 *
 * DESIGN: GET and SET are vars_check() then values_get()/values_set();
 * a successful set of structural parameters is remembered, since array
 * sizes follow it. The Clock timing functions take one value per Clock,
 * so their checks are simpler: each value reference must name an input
 * Clock whose type has the quantity (table 5: triggered Clocks have no
 * interval or shift, aperiodic ones no shift; only fixed and tunable
 * periodic Clocks take a new interval, a fixed one only in Initialization
 * Mode), and the fraction forms need supportsFraction.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "worker/worker.h"

static_assert(sizeof(fmi3IntervalQualifier) == sizeof(int32_t), "qualifiers travel as i32");

void h_get(struct worker *w, const struct call_in *in, struct reply *rp)
{
        struct call_values cv, out;
        struct vblock b;
        const char *fn;
        int s;

        memcpy(&cv, in->body, sizeof(cv));
        fn = fsm_fmi_name(w, CALL_OP_GET, (enum md_type)cv.type);
        if (!vars_check(w, in, &cv, false, fn, &b, rp))
                return;
        if (call_elem_size(b.type))
                call_out_expect(&rp->out, call_out_need(b.n_values * call_elem_size(b.type), 1));
        s = values_get(w, &b, rp, &out);
        if (s < 0)
                return;
        reply_status(rp, s);
        if (s <= fmi3Warning)
                clocks_note_get(w, &b, rp, &out);
        memcpy(rp->result, &out, sizeof(out));
}

void h_set(struct worker *w, const struct call_in *in, struct reply *rp)
{
        struct call_values cv;
        struct vblock b;
        const char *fn;
        int s;

        memcpy(&cv, in->body, sizeof(cv));
        fn = fsm_fmi_name(w, CALL_OP_SET, (enum md_type)cv.type);
        if (!vars_check(w, in, &cv, true, fn, &b, rp) || !clocks_set_ok(w, &b, fn, rp))
                return;
        s = values_set(w, &b, rp);
        if (s < 0)
                return;
        reply_status(rp, s);
        if (s <= fmi3Warning) {
                vars_note_set(w, &b);
                clocks_note_set(w, &b);
                if (w->state == CALL_ST_INTERMEDIATE)
                        w->iu_did_set = true;
        }
}

static bool is_get(enum call_op op)
{
        return op >= CALL_OP_GET_INTERVAL_DECIMAL && op <= CALL_OP_GET_SHIFT_FRACTION;
}

static bool is_fraction(enum call_op op)
{
        return op == CALL_OP_GET_INTERVAL_FRACTION || op == CALL_OP_GET_SHIFT_FRACTION ||
               op == CALL_OP_SET_INTERVAL_FRACTION || op == CALL_OP_SET_SHIFT_FRACTION;
}

static bool has_qualifiers(enum call_op op)
{
        return op == CALL_OP_GET_INTERVAL_DECIMAL || op == CALL_OP_GET_INTERVAL_FRACTION;
}

static bool is_shift(enum call_op op)
{
        return op == CALL_OP_GET_SHIFT_DECIMAL || op == CALL_OP_GET_SHIFT_FRACTION ||
               op == CALL_OP_SET_SHIFT_DECIMAL || op == CALL_OP_SET_SHIFT_FRACTION;
}

/* Why Clock v has no such quantity (table 5), or NULL; *ret_code the refusal's code. */
static const char *timing_refusal(const struct worker *w, enum call_op op,
                                  const struct md_variable *v, enum call_error *ret_code)
{
        enum md_interval_variability iv = v->attrs.clock.interval_variability;
        bool periodic = iv == MD_INTERVAL_CONSTANT || iv == MD_INTERVAL_FIXED ||
                        iv == MD_INTERVAL_TUNABLE;

        *ret_code = CALL_E_INVAL;
        if (v->causality != MD_CAUSALITY_INPUT)
                return "is not an input Clock: it has no interval or shift (table 5)";
        if (!periodic && iv != MD_INTERVAL_CHANGING && iv != MD_INTERVAL_COUNTDOWN)
                return "is a triggered Clock: it has no interval or shift (table 5)";
        if (!periodic && is_shift(op))
                return "is an aperiodic Clock: it has no shift (section 2.2.8.2)";
        if (is_get(op))
                return NULL;
        if (iv != MD_INTERVAL_FIXED && iv != MD_INTERVAL_TUNABLE)
                return "has its timing defined by the FMU: it cannot be set (table 5)";
        if (iv == MD_INTERVAL_FIXED && w->state != CALL_ST_INITIALIZATION) {
                *ret_code = CALL_E_ACCESS;
                return "is a fixed periodic Clock: its interval can only be set in "
                       "Initialization Mode (table 5)";
        }
        return NULL;
}

static bool clocks_ok(struct worker *w, enum call_op op, const uint32_t *vrs, uint32_t n,
                      const char *fn, struct reply *rp)
{
        for (uint32_t i = 0; i < n; i++) {
                const struct md_variable *v = md_find_vr(w->md, vrs[i]);
                enum call_error code;
                const char *why;

                if (!v) {
                        reply_refuse(rp, CALL_E_NOVAR, "%s: unknown value reference %" PRIu32, fn,
                                     vrs[i]);
                        return false;
                }
                if (v->type != MD_CLOCK) {
                        reply_refuse(rp, CALL_E_TYPE, "%s: variable '%s' (vr %" PRIu32 ") is of type "
                                     "%s, not Clock", fn, v->name, vrs[i], md_type_name(v->type));
                        return false;
                }
                why = timing_refusal(w, op, v, &code);
                if (why) {
                        reply_refuse(rp, code, "%s: Clock '%s' (vr %" PRIu32 ") %s", fn, v->name,
                                     vrs[i], why);
                        return false;
                }
                if (is_fraction(op) && !v->attrs.clock.supports_fraction) {
                        reply_refuse(rp, CALL_E_NOTSUP, "%s: Clock '%s' has supportsFraction=false",
                                     fn, v->name);
                        return false;
                }
        }
        return true;
}

static int timing_get(struct worker *w, enum call_op op, const uint32_t *vrs, uint32_t n,
                      struct call_clock_timing *ct, struct reply *rp)
{
        const struct fmi3_api *f = &w->lib->f3;
        uint64_t a, b = 0, c = 0;
        int32_t *q = NULL;
        void *pa, *pb = NULL;
        int s;

        if (call_out_alloc(&rp->out, (uint64_t)n * 8, &a) < 0 ||
            (is_fraction(op) && call_out_alloc(&rp->out, (uint64_t)n * 8, &b) < 0) ||
            (has_qualifiers(op) && call_out_alloc(&rp->out, (uint64_t)n * 4, &c) < 0)) {
                reply_refuse(rp, CALL_E_MSGSIZE, "the values do not fit the channel");
                return -1;
        }
        pa = call_out_ptr(&rp->out, a);
        if (is_fraction(op))
                pb = call_out_ptr(&rp->out, b);
        if (has_qualifiers(op))
                q = call_out_ptr(&rp->out, c);
        switch (op) {
        case CALL_OP_GET_INTERVAL_DECIMAL:
                s = f->fmi3GetIntervalDecimal(w->inst, vrs, n, pa, (fmi3IntervalQualifier *)q);
                break;
        case CALL_OP_GET_INTERVAL_FRACTION:
                s = f->fmi3GetIntervalFraction(w->inst, vrs, n, pa, pb, (fmi3IntervalQualifier *)q);
                break;
        case CALL_OP_GET_SHIFT_DECIMAL:
                s = f->fmi3GetShiftDecimal(w->inst, vrs, n, pa);
                break;
        default:
                s = f->fmi3GetShiftFraction(w->inst, vrs, n, pa, pb);
                break;
        }
        s = status_norm(w, s);
        for (uint32_t i = 0; q && s <= fmi3Warning && i < n; i++)
                if (q[i] < fmi3IntervalNotYetKnown || q[i] > fmi3IntervalChanged) {
                        snprintf(w->last_error, sizeof(w->last_error),
                                 "the FMU returned interval qualifier %d", (int)q[i]);
                        s = fmi3Error;
                }
        ct->a = (struct call_range){ a, (uint64_t)n * 8 };
        if (is_fraction(op))
                ct->b = (struct call_range){ b, (uint64_t)n * 8 };
        if (has_qualifiers(op))
                ct->c = (struct call_range){ c, (uint64_t)n * 4 };
        return s;
}

void h_clock_timing(struct worker *w, const struct call_in *in, struct reply *rp)
{
        enum call_op op = (enum call_op)in->hdr.op;
        const struct fmi3_api *f = &w->lib->f3;
        struct call_clock_timing ct, out = { 0 };
        const void *vrs, *a, *b = NULL;
        const char *fn;
        int s;

        memcpy(&ct, in->body, sizeof(ct));
        fn = fsm_fmi_name(w, op, MD_TYPE_COUNT);
        if (call_in_range(in, &ct.vrs, sizeof(uint32_t), ct.n_vrs, &vrs) < 0) {
                reply_refuse(rp, CALL_E_BADMSG, "%s: malformed value references", fn);
                return;
        }
        if (!clocks_ok(w, op, vrs, ct.n_vrs, fn, rp))
                return;
        out.n_vrs = ct.n_vrs;
        if (is_get(op)) {
                s = timing_get(w, op, vrs, ct.n_vrs, &out, rp);
                if (s < 0)
                        return;
                reply_status(rp, s);
                memcpy(rp->result, &out, sizeof(out));
                return;
        }
        if (call_in_range(in, &ct.a, 8, ct.n_vrs, &a) < 0 ||
            (is_fraction(op) && call_in_range(in, &ct.b, 8, ct.n_vrs, &b) < 0)) {
                reply_refuse(rp, CALL_E_BADMSG, "%s: malformed values", fn);
                return;
        }
        switch (op) {
        case CALL_OP_SET_INTERVAL_DECIMAL:
                s = f->fmi3SetIntervalDecimal(w->inst, vrs, ct.n_vrs, a);
                break;
        case CALL_OP_SET_INTERVAL_FRACTION:
                s = f->fmi3SetIntervalFraction(w->inst, vrs, ct.n_vrs, a, b);
                break;
        case CALL_OP_SET_SHIFT_DECIMAL:
                s = f->fmi3SetShiftDecimal(w->inst, vrs, ct.n_vrs, a);
                break;
        default:
                s = f->fmi3SetShiftFraction(w->inst, vrs, ct.n_vrs, a, b);
                break;
        }
        reply_status(rp, s);
}
