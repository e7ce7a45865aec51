/*
 * run: load, start, run and record one scenario (run.h). The glue between
 * the master's rows (doubles and blobs per column) and the recorder's
 * typed columns lives here.
 */
#include "engine/run/run.h"
#include "engine/instance/instance.h"
#include "engine/master/input_csv.h"
#include "engine/record/mat4_csv.h"
#include "engine/run/row_rec.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROGRESS_STEPS 100

struct run_ctx {
        const struct run_opts *o;
        const struct scenario *sc;
        struct rec *rec;
        struct master *m;               /* once it exists */
        enum rec_type *types;           /* per column */
        union rec_value *values;        /* per column, reused for every row */
        int error;                      /* first recorder error */
        int mat_fd;                     /* a .mat out: the file being written, */
        char *mat_tmp;                  /* its name beside the out, renamed over it at the end */
        int csv_fd;                     /* and the CSV of its rows */
        const char *csv_where;          /* NULL: beside it; else the directory of that CSV */
};

/* A write failed: the run ends at the next point (run_scenario() says why). */
static void recorder_failed(struct run_ctx *c, int err)
{
        c->error = err;
        if (c->m)
                master_request_stop(c->m);
}

/* A stop asked by the caller's signal: the master stops at the next point. */
static void check_stop(const struct run_ctx *c)
{
        if (c->o->stop && *c->o->stop && c->m)
                master_request_stop(c->m);
}

static void sink(void *ctx, const struct master_row *row)
{
        struct run_ctx *c = ctx;
        int r;

        check_stop(c);
        /* Intermediate updates are not communication points: not in this file. */
        if (!c->rec || c->error || (row->flags & MASTER_ROW_INTERMEDIATE))
                return;
        r = row_rec_sample(c->rec, c->types, c->values, row);
        if (r < 0 && r != -ENOBUFS)
                recorder_failed(c, r);
}

/* A paced run's sleep: rows reach the file on time, and a failed write ends the run. */
static void idle(void *ctx)
{
        struct run_ctx *c = ctx;
        int r;

        check_stop(c);
        if (!c->rec || c->error)
                return;
        r = rec_tick(c->rec);
        if (r < 0)
                recorder_failed(c, r);
}

static int fail(struct run_report *rep, enum run_phase phase, int r, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

static int fail(struct run_report *rep, enum run_phase phase, int r, const char *fmt, ...)
{
        va_list ap;

        rep->phase = phase;
        free(rep->message);
        va_start(ap, fmt);
        if (vasprintf(&rep->message, fmt, ap) < 0)
                rep->message = NULL;
        va_end(ap);
        return r < 0 ? r : -EINVAL;
}

/* A .mat file's columns that are text are left out: said before the run; how many. */
static size_t note_left_out(const struct run_opts *o, const struct scenario *sc,
                            struct diag_list *diags)
{
        char names[MAT4_LIST_MAX], note[MAT4_LIST_MAX + PATH_MAX + 128];
        size_t n;

        if (o->out_fd > 0 || !mat4_wanted(o->out) || !(n = run_mat4_left_out(sc, names, sizeof(names))))
                return 0;
        run_mat4_note(note, sizeof(note), o->out, n, names);
        (void) diag_add(diags, DIAG_WARNING, NULL, 0, NULL, "%s", note);
        return n;
}

/* The directory of path ("." for a bare name), malloc'ed; NULL when out of memory. */
static char *dir_of(const char *path)
{
        const char *slash = strrchr(path, '/');

        if (!slash)
                return strdup(".");
        return strndup(path, slash == path ? 1 : (size_t)(slash - path));
}

/*
 * A .mat out: a new file beside it (PATH.PID-N), renamed over it once the
 * rows are converted, so that a run whose .mat cannot be written (a full
 * disk) leaves a file of that name from before as it was; and an unnamed
 * CSV for the rows in its directory (O_TMPFILE), so a full disk is the
 * destination's; where that filesystem has no unnamed files, in $TMPDIR
 * or /tmp (c->csv_where says so). The recorder's descriptor of that CSV;
 * -errno.
 */
static int open_mat(struct run_ctx *c, const char *path)
{
        const char *tmpdir = getenv("TMPDIR");
        char *dir = dir_of(path), *name;
        struct stat st;
        int fd, e;

        if (!dir)
                return -ENOMEM;
        /* What cannot be replaced by a file is refused now, not after the run. */
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
                free(dir);
                return -EISDIR;
        }
        /* A name of its own, made as open(path, O_CREAT, 0644) would have made the file. */
        for (unsigned k = 0; k < 100 && c->mat_fd < 0; k++) {
                free(c->mat_tmp);
                if (asprintf(&c->mat_tmp, "%s.%u-%u", path, (unsigned)getpid(), k) < 0) {
                        c->mat_tmp = NULL;
                        free(dir);
                        return -ENOMEM;
                }
                c->mat_fd = open(c->mat_tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY,
                                 0644);
                if (c->mat_fd < 0 && errno != EEXIST)
                        break;
        }
        if (c->mat_fd < 0) {
                e = errno;
                free(c->mat_tmp);
                c->mat_tmp = NULL;
                free(dir);
                return -e;
        }
        c->csv_fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        free(dir);
        if (c->csv_fd < 0) {
                if (!tmpdir || !*tmpdir)
                        tmpdir = "/tmp";
                if (asprintf(&name, "%s/fmuctl-rows-XXXXXX", tmpdir) < 0)
                        return -ENOMEM;
                c->csv_fd = mkostemp(name, O_CLOEXEC);
                e = errno;
                if (c->csv_fd >= 0)
                        (void) unlink(name);
                free(name);
                if (c->csv_fd < 0)
                        return -e;
                c->csv_where = tmpdir;
        }
        fd = fcntl(c->csv_fd, F_DUPFD_CLOEXEC, 3);
        return fd < 0 ? -errno : fd;
}

/* Say a failure of the .mat: as the run's when it had none, else after the run's. */
static int mat_failed(const struct run_opts *o, struct run_report *rep, int r_run, int r,
                      const char *why)
{
        char *msg;

        if (r_run == 0)
                return fail(rep, RUN_PHASE_RECORD, r, "'%s': %s", o->out, why);
        if (asprintf(&msg, "%s; '%s' not written either: %s", rep->message ? rep->message : "",
                     o->out, why) >= 0) {
                free(rep->message);
                rep->message = msg;
        }
        return r_run;
}

/*
 * The rows the run wrote to its CSV converted into the .mat, also after a
 * failure of the run r_run (the CSV then holds the complete rows up to
 * it, as a .csv out would). Returns r_run, or the conversion's failure
 * said in rep.
 */
static int finish_mat(struct run_ctx *c, const struct run_opts *o, struct run_report *rep,
                      int r_run)
{
        struct mat4_var *meta = run_mat4_meta(c->sc);
        char err[512] = "";
        int r;

        if (!meta)
                r = -ENOMEM;
        else
                r = mat4_csv_convert_fd(c->csv_fd, 0, c->mat_fd, meta, c->sc->n_columns, err,
                                        sizeof(err));
        free(meta);
        if (r == 0 && o->fsync && fsync(c->mat_fd) < 0 && errno != EINVAL)
                r = -errno;
        if (close(c->mat_fd) < 0 && r == 0)
                r = -errno;
        c->mat_fd = -1;
        if (r == 0 && rename(c->mat_tmp, o->out) < 0)
                r = -errno;
        if (r == 0) {
                free(c->mat_tmp);
                c->mat_tmp = NULL;
                return r_run;
        }
        if (!err[0])
                snprintf(err, sizeof(err), "%s", strerror(-r));
        return mat_failed(o, rep, r_run, r, err);
}

static int open_recorder(struct run_ctx *c, const struct run_opts *o, struct run_report *rep)
{
        const struct scenario *sc = c->sc;
        struct rec_options ropt = { .paced = sc->experiment.warp > 0, .fsync = o->fsync,
                                    .flush_ms = o->flush_ms, .grid = true,
                                    .grid_t0 = sc->experiment.start,
                                    .grid_h = sc->experiment.step };
        struct rec_column *cols;
        int r;

        c->types = calloc(sc->n_columns ? sc->n_columns : 1, sizeof(*c->types));
        c->values = calloc(sc->n_columns ? sc->n_columns : 1, sizeof(*c->values));
        cols = calloc(sc->n_columns ? sc->n_columns : 1, sizeof(*cols));
        if (!c->types || !c->values || !cols) {
                free(cols);
                return fail(rep, RUN_PHASE_RECORD, -ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < sc->n_columns; i++) {
                const struct scenario_column *col = &sc->columns[i];
                const struct md *md = sc->components[col->comp].fmu->md;

                c->types[i] = row_rec_type(md->vars[col->var].type);
                cols[i] = (struct rec_column){ .name = col->name, .type = c->types[i] };
        }
        /* No column (no outputs, FMI 3.0 section 2.4.8): the time column alone, as other importers write. */
        if (o->out_fd > 0) {
                int fd = fcntl(o->out_fd, F_DUPFD_CLOEXEC, 3);

                /* A duplicate shares the caller's offset (a shell's redirection). */
                ropt.shared_offset = true;
                r = fd < 0 ? -errno : rec_open_fd(fd, cols, sc->n_columns, &ropt, &c->rec);
                if (r < 0 && fd >= 0)
                        close(fd);
        } else if (o->out && mat4_wanted(o->out)) {
                int fd = open_mat(c, o->out);

                ropt.fsync = false;     /* the rows' CSV is read back, never kept: the .mat is synced */
                r = fd < 0 ? fd : rec_open_fd(fd, cols, sc->n_columns, &ropt, &c->rec);
                if (r < 0 && fd >= 0)
                        close(fd);
        } else {
                r = o->out ? rec_open(o->out, cols, sc->n_columns, &ropt, &c->rec) : 0;
        }
        free(cols);
        if (r < 0)
                return fail(rep, RUN_PHASE_RECORD, r, "cannot write '%s': %s", o->out, strerror(-r));
        if (c->rec)
                rep->backend = rec_backend_name(rec_backend(c->rec));
        return 0;
}

static void report_stats(struct run_report *rep, const struct session *s, const struct master *m)
{
        struct master_stats st;

        master_get_stats(m, &st);
        rep->state = master_state(m);
        rep->time = st.sim_time;
        rep->points = st.points;
        rep->extra_points = st.extra_points;
        rep->events = st.events;
        rep->chained = st.chained;
        rep->moves = st.moves;
        rep->wall_s = st.wall_s;
        rep->rtf = st.rtf;
        for (size_t i = 0; i < rep->n_insts && i < st.n_insts; i++) {
                const struct master_inst_stats *is = &st.insts[i];

                rep->insts[i].steps = is->steps;
                rep->insts[i].step_us_mean = is->steps ? (double)is->ns_total / (double)is->steps / 1e3 : 0;
                rep->insts[i].step_us_max = (double)is->ns_max / 1e3;
        }
        (void)s;
}

static int init_report(struct run_report *rep, const struct scenario *sc)
{
        rep->name = strdup(sc->name ? sc->name : "");
        rep->start = sc->experiment.start;
        rep->stop = sc->experiment.stop;
        rep->step = sc->experiment.step;
        rep->n_columns = sc->n_columns;
        rep->insts = calloc(sc->n_components ? sc->n_components : 1, sizeof(*rep->insts));
        if (!rep->name || !rep->insts)
                return -ENOMEM;
        rep->n_insts = sc->n_components;
        for (size_t i = 0; i < sc->n_components; i++) {
                const struct scenario_component *comp = &sc->components[i];
                const char *model = comp->fmu->md->model_name;

                rep->insts[i].name = strdup(comp->name);
                rep->insts[i].fmu = strdup(model ? model : "");
                rep->insts[i].multirate = comp->multirate;
                rep->insts[i].tolerance_defined = comp->tolerance_defined;
                rep->insts[i].tolerance = comp->tolerance;
                if (!rep->insts[i].name || !rep->insts[i].fmu)
                        return -ENOMEM;
        }
        return 0;
}

/* Run to the stop time in slices, so that progress can be shown. */
static int drive(struct master *m, const struct run_opts *o, const struct scenario *sc)
{
        const struct scenario_experiment *e = &sc->experiment;
        struct master_stats st;
        int r = 0;

        /* Finished at the start already: an FMU asked to terminate in initialization. */
        if (master_state(m) == MASTER_FINISHED)
                return MASTER_FINISHED;
        for (int k = 1; k <= PROGRESS_STEPS; k++) {
                double t = k == PROGRESS_STEPS ? e->stop : e->start + (e->stop - e->start) * k / PROGRESS_STEPS;

                if (o->stop && *o->stop)
                        master_request_stop(m);
                r = master_run_until(m, t);
                if (o->progress) {
                        master_get_stats(m, &st);
                        o->progress(o->progress_ctx, st.sim_time, e->start, e->stop, st.rtf);
                }
                if (r < 0 || r != MASTER_RUNNING)
                        break;
        }
        return r;
}

/* A master's note goes where the FMUs' messages go, as a warning of fmud's own. */
static void note(void *ctx, size_t comp, const char *message)
{
        const struct run_ctx *c = ctx;
        const struct run_opts *o = c->o;
        const struct scenario *sc = c->sc;

        if (o->log)
                o->log(o->log_ctx, comp, comp < sc->n_components ? sc->components[comp].name : "",
                       1 /* fmi3Warning */, "fmud", message);
}

int run_scenario(const struct run_opts *o, struct diag_list *diags, struct run_report *rep)
{
        struct scenario_opts sopt;
        struct session_opts sess_opt;
        struct master_opts mopt;
        struct run_ctx c = { .mat_fd = -1, .csv_fd = -1 };
        struct scenario *sc = NULL;
        struct session *s = NULL;
        struct master *m = NULL;
        struct input_table *inputs = NULL;
        char *why = NULL;
        int r, rr;

        /* A worker holds about three of this process's descriptors (fd_limit.c). */
        (void) inst_fd_limit_raise(NULL, NULL);
        *rep = (struct run_report){ .phase = RUN_PHASE_LOAD };
        scenario_opts_default(&sopt);
        sopt.cache_dir = o->cache_dir;
        sopt.n_allowed_dirs = o->n_allowed_dirs;
        sopt.allowed_dirs = o->allowed_dirs;
        sopt.fmu.strict = o->strict;
        sopt.fmu.iface = o->iface;
        sopt.fmu.integrator = o->integrator;
        r = scenario_load(o->scenario, &sopt, o->overrides, diags, &sc);
        if (r < 0)
                return fail(rep, RUN_PHASE_LOAD, r, "cannot load '%s': %s", o->scenario,
                            r == -EINVAL ? "the scenario is invalid" : strerror(-r));
        c.sc = sc;
        c.o = o;
        if (o->stop && *o->stop) {
                r = fail(rep, RUN_PHASE_LOAD, -EINTR, "interrupted");
                goto out;
        }
        r = init_report(rep, sc);
        if (r < 0) {
                r = fail(rep, RUN_PHASE_LOAD, r, "out of memory");
                goto out;
        }
        rep->n_columns -= note_left_out(o, sc, diags);
        if (o->need_columns && sc->n_columns && !rep->n_columns) {
                r = fail(rep, RUN_PHASE_LOAD, -ENODATA, "'%s': " MAT4_ALL_TEXT, o->out);
                goto out;
        }
        if (o->input) {
                r = input_csv_read(o->input, sc, NULL, &inputs, &why);
                if (r < 0) {
                        r = fail(rep, RUN_PHASE_LOAD, r, "%s", why ? why : strerror(-r));
                        goto out;
                }
        }

        session_opts_default(&sess_opt);
        sess_opt.inputs = inputs;
        sess_opt.worker_path = o->worker_path;
        sess_opt.log = o->log;
        sess_opt.log_ctx = o->log_ctx;
        sess_opt.envp = o->envp;
        sess_opt.sandbox = o->sandbox;
        sess_opt.cancel = o->abandon;
        r = session_new(sc, &sess_opt, &s, &why);
        if (r < 0) {
                r = fail(rep, RUN_PHASE_START, r, "%s", why ? why : strerror(-r));
                goto out;
        }
        if (o->stop && *o->stop) {
                r = fail(rep, RUN_PHASE_START, -EINTR, "interrupted");
                goto out;
        }
        r = open_recorder(&c, o, rep);
        if (r < 0)
                goto out;

        master_opts_default(&mopt);
        mopt.sink = sink;
        mopt.sink_ctx = &c;
        mopt.note = note;
        mopt.note_ctx = &c;
        mopt.rollback_on_fault = sc->experiment.rollback_on_fault;
        mopt.idle = idle;
        mopt.idle_ctx = &c;
        mopt.inputs = inputs;
        r = master_new(s, &mopt, &m, &why);
        if (r < 0) {
                r = fail(rep, RUN_PHASE_START, r, "%s", why ? why : strerror(-r));
                goto out;
        }
        c.m = m;
        r = c.error ? c.error : drive(m, o, sc);
        /* Ended well: the FMUs' terminal computations, while their messages are still wanted. */
        if (!c.error && (r == MASTER_FINISHED || r == MASTER_STOPPED)) {
                rr = master_terminate(m);
                if (rr < 0)
                        r = rr;
        }
        report_stats(rep, s, m);
        if (c.error) {
                rep->phase = RUN_PHASE_RECORD;  /* the message once the file is closed */
                r = c.error;
                goto out;
        }
        if (r < 0 || rep->state == MASTER_FAULTED) {
                r = fail(rep, RUN_PHASE_RUN, r, "%s", master_message(m));
                goto out;
        }
        rep->phase = RUN_PHASE_DONE;
        r = 0;
out:
        master_free(m);
        session_free(s);
        rr = rec_close(c.rec, &rep->rec);
        if (c.rec && (rr < 0 || c.error < 0) && (r == 0 || rep->phase == RUN_PHASE_RECORD)) {
                char msg[2 * PATH_MAX + 256], where[PATH_MAX + 64];

                rr = c.error < 0 ? c.error : rr;
                /* Its rows wait in a CSV elsewhere: that is the file that failed. */
                if (c.csv_where)
                        snprintf(where, sizeof(where), "the rows of %s in %s", o->out, c.csv_where);
                row_rec_failure(msg, sizeof(msg), c.csv_where ? where : o->out, rr, &rep->rec);
                r = fail(rep, RUN_PHASE_RECORD, rr, "%s", msg);
        }
        /* The rows are all in the CSV once the recorder is closed. */
        if (c.rec && c.csv_fd >= 0)
                r = finish_mat(&c, o, rep, r);
        if (c.mat_fd >= 0)
                close(c.mat_fd);
        /* Not converted, or not renamed: the file of that name stays as it was. */
        if (c.mat_tmp) {
                (void) unlink(c.mat_tmp);
                free(c.mat_tmp);
        }
        if (c.csv_fd >= 0)
                close(c.csv_fd);
        free(c.types);
        free(c.values);
        free(why);
        input_table_free(inputs);
        scenario_free(sc);
        return r;
}

void run_report_fini(struct run_report *rep)
{
        for (size_t i = 0; i < rep->n_insts; i++) {
                free(rep->insts[i].name);
                free(rep->insts[i].fmu);
        }
        free(rep->insts);
        free(rep->message);
        free(rep->name);
        *rep = (struct run_report){ 0 };
}

int run_sandbox_user(uid_t *ret_uid, gid_t *ret_gid)
{
        struct sandbox_opts o = { 0 };

        return sandbox_user(&o, ret_uid, ret_gid);
}
