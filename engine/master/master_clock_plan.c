/*
 * master_clock_plan: the master's Clocks, planned once (FMI 3.0 section
 * 2.2.8.2): per instance its time-based input Clocks from the timing
 * initialization left (init_clocks.c), its triggered input Clocks, its
 * output Clocks and the flags of its recorded Clocks; the Clock
 * connections between instances. Ticking them: master_clock.c.
 *
 * DESIGN: everything a tick uses is allocated and resolved here, so an
 * Event Mode at a tick allocates nothing and looks no Clock up by name;
 * a Clock connection becomes a pair of indices (the producer's output
 * Clock, the consumer's triggered input Clock). A periodic Clock's
 * interval and shift are refused here when a tick could never come.
 */
#include "engine/master/master_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

static bool triggered(const struct md_variable *v)
{
        return v->type == MD_CLOCK && v->causality == MD_CAUSALITY_INPUT &&
               v->attrs.clock.interval_variability == MD_INTERVAL_TRIGGERED;
}

static int plan_one(struct master *m, struct mi *mi, const struct session_clock *sc,
                    struct mclock *c)
{
        const struct md_variable *v = mclock_var(m, mi, sc->var);

        *c = (struct mclock){ .vr = sc->vr, .var = sc->var, .iv = sc->iv,
                              .supports_fraction = v->attrs.clock.supports_fraction };
        if (!mclock_periodic(sc->iv)) {
                if (sc->interval < 0)
                        return master_err(m, -EINVAL, "component '%s': Clock '%s' has first "
                                          "interval %.17g: it must be >= 0 (FMI 3.0 section "
                                          "2.2.8.2, Tables 8 and 9)", mi->name, v->name,
                                          sc->interval);
                /* A countdown Clock's NaN is "not yet known"; a changing one has an interval. */
                if (sc->iv == MD_INTERVAL_CHANGING && !isfinite(sc->interval))
                        return master_err(m, -EINVAL, "component '%s': Clock '%s' has first "
                                          "interval %.17g: it must be finite and >= 0 (FMI 3.0 "
                                          "section 2.2.8.2, Tables 8 and 9)", mi->name, v->name,
                                          sc->interval);
                mclock_from_here(c, m->t0, sc->interval);
                c->next = mclock_tick_time(m, c);
                return 0;
        }
        if (sc->fraction ? sc->interval_counter == 0
                         : !(sc->interval > 0 && isfinite(sc->interval)))
                return master_err(m, -EINVAL, "component '%s': Clock '%s' has interval %.17g: a "
                                  "periodic Clock's interval must be > 0 (FMI 3.0 section "
                                  "2.2.8.2, Table 7)", mi->name, v->name, sc->interval);
        if (!(sc->shift >= 0))
                return master_err(m, -EINVAL, "component '%s': Clock '%s' has shift %.17g: it "
                                  "must be >= 0 (FMI 3.0 section 2.2.8.2)", mi->name, v->name,
                                  sc->shift);
        c->fraction = sc->fraction;
        c->num = sc->shift_counter;
        c->res = sc->resolution;
        c->step = sc->interval_counter;
        c->base = m->t0 + sc->shift;
        c->interval = sc->interval;
        c->next = mclock_tick_time(m, c);
        return 0;
}

/* The recorded Clocks of mi: one flag each, true in the rows after it ticked. */
static int plan_ticked(struct master *m, struct mi *mi)
{
        const struct scenario *sc = m->sc;
        struct mblock *b = &mi->ticked;

        b->type = MD_CLOCK;
        for (size_t i = 0; i < sc->n_columns; i++) {
                const struct md_variable *v = mclock_var(m, mi, sc->columns[i].var);

                if (sc->columns[i].comp != mi->idx || v->type != MD_CLOCK)
                        continue;
                if (!b->vrs && (!(b->vrs = calloc(sc->n_columns, sizeof(*b->vrs))) ||
                                !(b->vals = calloc(sc->n_columns, sizeof(bool))) ||
                                !(mi->ticked_ahead = calloc(sc->n_columns, sizeof(bool)))))
                        return -ENOMEM;
                b->vrs[b->n_vars++] = v->vr;
        }
        b->n = b->n_vars;
        return 0;
}

bool mclock_column(const struct mi *mi, uint32_t vr, const struct mblock **ret_block,
                   size_t *ret_off)
{
        for (size_t i = 0; i < mi->ticked.n_vars; i++)
                if (mi->ticked.vrs[i] == vr) {
                        *ret_block = &mi->ticked;
                        *ret_off = i;
                        return true;
                }
        return false;
}

int mclock_plan(struct master *m, struct mi *mi)
{
        const struct session_inst *si = &m->s->insts[mi->idx];
        const struct md *md = m->sc->components[mi->idx].fmu->md;
        size_t no = 0, nt = 0, nbuf;
        int r;

        mi->clock_next = INFINITY;
        if (plan_ticked(m, mi) < 0)
                return -ENOMEM;
        if (!si->event_mode && (mi->n_in_step < mi->n_in || mi->n_out_step < mi->n_out))
                return master_err(m, -EINVAL, "component '%s': its clocked variables are set and "
                                  "got in Event Mode only, while their Clocks tick (FMI 3.0 "
                                  "section 2.2.8.3), and Event Mode is not used", mi->name);
        for (size_t i = 0; i < md->n_vars; i++) {
                no += md->vars[i].type == MD_CLOCK &&
                      md->vars[i].causality == MD_CAUSALITY_OUTPUT;
                nt += triggered(&md->vars[i]);
        }
        if (!si->event_mode || (si->n_clocks == 0 && no == 0 && nt == 0))
                return 0;
        nbuf = si->n_clocks + nt > no ? si->n_clocks + nt : no;
        mi->clocks = calloc(si->n_clocks + nt, sizeof(*mi->clocks));
        mi->oclock_vrs = calloc(no ? no : 1, sizeof(*mi->oclock_vrs));
        mi->oclock_ticks = calloc(no ? no : 1, sizeof(*mi->oclock_ticks));
        mi->oclock_on = calloc(no ? no : 1, sizeof(*mi->oclock_on));
        mi->clock_vrs = calloc(nbuf, sizeof(*mi->clock_vrs));
        mi->clock_buf = calloc(nbuf, sizeof(*mi->clock_buf));
        if (!mi->clocks || !mi->oclock_vrs || !mi->oclock_ticks || !mi->oclock_on ||
            !mi->clock_vrs || !mi->clock_buf)
                return -ENOMEM;
        for (size_t i = 0; i < md->n_vars; i++)
                if (md->vars[i].type == MD_CLOCK && md->vars[i].causality == MD_CAUSALITY_OUTPUT)
                        mi->oclock_vrs[mi->n_oclocks++] = md->vars[i].vr;
        for (size_t i = 0; i < si->n_clocks; i++) {
                r = plan_one(m, mi, &si->clocks[i], &mi->clocks[i]);
                if (r < 0)
                        return r;
                mi->n_clocks++;
        }
        /* Triggered input Clocks: ticked by a Clock connection, never by time. */
        for (size_t i = 0; i < md->n_vars; i++)
                if (triggered(&md->vars[i]))
                        mi->clocks[mi->n_clocks++] = (struct mclock){
                                .vr = md->vars[i].vr, .var = i, .iv = MD_INTERVAL_TRIGGERED,
                                .next = INFINITY };
        mclock_note_next(mi);
        return 0;
}

static bool find_clock(const struct mi *mi, uint32_t vr, size_t *ret)
{
        for (*ret = 0; *ret < mi->n_clocks; (*ret)++)
                if (mi->clocks[*ret].vr == vr)
                        return true;
        return false;
}

static bool find_oclock(const struct mi *mi, uint32_t vr, size_t *ret)
{
        for (*ret = 0; *ret < mi->n_oclocks; (*ret)++)
                if (mi->oclock_vrs[*ret] == vr)
                        return true;
        return false;
}

int mclock_links(struct master *m)
{
        const struct scenario *sc = m->sc;
        size_t n = 0;

        for (size_t i = 0; i < sc->n_connections; i++)
                n += sc->connections[i].from_type == MD_CLOCK && !sc->connections[i].parameter;
        if (n == 0)
                return 0;
        m->clinks = calloc(n, sizeof(*m->clinks));
        if (!m->clinks)
                return -ENOMEM;
        for (size_t i = 0; i < sc->n_connections; i++) {
                const struct scenario_connection *c = &sc->connections[i];
                const char *origin = c->origin ? c->origin : "?";
                struct mi *p = &m->mi[c->from_comp], *d = &m->mi[c->to_comp];
                struct mclink *l = &m->clinks[m->n_clinks];

                if (c->from_type != MD_CLOCK || c->parameter)
                        continue;
                if (!p->event_mode || !d->event_mode)
                        return master_err(m, -EINVAL, "connection %s: Clocks tick in Event Mode "
                                          "only (FMI 3.0 section 2.2.8.2, Table 5), and '%s' "
                                          "does not use it", origin,
                                          p->event_mode ? d->name : p->name);
                if (p->rate != 1 || d->rate != 1)
                        return master_err(m, -EINVAL, "connection %s: a Clock connection between "
                                          "components with a multirate factor is not supported",
                                          origin);
                *l = (struct mclink){ .prod = c->from_comp, .cons = c->to_comp };
                if (!find_oclock(p, mclock_var(m, p, c->from_var)->vr, &l->oclock) ||
                    !find_clock(d, mclock_var(m, d, c->to_var)->vr, &l->clock) ||
                    d->clocks[l->clock].iv != MD_INTERVAL_TRIGGERED)
                        return master_err(m, -EINVAL, "connection %s: an output Clock ticks only "
                                          "a triggered input Clock (FMI 3.0 section 2.2.8.2)",
                                          origin);
                m->n_clinks++;
        }
        return 0;
}

void mclock_free(struct mi *mi)
{
        free(mi->clocks);
        free(mi->oclock_vrs);
        free(mi->oclock_ticks);
        free(mi->oclock_on);
        free(mi->clock_vrs);
        free(mi->clock_buf);
        free(mi->ticked.vrs);
        free(mi->ticked.vals);
        free(mi->ticked_ahead);
}
