/*
 * fmud: the co-simulation daemon. Reads its settings (config.h), binds
 * the control sockets (control.h), hosts sessions (host.h) and serves
 * until SIGTERM, SIGINT or a shutdown request. It stays in the
 * foreground (systemd Type=notify, or a parent waiting on --ready-fd).
 *
 * DESIGN: the main thread blocks the signals it handles before any
 * other thread exists (ZeroMQ's I/O threads, the ZAP handler, session
 * threads inherit the mask), then becomes the control thread and takes
 * them from a signalfd in its loop. Before serving, it kills the workers
 * and removes the scratch directories a daemon that died on the same
 * scratch root left (leftovers.h). On the way out: host_free() (sessions
 * stopped, workers ended, results flushed, scratch directories removed),
 * the last replies sent, sockets closed, socket files and the
 * directories we created for this run removed, exit 0. Every directory
 * is made (dirs.h) before a socket is bound, and readiness (the log
 * line, --ready-fd, READY=1) is announced only once the sessions' host
 * has started too.
 */
#include <errno.h>
#include <math.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/config.h"
#include "daemon/control.h"
#include "daemon/control_log.h"
#include "daemon/dirs.h"
#include "daemon/host.h"
#include "engine/instance/instance.h"
#include "engine/instance/leftovers.h"
#include "daemon/notify.h"
#include "daemon/worker_env.h"

#ifndef FMUD_VERSION
#define FMUD_VERSION "unknown"
#endif

struct daemon {
        struct fmud_config cfg;
        struct fmud_args args;
        const char *config_path;
        bool config_required;
        struct host *host;
        struct dirs dirs;               /* what this run made, removed at exit */
        char **worker_env;              /* the workers' environment (worker_env.h), from the start */
};

static void usage(FILE *f)
{
        fprintf(f,
                "usage: fmud [--config FILE | --no-config] [--endpoint ipc://PATH]\n"
                "            [--pub-endpoint ipc://PATH]\n"
                "            [--allow DIR]... [--output-dir DIR]... [--state-dir DIR]\n"
                "            [--cache-dir DIR] [--scratch-dir DIR] [--worker PATH]\n"
                "            [--sandbox strict|basic|off] [--worker-mlock-max SIZE|infinity]\n"
                "            [--pass-env NAMES] [--ready-fd N] [--version]\n"
                "       fmud --check-config [FILE] [options]\n"
                "\n"
                "Serves co-simulation sessions over ZeroMQ. Settings come from FILE\n"
                "(default $FMUD_CONFIG, else " CONFIG_DEFAULT_PATH ", built-in defaults when\n"
                "it does not exist; --no-config: none); options override it.\n"
                "--ready-fd N: write \"READY\\n\" to descriptor N once serving.\n"
                "--check-config: check FILE (or --config's, or the default) and the paths it\n"
                "names, print each problem as FILE:LINE, exit 0 when there is none, else 1;\n"
                "nothing is opened or created.\n");
}

static int load_config(struct daemon *d, struct fmud_config *cfg, char *err, size_t errlen)
{
        int r;

        config_init(cfg);
        r = d->args.no_config ? 0 :
            config_load(cfg, d->config_path, d->config_required, err, errlen);
        if (r == 0)
                r = config_apply_args(cfg, &d->args, err, errlen);
        if (r == 0)
                r = config_finish(cfg, err, errlen);
        if (r < 0)
                config_fini(cfg);
        return r;
}

static bool same(const char *a, const char *b)
{
        return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Two default budgets alike (NAN: not set, alike too). */
static bool same_budget(double a, double b)
{
        return (isnan(a) && isnan(b)) || a == b;
}

static void reload(void *ctx, struct control *c)
{
        struct daemon *d = ctx;
        struct fmud_config n;
        char err[512];
        int r;

        (void)notify_send("RELOADING=1");
        log_notice("SIGHUP: reloading '%s'", d->config_path);
        if (load_config(d, &n, err, sizeof(err)) < 0) {
                log_err("reload: %s; keeping the running settings", err);
                goto out;
        }
        log_set_level(n.log_level);
        d->cfg.log_level = n.log_level;
        if (d->host) {
                r = host_set_allowed(d->host, n.n_allow, (const char *const *)n.allow);
                if (r < 0) {
                        log_err("reload: allowed directories: %s, keeping the old ones",
                                strerror(-r));
                } else {
                        /* The host keeps its own copy; swap ours. */
                        char **tmp = d->cfg.allow;
                        size_t ntmp = d->cfg.n_allow;

                        d->cfg.allow = n.allow;
                        d->cfg.n_allow = n.n_allow;
                        n.allow = tmp;
                        n.n_allow = ntmp;
                        log_info("allowing %zu directories", d->cfg.n_allow);
                }
                r = host_set_output(d->host, n.n_output, (const char *const *)n.output);
                if (r < 0) {
                        log_err("reload: output directories: %s, keeping the old ones",
                                strerror(-r));
                } else {
                        char **tmp = d->cfg.output;
                        size_t ntmp = d->cfg.n_output;

                        d->cfg.output = n.output;
                        d->cfg.n_output = n.n_output;
                        n.output = tmp;
                        n.n_output = ntmp;
                        log_info("writing results below %zu directories", d->cfg.n_output);
                }
        }
        {
                /* Roles are read at every request on this (the control) thread: swap them. */
                struct access_grant *u = d->cfg.role_users, *g = d->cfg.role_groups;
                size_t nu = d->cfg.n_role_users, ng = d->cfg.n_role_groups;

                d->cfg.role_users = n.role_users;
                d->cfg.n_role_users = n.n_role_users;
                d->cfg.role_groups = n.role_groups;
                d->cfg.n_role_groups = n.n_role_groups;
                d->cfg.default_role = n.default_role;
                n.role_users = u;
                n.n_role_users = nu;
                n.role_groups = g;
                n.n_role_groups = ng;
        }
        if (d->cfg.tcp_endpoint && n.authorized_keys &&
            control_reload_keys(c, n.authorized_keys, err, sizeof(err)) < 0)
                log_err("reload: %s; keeping the admitted keys", err);
        if (!same(n.endpoint, d->cfg.endpoint) || !same(n.pub_endpoint, d->cfg.pub_endpoint) ||
            !same(n.tcp_endpoint, d->cfg.tcp_endpoint) ||
            !same(n.tcp_pub_endpoint, d->cfg.tcp_pub_endpoint) ||
            !same(n.rig_remote_endpoint, d->cfg.rig_remote_endpoint) ||
            !same(n.socket_group, d->cfg.socket_group) ||
            !same(n.server_secret_key, d->cfg.server_secret_key) ||
            !same(n.authorized_keys, d->cfg.authorized_keys) || n.max_message != d->cfg.max_message)
                log_warn("reload: changed endpoints, keys or message limits take effect at the "
                         "next restart");
        if (!same(n.cache_dir, d->cfg.cache_dir) || !same(n.scratch_dir, d->cfg.scratch_dir) ||
            !same(n.state_dir, d->cfg.state_dir) ||
            !same(n.worker, d->cfg.worker) || n.sandbox != d->cfg.sandbox ||
            n.sandbox_require_all != d->cfg.sandbox_require_all ||
            n.memory != d->cfg.memory || n.cpu_seconds != d->cfg.cpu_seconds ||
            n.max_sessions != d->cfg.max_sessions || n.call_timeout != d->cfg.call_timeout ||
            n.transient_grace != d->cfg.transient_grace ||
            !same_budget(n.default_budget, d->cfg.default_budget) ||
            n.overrun != d->cfg.overrun || n.overrun_margin_us != d->cfg.overrun_margin_us ||
            n.spin_us != d->cfg.spin_us ||
            n.results_flush_ms != d->cfg.results_flush_ms ||
            n.rt_worker_mlock_bytes != d->cfg.rt_worker_mlock_bytes ||
            n.rt_worker_mlock_max_bytes != d->cfg.rt_worker_mlock_max_bytes)
                log_warn("reload: changed paths, limits, sandbox or budgets take effect at the "
                         "next restart");
        config_fini(&n);
out:
        (void)notify_send("READY=1");
}

/*
 * The directory of the local control socket (ipc://PATH), else the run
 * directory: what strict workers must not see, so that an FMU running as
 * the daemon's own user cannot connect to the daemon.
 */
static int socket_dir(const struct fmud_config *cfg, char *buf, size_t size)
{
        const char *ep = cfg->endpoint, *slash;

        if (ep && !strncmp(ep, "ipc://", 6) && ep[6] == '/' && (slash = strrchr(ep + 6, '/')) &&
            slash > ep + 6) {
                if ((size_t)(slash - (ep + 6)) >= size)
                        return -ENAMETOOLONG;
                snprintf(buf, size, "%.*s", (int)(slash - (ep + 6)), ep + 6);
                return 0;
        }
        if (!cfg->run_dir || strlen(cfg->run_dir) >= size)
                return -ENOENT;
        snprintf(buf, size, "%s", cfg->run_dir);
        return 0;
}

/* The sessions' log lines (host_log_fn): syslog levels are the log's own. */
static void host_log(void *ctx, int level, const char *message)
{
        (void)ctx;
        log_msg(level, "%s", message);
}

static int start_host(struct daemon *d, struct control *c)
{
        static const enum host_sandbox modes[] = {
                [CONFIG_SANDBOX_STRICT] = HOST_SANDBOX_STRICT,
                [CONFIG_SANDBOX_BASIC] = HOST_SANDBOX_BASIC,
                [CONFIG_SANDBOX_OFF] = HOST_SANDBOX_OFF,
        };
        const struct fmud_config *cfg = &d->cfg;
        char hide[4096];
        struct host_opts o;
        char *msg = NULL;
        int r;

        host_opts_default(&o);
        d->worker_env = worker_env_new(cfg->pass_env, environ);
        if (!d->worker_env) {
                log_err("starting the session host: out of memory");
                return -ENOMEM;
        }
        o.worker_envp = d->worker_env;
        o.worker_path = cfg->worker;
        o.cache_dir = cfg->cache_dir;
        o.scratch_dir = cfg->scratch_dir;
        if (socket_dir(cfg, hide, sizeof(hide)) == 0)
                o.hide_dir = hide;
        o.n_allowed = cfg->n_allow;
        o.allowed = (const char *const *)cfg->allow;
        o.n_output = cfg->n_output;
        o.output = (const char *const *)cfg->output;
        o.state_dir = cfg->state_dir;
        o.sandbox = modes[cfg->sandbox];
        o.mem_limit = cfg->memory;
        o.cpu_limit_s = cfg->cpu_seconds;
        o.kill_on_violation = cfg->on_violation == CONFIG_VIOLATION_KILL;
        o.sandbox_require_all = cfg->sandbox_require_all;
        if (cfg->sandbox_user) {
                struct passwd pw, *res = NULL;
                char buf[4096];

                if (getpwnam_r(cfg->sandbox_user, &pw, buf, sizeof(buf), &res) != 0 || !res) {
                        log_err("[sandbox] user '%s': no such user", cfg->sandbox_user);
                        return -ENOENT;
                }
                if (pw.pw_uid == 0) {
                        log_err("[sandbox] user '%s' is root: workers must not run as root",
                                cfg->sandbox_user);
                        return -EINVAL;
                }
                o.worker_uid = pw.pw_uid;
                o.worker_gid = pw.pw_gid;
        }
        o.default_budget_s = isnan(cfg->default_budget) ? 0 : cfg->default_budget;
        o.overrun = cfg->overrun;
        o.overrun_margin_us = cfg->overrun_margin_us;
        o.spin_us = cfg->spin_us;
        o.results_flush_ms = cfg->results_flush_ms;
        o.realtime.master_priority = (int)cfg->rt_priority;
        o.realtime.worker_priority = (int)cfg->rt_worker_priority;
        snprintf(o.realtime.master_cpus, sizeof(o.realtime.master_cpus), "%s",
                 cfg->rt_cpus ? cfg->rt_cpus : "");
        snprintf(o.realtime.worker_cpus, sizeof(o.realtime.worker_cpus), "%s",
                 cfg->rt_worker_cpus ? cfg->rt_worker_cpus : "");
        o.realtime.best_effort = cfg->rt_best_effort;
        o.realtime.worker_mlock = cfg->rt_worker_mlock;
        o.mlock_bytes = cfg->rt_worker_mlock_bytes;
        o.mlock_max_bytes = cfg->rt_worker_mlock_max_bytes;
        o.call_timeout_ns = (uint64_t)(cfg->call_timeout * 1e9);
        if (cfg->max_sessions)
                o.max_sessions = cfg->max_sessions;
        o.max_reply = cfg->max_message;
        o.upload_max_file = cfg->upload_max_file;
        o.upload_quota = cfg->upload_quota;
        o.upload_store_bytes = cfg->upload_store_bytes;
        o.complete = control_complete;
        o.complete_ctx = c;
        o.publish = control_publish;
        o.publish_ctx = c;
        o.rig = control_rig_fd;
        o.rig_ctx = c;
        o.gone = control_gone;
        o.gone_ctx = c;
        o.log = host_log;
        r = host_new(&o, &d->host, &msg);
        if (r < 0) {
                log_err("starting the session host: %s", msg ? msg : strerror(-r));
                free(msg);
                return r;
        }
        free(msg);
        control_set_host(c, d->host);
        return 0;
}

/* What a daemon that died on this scratch root left: its workers, their directories. */
static void sweep_leftovers(const char *root)
{
        struct leftovers_report rep = { 0 };
        int r = leftovers_sweep(root, &rep);

        if (r < 0) {
                log_warn("scratch '%s': looking for a dead daemon's leftovers: %s", root,
                         strerror(-r));
                return;
        }
        if (rep.killed)
                log_notice("killed %zu workers a previous daemon left running", rep.killed);
        if (rep.stuck)
                log_warn("%zu of them had not exited after %d ms", rep.stuck, LEFTOVERS_WAIT_MS);
        if (rep.kept)
                log_warn("scratch '%s' is shared with a running daemon (%zu workers): its "
                         "directories stay", root, rep.kept);
        if (rep.removed)
                log_notice("removed %zu scratch directories a previous daemon left", rep.removed);
        if (rep.failed)
                log_warn("could not remove %zu scratch directories below '%s' whole", rep.failed,
                         root);
}

/* Every directory, and what a dead daemon left in the scratch root, before we bind. */
static int make_dirs(struct daemon *d)
{
        char err[512];
        int r;

        r = dirs_make(&d->cfg, &d->dirs, err, sizeof(err));
        if (r < 0) {
                log_err("%s", err);
                return r;
        }
        sweep_leftovers(d->cfg.scratch_dir);
        return 0;
}

static void log_settings(const struct fmud_config *cfg)
{
        log_info("fmud %s: worker '%s', cache '%s', scratch '%s', state '%s', sandbox %s, "
                 "%zu allowed directories, %zu output directories", FMUD_VERSION, cfg->worker,
                 cfg->cache_dir, cfg->scratch_dir, cfg->state_dir,
                 config_sandbox_name(cfg->sandbox), cfg->n_allow, cfg->n_output);
        if (cfg->sandbox == CONFIG_SANDBOX_OFF)
                log_warn("SANDBOX OFF: FMUs run with the daemon's privileges, network and files");
}

/*
 * [realtime] mlock: the daemon's memory locked before it starts a thread
 * (MCL_FUTURE covers what it maps later). Refused: the daemon does not
 * start, unless best_effort, which keeps the refusal for status.
 */
static int lock_memory(struct fmud_config *cfg)
{
        int r;

        if (!cfg->rt_mlock)
                return 0;
        r = rt_lock_memory();
        if (r == 0) {
                snprintf(cfg->rt_mlock_state, sizeof(cfg->rt_mlock_state), "active");
                return 0;
        }
        snprintf(cfg->rt_mlock_state, sizeof(cfg->rt_mlock_state), "refused: %s", strerror(-r));
        if (!cfg->rt_best_effort) {
                log_err("[realtime] mlock: mlockall: %s (LimitMEMLOCK=infinity or CAP_IPC_LOCK; "
                        "best_effort = yes starts without)", strerror(-r));
                return r;
        }
        log_warn("[realtime] mlock refused (best effort): mlockall: %s", strerror(-r));
        return 0;
}

static int serve(struct daemon *d, int sigfd)
{
        struct control *c = NULL;
        char err[512];
        int r;

        r = lock_memory(&d->cfg);
        if (r < 0)
                return r;
        /* Everything is checked before the sockets exist: a bound daemon can serve. */
        r = make_dirs(d);
        if (r < 0)
                goto out_dirs;
        r = control_new(&d->cfg, &c, err, sizeof(err));
        if (r < 0) {
                log_err("%s", err);
                goto out_dirs;
        }
        control_set_reload(c, reload, d);
        r = start_host(d, c);
        if (r == 0)
                r = control_run(c, sigfd, d->args.ready_fd);
        host_free(d->host);
        d->host = NULL;
        free(d->worker_env);
        d->worker_env = NULL;
        control_flush(c);
        control_free(c);
out_dirs:
        dirs_remove(&d->dirs);
        return r;
}

/* Raise the open-files limit for the workers (inst_fd_limit_raise()), and say what it is. */
static void log_fd_limit(void)
{
        uint64_t before = 0, now = 0;
        int r = inst_fd_limit_raise(&before, &now);

        if (r < 0)
                log_warn("open files: the soft limit %llu could not be raised: %s: about a "
                         "third as many instances can run", (unsigned long long)before,
                         strerror(-r));
        else if (now < 3 * 4096 + 64)
                log_warn("open files: limit %llu (LimitNOFILE=, ulimit -Hn): about %llu "
                         "instances can run at once", (unsigned long long)now,
                         (unsigned long long)(now > 64 ? (now - 64) / 3 : 0));
        else if (now != before)
                log_info("open files: soft limit raised from %llu to %llu",
                         (unsigned long long)before, (unsigned long long)now);
}

int main(int argc, char **argv)
{
        struct daemon d = { 0 };
        const char *env_config;
        char err[512];
        sigset_t mask;
        int sigfd, r;

        /* Before any thread exists, so that every thread inherits the mask. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &mask, NULL);
        /* A results file over RLIMIT_FSIZE is that session's write error (EFBIG), not the daemon's end. */
        signal(SIGXFSZ, SIG_IGN);
        sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sigfd < 0) {
                log_err("signalfd: %s", strerror(errno));
                return EXIT_FAILURE;
        }
        if (config_parse_args(argc, argv, &d.args, err, sizeof(err)) < 0) {
                fprintf(stderr, "fmud: %s\n", err);
                usage(stderr);
                return 2;
        }
        if (d.args.help || d.args.version) {
                if (d.args.help)
                        usage(stdout);
                else
                        printf("fmud %s\n", FMUD_VERSION);
                free(d.args.allow);
                free(d.args.output);
                return EXIT_SUCCESS;
        }
        /* $FMUD_CONFIG: another default file, for an installation elsewhere (and tests). */
        env_config = getenv("FMUD_CONFIG");
        d.config_path = d.args.config ? d.args.config :
                        env_config && *env_config ? env_config : CONFIG_DEFAULT_PATH;
        if (d.args.check_config) {
                const char *f = d.args.check_file ? d.args.check_file : d.args.config;

                r = config_check(f ? f : d.config_path, f != NULL, &d.args, stdout, stderr);
                free(d.args.allow);
                free(d.args.output);
                return r;
        }
        d.config_required = d.args.config != NULL;
        if (load_config(&d, &d.cfg, err, sizeof(err)) < 0) {
                log_err("%s", err);
                free(d.args.allow);
                free(d.args.output);
                return EXIT_FAILURE;
        }
        log_set_level(d.cfg.log_level);
        log_settings(&d.cfg);
        log_fd_limit();
        r = serve(&d, sigfd);
        config_fini(&d.cfg);
        free(d.args.allow);
        free(d.args.output);
        close(sigfd);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
