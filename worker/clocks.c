/*
 * clocks: which Clocks of an FMI 3.0 instance are active now, and the
 * accesses that depend on it.
 *
 * The rules (FMI 3.0):
 * - A clocked variable (attribute clocks, Clocks included) is set or got
 *   in Event Mode only while one of its Clocks is active, and in
 *   Initialization Mode whatever the Clocks (sections 2.2.7.2 and
 *   2.2.8.3). access.c refuses every other state.
 * - An input Clock is active from fmi3SetClock(true) in Event Mode until
 *   fmi3SetClock(false), fmi3UpdateDiscreteStates or the end of Event
 *   Mode (sections 2.2.7.2, 2.3.5: "any Clock active during
 *   fmi3UpdateDiscreteStates must be deactivated by the FMU itself").
 * - An output or local Clock is active when fmi3GetClock reported it
 *   active in this super-dense instant (sections 2.2.8.2, 2.3.5): the
 *   importer cannot know otherwise, so until it asks, the clocked
 *   variables of such a Clock are refused.
 * - Deactivating an input Clock k deactivates the Clocks activated as a
 *   result of k's activation (section 2.3.5). Which ones the worker
 *   reads from <ModelStructure>: an output Clock with declared
 *   dependencies that name neither k, nor a variable clocked by k, nor a
 *   Clock so deactivated stays active; every other output or local Clock
 *   counts as inactive until fmi3GetClock reports it again.
 * - A periodic Clock (intervalVariability constant, fixed or tunable) must
 *   not be active for more than one fmi3UpdateDiscreteStates per Event
 *   Mode (section 2.3.5): fmi3SetClock(true) on one that was active at an
 *   fmi3UpdateDiscreteStates of this Event Mode is refused.
 *
 * DESIGN: the readings where the standard leaves room:
 * - An output Clock reported active stays active until
 *   fmi3UpdateDiscreteStates even if a later fmi3GetClock reports it
 *   inactive: reporting an activation only once is a rule of Clock Update
 *   Mode in Scheduled Execution (section 5.2.2), not a deactivation in
 *   Event Mode. Reading an output Clock twice is allowed.
 * - fmi3UpdateDiscreteStates deactivates every Clock when it returns
 *   (OK, Warning or Discard; an Error or Fatal leaves Event Mode anyway).
 * - fmi3SetFMUState forgets every activation: the worker does not know
 *   which Clocks were active in the restored state; the importer sets
 *   its input Clocks again and asks for the output Clocks again.
 * - fmi3GetClock on an input Clock changes nothing: the importer's own
 *   fmi3SetClock calls are what activates it.
 *
 * Cost: one flag byte per variable, allocated only when the model has a
 * Clock; clocks_after() returns at once while no flag is set, so the
 * calls of Step Mode pay one branch. FMI 2.0 has no Clocks: nothing here
 * is allocated for it and every function is a no-op.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/worker.h"

enum {
        CLK_ACTIVE = 1u << 0,   /* active now */
        CLK_UPDATED = 1u << 1,  /* periodic and active at an fmi3UpdateDiscreteStates of this
                                   Event Mode */
        CLK_GONE = 1u << 2,     /* scratch of forget_dependents(): deactivated just now */
};

#define SHOWN_CLOCKS    3       /* Clocks named in a refusal; the rest are counted */

struct clocks {
        uint8_t *flag;          /* by variable index */
        bool any;               /* some flag is set: clocks_after() has work */
        char why[CALL_MSG_MAX + 1];     /* the last refusal of clocks_access_refusal() */
};

int clocks_init(struct worker *w)
{
        bool has = false;

        w->clk = NULL;
        if (w->fmi != MD_FMI3)
                return 0;
        for (size_t i = 0; i < w->md->n_vars && !has; i++)
                has = w->md->vars[i].type == MD_CLOCK;
        if (!has)
                return 0;
        w->clk = calloc(1, sizeof(*w->clk));
        if (!w->clk)
                return -ENOMEM;
        w->clk->flag = calloc(w->md->n_vars, sizeof(*w->clk->flag));
        if (!w->clk->flag) {
                free(w->clk);
                w->clk = NULL;
                return -ENOMEM;
        }
        return 0;
}

void clocks_fini(struct worker *w)
{
        if (!w->clk)
                return;
        free(w->clk->flag);
        free(w->clk);
        w->clk = NULL;
}

static bool is_periodic(const struct md_variable *v)
{
        enum md_interval_variability iv = v->attrs.clock.interval_variability;

        return iv == MD_INTERVAL_CONSTANT || iv == MD_INTERVAL_FIXED || iv == MD_INTERVAL_TUNABLE;
}

/* Reported by the FMU through fmi3GetClock rather than set by the importer. */
static bool is_reported(const struct md_variable *v)
{
        return v->causality == MD_CAUSALITY_OUTPUT || v->causality == MD_CAUSALITY_LOCAL;
}

/* The Clock variable with value reference vr; NULL when the description has none. */
static const struct md_variable *clock_of(const struct worker *w, uint32_t vr)
{
        const struct md_variable *c = vars_find(w, MD_CLOCK, vr);

        return c && c->type == MD_CLOCK ? c : NULL;
}

static bool is_active(const struct worker *w, const struct md_variable *c)
{
        return w->clk->flag[vars_index(w, c)] & CLK_ACTIVE;
}

const char *clocks_access_refusal(const struct worker *w, const struct md_variable *v)
{
        char *p, *end;
        bool reported = false;
        size_t shown = 0;

        if (!w->clk || !v->n_clocks || w->state != CALL_ST_EVENT)
                return NULL;
        for (size_t i = 0; i < v->n_clocks; i++) {
                const struct md_variable *c = clock_of(w, v->clocks[i]);

                if (c && is_active(w, c))
                        return NULL;
        }
        p = w->clk->why;
        end = p + sizeof(w->clk->why);
        p += snprintf(p, (size_t)(end - p), "is clocked by");
        for (size_t i = 0; i < v->n_clocks && p < end; i++) {
                const struct md_variable *c = clock_of(w, v->clocks[i]);

                if (c && is_reported(c))
                        reported = true;
                if (shown++ == SHOWN_CLOCKS) {
                        p += snprintf(p, (size_t)(end - p), " and %zu more", v->n_clocks - i);
                        break;
                }
                p += snprintf(p, (size_t)(end - p), "%s '%s' (vr %" PRIu32 ")",
                              i == 0 ? "" : i + 1 == v->n_clocks ? " and" : ",",
                              c ? c->name : "?", v->clocks[i]);
        }
        if (p < end)
                p += snprintf(p, (size_t)(end - p), ", %s: a clocked variable can only be accessed "
                              "in Event Mode while one of its Clocks is active (sections 2.2.7.2, "
                              "2.2.8.3)%s", v->n_clocks == 1 ? "which is not active" :
                              "none of them active", reported ? "; an output Clock is active once "
                              "fmi3GetClock reported it" : "");
        return w->clk->why;
}

bool clocks_set_ok(struct worker *w, const struct vblock *b, const char *fn, struct reply *rp)
{
        const uint8_t *on = b->data;
        uint64_t k = 0;

        if (!w->clk || b->type != MD_CLOCK)
                return true;
        for (uint32_t i = 0; i < b->n_vrs; i++) {
                const struct md_variable *c = clock_of(w, b->vrs[i]);
                uint64_t first = k;

                if (!c)
                        return true;    /* vars_check() found every one; cannot happen */
                k += vars_elements(w, c);
                if (first < b->n_values && on[first] && is_periodic(c) &&
                    (w->clk->flag[vars_index(w, c)] & CLK_UPDATED)) {
                        reply_refuse(rp, CALL_E_ACCESS, "%s: Clock '%s' (vr %" PRIu32 ") was active "
                                     "at an fmi3UpdateDiscreteStates of this Event Mode: a periodic "
                                     "Clock must not be active for more than one "
                                     "fmi3UpdateDiscreteStates per Event Mode (section 2.3.5) "
                                     "(state: %s)", fn, c->name, b->vrs[i],
                                     call_state_name(w->state));
                        return false;
                }
        }
        return true;
}

/* Does v depend on a Clock just deactivated or on a variable it clocks? */
static bool depends_on_gone(const struct worker *w, const struct md_variable *v)
{
        const uint8_t *flag = w->clk->flag;

        if (flag[vars_index(w, v)] & CLK_GONE)
                return true;
        for (size_t i = 0; i < v->n_clocks; i++) {
                const struct md_variable *c = clock_of(w, v->clocks[i]);

                if (c && (flag[vars_index(w, c)] & CLK_GONE))
                        return true;
        }
        return false;
}

/* The <Output> entry of variable index idx; NULL when it has none. */
static const struct md_unknown *output_of(const struct worker *w, size_t idx)
{
        const struct md_unknowns *o = &w->md->structure.outputs;

        for (size_t i = 0; i < o->n; i++)
                if (o->v[i].var == idx)
                        return &o->v[i];
        return NULL;
}

/* Should reported Clock c go with the Clocks marked CLK_GONE? */
static bool goes_too(const struct worker *w, const struct md_variable *c)
{
        const struct md_unknown *u = output_of(w, vars_index(w, c));

        if (!u || !u->has_dependencies)
                return true;    /* no dependencies declared: it may depend on anything */
        for (size_t j = 0; j < u->n_deps; j++)
                if (u->deps[j] < w->md->n_vars && depends_on_gone(w, &w->md->vars[u->deps[j]]))
                        return true;
        return false;
}

/*
 * Input Clock gone was deactivated: deactivate the reported Clocks that
 * may have ticked because of it, to a fixed point (one Clock's
 * deactivation can take another's along). O(rounds x Clocks x outputs),
 * on fmi3SetClock(false) only.
 */
static void forget_dependents(struct worker *w, const struct md_variable *gone)
{
        uint8_t *flag = w->clk->flag;
        bool changed = true;

        flag[vars_index(w, gone)] |= CLK_GONE;
        while (changed) {
                changed = false;
                for (size_t i = 0; i < w->md->n_vars; i++) {
                        const struct md_variable *c = &w->md->vars[i];

                        if (c->type != MD_CLOCK || !is_reported(c) || !(flag[i] & CLK_ACTIVE) ||
                            !goes_too(w, c))
                                continue;
                        flag[i] = (uint8_t)((flag[i] & ~CLK_ACTIVE) | CLK_GONE);
                        changed = true;
                }
        }
        for (size_t i = 0; i < w->md->n_vars; i++)
                flag[i] &= (uint8_t)~CLK_GONE;
}

/* Record what values (one byte per Clock value) say about the Clocks of b. */
static void note(struct worker *w, const struct vblock *b, const uint8_t *on, bool set)
{
        uint64_t k = 0;

        for (uint32_t i = 0; i < b->n_vrs; i++) {
                const struct md_variable *c = clock_of(w, b->vrs[i]);
                uint64_t first = k;
                uint8_t *f;

                if (!c)
                        return;
                k += vars_elements(w, c);
                if (first >= b->n_values)
                        return;
                f = &w->clk->flag[vars_index(w, c)];
                if (set && c->causality == MD_CAUSALITY_INPUT) {
                        if (on[first]) {
                                *f |= CLK_ACTIVE;
                                w->clk->any = true;
                        } else if (*f & CLK_ACTIVE) {
                                *f &= (uint8_t)~CLK_ACTIVE;
                                forget_dependents(w, c);
                        }
                } else if (!set && is_reported(c) && on[first]) {
                        *f |= CLK_ACTIVE;       /* a later "inactive" is no deactivation (above) */
                        w->clk->any = true;
                }
        }
}

void clocks_note_set(struct worker *w, const struct vblock *b)
{
        if (w->clk && b->type == MD_CLOCK && w->state == CALL_ST_EVENT)
                note(w, b, b->data, true);
}

void clocks_note_get(struct worker *w, const struct vblock *b, const struct reply *rp,
                     const struct call_values *out)
{
        if (w->clk && b->type == MD_CLOCK && w->state == CALL_ST_EVENT &&
            out->data.len >= b->n_values)
                note(w, b, call_out_ptr(&rp->out, out->data.off), false);
}

void clocks_after(struct worker *w, enum call_op op, int status)
{
        struct clocks *c = w->clk;

        if (!c || !c->any)
                return;
        if (w->state != CALL_ST_EVENT || op == CALL_OP_SET_FMU_STATE) {
                memset(c->flag, 0, w->md->n_vars);
                c->any = false;
                return;
        }
        if (op != CALL_OP_UPDATE_DISCRETE || status_norm(w, status) > fmi3Discard)
                return;
        for (size_t i = 0; i < w->md->n_vars; i++) {
                if ((c->flag[i] & CLK_ACTIVE) && is_periodic(&w->md->vars[i]))
                        c->flag[i] |= CLK_UPDATED;
                c->flag[i] &= (uint8_t)~CLK_ACTIVE;
        }
}
