/*
 * session: spawn and instantiate one worker per component, initialize
 * them together (init.h), and tear everything down again (see session.h).
 *
 * DESIGN: instantiation decides once what each instance may do during
 * the run (Event Mode, early return, intermediate update); the master
 * reads those decisions back and never changes them. Every worker is
 * started before any is waited for, so their start-ups overlap; a failure
 * is reported for the component that caused it, the first one waited
 * for that failed, and the workers not ready by then are killed.
 */
#include "engine/master/session_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/master/init.h"
#include "worker/call.h"

void session_opts_default(struct session_opts *o)
{
        *o = (struct session_opts){ .logging_on = true };
        wait_policy_init(&o->wait, WAIT_ADAPTIVE);
}

/*
 * With loggingOn false an FMU must not log at all, not even why it failed
 * (FMI 3.0 section 2.3.1); with true it logs in all its categories, debug
 * chatter included (FMUSDK-style exports log every FMI call). So: the
 * categories that carry the reasons of statuses other than OK are turned
 * on, and only those: the standard logStatus* ones (section 2.4.5; FMI 2.0
 * names them alike), or, in an FMU without them, those whose names say
 * error, warning, fatal or discard (FMUSDK's logError). Their names into
 * on[] (at most LOG_ON_MAX); how many. An FMU that declares no categories
 * at all cannot be narrowed: it gets loggingOn true. Nor can one whose
 * categories name no status (logAll, logVerbose): it gets loggingOn true
 * too, and its worker keeps only its messages of a status other than OK
 * (inst_instantiate.quiet_ok), the reasons, so that its failures say why.
 */
#define LOG_ON_MAX      8

static bool says_status(const char *name)
{
        static const char *const words[] = { "error", "warning", "fatal", "discard" };

        for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
                if (strcasestr(name, words[i]))
                        return true;
        return false;
}

static size_t status_categories(const struct md *md, const char *on[LOG_ON_MAX])
{
        size_t n = 0;

        for (size_t k = 0; k < md->n_log_categories && n < LOG_ON_MAX; k++) {
                const char *name = md->log_categories[k].name;

                if (name && !strncmp(name, "logStatus", 9))
                        on[n++] = name;
        }
        for (size_t k = 0; !n && k < md->n_log_categories; k++) {
                const char *name = md->log_categories[k].name;

                if (name && says_status(name) && n < LOG_ON_MAX)
                        on[n++] = name;
        }
        return n;
}

/*
 * Turn on the status categories of an FMU instantiated with loggingOn
 * false. A refusal must not cost the session: an FMU whose
 * fmi3SetDebugLogging fails is reset to Instantiated (section 2.3.1:
 * fmi3Reset from any state) and runs without logging, as it did before.
 */
static void status_logging(struct session *s, struct session_inst *si)
{
        const char *on[LOG_ON_MAX];
        size_t n = status_categories(s->sc->components[si->comp].fmu->md, on);
        int r;

        if (!n)
                return;
        r = inst_set_debug_logging(si->inst, true, on, n);
        if (r >= INST_ERROR && r != INST_PENDING)
                (void) inst_reset(si->inst);
}

int session_err(struct session *s, int err, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(s->msg, sizeof(s->msg), fmt, ap);
        va_end(ap);
        return err;
}

int session_logs(struct session *s, const struct session_inst *si, int err)
{
        size_t len = strlen(s->msg);
        char logs[SESSION_MSG_MAX / 2];

        if (si->inst && inst_recent_logs(si->inst, s->msg, logs, sizeof(logs)) &&
            len < sizeof(s->msg))
                snprintf(s->msg + len, sizeof(s->msg) - len, "; the FMU's last messages: %s",
                         logs);
        return err;
}

const char *session_status_name(int status)
{
        static const char *const names[] = { "OK", "Warning", "Discard", "Error", "Fatal",
                                             "Pending" };

        return status >= 0 && status <= INST_PENDING ? names[status] : "?";
}

const char *session_call_why(const struct session_inst *si, int r)
{
        const char *m;

        if (r >= 0)
                return session_status_name(r);
        /* Refused before it was sent: the call's own message is an older call's. */
        if (r == -EMSGSIZE)
                return "its values are larger than one call to a worker carries (16 MiB)";
        _Static_assert(INST_SIDE_DEFAULT == 16ull << 20, "the message above names the size");
        m = inst_message(si->inst);
        return m && *m ? m : strerror(-r);
}

const char *session_fmi_prefix(const struct session_inst *si)
{
        return si->fmi == 2 ? "fmi2" : "fmi3";
}

int session_call_result(struct session_inst *si, int r)
{
        if (r == INST_OK || r == INST_WARNING)
                return 0;
        if (r >= 0 || inst_fault(si->inst))
                si->failed = true;
        return r >= 0 ? -EIO : r;
}

static void on_log(void *ctx, struct inst *inst, int status, const char *category,
                   const char *message)
{
        struct session_inst *si = ctx;
        struct session *s = si->s;

        (void) inst;
        if (s->opts.log)
                s->opts.log(s->opts.log_ctx, si->comp, s->sc->components[si->comp].name, status,
                            category, message);
}

static void on_iu(void *ctx, struct inst *inst, const struct inst_iu *iu, bool *ret_early_return,
                  double *ret_time)
{
        struct session_inst *si = ctx;
        struct session *s = si->s;

        if (s->iu)
                s->iu(s->iu_ctx, si->comp, inst, iu, ret_early_return, ret_time);
}

static int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

        return x < y ? -1 : x > y;
}

static bool is_iu_input(const struct md_variable *v)
{
        return v->causality == MD_CAUSALITY_INPUT && v->intermediate_update &&
               v->variability == MD_VARIABILITY_CONTINUOUS && md_type_is_float(v->type);
}

/* requiredIntermediateVariables: connected intermediate inputs, recorded intermediate outputs. */
static int required_vars(struct session *s, struct session_inst *si)
{
        const struct scenario *sc = s->sc;
        const struct md *md = sc->components[si->comp].fmu->md;
        size_t n = 0, cap = sc->n_connections + sc->n_columns;
        uint32_t *v = malloc((cap ? cap : 1) * sizeof(*v));

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < sc->n_connections; i++) {
                const struct scenario_connection *c = &sc->connections[i];

                if (c->to_comp == si->comp && !c->parameter && c->elements &&
                    is_iu_input(&md->vars[c->to_var]))
                        v[n++] = md->vars[c->to_var].vr;
        }
        for (size_t i = 0; s->opts.record_intermediate && i < sc->n_columns; i++) {
                const struct md_variable *var = &md->vars[sc->columns[i].var];

                if (sc->columns[i].comp == si->comp && var->intermediate_update &&
                    var->causality == MD_CAUSALITY_OUTPUT)
                        v[n++] = var->vr;
        }
        qsort(v, n, sizeof(*v), cmp_u32);
        si->n_required = 0;
        for (size_t i = 0; i < n; i++)
                if (i == 0 || v[i] != v[i - 1])
                        v[si->n_required++] = v[i];
        si->required = v;
        return 0;
}

/*
 * Whether component comp's early returns can be met (FMI 3.0 section 4.2.1:
 * the importer decides earlyReturnAllowed). Every other instance may have
 * stepped at the same time (Jacobi, and the first stage of Gauss-Seidel,
 * whose stages the master plans later), so each must be able to go back to
 * the point (canGetAndSetFMUState), but for one whose step is fixed, which
 * goes on to its own next point instead (master_meet.c); and the FMU
 * itself must be able to go on from an off-grid point (not fixed-step).
 * Where one cannot, the FMU is told to finish its steps, as an importer
 * that cannot handle early returns does.
 */
static bool early_return_met(const struct session *s, size_t comp)
{
        const struct scenario *sc = s->sc;

        if (!sc->components[comp].fmu->md->cs.can_handle_variable_communication_step_size)
                return false;
        for (size_t i = 0; i < sc->n_components; i++) {
                const struct md_cosim *cs = &sc->components[i].fmu->md->cs;

                if (i != comp && !cs->can_get_and_set_fmu_state &&
                    cs->can_handle_variable_communication_step_size)
                        return false;
        }
        return true;
}

/* What a component's worker will do, decided and checked before any worker starts. */
static int prepare(struct session *s, struct session_inst *si)
{
        const struct scenario_component *c = &s->sc->components[si->comp];
        const struct md *md = c->fmu->md;
        int r;

        si->s = s;
        si->next_event_time = INFINITY;
        si->fmi = md->fmi == MD_FMI2 ? 2 : 3;
        si->event_mode = si->fmi == 3 && md->cs.has_event_mode && !s->opts.no_event_mode;
        si->early_return = si->fmi == 3 && md->cs.might_return_early_from_do_step &&
                           !s->opts.no_early_return && early_return_met(s, si->comp);
        /* Its events end its steps for the master's Event Mode (md_host_me()). */
        if (md->hosted_me && md->cs.might_return_early_from_do_step && !si->early_return)
                return session_err(s, -ENOTSUP, "component '%s': a Model Exchange FMU with Clocks "
                                   "ends its steps at its events, which needs earlyReturnAllowed: "
                                   "%s", c->name, s->opts.no_early_return ? "the session turns "
                                   "early return off" : "another component can vary its step "
                                   "but cannot restore its state (canGetAndSetFMUState = false)");
        r = init_clocks_check(s, si);
        if (r < 0)
                return r;
        r = required_vars(s, si);
        if (r < 0)
                return session_err(s, r, "out of memory");
        si->iu = si->fmi == 3 && md->cs.provides_intermediate_update &&
                 (si->n_required > 0 || s->opts.iu_always);
        if (!c->fmu->unpacked_dir)
                return session_err(s, -EINVAL, "component '%s': its FMU '%s' is not unpacked",
                                   c->name, c->source ? c->source : "?");
        return 0;
}

/*
 * What an FMU that declares needsExecutionTool (FMI 3.0 section 2.4.1,
 * FMI 2.0 section 2.2.1) needs, said where it failed to load or to
 * instantiate, which is where such an FMU fails without its tool; "" for
 * any other FMU.
 */
static const char *tool_hint(const struct session *s, const struct md *md, char *buf,
                             size_t size)
{
        if (!md->cs.needs_execution_tool)
                return "";
        snprintf(buf, size, " (the FMU declares needsExecutionTool = true: it runs only where the "
                 "tool it was exported from%s%s%s is installed, and licensed, for the worker%s)",
                 md->generation_tool ? ", '" : "", md->generation_tool ? md->generation_tool : "",
                 md->generation_tool ? "'," : "", s->opts.sandbox.mode != SANDBOX_OFF ?
                 "; a sandboxed worker starts no other program and reaches no other process: "
                 "such an FMU needs --sandbox off" : "");
        return buf;
}

/* A worker that did not start (inst_spawn() or inst_ready() failed with r): said, freed. */
static int start_failed(struct session *s, struct session_inst *si, int r, char *why)
{
        const struct scenario_component *c = &s->sc->components[si->comp];
        char hint[480];

        si->inst = NULL;
        session_err(s, r, "component '%s': cannot start its worker: %s%s", c->name,
                    why ? why : strerror(-r), tool_hint(s, c->fmu->md, hint, sizeof(hint)));
        free(why);
        return r;
}

static int spawn(struct session *s, struct session_inst *si)
{
        const struct scenario_component *c = &s->sc->components[si->comp];
        const struct md *md = c->fmu->md;
        struct inst_opts o;
        char *why = NULL;
        int r;

        inst_opts_default(&o);
        o.worker_path = s->worker_path;
        o.fmu_dir = c->fmu->unpacked_dir;
        o.name = c->name;
        o.timeout_ns = s->opts.timeout_ns;
        /*
         * The worker parses modelDescription.xml before it answers: a large
         * one (500,000 variables, 100 MB) takes longer than the start-up's
         * usual deadline, so it grows by a second per 5,000 variables.
         */
        o.start_timeout_ns = (s->opts.start_timeout_ns ? s->opts.start_timeout_ns :
                              INST_TIMEOUT_DEFAULT) + (uint64_t)(md->n_vars / 5000) * 1000000000ull;
        o.envp = s->opts.envp;
        o.sandbox = s->opts.sandbox;
        o.mlock = s->opts.mlock;
        o.mlock_limit = s->opts.mlock_limit;
        o.cancel = s->opts.cancel;
        o.model_exchange = md->hosted_me;
        o.scheduled_execution = md->hosted_se;
        o.integrator = md->hosted_me ? fmu_integrator_name(c->fmu->integrator) : NULL;
        o.wait = s->opts.wait;
        o.log = on_log;
        o.log_ctx = si;
        if (si->iu) {
                o.iu = on_iu;
                o.iu_ctx = si;
        }
        r = inst_spawn(&o, &si->inst, &why);
        return r < 0 ? start_failed(s, si, r, why) : 0;
}

/* Wait for a spawned worker's HELLO. */
static int ready(struct session *s, struct session_inst *si)
{
        const struct scenario_component *c = &s->sc->components[si->comp];
        char *why = NULL;
        int r = inst_ready(si->inst, &why);

        if (r < 0)
                return start_failed(s, si, r, why);
        if (s->opts.worker)
                s->opts.worker(s->opts.worker_ctx, &(struct session_worker_info){
                        .ev = SESSION_WORKER_STARTED, .comp = si->comp, .name = c->name,
                        .pid = inst_pid(si->inst), .layers = inst_sandbox(si->inst) });
        return 0;
}

void session_init_deadline(const struct session *s, struct session_inst *si, bool on)
{
        uint64_t t = s->opts.timeout_ns ? s->opts.timeout_ns : INST_TIMEOUT_DEFAULT;

        if (si->inst)
                inst_set_timeout(si->inst, on && t < INST_INIT_TIMEOUT_MIN ? INST_INIT_TIMEOUT_MIN :
                                 t);
}

static int instantiate(struct session *s, struct session_inst *si)
{
        const struct scenario_component *c = &s->sc->components[si->comp];
        const char *on[LOG_ON_MAX];
        bool narrow = c->fmu->md->n_log_categories && status_categories(c->fmu->md, on);
        struct inst_instantiate a = {
                .name = c->name,
                /* Narrowed after it where the FMU declares status categories (status_logging()). */
                .logging_on = s->opts.logging_on && !narrow,
                .quiet_ok = s->opts.logging_on && c->fmu->md->n_log_categories && !narrow,
                .event_mode_used = si->event_mode,
                .early_return_allowed = si->early_return,
                .required = si->n_required ? si->required : NULL,
                .n_required = si->iu ? si->n_required : 0,
        };
        const struct md *md = c->fmu->md;
        char hint[480];
        int r;

        session_init_deadline(s, si, true);
        r = inst_instantiate(si->inst, &a);
        session_init_deadline(s, si, false);

        if (r != INST_OK && r != INST_WARNING)
                return session_logs(s, si, session_err(s, session_call_result(si, r),
                                   "component '%s': %sInstantiate%s returned %s: %s%s", c->name,
                                   session_fmi_prefix(si), si->fmi == 2 ? "" : md->hosted_me ?
                                   "ModelExchange" : md->hosted_se ? "ScheduledExecution" :
                                   "CoSimulation", r >= 0 ? session_status_name(r) : strerror(-r),
                                   inst_message(si->inst), tool_hint(s, md, hint, sizeof(hint))));
        si->instantiated = true;
        if (s->opts.logging_on)
                status_logging(s, si);
        return 0;
}

static void fail_message(struct session *s, char **ret_message)
{
        if (ret_message)
                *ret_message = strdup(s->msg[0] ? s->msg : "failed");
}

int session_new(const struct scenario *sc, const struct session_opts *opts,
                struct session **ret, char **ret_message)
{
        struct session *s;
        int r = 0;

        if (ret_message)
                *ret_message = NULL;
        if (!sc || !opts || !opts->worker_path || !ret)
                return -EINVAL;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->sc = sc;
        s->opts = *opts;
        s->worker_path = strdup(opts->worker_path);
        s->n = sc->n_components;
        s->insts = calloc(s->n ? s->n : 1, sizeof(*s->insts));
        if (!s->worker_path || !s->insts) {
                session_free(s);
                return -ENOMEM;
        }
        s->opts.worker_path = s->worker_path;
        for (size_t i = 0; i < s->n; i++)
                s->insts[i].comp = i;
        /*
         * Every component is checked before any worker starts, and every
         * worker starts before any is waited for: their start-ups (exec,
         * sandbox, loading the FMU) overlap. After a failure the workers
         * not yet ready are killed, not waited for.
         */
        for (size_t i = 0; i < s->n && r == 0; i++)
                r = prepare(s, &s->insts[i]);
        for (size_t i = 0; i < s->n && r == 0; i++)
                r = spawn(s, &s->insts[i]);
        for (size_t i = 0; i < s->n; i++) {
                struct session_inst *si = &s->insts[i];

                if (si->inst && r == 0) {
                        r = ready(s, si);
                } else if (si->inst) {
                        inst_abort(si->inst);
                        si->inst = NULL;
                }
        }
        for (size_t i = 0; i < s->n && r == 0; i++)
                r = instantiate(s, &s->insts[i]);
        if (r == 0)
                r = init_system(s);
        if (r < 0) {
                fail_message(s, ret_message);
                session_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

/* Free si's instance, and tell how its worker ended. */
static void ended(struct session *s, struct session_inst *si)
{
        char fault[SESSION_MSG_MAX / 2] = "";
        pid_t pid = inst_pid(si->inst);
        int wstatus;

        if (inst_fault(si->inst))
                snprintf(fault, sizeof(fault), "%s", inst_message(si->inst));
        (void) inst_free_status(si->inst, &wstatus);
        si->inst = NULL;
        if (s->opts.worker)
                s->opts.worker(s->opts.worker_ctx, &(struct session_worker_info){
                        .ev = SESSION_WORKER_ENDED, .comp = si->comp,
                        .name = s->sc->components[si->comp].name, .pid = pid,
                        .wstatus = wstatus, .fault = fault });
}

void session_free(struct session *s)
{
        if (!s)
                return;
        for (size_t i = 0; i < s->n; i++) {
                struct session_inst *si = &s->insts[i];

                /* Also made for an instance whose worker never started. */
                free(si->required);
                free(si->clocks);
                if (!si->inst)
                        continue;
                /* A stopped worker could not answer: killed, not waited for. */
                (void) inst_kill_stopped(si->inst);
                /* fmi3Terminate only from a healthy, initialized instance (section 2.2.4). */
                if (si->initialized && !si->failed && !si->terminated && !inst_fault(si->inst)) {
                        session_init_deadline(s, si, true);     /* as session_terminate() */
                        (void) inst_terminate(si->inst);
                }
                ended(s, si);
        }
        free(s->insts);
        free(s->worker_path);
        free(s);
}

const struct scenario *session_scenario(const struct session *s)
{
        return s->sc;
}

size_t session_count(const struct session *s)
{
        return s->n;
}

struct inst *session_inst(const struct session *s, size_t comp)
{
        return comp < s->n ? s->insts[comp].inst : NULL;
}

const char *session_name(const struct session *s, size_t comp)
{
        return comp < s->n ? s->sc->components[comp].name : "?";
}

bool session_event_mode_used(const struct session *s, size_t comp)
{
        return comp < s->n && s->insts[comp].event_mode;
}

bool session_early_return_allowed(const struct session *s, size_t comp)
{
        return comp < s->n && s->insts[comp].early_return;
}

bool session_iu_enabled(const struct session *s, size_t comp)
{
        return comp < s->n && s->insts[comp].iu;
}

size_t session_required(const struct session *s, size_t comp, const uint32_t **ret_vrs)
{
        if (comp >= s->n) {
                *ret_vrs = NULL;
                return 0;
        }
        *ret_vrs = s->insts[comp].required;
        return s->insts[comp].iu ? s->insts[comp].n_required : 0;
}

double session_next_event_time(const struct session *s, size_t comp)
{
        return comp < s->n ? s->insts[comp].next_event_time : INFINITY;
}

bool session_in_init_event(const struct session *s, size_t comp)
{
        return comp < s->n && s->insts[comp].init_event;
}

void session_init_event_done(struct session *s, size_t comp)
{
        if (comp < s->n)
                s->insts[comp].init_event = false;
}

bool session_terminate_requested(const struct session *s, size_t *ret_comp)
{
        if (s->terminate_requested && ret_comp)
                *ret_comp = s->terminate_comp;
        return s->terminate_requested;
}

void session_set_iu(struct session *s, session_iu_fn *fn, void *ctx)
{
        s->iu = fn;
        s->iu_ctx = ctx;
}

int session_terminate(struct session *s, size_t *ret_comp)
{
        int bad = 0;

        for (size_t i = 0; i < s->n; i++) {
                struct session_inst *si = &s->insts[i];
                int r;

                if (!si->inst || !si->initialized || si->failed || si->terminated ||
                    inst_fault(si->inst))
                        continue;
                si->terminated = true;
                /* Where an FMU flushes what it kept (FMI 3.0 section 2.3.8): as long as initialization. */
                session_init_deadline(s, si, true);
                r = inst_terminate(si->inst);
                session_init_deadline(s, si, false);
                if (r == INST_OK || r == INST_WARNING)
                        continue;
                si->failed = true;
                if (bad == 0) {
                        bad = r;
                        *ret_comp = i;
                }
        }
        return bad;
}

void session_mark_failed(struct session *s, size_t comp)
{
        if (comp < s->n)
                s->insts[comp].failed = true;
}
