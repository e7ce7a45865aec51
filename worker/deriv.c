/*
 * deriv: output derivatives (FMI 3.0 section 4.1.2, FMI 2.0
 * fmi2GetRealOutputDerivatives), FMI 2.0 input derivatives, directional
 * and adjoint derivatives (section 2.2.12) and per-element variable
 * dependencies (section 2.2.9).
 *
 * DESIGN: the same checks as a get: known value references of a float
 * type, readable in this state, orders within 1..maxOutputDerivativeOrder,
 * and nValues, nSeed, nSensitivity equal to the serialized element counts
 * of the variables they belong to.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "worker/worker.h"

static_assert(sizeof(size_t) == sizeof(uint64_t), "size_t travels as u64");
static_assert(sizeof(fmi3DependencyKind) == sizeof(uint32_t), "kinds travel as u32");

static bool is_float(enum md_type t)
{
        return t == MD_FLOAT32 || t == MD_FLOAT64;
}

/* Look up vrs and sum their elements; false after refusing. */
static bool float_vars(struct worker *w, const uint32_t *vrs, uint32_t n, const char *fn,
                       bool output, uint64_t *ret_total, struct reply *rp)
{
        uint64_t total = 0;

        for (uint32_t i = 0; i < n; i++) {
                const struct md_variable *v = vars_find(w, MD_FLOAT64, vrs[i]);
                const char *why;

                if (!v) {
                        v = md_find_vr(w->md, vrs[i]);
                        if (v)
                                goto type;
                        reply_refuse(rp, CALL_E_NOVAR, "%s: unknown value reference %" PRIu32, fn, vrs[i]);
                        return false;
                }
                if (!is_float(v->type))
                        goto type;
                if (output && (v->causality != MD_CAUSALITY_OUTPUT ||
                               v->variability != MD_VARIABILITY_CONTINUOUS)) {
                        reply_refuse(rp, CALL_E_INVAL, "%s: variable '%s' (vr %" PRIu32 ") is not a "
                                     "continuous output", fn, v->name, vrs[i]);
                        return false;
                }
                why = output ? access_get_refusal(w, v) : NULL;
                if (why) {
                        reply_refuse(rp, CALL_E_ACCESS, "%s: variable '%s' (vr %" PRIu32 ") %s", fn,
                                     v->name, vrs[i], why);
                        return false;
                }
                total += vars_elements(w, v);
                continue;
type:
                reply_refuse(rp, CALL_E_TYPE, "%s: variable '%s' (vr %" PRIu32 ") is of type %s, "
                             "not a float type", fn, v->name, vrs[i], md_type_name(v->type));
                return false;
        }
        *ret_total = total;
        return true;
}

static bool count_ok(uint64_t given, uint64_t want, const char *what, const char *fn,
                     struct reply *rp)
{
        if (given == want)
                return true;
        reply_refuse(rp, given > want ? CALL_E_TOO_MANY : CALL_E_TOO_FEW, "%s: %s = %" PRIu64
                     ", but the variables have %" PRIu64 " values", fn, what, given, want);
        return false;
}

static bool orders_ok(const struct worker *w, const int32_t *orders, uint32_t n, bool input,
                      const char *fn, struct reply *rp)
{
        int32_t max = input ? INT32_MAX : (int32_t)w->md->cs.max_output_derivative_order;

        for (uint32_t i = 0; i < n; i++)
                if (orders[i] < 1 || orders[i] > max) {
                        reply_refuse(rp, CALL_E_INVAL, "%s: order %" PRId32 " is outside 1..%" PRId32,
                                     fn, orders[i], max);
                        return false;
                }
        return true;
}

void h_output_derivatives(struct worker *w, const struct call_in *in, struct reply *rp)
{
        const char *fn = fsm_fmi_name(w, CALL_OP_GET_OUTPUT_DERIVATIVES, MD_TYPE_COUNT);
        struct call_derivatives d, out;
        const void *vrs, *orders;
        uint64_t total, off;
        double *values;
        int s;

        memcpy(&d, in->body, sizeof(d));
        if (call_in_range(in, &d.vrs, 4, d.n_vrs, &vrs) < 0 ||
            call_in_range(in, &d.orders, 4, d.n_vrs, &orders) < 0 || d.data.len) {
                reply_refuse(rp, CALL_E_BADMSG, "%s: malformed arguments", fn);
                return;
        }
        if (!float_vars(w, vrs, d.n_vrs, fn, true, &total, rp) ||
            !orders_ok(w, orders, d.n_vrs, false, fn, rp) ||
            !count_ok(d.n_values, total, "nValues", fn, rp))
                return;
        if (d.n_values > UINT64_MAX / 8 || call_out_alloc(&rp->out, d.n_values * 8, &off) < 0) {
                reply_refuse(rp, CALL_E_MSGSIZE, "%s: the values do not fit the channel", fn);
                return;
        }
        values = call_out_ptr(&rp->out, off);
        if (w->fmi == MD_FMI3)
                s = w->lib->f3.fmi3GetOutputDerivatives(w->inst, vrs, d.n_vrs, orders, values,
                                                        d.n_values);
        else
                s = w->lib->f2.fmi2GetRealOutputDerivatives(w->inst, vrs, d.n_vrs, orders, values);
        reply_status(rp, s);
        out = (struct call_derivatives){ .n_vrs = d.n_vrs, .n_values = d.n_values };
        if (status_norm(w, s) <= fmi3Warning)
                out.data = (struct call_range){ off, d.n_values * 8 };
        memcpy(rp->result, &out, sizeof(out));
}

void h_input_derivatives(struct worker *w, const struct call_in *in, struct reply *rp)
{
        const char *fn = "fmi2SetRealInputDerivatives";
        struct call_derivatives d;
        const void *vrs, *orders, *values;

        memcpy(&d, in->body, sizeof(d));
        if (call_in_range(in, &d.vrs, 4, d.n_vrs, &vrs) < 0 ||
            call_in_range(in, &d.orders, 4, d.n_vrs, &orders) < 0 ||
            call_in_range(in, &d.data, 8, d.n_values, &values) < 0) {
                reply_refuse(rp, CALL_E_BADMSG, "%s: malformed arguments", fn);
                return;
        }
        for (uint32_t i = 0; i < d.n_vrs; i++) {
                const struct md_variable *v = vars_find(w, MD_FLOAT64, ((const uint32_t *)vrs)[i]);

                if (!v || v->causality != MD_CAUSALITY_INPUT) {
                        reply_refuse(rp, v ? CALL_E_INVAL : CALL_E_NOVAR, "%s: value reference %"
                                     PRIu32 " is not a Real input", fn, ((const uint32_t *)vrs)[i]);
                        return;
                }
        }
        if (!orders_ok(w, orders, d.n_vrs, true, fn, rp) ||
            !count_ok(d.n_values, d.n_vrs, "the number of values", fn, rp))
                return;
        reply_status(rp, w->lib->f2.fmi2SetRealInputDerivatives(w->inst, vrs, d.n_vrs, orders, values));
}

void h_partial(struct worker *w, const struct call_in *in, struct reply *rp)
{
        bool adjoint = in->hdr.op == CALL_OP_ADJOINT_DERIVATIVE;
        const char *fn = fsm_fmi_name(w, (enum call_op)in->hdr.op, MD_TYPE_COUNT);
        struct call_partial p, out;
        const void *unknowns, *knowns, *seed;
        uint64_t nu, nk, off;
        double *sens;
        int s;

        memcpy(&p, in->body, sizeof(p));
        if (call_in_range(in, &p.unknowns, 4, p.n_unknowns, &unknowns) < 0 ||
            call_in_range(in, &p.knowns, 4, p.n_knowns, &knowns) < 0 ||
            call_in_range(in, &p.seed, 8, p.n_seed, &seed) < 0 || p.sensitivity.len) {
                reply_refuse(rp, CALL_E_BADMSG, "%s: malformed arguments", fn);
                return;
        }
        if (!float_vars(w, unknowns, p.n_unknowns, fn, false, &nu, rp) ||
            !float_vars(w, knowns, p.n_knowns, fn, false, &nk, rp) ||
            !count_ok(p.n_seed, adjoint ? nu : nk, "nSeed", fn, rp) ||
            !count_ok(p.n_sensitivity, adjoint ? nk : nu, "nSensitivity", fn, rp))
                return;
        if (p.n_sensitivity > UINT64_MAX / 8 ||
            call_out_alloc(&rp->out, p.n_sensitivity * 8, &off) < 0) {
                reply_refuse(rp, CALL_E_MSGSIZE, "%s: the values do not fit the channel", fn);
                return;
        }
        sens = call_out_ptr(&rp->out, off);
        if (w->fmi == MD_FMI2)
                s = w->lib->f2.fmi2GetDirectionalDerivative(w->inst, unknowns, p.n_unknowns, knowns,
                                                            p.n_knowns, seed, sens);
        else if (adjoint)
                s = w->lib->f3.fmi3GetAdjointDerivative(w->inst, unknowns, p.n_unknowns, knowns,
                                                        p.n_knowns, seed, p.n_seed, sens,
                                                        p.n_sensitivity);
        else
                s = w->lib->f3.fmi3GetDirectionalDerivative(w->inst, unknowns, p.n_unknowns, knowns,
                                                            p.n_knowns, seed, p.n_seed, sens,
                                                            p.n_sensitivity);
        reply_status(rp, s);
        out = (struct call_partial){ .n_sensitivity = p.n_sensitivity };
        if (status_norm(w, s) <= fmi3Warning)
                out.sensitivity = (struct call_range){ off, p.n_sensitivity * 8 };
        memcpy(rp->result, &out, sizeof(out));
}

#define DEPENDENCIES_MAX (1u << 24)

void h_dependencies(struct worker *w, const struct call_in *in, struct reply *rp)
{
        const struct fmi3_api *f = &w->lib->f3;
        const char *fn = fsm_fmi_name(w, (enum call_op)in->hdr.op, MD_TYPE_COUNT);
        struct call_dependencies d, out = { 0 };
        uint64_t o[4];
        size_t n = 0;
        uint32_t *kinds;
        int s;

        memcpy(&d, in->body, sizeof(d));
        out.vr = d.vr;
        if (!md_find_vr(w->md, d.vr)) {
                reply_refuse(rp, CALL_E_NOVAR, "%s: unknown value reference %" PRIu32, fn, d.vr);
                return;
        }
        if (in->hdr.op == CALL_OP_NUM_DEPENDENCIES) {
                s = f->fmi3GetNumberOfVariableDependencies(w->inst, d.vr, &n);
                reply_status(rp, s);
                out.n = n;
                memcpy(rp->result, &out, sizeof(out));
                return;
        }
        if (d.n > DEPENDENCIES_MAX) {
                reply_refuse(rp, CALL_E_INVAL, "%s: nDependencies %" PRIu64 " is over %u", fn, d.n,
                             DEPENDENCIES_MAX);
                return;
        }
        if (call_out_alloc(&rp->out, d.n * 8, &o[0]) < 0 || call_out_alloc(&rp->out, d.n * 4, &o[1]) < 0 ||
            call_out_alloc(&rp->out, d.n * 8, &o[2]) < 0 || call_out_alloc(&rp->out, d.n * 4, &o[3]) < 0) {
                reply_refuse(rp, CALL_E_MSGSIZE, "%s: the dependencies do not fit the channel", fn);
                return;
        }
        kinds = call_out_ptr(&rp->out, o[3]);
        s = status_norm(w, f->fmi3GetVariableDependencies(w->inst, d.vr, call_out_ptr(&rp->out, o[0]),
                                                          call_out_ptr(&rp->out, o[1]),
                                                          call_out_ptr(&rp->out, o[2]),
                                                          (fmi3DependencyKind *)(void *)kinds, d.n));
        for (uint64_t i = 0; s <= fmi3Warning && i < d.n; i++)
                if (kinds[i] > fmi3Dependent) {
                        snprintf(w->last_error, sizeof(w->last_error),
                                 "the FMU returned dependency kind %" PRIu32, kinds[i]);
                        s = fmi3Error;
                }
        reply_status(rp, s);
        out.n = d.n;
        if (s <= fmi3Warning) {
                out.elem_dependent = (struct call_range){ o[0], d.n * 8 };
                out.independents = (struct call_range){ o[1], d.n * 4 };
                out.elem_independents = (struct call_range){ o[2], d.n * 8 };
                out.kinds = (struct call_range){ o[3], d.n * 4 };
        }
        memcpy(rp->result, &out, sizeof(out));
}
