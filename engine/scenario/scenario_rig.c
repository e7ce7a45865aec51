/*
 * scenario_rig: the rig ports (shm/rig.h), from the settings' rigInputs,
 * rigOutputs, rigPolicy and rigTimeoutMs (whitespace-separated names,
 * an input as NAME or NAME=SAFE) or the overrides' lists, which replace
 * them (fmuctl --rig-in, --rig-out, --rig-policy, --rig-timeout).
 *
 * DESIGN: a rig input is an unconnected scalar input: a value a
 * connection also sets would be overwritten at every point by one or the
 * other, so a connected input is refused with its connection named. Only
 * numeric and Boolean scalars travel (as doubles, see rig.h); String,
 * Binary, Clock, Enumeration and arrays are refused with the type named.
 * Each list is bounded by RIG_PORTS_MAX, and every problem is reported
 * before the scenario is refused.
 */
#include "engine/scenario/scenario_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOKEN_MAX 1024

static const enum rig_type rig_types[MD_TYPE_COUNT] = {
        [MD_FLOAT32] = RIG_FLOAT32, [MD_FLOAT64] = RIG_FLOAT64, [MD_INT8] = RIG_INT8,
        [MD_UINT8] = RIG_UINT8, [MD_INT16] = RIG_INT16, [MD_UINT16] = RIG_UINT16,
        [MD_INT32] = RIG_INT32, [MD_UINT32] = RIG_UINT32, [MD_INT64] = RIG_INT64,
        [MD_UINT64] = RIG_UINT64, [MD_BOOLEAN] = RIG_BOOLEAN,
};

enum rig_type scenario_rig_type(enum md_type t)
{
        return (unsigned)t < MD_TYPE_COUNT ? rig_types[t] : 0;
}

struct src {
        const char *file;
        int line;
};

static const struct scenario_connection *connected(const struct scenario *s, size_t comp,
                                                   size_t var)
{
        for (size_t i = 0; i < s->n_connections; i++)
                if (s->connections[i].to_comp == comp && s->connections[i].to_var == var)
                        return &s->connections[i];
        return NULL;
}

/* Check one port "NAME" or (input) "NAME=SAFE" and fill *p. */
static int port(struct sc_load *l, const struct src *at, bool input, char *tok,
                struct scenario_rig_port *p)
{
        const struct scenario *s = l->s;
        const struct scenario_connection *c;
        const struct md_variable *v;
        char *eq = input ? strchr(tok, '=') : NULL, *end;
        size_t comp, var;

        if (eq)
                *eq++ = '\0';
        if (scenario_find_variable(s, tok, &comp, &var) < 0)
                return sc_err(l, at->file, at->line, tok, "rig %s: no such variable",
                              input ? "input" : "output");
        v = &s->components[comp].fmu->md->vars[var];
        if (input && v->causality != MD_CAUSALITY_INPUT)
                return sc_err(l, at->file, at->line, tok, "rig input: a variable of causality "
                              "%s, not an input", md_causality_name(v->causality));
        if (!input && v->causality != MD_CAUSALITY_OUTPUT)
                return sc_err(l, at->file, at->line, tok, "rig output: a variable of causality "
                              "%s, not an output", md_causality_name(v->causality));
        if (!scenario_rig_type(v->type) || v->n_dims)
                return sc_err(l, at->file, at->line, tok, "rig %s: %s%s: only Float32, "
                              "Float64, integer and Boolean scalars are rig ports",
                              input ? "input" : "output", v->n_dims ? "an array of " : "",
                              md_type_name(v->type));
        if (input && (c = connected(s, comp, var)))
                return sc_err(l, at->file, at->line, tok, "rig input: connected from '%s.%s' "
                              "(%s); only an unconnected input can be a rig port",
                              s->components[c->from_comp].name,
                              s->components[c->from_comp].fmu->md->vars[c->from_var].name,
                              c->origin ? c->origin : "the scenario");
        *p = (struct scenario_rig_port){ .comp = comp, .var = var, .type = v->type };
        if (eq) {
                /* A Boolean's safe value as set takes it, or as 1 and 0. */
                if (v->type == MD_BOOLEAN && (!strcmp(eq, "true") || !strcmp(eq, "false"))) {
                        p->safe = eq[0] == 't';
                        end = (char *)eq + strlen(eq);
                } else {
                        p->safe = strtod(eq, &end);
                }
                if (!*eq || *end || !rig_value_ok(scenario_rig_type(v->type), p->safe))
                        return sc_err(l, at->file, at->line, tok, "rig input: safe value \"%s\" "
                                      "is not a %s value", eq, md_type_name(v->type));
                p->has_safe = true;
        }
        p->name = strdup(tok);
        return p->name ? 0 : -ENOMEM;
}

static bool duplicate(const struct scenario_rig_port *ports, size_t n, size_t comp, size_t var)
{
        for (size_t i = 0; i < n; i++)
                if (ports[i].comp == comp && ports[i].var == var)
                        return true;
        return false;
}

/* One list, from the overrides' strings or the settings' text; appended to *ports. */
static int list(struct sc_load *l, const struct src *at, bool input, size_t n_list,
                const char *const *items, const char *text, struct scenario_rig_port **ports,
                size_t *n)
{
        const char *what = input ? "rig inputs" : "rig outputs";
        size_t given = n_list;
        int bad = 0, r;

        /* Bounded before anything is looked up. */
        for (const char *t = items ? "" : text; *(t += strspn(t, " \t\r\n")); given++)
                t += strcspn(t, " \t\r\n");
        if (given > RIG_PORTS_MAX)
                return sc_err(l, at->file, at->line, NULL, "%s: %zu ports, more than %u",
                              what, given, RIG_PORTS_MAX);

        for (size_t i = 0;; i++) {
                char tok[TOKEN_MAX];
                size_t len;

                if (items) {
                        if (i == n_list)
                                break;
                        len = strlen(items[i]);
                        if (len >= sizeof(tok))
                                len = sizeof(tok) - 1;
                        memcpy(tok, items[i], len);
                } else {
                        text += strspn(text, " \t\r\n");
                        if (!*text)
                                break;
                        len = strcspn(text, " \t\r\n");
                        if (len >= sizeof(tok)) {
                                bad = 1;
                                sc_err(l, at->file, at->line, NULL, "%s: a name of %zu bytes "
                                       "(at most %d)", what, len, TOKEN_MAX - 1);
                                text += len;
                                continue;
                        }
                        memcpy(tok, text, len);
                        text += len;
                }
                tok[len] = '\0';
                r = port(l, at, input, tok, &(*ports)[*n]);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        bad = 1;
                        continue;
                }
                if (duplicate(*ports, *n, (*ports)[*n].comp, (*ports)[*n].var)) {
                        bad |= sc_err(l, at->file, at->line, tok, "%s: named twice", what) < 0;
                        free((*ports)[*n].name);
                        continue;
                }
                ++*n;
        }
        return bad ? -EINVAL : 0;
}

int sc_rig(struct sc_load *l, const struct sc_settings *st)
{
        const struct scenario_overrides *ov = l->ov;
        struct scenario_rig *rig = &l->s->rig;
        struct src ssd = { l->label, st->rig_line }, in_at = ssd, out_at = ssd;
        bool ov_in = ov && ov->n_rig_in, ov_out = ov && ov->n_rig_out;
        int bad = 0, r;

        rig->policy = ov && ov->has_rig_policy ? ov->rig_policy
                      : st->has_rig_policy ? st->rig_policy : RIG_HOLD;
        rig->timeout_ms = SCENARIO_RIG_TIMEOUT_MS;
        if (ov && ov->has_rig_timeout) {
                rig->timeout_ms = ov->rig_timeout_ms;
                ssd = (struct src){ "--rig-timeout", 0 };
        } else if (st->has_rig_timeout) {
                if (!(st->rig_timeout_ms >= 1 && st->rig_timeout_ms <= SCENARIO_RIG_TIMEOUT_MAX_MS))
                        rig->timeout_ms = 0;
                else
                        rig->timeout_ms = (uint32_t)llround(st->rig_timeout_ms);
        }
        if (rig->timeout_ms < 1 || rig->timeout_ms > SCENARIO_RIG_TIMEOUT_MAX_MS)
                bad |= sc_err(l, ssd.file, ssd.line, NULL, "rigTimeoutMs: expected 1 to %u ms",
                              SCENARIO_RIG_TIMEOUT_MAX_MS) < 0;
        rig->in = calloc(RIG_PORTS_MAX, sizeof(*rig->in));
        rig->out = calloc(RIG_PORTS_MAX, sizeof(*rig->out));
        if (!rig->in || !rig->out)
                return -ENOMEM;
        if (ov_in)
                in_at = (struct src){ "--rig-in", 0 };
        if (ov_out)
                out_at = (struct src){ "--rig-out", 0 };
        if (ov_in || st->rig_in) {
                r = list(l, &in_at, true, ov_in ? ov->n_rig_in : 0, ov_in ? ov->rig_in : NULL,
                         st->rig_in, &rig->in, &rig->n_in);
                if (r == -ENOMEM)
                        return r;
                bad |= r < 0;
        }
        if (ov_out || st->rig_out) {
                r = list(l, &out_at, false, ov_out ? ov->n_rig_out : 0,
                         ov_out ? ov->rig_out : NULL, st->rig_out, &rig->out, &rig->n_out);
                if (r == -ENOMEM)
                        return r;
                bad |= r < 0;
        }
        return bad ? -EINVAL : 0;
}
