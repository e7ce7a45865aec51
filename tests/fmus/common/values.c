/*
 * values.c: fmi3Get{Type}/fmi3Set{Type} for every type, shared by the FMI
 * 2.0 front end (which maps Real, Integer, Boolean and String onto
 * Float64, Int32, Boolean and String).
 *
 * DESIGN: a call is checked completely (every value reference known, of
 * the right type, accessible in the current state, nValues equal to the
 * number of serialized elements) before one value is copied, so a refused
 * call leaves the instance as it was.
 */
#include <errno.h>
#include <string.h>

#include "common.h"

/* Look up vrs[i], check its type and accessibility, and count elements. */
static int check_vars(struct inst *inst, const char *fn, enum var_type t,
                      const uint32_t vrs[], size_t nvr, size_t n_values, bool set)
{
        size_t total = 0;

        if (nvr > 0 && !vrs) {
                inst_log(inst, FMU_ERROR, "%s: valueReferences is NULL", fn);
                return -EINVAL;
        }
        for (size_t i = 0; i < nvr; i++) {
                const struct var *v = inst_find_var(inst, vrs[i]);
                const char *why;

                if (!v) {
                        inst_log(inst, FMU_ERROR, "%s: unknown value reference %u", fn, vrs[i]);
                        return -EINVAL;
                }
                if (v->type != t) {
                        inst_log(inst, FMU_ERROR, "%s: variable '%s' (vr %u) is of type %s, not %s",
                                 fn, v->name, v->vr, var_type_name(v->type), var_type_name(t));
                        return -EINVAL;
                }
                why = set ? inst_set_refusal(inst, v) : inst_get_refusal(inst, v);
                if (why) {
                        inst_log(inst, FMU_ERROR, "%s: variable '%s' (vr %u) %s (state: %s)",
                                 fn, v->name, v->vr, why, inst_state_name(inst->sim.state));
                        return -EINVAL;
                }
                total += inst_var_count(inst, v);
        }
        if (total != n_values) {
                inst_log(inst, FMU_ERROR,
                         "%s: nValues = %zu, but the %zu value references have %zu values",
                         fn, n_values, nvr, total);
                return -EINVAL;
        }
        return 0;
}

int values_get(struct inst *inst, const char *fn, enum var_type t,
               const uint32_t vrs[], size_t nvr, void *out, size_t *sizes,
               size_t n_values)
{
        size_t esize = t == VAR_STRING ? sizeof(const char *) :
                       t == VAR_BINARY ? sizeof(const uint8_t *) : var_type_size(t);
        char *dst = out;
        size_t k = 0;
        int r;

        r = check_vars(inst, fn, t, vrs, nvr, n_values, false);
        if (r < 0)
                return r;
        if (n_values > 0 && (!out || (t == VAR_BINARY && !sizes))) {
                inst_log(inst, FMU_ERROR, "%s: values is NULL", fn);
                return -EINVAL;
        }
        r = inst_refresh(inst);
        if (r < 0)
                return r;

        for (size_t i = 0; i < nvr; i++) {
                const struct var *v = inst_find_var(inst, vrs[i]);
                size_t n = inst_var_count(inst, v);
                char *src = inst_var_ptr(inst, v);

                if (t == VAR_STRING) {
                        const struct var_string *s = (const struct var_string *)src;

                        for (size_t j = 0; j < n; j++, k++)
                                ((const char **)out)[k] = s[j].s;
                } else if (t == VAR_BINARY) {
                        const struct var_binary *b = (const struct var_binary *)src;

                        for (size_t j = 0; j < n; j++, k++) {
                                ((const uint8_t **)out)[k] = b[j].bytes;
                                sizes[k] = b[j].size;
                        }
                } else {
                        memcpy(dst + k * esize, src, n * esize);
                        k += n;
                }
        }
        return 0;
}

/* Check the new values that need more than a type check. */
static int check_new_values(struct inst *inst, const char *fn, enum var_type t,
                            const uint32_t vrs[], size_t nvr, const void *in,
                            const size_t *sizes)
{
        size_t k = 0;

        for (size_t i = 0; i < nvr; i++) {
                const struct var *v = inst_find_var(inst, vrs[i]);
                size_t n = inst_var_count(inst, v);

                for (size_t j = 0; j < n; j++, k++) {
                        if (t == VAR_STRING) {
                                const char *s = ((const char *const *)in)[k];

                                if (!s || strlen(s) >= VAR_STRING_CAP) {
                                        inst_log(inst, FMU_ERROR,
                                                 "%s: value of '%s' is NULL or longer than %d bytes",
                                                 fn, v->name, VAR_STRING_CAP - 1);
                                        return -EINVAL;
                                }
                        } else if (t == VAR_BINARY) {
                                const uint8_t *b = ((const uint8_t *const *)in)[k];

                                if (sizes[k] > VAR_BINARY_CAP || (!b && sizes[k] > 0)) {
                                        inst_log(inst, FMU_ERROR,
                                                 "%s: value of '%s' is NULL or longer than %d bytes",
                                                 fn, v->name, VAR_BINARY_CAP);
                                        return -EINVAL;
                                }
                        } else if (v->causality == VAR_STRUCTURAL_PARAMETER && t == VAR_UINT64) {
                                int r = inst_check_size(inst, v, ((const uint64_t *)in)[k]);

                                if (r < 0)
                                        return r;
                        }
                }
        }
        return 0;
}

int values_set(struct inst *inst, const char *fn, enum var_type t,
               const uint32_t vrs[], size_t nvr, const void *in,
               const size_t *sizes, size_t n_values)
{
        size_t esize = t == VAR_STRING ? sizeof(const char *) :
                       t == VAR_BINARY ? sizeof(const uint8_t *) : var_type_size(t);
        const char *src = in;
        size_t k = 0;
        int r;

        r = check_vars(inst, fn, t, vrs, nvr, n_values, true);
        if (r < 0)
                return r;
        if (n_values > 0 && (!in || (t == VAR_BINARY && !sizes))) {
                inst_log(inst, FMU_ERROR, "%s: values is NULL", fn);
                return -EINVAL;
        }
        r = check_new_values(inst, fn, t, vrs, nvr, in, sizes);
        if (r < 0)
                return r;

        for (size_t i = 0; i < nvr; i++) {
                const struct var *v = inst_find_var(inst, vrs[i]);
                size_t n = inst_var_count(inst, v);
                char *dst = inst_var_ptr(inst, v);

                if (t == VAR_STRING) {
                        struct var_string *s = (struct var_string *)dst;

                        for (size_t j = 0; j < n; j++, k++)
                                var_string_init(&s[j], ((const char *const *)in)[k]);
                } else if (t == VAR_BINARY) {
                        struct var_binary *b = (struct var_binary *)dst;

                        for (size_t j = 0; j < n; j++, k++)
                                var_binary_init(&b[j], ((const uint8_t *const *)in)[k], sizes[k]);
                } else {
                        /* memmove: an importer may pass our own storage back. */
                        memmove(dst, src + k * esize, n * esize);
                        k += n;
                }
        }
        inst->sim.dirty = true;
        return 0;
}
