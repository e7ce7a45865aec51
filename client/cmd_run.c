/*
 * fmuctl run SCENARIO [options]: load a scenario (.ssp, .ssd, folder or
 * .fmu), run it to its stop time in worker processes, write the results as
 * CSV and print a one-screen summary. Through the daemon (cmd_run_daemon.c;
 * a private one when none answers), or in this process with --local
 * (engine/run/run.h), which this file does.
 */
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_run.h"
#include "commands.h"
#include "engine/engine.h"
#include "fmt.h"
#include "proto/paths.h"
#include "results_fetch.h"

enum { O_LOCAL = 1400, O_PRIVATE, O_FETCH };

static const struct cli_opt opts[] = {
        { "out", CLI_O_OUT, "FILE.csv", "results file (default: SCENARIO_out.csv here;\n"
                                        "through a shared daemon on this machine, the\n"
                                        "daemon's choice); .mat: MAT v4 (Dymola's layout,\n"
                                        "numbers only: String and Binary columns left out);\n"
                                        "-: the rows on standard output, the summary on stderr" },
        { "fetch", O_FETCH, NULL, "the daemon records in its own directory and fmuctl\n"
                                  "fetches the rows while it runs, writing --out here\n"
                                  "(always so for a daemon on another machine, and\n"
                                  "for .mat)" },
        { "quiet", 'q', NULL, "no progress and no summary" },
        { "local", O_LOCAL, NULL, "run in this process, without a daemon" },
        { "private", O_PRIVATE, NULL, "always start a private daemon" },
        { 0 },
};

static const struct cli_cmd def = {
        .name = "run",
        .usage = "SCENARIO [options]",
        .about = "Runs a scenario (.ssp, .ssd, a folder with SystemStructure.ssd, or one\n"
                 ".fmu) to its stop time, each FMU instance in its own worker process,\n"
                 "writes the results as CSV and prints a summary (--json: one JSON\n"
                 "object). The run goes through the daemon at the endpoint; when none\n"
                 "answers, fmuctl starts a private one for this run and stops it\n"
                 "afterwards.",
        .opts = { opts, cli_load_opts },
        .shared = CLI_SHARED_ALL,
        .footer = "Environment: FMUD_CACHE_DIR (where FMUs are unpacked), FMUD_WORKER,\n"
                  "FMUD_DAEMON (the fmud to start privately).",
};

/* Parse options into a; returns 0, -1 after --help, or an exit code. */
static int parse(int argc, char **argv, struct run_cmd *a)
{
        int c, r = 0;

        a->cli.def = &def;
        while (r == 0 && (c = cli_getopt(&a->cli, argc, argv)) > 0) {
                switch (c) {
                case 'q': a->quiet = true; break;
                case O_LOCAL: a->local = true; break;
                case O_PRIVATE: a->private_only = true; break;
                case O_FETCH: a->fetch_opt = true; break;
                default:
                        r = cli_load_option(&a->cli, &a->load, c, optarg);
                        if (r == 1)
                                r = 0;
                }
        }
        if (c < 0)
                return FMUCTL_EXIT_USAGE;
        if (r)
                return r;
        if (a->cli.help) {
                cli_help(&a->cli, stdout);
                return -1;
        }
        if (optind != argc - 1) {
                fprintf(stderr, "fmuctl run: expected exactly one scenario\n");
                cli_help(&a->cli, stderr);
                return FMUCTL_EXIT_USAGE;
        }
        a->scenario = argv[optind];
        return 0;
}

/* "path/to/msd.ssp" -> "msd_out.csv" */
static char *default_out(const char *scenario)
{
        char *copy = strdup(scenario), *base, *dot, *out = NULL;

        if (!copy)
                return NULL;
        base = basename(copy);
        dot = strrchr(base, '.');
        if (dot && dot != base)
                *dot = '\0';
        if (asprintf(&out, "%s_out.csv", base) < 0)
                out = NULL;
        free(copy);
        return out;
}

void run_progress_bar(double t, double start, double stop, double rtf, double left_s)
{
        const int width = 40;
        double frac = stop > start ? (t - start) / (stop - start) : 1;
        int fill = (int)(frac * width + 0.5);

        fill = fill < 0 ? 0 : fill > width ? width : fill;
        fprintf(stderr, "\r[%.*s%*s] t = %-10.6g rtf %.3gx ", fill,
                "########################################", width - fill, "", t, rtf);
        if (left_s >= 0 && frac < 1)
                fprintf(stderr, "%.0f s left ", ceil(left_s));
        fputs("\033[K", stderr);
        if (frac >= 1)
                fputc('\n', stderr);
        fflush(stderr);
}

static void progress(void *ctx, double t, double start, double stop, double rtf)
{
        (void)ctx;
        run_progress_bar(t, start, stop, rtf, rtf > 0 ? (stop - t) / rtf : -1);
}

static void log_message(void *ctx, size_t comp, const char *name, int status, const char *category,
                        const char *message)
{
        static const char *const level[] = { "info", "warning", "discard", "error", "fatal" };

        (void)ctx;
        (void)comp;
        if (!cli_log_shown(status, category, category ? strlen(category) : 0))
                return;
        /* An FMU's text, as a daemon's client prints it: no control reaches the terminal. */
        cli_put_clean(stderr, name, strlen(name));
        fprintf(stderr, ": %s [", level[status]);
        cli_put_clean(stderr, category ? category : "", category ? strlen(category) : 0);
        fputs("]: ", stderr);
        cli_put_clean(stderr, message, strlen(message));
        fputc('\n', stderr);
}

/* "fmuctl run: " PREFIX MESSAGE (an FMU's words may be in it, cleaned) or strerror(-r). */
static void say(const char *prefix, const char *message, int r)
{
        fprintf(stderr, "fmuctl run: %s", prefix);
        if (message)
                cli_put_clean(stderr, message, strlen(message));
        else
                fputs(strerror(-r), stderr);
        fputc('\n', stderr);
}

static void summary(FILE *f, const struct run_report *rep, const char *scenario, const char *out)
{
        fprintf(f, "scenario      %s (%s)\n", rep->name, scenario);
        fprintf(f, "experiment    t = %g .. %g, h = %g\n", rep->start, rep->stop, rep->step);
        fprintf(f, "instances     %zu\n", rep->n_insts);
        fprintf(f, "  %-20s %-20s %5s %10s %12s %12s %10s\n", "name", "model", "rate", "steps",
               "step us mean", "step us max", "tolerance");
        for (size_t i = 0; i < rep->n_insts; i++) {
                const struct run_inst_report *in = &rep->insts[i];
                char tol[FMT_NUM_MAX];

                fprintf(f, "  %-20s %-20s %5u %10llu %12.2f %12.2f %10s\n", in->name, in->fmu,
                       in->multirate, (unsigned long long)in->steps, in->step_us_mean,
                       in->step_us_max, in->tolerance_defined ? fmt_double(tol, in->tolerance) : "-");
        }
        fprintf(f, "points        %llu (%llu extra), %llu events, reached t = %g (%s)\n",
               (unsigned long long)rep->points, (unsigned long long)rep->extra_points,
               (unsigned long long)rep->events, rep->time, master_state_name(rep->state));
        fprintf(f, "wall time     %.3f s, real-time factor %.4gx\n", rep->wall_s, rep->rtf);
        fprintf(f, "master        %llu steps chained, %llu worker moves\n",
                (unsigned long long)rep->chained, (unsigned long long)rep->moves);
        if (rep->backend)
                fprintf(f, "results       %s: %llu rows, %zu columns (%s%s)\n", out,
                       (unsigned long long)rep->rec.rows_written, rep->n_columns, rep->backend,
                       rep->rec.dropped ? ", rows dropped" : "");
        if (rep->rec.dropped)
                fprintf(f, "dropped       %llu rows (the disk could not keep pace)\n",
                       (unsigned long long)rep->rec.dropped);
}

/*
 * Errors, and the first RUN_WARNINGS_SHOWN warnings: a model with a
 * warning on each of 100,000 variables says how many, not each.
 */
#define RUN_WARNINGS_SHOWN 20

static void print_diags(const struct diag_list *d, const char *indent, const char *scenario)
{
        size_t warnings = 0, total = diag_warnings(d);
        char line[2048];

        for (size_t i = 0; i < d->n; i++) {
                if (d->v[i].severity == DIAG_WARNING && warnings++ >= RUN_WARNINGS_SHOWN)
                        continue;
                diag_format(&d->v[i], line, sizeof(line));
                fprintf(stderr, "%s%s: ", indent, d->v[i].severity == DIAG_ERROR ? "error" : "warning");
                /* A value echoed from the command line may hold control characters (UTF-8 stays). */
                for (char *c = line; *c; c++)
                        if ((unsigned char)*c < 0x20 || *c == 0x7f)
                                *c = '?';
                fprintf(stderr, "%s\n", line);
        }
        /* Those not stored (the list full of errors, say) are not shown either. */
        if (warnings > RUN_WARNINGS_SHOWN)
                warnings = RUN_WARNINGS_SHOWN;
        if (total > warnings)
                fprintf(stderr, "%swarning: %zu more warnings not shown (fmuctl inspect %s lists "
                        "an FMU's)\n", indent, total - warnings, scenario);
        if (d->dropped)
                fprintf(stderr, "%serror: %zu more not shown\n", indent, d->dropped);
}

/*
 * --local: the overrides as engine/run/run.h takes them (names cut at '=' in
 * argv). The arrays of a->load: l's pointers to them are only set by
 * cli_load_paths(), which --local does not call.
 */
static void overrides(struct run_cmd *a, struct scenario_overrides *ov, struct scenario_assign *starts,
                     struct scenario_assign *multirate, const char **record)
{
        const struct proto_load *l = &a->load.l;

        *ov = (struct scenario_overrides){
                .has_start = l->has_start, .has_stop = l->has_stop, .has_step = l->has_step,
                .has_budget = l->has_budget, .has_warp = l->has_warp,
                .has_decimation = l->has_decimation, .start = l->start, .stop = l->stop,
                .step = l->step, .budget = l->budget, .warp = l->warp,
                .decimation = l->decimation,
                .has_tolerance = l->has_tolerance, .tolerance = l->tolerance,
                .rollback_on_fault = l->rollback_on_fault,
                .n_starts = l->n_starts, .starts = starts,
                .n_multirate = l->n_multirate, .multirate = multirate,
                .n_record = l->n_record, .record = record,
        };
        ov->has_overrun = l->overrun.len &&
                          scenario_overrun_parse(l->overrun.ptr, l->overrun.len, &ov->overrun) == 0;
        ov->has_overrun_margin = l->has_overrun_margin;
        ov->overrun_margin_us = l->overrun_margin_us;
        ov->has_spin = l->has_spin;
        ov->spin_us = l->spin_us;
        if (l->algorithm.len) {
                ov->has_algorithm = true;
                ov->algorithm = SCENARIO_GAUSS_SEIDEL;
        }
        for (uint32_t i = 0; i < l->n_starts; i++) {
                ((char *)a->load.starts[i].name.ptr)[a->load.starts[i].name.len] = '\0';
                starts[i] = (struct scenario_assign){ a->load.starts[i].name.ptr, a->load.starts[i].value.ptr };
        }
        for (uint32_t i = 0; i < l->n_multirate; i++) {
                ((char *)a->load.multirate[i].name.ptr)[a->load.multirate[i].name.len] = '\0';
                multirate[i] = (struct scenario_assign){ a->load.multirate[i].name.ptr,
                                                         a->load.multirate[i].value.ptr };
        }
        for (uint32_t i = 0; i < l->n_record; i++)
                record[i] = a->load.record[i].ptr;
}

/*
 * The exit code of a failed run_scenario(), as the same failure through a
 * daemon gives it (docs/fmuctl.md "Exit codes"): a scenario refused 1, a
 * file that cannot be read 3; workers, instantiation, initialization and
 * steps failing 4 (the daemon's fault), the results file 3.
 */
static int exit_code(enum run_phase phase, int r)
{
        switch (phase) {
        case RUN_PHASE_LOAD:
                return r == -EINVAL || r == -ENODATA ? FMUCTL_EXIT_INVALID : FMUCTL_EXIT_SYSTEM;
        case RUN_PHASE_START:
        case RUN_PHASE_RUN:
                return FMUCTL_EXIT_FAULT;
        case RUN_PHASE_RECORD:
        default:
                return FMUCTL_EXIT_SYSTEM;
        }
}

/*
 * Ctrl-C (or SIGTERM) asks for a stop at the next point. An FMU that does
 * not come back from its call within ABANDON_S, or a second signal, ends
 * the run at once: the call in flight is not waited for, its worker is
 * killed (run_opts.abandon), as a daemon's unload does after a stop that
 * timed out. A third signal ends fmuctl.
 */
#define ABANDON_S       5

static volatile sig_atomic_t local_stop;
/* The session's cancel flag (inst_opts.cancel): lock-free, so a handler may set it. */
static atomic_bool local_abandon;
_Static_assert(ATOMIC_BOOL_LOCK_FREE == 2, "a signal handler stores local_abandon");

static void on_local_signal(int sig)
{
        struct sigaction dfl = { .sa_handler = SIG_DFL };

        if (sig == SIGALRM) {
                if (local_stop)
                        atomic_store(&local_abandon, true);
                return;
        }
        if (!local_stop) {
                local_stop = sig;
                alarm(ABANDON_S);
                return;
        }
        atomic_store(&local_abandon, true);
        sigaction(sig, &dfl, NULL);
}

static int run_local(struct run_cmd *a)
{
        static struct scenario_assign starts[CLI_MAX_ASSIGN], multirate[CLI_MAX_ASSIGN];
        static const char *record[CLI_MAX_ASSIGN];
        struct scenario_overrides ov;
        struct run_opts o = { 0 };
        struct run_report rep;
        struct diag_list diags;
        struct sigaction sa = { .sa_handler = on_local_signal }, old_int, old_term, old_alrm;
        char *worker = NULL, *cache = NULL;
        int code, r;

        /* Real time is the daemon's to give (docs/fmuctl.md "Real time"): never silently dropped. */
        if (a->load.l.has_rt_priority || a->load.l.has_rt_worker_priority ||
            a->load.l.rt_cpus.len || a->load.l.rt_worker_cpus.len || a->load.l.rt_best_effort ||
            a->load.l.rt_mlock) {
                fprintf(stderr, "fmuctl run: the --rt-* options need a daemon, not --local\n");
                return FMUCTL_EXIT_USAGE;
        }
        /* A rig needs the daemon to hand it the session's rig channel. */
        if (a->load.l.n_rig_in || a->load.l.n_rig_out || a->load.l.rig_policy.len ||
            a->load.l.has_rig_timeout) {
                fprintf(stderr, "fmuctl run: the --rig-* options need a daemon, not --local\n");
                return FMUCTL_EXIT_USAGE;
        }
        overrides(a, &ov, starts, multirate, record);
        worker = paths_worker();
        cache = paths_cache();
        if (!worker || !cache) {
                fprintf(stderr, "fmuctl run: %s\n", !worker ? "cannot find fmud-worker (set FMUD_WORKER)" :
                        "out of memory");
                code = FMUCTL_EXIT_SYSTEM;
                goto out;
        }
        o = (struct run_opts){
                .scenario = a->scenario, .input = a->load.input,
                .out = a->to_stdout ? "standard output" : a->load.out,
                .out_fd = a->to_stdout ? STDOUT_FILENO : 0, .need_columns = true,
                .cache_dir = cache,
                .worker_path = worker, .overrides = &ov, .log = log_message,
                .strict = a->load.l.strict,
                .progress = !a->quiet && isatty(STDERR_FILENO) ? progress : NULL,
                .fsync = true,
                /* This user's own environment, as an importer in this process has. */
                .envp = environ,
        };
        /*
         * The workers are processes of their own here too, so they get the
         * sandbox a daemon's session would give them. Checked by
         * cli_load_option(): strict, basic, off, or empty (off).
         */
        if (a->load.l.sandbox.len)
                o.sandbox.mode = (enum sandbox_mode)sandbox_mode_parse(a->load.l.sandbox.ptr);
        /* Checked by cli_load_option(): anything else is empty (the defaults). */
        (void) fmu_interface_parse(a->load.l.iface.ptr, a->load.l.iface.len, &o.iface);
        (void) fmu_integrator_parse(a->load.l.integrator.ptr, a->load.l.integrator.len,
                                    &o.integrator);
        /* Ctrl-C stops the run at its next point; the rows so far are kept, as through a daemon. */
        sigemptyset(&sa.sa_mask);
        sigaction(SIGALRM, &sa, &old_alrm);
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
        o.stop = &local_stop;
        o.abandon = &local_abandon;
        diag_list_init(&diags, 0);
        r = run_scenario(&o, &diags, &rep);
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        alarm(0);
        sigaction(SIGALRM, &old_alrm, NULL);
        /* Warnings of an accepted scenario (FMUs loaded with warnings) are shown too. */
        if (r >= 0)
                print_diags(&diags, "", a->scenario);
        if (r == -EINTR && local_stop) {
                fprintf(stderr, "fmuctl run: interrupted before the run started\n");
                code = FMUCTL_EXIT_INTERRUPTED;
        } else if (r < 0 && atomic_load(&local_abandon)) {
                /* Why: an FMU that did not come back, killed (rep.message names it). */
                fputs(o.progress ? "\n" : "", stderr);
                if (rep.message)
                        say("interrupted: ", rep.message, r);
                else
                        fputs("fmuctl run: interrupted\n", stderr);
                if (rep.phase >= RUN_PHASE_RUN)
                        fprintf(stderr, "fmuctl run: the results end at t = %g\n", rep.time);
                code = FMUCTL_EXIT_INTERRUPTED;
        } else if (r < 0 && local_stop && rep.phase >= RUN_PHASE_RUN) {
                /* Stopped, then its end failed (a Terminate): said, as through a daemon. */
                fprintf(stderr, "%sfmuctl run: interrupted at t = %g\n", o.progress ? "\n" : "",
                        rep.time);
                say("then: ", rep.message, r);
                code = FMUCTL_EXIT_INTERRUPTED;
        } else if (r < 0) {
                say("", rep.message, r);
                print_diags(&diags, "  ", a->scenario);
                code = exit_code(rep.phase, r);
        } else if (local_stop && rep.state != MASTER_FINISHED) {
                fprintf(stderr, "%sfmuctl run: interrupted at t = %g\n",
                        o.progress ? "\n" : "", rep.time);
                code = FMUCTL_EXIT_INTERRUPTED;
        } else {
                code = FMUCTL_EXIT_OK;
        }
        if (a->cli.json && rep.phase >= RUN_PHASE_RUN)
                run_json_finish(run_json_local(&rep, a->scenario, o.out), code);
        else if (!a->quiet && rep.phase >= RUN_PHASE_RUN)
                summary(a->report, &rep, a->scenario, o.out);
        run_report_fini(&rep);
        diag_list_fini(&diags);
out:
        free(worker);
        free(cache);
        return code;
}

int cmd_run(int argc, char **argv)
{
        struct run_cmd a = { .cli = { .cmd = "run" } };
        int code;

        code = parse(argc, argv, &a);
        if (code)
                return code < 0 ? FMUCTL_EXIT_OK : code;
        a.report = stdout;
        if (a.load.out && !strcmp(a.load.out, "-") && a.cli.json) {
                fprintf(stderr, "fmuctl run: --json and --out - both want standard output\n"
                        "(see 'fmuctl run --help')\n");
                return FMUCTL_EXIT_USAGE;
        }
        if (a.load.out && !strcmp(a.load.out, "-")) {
                a.to_stdout = true;
                a.load.out = NULL;
                a.report = stderr;
        } else if (!a.load.out)
                a.load.out = a.out_default = default_out(a.scenario);
        if (!a.load.out && !a.to_stdout) {
                fprintf(stderr, "fmuctl run: out of memory\n");
                return FMUCTL_EXIT_SYSTEM;
        }
        code = a.local ? run_local(&a) : run_daemon(&a);
        cli_load_fini(&a.load);
        free(a.out_default);
        return code;
}
