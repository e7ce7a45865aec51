/*
 * inst_values: get and set of every type, Binary, and the Clock timing
 * functions; and the encoding and checking of value blocks that
 * inst_step.c shares.
 *
 * DESIGN: a request that cannot fit the channel, or whose reply cannot,
 * is refused with -EMSGSIZE before anything is sent. A reply's values are
 * copied out of shared memory before they are checked: numbers straight
 * into the caller's array (any bit pattern is a number), Booleans,
 * strings and binaries into the instance's arena first, where a Boolean
 * that is not 0 or 1, a string without its NUL, too many or too long
 * strings, or sizes that do not add up are a protocol fault.
 */
#include <errno.h>
#include <string.h>

#include "engine/instance/inst_int.h"

int values_put(struct req *rq, enum md_type type, const uint32_t *vrs, size_t nvr,
               const void *values, const size_t *sizes, size_t nvalues, bool set,
               struct call_values *ret)
{
        struct call_values cv = { .type = (uint32_t)type, .n_vrs = (uint32_t)nvr,
                                  .n_values = nvalues };
        size_t esize = call_elem_size(type);
        uint64_t total = 0, off;

        if ((unsigned)type >= MD_TYPE_COUNT || nvr > UINT32_MAX || (nvr && !vrs) ||
            (set && nvalues && !values) || (set && type == MD_BINARY && nvalues && !sizes))
                return -EINVAL;
        if (nvr > UINT64_MAX / 4 || req_put(rq, vrs, (uint64_t)nvr * 4, &cv.vrs) < 0)
                return -EMSGSIZE;
        if (!set) {
                *ret = cv;
                return 0;
        }
        if (type == MD_STRING || type == MD_BINARY) {
                const char *const *s = values;
                const uint8_t *const *b = values;

                for (size_t i = 0; i < nvalues; i++) {
                        uint64_t n = type == MD_STRING ? (s[i] ? strlen(s[i]) + 1 : 0) : sizes[i];

                        if ((type == MD_STRING && !s[i]) || (type == MD_BINARY && n && !b[i]) ||
                            n > UINT64_MAX - total)
                                return -EINVAL;
                        total += n;
                }
                if (type == MD_BINARY && req_put(rq, sizes, (uint64_t)nvalues * 8, &cv.sizes) < 0)
                        return -EMSGSIZE;
                if (total) {
                        unsigned char *p;

                        if (call_out_alloc(&rq->out, total, &off) < 0)
                                return -EMSGSIZE;
                        p = call_out_ptr(&rq->out, off);
                        for (size_t i = 0; i < nvalues; i++) {
                                size_t n = type == MD_STRING ? strlen(s[i]) + 1 : sizes[i];

                                if (n)
                                        memcpy(p, type == MD_STRING ? (const void *)s[i] : b[i], n);
                                p += n;
                        }
                        cv.data = (struct call_range){ off, total };
                }
        } else if (nvalues > UINT64_MAX / esize ||
                   req_put(rq, values, (uint64_t)nvalues * esize, &cv.data) < 0) {
                return -EMSGSIZE;
        }
        *ret = cv;
        return 0;
}

uint64_t values_reply_need(enum md_type type, size_t nvalues)
{
        size_t esize = call_elem_size(type);

        if (!esize)
                return 0;
        if (nvalues > UINT64_MAX / esize)
                return UINT64_MAX;
        return call_out_need((uint64_t)nvalues * esize, 2);
}

static int take_strings(struct inst *inst, const struct rep *rp, const struct call_values *cv,
                        const char **values, size_t nvalues)
{
        uint64_t bad = 0;
        const void *p;
        char *copy;

        if (call_in_bytes(&rp->in, &cv->data, UINT64_MAX, &p) < 0)
                return inst_protocol(inst, "String values outside the message");
        copy = arena_alloc(inst, cv->data.len + 1);
        if (!copy)
                return -ENOMEM;
        if (cv->data.len)
                memcpy(copy, p, cv->data.len);
        if (call_check_strings(copy, cv->data.len, nvalues, inst->max_string, &bad) < 0)
                return inst_protocol(inst, "String values that are malformed or over the limit");
        for (size_t i = 0; i < nvalues; i++) {
                values[i] = copy;
                copy += strlen(copy) + 1;
        }
        return 0;
}

static int take_binaries(struct inst *inst, const struct rep *rp, const struct call_values *cv,
                         const uint8_t **values, size_t *sizes, size_t nvalues)
{
        const void *ps, *pd;
        uint64_t sum = 0;
        uint8_t *copy;
        int r;

        r = rep_range(inst, rp, &cv->sizes, 8, nvalues, &ps);
        if (r < 0)
                return r;
        /* Copy the sizes first: the worker may change them under us. */
        if (nvalues)
                memcpy(sizes, ps, nvalues * sizeof(uint64_t));
        for (size_t i = 0; i < nvalues; i++) {
                if (sizes[i] > inst->max_binary || sizes[i] > UINT64_MAX - sum)
                        return inst_protocol(inst, "a Binary value over the limit");
                sum += sizes[i];
        }
        if (cv->data.len != sum || call_in_bytes(&rp->in, &cv->data, UINT64_MAX, &pd) < 0)
                return inst_protocol(inst, "Binary sizes that do not add up");
        copy = arena_alloc(inst, sum);
        if (!copy)
                return -ENOMEM;
        if (sum)
                memcpy(copy, pd, sum);
        for (size_t i = 0; i < nvalues; i++) {
                values[i] = copy;
                copy += sizes[i];
        }
        return 0;
}

int values_take(struct inst *inst, const struct rep *rp, const struct call_values *cv,
                enum md_type type, size_t nvr, void *values, size_t *sizes, size_t nvalues)
{
        size_t esize = call_elem_size(type);
        const void *p;
        uint8_t *bytes;
        int r;

        static_assert(sizeof(size_t) == sizeof(uint64_t), "Binary sizes travel as u64");
        if (cv->type != (uint32_t)type || cv->n_vrs != nvr || cv->n_values != nvalues || cv->vrs.len)
                return inst_protocol(inst, "a result block that does not match its request");
        if (type == MD_STRING)
                return take_strings(inst, rp, cv, values, nvalues);
        if (type == MD_BINARY)
                return take_binaries(inst, rp, cv, values, sizes, nvalues);
        if (cv->sizes.len)
                return inst_protocol(inst, "sizes for a fixed-size type");
        r = rep_range(inst, rp, &cv->data, esize, nvalues, &p);
        if (r < 0)
                return r;
        if (type != MD_BOOLEAN && type != MD_CLOCK) {
                if (nvalues)
                        memcpy(values, p, nvalues * esize);
                return 0;
        }
        bytes = arena_alloc(inst, nvalues);
        if (!bytes)
                return -ENOMEM;
        if (nvalues)
                memcpy(bytes, p, nvalues);
        for (size_t i = 0; i < nvalues; i++)
                if (bytes[i] > 1)
                        return inst_protocol(inst, "a Boolean that is neither 0 nor 1");
        for (size_t i = 0; i < nvalues; i++)
                ((bool *)values)[i] = bytes[i];
        return 0;
}

/* The most a reply payload can hold, inline or in the side buffer. */
static uint64_t reply_room(const struct inst *inst, enum call_op op)
{
        uint64_t inl = inst->max_record - sizeof(struct call_hdr) - sizeof(struct call_reply) -
                       call_result_body(op);

        return inl > inst->side_size ? inl : inst->side_size;
}

static int get(struct inst *inst, enum md_type type, const uint32_t vrs[], size_t nvr,
               void *values, size_t *sizes, size_t nvalues)
{
        struct call_values cv;
        struct req rq;
        struct rep rp;
        int r;

        if ((unsigned)type >= MD_TYPE_COUNT || (nvalues && !values) || (type == MD_BINARY && nvalues && !sizes))
                return -EINVAL;
        r = call_begin(inst, false);
        if (r < 0)
                return r;
        req_init(inst, &rq, CALL_OP_GET, sizeof(cv));
        r = values_put(&rq, type, vrs, nvr, NULL, NULL, nvalues, false, &cv);
        if (r < 0)
                return r;
        if (values_reply_need(type, nvalues) > reply_room(inst, CALL_OP_GET))
                return -EMSGSIZE;
        memcpy(rq.body, &cv, sizeof(cv));
        r = call_run(inst, &rq, &rp);
        if (r >= 0 && r <= INST_WARNING) {
                memcpy(&cv, rp.result, sizeof(cv));
                int t = values_take(inst, &rp, &cv, type, nvr, values, sizes, nvalues);

                if (t < 0)
                        r = t;
        }
        call_end(inst, &rp);
        return r;
}

int inst_get(struct inst *inst, enum md_type type, const uint32_t vrs[], size_t nvr,
             void *values, size_t nvalues)
{
        if (type == MD_BINARY)
                return -EINVAL;
        return get(inst, type, vrs, nvr, values, NULL, nvalues);
}

int inst_get_binary(struct inst *inst, const uint32_t vrs[], size_t nvr, size_t sizes[],
                    const uint8_t *values[], size_t nvalues)
{
        return get(inst, MD_BINARY, vrs, nvr, values, sizes, nvalues);
}

static int set(struct inst *inst, enum md_type type, const uint32_t vrs[], size_t nvr,
               const void *values, const size_t *sizes, size_t nvalues)
{
        struct call_values cv;
        struct req rq;
        struct rep rp;
        int r;

        r = call_begin(inst, false);
        if (r < 0)
                return r;
        req_init(inst, &rq, CALL_OP_SET, sizeof(cv));
        r = values_put(&rq, type, vrs, nvr, values, sizes, nvalues, true, &cv);
        if (r < 0)
                return r;
        memcpy(rq.body, &cv, sizeof(cv));
        r = call_run(inst, &rq, &rp);
        call_end(inst, &rp);
        return r;
}

int inst_set(struct inst *inst, enum md_type type, const uint32_t vrs[], size_t nvr,
             const void *values, size_t nvalues)
{
        if (type == MD_BINARY)
                return -EINVAL;
        return set(inst, type, vrs, nvr, values, NULL, nvalues);
}

int inst_set_binary(struct inst *inst, const uint32_t vrs[], size_t nvr, const size_t sizes[],
                    const uint8_t *const values[], size_t nvalues)
{
        return set(inst, MD_BINARY, vrs, nvr, values, sizes, nvalues);
}

/* One Clock timing call: in_a/in_b for a set, a/b/q for a get. */
static int timing(struct inst *inst, enum call_op op, const uint32_t vrs[], size_t n,
                  const void *in_a, const void *in_b, void *a, void *b, int *q)
{
        bool get_op = op <= CALL_OP_GET_SHIFT_FRACTION;
        struct call_clock_timing ct = { .n_vrs = (uint32_t)n };
        const void *pa, *pb, *pq;
        struct req rq;
        struct rep rp;
        int r;

        if (n > UINT32_MAX || (n && (!vrs || (get_op ? !a : !in_a))))
                return -EINVAL;
        r = call_begin(inst, false);
        if (r < 0)
                return r;
        req_init(inst, &rq, op, sizeof(ct));
        if (req_put(&rq, vrs, (uint64_t)n * 4, &ct.vrs) < 0 ||
            (in_a && req_put(&rq, in_a, (uint64_t)n * 8, &ct.a) < 0) ||
            (in_b && req_put(&rq, in_b, (uint64_t)n * 8, &ct.b) < 0))
                return -EMSGSIZE;
        memcpy(rq.body, &ct, sizeof(ct));
        r = call_run(inst, &rq, &rp);
        if (get_op && r >= 0 && r <= INST_WARNING) {
                int t;

                memcpy(&ct, rp.result, sizeof(ct));
                t = ct.n_vrs != n ? -EPROTO : rep_range(inst, &rp, &ct.a, 8, n, &pa);
                if (t == 0 && b)
                        t = rep_range(inst, &rp, &ct.b, 8, n, &pb);
                if (t == 0 && q)
                        t = rep_range(inst, &rp, &ct.c, 4, n, &pq);
                if (t == -EPROTO && !inst->fault)
                        t = inst_fault_set(inst, -EPROTO, "worker %d broke the protocol: a Clock "
                                           "result of another size", (int)inst->pid);
                if (t == 0) {
                        if (n)
                                memcpy(a, pa, n * 8);
                        if (b && n)
                                memcpy(b, pb, n * 8);
                        for (size_t i = 0; q && i < n; i++) {
                                int32_t v;

                                memcpy(&v, (const int32_t *)pq + i, sizeof(v));
                                if (v < 0 || v > 2) {
                                        t = inst_fault_set(inst, -EPROTO, "worker %d broke the "
                                                           "protocol: an invalid interval qualifier",
                                                           (int)inst->pid);
                                        break;
                                }
                                q[i] = v;
                        }
                }
                if (t < 0)
                        r = t;
        }
        call_end(inst, &rp);
        return r;
}

int inst_get_interval_decimal(struct inst *inst, const uint32_t vrs[], size_t n,
                              double intervals[], int qualifiers[])
{
        if (n && !qualifiers)
                return -EINVAL;
        return timing(inst, CALL_OP_GET_INTERVAL_DECIMAL, vrs, n, NULL, NULL, intervals, NULL,
                      qualifiers);
}

int inst_get_interval_fraction(struct inst *inst, const uint32_t vrs[], size_t n,
                               uint64_t counters[], uint64_t resolutions[], int qualifiers[])
{
        if (n && (!resolutions || !qualifiers))
                return -EINVAL;
        return timing(inst, CALL_OP_GET_INTERVAL_FRACTION, vrs, n, NULL, NULL, counters,
                      resolutions, qualifiers);
}

int inst_get_shift_decimal(struct inst *inst, const uint32_t vrs[], size_t n, double shifts[])
{
        return timing(inst, CALL_OP_GET_SHIFT_DECIMAL, vrs, n, NULL, NULL, shifts, NULL, NULL);
}

int inst_get_shift_fraction(struct inst *inst, const uint32_t vrs[], size_t n,
                            uint64_t counters[], uint64_t resolutions[])
{
        if (n && !resolutions)
                return -EINVAL;
        return timing(inst, CALL_OP_GET_SHIFT_FRACTION, vrs, n, NULL, NULL, counters, resolutions,
                      NULL);
}

int inst_set_interval_decimal(struct inst *inst, const uint32_t vrs[], size_t n,
                              const double intervals[])
{
        return timing(inst, CALL_OP_SET_INTERVAL_DECIMAL, vrs, n, intervals, NULL, NULL, NULL, NULL);
}

int inst_set_interval_fraction(struct inst *inst, const uint32_t vrs[], size_t n,
                               const uint64_t counters[], const uint64_t resolutions[])
{
        if (n && !resolutions)
                return -EINVAL;
        return timing(inst, CALL_OP_SET_INTERVAL_FRACTION, vrs, n, counters, resolutions, NULL,
                      NULL, NULL);
}

int inst_set_shift_decimal(struct inst *inst, const uint32_t vrs[], size_t n, const double shifts[])
{
        return timing(inst, CALL_OP_SET_SHIFT_DECIMAL, vrs, n, shifts, NULL, NULL, NULL, NULL);
}

int inst_set_shift_fraction(struct inst *inst, const uint32_t vrs[], size_t n,
                            const uint64_t counters[], const uint64_t resolutions[])
{
        if (n && !resolutions)
                return -EINVAL;
        return timing(inst, CALL_OP_SET_SHIFT_FRACTION, vrs, n, counters, resolutions, NULL, NULL,
                      NULL);
}
