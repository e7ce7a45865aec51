/*
 * inst_extra: derivatives (output, input, directional, adjoint), variable
 * dependencies and FMU states: the calls around the core of get, set and
 * step.
 *
 * DESIGN: the same pattern as every call: encode, one round trip, check
 * the result against what was asked (counts, ranges, enum values) before
 * any of it reaches the caller. FMU states stay in the worker; handles
 * and serialized bytes are all that cross.
 */
#include <errno.h>
#include <string.h>

#include "engine/instance/inst_int.h"

static int derivatives(struct inst *inst, enum call_op op, const uint32_t vrs[], size_t nvr,
                       const int32_t orders[], const double *in, double *out, size_t nvalues)
{
        struct call_derivatives d = { .n_vrs = (uint32_t)nvr, .n_values = nvalues };
        struct req rq;
        struct rep rp;
        const void *p;
        int r;

        if (nvr > UINT32_MAX || (nvr && (!vrs || !orders)) || (nvalues && !(in ? in : out)))
                return -EINVAL;
        r = call_begin(inst, false);
        if (r < 0)
                return r;
        req_init(inst, &rq, op, sizeof(d));
        if (nvalues > UINT64_MAX / 8 || req_put(&rq, vrs, (uint64_t)nvr * 4, &d.vrs) < 0 ||
            req_put(&rq, orders, (uint64_t)nvr * 4, &d.orders) < 0 ||
            (in && req_put(&rq, in, (uint64_t)nvalues * 8, &d.data) < 0) ||
            (out && call_out_need((uint64_t)nvalues * 8, 1) > inst->side_size + inst->max_record))
                return -EMSGSIZE;
        memcpy(rq.body, &d, sizeof(d));
        r = call_run(inst, &rq, &rp);
        if (out && r >= 0 && r <= INST_WARNING) {
                memcpy(&d, rp.result, sizeof(d));
                if (d.n_values != nvalues)
                        r = inst_protocol(inst, "derivatives of another count");
                else if ((r = rep_range(inst, &rp, &d.data, 8, nvalues, &p)) == 0 && nvalues)
                        memcpy(out, p, nvalues * 8);
        }
        call_end(inst, &rp);
        return r;
}

int inst_get_output_derivatives(struct inst *inst, const uint32_t vrs[], size_t nvr,
                                const int32_t orders[], double values[], size_t nvalues)
{
        return derivatives(inst, CALL_OP_GET_OUTPUT_DERIVATIVES, vrs, nvr, orders, NULL, values,
                           nvalues);
}

int inst_set_input_derivatives(struct inst *inst, const uint32_t vrs[], size_t nvr,
                               const int32_t orders[], const double values[], size_t nvalues)
{
        if (nvalues && !values)
                return -EINVAL;
        return derivatives(inst, CALL_OP_SET_INPUT_DERIVATIVES, vrs, nvr, orders, values, NULL,
                           nvalues);
}

static int partial(struct inst *inst, enum call_op op, const uint32_t unknowns[], size_t nu,
                   const uint32_t knowns[], size_t nk, const double seed[], size_t n_seed,
                   double sens[], size_t n_sens)
{
        struct call_partial p = { .n_unknowns = (uint32_t)nu, .n_knowns = (uint32_t)nk,
                                  .n_seed = n_seed, .n_sensitivity = n_sens };
        struct req rq;
        struct rep rp;
        const void *data;
        int r;

        if (nu > UINT32_MAX || nk > UINT32_MAX || (nu && !unknowns) || (nk && !knowns) ||
            (n_seed && !seed) || (n_sens && !sens))
                return -EINVAL;
        r = call_begin(inst, false);
        if (r < 0)
                return r;
        req_init(inst, &rq, op, sizeof(p));
        if (n_seed > UINT64_MAX / 8 || n_sens > UINT64_MAX / 8 ||
            req_put(&rq, unknowns, (uint64_t)nu * 4, &p.unknowns) < 0 ||
            req_put(&rq, knowns, (uint64_t)nk * 4, &p.knowns) < 0 ||
            req_put(&rq, seed, (uint64_t)n_seed * 8, &p.seed) < 0 ||
            call_out_need((uint64_t)n_sens * 8, 1) > inst->side_size + inst->max_record)
                return -EMSGSIZE;
        memcpy(rq.body, &p, sizeof(p));
        r = call_run(inst, &rq, &rp);
        if (r >= 0 && r <= INST_WARNING) {
                memcpy(&p, rp.result, sizeof(p));
                if (p.n_sensitivity != n_sens)
                        r = inst_protocol(inst, "a sensitivity of another length");
                else if ((r = rep_range(inst, &rp, &p.sensitivity, 8, n_sens, &data)) == 0 && n_sens)
                        memcpy(sens, data, n_sens * 8);
        }
        call_end(inst, &rp);
        return r;
}

int inst_get_directional_derivative(struct inst *inst, const uint32_t unknowns[], size_t n_unknowns,
                                    const uint32_t knowns[], size_t n_knowns, const double seed[],
                                    size_t n_seed, double sensitivity[], size_t n_sensitivity)
{
        return partial(inst, CALL_OP_DIRECTIONAL_DERIVATIVE, unknowns, n_unknowns, knowns, n_knowns,
                       seed, n_seed, sensitivity, n_sensitivity);
}

int inst_get_adjoint_derivative(struct inst *inst, const uint32_t unknowns[], size_t n_unknowns,
                                const uint32_t knowns[], size_t n_knowns, const double seed[],
                                size_t n_seed, double sensitivity[], size_t n_sensitivity)
{
        return partial(inst, CALL_OP_ADJOINT_DERIVATIVE, unknowns, n_unknowns, knowns, n_knowns,
                       seed, n_seed, sensitivity, n_sensitivity);
}

int inst_get_number_of_variable_dependencies(struct inst *inst, uint32_t vr, size_t *ret)
{
        struct call_dependencies d = { .vr = vr };
        struct rep rp;
        int r;

        if (!ret)
                return -EINVAL;
        r = call_simple(inst, CALL_OP_NUM_DEPENDENCIES, &d, sizeof(d), &rp);
        if (r >= 0 && r <= INST_WARNING) {
                memcpy(&d, rp.result, sizeof(d));
                *ret = d.n;
        }
        call_end(inst, &rp);
        return r;
}

int inst_get_variable_dependencies(struct inst *inst, uint32_t vr, size_t elem_dependent[],
                                   uint32_t independents[], size_t elem_independents[],
                                   int kinds[], size_t n)
{
        struct call_dependencies d = { .vr = vr, .n = n };
        const void *p[4];
        struct rep rp;
        int r;

        if (n && (!elem_dependent || !independents || !elem_independents || !kinds))
                return -EINVAL;
        r = call_simple(inst, CALL_OP_DEPENDENCIES, &d, sizeof(d), &rp);
        if (r >= 0 && r <= INST_WARNING) {
                memcpy(&d, rp.result, sizeof(d));
                if (d.n != n) {
                        r = inst_protocol(inst, "dependencies of another count");
                } else if ((r = rep_range(inst, &rp, &d.elem_dependent, 8, n, &p[0])) == 0 &&
                           (r = rep_range(inst, &rp, &d.independents, 4, n, &p[1])) == 0 &&
                           (r = rep_range(inst, &rp, &d.elem_independents, 8, n, &p[2])) == 0 &&
                           (r = rep_range(inst, &rp, &d.kinds, 4, n, &p[3])) == 0 && n) {
                        memcpy(elem_dependent, p[0], n * 8);
                        memcpy(independents, p[1], n * 4);
                        memcpy(elem_independents, p[2], n * 8);
                        for (size_t i = 0; i < n; i++) {
                                uint32_t k;

                                memcpy(&k, (const uint32_t *)p[3] + i, sizeof(k));
                                if (k > 5) {
                                        r = inst_protocol(inst, "an invalid dependency kind");
                                        break;
                                }
                                kinds[i] = (int)k;
                        }
                }
        }
        call_end(inst, &rp);
        return r;
}

/* One FMU state call; the result in *ret. */
static int state_call(struct inst *inst, enum call_op op, const struct call_fmu_state *f,
                      struct call_fmu_state *ret, struct rep *rp)
{
        int r;

        r = call_simple(inst, op, f, sizeof(*f), rp);
        if (r >= 0 && r <= INST_WARNING)
                memcpy(ret, rp->result, sizeof(*ret));
        return r;
}

int inst_get_fmu_state(struct inst *inst, uint64_t *handle)
{
        struct call_fmu_state f = { .handle = handle ? *handle : 0 }, out;
        struct rep rp;
        int r;

        if (!handle)
                return -EINVAL;
        r = state_call(inst, CALL_OP_GET_FMU_STATE, &f, &out, &rp);
        if (r >= 0 && r <= INST_WARNING) {
                if (!out.handle || (f.handle && out.handle != f.handle))
                        r = inst_protocol(inst, "an FMU state handle that is not the one asked for");
                else
                        *handle = out.handle;
        }
        call_end(inst, &rp);
        return r;
}

int inst_set_fmu_state(struct inst *inst, uint64_t handle)
{
        struct call_fmu_state f = { .handle = handle }, out;
        struct rep rp;
        int r;

        r = state_call(inst, CALL_OP_SET_FMU_STATE, &f, &out, &rp);
        call_end(inst, &rp);
        return r;
}

int inst_free_fmu_state(struct inst *inst, uint64_t *handle)
{
        struct call_fmu_state f = { .handle = handle ? *handle : 0 }, out;
        struct rep rp;
        int r;

        if (!handle)
                return -EINVAL;
        r = state_call(inst, CALL_OP_FREE_FMU_STATE, &f, &out, &rp);
        if (r >= 0 && r <= INST_WARNING)
                *handle = 0;
        call_end(inst, &rp);
        return r;
}

int inst_serialized_fmu_state_size(struct inst *inst, uint64_t handle, size_t *ret)
{
        struct call_fmu_state f = { .handle = handle }, out;
        struct rep rp;
        int r;

        if (!ret)
                return -EINVAL;
        r = state_call(inst, CALL_OP_SERIALIZED_SIZE, &f, &out, &rp);
        if (r >= 0 && r <= INST_WARNING)
                *ret = out.size;
        call_end(inst, &rp);
        return r;
}

int inst_serialize_fmu_state(struct inst *inst, uint64_t handle, uint8_t buf[], size_t size)
{
        struct call_fmu_state f = { .handle = handle, .size = size }, out;
        struct rep rp;
        const void *p;
        int r;

        if (size && !buf)
                return -EINVAL;
        if (call_out_need(size, 1) > inst->side_size + inst->max_record)
                return -EMSGSIZE;
        r = state_call(inst, CALL_OP_SERIALIZE, &f, &out, &rp);
        if (r >= 0 && r <= INST_WARNING) {
                if (out.size != size || out.data.len != size)
                        r = inst_protocol(inst, "a serialized state of another size");
                else if (call_in_bytes(&rp.in, &out.data, size, &p) < 0)
                        r = inst_protocol(inst, "a serialized state outside the message");
                else if (size)
                        memcpy(buf, p, size);
        }
        call_end(inst, &rp);
        return r;
}

int inst_deserialize_fmu_state(struct inst *inst, const uint8_t buf[], size_t size,
                               uint64_t *ret_handle)
{
        struct call_fmu_state f = { 0 }, out;
        struct req rq;
        struct rep rp;
        int r;

        if ((size && !buf) || !ret_handle)
                return -EINVAL;
        r = call_begin(inst, false);
        if (r < 0)
                return r;
        req_init(inst, &rq, CALL_OP_DESERIALIZE, sizeof(f));
        call_out_expect(&rq.out, call_out_need(size, 1));
        if (req_put(&rq, buf, size, &f.data) < 0)
                return -EMSGSIZE;
        memcpy(rq.body, &f, sizeof(f));
        r = call_run(inst, &rq, &rp);
        if (r >= 0 && r <= INST_WARNING) {
                memcpy(&out, rp.result, sizeof(out));
                if (!out.handle)
                        r = inst_protocol(inst, "no handle for a deserialized state");
                else
                        *ret_handle = out.handle;
        }
        call_end(inst, &rp);
        return r;
}
