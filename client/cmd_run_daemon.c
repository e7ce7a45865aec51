/*
 * cmd_run_daemon: fmuctl run through a daemon (cmd_run.h): connect (a
 * short hello; a private daemon when none answers), load with the output
 * file, start, follow the run (state events, and the status every ~100 ms
 * for the progress bar), unload, and print the summary fmuctl run --local
 * prints, as far as the daemon reports it.
 */
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd_run.h"
#include "commands.h"
#include "fmt.h"
#include "results_fetch.h"
#include "run_out.h"

#define PROBE_TIMEOUT_MS 300
#define POLL_MS 100
#define HEADER_WAIT_MS 10000  /* a .mat's header before the start, at most */

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
        (void)sig;
        interrupted = 1;
}

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Connect to the endpoint, or to a private daemon when none answers. */
static int connect_any(struct run_cmd *a, struct private_daemon *d)
{
        char buf[4096], err[4096], *dirs[3] = { NULL, NULL, NULL }, *copy;
        const char *allow[3];
        size_t n_allow;
        struct fmud_opts o = { .connect_timeout_ms = PROBE_TIMEOUT_MS, .client_name = "fmuctl run" };
        const char *ep = cli_endpoint(&a->cli, buf, sizeof(buf));
        int code, r;

        /*
         * On ipc, a missing listener is refused at once (-ECONNREFUSED), so
         * one that listens is a daemon, perhaps busy: give it time to answer.
         */
        if (ep && !strncmp(ep, "ipc://", 6))
                o.connect_timeout_ms = 5000;
        if (!a->private_only && ep && !a->cli.server_key_file && !a->cli.key_file &&
            !getenv("FMUD_SERVER_KEY") && cli_ipc_denied(ep, err, sizeof(err))) {
                const char *env = getenv("FMUD_ENDPOINT");

                /* A daemon asked for by name is not replaced by a private one. */
                if (a->cli.endpoint || (env && *env)) {
                        fprintf(stderr, "fmuctl: %s\n", err);
                        return FMUCTL_EXIT_INVALID;
                }
        } else if (!a->private_only && ep && !a->cli.server_key_file && !a->cli.key_file &&
                   !getenv("FMUD_SERVER_KEY")) {
                r = fmud_connect(ep, &o, &a->cli.c, err, sizeof(err));
                if (r == 0) {
                        a->ipc = !strncmp(ep, "ipc://", 6);
                        /*
                         * A shared daemon writes a client's file only below its
                         * output directories: without --out, the daemon chooses
                         * (its state directory) and the status says where.
                         */
                        if (a->out_default)
                                a->load.l.out = (struct proto_str){ 0 };
                        return 0;
                }
                if (r != -ECONNREFUSED && r != -ETIMEDOUT) {
                        fprintf(stderr, "fmuctl: cannot connect to '%s': %s\n", ep, err);
                        return r == -EINTR ? FMUCTL_EXIT_INTERRUPTED : FMUCTL_EXIT_SYSTEM;
                }
        } else if (!a->private_only) {
                /* CURVE: a remote daemon was asked for; never fall back to a private one. */
                a->ipc = ep && !strncmp(ep, "ipc://", 6);
                return cli_open(&a->cli);
        }
        copy = strdup(a->load.l.path.ptr);
        if (copy)
                dirs[0] = strdup(dirname(copy));
        free(copy);
        copy = a->load.l.out.len ? strdup(a->load.l.out.ptr) : NULL;
        if (copy)
                dirs[1] = strdup(dirname(copy));
        free(copy);
        copy = a->load.l.input.len ? strdup(a->load.l.input.ptr) : NULL;
        if (copy)
                dirs[2] = strdup(dirname(copy));
        free(copy);
        if (!dirs[0] || (a->load.l.out.len && !dirs[1]) || (a->load.l.input.len && !dirs[2])) {
                fprintf(stderr, "fmuctl run: out of memory\n");
                code = FMUCTL_EXIT_SYSTEM;
                goto out;
        }
        allow[0] = dirs[0];
        n_allow = 1;
        if (dirs[1] && strcmp(dirs[0], dirs[1]))
                allow[n_allow++] = dirs[1];
        if (dirs[2] && strcmp(dirs[0], dirs[2]) && (!dirs[1] || strcmp(dirs[1], dirs[2])))
                allow[n_allow++] = dirs[2];
        /* The results file's folder is where this run writes: the one output directory. */
        code = private_daemon_start(d, allow, n_allow, dirs[1]);
        if (code)
                goto out;
        /*
         * A private daemon runs as this user, for this run alone: it replaces
         * the results file as --local does (a shared daemon asks for --force).
         */
        a->load.l.force = true;
        a->ipc = true;
        a->cli.endpoint = d->endpoint;
        code = cli_open(&a->cli);
        a->cli.endpoint = NULL;
out:
        free(dirs[0]);
        free(dirs[1]);
        free(dirs[2]);
        return code;
}

struct follow {
        double wall_start, wall_s;
        enum proto_state state;
        double time;
        bool bar;                       /* a progress bar is on the line */
        uint64_t log_seq;               /* the last FMU message printed */
        double start, stop, rtf;        /* for the bar's last draw */
};

/* The session ended: note where, and leave the progress bar at its end. */
static void finish(struct follow *f, enum proto_state state, double time)
{
        f->wall_s = now_s() - f->wall_start;
        f->state = state;
        f->time = time;
        if (!f->bar)
                return;
        run_progress_bar(time, f->start, f->stop, f->rtf, 0);
        if (f->stop > f->start && (time - f->start) / (f->stop - f->start) < 1)
                fputc('\n', stderr);
}

/* An FMU's message on stderr, as --local prints them (cli_log_shown()), each once. */
static void print_log(struct follow *f, const struct proto_log *l)
{
        if (l->seq <= f->log_seq)
                return;
        f->log_seq = l->seq;
        if (!cli_log_shown((int)l->status, l->category.ptr, l->category.len))
                return;
        if (f->bar)
                fputc('\n', stderr);
        cli_print_log(stderr, l);
}

/*
 * The messages the daemon kept that were not printed: those of the load,
 * and any PUB lost (a gap in their numbers, or the last ones before the end).
 */
static void print_kept_logs(struct run_cmd *a, const struct proto_target *t, struct follow *f)
{
        struct proto_logs_result l;

        if (fmud_logs(a->cli.c, t, &l) < 0)
                return;
        for (uint32_t i = 0; i < l.n; i++)
                print_log(f, &l.messages[i]);
}

/*
 * --fetch: the rows complete so far, written here while the session runs.
 * A failure (a write here, the daemon's answer) ends the fetching, and is
 * reported when the session is over.
 */
static void fetch_some(struct run_cmd *a, const struct proto_target *t)
{
        int r;

        if (!a->fetch || a->fetch_r < 0 || a->fetched.done)
                return;
        r = results_fetch_pump(&a->fetched, a->cli.c, t, a->fetch_err, sizeof(a->fetch_err));
        if (r < 0)
                a->fetch_r = r;
}

/* The rest once the session has ended (the daemon has closed its file). */
static int fetch_rest(struct run_cmd *a, const struct proto_target *t)
{
        int r = 0;

        fetch_some(a, t);
        while (a->fetch_r == 0 && !a->fetched.done && !interrupted) {
                /* Not done once the session ended: the file was not closed yet; ask again. */
                nanosleep(&(struct timespec){ 0, POLL_MS * 1000000L }, NULL);
                fetch_some(a, t);
        }
        r = a->fetch_r;
        if (results_fetch_close(&a->fetched, a->fetch_err, sizeof(a->fetch_err)) < 0 && !r)
                r = -EIO;
        a->fetch = false;
        if (r < 0 && a->fetched.daemon_err) {
                fprintf(stderr, "fmuctl run: cannot fetch the results: ");
                cli_put_clean(stderr, a->fetch_err, strlen(a->fetch_err));
                fputc('\n', stderr);
        } else if (r < 0) {
                fprintf(stderr, "fmuctl run: %s\n", a->fetch_err);
        }
        return r < 0 ? FMUCTL_EXIT_SYSTEM : 0;
}

/*
 * A .mat fetched here: its header, served once the session is loaded,
 * read before the start, so that one of text columns only (nothing a
 * .mat file can hold) is refused before the run, not after it. 0, or the
 * exit code (the converter's message is said by fetch_rest()).
 */
static int check_mat_header(struct run_cmd *a, const struct proto_target *t)
{
        /* The recorder writes the header at the load; its flush is waited for. */
        for (int i = 0; i < HEADER_WAIT_MS / POLL_MS && !interrupted; i++) {
                fetch_some(a, t);
                if (a->fetch_r < 0 || a->fetched.header_done)
                        break;
                nanosleep(&(struct timespec){ 0, POLL_MS * 1000000L }, NULL);
        }
        /* One that cannot be written here is said now, not after the run. */
        return a->fetch_r == -ENODATA ? FMUCTL_EXIT_INVALID : a->fetch_r < 0 ? FMUCTL_EXIT_SYSTEM : 0;
}

/* Until the session ends; 0, or a libfmud error. */
static int follow(struct run_cmd *a, const struct proto_target *t, struct follow *f)
{
        struct proto_session_status st;
        bool bar = !a->quiet && isatty(STDERR_FILENO);
        struct fmud_msg m;
        double last = 0, rate;
        int r;

        for (;;) {
                r = fmud_next(a->cli.c, POLL_MS, &m);
                if (interrupted)
                        return -EINTR;
                if (r < 0 && r != -EAGAIN && r != -EPROTO) {
                        /* No events (none published, or lost): the status polls suffice. */
                        struct timespec ts = { 0, POLL_MS * 1000000L };

                        nanosleep(&ts, NULL);
                        if (interrupted)
                                return -EINTR;
                }
                if (r == 0 && m.kind == FMUD_MSG_LOG && m.log.session == t->session) {
                        if (m.log.seq > f->log_seq + 1)
                                print_kept_logs(a, t, f);
                        print_log(f, &m.log);
                }
                if (r == 0 && m.kind == FMUD_MSG_EVENT && m.event.session == t->session &&
                    cli_ended(m.event.state)) {
                        print_kept_logs(a, t, f);
                        finish(f, m.event.state, m.event.time);
                        return 0;
                }
                if (now_s() - last < POLL_MS * 1e-3)
                        continue;
                last = now_s();
                fetch_some(a, t);
                r = fmud_status(a->cli.c, t->session, &st);
                if (r < 0)
                        return r;
                if (bar && st.state != PROTO_STATE_LOADED) {
                        /* Simulated seconds per wall second, seen from here. */
                        rate = (st.time - st.start) / (last - f->wall_start);
                        run_progress_bar(st.time, st.start, st.stop, st.real_time_factor,
                                         rate > 0 ? (st.stop - st.time) / rate : -1);
                        *f = (struct follow){ .wall_start = f->wall_start, .bar = true,
                                              .log_seq = f->log_seq,
                                              .start = st.start, .stop = st.stop,
                                              .rtf = st.real_time_factor };
                }
                if (cli_ended(st.state)) {
                        print_kept_logs(a, t, f);
                        finish(f, st.state, st.time);
                        return 0;
                }
        }
}

/* The summary lines fmuctl run --local prints, from the final status. */
static void summary(const struct run_cmd *a, const struct proto_session_status *s,
                    const struct follow *fw)
{
        FILE *f = a->report;
        const char *st = proto_state_name(s->state);

        fprintf(f, "scenario      %.*s (%s)\n", (int)s->name.len, s->name.ptr, a->scenario);
        fprintf(f, "experiment    t = %g .. %g, h = %g\n", s->start, s->stop, s->step);
        fprintf(f, "instances     %u\n", s->n_insts);
        fprintf(f, "  %-20s %-20s %5s %10s %12s %12s %10s\n", "name", "model", "rate", "steps",
               "step us mean", "step us max", "tolerance");
        for (uint32_t i = 0; i < s->n_insts; i++) {
                const struct proto_inst_status *in = &s->insts[i];
                char tol[FMT_NUM_MAX];

                fprintf(f, "  %-20.*s %-20.*s %5u %10llu %12.2f %12.2f %10s\n", (int)in->name.len,
                       in->name.ptr, (int)in->fmu.len, in->fmu.ptr, in->multirate,
                       (unsigned long long)in->steps, in->step_us_mean, in->step_us_max,
                       in->has_tolerance ? fmt_double(tol, in->tolerance) : "-");
        }
        fprintf(f, "points        %llu (%llu extra), %llu events, reached t = %g (%s)\n",
               (unsigned long long)s->points, (unsigned long long)s->extra_points,
               (unsigned long long)s->events, s->time, st ? st : "unknown");
        fprintf(f, "wall time     %.3f s, real-time factor %.4gx\n", fw->wall_s,
               fw->wall_s > 0 ? (s->time - s->start) / fw->wall_s : 0.0);
        if (s->warp > 0)
                fprintf(f, "pacing        warp %g, worst lag %.3g s; lateness p50 %.0f us, p99 %.0f us, "
                       "p99.9 %.0f us, max %.0f us; %llu overruns\n", s->warp, s->lag_max_s,
                       s->lateness.p50_us, s->lateness.p99_us, s->lateness.p999_us,
                       s->lateness.max_us, (unsigned long long)s->overruns);
        fprintf(f, "master        %llu steps chained, %llu worker moves\n",
               (unsigned long long)s->chained_steps, (unsigned long long)s->worker_moves);
}

/*
 * Columns of the header line after the time column. A name with a comma
 * (the element of a matrix, "x[1,2]") is quoted, RFC 4180: commas and
 * line ends inside quotes are the name's, and a doubled quote stays inside.
 */
static size_t header_columns(FILE *fp)
{
        bool quoted = false;
        size_t cols = 0;
        int ch;

        while ((ch = getc(fp)) != EOF && (quoted || ch != '\n')) {
                if (ch == '"')
                        quoted = !quoted;
                else if (ch == ',' && !quoted)
                        cols++;
        }
        return cols;
}

/*
 * "results FILE: N rows, M columns (backend)": the rows, the backend and
 * the rows dropped from the daemon's status, the columns from the header
 * of the file it wrote (reading a file of millions of rows just to count
 * them took longer than the run).
 */
/* What the results line needs of the final status, kept past the requests after it. */
struct kept {
        uint64_t rows, dropped;
        char recorder[32];
};

/* The columns of the file at out (0 when it cannot be read). */
static size_t file_columns(const char *out)
{
        FILE *fp = fopen(out, "re");
        size_t cols;

        if (!fp)
                return 0;
        cols = header_columns(fp);
        fclose(fp);
        return cols;
}

/* out NULL: the rows were fetched, cols counted on the way. */
static void results_line(FILE *f, const char *name, const char *out, size_t cols,
                         const struct kept *s)
{
        FILE *fp = out ? fopen(out, "re") : NULL;

        /* the time column is not counted, as --local does */
        if (out && !fp) {
                fprintf(f, "results       %s: not written (%s)\n", name, strerror(errno));
                return;
        }
        if (fp) {
                cols = header_columns(fp);
                fclose(fp);
        }
        fprintf(f, "results       %s: %llu rows, %zu columns", name, (unsigned long long)s->rows,
                cols);
        if (s->recorder[0])
                fprintf(f, " (%s%s)", s->recorder, s->dropped ? ", rows dropped" : "");
        fprintf(f, "\n");
        if (s->dropped)
                fprintf(f, "dropped       %llu rows (the disk could not keep pace)\n",
                        (unsigned long long)s->dropped);
}

/*
 * --out - through a daemon: the daemon wrote the rows to its results file
 * for this session (its state directory's, this user's own); they are
 * copied to stdout once the session is unloaded (the file complete), and
 * the file and its directory removed (run_out.c: only that file, never
 * another the daemon names). The rows are the file's: complete, where a
 * subscription may drop samples of a subscriber that falls behind.
 * 0, or an exit code after printing why (a daemon on another machine).
 */
static int copy_out(const struct run_cmd *a, const char *path, uint64_t session)
{
        void (*old_pipe)(int);
        char err[1024];
        int r;

        if (!a->ipc) {
                fprintf(stderr, "fmuctl run: --out - needs a daemon on this machine (an ipc:// "
                        "endpoint): use --local, or --out FILE.csv\n");
                return FMUCTL_EXIT_SYSTEM;
        }
        /*
         * A reader that left (| head) is a write error, not the end of
         * fmuctl by SIGPIPE: the daemon's file is still removed, and a
         * private daemon's directory after it.
         */
        old_pipe = signal(SIGPIPE, SIG_IGN);
        r = run_out_take(path, session, stdout, err, sizeof(err));
        signal(SIGPIPE, old_pipe);
        if (r == 0)
                return FMUCTL_EXIT_OK;
        fprintf(stderr, "fmuctl run: ");
        cli_put_clean(stderr, err, strlen(err));
        fputc('\n', stderr);
        return r == -EPERM ? FMUCTL_EXIT_INVALID : FMUCTL_EXIT_SYSTEM;
}

static void clean_names(struct proto_session_status *s)
{
        /* The daemon's text goes to a terminal: no control characters. */
        for (uint32_t k = 0; k < s->recorder.len; k++)
                if (s->recorder.ptr[k] < 0x20 || s->recorder.ptr[k] >= 0x7f)
                        s->recorder.len = k;
        for (uint32_t i = 0; i < s->n_insts; i++) {
                struct proto_inst_status *in = (struct proto_inst_status *)&s->insts[i];

                for (uint32_t k = 0; k < in->name.len; k++)
                        if (in->name.ptr[k] < 0x20 || in->name.ptr[k] >= 0x7f)
                                in->name.len = k;
                for (uint32_t k = 0; k < in->fmu.len; k++)
                        if (in->fmu.ptr[k] < 0x20 || in->fmu.ptr[k] >= 0x7f)
                                in->fmu.len = k;
        }
        for (uint32_t k = 0; k < s->name.len; k++)
                if (s->name.ptr[k] < 0x20 || s->name.ptr[k] >= 0x7f)
                        s->name.len = k;
}

static bool results_failed(const struct proto_session_status *s)
{
        return s->results.len == 6 && !memcmp(s->results.ptr, "failed", 6);
}

/* Load, start, follow, report; returns the exit code. The session is unloaded. */
static int run_session(struct run_cmd *a)
{
        struct proto_session_status st = { 0 };
        struct proto_progress p;
        struct proto_target t = { 0 };
        struct follow f = { 0 };
        char *out = NULL;               /* the results file, as the daemon named it */
        const char *shown;              /* ... and as the summary names it */
        struct json_object *js = NULL;  /* --json: the summary, printed last */
        struct kept rec = { 0 };
        bool fetched = a->fetch;        /* the rows come here (fetch_rest() clears a->fetch) */
        int r, code = FMUCTL_EXIT_OK;

        /*
         * Leased to this connection: killed, this process leaves nothing
         * running. follow() asks for the status every POLL_MS, far more
         * often than a third of any transient_grace the daemon accepts.
         */
        a->load.l.transient = true;
        r = cli_load_send(&a->cli, &a->load, &t.session, &t.generation, &code);
        if (r < 0 && code)
                return code;
        if (r == -EINTR || (r < 0 && interrupted)) {
                /* Ctrl-C while the daemon loads: said as in the run; the lease unloads it. */
                fprintf(stderr, "fmuctl run: interrupted\n");
                return FMUCTL_EXIT_INTERRUPTED;
        }
        if (r < 0) {
                code = cli_fail(&a->cli, r, "load '%s'", a->scenario);
                if (r == FMUD_E_REFUSED && fmud_errcode(a->cli.c) == PROTO_E_DENIED &&
                    strstr(fmud_errmsg(a->cli.c), "not below"))
                        fprintf(stderr, "  (the daemon does not allow that directory; --private or "
                                "--local run without it)\n");
                return code;
        }
        cli_print_load_warnings(&a->cli);
        if (!fmud_load_out(a->cli.c)) {
                /* A daemon that records no scenario without columns (before the time-only file). */
                fprintf(stderr, "fmuctl run: the daemon opened no results file for '%s'\n",
                        a->scenario);
                code = FMUCTL_EXIT_INVALID;
                goto unload;
        }
        out = strdup(fmud_load_out(a->cli.c));
        if (!out) {
                fprintf(stderr, "fmuctl run: out of memory\n");
                code = FMUCTL_EXIT_SYSTEM;
                goto unload;
        }
        if (a->fetch && a->fetched.to_mat && (code = check_mat_header(a, &t)) != 0)
                goto unload;
        (void)fmud_events(a->cli.c, true);      /* without events, status polls still see the end */
        (void)fmud_logs_follow(a->cli.c, t.session, true);
        print_kept_logs(a, &t, &f);
        f.wall_start = now_s();
        r = fmud_start(a->cli.c, &t, &p);
        if (r == 0)
                r = follow(a, &t, &f);
        if (r == -EINTR || interrupted) {
                struct proto_progress sp;

                fmud_set_timeout(a->cli.c, 5000);
                fprintf(stderr, "\nfmuctl run: interrupted\n");
                /* The stop terminates the FMUs: one whose Terminate failed says so. */
                if (fmud_stop(a->cli.c, &t, &sp) == 0 && sp.state == PROTO_STATE_FAULTED &&
                    sp.message.len) {
                        fprintf(stderr, "fmuctl run: then: ");
                        cli_put_clean(stderr, sp.message.ptr, sp.message.len);
                        fputc('\n', stderr);
                }
                code = FMUCTL_EXIT_INTERRUPTED;
        } else if (r < 0) {
                if (f.bar)
                        fputc('\n', stderr);
                code = cli_fail(&a->cli, r, "run session %llu", (unsigned long long)t.session);
        } else if ((r = fmud_status(a->cli.c, t.session, &st)) < 0) {
                code = cli_fail(&a->cli, r, "get the status of session %llu",
                                (unsigned long long)t.session);
        } else {
                clean_names(&st);
                if (f.state == PROTO_STATE_FAULTED || results_failed(&st)) {
                        fprintf(stderr, "fmuctl run: ");
                        cli_put_clean(stderr, st.message.ptr, st.message.len);
                        fputc('\n', stderr);
                        /* The results file failed: a file, not the FMUs (exit code 3). */
                        code = results_failed(&st) ? FMUCTL_EXIT_SYSTEM : FMUCTL_EXIT_FAULT;
                } else if (f.state == PROTO_STATE_STOPPED) {
                        fprintf(stderr, "fmuctl run: the session was stopped at t = %g\n", f.time);
                        code = FMUCTL_EXIT_INVALID;
                }
                if (a->cli.json)
                        js = run_json_daemon(&st, a->scenario, f.wall_s);
                else if (!a->quiet)
                        summary(a, &st, &f);
                /* st is borrowed until the next request: what the results line needs, kept. */
                rec = (struct kept){ .rows = st.rows_recorded, .dropped = st.rows_dropped };
                snprintf(rec.recorder, sizeof(rec.recorder), "%.*s", (int)st.recorder.len,
                         st.recorder.ptr ? st.recorder.ptr : "");
        }
unload:
        /* Before the unload, which takes the daemon's file with it. */
        if (a->fetch && out) {
                r = fetch_rest(a, &t);
                if (r && code == FMUCTL_EXIT_OK)
                        code = r;
        }
        fmud_set_timeout(a->cli.c, 30000);
        r = fmud_unload(a->cli.c, &t);
        if (r < 0 && code == FMUCTL_EXIT_OK)
                code = cli_fail(&a->cli, r, "unload session %llu", (unsigned long long)t.session);
        /* Without --out a shared daemon chose the file: name the one it wrote. */
        shown = a->load.l.out.len || fetched ? a->load.out : out;
        if (js && out && r == 0)
                run_json_results(js, shown, rec.rows, fetched ? a->fetched.cols : file_columns(out),
                                 rec.recorder, strlen(rec.recorder), rec.dropped);
        else if (!a->quiet && code != FMUCTL_EXIT_INTERRUPTED && out && r == 0 && !js)
                results_line(a->report, a->to_stdout ? "standard output" : shown,
                             fetched ? NULL : out, a->fetched.cols, &rec);
        if (a->to_stdout && out && r == 0 && !fetched) {
                r = copy_out(a, out, t.session);
                if (code == FMUCTL_EXIT_OK)
                        code = r;
        }
        if (js)
                run_json_finish(js, code);
        free(out);
        return code;
}

int run_daemon(struct run_cmd *a)
{
        struct private_daemon d = { .pid = -1 };
        struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
        int code;

        code = cli_load_paths(&a->cli, &a->load, a->scenario);
        if (code)
                return code;
        /* No SA_RESTART: Ctrl-C must end a wait, then the session is stopped cleanly. */
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
        code = connect_any(a, &d);
        /* The daemon cannot write here, nor .mat: it records in its directory, fmuctl fetches. */
        a->fetch = code == 0 && (a->fetch_opt || !a->ipc || mat4_wanted(a->load.out));
        if (a->fetch) {
                a->load.l.out = (struct proto_str){ 0 };
                a->load.l.force = false;
                if (results_fetch_open(&a->fetched, a->to_stdout ? NULL : a->load.out,
                                       a->fetch_err, sizeof(a->fetch_err)) < 0) {
                        fprintf(stderr, "fmuctl run: %s\n", a->fetch_err);
                        code = FMUCTL_EXIT_SYSTEM;
                }
        }
        if (code == 0)
                code = run_session(a);
        /* Not fetched (no load, nothing recorded): the file here is left as it was. */
        if (a->fetch)
                (void) results_fetch_close(&a->fetched, a->fetch_err, sizeof(a->fetch_err));
        if ((code == FMUCTL_EXIT_SYSTEM || code == FMUCTL_EXIT_FAULT) && d.pid > 0)
                private_daemon_tail(&d);
        cli_close(&a->cli);
        if (d.pid > 0 || d.dir)
                private_daemon_stop(&d);
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        return code;
}
