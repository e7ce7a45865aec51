/*
 * cli_load: the options that shape a load (fmuctl load and fmuctl run),
 * parsed into a struct proto_load (cli.h). Paths are made absolute here:
 * the daemon has another working directory.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "engine/engine.h"

const struct cli_opt cli_load_opts[] = {
        { "force", CLI_O_FORCE, NULL, "replace the --out file even when it is not this\n"
                                     "client's results from an earlier run" },
        { "input", CLI_O_INPUT, "FILE.csv", "drive unconnected inputs from FILE.csv (header\n"
                                           "time,<input>...; see docs/fmuctl.md)" },
        { "start-time", CLI_O_T0, "T", "override the start time" },
        { "stop-time", CLI_O_T1, "T", "override the stop time (also --stop T)" },
        { "stop", CLI_O_T1, "T", NULL },
        { "step", CLI_O_STEP, "H", "override the base communication step" },
        { "start", CLI_O_START, "NAME=VALUE", "a start value or parameter (instance.variable in\n"
                                             "a system, the bare name for one FMU); repeatable;\n"
                                             "also --set NAME=VALUE" },
        { "set", CLI_O_START, "NAME=VALUE", NULL },
        { "multirate", CLI_O_MULTI, "INST=M", "step INST every M-th point; repeatable" },
        { "record", CLI_O_REC, "NAME", "record this variable (instead of the scenario's\n"
                                      "choice); repeatable" },
        { "decimation", CLI_O_DEC, "K", "record every K-th point" },
        { "budget", CLI_O_BUDGET, "S", "wall-clock seconds allowed per coupled step; inf:\n"
                                      "none" },
        { "warp", CLI_O_WARP, "W", "run at W times real time (0: as fast as possible)" },
        { "overrun", CLI_O_OVERRUN, "POLICY", "paced: a point done after its deadline plus the\n"
          "margin: none (catch up), soft (counted, re-based),\n"
          "hard (the session faults)" },
        { "overrun-margin-us", CLI_O_OVERRUN_MARGIN, "US", "paced: microseconds a point may be "
          "late\nbefore it is an overrun" },
        { "spin-us", CLI_O_SPIN, "US", "paced: spin the last US microseconds before each\n"
          "deadline instead of sleeping" },
        { "tolerance", CLI_O_TOL, "TOL", "relative tolerance for every FMU, 0 < TOL < 1\n"
                                        "(default: each FMU's DefaultExperiment tolerance)" },
        { "gauss-seidel", CLI_O_GS, NULL, "Gauss-Seidel order instead of Jacobi" },
        { "interface", CLI_O_IFACE, "cs|me|se", "host FMUs that have several interfaces as\n"
          "Co-Simulation (the default), Model Exchange or\nScheduled Execution" },
        { "integrator", CLI_O_INTEGRATOR, "bdf|adams", "how a worker integrates a Model Exchange\n"
          "FMU: CVODE BDF (stiff, the default) or Adams" },
        { "sandbox", CLI_O_SANDBOX, "MODE",
          "this session's sandbox: strict, basic or off (no weaker\n"
          "than the daemon's)" },
        { "strict", CLI_O_STRICT, NULL, "refuse FMUs with warnings too (see fmuctl inspect)" },
        { "rollback-on-fault", CLI_O_ROLLBACK, NULL,
          "save every FMU state before each step, so that a fault\n"
          "holds every instance at the last good point" },
        { "rt-priority", CLI_O_RT_PRIO, "N", "SCHED_FIFO priority N (1-99) for the session's\n"
                                            "master thread (docs/fmuctl.md, real time)" },
        { "rt-worker-priority", CLI_O_RT_WPRIO, "N", "SCHED_FIFO priority N for every worker thread" },
        { "rt-cpus", CLI_O_RT_CPUS, "LIST", "pin the master thread to these cpus (0-1,3)" },
        { "rt-worker-cpus", CLI_O_RT_WCPUS, "LIST", "pin every worker thread to these cpus" },
        { "rt-best-effort", CLI_O_RT_BEST, NULL, "load even when the kernel refuses a real-time\n"
                                                "option (status says which and why)" },
        { "rt-mlock", CLI_O_RT_MLOCK, NULL, "every worker locks its memory (mlockall) before\n"
                                           "its sandbox" },
        { "rig-in", CLI_O_RIG_IN, "NAME[=SAFE]", "a rig port: an unconnected input a rig writes at\n"
          "every point, SAFE its value under --rig-policy safe;\n"
          "repeatable (docs/scenarios.md, rig ports)" },
        { "rig-out", CLI_O_RIG_OUT, "NAME", "a rig port: an output a rig reads at every point;\n"
          "repeatable" },
        { "rig-policy", CLI_O_RIG_POLICY, "POLICY", "when the rig vanishes: hold (last values),\n"
          "safe (the SAFE values), pause (the session)" },
        { "rig-timeout", CLI_O_RIG_TIMEOUT, "MS", "the rig has vanished when its heartbeat is this\n"
          "old (1-60000 ms; default 100)" },
        { "upload", CLI_O_UPLOAD, NULL, "send the files to the daemon and load them by\n"
                                         "content (default: when the daemon cannot open them)" },
        { "no-upload", CLI_O_NO_UPLOAD, NULL, "never send the files: the daemon opens the paths" },
        { "transient", CLI_O_TRANSIENT, NULL, "unload the session when this connection goes quiet\n"
                                             "(fmuctl run always does)" },
        { 0 },
};

static int assign(const struct cli *a, const char *opt, char *arg, struct proto_assign *v,
                  uint32_t *n)
{
        char *eq = strchr(arg, '=');

        if (*n == CLI_MAX_ASSIGN)
                return cli_usage_error(a, "at most %d %s options", CLI_MAX_ASSIGN, opt);
        if (!eq || eq == arg)
                return cli_usage_error(a, "%s needs NAME=VALUE, not '%s'", opt, arg);
        v[*n] = (struct proto_assign){
                .name = { arg, (uint32_t)(eq - arg) },
                .value = { eq + 1, (uint32_t)strlen(eq + 1) },
        };
        (*n)++;
        return 1;
}

static int num(const struct cli *a, const char *opt, const char *arg, double *v, bool *has)
{
        int r = cli_number(a, opt, arg, v);

        if (r)
                return r;
        *has = true;
        return 1;
}

/*
 * A number at least min (above it when !inclusive): what the daemon would
 * refuse as invalid is a bad command line, found here (exit code 2).
 */
static int bounded(const struct cli *a, const char *opt, const char *arg, double min, bool inclusive,
                   const char *what, double *v, bool *has)
{
        double d;

        if (cli_number(a, opt, arg, &d))
                return FMUCTL_EXIT_USAGE;
        if (inclusive ? !(d >= min) : !(d > min))
                return cli_usage_error(a, "%s needs %s, not '%s'", opt, what, arg);
        *v = d;
        *has = true;
        return 1;
}

/*
 * --budget S: seconds > 0, or inf / infinity (any case) for none, which the
 * protocol carries as +inf (proto/PROTOCOL.md, load). 0, negative numbers,
 * -inf and nan mean no budget of any kind: refused here.
 */
static int budget(const struct cli *a, const char *arg, struct proto_load *p)
{
        char *end;
        double d;

        errno = 0;
        d = strtod(arg, &end);
        if (errno || end == arg || *end || isnan(d) || !(d > 0))
                return cli_usage_error(a, "--budget needs seconds > 0, or inf for none, not '%s'",
                                       arg);
        p->budget = d;
        p->has_budget = true;
        return 1;
}

/* --rt-priority N, --rt-worker-priority N: 0 (none) to 99. */
static int priority(const struct cli *a, const char *opt, const char *arg, uint32_t *v,
                    bool *has)
{
        uint64_t k;

        if (cli_count(a, opt, arg, &k) || k > 99)
                return cli_usage_error(a, "%s needs a SCHED_FIFO priority, 1 to 99 (0: none)",
                                       opt);
        *v = (uint32_t)k;
        *has = true;
        return 1;
}

/*
 * --out FILE: the format is named by the extension: CSV, what the
 * recorder writes (engine/record/recorder.h), or .mat (MAT v4), converted
 * from those rows at the end (engine/record/mat4_csv.h: by the daemon for
 * load, by fmuctl for run, which fetches the rows). Any other is refused here rather than
 * written as CSV under a misleading name; `-` (standard output) is for
 * fmuctl run only, where fmuctl itself prints.
 */
static int out_file(const struct cli *a, struct cli_load *l, char *arg)
{
        bool run = a->def && !strcmp(a->def->name, "run");
        const char *slash = strrchr(arg, '/'), *base = slash ? slash + 1 : arg;
        const char *dot = strrchr(base, '.');

        if (!strcmp(arg, "-") && run) {
                l->out = arg;
                return 1;
        }
        if (!dot || dot == base || (strcasecmp(dot, ".csv") && !mat4_wanted(arg)))
                return cli_usage_error(a, "--out '%s': cannot write %s%s; the formats are: .csv "
                                       "(CSV), .mat (MAT v4)%s", arg,
                                       dot && dot != base ? "the format " : "",
                                       dot && dot != base ? dot : "a file without an extension",
                                       run ? ", - (CSV on standard output)" : "");
        l->out = arg;
        return 1;
}

int cli_load_option(const struct cli *a, struct cli_load *l, int opt, char *arg)
{
        struct proto_load *p = &l->l;
        uint64_t k;

        switch (opt) {
        case CLI_O_OUT: return out_file(a, l, arg);
        case CLI_O_INPUT: l->input = arg; return 1;
        case CLI_O_T0: return num(a, "--start-time", arg, &p->start, &p->has_start);
        case CLI_O_T1: return num(a, "--stop-time", arg, &p->stop, &p->has_stop);
        case CLI_O_STEP:
                return bounded(a, "--step", arg, 0, false, "a step > 0", &p->step, &p->has_step);
        case CLI_O_BUDGET: return budget(a, arg, p);
        case CLI_O_WARP:
                return bounded(a, "--warp", arg, 0, true, "a factor >= 0 (0: as fast as possible)",
                               &p->warp, &p->has_warp);
        case CLI_O_OVERRUN:
                if (strcmp(arg, "none") && strcmp(arg, "soft") && strcmp(arg, "hard"))
                        return cli_usage_error(a, "--overrun needs none, soft or hard, not '%s'",
                                               arg);
                p->overrun = (struct proto_str){ arg, (uint32_t)strlen(arg) };
                return 1;
        case CLI_O_OVERRUN_MARGIN:
                return bounded(a, "--overrun-margin-us", arg, 0, true, "microseconds >= 0",
                               &p->overrun_margin_us, &p->has_overrun_margin);
        case CLI_O_SPIN:
                return bounded(a, "--spin-us", arg, 0, true, "microseconds >= 0", &p->spin_us,
                               &p->has_spin);
        case CLI_O_TOL:
                if (bounded(a, "--tolerance", arg, 0, false, "a number above 0 and below 1",
                            &p->tolerance, &p->has_tolerance) != 1)
                        return FMUCTL_EXIT_USAGE;
                if (!(p->tolerance < 1))
                        return cli_usage_error(a, "--tolerance needs a number above 0 and below 1, "
                                               "not '%s'", arg);
                return 1;
        case CLI_O_DEC:
                if (cli_count(a, "--decimation", arg, &k) || k < 1 || k > 1000000000)
                        return cli_usage_error(a, "--decimation needs a whole number >= 1");
                p->decimation = k;
                p->has_decimation = true;
                return 1;
        case CLI_O_START: return assign(a, "--start", arg, l->starts, &p->n_starts);
        case CLI_O_MULTI: return assign(a, "--multirate", arg, l->multirate, &p->n_multirate);
        case CLI_O_REC:
                if (p->n_record == CLI_MAX_ASSIGN)
                        return cli_usage_error(a, "at most %d --record options", CLI_MAX_ASSIGN);
                l->record[p->n_record++] = (struct proto_str){ arg, (uint32_t)strlen(arg) };
                return 1;
        case CLI_O_RIG_IN:
        case CLI_O_RIG_OUT: {
                bool in = opt == CLI_O_RIG_IN;
                uint32_t *n = in ? &p->n_rig_in : &p->n_rig_out;

                if (*n == CLI_MAX_ASSIGN)
                        return cli_usage_error(a, "at most %d %s options", CLI_MAX_ASSIGN,
                                               in ? "--rig-in" : "--rig-out");
                (in ? l->rig_in : l->rig_out)[(*n)++] = (struct proto_str){
                        arg, (uint32_t)strlen(arg) };
                p->rig_in = l->rig_in;
                p->rig_out = l->rig_out;
                return 1;
        }
        case CLI_O_RIG_POLICY:
                if (strcmp(arg, "hold") && strcmp(arg, "safe") && strcmp(arg, "pause"))
                        return cli_usage_error(a, "--rig-policy needs hold, safe or pause, not "
                                               "'%s'", arg);
                p->rig_policy = (struct proto_str){ arg, (uint32_t)strlen(arg) };
                return 1;
        case CLI_O_RIG_TIMEOUT:
                if (cli_count(a, "--rig-timeout", arg, &k) || k < 1 || k > 60000)
                        return cli_usage_error(a, "--rig-timeout needs milliseconds, 1 to 60000");
                p->rig_timeout_ms = (uint32_t)k;
                p->has_rig_timeout = true;
                return 1;
        case CLI_O_GS:
                p->algorithm = (struct proto_str){ "gauss-seidel", 12 };
                return 1;
        case CLI_O_IFACE:
                if (strcmp(arg, "cs") && strcmp(arg, "me") && strcmp(arg, "se"))
                        return cli_usage_error(a, "--interface needs cs, me or se, not '%s'", arg);
                p->iface = (struct proto_str){ arg, (uint32_t)strlen(arg) };
                return 1;
        case CLI_O_INTEGRATOR:
                if (strcmp(arg, "bdf") && strcmp(arg, "adams"))
                        return cli_usage_error(a, "--integrator needs bdf or adams, not '%s'", arg);
                p->integrator = (struct proto_str){ arg, (uint32_t)strlen(arg) };
                return 1;
        case CLI_O_STRICT:
                p->strict = true;
                return 1;
        case CLI_O_ROLLBACK:
                p->rollback_on_fault = true;
                return 1;
        case CLI_O_TRANSIENT:
                p->transient = true;
                return 1;
        case CLI_O_FORCE:
                p->force = true;
                return 1;
        case CLI_O_UPLOAD:
        case CLI_O_NO_UPLOAD:
                l->upload = opt == CLI_O_UPLOAD ? CLI_UPLOAD_FORCE : CLI_UPLOAD_NEVER;
                return 1;
        case CLI_O_RT_PRIO:
                return priority(a, "--rt-priority", arg, &p->rt_priority, &p->has_rt_priority);
        case CLI_O_RT_WPRIO:
                return priority(a, "--rt-worker-priority", arg, &p->rt_worker_priority,
                                &p->has_rt_worker_priority);
        case CLI_O_RT_CPUS:
                p->rt_cpus = (struct proto_str){ arg, (uint32_t)strlen(arg) };
                return 1;
        case CLI_O_RT_WCPUS:
                p->rt_worker_cpus = (struct proto_str){ arg, (uint32_t)strlen(arg) };
                return 1;
        case CLI_O_RT_BEST:
                p->rt_best_effort = true;
                return 1;
        case CLI_O_RT_MLOCK:
                p->rt_mlock = true;
                return 1;
        case CLI_O_SANDBOX:
                if (strcmp(arg, "strict") && strcmp(arg, "basic") && strcmp(arg, "off"))
                        return cli_usage_error(a, "--sandbox needs strict, basic or off");
                p->sandbox = (struct proto_str){ arg, (uint32_t)strlen(arg) };
                return 1;
        default:
                return 0;
        }
}

char *cli_abspath(const char *path)
{
        char *copy, *dir, *base, *rdir, *out = NULL;

        if (!path || !*path)
                return NULL;
        out = realpath(path, NULL);
        if (out)
                return out;
        /* Not there yet (an output file): resolve its directory. */
        copy = strdup(path);
        if (!copy)
                return NULL;
        dir = strdup(dirname(copy));
        free(copy);
        copy = strdup(path);
        if (!dir || !copy)
                goto out;
        base = basename(copy);
        rdir = realpath(dir, NULL);
        if (rdir && asprintf(&out, "%s/%s", strcmp(rdir, "/") ? rdir : "", base) < 0)
                out = NULL;
        free(rdir);
out:
        free(dir);
        free(copy);
        return out;
}

int cli_load_paths(const struct cli *a, struct cli_load *l, const char *path)
{
        l->path_abs = realpath(path, NULL);
        if (!l->path_abs) {
                /* A file we cannot reach failed us, as in fmuctl run --local. */
                fprintf(stderr, "fmuctl %s: cannot read '%s': %s\n", a->cmd, path, strerror(errno));
                return FMUCTL_EXIT_SYSTEM;
        }
        l->l.path = (struct proto_str){ l->path_abs, (uint32_t)strlen(l->path_abs) };
        if (l->out) {
                l->out_abs = cli_abspath(l->out);
                if (!l->out_abs) {
                        fprintf(stderr, "fmuctl %s: cannot write '%s': %s\n", a->cmd, l->out,
                                strerror(errno ? errno : ENOENT));
                        return FMUCTL_EXIT_SYSTEM;      /* as --local's, and a file to read */
                }
                l->l.out = (struct proto_str){ l->out_abs, (uint32_t)strlen(l->out_abs) };
        }
        if (l->input) {
                l->input_abs = realpath(l->input, NULL);
                if (!l->input_abs) {
                        fprintf(stderr, "fmuctl %s: cannot read '%s': %s\n", a->cmd, l->input,
                                strerror(errno));
                        return FMUCTL_EXIT_SYSTEM;
                }
                l->l.input = (struct proto_str){ l->input_abs, (uint32_t)strlen(l->input_abs) };
        }
        l->l.starts = l->starts;
        l->l.multirate = l->multirate;
        l->l.record = l->record;
        return 0;
}

void cli_load_fini(struct cli_load *l)
{
        free(l->path_abs);
        free(l->out_abs);
        free(l->input_abs);
        l->path_abs = l->out_abs = l->input_abs = NULL;
        for (uint32_t i = 0; i < l->l.n_files; i++)
                free(l->file_names[i]);
        l->l.n_files = 0;
}

void cli_print_load_warnings(const struct cli *a)
{
        const char *w = fmud_load_warnings(a->c), *nl;

        for (; w && *w; w = nl ? nl + 1 : w + strlen(w)) {
                nl = strchr(w, '\n');
                fputs("warning: ", stderr);
                cli_put_clean(stderr, w, nl ? (size_t)(nl - w) : strlen(w));
                fputc('\n', stderr);
        }
}
