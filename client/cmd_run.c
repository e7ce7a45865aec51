/*
 * fmuctl run SCENARIO [options]: load a scenario (.ssp, .ssd, folder or
 * .fmu), run it to its stop time in worker processes, write the results as
 * CSV and print a one-screen summary. Runs without a daemon (daemon/run.h).
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "daemon/run.h"
#include "paths.h"

#define MAX_ASSIGN 256

struct run_args {
        struct scenario_overrides ov;
        struct scenario_assign starts[MAX_ASSIGN];
        struct scenario_assign multirate[MAX_ASSIGN];
        const char *record[MAX_ASSIGN];
        const char *out;
        char *out_default;
        const char *scenario;
        bool quiet;
};

static void usage(FILE *f)
{
        fprintf(f, "usage: fmuctl run SCENARIO [options]\n"
                   "\n"
                   "Runs a scenario (.ssp, .ssd, a folder with SystemStructure.ssd, or one\n"
                   ".fmu) to its stop time, each FMU instance in its own worker process,\n"
                   "writes the results as CSV and prints a summary.\n"
                   "\n"
                   "  --out FILE.csv        results file (default: SCENARIO_out.csv here)\n"
                   "  --start-time T        override the start time\n"
                   "  --stop-time T         override the stop time\n"
                   "  --step H              override the base communication step\n"
                   "  --start NAME=VALUE    a start value or parameter (instance.variable in\n"
                   "                        a system, the bare name for one FMU); repeatable\n"
                   "  --multirate INST=M    step INST every M-th point; repeatable\n"
                   "  --record NAME         record this variable (instead of the scenario's\n"
                   "                        choice); repeatable\n"
                   "  --decimation K        record every K-th point\n"
                   "  --budget S            wall-clock seconds allowed per coupled step\n"
                   "  --warp W              run at W times real time (0: as fast as possible)\n"
                   "  --gauss-seidel        Gauss-Seidel order instead of Jacobi\n"
                   "  --quiet               no progress and no summary\n"
                   "\n"
                   "Environment: FMUD_CACHE_DIR (where FMUs are unpacked), FMUD_WORKER.\n");
}

static int number(const char *opt, const char *s, double *ret)
{
        char *end;
        double d;

        errno = 0;
        d = strtod(s, &end);
        if (errno || end == s || *end || !isfinite(d)) {
                fprintf(stderr, "fmuctl run: %s needs a finite number, not '%s'\n", opt, s);
                return -EINVAL;
        }
        *ret = d;
        return 0;
}

static int assign(const char *opt, char *arg, struct scenario_assign *v, size_t *n)
{
        if (*n == MAX_ASSIGN) {
                fprintf(stderr, "fmuctl run: at most %d %s options\n", MAX_ASSIGN, opt);
                return -E2BIG;
        }
        if (scenario_assign_split(arg, &v[*n]) < 0) {
                fprintf(stderr, "fmuctl run: %s needs NAME=VALUE, not '%s'\n", opt, arg);
                return -EINVAL;
        }
        (*n)++;
        return 0;
}

/* Parse options into a; returns 0, or an exit code. */
static int parse(int argc, char **argv, struct run_args *a)
{
        enum { O_OUT = 256, O_T0, O_T1, O_STEP, O_START, O_MULTI, O_REC, O_DEC, O_BUDGET, O_WARP, O_GS };
        static const struct option opts[] = {
                { "out", required_argument, NULL, O_OUT },
                { "start-time", required_argument, NULL, O_T0 },
                { "stop-time", required_argument, NULL, O_T1 },
                { "step", required_argument, NULL, O_STEP },
                { "start", required_argument, NULL, O_START },
                { "multirate", required_argument, NULL, O_MULTI },
                { "record", required_argument, NULL, O_REC },
                { "decimation", required_argument, NULL, O_DEC },
                { "budget", required_argument, NULL, O_BUDGET },
                { "warp", required_argument, NULL, O_WARP },
                { "gauss-seidel", no_argument, NULL, O_GS },
                { "quiet", no_argument, NULL, 'q' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        struct scenario_overrides *ov = &a->ov;
        double d;
        int c, r = 0;

        optind = 1;
        while (r == 0 && (c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
                switch (c) {
                case O_OUT: a->out = optarg; break;
                case O_T0: r = number("--start-time", optarg, &ov->start); ov->has_start = true; break;
                case O_T1: r = number("--stop-time", optarg, &ov->stop); ov->has_stop = true; break;
                case O_STEP: r = number("--step", optarg, &ov->step); ov->has_step = true; break;
                case O_BUDGET: r = number("--budget", optarg, &ov->budget); ov->has_budget = true; break;
                case O_WARP: r = number("--warp", optarg, &ov->warp); ov->has_warp = true; break;
                case O_DEC:
                        r = number("--decimation", optarg, &d);
                        if (r == 0 && (d < 1 || d != floor(d) || d > 1e9)) {
                                fprintf(stderr, "fmuctl run: --decimation needs a whole number >= 1\n");
                                r = -EINVAL;
                        }
                        ov->decimation = (uint64_t)d;
                        ov->has_decimation = true;
                        break;
                case O_START: r = assign("--start", optarg, a->starts, &ov->n_starts); break;
                case O_MULTI: r = assign("--multirate", optarg, a->multirate, &ov->n_multirate); break;
                case O_REC:
                        if (ov->n_record == MAX_ASSIGN)
                                r = -E2BIG;
                        else
                                a->record[ov->n_record++] = optarg;
                        break;
                case O_GS:
                        ov->has_algorithm = true;
                        ov->algorithm = SCENARIO_GAUSS_SEIDEL;
                        break;
                case 'q': a->quiet = true; break;
                case 'h': usage(stdout); return -1;
                default: usage(stderr); return FMUCTL_EXIT_USAGE;
                }
        }
        if (r < 0)
                return FMUCTL_EXIT_USAGE;
        if (optind != argc - 1) {
                fprintf(stderr, "fmuctl run: expected exactly one scenario\n");
                usage(stderr);
                return FMUCTL_EXIT_USAGE;
        }
        a->scenario = argv[optind];
        ov->starts = a->starts;
        ov->multirate = a->multirate;
        ov->record = a->record;
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

static void progress(void *ctx, double t, double start, double stop, double rtf)
{
        const int width = 40;
        double frac = stop > start ? (t - start) / (stop - start) : 1;
        int fill = (int)(frac * width + 0.5);

        (void)ctx;
        fill = fill < 0 ? 0 : fill > width ? width : fill;
        fprintf(stderr, "\r[%.*s%*s] t = %-10.6g rtf %.3gx ", fill,
                "########################################", width - fill, "", t, rtf);
        if (frac >= 1)
                fputc('\n', stderr);
        fflush(stderr);
}

static void log_message(void *ctx, size_t comp, const char *name, int status, const char *category,
                        const char *message)
{
        static const char *const level[] = { "info", "warning", "discard", "error", "fatal" };

        (void)ctx;
        (void)comp;
        if (status > 0 && status < 5)
                fprintf(stderr, "%s: %s [%s]: %s\n", name, level[status], category ? category : "", message);
}

static void summary(const struct run_report *rep, const char *scenario, const char *out)
{
        printf("scenario      %s (%s)\n", rep->name, scenario);
        printf("experiment    t = %g .. %g, h = %g\n", rep->start, rep->stop, rep->step);
        printf("instances     %zu\n", rep->n_insts);
        printf("  %-20s %-20s %5s %10s %12s %12s\n", "name", "model", "rate", "steps",
               "step us mean", "step us max");
        for (size_t i = 0; i < rep->n_insts; i++) {
                const struct run_inst_report *in = &rep->insts[i];

                printf("  %-20s %-20s %5u %10llu %12.2f %12.2f\n", in->name, in->fmu, in->multirate,
                       (unsigned long long)in->steps, in->step_us_mean, in->step_us_max);
        }
        printf("points        %llu (%llu extra), %llu events, reached t = %g (%s)\n",
               (unsigned long long)rep->points, (unsigned long long)rep->extra_points,
               (unsigned long long)rep->events, rep->time, master_state_name(rep->state));
        printf("wall time     %.3f s, real-time factor %.4gx\n", rep->wall_s, rep->rtf);
        if (rep->backend)
                printf("results       %s: %llu rows, %zu columns (%s%s)\n", out,
                       (unsigned long long)rep->rec.rows, rep->n_columns, rep->backend,
                       rep->rec.dropped ? ", rows dropped" : "");
        if (rep->rec.dropped)
                printf("dropped       %llu rows (the disk could not keep pace)\n",
                       (unsigned long long)rep->rec.dropped);
}

static void print_diags(const struct diag_list *d)
{
        char line[2048];

        for (size_t i = 0; i < d->n; i++) {
                diag_format(&d->v[i], line, sizeof(line));
                fprintf(stderr, "  %s: %s\n", d->v[i].severity == DIAG_ERROR ? "error" : "warning", line);
        }
}

int cmd_run(int argc, char **argv)
{
        struct run_args a = { 0 };
        struct run_opts o = { 0 };
        struct run_report rep;
        struct diag_list diags;
        char *worker = NULL, *cache = NULL;
        int code, r;

        code = parse(argc, argv, &a);
        if (code)
                return code < 0 ? FMUCTL_EXIT_OK : code;
        worker = paths_worker();
        cache = paths_cache();
        if (!a.out)
                a.out = a.out_default = default_out(a.scenario);
        if (!worker || !cache || !a.out) {
                fprintf(stderr, "fmuctl run: %s\n", !worker ? "cannot find fmud-worker (set FMUD_WORKER)" :
                        "out of memory");
                code = FMUCTL_EXIT_SYSTEM;
                goto out;
        }
        o = (struct run_opts){
                .scenario = a.scenario, .out = a.out, .cache_dir = cache, .worker_path = worker,
                .overrides = &a.ov, .log = log_message,
                .progress = !a.quiet && isatty(STDERR_FILENO) ? progress : NULL,
        };
        diag_list_init(&diags, 0);
        r = run_scenario(&o, &diags, &rep);
        if (r < 0) {
                fprintf(stderr, "fmuctl run: %s\n", rep.message ? rep.message : strerror(-r));
                print_diags(&diags);
                code = rep.phase == RUN_PHASE_LOAD && r != -EINVAL ? FMUCTL_EXIT_SYSTEM :
                       rep.phase == RUN_PHASE_RECORD ? FMUCTL_EXIT_SYSTEM : FMUCTL_EXIT_INVALID;
        } else {
                code = FMUCTL_EXIT_OK;
        }
        if (!a.quiet && rep.phase >= RUN_PHASE_RUN)
                summary(&rep, a.scenario, a.out);
        run_report_fini(&rep);
        diag_list_fini(&diags);
out:
        free(worker);
        free(cache);
        free(a.out_default);
        return code;
}
