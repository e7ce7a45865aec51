/*
 * vars: every get and set checked against the model description before
 * the FMU sees it: the value references exist, their declared types match
 * the function, the state allows the access (access.c), nValues equals the
 * number of serialized elements (arrays sized by the structural parameters
 * as currently set, which the worker tracks), and for a set the values
 * themselves (Booleans 0 or 1, String and Binary lengths within limits,
 * structural parameters within min/max, no value reference twice).
 *
 * DESIGN: a refused call reaches the FMU not at all, so each failure has
 * its own code (call.h) and a message naming the function, the variable
 * and both sides of the mismatch. Value references are looked up in
 * vars_table.c, O(1) each when they are dense; duplicates are found with a
 * per-variable stamp, O(1) each.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "worker/worker.h"

/* The current value of the UInt64 that a <Dimension valueReference> names. */
static bool dim_value(const struct worker *w, uint32_t vr, uint64_t *ret)
{
        const struct md_variable *s = md_find_vr(w->md, vr);

        if (!s || s->type != MD_UINT64 || s->n_dims)
                return false;
        if (s->causality == MD_CAUSALITY_STRUCTURAL_PARAMETER) {
                *ret = w->sp[vars_index(w, s)];
                return true;
        }
        if (s->variability == MD_VARIABILITY_CONSTANT && s->has_start && s->start.n >= 1) {
                *ret = s->start.u[0];
                return true;
        }
        return false;
}

static int elements(const struct worker *w, const struct md_variable *v, uint64_t *ret)
{
        uint64_t prod = 1;

        for (size_t i = 0; i < v->n_dims; i++) {
                const struct md_dimension *d = &v->dims[i];
                uint64_t size;

                if (d->has_start)
                        size = d->start;
                else if (!d->has_vr || !dim_value(w, d->vr, &size))
                        return -ERANGE;
                if (size && prod > UINT64_MAX / size)
                        return -ERANGE;
                prod *= size;
        }
        *ret = prod;
        return 0;
}

uint64_t vars_elements(const struct worker *w, const struct md_variable *v)
{
        uint64_t n = 0;

        return elements(w, v, &n) < 0 ? 0 : n;
}

/* Is a variable of type vt accessed by the functions of type t? */
static bool type_matches(const struct worker *w, enum md_type t, enum md_type vt)
{
        if (t == vt)
                return true;
        if (w->fmi == MD_FMI3)
                return t == MD_INT64 && vt == MD_ENUMERATION;
        return t == MD_INT32 && vt == MD_ENUMERATION;
}

/* A type with get/set functions in this FMI version; else the refusal text. */
static const char *type_refusal(const struct worker *w, enum md_type t)
{
        if (w->fmi == MD_FMI3)
                return t == MD_ENUMERATION ? "Enumeration variables are read and written with "
                       "fmi3GetInt64 and fmi3SetInt64 (section 2.2.7.2)" : NULL;
        switch (t) {
        case MD_FLOAT64:
        case MD_INT32:
        case MD_BOOLEAN:
        case MD_STRING:
                return NULL;
        default:
                return "FMI 2.0 has only Real, Integer, Boolean and String functions";
        }
}

/* The variable that holds serialized element k of the block; its first element in *ret_first. */
static const struct md_variable *var_of_element(const struct worker *w, const struct vblock *b,
                                                uint64_t k, uint64_t *ret_first)
{
        uint64_t first = 0;

        for (uint32_t i = 0; i < b->n_vrs; i++) {
                const struct md_variable *v = vars_find(w, b->type, b->vrs[i]);
                uint64_t n = v ? vars_elements(w, v) : 0;

                if (v && k < first + n) {
                        *ret_first = first;
                        return v;
                }
                first += n;
        }
        return NULL;
}

static uint32_t next_stamp(struct worker *w)
{
        if (++w->stamp_gen == 0) {
                memset(w->stamp, 0, w->md->n_vars * sizeof(*w->stamp));
                w->stamp_gen = 1;
        }
        return w->stamp_gen;
}

/* Where the checks depend on more than the key: nothing is remembered. */
static bool memo_off(const struct worker *w)
{
        return w->state == CALL_ST_INTERMEDIATE || (w->clk && w->state == CALL_ST_EVENT);
}

/*
 * A list the memo holds for this direction passed every check below in the
 * same state: it passes again. What those checks read besides the list is
 * the model description and the FMI version (fixed), the state (part of
 * the key), the required intermediate variables (never remembered in
 * Intermediate Update Mode, where they matter) and, for arrays, the
 * structural parameters (never remembered: only lists of scalars are),
 * and in Event Mode which Clocks are active (never remembered in Event
 * Mode for a model with Clocks: clocks.c changes its answer there).
 * A list that passed has no value reference twice, and each scalar has one
 * value, so its total is its length.
 */
static bool memo_hit(const struct worker *w, const struct vblock *b, bool set)
{
        const struct vrs_memo *m = &w->memo[set];

        return m->valid && m->n == b->n_vrs && m->type == b->type && m->state == w->state &&
               !memo_off(w) &&
               memcmp(m->vrs, b->vrs, (size_t)b->n_vrs * sizeof(*b->vrs)) == 0;
}

static void memo_keep(struct worker *w, const struct vblock *b, bool set, bool scalars)
{
        struct vrs_memo *m = &w->memo[set];

        if (!scalars || b->n_vrs > VRS_MEMO_MAX || memo_off(w)) {
                m->valid = false;
                return;
        }
        m->valid = true;
        m->type = b->type;
        m->state = w->state;
        m->n = b->n_vrs;
        memcpy(m->vrs, b->vrs, (size_t)b->n_vrs * sizeof(*b->vrs));
}

static bool check_vrs(struct worker *w, struct vblock *b, bool set, const char *fn,
                      uint64_t *ret_total, struct reply *rp)
{
        uint32_t stamp;
        uint64_t total = 0;
        bool scalars = true;

        if (memo_hit(w, b, set)) {
                *ret_total = b->n_vrs;
                return true;
        }
        stamp = set ? next_stamp(w) : 0;

        for (uint32_t i = 0; i < b->n_vrs; i++) {
                uint32_t vr = b->vrs[i];
                const struct md_variable *v = vars_find(w, b->type, vr);
                const struct md_variable *any;
                const char *why;
                uint64_t n;

                if (!v) {
                        any = md_find_vr(w->md, vr);
                        if (any)
                                reply_refuse(rp, CALL_E_TYPE, "%s: variable '%s' (vr %" PRIu32 ") is "
                                             "of type %s, not %s", fn, any->name, vr,
                                             md_type_name(any->type), md_type_name(b->type));
                        else
                                reply_refuse(rp, CALL_E_NOVAR, "%s: unknown value reference %" PRIu32,
                                             fn, vr);
                        return false;
                }
                if (!type_matches(w, b->type, v->type)) {
                        reply_refuse(rp, CALL_E_TYPE, "%s: variable '%s' (vr %" PRIu32 ") is of type "
                                     "%s, not %s", fn, v->name, vr, md_type_name(v->type),
                                     md_type_name(b->type));
                        return false;
                }
                why = set ? access_set_refusal(w, v) : access_get_refusal(w, v);
                if (why) {
                        reply_refuse(rp, CALL_E_ACCESS, "%s: variable '%s' (vr %" PRIu32 ", %s, %s) %s "
                                     "(state: %s)", fn, v->name, vr, md_causality_name(v->causality),
                                     md_variability_name(v->variability), why,
                                     call_state_name(w->state));
                        return false;
                }
                if (elements(w, v, &n) < 0) {
                        reply_refuse(rp, CALL_E_INVAL, "%s: the size of array '%s' cannot be resolved",
                                     fn, v->name);
                        return false;
                }
                if (n > UINT64_MAX - total) {
                        reply_refuse(rp, CALL_E_INVAL, "%s: too many elements", fn);
                        return false;
                }
                total += n;
                scalars = scalars && v->n_dims == 0;
                if (set) {
                        size_t idx = vars_index(w, v);

                        if (w->stamp[idx] == stamp) {
                                reply_refuse(rp, CALL_E_INVAL, "%s: value reference %" PRIu32
                                             " appears twice", fn, vr);
                                return false;
                        }
                        w->stamp[idx] = stamp;
                }
        }
        memo_keep(w, b, set, scalars);
        *ret_total = total;
        return true;
}

/* Booleans 0 or 1; Clocks that cannot be deactivated; structural parameters within min/max. */
static bool check_fixed(struct worker *w, const struct vblock *b, const char *fn, struct reply *rp)
{
        const uint8_t *bytes = b->data;
        uint64_t k = 0;

        if (b->type == MD_BOOLEAN || b->type == MD_CLOCK)
                for (uint64_t i = 0; i < b->n_values; i++)
                        if (bytes[i] > 1) {
                                reply_refuse(rp, CALL_E_INVAL, "%s: value %" PRIu64 " is %u, not 0 or 1",
                                             fn, i, bytes[i]);
                                return false;
                        }
        if (b->type != MD_CLOCK && b->type != MD_UINT64)
                return true;
        /* One pass over the variables (vars_check() found each), k their first value. */
        for (uint32_t i = 0; i < b->n_vrs; i++) {
                const struct md_variable *v = vars_find(w, b->type, b->vrs[i]);
                uint64_t first = k, x;

                k += vars_elements(w, v);
                if (b->type == MD_CLOCK && !bytes[first] && !v->attrs.clock.can_be_deactivated) {
                        reply_refuse(rp, CALL_E_INVAL, "%s: Clock '%s' cannot be deactivated "
                                     "(canBeDeactivated is false)", fn, v->name);
                        return false;
                }
                if (b->type != MD_UINT64 || v->causality != MD_CAUSALITY_STRUCTURAL_PARAMETER)
                        continue;
                memcpy(&x, (const uint64_t *)b->data + first, sizeof(x));
                if ((v->attrs.has_min && x < v->attrs.min.u) || (v->attrs.has_max && x > v->attrs.max.u)) {
                        reply_refuse(rp, CALL_E_INVAL, "%s: structural parameter '%s' = %" PRIu64
                                     " is outside its min/max", fn, v->name, x);
                        return false;
                }
        }
        return true;
}

static bool check_binary(struct worker *w, const struct call_in *in, const struct call_values *cv,
                         struct vblock *b, const char *fn, struct reply *rp)
{
        const void *p;
        uint64_t sum, k = 0;

        if (call_in_range(in, &cv->sizes, 8, b->n_values, &p) < 0)
                goto bad;
        b->sizes = p;
        if (call_sum_sizes(b->sizes, b->n_values, &sum) < 0 || cv->data.len != sum ||
            call_in_bytes(in, &cv->data, UINT64_MAX, &p) < 0)
                goto bad;
        b->data = p;
        b->data_len = sum;
        for (uint32_t i = 0; i < b->n_vrs; i++) {
                const struct md_variable *v = vars_find(w, b->type, b->vrs[i]);
                uint64_t max = w->max_binary, n = vars_elements(w, v);

                if (v->attrs.has_max_size && v->attrs.max_size < max)
                        max = v->attrs.max_size;
                for (uint64_t end = k + n; k < end; k++)
                        if (b->sizes[k] > max) {
                                reply_refuse(rp, CALL_E_TOO_LONG, "%s: Binary value %" PRIu64 " of '%s' "
                                             "has %" PRIu64 " bytes, over the limit of %" PRIu64, fn, k,
                                             v->name, b->sizes[k], max);
                                return false;
                        }
        }
        return true;
bad:
        reply_refuse(rp, CALL_E_BADMSG, "%s: malformed Binary values", fn);
        return false;
}

static bool check_values(struct worker *w, const struct call_in *in, const struct call_values *cv,
                         struct vblock *b, const char *fn, struct reply *rp)
{
        size_t esize = call_elem_size(b->type);
        uint64_t bad = 0, first = 0;
        const void *p;
        int r;

        if (b->type == MD_BINARY)
                return check_binary(w, in, cv, b, fn, rp);
        if (b->type == MD_STRING) {
                if (cv->sizes.len || call_in_bytes(in, &cv->data, UINT64_MAX, &p) < 0) {
                        reply_refuse(rp, CALL_E_BADMSG, "%s: malformed String values", fn);
                        return false;
                }
                b->data = p;
                b->data_len = cv->data.len;
                r = call_check_strings(p, cv->data.len, b->n_values, w->max_string, &bad);
                if (r == -EFBIG) {
                        const struct md_variable *v = var_of_element(w, b, bad, &first);

                        reply_refuse(rp, CALL_E_TOO_LONG, "%s: String value %" PRIu64 " of '%s' is "
                                     "longer than the limit of %" PRIu64 " bytes", fn, bad,
                                     v ? v->name : "?", w->max_string);
                        return false;
                }
                if (r < 0) {
                        reply_refuse(rp, CALL_E_BADMSG, "%s: malformed String values", fn);
                        return false;
                }
                return true;
        }
        if (cv->sizes.len || call_in_range(in, &cv->data, esize, b->n_values, &p) < 0) {
                reply_refuse(rp, CALL_E_BADMSG, "%s: malformed values", fn);
                return false;
        }
        b->data = p;
        b->data_len = cv->data.len;
        return check_fixed(w, b, fn, rp);
}

/* The value references of b (resolved), then nValues against their elements. */
static bool check_count(struct worker *w, struct vblock *b, bool set, const char *fn,
                        struct reply *rp)
{
        uint64_t total = 0;

        if (!check_vrs(w, b, set, fn, &total, rp))
                return false;
        if (b->n_values != total) {
                char whose[48];

                if (b->n_vrs == 1)
                        snprintf(whose, sizeof(whose), "the variable has");
                else
                        snprintf(whose, sizeof(whose), "the %" PRIu32 " variables have", b->n_vrs);
                reply_refuse(rp, b->n_values > total ? CALL_E_TOO_MANY : CALL_E_TOO_FEW,
                             "%s: nValues = %" PRIu64 ", but %s %" PRIu64 " value%s (one per "
                             "element)", fn, b->n_values, whose, total, total == 1 ? "" : "s");
                return false;
        }
        return true;
}

bool vars_check(struct worker *w, const struct call_in *in, const struct call_values *cv,
                bool set, const char *fn, struct vblock *ret, struct reply *rp)
{
        struct vblock b = { 0 };
        const char *why;
        const void *p;

        if (cv->type >= MD_TYPE_COUNT) {
                reply_refuse(rp, CALL_E_BADMSG, "%s: unknown type %" PRIu32, fn, cv->type);
                return false;
        }
        b.type = (enum md_type)cv->type;
        why = type_refusal(w, b.type);
        if (why) {
                reply_refuse(rp, CALL_E_TYPE, "%s: %s", fn, why);
                return false;
        }
        b.n_vrs = cv->n_vrs;
        b.n_values = cv->n_values;
        if (call_in_range(in, &cv->vrs, sizeof(uint32_t), b.n_vrs, &p) < 0) {
                reply_refuse(rp, CALL_E_BADMSG, "%s: malformed value references", fn);
                return false;
        }
        b.vrs = p;
        if (!check_count(w, &b, set, fn, rp))
                return false;
        if (!set) {
                if (cv->data.len || cv->sizes.len) {
                        reply_refuse(rp, CALL_E_BADMSG, "%s: a get carries no values", fn);
                        return false;
                }
        } else if (!check_values(w, in, cv, &b, fn, rp)) {
                return false;
        }
        *ret = b;
        return true;
}

bool vars_check_block(struct worker *w, struct vblock *b, bool set, const char *fn,
                      struct reply *rp)
{
        const char *why;

        if ((unsigned)b->type >= MD_TYPE_COUNT || !call_elem_size(b->type)) {
                reply_refuse(rp, CALL_E_BADMSG, "%s: a kept block of type %u", fn, (unsigned)b->type);
                return false;
        }
        why = type_refusal(w, b->type);
        if (why) {
                reply_refuse(rp, CALL_E_TYPE, "%s: %s", fn, why);
                return false;
        }
        if (!check_count(w, b, set, fn, rp))
                return false;
        return !set || check_fixed(w, b, fn, rp);
}

void vars_note_set(struct worker *w, const struct vblock *b)
{
        uint64_t k = 0;

        if (b->type != MD_UINT64)
                return;
        for (uint32_t i = 0; i < b->n_vrs; i++) {
                const struct md_variable *v = vars_find(w, b->type, b->vrs[i]);
                uint64_t n;

                if (!v || elements(w, v, &n) < 0)
                        return;
                if (v->causality == MD_CAUSALITY_STRUCTURAL_PARAMETER && n == 1)
                        memcpy(&w->sp[vars_index(w, v)], (const uint64_t *)b->data + k,
                               sizeof(uint64_t));
                k += n;
        }
}

void vars_reset(struct worker *w)
{
        for (size_t i = 0; i < w->n_sp; i++) {
                const struct md_variable *v = &w->md->vars[w->sp_index[i]];

                w->sp[w->sp_index[i]] = v->has_start && v->start.n >= 1 ? v->start.u[0] : 0;
        }
}
