/*
 * host_reconf: a set of tunable structural parameters on a session's
 * instance, made in Reconfiguration Mode (FMI 3.0 section 2.3.7: Step
 * Mode -> fmi3EnterConfigurationMode -> set -> fmi3ExitConfigurationMode
 * -> Step Mode), at the point the session is at, like every set.
 *
 * DESIGN: a structural parameter that a Dimension names resizes arrays
 * (section 2.4.7.2), and a resize invalidates their values (section
 * 2.4.7.3). The session's data plane is laid out at load: recorded
 * columns, connections, rig ports and input file columns, and what the
 * master routes, each hold an array at the size it had then. A set that
 * would resize one of those is refused before anything is applied,
 * naming the array, both sizes and what holds it (a connection with the
 * other end's size); an array nobody holds (an unrecorded, unconnected
 * input, a local) takes the new size in get and set from then on
 * (scenario_set_structural()). The new values are put in place while the
 * set is checked, so that arrays of the same request take the new sizes,
 * and taken back if anything is refused. A fixed structural parameter is
 * set only at load; an FMU hosted through its Model Exchange or Scheduled
 * Execution interface is not reconfigured (its worker's Step Mode is the
 * worker's own).
 *
 * Threads: the session thread, between points.
 */
#include "daemon/host_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "engine/master/input_table.h"

static bool is_structural(const struct hvar *x)
{
        return x->v && x->v->causality == MD_CAUSALITY_STRUCTURAL_PARAMETER;
}

bool hreconf_any(const struct hvar *xs, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (is_structural(&xs[i]))
                        return true;
        return false;
}

/* Every parameter of rc at its old (now false) or new value in the scenario. */
static int put_values(struct hsess *hs, const struct hreconf *rc, bool now)
{
        for (size_t i = 0; i < rc->n; i++) {
                const struct hreconf_sp *p = &rc->sp[i];

                if (scenario_set_structural(hs->sc, p->comp, p->vr, now ? p->now : p->old) < 0)
                        return -ENOMEM;
        }
        return 0;
}

void hreconf_undo(struct hsess *hs, struct hreconf *rc)
{
        if (rc->installed)
                (void) put_values(hs, rc, false);       /* each entry exists: no allocation */
        rc->installed = false;
}

void hreconf_fini(struct hreconf *rc)
{
        free(rc->sp);
        free(rc->resized);
        *rc = (struct hreconf){ 0 };
}

/* x cannot be set in Reconfiguration Mode here: the reply code with msg, or -1. */
static int refusal(const struct hsess *hs, const struct hvar *x, char *msg, size_t size)
{
        const struct md *md = hs->sc->components[x->comp].fmu->md;

        if (x->v->variability != MD_VARIABILITY_TUNABLE) {
                snprintf(msg, size, "'%s' is a fixed structural parameter: only a load sets it, in "
                         "Configuration Mode before initialization (FMI 3.0 section 2.3.6): a "
                         "load's start, --start or a ParameterBinding", x->name);
                return PROTO_E_INVALID;
        }
        if (md->hosted_me || md->hosted_se) {
                snprintf(msg, size, "'%s': an FMU hosted through its %s interface is not "
                         "reconfigured while it runs", x->name,
                         md->hosted_me ? "Model Exchange" : "Scheduled Execution");
                return PROTO_E_UNSUPPORTED;
        }
        return -1;
}

/* Checked here too (the worker does), so that a value out of range is not taken for a resize. */
static int out_of_range(const struct hvar *x, char *msg, size_t size)
{
        const struct md_type_attrs *a = &x->v->attrs;
        uint64_t u = *(const uint64_t *)x->vals;

        if ((!a->has_min || u >= a->min.u) && (!a->has_max || u <= a->max.u))
                return -1;
        snprintf(msg, size, "'%s' = %llu is outside its range [%llu, %llu]", x->name,
                 (unsigned long long)u, (unsigned long long)(a->has_min ? a->min.u : 0),
                 (unsigned long long)(a->has_max ? a->max.u : UINT64_MAX));
        return PROTO_E_INVALID;
}

static int add_sp(struct hreconf *rc, const struct hsess *hs, const struct hvar *x)
{
        struct hreconf_sp *p = realloc(rc->sp, (rc->n + 1) * sizeof(*p));

        if (!p)
                return -ENOMEM;
        rc->sp = p;
        rc->sp[rc->n++] = (struct hreconf_sp){
                .comp = x->comp, .vr = x->v->vr, .now = *(const uint64_t *)x->vals,
                .old = scenario_structural(hs->sc, x->comp, x->v->vr),
        };
        return 0;
}

static bool names_dim(const struct md_variable *v, uint32_t vr)
{
        for (size_t i = 0; i < v->n_dims; i++)
                if (!v->dims[i].has_start && v->dims[i].has_vr && v->dims[i].vr == vr)
                        return true;
        return false;
}

static bool sized_by(const struct hreconf *rc, size_t comp, const struct md_variable *v)
{
        for (size_t i = 0; i < rc->n; i++)
                if (rc->sp[i].comp == comp && names_dim(v, rc->sp[i].vr))
                        return true;
        return false;
}

static const char *qname(const struct hsess *hs, size_t comp, size_t var, char *buf, size_t size)
{
        const struct scenario_component *c = &hs->sc->components[comp];

        if (hs->sc->single_fmu)
                snprintf(buf, size, "%s", c->fmu->md->vars[var].name);
        else
                snprintf(buf, size, "%s.%s", c->name, c->fmu->md->vars[var].name);
        return buf;
}

/* What holds (comp, var) at its load size, written to buf; false when nothing does. */
static bool holder(const struct hsess *hs, size_t comp, size_t var, char *buf, size_t size)
{
        const struct scenario *sc = hs->sc;
        struct master_pub pub;
        char name[256], dims[128];
        size_t cols = 0;

        for (size_t i = 0; i < sc->n_connections; i++) {
                const struct scenario_connection *cn = &sc->connections[i];
                bool from = cn->from_comp == comp && cn->from_var == var;
                size_t oc = from ? cn->to_comp : cn->from_comp;
                size_t ov = from ? cn->to_var : cn->from_var;
                uint64_t d[HVAR_MAX_DIMS];
                int nd;

                if (!from && !(cn->to_comp == comp && cn->to_var == var))
                        continue;
                nd = scenario_var_dims(sc, oc, &sc->components[oc].fmu->md->vars[ov], d, HVAR_MAX_DIMS);
                snprintf(buf, size, "the connection %s '%s' %s%s%s%s", from ? "to" : "from",
                         qname(hs, oc, ov, name, sizeof(name)),
                         scenario_dims_str(d, nd, dims, sizeof(dims)), cn->origin ? " (" : "",
                         cn->origin ? cn->origin : "", cn->origin ? ")" : "");
                return true;
        }
        for (size_t i = 0; i < sc->n_columns; i++)
                cols += sc->columns[i].comp == comp && sc->columns[i].var == var;
        if (cols) {
                snprintf(buf, size, "the results, %zu column%s", cols, cols == 1 ? "" : "s");
                return true;
        }
        /* With no column at all there is no results file to miss any. */
        for (size_t i = 0; sc->n_columns && i < sc->n_empty_recorded; i++)
                if (sc->empty_recorded[i].comp == comp && sc->empty_recorded[i].var == var) {
                        snprintf(buf, size, "the results, recorded with no elements and so "
                                 "with no column");
                        return true;
                }
        for (size_t i = 0; i < sc->rig.n_in + sc->rig.n_out; i++) {
                const struct scenario_rig_port *p = i < sc->rig.n_in ? &sc->rig.in[i] :
                                                    &sc->rig.out[i - sc->rig.n_in];

                if (p->comp == comp && p->var == var) {
                        snprintf(buf, size, "the rig port '%s'", p->name);
                        return true;
                }
        }
        for (size_t i = 0; hs->inputs && i < hs->inputs->n_cols; i++)
                if (hs->inputs->cols[i].comp == comp && hs->inputs->cols[i].var == var) {
                        snprintf(buf, size, "the input file's column '%s'", hs->inputs->cols[i].name);
                        return true;
                }
        if (hs->m && master_published(hs->m, comp, var, &pub) == 0) {
                snprintf(buf, size, "the master's routing");
                return true;
        }
        return false;
}

/*
 * Compare every array of rc's components that rc's parameters size, at the
 * old and new values; refuse a resize of one the session holds. Leaves the
 * new values in place.
 */
static int check_resizes(struct hsess *hs, struct hreconf *rc, char *msg, size_t size)
{
        for (size_t i = 0; i < rc->n; i++) {
                size_t comp = rc->sp[i].comp;
                const struct md *md = hs->sc->components[comp].fmu->md;
                bool seen = false;

                for (size_t j = 0; j < i && !seen; j++)
                        seen = rc->sp[j].comp == comp;
                for (size_t var = 0; var < md->n_vars && !seen; var++) {
                        const struct md_variable *v = &md->vars[var];
                        uint64_t a[HVAR_MAX_DIMS], b[HVAR_MAX_DIMS], e;
                        char sa[128], sb[128], who[512], name[256];
                        int na, nb;
                        void *p;

                        if (!v->n_dims || !sized_by(rc, comp, v))
                                continue;
                        if (put_values(hs, rc, false) < 0)
                                goto nomem;
                        na = scenario_var_dims(hs->sc, comp, v, a, HVAR_MAX_DIMS);
                        if (put_values(hs, rc, true) < 0)
                                goto nomem;
                        nb = scenario_var_dims(hs->sc, comp, v, b, HVAR_MAX_DIMS);
                        e = scenario_var_elements(hs->sc, comp, v);
                        if (nb < 0 || e == SCENARIO_NO_SIZE || e > HVAR_MAX_ELEMENTS) {
                                snprintf(msg, size, "the structural parameters set would give '%s' "
                                         "no size fmud serves (at most %u elements)",
                                         qname(hs, comp, var, name, sizeof(name)),
                                         HVAR_MAX_ELEMENTS);
                                return PROTO_E_INVALID;
                        }
                        if (na == nb && !memcmp(a, b, (size_t)nb * sizeof(*a)))
                                continue;
                        if (holder(hs, comp, var, who, sizeof(who))) {
                                snprintf(msg, size, "the structural parameters set would resize "
                                         "'%s' from %s to %s, which the session holds at the size "
                                         "it had at load (%s): a session's layout is fixed "
                                         "once loaded; set the parameter at load instead",
                                         qname(hs, comp, var, name, sizeof(name)),
                                         scenario_dims_str(a, na, sa, sizeof(sa)),
                                         scenario_dims_str(b, nb, sb, sizeof(sb)), who);
                                return PROTO_E_INVALID;
                        }
                        p = realloc(rc->resized, (rc->n_resized + 1) * sizeof(*rc->resized));
                        if (!p)
                                goto nomem;
                        rc->resized = p;
                        rc->resized[rc->n_resized].comp = comp;
                        rc->resized[rc->n_resized++].var = var;
                }
        }
        if (put_values(hs, rc, true) == 0)
                return -1;
nomem:
        snprintf(msg, size, "out of memory");
        return PROTO_E_INTERNAL;
}

int hreconf_plan(struct hsess *hs, const struct hvar *xs, size_t n, struct hreconf *rc,
                 char *msg, size_t size)
{
        int code = -1;

        *rc = (struct hreconf){ 0 };
        for (size_t i = 0; i < n && code < 0; i++) {
                if (!is_structural(&xs[i]))
                        continue;
                code = refusal(hs, &xs[i], msg, size);
                if (code < 0 && xs[i].ct == MD_UINT64 && !xs[i].array)
                        code = out_of_range(&xs[i], msg, size);
                if (code < 0 && xs[i].ct == MD_UINT64 && !xs[i].array && add_sp(rc, hs, &xs[i]) < 0) {
                        snprintf(msg, size, "out of memory");
                        code = PROTO_E_INTERNAL;
                }
        }
        if (code >= 0 || !rc->n)
                return code;
        rc->installed = true;
        code = check_resizes(hs, rc, msg, size);
        if (code >= 0)
                hreconf_undo(hs, rc);
        return code;
}

/* The call's failure as a reply: the worker's reason, else the status. */
static int failed(const struct hsess *hs, size_t comp, struct inst *inst, int r, const char *fn,
                  char *msg, size_t size)
{
        const char *why = inst_message(inst);

        snprintf(msg, size, "instance '%s': %s %s%s%s", hs->sc->components[comp].name, fn,
                 r < 0 ? "failed" : "returned ",
                 r < 0 ? "" : r <= INST_FATAL ? proto_log_status_name((uint32_t)r) :
                 "an unknown status",
                 why[0] || r < 0 ? ": " : "");
        if (why[0] || r < 0)
                snprintf(msg + strlen(msg), size - strlen(msg), "%s", why[0] ? why : strerror(-r));
        return r == -EACCES || r == -EPERM ? PROTO_E_STATE :
               r == -EINVAL || r == -ERANGE || r == -EPROTOTYPE ? PROTO_E_INVALID : PROTO_E_FAULT;
}

static bool ok(int r)
{
        return r == INST_OK || r == INST_WARNING;
}

static void mark_done(struct hreconf *rc, const struct hvar *x)
{
        for (size_t k = 0; k < rc->n; k++)
                rc->sp[k].done |= rc->sp[k].comp == x->comp && rc->sp[k].vr == x->v->vr;
}

/*
 * Reconfigure component comp with the structural parameters of xs that are
 * its own, marking each one set done (its instance holds it, also when a
 * later one fails).
 */
static int apply_comp(struct hsess *hs, const struct hvar *xs, size_t n, size_t comp,
                      struct hreconf *rc, bool *ret_set, char *msg, size_t size)
{
        struct inst *inst = session_inst(hs->s, comp);
        int r = inst_enter_configuration_mode(inst), code = -1;

        if (!ok(r))
                return failed(hs, comp, inst, r, "fmi3EnterConfigurationMode", msg, size);
        for (size_t i = 0; i < n && code < 0; i++) {
                const struct hvar *x = &xs[i];

                if (x->comp != comp || !is_structural(x))
                        continue;
                r = hvar_apply(x);
                if (!ok(r)) {
                        code = failed(hs, comp, inst, r, "set", msg, size);
                } else {
                        mark_done(rc, x);
                        *ret_set = true;
                }
        }
        /* Back to Step Mode also after a refused set: the parameters keep their values. */
        r = inst_exit_configuration_mode(inst);
        if (!ok(r) && code < 0)
                code = failed(hs, comp, inst, r, "fmi3ExitConfigurationMode", msg, size);
        return code;
}

static void log_reconfigured(struct hsess *hs, const struct hreconf *rc, size_t comp)
{
        hlog_line(hs, LOG_NOTICE, "instance '%s' reconfigured at t = %.15g",
                  hs->sc->components[comp].name,
                  hs->m ? master_time(hs->m) : hs->sc->experiment.start);
        for (size_t i = 0; i < rc->n_resized; i++) {
                const struct scenario_component *c = &hs->sc->components[comp];
                uint64_t d[HVAR_MAX_DIMS];
                char name[256], dims[128];
                int nd;

                if (rc->resized[i].comp != comp)
                        continue;
                nd = scenario_var_dims(hs->sc, comp, &c->fmu->md->vars[rc->resized[i].var], d,
                                       HVAR_MAX_DIMS);
                hlog_line(hs, LOG_NOTICE, "reconfigured: '%s' is %s",
                          qname(hs, comp, rc->resized[i].var, name, sizeof(name)),
                          scenario_dims_str(d, nd, dims, sizeof(dims)));
        }
}

int hreconf_apply(struct hsess *hs, const struct hvar *xs, size_t n, struct hreconf *rc,
                  char *msg, size_t size)
{
        char before[256] = "";
        size_t kept = 0, at = 0;
        int code = -1;

        for (size_t i = 0; i < n && code < 0; i++) {
                bool first = is_structural(&xs[i]), set = false;
                const char *name = hs->sc->components[xs[i].comp].name;

                for (size_t j = 0; j < i && first; j++)
                        first = !(is_structural(&xs[j]) && xs[j].comp == xs[i].comp);
                if (!first)
                        continue;
                code = apply_comp(hs, xs, n, xs[i].comp, rc, &set, msg, size);
                if (set || code < 0)
                        log_reconfigured(hs, rc, xs[i].comp);
                if (code < 0 && at < sizeof(before))
                        at += (size_t)snprintf(before + at, sizeof(before) - at, "%s'%s'",
                                               at ? ", " : "", name);
        }
        /* Say what was done before the failure: those instances keep their new values. */
        if (code >= 0 && before[0] && strlen(msg) < size)
                snprintf(msg + strlen(msg), size - strlen(msg), " (reconfigured before it, and "
                         "kept so: %s)", before);
        /* The parameters set keep their new sizes, the others their old ones. */
        for (size_t k = 0; k < rc->n; k++)
                if (!rc->sp[k].done)
                        (void) scenario_set_structural(hs->sc, rc->sp[k].comp, rc->sp[k].vr,
                                                       rc->sp[k].old);
        for (size_t i = 0; i < rc->n_resized; i++) {
                bool done = false;

                for (size_t k = 0; k < rc->n && !done; k++)
                        done = rc->sp[k].done && rc->sp[k].comp == rc->resized[i].comp;
                if (done)
                        rc->resized[kept++] = rc->resized[i];
        }
        rc->n_resized = kept;
        rc->installed = false;
        return code;
}

bool hreconf_done(const struct hreconf *rc, const struct hvar *x)
{
        for (size_t k = 0; k < rc->n; k++)
                if (rc->sp[k].comp == x->comp && rc->sp[k].vr == x->v->vr)
                        return rc->sp[k].done;
        return false;
}

void hreconf_refresh(struct hsess *hs)
{
        if (!hs->s)
                return;
        for (size_t comp = 0; comp < hs->sc->n_components; comp++) {
                const struct md *md = hs->sc->components[comp].fmu->md;
                struct inst *inst = session_inst(hs->s, comp);

                for (size_t var = 0; var < md->n_vars; var++) {
                        const struct md_variable *v = &md->vars[var];
                        uint64_t value;

                        if (v->causality != MD_CAUSALITY_STRUCTURAL_PARAMETER ||
                            v->variability != MD_VARIABILITY_TUNABLE || v->type != MD_UINT64 ||
                            v->n_dims)
                                continue;
                        /* Unreadable: the sizes stay; get and set then say what the worker counts. */
                        if (ok(inst_get(inst, MD_UINT64, &v->vr, 1, &value, 1)))
                                (void) scenario_set_structural(hs->sc, comp, v->vr, value);
                }
        }
}
