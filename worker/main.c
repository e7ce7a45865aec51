/*
 * fmud-worker: hosts one FMU instance for the daemon.
 *
 *     fmud-worker --channel-fd N --fmu-dir DIR [--sandbox off|basic|strict
 *                 --scratch DIR --hide DIR --mem-limit BYTES --cpu-limit SEC
 *                 --on-violation errno|kill --uid N --gid N] [--mlock [--mlock-limit BYTES]]
 *                 [--interface cs|me|se] [--integrator bdf|adams]
 *
 * N is the channel memfd the daemon passed (usually 3), DIR the unpacked
 * FMU. The sandbox (sandbox.h) is applied before the FMU's library is
 * loaded and reported before HELLO; --scratch is the instance's scratch
 * directory (TMPDIR, working directory, the one writable place), --hide
 * a directory strict mode covers (the daemon's run directory), --uid
 * and --gid whom a root worker becomes. --mlock locks the worker's
 * memory (mlock.c) before anything else, reported after the sandbox;
 * --mlock-limit is the most it may lock (RLIMIT_MEMLOCK, the kernel's to
 * enforce; absent: its address-space limit, none without a sandbox). The
 * worker serves the daemon's requests until FREE, then exits 0; 1 when
 * it could not start (the reason went out in the HELLO event), 2 when the
 * daemon went away or broke the protocol, 64 for bad arguments.
 * It prints nothing: everything it has to say goes through the channel,
 * and so does what the FMU prints (output.c).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "worker/me.h"
#include "worker/sandbox.h"
#include "worker/worker.h"

static int arg_fd = -1;
static const char *arg_dir;
static struct sandbox_opts arg_sandbox;
static const char *arg_scratch;
static bool arg_mlock;
static uint64_t arg_mlock_limit;        /* 0: none given */

static int parse_u64(const char *s, uint64_t max, uint64_t *ret)
{
        unsigned long long v;
        char *end;

        if (!*s || *s == '-')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno || *end || v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}

static int parse_args(int argc, char *argv[])
{
        static const struct option opts[] = {
                { "channel-fd", required_argument, NULL, 'c' },
                { "fmu-dir", required_argument, NULL, 'd' },
                { "sandbox", required_argument, NULL, 's' },
                { "scratch", required_argument, NULL, 't' },
                { "hide", required_argument, NULL, 'h' },
                { "mem-limit", required_argument, NULL, 'm' },
                { "cpu-limit", required_argument, NULL, 'p' },
                { "on-violation", required_argument, NULL, 'v' },
                { "uid", required_argument, NULL, 'u' },
                { "require-all", no_argument, NULL, 'r' },
                { "skip-layer", required_argument, NULL, 'k' },
                { "gid", required_argument, NULL, 'g' },
                { "mlock", no_argument, NULL, 'l' },
                { "mlock-limit", required_argument, NULL, 'L' },
                { "interface", required_argument, NULL, 'i' },
                { "integrator", required_argument, NULL, 'I' },
                { 0 },
        };
        uint64_t u;
        int c, m;

        while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                char *end;
                long v;

                switch (c) {
                case 'c':
                        errno = 0;
                        v = strtol(optarg, &end, 10);
                        if (errno || *end || v < 0 || v > 65535)
                                return -EINVAL;
                        arg_fd = (int)v;
                        break;
                case 'd':
                        arg_dir = optarg;
                        break;
                case 's':
                        m = sandbox_mode_parse(optarg);
                        if (m < 0)
                                return m;
                        arg_sandbox.mode = (enum sandbox_mode)m;
                        break;
                case 't':
                        arg_scratch = optarg;
                        break;
                case 'h':
                        if (optarg[0] != '/')
                                return -EINVAL;
                        arg_sandbox.hide = optarg;
                        break;
                case 'm':
                        if (parse_u64(optarg, UINT64_MAX, &arg_sandbox.mem_limit) < 0)
                                return -EINVAL;
                        break;
                case 'p':
                        if (parse_u64(optarg, UINT32_MAX, &arg_sandbox.cpu_limit_s) < 0)
                                return -EINVAL;
                        break;
                case 'v':
                        if (strcmp(optarg, "errno") && strcmp(optarg, "kill"))
                                return -EINVAL;
                        arg_sandbox.kill_on_violation = !strcmp(optarg, "kill");
                        break;
                case 'r':
                        arg_sandbox.require_all = true;
                        break;
                case 'k':
                        m = sandbox_layer_parse(optarg);
                        if (m < 0)
                                return m;
                        arg_sandbox.skip_layers |= 1u << m;
                        break;
                case 'u':
                case 'g':
                        /* (uid_t)-1 means "unchanged" to setresuid: never a target. */
                        if (parse_u64(optarg, UINT32_MAX - 1, &u) < 0)
                                return -EINVAL;
                        if (c == 'u')
                                arg_sandbox.uid = (uid_t)u;
                        else
                                arg_sandbox.gid = (gid_t)u;
                        break;
                case 'l':
                        arg_mlock = true;
                        break;
                case 'L':
                        if (parse_u64(optarg, UINT64_MAX, &arg_mlock_limit) < 0 ||
                            !arg_mlock_limit)
                                return -EINVAL;
                        break;
                case 'i':
                        if (strcmp(optarg, "me") && strcmp(optarg, "cs") && strcmp(optarg, "se"))
                                return -EINVAL;
                        me_opts.model_exchange = !strcmp(optarg, "me");
                        me_opts.scheduled_execution = !strcmp(optarg, "se");
                        break;
                case 'I':
                        m = fmu_integrator_parse(optarg, strlen(optarg), &me_opts.integrator);
                        if (m < 0)
                                return m;
                        break;
                default:
                        return -EINVAL;
                }
        }
        return optind == argc && arg_fd >= 0 && arg_dir ? 0 : -EINVAL;
}

int main(int argc, char *argv[])
{
        struct sandbox_args sb;
        struct worker *w;
        int code;

        if (parse_args(argc, argv) < 0)
                return 64;
        /* A worker outlives no daemon: the spawner sets this too, before exec. */
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        /* Line by line, as on a terminal: a worker killed mid-step loses no whole line. */
        (void) setvbuf(stdout, NULL, _IOLBF, 0);
        /* While the daemon's privileges last, before seccomp; reported after the sandbox. */
        if (arg_mlock)
                (void) worker_lock_memory(&arg_sandbox, arg_mlock_limit);
        /* Before anything of the FMU runs; worker_open() reports it before HELLO. */
        sb = (struct sandbox_args){
                .opts = arg_sandbox, .fmu_dir = arg_dir, .scratch = arg_scratch, .chan_fd = arg_fd,
                .fmu_fd = -1,
        };
        (void) sandbox_apply(&sb);
        /*
         * What an FMU prints (printf is common in exports) goes to the
         * session's log as its instance's "stdout" and "stderr" lines
         * (output.c), never into the importer's stdout, which may be the
         * results (fmuctl run --local --out -): after the sandbox, which
         * closes every fd it does not know. If that fails, it goes where
         * diagnostics go.
         */
        if (output_capture() < 0)
                (void) dup2(STDERR_FILENO, STDOUT_FILENO);
        if (worker_open(arg_fd, sandbox_fmu_path() ? sandbox_fmu_path() : arg_dir, &w) < 0)
                return 1;
        code = worker_run(w);
        worker_close(w);
        return code;
}
