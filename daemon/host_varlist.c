/*
 * host_varlist: the vars operation, every variable of a session with its
 * type, causality, variability, unit and current value (proto/PROTOCOL.md
 * "vars").
 *
 * DESIGN: the names are those get and set take (host_vars.c: the bare name
 * in a one-FMU scenario, else "instance.variable"), and each value is read
 * as get reads it (hvalues_get_one(): a value set but not yet applied, the
 * last completed point's published value, else the FMU's), so the list
 * answers what get would. A value get could not read (a Clock, a variable
 * FMI does not let be read in this state, an array too large) is nil, with
 * the reason left to a get of that one variable: one unreadable variable
 * does not cost the whole list. The reply is bounded by the daemon's reply
 * limit like get's, refused too-large as soon as it would not fit.
 * While the session runs, the list is answered between points on the
 * session thread: a value is one already at hand (set, or published by
 * the last point), never a worker round trip per variable, so that an
 * observer's vars cannot make a paced run late; the others are nil.
 *
 * Threads: the session thread.
 */
#include "daemon/host_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/scenario/scenario_int.h"

/* Variables of every component. */
static size_t count(const struct scenario *sc)
{
        size_t n = 0;

        for (size_t i = 0; i < sc->n_components; i++)
                n += sc->components[i].fmu->md->n_vars;
        return n;
}

/* One entry: {name, type, causality, variability, unit, value}; -1, or the reply code with msg. */
static int entry(struct hsess *hs, size_t comp, const struct md_variable *v, struct pw *w,
                 char *msg, size_t size)
{
        const struct scenario_component *c = &hs->sc->components[comp];
        char *name = NULL;
        struct hvar x = { 0 };
        int code, n;

        n = hs->sc->single_fmu ? asprintf(&name, "%s", v->name) :
            asprintf(&name, "%s.%s", c->name, v->name);
        if (n < 0) {
                snprintf(msg, size, "out of memory");
                return PROTO_E_INTERNAL;
        }
        pw_map(w, 6);
        pw_str(w, "name");
        pw_str(w, name);
        pw_str(w, "type");
        pw_str(w, md_type_name(v->type));
        pw_str(w, "causality");
        pw_str(w, md_causality_name(v->causality));
        pw_str(w, "variability");
        pw_str(w, md_variability_name(v->variability));
        pw_str(w, "unit");
        if (v->attrs.unit)
                pw_str(w, v->attrs.unit);
        else
                pw_nil(w);
        pw_str(w, "value");
        code = hvar_resolve(hs, &(struct proto_str){ name, (uint32_t)n }, &x, msg, size);
        /* This component's own variable, not one a longer instance name shadows. */
        if (code < 0 && (x.comp != comp || x.v != v || x.element))
                code = PROTO_E_NO_VARIABLE;
        /* Running: between points, no worker round trip per variable (a paced run's time). */
        if (code < 0 && hs->st.state == PROTO_STATE_RUNNING)
                code = hvalues_peek_one(hs, &x, w) ? -1 : 0;
        else if (code < 0)
                code = hvalues_get_one(hs, &x, w, msg, size);
        if (code == PROTO_E_INTERNAL) {
                hvar_fini(&x);
                free(name);
                return code;
        }
        if (code >= 0)
                pw_nil(w);
        hvar_fini(&x);
        free(name);
        return -1;
}

void hvarlist_reply(struct hsess *hs, const struct hcmd *c, const struct pv *args)
{
        char msg[HOST_MSG_MAX], err[256];
        const struct scenario *sc = hs->sc;
        struct proto_target t;
        size_t n = count(sc), done = 0;
        int code = -1;
        struct pw w;

        if (proto_target_decode(args, &t, err, sizeof(err)) < 0) {
                host_reply_error(hs->h, c->token, c->id, PROTO_E_BAD_REQUEST, "%s", err);
                return;
        }
        if (n > PROTO_MAX_ITEMS) {
                host_reply_error(hs->h, c->token, c->id, PROTO_E_TOO_LARGE,
                                 "%zu variables, more than the %u a reply lists", n,
                                 PROTO_MAX_ITEMS);
                return;
        }
        if (pw_init(&w) < 0) {
                host_reply_error(hs->h, c->token, c->id, PROTO_E_INTERNAL, "out of memory");
                return;
        }
        proto_reply_ok_begin(&w, c->id);
        pw_map(&w, 2);
        pw_str(&w, "time");
        pw_f64(&w, hs->m ? master_time(hs->m) : sc->experiment.start);
        pw_str(&w, "vars");
        pw_array(&w, (uint32_t)n);
        for (size_t i = 0; i < sc->n_components && code < 0; i++) {
                const struct md *md = sc->components[i].fmu->md;

                for (size_t k = 0; k < md->n_vars && code < 0; k++, done++) {
                        code = entry(hs, i, &md->vars[k], &w, msg, sizeof(msg));
                        if (code < 0 && !host_reply_fits(hs->h, &w)) {
                                snprintf(msg, sizeof(msg), "the reply exceeds the limit of %zu "
                                         "bytes: %zu bytes with %zu of the %zu variables; ask "
                                         "get for fewer", hs->h->opts.max_reply, pw_size(&w),
                                         done + 1, n);
                                code = PROTO_E_TOO_LARGE;
                        }
                }
        }
        if (code < 0)
                host_reply_take(hs->h, c->token, c->id, &w);
        else
                host_reply_error(hs->h, c->token, c->id, (enum proto_err)code, "%s", msg);
        pw_fini(&w);
}
