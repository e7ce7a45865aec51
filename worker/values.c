/*
 * values: the typed get and set calls into the FMU for a block that
 * vars_check() has passed, for FMI 3.0 (every type) and FMI 2.0 (Real,
 * Integer, Boolean, String).
 *
 * DESIGN: fixed-width values go straight between the FMU and the
 * message: a get writes into the reply payload, a set reads from the
 * private copy of the request. Only what the FMU's C types require is
 * converted: FMI 2.0 Booleans (int), string and binary pointer arrays.
 * A get reply carries values only when the FMU returned OK or Warning
 * (the values are undefined otherwise). Values the FMU hands back are
 * checked too: a Boolean byte other than 0 or 1 is made 1, a NULL string
 * or binary is an error, a String or Binary over the limit is refused.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "worker/me.h"
#include "worker/se.h"
#include "worker/worker.h"

static fmi3Status get3(struct worker *w, enum md_type t, const uint32_t *vrs, size_t nvr,
                       void *v, size_t nv)
{
        const struct fmi3_api *f = &w->lib->f3;
        void *in = w->inst;

        /* Scheduled Execution: the partitions of this instant run before anything is read. */
        if (w->se && t == MD_CLOCK)
                return se_get_clocks(w, vrs, nvr, v);
        if (w->se) {
                int s = se_activate(w);

                if (s > fmi3Warning)
                        return s;
        }
        switch (t) {
        case MD_FLOAT32: return f->fmi3GetFloat32(in, vrs, nvr, v, nv);
        case MD_FLOAT64: return f->fmi3GetFloat64(in, vrs, nvr, v, nv);
        case MD_INT8: return f->fmi3GetInt8(in, vrs, nvr, v, nv);
        case MD_UINT8: return f->fmi3GetUInt8(in, vrs, nvr, v, nv);
        case MD_INT16: return f->fmi3GetInt16(in, vrs, nvr, v, nv);
        case MD_UINT16: return f->fmi3GetUInt16(in, vrs, nvr, v, nv);
        case MD_INT32: return f->fmi3GetInt32(in, vrs, nvr, v, nv);
        case MD_UINT32: return f->fmi3GetUInt32(in, vrs, nvr, v, nv);
        case MD_INT64: return f->fmi3GetInt64(in, vrs, nvr, v, nv);
        case MD_UINT64: return f->fmi3GetUInt64(in, vrs, nvr, v, nv);
        case MD_BOOLEAN: return f->fmi3GetBoolean(in, vrs, nvr, v, nv);
        case MD_CLOCK: return f->fmi3GetClock(in, vrs, nvr, v);
        default: return fmi3Error;
        }
}

static fmi3Status set3(struct worker *w, enum md_type t, const uint32_t *vrs, size_t nvr,
                       const void *v, size_t nv)
{
        const struct fmi3_api *f = &w->lib->f3;
        void *in = w->inst;

        if (w->se && t == MD_CLOCK)
                return se_set_clocks(w, vrs, nvr, v);
        switch (t) {
        case MD_FLOAT32: return f->fmi3SetFloat32(in, vrs, nvr, v, nv);
        case MD_FLOAT64: return f->fmi3SetFloat64(in, vrs, nvr, v, nv);
        case MD_INT8: return f->fmi3SetInt8(in, vrs, nvr, v, nv);
        case MD_UINT8: return f->fmi3SetUInt8(in, vrs, nvr, v, nv);
        case MD_INT16: return f->fmi3SetInt16(in, vrs, nvr, v, nv);
        case MD_UINT16: return f->fmi3SetUInt16(in, vrs, nvr, v, nv);
        case MD_INT32: return f->fmi3SetInt32(in, vrs, nvr, v, nv);
        case MD_UINT32: return f->fmi3SetUInt32(in, vrs, nvr, v, nv);
        case MD_INT64: return f->fmi3SetInt64(in, vrs, nvr, v, nv);
        case MD_UINT64: return f->fmi3SetUInt64(in, vrs, nvr, v, nv);
        case MD_BOOLEAN: return f->fmi3SetBoolean(in, vrs, nvr, v, nv);
        case MD_CLOCK: return f->fmi3SetClock(in, vrs, nvr, v);
        default: return fmi3Error;
        }
}

static_assert(sizeof(fmi2ValueReference) == sizeof(uint32_t), "FMI 2.0 value references are 32 bits");
static_assert(sizeof(fmi2Integer) == sizeof(int32_t), "FMI 2.0 Integer is 32 bits");

/* Fixed-width values into (get) or from (set) v, FMI 2.0. */
static int fixed2(struct worker *w, const struct vblock *b, void *v, bool set)
{
        const struct fmi2_api *f = &w->lib->f2;
        const fmi2ValueReference *vrs = b->vrs;
        size_t n = b->n_vrs;
        uint8_t *bytes = v;
        fmi2Boolean *tmp;
        int s;

        switch (b->type) {
        case MD_FLOAT64:
                return set ? f->fmi2SetReal(w->inst, vrs, n, v) : f->fmi2GetReal(w->inst, vrs, n, v);
        case MD_INT32:
                return set ? f->fmi2SetInteger(w->inst, vrs, n, v) :
                             f->fmi2GetInteger(w->inst, vrs, n, v);
        case MD_BOOLEAN:
                if (wbuf_reserve(&w->tmp, n * sizeof(*tmp) + 1) < 0)
                        return -ENOMEM;
                tmp = (fmi2Boolean *)(void *)w->tmp.p;
                if (set) {
                        for (size_t i = 0; i < n; i++)
                                tmp[i] = bytes[i] ? fmi2True : fmi2False;
                        return f->fmi2SetBoolean(w->inst, vrs, n, tmp);
                }
                s = f->fmi2GetBoolean(w->inst, vrs, n, tmp);
                for (size_t i = 0; i < n; i++)
                        bytes[i] = tmp[i] != fmi2False;
                return s;
        default:
                return fmi3Error;
        }
}

/*
 * A get of block b from a Model Exchange FMU in Continuous-Time Mode: the
 * inputs the worker set are answered from what it set (me_inputs.c; FMI
 * 3.0 section 3.2.1 lists no get of them there, and a strict FMU refuses
 * it) by answer(), at their first element; the rest are listed for the
 * FMU: value references in ask, first elements in at, element counts in
 * len (n_vrs each, the caller's), n_ask of them, asked elements in all.
 * false when no input was answered or the block cannot be split: the
 * caller gets it from the FMU as any other.
 */
struct split {
        uint32_t *ask;
        size_t *at, *len;
        size_t n_ask, asked;
};

typedef bool answer_fn(struct worker *w, const struct md_variable *v, size_t n, size_t off,
                       void *ctx);

static bool split_inputs(struct worker *w, const struct vblock *b, struct split *sp,
                         answer_fn *answer, void *ctx)
{
        size_t off = 0;
        bool any = false;

        sp->n_ask = sp->asked = 0;
        for (uint32_t i = 0; i < b->n_vrs; i++) {
                const struct md_variable *v = vars_find(w, b->type, b->vrs[i]);
                uint64_t n = v ? vars_elements(w, v) : 0;

                if (!v || n > b->n_values - off)
                        return false;
                if (v->causality == MD_CAUSALITY_INPUT && answer(w, v, (size_t)n, off, ctx)) {
                        any = true;
                } else {
                        sp->at[sp->n_ask] = off;
                        sp->len[sp->n_ask] = (size_t)n;
                        sp->ask[sp->n_ask++] = b->vrs[i];
                        sp->asked += (size_t)n;
                }
                off += (size_t)n;
        }
        return any && off == b->n_values;
}

/*
 * Room in w->tmp_me for got bytes and a split of b, or false (not tmp2:
 * it holds the step's output descriptors).
 */
static bool split_room(struct worker *w, const struct vblock *b, size_t got, struct split *sp,
                       unsigned char **ret_got)
{
        got = (got + 7) & ~(size_t)7;
        if (wbuf_reserve(&w->tmp_me, got + (size_t)b->n_vrs * (2 * sizeof(size_t) +
                                                               sizeof(uint32_t)) + 16) < 0)
                return false;
        *ret_got = w->tmp_me.p;
        sp->at = (size_t *)(void *)(w->tmp_me.p + got);
        sp->len = sp->at + b->n_vrs;
        sp->ask = (uint32_t *)(void *)(sp->len + b->n_vrs);
        return true;
}

struct fixed_ctx {
        unsigned char *p;
        size_t elem;
};

static bool answer_fixed(struct worker *w, const struct md_variable *v, size_t n, size_t off,
                         void *ctx)
{
        struct fixed_ctx *x = ctx;

        return me_input_get(w, v, x->p + off * x->elem, n * x->elem);
}

/* Fixed-size values of b into p by split_inputs(); *ret_done when split so. */
static int get_inputs_too(struct worker *w, const struct vblock *b, unsigned char *p,
                          bool *ret_done)
{
        size_t elem = call_elem_size(b->type);
        struct fixed_ctx x = { p, elem };
        struct split sp;
        unsigned char *got;
        int s;

        *ret_done = false;
        if (!me_inputs_any(w) || !elem || b->type == MD_CLOCK ||
            b->n_values > SIZE_MAX / 4 / elem ||
            !split_room(w, b, (size_t)b->n_values * elem, &sp, &got) ||
            !split_inputs(w, b, &sp, answer_fixed, &x))
                return fmi3OK;
        *ret_done = true;
        if (!sp.n_ask)
                return fmi3OK;
        if (w->fmi == MD_FMI3)
                s = get3(w, b->type, sp.ask, sp.n_ask, got, sp.asked);
        else
                s = fixed2(w, &(struct vblock){ .type = b->type, .vrs = sp.ask,
                                                .n_vrs = (uint32_t)sp.n_ask, .n_values = sp.asked },
                           got, false);
        if (s < 0 || status_norm(w, s) > fmi3Warning)
                return s;
        for (size_t i = 0, from = 0; i < sp.n_ask; from += sp.len[i++])
                memcpy(p + sp.at[i] * elem, got + from * elem, sp.len[i] * elem);
        return s;
}

int values_get_into(struct worker *w, const struct vblock *b, void *p, struct reply *rp)
{
        uint8_t *bytes = p;
        bool done = false;
        int s = fmi3OK;

        if (me_in_ct(w))
                s = get_inputs_too(w, b, p, &done);
        if (!done) {
                if (w->fmi == MD_FMI3)
                        s = get3(w, b->type, b->vrs, b->n_vrs, p, b->n_values);
                else
                        s = fixed2(w, b, p, false);
        }
        if (s < 0) {
                reply_refuse(rp, CALL_E_NOMEM, "out of memory");
                return s;
        }
        s = status_norm(w, s);
        /* A C bool the FMU wrote holds 0 or 1; anything else is read as true. */
        if (s <= fmi3Warning && (b->type == MD_BOOLEAN || b->type == MD_CLOCK))
                for (uint64_t i = 0; i < b->n_values; i++)
                        bytes[i] = bytes[i] != 0;
        return s;
}

static int get_fixed(struct worker *w, const struct vblock *b, struct reply *rp,
                     struct call_values *ret)
{
        size_t esize = call_elem_size(b->type);
        uint64_t off, len;
        int s;

        if (b->n_values > UINT64_MAX / esize ||
            call_out_alloc(&rp->out, len = b->n_values * esize, &off) < 0) {
                reply_refuse(rp, CALL_E_MSGSIZE, "the values do not fit the channel");
                return -EMSGSIZE;
        }
        s = values_get_into(w, b, call_out_ptr(&rp->out, off), rp);
        if (s >= 0 && s <= fmi3Warning)
                ret->data = (struct call_range){ off, len };
        return s;
}

/*
 * n String or Binary values of v as the worker last set them (its memo:
 * the strings with their NULs, or n sizes then the bytes), as pointers
 * into it, and a Binary's sizes; false when not known or not of that
 * shape.
 */
static bool memo_ptrs(struct worker *w, const struct md_variable *v, enum md_type t, uint64_t n,
                      const void **ptrs, size_t *sizes)
{
        const unsigned char *p;
        const void *m;
        size_t len, at = 0;

        if (!me_input_peek(w, v, &m, &len))
                return false;
        p = m;
        if (t == MD_STRING) {
                for (uint64_t j = 0; j < n; j++) {
                        const unsigned char *e = at < len ? memchr(p + at, '\0', len - at) : NULL;

                        if (!e)
                                return false;
                        ptrs[j] = p + at;
                        at = (size_t)(e - p) + 1;
                }
                return at == len;
        }
        if (n > len / sizeof(uint64_t))
                return false;
        at = (size_t)n * sizeof(uint64_t);
        for (uint64_t j = 0; j < n; j++) {
                uint64_t size;

                memcpy(&size, p + j * sizeof(uint64_t), sizeof(size));
                if (size > len - at)
                        return false;
                sizes[j] = (size_t)size;
                ptrs[j] = p + at;
                at += (size_t)size;
        }
        return at == len;
}

/* String or Binary values of vrs from the FMU: pointers into it, and a Binary's sizes. */
static int fmu_ptrs(struct worker *w, enum md_type t, const uint32_t *vrs, size_t nvr,
                    const void **v, size_t *sizes, size_t n)
{
        if (t == MD_BINARY)
                return w->lib->f3.fmi3GetBinary(w->inst, vrs, nvr, sizes, (const fmi3Byte **)v, n);
        if (w->fmi == MD_FMI3)
                return w->lib->f3.fmi3GetString(w->inst, vrs, nvr, (fmi3String *)v, n);
        return w->lib->f2.fmi2GetString(w->inst, vrs, nvr, (fmi2String *)v);
}

struct ptrs_ctx {
        enum md_type t;
        const void **v;
        size_t *sizes;
};

static bool answer_ptrs(struct worker *w, const struct md_variable *v, size_t n, size_t off,
                        void *ctx)
{
        struct ptrs_ctx *x = ctx;

        return memo_ptrs(w, v, x->t, n, x->v + off, x->sizes ? x->sizes + off : NULL);
}

/*
 * The values of String or Binary block b as pointers into v (sizes: a
 * Binary's sizes): from the FMU, or by split_inputs() as
 * get_inputs_too() does for the other types.
 */
static int get_ptrs(struct worker *w, const struct vblock *b, const void **v, size_t *sizes)
{
        struct ptrs_ctx x = { b->type, v, sizes };
        const void **got;
        size_t *got_sizes;
        unsigned char *room;
        struct split sp;
        int s;

        if (!me_in_ct(w) || !me_inputs_any(w) || b->n_values > SIZE_MAX / 64 ||
            !split_room(w, b, (size_t)b->n_values * (sizeof(*got) + sizeof(*got_sizes)), &sp,
                        &room) ||
            !split_inputs(w, b, &sp, answer_ptrs, &x))
                return fmu_ptrs(w, b->type, b->vrs, b->n_vrs, v, sizes, b->n_values);
        if (!sp.n_ask)
                return fmi3OK;
        got = (const void **)(void *)room;
        got_sizes = (size_t *)(void *)(got + sp.asked);
        memset(got, 0, sp.asked * sizeof(*got));
        memset(got_sizes, 0, sp.asked * sizeof(*got_sizes));
        s = fmu_ptrs(w, b->type, sp.ask, sp.n_ask, got, got_sizes, sp.asked);
        if (status_norm(w, s) > fmi3Warning)
                return s;
        for (size_t i = 0, from = 0; i < sp.n_ask; from += sp.len[i++]) {
                memcpy(v + sp.at[i], got + from, sp.len[i] * sizeof(*got));
                if (sizes)
                        memcpy(sizes + sp.at[i], got_sizes + from, sp.len[i] * sizeof(*sizes));
        }
        return s;
}

static int get_string(struct worker *w, const struct vblock *b, struct reply *rp,
                      struct call_values *ret)
{
        const char **v;
        uint64_t total = 0, off;
        char *p;
        int s;

        if (b->n_values > SIZE_MAX / sizeof(*v) || wbuf_reserve(&w->tmp, b->n_values * sizeof(*v) + 1) < 0) {
                reply_refuse(rp, CALL_E_NOMEM, "out of memory");
                return -ENOMEM;
        }
        v = (const char **)(void *)w->tmp.p;
        memset(v, 0, b->n_values * sizeof(*v));
        s = status_norm(w, get_ptrs(w, b, (const void **)v, NULL));
        if (s > fmi3Warning)
                return s;
        for (uint64_t i = 0; i < b->n_values; i++) {
                size_t n;

                if (!v[i]) {
                        snprintf(w->last_error, sizeof(w->last_error),
                                 "the FMU returned NULL for String value %" PRIu64, i);
                        return fmi3Error;
                }
                n = strnlen(v[i], w->max_string + 1);
                if (n > w->max_string) {
                        reply_refuse(rp, CALL_E_TOO_LONG, "the FMU returned String value %" PRIu64
                                     " longer than the limit of %" PRIu64 " bytes", i, w->max_string);
                        return -EFBIG;
                }
                total += n + 1;
        }
        if (call_out_alloc(&rp->out, total, &off) < 0) {
                reply_refuse(rp, CALL_E_MSGSIZE, "the String values do not fit the channel");
                return -EMSGSIZE;
        }
        p = call_out_ptr(&rp->out, off);
        for (uint64_t i = 0; i < b->n_values; i++) {
                size_t n = strlen(v[i]) + 1;

                memcpy(p, v[i], n);
                p += n;
        }
        ret->data = (struct call_range){ off, total };
        return s;
}

static int get_binary(struct worker *w, const struct vblock *b, struct reply *rp,
                      struct call_values *ret)
{
        size_t n = b->n_values;
        uint64_t total = 0, soff, doff;
        const fmi3Byte **v;
        size_t *sizes;
        uint8_t *p;
        int s;

        if (n > SIZE_MAX / 16 || wbuf_reserve(&w->tmp, n * (sizeof(*v) + sizeof(*sizes)) + 1) < 0) {
                reply_refuse(rp, CALL_E_NOMEM, "out of memory");
                return -ENOMEM;
        }
        v = (const fmi3Byte **)(void *)w->tmp.p;
        sizes = (size_t *)(void *)(w->tmp.p + n * sizeof(*v));
        memset(w->tmp.p, 0, n * (sizeof(*v) + sizeof(*sizes)));
        s = status_norm(w, get_ptrs(w, b, (const void **)v, sizes));
        if (s > fmi3Warning)
                return s;
        for (size_t i = 0; i < n; i++) {
                if (sizes[i] > w->max_binary) {
                        reply_refuse(rp, CALL_E_TOO_LONG, "the FMU returned Binary value %zu of %zu "
                                     "bytes, over the limit of %" PRIu64, i, sizes[i], w->max_binary);
                        return -EFBIG;
                }
                if (!v[i] && sizes[i]) {
                        snprintf(w->last_error, sizeof(w->last_error),
                                 "the FMU returned NULL for Binary value %zu", i);
                        return fmi3Error;
                }
                total += sizes[i];
        }
        if (call_out_alloc(&rp->out, n * sizeof(uint64_t), &soff) < 0 ||
            call_out_alloc(&rp->out, total, &doff) < 0) {
                reply_refuse(rp, CALL_E_MSGSIZE, "the Binary values do not fit the channel");
                return -EMSGSIZE;
        }
        memcpy(call_out_ptr(&rp->out, soff), sizes, n * sizeof(uint64_t));
        p = call_out_ptr(&rp->out, doff);
        for (size_t i = 0; i < n; i++) {
                if (sizes[i])
                        memcpy(p, v[i], sizes[i]);
                p += sizes[i];
        }
        ret->sizes = (struct call_range){ soff, n * sizeof(uint64_t) };
        ret->data = (struct call_range){ doff, total };
        return s;
}

int values_get(struct worker *w, const struct vblock *b, struct reply *rp, struct call_values *ret)
{
        *ret = (struct call_values){ .type = b->type, .n_vrs = b->n_vrs, .n_values = b->n_values };
        if (b->type == MD_STRING)
                return get_string(w, b, rp, ret);
        if (b->type == MD_BINARY)
                return get_binary(w, b, rp, ret);
        return get_fixed(w, b, rp, ret);
}

static int set_string(struct worker *w, const struct vblock *b)
{
        const char *p = b->data;
        const char **v;

        if (b->n_values > SIZE_MAX / sizeof(*v) || wbuf_reserve(&w->tmp, b->n_values * sizeof(*v) + 1) < 0)
                return -ENOMEM;
        v = (const char **)(void *)w->tmp.p;
        /* vars_check() saw exactly n_values NUL-terminated strings. */
        for (uint64_t i = 0; i < b->n_values; i++) {
                v[i] = p;
                p += strlen(p) + 1;
        }
        if (w->fmi == MD_FMI3)
                return w->lib->f3.fmi3SetString(w->inst, b->vrs, b->n_vrs, v, b->n_values);
        return w->lib->f2.fmi2SetString(w->inst, b->vrs, b->n_vrs, v);
}

static int set_binary(struct worker *w, const struct vblock *b)
{
        size_t n = b->n_values;
        const uint8_t *p = b->data;
        const fmi3Byte **v;
        size_t *sizes;

        if (n > SIZE_MAX / 16 || wbuf_reserve(&w->tmp, n * (sizeof(*v) + sizeof(*sizes)) + 1) < 0)
                return -ENOMEM;
        v = (const fmi3Byte **)(void *)w->tmp.p;
        sizes = (size_t *)(void *)(w->tmp.p + n * sizeof(*v));
        for (size_t i = 0; i < n; i++) {
                sizes[i] = (size_t)b->sizes[i];
                v[i] = p;
                p += sizes[i];
        }
        return w->lib->f3.fmi3SetBinary(w->inst, b->vrs, b->n_vrs, sizes, v, n);
}

/* Set n values of vrs of fixed-size type t, FMI 3.0 or 2.0. */
static int set_fixed(struct worker *w, enum md_type t, const uint32_t *vrs, uint32_t nvr,
                     void *v, uint64_t n)
{
        const struct vblock b = { .type = t, .vrs = vrs, .n_vrs = nvr, .n_values = n };

        if (w->fmi == MD_FMI2)
                return fixed2(w, &b, v, true);
        return set3(w, t, vrs, nvr, v, n);
}

/*
 * A Model Exchange FMU in Continuous-Time Mode, which takes only
 * continuous inputs (FMI 3.0 section 3.2.1, FMI 2.0 section 3.2.3): the
 * master sets every input with each step again, the discrete ones at the
 * values they took in its Event Mode where that is the master's
 * (engine/master/master_input_event.c). Values the worker set last are
 * left out (me_inputs.c), so that only a change is an event: a discrete
 * one needs Event Mode (me_before_set()), a continuous one is set and the
 * step takes it as an event (me_note_set()). *ret_done when no discrete
 * value changed: the continuous ones that did are set. Not done (the
 * caller sets the block as any other) for a discrete value that changed
 * (String and Binary values are discrete), or a block it cannot split.
 */
static int set_continuous(struct worker *w, const struct vblock *b, bool *ret_done)
{
        size_t elem = call_elem_size(b->type), n_keep = 0, data_bytes;
        uint64_t keep_values = 0;
        const struct md_variable *v;
        struct me_walk k = { 0 };
        unsigned char *keep_data;
        struct me_bytes x;
        uint32_t *keep;
        int s;

        *ret_done = false;
        if (b->type == MD_CLOCK || b->n_values > SIZE_MAX / 4 / (elem ? elem : 1))
                return fmi3OK;
        /* Not tmp (fixed2() keeps FMI 2.0 Booleans there). The values first, aligned. */
        data_bytes = ((size_t)b->n_values * elem + 7) & ~(size_t)7;
        if (wbuf_reserve(&w->tmp_me, data_bytes + (size_t)b->n_vrs * sizeof(uint32_t) + 16) < 0)
                return fmi3OK;
        keep_data = w->tmp_me.p;
        keep = (uint32_t *)(void *)(keep_data + data_bytes);
        while (me_inputs_next(w, b, &k, &v, &x)) {
                if (me_input_same(w, v, &x))
                        continue;
                /* A discrete change (String and Binary are never continuous): Event Mode. */
                if (!me_ct_settable(v) || !elem)
                        return fmi3OK;
                keep[n_keep++] = b->vrs[k.i - 1];
                memcpy(keep_data + keep_values * elem, x.b, x.len_b);
                keep_values += x.len_b / elem;
        }
        if (k.bad || k.off != b->n_values)
                return fmi3OK;
        *ret_done = true;
        if (!n_keep)
                return fmi3OK;
        s = status_norm(w, set_fixed(w, b->type, keep, (uint32_t)n_keep, keep_data, keep_values));
        me_inputs_note(w, &(struct vblock){ .type = b->type, .vrs = keep, .n_vrs = (uint32_t)n_keep,
                                            .n_values = keep_values, .data = keep_data },
                       s <= fmi3Warning);
        me_note_set(w);
        return s;
}

int values_set(struct worker *w, const struct vblock *b, struct reply *rp)
{
        int s;

        if (me_in_ct(w)) {
                bool done;

                s = set_continuous(w, b, &done);
                if (done)
                        return s;
        }
        if (w->me) {
                s = status_norm(w, me_before_set(w, b->type, b->vrs, b->n_vrs));
                if (s > fmi3Warning)
                        return s;
                me_note_set(w);
        }
        if (b->type == MD_STRING)
                s = set_string(w, b);
        else if (b->type == MD_BINARY)
                s = set_binary(w, b);
        else if (w->fmi == MD_FMI3)
                s = set3(w, b->type, b->vrs, b->n_vrs, b->data, b->n_values);
        else
                s = fixed2(w, b, (void *)b->data, true);
        if (s < 0) {
                me_inputs_note(w, b, false);
                reply_refuse(rp, CALL_E_NOMEM, "out of memory");
                return s;
        }
        s = status_norm(w, s);
        me_inputs_note(w, b, s <= fmi3Warning);
        return s;
}
