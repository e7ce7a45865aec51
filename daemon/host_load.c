/*
 * host_load: a session from its load request to LOADED, on the session's
 * thread, once the caller has checked the paths (host_load_check.c): the
 * scenario parsed (FMUs unpacked into the cache), the workers started and
 * initialized, the results file opened and the master built; the load
 * reply comes last.
 *
 * DESIGN: scenario_load() runs on the session's thread, not the caller's:
 * unpacking a large FMU must not hold up other clients. The caller's
 * check opens the path beneath its allowed directory (host_beneath.c) to
 * answer early; the load opens it again, confined (scenario_opts.confined:
 * the scenario and every file it names opened once beneath a directory's
 * descriptor, no link followed), and reads only those descriptors, so a
 * link swapped in between, or during the load, is refused, never read. The load polls hs->cancel (fmi/cancel.h: at each element of
 * a document, between archive entries and FMUs), which host_free() sets:
 * a shutdown joins this thread, so no phase of a load may outlast it.
 */
#include "daemon/host_int.h"
#include "engine/master/input_csv.h"
#include "engine/record/mat4_csv.h"
#include "engine/run/row_rec.h"
#include "engine/run/run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

/*
 * The input file: resolved and checked again (as the scenario), read for
 * the scenario. uploaded: input.csv of the load's directory (host_content.c),
 * opened beneath it with the daemon's own identity.
 */
static int read_inputs(struct hsess *hs, const struct proto_str *input, const char *uploaded,
                       char *msg, size_t size, int *code)
{
        char *path = uploaded ? strdup(uploaded) : hvalues_strdup(input), *why = NULL;
        const struct open_as *as;
        char *const *dirs;
        struct stat st;
        int fd = -1, r;
        size_t n;

        if (!path) {
                *code = PROTO_E_BAD_REQUEST;
                snprintf(msg, size, "input: not a file name");
                return -EINVAL;
        }
        /* Opened once, beneath its allowed directory; only the descriptor is read. */
        as = hcontent_dirs(hs, uploaded != NULL, &dirs, &n);
        *code = hpath_open(as, dirs, n, path, O_RDONLY | O_NONBLOCK, 0, &fd, msg, size);
        if (*code >= 0) {
                free(path);
                return -EACCES;
        }
        /* Content goes into messages only from a file opened with the client's own rights. */
        r = fstat(fd, &st) < 0 ? -errno : 0;
        if (r == 0)
                r = input_csv_read_fd(fd, path, hout_as_client(hs), hs->sc, NULL, &hs->inputs,
                                      &why);
        close(fd);
        *code = r == -ENOMEM ? PROTO_E_INTERNAL : PROTO_E_INVALID;
        if (r < 0)
                snprintf(msg, size, "%s", why ? why : strerror(-r));
        free(why);
        free(path);
        return r;
}

struct load_strs {
        struct scenario_assign *multirate, *starts;
        char **record, **rig;           /* rig: the inputs, then the outputs */
        char **strs;                    /* every string allocated, to free */
        size_t n_strs;
};

static char *keep(struct load_strs *ls, const struct proto_str *s)
{
        char *p = hvalues_strdup(s);

        if (p)
                ls->strs[ls->n_strs++] = p;
        return p;
}

static int assigns(struct load_strs *ls, const struct proto_assign *a, uint32_t n,
                   struct scenario_assign **ret)
{
        struct scenario_assign *v = calloc(n ? n : 1, sizeof(*v));

        *ret = v;
        if (!v)
                return -ENOMEM;
        for (uint32_t i = 0; i < n; i++) {
                v[i].name = keep(ls, &a[i].name);
                v[i].value = keep(ls, &a[i].value);
                if (!v[i].name || !v[i].value)
                        return -EINVAL;
        }
        return 0;
}

static int overrides(const struct proto_load *a, struct scenario_overrides *o,
                     struct load_strs *ls, char *msg, size_t size)
{
        *o = (struct scenario_overrides){
                .has_start = a->has_start, .has_stop = a->has_stop, .has_step = a->has_step,
                .has_budget = a->has_budget, .has_warp = a->has_warp,
                .has_decimation = a->has_decimation, .start = a->start, .stop = a->stop,
                .step = a->step, .budget = a->budget, .warp = a->warp,
                .decimation = a->decimation,
                .has_tolerance = a->has_tolerance, .tolerance = a->tolerance,
                .rollback_on_fault = a->rollback_on_fault,
        };
        if (hpace_overrides(a, o, msg, size) < 0)
                return -EINVAL;
        if (a->algorithm.len) {
                o->has_algorithm = true;
                if (a->algorithm.len == 6 && !memcmp(a->algorithm.ptr, "jacobi", 6))
                        o->algorithm = SCENARIO_JACOBI;
                else if (a->algorithm.len == 12 && !memcmp(a->algorithm.ptr, "gauss-seidel", 12))
                        o->algorithm = SCENARIO_GAUSS_SEIDEL;
                else {
                        snprintf(msg, size, "algorithm: '%.*s' is neither jacobi nor gauss-seidel",
                                 (int)(a->algorithm.len > 64 ? 64 : a->algorithm.len),
                                 a->algorithm.ptr);
                        return -EINVAL;
                }
        }
        ls->strs = calloc(2u * a->n_multirate + 2u * a->n_starts + a->n_record + a->n_rig_in +
                          a->n_rig_out + 1, sizeof(char *));
        ls->record = calloc(a->n_record + 1u, sizeof(char *));
        ls->rig = calloc(a->n_rig_in + a->n_rig_out + 1u, sizeof(char *));
        if (!ls->strs || !ls->record || !ls->rig)
                return -ENOMEM;
        for (uint32_t i = 0; i < a->n_rig_in + a->n_rig_out; i++)
                if (!(ls->rig[i] = keep(ls, i < a->n_rig_in ? &a->rig_in[i]
                                                          : &a->rig_out[i - a->n_rig_in]))) {
                        snprintf(msg, size, "rigIn, rigOut: not a variable name");
                        return -EINVAL;
                }
        o->n_rig_in = a->n_rig_in;
        o->rig_in = (const char *const *)ls->rig;
        o->n_rig_out = a->n_rig_out;
        o->rig_out = (const char *const *)ls->rig + a->n_rig_in;
        if (a->rig_policy.len) {
                o->has_rig_policy = true;
                if (rig_policy_parse(a->rig_policy.ptr, a->rig_policy.len, &o->rig_policy) < 0) {
                        snprintf(msg, size, "rigPolicy: expected hold, safe or pause");
                        return -EINVAL;
                }
        }
        o->has_rig_timeout = a->has_rig_timeout;
        o->rig_timeout_ms = a->rig_timeout_ms;
        if (assigns(ls, a->multirate, a->n_multirate, &ls->multirate) < 0 ||
            assigns(ls, a->starts, a->n_starts, &ls->starts) < 0) {
                snprintf(msg, size, "multirate or starts: not a name and a value");
                return -EINVAL;
        }
        for (uint32_t i = 0; i < a->n_record; i++)
                if (!(ls->record[i] = keep(ls, &a->record[i]))) {
                        snprintf(msg, size, "record: not a variable name");
                        return -EINVAL;
                }
        o->n_multirate = a->n_multirate;
        o->multirate = ls->multirate;
        o->n_starts = a->n_starts;
        o->starts = ls->starts;
        o->n_record = a->n_record;
        o->record = (const char *const *)ls->record;
        return 0;
}

static void load_strs_fini(struct load_strs *ls)
{
        for (size_t i = 0; i < ls->n_strs; i++)
                free(ls->strs[i]);
        free(ls->strs);
        free(ls->record);
        free(ls->rig);
        free(ls->multirate);
        free(ls->starts);
}

/* The first few diagnostics, one a line. */
int hload_refusal_code(int r)
{
        /* Not below an allowed directory, a link on the way, not there: as hpath_open(). */
        if (r == -EPERM || r == -ELOOP || r == -EXDEV || r == -ENOENT || r == -EACCES)
                return PROTO_E_DENIED;
        /* The daemon's cache could not take a valid FMU: the daemon's, not the load's. */
        if (r == -ENOSPC || r == -EDQUOT || r == -EROFS || r == -EIO)
                return PROTO_E_INTERNAL;
        return PROTO_E_INVALID;
}

void hload_diag_text(const struct diag_list *d, char *msg, size_t size)
{
        size_t len = 0, lines = 0;

        msg[0] = '\0';
        for (size_t i = 0; i < d->n && lines < HOST_DIAG_LINES && len + 2 < size; i++) {
                if (d->v[i].severity != DIAG_ERROR)
                        continue;
                if (lines++)
                        msg[len++] = '\n';
                msg[len] = '\0';
                diag_format(&d->v[i], msg + len, size - len);
                len += strlen(msg + len);
        }
        if (!lines)
                snprintf(msg, size, "the scenario is invalid");
}

/*
 * The warnings of an accepted scenario, one formatted line each, for the
 * load reply: the session's own (own: what its results file leaves out)
 * first, then the scenario's, at most HOST_WARNINGS lines in all; the
 * last line counts those left unlisted, never dropped without a word.
 */
#define HOST_WARNINGS 32
struct load_warnings {
        struct proto_str v[HOST_WARNINGS];
        char text[HOST_WARNINGS][512];
        uint32_t n;
};

static void add_warning(struct load_warnings *w, const char *text)
{
        snprintf(w->text[w->n], sizeof(w->text[w->n]), "%s", text);
        w->v[w->n] = (struct proto_str){ w->text[w->n], (uint32_t)strlen(w->text[w->n]) };
        w->n++;
}

static void warnings_of(const char *own, const struct diag_list *d, struct load_warnings *w)
{
        size_t total = (own[0] ? 1 : 0) + diag_warnings(d), unlisted;
        char line[sizeof(w->text[0])];

        w->n = 0;
        if (own[0])
                add_warning(w, own);
        for (size_t i = 0; i < d->n && w->n < HOST_WARNINGS; i++) {
                if (d->v[i].severity != DIAG_WARNING)
                        continue;
                if (w->n == HOST_WARNINGS - 1 && total > HOST_WARNINGS)
                        break;
                diag_format(&d->v[i], line, sizeof(line));
                add_warning(w, line);
        }
        unlisted = total - w->n;
        if (unlisted) {
                snprintf(line, sizeof(line), "%zu more warnings not listed (fmuctl inspect lists "
                         "an FMU's)", unlisted);
                add_warning(w, line);
        }
}

static int open_rec(struct hsess *hs, const char *out, bool force, char *msg, size_t size,
                    int *code)
{
        const struct scenario *sc = hs->sc;
        size_t n = sc->n_columns ? sc->n_columns : 1;
        /* Grid times as the step was written (numfmt_grid()), as fmuctl run --local writes them. */
        struct rec_options ro = { .paced = sc->experiment.warp > 0, .fsync = true,
                                  .flush_ms = hs->h->opts.results_flush_ms, .grid = true,
                                  .grid_t0 = sc->experiment.start, .grid_h = sc->experiment.step };
        struct rec_column *cols = calloc(n, sizeof(*cols));
        int fd = -1, r = 0;

        hs->col_types = calloc(n, sizeof(*hs->col_types));
        hs->rec_vals = calloc(n, sizeof(*hs->rec_vals));
        if (!cols || !hs->col_types || !hs->rec_vals) {
                free(cols);
                snprintf(msg, size, "out of memory");
                return -ENOMEM;
        }
        for (size_t i = 0; i < sc->n_columns; i++) {
                const struct scenario_column *c = &sc->columns[i];

                hs->col_types[i] = row_rec_type(sc->components[c->comp].fmu->md->vars[c->var].type);
                cols[i] = (struct rec_column){ .name = c->name, .type = hs->col_types[i] };
        }
        if (sc->n_columns && mat4_wanted(out) && run_mat4_left_out(sc, NULL, 0) == sc->n_columns) {
                *code = PROTO_E_INVALID;
                snprintf(msg, size, "'%s': " MAT4_ALL_TEXT, out);
                r = -ENODATA;
        } else {
                /* No column (no outputs, FMI 3.0 section 2.4.8): the time column alone. */
                *code = hout_open(hs, out, force, &fd, &hs->rec_path, msg, size);
                r = *code >= 0 ? -EACCES : 0;
        }
        /* .mat: the named file is written at the end; the rows go to an unnamed CSV. */
        if (r == 0 && fd >= 0 && mat4_wanted(out)) {
                hs->mat_fd = fd;
                fd = -1;
                *code = hmat_csv_open(hs, &fd, msg, size);
                r = *code >= 0 ? -EINVAL : 0;
        }
        if (r == 0 && fd >= 0) {
                /* Read back through this descriptor only, never the path again (results). */
                hrec_share(hs, fcntl(fd, F_DUPFD_CLOEXEC, 3));
                r = rec_open_fd(fd, cols, sc->n_columns, &ro, &hs->rec);
                *code = PROTO_E_INTERNAL;
                if (r < 0) {
                        close(fd);
                        snprintf(msg, size, "cannot write '%s': %s", hs->rec_path,
                                 strerror(-r));
                }
        }
        free(cols);
        if (!hs->rec && hs->mat_fd >= 0) {
                close(hs->mat_fd);
                hs->mat_fd = -1;
        }
        if (!hs->rec) {
                hrec_share(hs, -1);
                free(hs->rec_path);
                hs->rec_path = NULL;
        }
        return r;
}

/* A .mat file's String and Binary columns are left out: the load's reply says so (note[0]: not). */
static void note_left_out(const struct hsess *hs, char *note, size_t size)
{
        char names[MAT4_LIST_MAX];
        size_t n;

        note[0] = '\0';
        if (hs->mat_fd < 0 || !(n = run_mat4_left_out(hs->sc, names, sizeof(names))))
                return;
        run_mat4_note(note, size, NULL, n, names);
}

/* What the master notes (master_note_fn) goes to the daemon's log with the session. */
static void note(void *ctx, size_t comp, const char *message)
{
        (void)comp;
        hlog_line(ctx, LOG_WARNING, "%s", message);
}

void hload_sandbox(const struct hsess *hs, struct sandbox_opts *ret)
{
        const struct host_opts *o = &hs->h->opts;

        *ret = (struct sandbox_opts){
                .mode = hs->sandbox == HOST_SANDBOX_STRICT ? SANDBOX_STRICT :
                        hs->sandbox == HOST_SANDBOX_BASIC ? SANDBOX_BASIC : SANDBOX_OFF,
                .scratch_root = o->scratch_dir,
                .hide = o->hide_dir,
                .mem_limit = o->mem_limit,
                .cpu_limit_s = o->cpu_limit_s,
                .kill_on_violation = o->kill_on_violation,
                .uid = o->worker_uid,
                .gid = o->worker_gid,
                .require_all = o->sandbox_require_all,
                .skip_layers = hs->h->skip_layers,
        };
}

static int start(struct hsess *hs, const char *out, bool force, bool mlock, char *msg,
                 size_t size, int *code)
{
        const struct host_opts *o = &hs->h->opts;
        struct session_opts so;
        struct master_opts mo;
        char *why = NULL;
        int r;

        r = hlog_start(hs);
        if (r < 0) {
                snprintf(msg, size, "out of memory");
                return r;
        }
        session_opts_default(&so);
        so.worker_path = o->worker_path;
        so.log = hlog_fmu;
        so.log_ctx = hs;
        so.worker = hlog_worker;
        so.worker_ctx = hs;
        so.timeout_ns = o->call_timeout_ns;
        so.envp = o->worker_envp;
        so.inputs = hs->inputs;
        so.cancel = &hs->calls_cancel;
        hload_sandbox(hs, &so.sandbox);
        so.mlock = mlock;
        so.mlock_limit = o->mlock_bytes;
        r = session_new(hs->sc, &so, &hs->s, &why);
        if (r < 0) {
                *code = PROTO_E_FAULT;
                snprintf(msg, size, "%s", why ? why : strerror(-r));
                free(why);
                return r;
        }
        *code = PROTO_E_INTERNAL;
        r = open_rec(hs, out, force, msg, size, code);
        if (r < 0)
                return r;
        master_opts_default(&mo);
        mo.sink = hsub_sink;
        mo.sink_ctx = hs;
        mo.note = note;
        mo.note_ctx = hs;
        mo.rollback_on_fault = hs->sc->experiment.rollback_on_fault;
        mo.idle = hrec_idle;
        mo.idle_ctx = hs;
        mo.inputs = hs->inputs;
        r = master_new(hs->s, &mo, &hs->m, &why);
        if (r < 0) {
                *code = PROTO_E_FAULT;
                snprintf(msg, size, "%s", why ? why : strerror(-r));
                free(why);
        }
        /* The header and the first row: on disk while the session waits to start. */
        if (r == 0 && hs->rec)
                (void) rec_flush(hs->rec);
        return r;
}

static void load_log(struct hsess *hs, int level, const char *message)
{
        hlog_line(hs, level, "%s", message);
}

/* Wait for host_free() (FMUD_TEST_HOLD_LOADS): a load that cannot end unless cancelled. */
static void hold(struct hsess *hs)
{
        load_log(hs, LOG_INFO, "load held until cancelled (FMUD_TEST_HOLD_LOADS)");
        pthread_mutex_lock(&hs->lock);
        while (!hs->quit)
                pthread_cond_wait(&hs->cond, &hs->lock);
        pthread_mutex_unlock(&hs->lock);
}

/* The load's cancellation poll (fmi/cancel.h): called often, from this thread only. */
static bool load_cancelled(void *ctx)
{
        struct hsess *hs = ctx;

        if (hs->h->hold_loads && !hs->held) {
                hs->held = true;
                hold(hs);
        }
        return atomic_load_explicit(&hs->cancel, memory_order_relaxed) ||
               atomic_load_explicit(&hs->unload_asked, memory_order_relaxed);
}

int hload_run(struct hsess *hs, int *ret_code, char *ret_msg, size_t ret_size)
{
        struct host *h = hs->h;
        struct scenario_overrides o;
        struct load_strs ls = { 0 };
        struct scenario_opts sopt;
        struct diag_list diags;
        struct proto_load a;
        struct pv_doc doc = { 0 };
        char msg[HOST_MSG_MAX] = "", err[256], *path = NULL, *out = NULL, *input = NULL;
        char *const *dirs;
        void *mem = NULL;
        int r, code = PROTO_E_INTERNAL;
        bool mlock;

        diag_list_init(&diags, 64);
        r = host_cmd_args(h, hs->load, &doc);
        if (r < 0) {
                snprintf(msg, sizeof(msg), "arguments: malformed");
                goto out_reply;
        }
        r = proto_load_decode(doc.root, &a, &mem, err, sizeof(err));
        if (r < 0) {
                code = PROTO_E_BAD_REQUEST;
                snprintf(msg, sizeof(msg), "%s", err);
                goto out_reply;
        }
        if (a.content.len || a.input_content.len) {
                code = hcontent_prepare(hs, &a, &path, &input, msg, sizeof(msg));
                if (code >= 0)
                        goto out_reply;
        }
        if (!a.content.len)
                path = hvalues_strdup(&a.path);
        out = a.out.len ? hvalues_strdup(&a.out) : NULL;
        code = path ? -1 : PROTO_E_BAD_REQUEST;
        if (code >= 0)
                goto out_reply;
        if (out && (code = hpath_check_out(hs->output, hs->n_output, out, msg, sizeof(msg))) >= 0)
                goto out_reply;
        code = PROTO_E_INVALID;
        r = overrides(&a, &o, &ls, msg, sizeof(msg));
        if (r < 0)
                goto out_reply;
        scenario_opts_default(&sopt);
        sopt.cache_dir = h->opts.cache_dir;
        sopt.confined = true;
        sopt.open_as = hcontent_dirs(hs, a.content.len > 0, &dirs, &sopt.n_allowed_dirs);
        sopt.allowed_dirs = (const char *const *)dirs;
        sopt.fmu.strict = a.strict;
        /* Checked by the protocol: anything else is empty (the defaults). */
        (void) fmu_interface_parse(a.iface.ptr, a.iface.len, &sopt.fmu.iface);
        (void) fmu_integrator_parse(a.integrator.ptr, a.integrator.len, &sopt.fmu.integrator);
        sopt.cancel = (struct fmi_cancel){ .fn = load_cancelled, .ctx = hs };
        r = scenario_load(path, &sopt, &o, &diags, &hs->sc);
        /* No worker is started for a load the shutdown no longer wants (hload_free() frees sc). */
        if (r == 0 && load_cancelled(hs))
                r = -ECANCELED;
        if (r == -ECANCELED) {
                code = PROTO_E_STATE;
                snprintf(msg, sizeof(msg), "load of '%s' cancelled: the daemon is shutting down",
                         path);
                load_log(hs, LOG_INFO, msg);
        } else if (r == -EINVAL) {
                hload_diag_text(&diags, msg, sizeof(msg));
        } else if (r < 0 && diag_errors(&diags)) {
                hload_diag_text(&diags, msg, sizeof(msg));
                code = hload_refusal_code(r);
        } else if (r < 0) {
                snprintf(msg, sizeof(msg), "cannot load '%s': %s", path, strerror(-r));
        }
        /* A load by content: its files by their names in the load, not the daemon's directory. */
        if (r < 0 && hs->content_dir)
                hcontent_unprefix(hs, msg);
        if (r < 0)
                goto out_reply;
        /*
         * The daemon's default budget where neither the scenario nor the
         * load named one (INFINITY: none; 0: not set, the scenario's default).
         */
        if (!hs->sc->experiment.budget_given && h->opts.default_budget_s > 0)
                hs->sc->experiment.budget = h->opts.default_budget_s;
        hpace_defaults(&hs->sc->experiment, &h->opts);
        hs->warp = hs->sc->experiment.warp;
        if (a.input.len || input) {
                r = read_inputs(hs, &a.input, input, msg, sizeof(msg), &code);
                if (r < 0)
                        goto out_reply;
        }
        mlock = hrt_mlock(hs, &a);
        if (mlock && (r = hmlock_reserve(hs, hs->sc->n_components, msg, sizeof(msg))) < 0) {
                code = PROTO_E_LIMIT;
                goto out_reply;
        }
        r = start(hs, out, a.force, mlock, msg, sizeof(msg), &code);
        if (r == 0)
                r = hrt_apply(hs, &a, msg, sizeof(msg), &code);
        if (r < 0)
                goto out_reply;
        r = hstatus_init(hs);
        if (r < 0) {
                code = PROTO_E_INTERNAL;
                snprintf(msg, sizeof(msg), "out of memory");
                goto out_reply;
        }
        /* Where the results go: in status and the load's reply (out of memory: not said). */
        pthread_mutex_lock(&hs->lock);
        hs->st.out = hs->rec_path ? strdup(hs->rec_path) : NULL;
        pthread_mutex_unlock(&hs->lock);
        hs->n_workers = (uint32_t)hs->sc->n_components;
        atomic_fetch_add(&h->workers, hs->n_workers);
        hs->generation = 1;
        pthread_mutex_lock(&hs->lock);
        hs->m_pub = hs->m;
        hs->st.generation = 1;
        pthread_mutex_unlock(&hs->lock);
        hsess_set_state(hs, PROTO_STATE_LOADED, NULL);
        hlog_line(hs, LOG_NOTICE, "loaded '%s': %zu instances, results %s", path,
                  hs->sc->n_components, hs->rec_path ? hs->rec_path : "none");
        {
                struct load_warnings *lw = calloc(1, sizeof(*lw));
                char own[sizeof(lw->text[0])];
                struct pw w;

                note_left_out(hs, own, sizeof(own));
                if (lw)
                        warnings_of(own, &diags, lw);
                if (pw_init(&w) == 0) {
                        proto_reply_ok_begin(&w, hs->load->id);
                        proto_load_result_encode(&w, &(struct proto_load_result){
                                .session = hs->id, .generation = hs->generation,
                                .out = { hs->rec_path ? hs->rec_path : "",
                                         hs->rec_path ? (uint32_t)strlen(hs->rec_path) : 0 },
                                .n_warnings = lw ? lw->n : 0, .warnings = lw ? lw->v : NULL });
                        host_reply_take(h, hs->load->token, hs->load->id, &w);
                        pw_fini(&w);
                }
                free(lw);
        }
        r = 0;
        goto out_free;
out_reply:
        if (r == 0)
                r = -EINVAL;
        /* Whatever failed on the way (a call killed, a cancelled poll): the unload's doing. */
        if (atomic_load(&hs->unload_asked)) {
                code = PROTO_E_STATE;
                snprintf(msg, sizeof(msg), "load of '%s' cancelled: the session was unloaded",
                         path ? path : "?");
        } else if (atomic_load(&hs->calls_cancel)) {
                /* An FMU call killed past the shutdown's grace: the daemon's doing, not the FMU's. */
                code = PROTO_E_STATE;
                snprintf(msg, sizeof(msg), "load of '%s' cancelled: the daemon is shutting down",
                         path ? path : "?");
        }
        *ret_code = code;
        snprintf(ret_msg, ret_size, "%s", msg[0] ? msg : "load failed");
        hlog_line(hs, code == PROTO_E_FAULT || code == PROTO_E_INTERNAL ? LOG_ERR : LOG_WARNING,
                  "load of '%s' refused (%s): %s", path ? path : "?",
                  proto_err_name((enum proto_err)code) ? proto_err_name((enum proto_err)code) :
                  "error", ret_msg);
        /* The caller answers once nothing is left: hs->load stays for it. */
        load_strs_fini(&ls);
        free(path);
        free(input);
        free(out);
        free(mem);
        pv_doc_fini(&doc);
        diag_list_fini(&diags);
        return r;
out_free:
        load_strs_fini(&ls);
        free(path);
        free(input);
        free(out);
        free(mem);
        pv_doc_fini(&doc);
        diag_list_fini(&diags);
        hcmd_free(hs->load);
        hs->load = NULL;
        return r;
}

void hload_free(struct hsess *hs)
{
        hfmi_free(hs);
        hrt_release(hs);
        hmlock_release(hs);
        pthread_mutex_lock(&hs->lock);
        hs->m_pub = NULL;
        pthread_mutex_unlock(&hs->lock);
        master_free(hs->m);
        hs->m = NULL;
        (void) hrec_close(hs);
        hrec_share(hs, -1);
        free(hs->rec_path);
        hs->rec_path = NULL;
        atomic_fetch_sub(&hs->h->workers, hs->n_workers);
        hs->n_workers = 0;
        session_free(hs->s);
        hs->s = NULL;
        input_table_free(hs->inputs);
        hs->inputs = NULL;
        free(hs->col_types);
        free(hs->rec_vals);
        hs->col_types = NULL;
        hs->rec_vals = NULL;
        scenario_free(hs->sc);
        hs->sc = NULL;
        hcontent_release(hs);
}
