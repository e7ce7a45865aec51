/*
 * init: the sequence that takes a session's instances from Instantiated to
 * Step Mode (see init.h): start values, Initialization Mode, connected
 * inputs (init_inputs.c), exit, the event iteration where Event Mode is
 * used.
 *
 * DESIGN: every instance passes each stage before any instance starts the
 * next one, because connected inputs are resolved across instances while
 * all of them are in Initialization Mode.
 */
#include "engine/master/init.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/master/input_table.h"
#include "engine/master/master_value.h"

static const char *cname(const struct session *s, const struct session_inst *si)
{
        return s->sc->components[si->comp].name;
}

static int call_failed(struct session *s, struct session_inst *si, int r, const char *fn)
{
        return session_logs(s, si, session_err(s, session_call_result(si, r),
                            "component '%s': %s%s returned %s: %s", cname(s, si),
                            session_fmi_prefix(si), fn,
                            r >= 0 ? session_status_name(r) : strerror(-r),
                            inst_message(si->inst)));
}

static bool ok(int r)
{
        return r == INST_OK || r == INST_WARNING;
}

int init_set_start(struct session *s, struct session_inst *si, const struct md_variable *v,
                   const struct md_values *value, const char *origin)
{
        enum md_type t = mv_call_type(v->type, si->fmi);
        uint64_t n = scenario_var_elements(s->sc, si->comp, v);
        size_t *sizes = NULL;
        void *buf;
        int r;

        if (v->type == MD_CLOCK)
                return session_err(s, -EINVAL, "component '%s': '%s' (%s) is a Clock: start values "
                                   "of Clocks are not supported", cname(s, si), v->name, origin);
        if (n == SCENARIO_NO_SIZE || n > SIZE_MAX / 8)
                return session_err(s, -EINVAL, "component '%s': '%s' has no resolvable size",
                                   cname(s, si), v->name);
        /* An array sized 0 (FMI 3.0 section 2.4.7.2): no element to set. */
        if (n == 0)
                return 0;
        buf = calloc((size_t)n, mv_size(t));
        if (t == MD_BINARY)
                sizes = calloc((size_t)n, sizeof(*sizes));
        if (!buf || (t == MD_BINARY && !sizes)) {
                free(buf);
                return session_err(s, -ENOMEM, "out of memory");
        }
        r = mv_from_md(t, value, n, buf, sizes);
        if (r < 0) {
                r = session_err(s, r, "component '%s': the start value of '%s' (%s) has %zu "
                                "values, not 1 or %llu", cname(s, si), v->name, origin, value->n,
                                (unsigned long long)n);
                goto out;
        }
        if (t == MD_BINARY)
                r = inst_set_binary(si->inst, &v->vr, 1, sizes, buf, (size_t)n);
        else
                r = inst_set(si->inst, t, &v->vr, 1, buf, (size_t)n);
        if (!ok(r))
                r = session_logs(s, si, session_err(s, session_call_result(si, r),
                                 "component '%s': setting '%s' (%s) failed: %s", cname(s, si),
                                 v->name, origin,
                                 session_call_why(si, r)));
        else
                r = 0;
out:
        free(buf);
        free(sizes);
        return r;
}

/*
 * Whether a start waits for Initialization Mode: a clocked variable may be
 * set only there and in Event Mode (FMI 3.0 section 2.2.7.2).
 */
static bool start_in_init(const struct session_inst *si, const struct md_variable *v)
{
        return si->fmi == 3 && v->n_clocks > 0;
}

/* The starts set in Initialization Mode (start_in_init()), once the instance is in it. */
static int set_init_starts(struct session *s, struct session_inst *si)
{
        const struct scenario_component *c = &s->sc->components[si->comp];
        const struct md *md = c->fmu->md;
        int r;

        for (size_t i = 0; i < c->n_starts; i++) {
                const struct md_variable *v = &md->vars[c->starts[i].var];

                if (!start_in_init(si, v))
                        continue;
                r = init_set_start(s, si, v, &c->starts[i].value, c->starts[i].origin);
                if (r < 0)
                        return r;
        }
        return 0;
}

/*
 * The scenario's starts of one instance in Instantiated; structural
 * parameters first, in Configuration Mode.
 */
static int set_starts(struct session *s, struct session_inst *si)
{
        const struct scenario_component *c = &s->sc->components[si->comp];
        const struct md *md = c->fmu->md;
        bool structural = false;
        int r;

        for (size_t i = 0; i < c->n_starts; i++)
                structural |= md->vars[c->starts[i].var].causality ==
                              MD_CAUSALITY_STRUCTURAL_PARAMETER;
        if (structural && si->fmi == 3) {
                r = inst_enter_configuration_mode(si->inst);
                if (!ok(r))
                        return call_failed(s, si, r, "EnterConfigurationMode");
                for (size_t i = 0; i < c->n_starts; i++) {
                        const struct md_variable *v = &md->vars[c->starts[i].var];

                        if (v->causality != MD_CAUSALITY_STRUCTURAL_PARAMETER)
                                continue;
                        r = init_set_start(s, si, v, &c->starts[i].value, c->starts[i].origin);
                        if (r < 0)
                                return r;
                }
                r = inst_exit_configuration_mode(si->inst);
                if (!ok(r))
                        return call_failed(s, si, r, "ExitConfigurationMode");
        }
        for (size_t i = 0; i < c->n_starts; i++) {
                const struct md_variable *v = &md->vars[c->starts[i].var];

                if ((v->causality == MD_CAUSALITY_STRUCTURAL_PARAMETER && si->fmi == 3) ||
                    start_in_init(si, v))
                        continue;
                r = init_set_start(s, si, v, &c->starts[i].value, c->starts[i].origin);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The experiment with the component's tolerance (scenario.h; FMI 3.0 section 2.3.2). */
static int enter(struct session *s, struct session_inst *si)
{
        const struct scenario_experiment *e = &s->sc->experiment;
        const struct scenario_component *c = &s->sc->components[si->comp];
        struct inst_experiment x = {
                .tolerance_defined = c->tolerance_defined,
                .tolerance = c->tolerance_defined ? c->tolerance : 0,
                .start_time = e->start,
                .stop_time_defined = isfinite(e->stop),
                .stop_time = scenario_stop_for(s->sc, si->comp),
                .grid_step = e->step,
        };
        int r;

        if (si->fmi == 2) {
                r = inst_setup_experiment(si->inst, &x);
                if (!ok(r))
                        return call_failed(s, si, r, "SetupExperiment");
                r = inst_enter_initialization_mode(si->inst, NULL);
        } else {
                r = inst_enter_initialization_mode(si->inst, &x);
        }
        if (!ok(r))
                return call_failed(s, si, r, "EnterInitializationMode");
        return 0;
}

static bool has_output_clocks(const struct session *s, const struct session_inst *si)
{
        const struct md *md = s->sc->components[si->comp].fmu->md;

        for (size_t i = 0; i < md->n_vars; i++)
                if (md->vars[i].type == MD_CLOCK && md->vars[i].causality == MD_CAUSALITY_OUTPUT)
                        return true;
        return false;
}

/*
 * Leave Initialization Mode; with Event Mode used, iterate the events and
 * enter Step Mode, except where output Clocks may tick in that Event Mode:
 * the master polls them there (session_in_init_event()).
 */
static int leave(struct session *s, struct session_inst *si)
{
        bool terminate;
        double next;
        int r;

        r = si->fmi == 3 ? init_clocks_read(s, si) : 0;
        if (r < 0)
                return r;
        r = inst_exit_initialization(si->inst, &terminate);
        if (!ok(r))
                return call_failed(s, si, r, "ExitInitializationMode");
        si->initialized = true;
        if (si->event_mode && !terminate && si->fmi == 3 && has_output_clocks(s, si)) {
                si->init_event = true;
                return 0;
        }
        if (si->event_mode && !terminate) {
                r = session_event_update(s, si->comp, s->sc->experiment.start, 0, NULL, NULL,
                                         &terminate, &next);
                if (r == 0 && !terminate && si->fmi == 3)
                        r = init_clocks_after_event(s, si);
                if (r == 0 && !terminate)
                        r = session_enter_step_mode(s, si->comp);
                if (r < 0)
                        return r;
                si->next_event_time = next;
        }
        if (terminate && !s->terminate_requested) {
                s->terminate_requested = true;
                s->terminate_comp = si->comp;
        }
        return 0;
}

static bool fed(const struct scenario *sc, size_t comp, size_t var)
{
        /* Connections are sorted by (to_comp, to_var): O(log connections). */
        size_t lo = 0, hi = sc->n_connections;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const struct scenario_connection *c = &sc->connections[mid];

                if (c->to_comp < comp || (c->to_comp == comp && c->to_var < var))
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < sc->n_connections && sc->connections[lo].to_comp == comp &&
               sc->connections[lo].to_var == var;
}

static bool started(const struct scenario_component *c, size_t var)
{
        for (size_t i = 0; i < c->n_starts; i++)
                if (c->starts[i].var == var)
                        return true;
        return false;
}

int init_check_inputs(struct session *s)
{
        const struct scenario *sc = s->sc;
        size_t missing = 0, len = 0;
        char list[SESSION_MSG_MAX / 2] = "";

        for (size_t c = 0; c < sc->n_components; c++) {
                const struct md *md = sc->components[c].fmu->md;

                for (size_t v = 0; v < md->n_vars; v++) {
                        const struct md_variable *var = &md->vars[v];
                        int w;

                        if (var->causality != MD_CAUSALITY_INPUT || var->type == MD_CLOCK ||
                            var->has_start || fed(sc, c, v) || started(&sc->components[c], v) ||
                            input_table_drives(s->opts.inputs, c, v))
                                continue;
                        if (missing++ < 8 && len < sizeof(list)) {
                                w = snprintf(list + len, sizeof(list) - len, "%s'%s.%s'",
                                             len ? ", " : "", sc->components[c].name, var->name);
                                if (w > 0)
                                        len += (size_t)w;
                        }
                }
        }
        if (!missing)
                return 0;
        return session_err(s, -EINVAL, "%zu input%s without a value (no connection, no start "
                           "value in the scenario or its FMU): %s%s", missing,
                           missing == 1 ? "" : "s", list, missing > 8 ? ", ..." : "");
}

static int init_all(struct session *s)
{
        int r;

        r = init_check_inputs(s);
        if (r < 0)
                return r;
        for (size_t i = 0; i < s->n; i++) {
                r = set_starts(s, &s->insts[i]);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < s->n; i++) {
                r = enter(s, &s->insts[i]);
                if (r == 0)
                        r = set_init_starts(s, &s->insts[i]);
                if (r < 0)
                        return r;
        }
        r = init_file_inputs(s);
        if (r < 0)
                return r;
        r = init_inputs(s);
        if (r < 0)
                return r;
        for (size_t i = 0; i < s->n; i++) {
                r = leave(s, &s->insts[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Every call up to the end of Initialization Mode has the initialization's deadline. */
int init_system(struct session *s)
{
        int r;

        for (size_t i = 0; i < s->n; i++)
                session_init_deadline(s, &s->insts[i], true);
        r = init_all(s);
        for (size_t i = 0; i < s->n; i++)
                session_init_deadline(s, &s->insts[i], false);
        return r;
}
