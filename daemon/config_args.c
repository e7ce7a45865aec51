/*
 * config_args: fmud's command line and the settings that derive from the
 * environment (config.h).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/worker_env.h"
#include "proto/endpoint.h"
#include "proto/paths.h"

enum {
        OPT_CONFIG = 0x100, OPT_ENDPOINT, OPT_PUB_ENDPOINT, OPT_ALLOW, OPT_CACHE_DIR,
        OPT_SCRATCH_DIR, OPT_WORKER, OPT_SANDBOX, OPT_READY_FD, OPT_VERSION, OPT_HELP,
        OPT_OUTPUT_DIR, OPT_STATE_DIR, OPT_NO_CONFIG, OPT_CHECK_CONFIG, OPT_MLOCK_MAX,
        OPT_PASS_ENV,
};

/* Append s to *v (n of them). 0 or -ENOMEM (*v unchanged). */
static int push(const char ***v, size_t *n, const char *s)
{
        const char **a = realloc(*v, (*n + 1) * sizeof(*a));

        if (!a)
                return -ENOMEM;
        *v = a;
        a[(*n)++] = s;
        return 0;
}

int config_parse_args(int argc, char **argv, struct fmud_args *ret, char *err, size_t errlen)
{
        static const struct option opts[] = {
                { "config", required_argument, NULL, OPT_CONFIG },
                { "no-config", no_argument, NULL, OPT_NO_CONFIG },
                { "endpoint", required_argument, NULL, OPT_ENDPOINT },
                { "pub-endpoint", required_argument, NULL, OPT_PUB_ENDPOINT },
                { "allow", required_argument, NULL, OPT_ALLOW },
                { "output-dir", required_argument, NULL, OPT_OUTPUT_DIR },
                { "state-dir", required_argument, NULL, OPT_STATE_DIR },
                { "cache-dir", required_argument, NULL, OPT_CACHE_DIR },
                { "scratch-dir", required_argument, NULL, OPT_SCRATCH_DIR },
                { "worker", required_argument, NULL, OPT_WORKER },
                { "sandbox", required_argument, NULL, OPT_SANDBOX },
                { "worker-mlock-max", required_argument, NULL, OPT_MLOCK_MAX },
                { "pass-env", required_argument, NULL, OPT_PASS_ENV },
                { "ready-fd", required_argument, NULL, OPT_READY_FD },
                { "check-config", optional_argument, NULL, OPT_CHECK_CONFIG },
                { "version", no_argument, NULL, OPT_VERSION },
                { "help", no_argument, NULL, OPT_HELP },
                { 0 },
        };
        struct fmud_args a = { .ready_fd = -1 };
        char *end;
        long fd;
        int c;

        opterr = 0;
        optind = 1;
        while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
                switch (c) {
                case OPT_CONFIG: a.config = optarg; break;
                case OPT_NO_CONFIG: a.no_config = true; break;
                case OPT_ENDPOINT: a.endpoint = optarg; break;
                case OPT_PUB_ENDPOINT: a.pub_endpoint = optarg; break;
                case OPT_CACHE_DIR: a.cache_dir = optarg; break;
                case OPT_STATE_DIR: a.state_dir = optarg; break;
                case OPT_SCRATCH_DIR: a.scratch_dir = optarg; break;
                case OPT_WORKER: a.worker = optarg; break;
                case OPT_SANDBOX: a.sandbox = optarg; break;
                case OPT_MLOCK_MAX: a.mlock_max = optarg; break;
                case OPT_PASS_ENV: a.pass_env = optarg; break;
                case OPT_VERSION: a.version = true; break;
                case OPT_CHECK_CONFIG:
                        a.check_config = true;
                        a.check_file = optarg;
                        break;
                case 'h':
                case OPT_HELP: a.help = true; break;
                case OPT_ALLOW:
                case OPT_OUTPUT_DIR:
                        if (c == OPT_ALLOW ? push(&a.allow, &a.n_allow, optarg) :
                                             push(&a.output, &a.n_output, optarg)) {
                                free(a.allow);
                                free(a.output);
                                snprintf(err, errlen, "out of memory");
                                return -ENOMEM;
                        }
                        break;
                case OPT_READY_FD:
                        errno = 0;
                        fd = strtol(optarg, &end, 10);
                        if (errno || *end || end == optarg || fd < 0 || fd > INT_MAX) {
                                snprintf(err, errlen, "--ready-fd '%s': not a descriptor", optarg);
                                free(a.allow);
                                free(a.output);
                                return -EINVAL;
                        }
                        a.ready_fd = (int)fd;
                        break;
                default:
                        snprintf(err, errlen, "unknown option or missing argument: '%s'",
                                 argv[optind - 1]);
                        free(a.allow);
                        free(a.output);
                        return -EINVAL;
                }
        }
        if (a.config && a.no_config) {
                snprintf(err, errlen, "--config and --no-config exclude each other");
                free(a.allow);
                free(a.output);
                return -EINVAL;
        }
        /* --check-config FILE, as well as --check-config=FILE. */
        if (a.check_config && !a.check_file && optind == argc - 1)
                a.check_file = argv[optind++];
        if (optind < argc) {
                snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
                free(a.allow);
                free(a.output);
                return -EINVAL;
        }
        *ret = a;
        return 0;
}

static int replace(char **dst, const char *v)
{
        char *p = strdup(v);

        if (!p)
                return -ENOMEM;
        free(*dst);
        *dst = p;
        return 0;
}

/* The n given directories (none: *dst stays) replace *dst. 0 or -EINVAL/-ENOMEM with err. */
static int replace_dirs(const char *opt, const char **given, size_t n, char ***dst, size_t *n_dst,
                        char *err, size_t errlen)
{
        char **v;

        if (!n)
                return 0;
        for (size_t i = 0; i < n; i++)
                if (given[i][0] != '/') {
                        snprintf(err, errlen, "%s '%s': must be an absolute path", opt, given[i]);
                        return -EINVAL;
                }
        v = calloc(n, sizeof(*v));
        for (size_t i = 0; v && i < n; i++) {
                v[i] = strdup(given[i]);
                if (!v[i]) {
                        while (i--)
                                free(v[i]);
                        free(v);
                        v = NULL;
                }
        }
        if (!v) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        for (size_t i = 0; i < *n_dst; i++)
                free((*dst)[i]);
        free(*dst);
        *dst = v;
        *n_dst = n;
        return 0;
}

int config_apply_args(struct fmud_config *c, const struct fmud_args *a, char *err, size_t errlen)
{
        const struct {
                const char *opt, *val;
                char **dst;
                const char *prefix;     /* required prefix */
        } strs[] = {
                { "--endpoint", a->endpoint, &c->endpoint, "ipc://" },
                { "--pub-endpoint", a->pub_endpoint, &c->pub_endpoint, "ipc://" },
                { "--cache-dir", a->cache_dir, &c->cache_dir, "/" },
                { "--state-dir", a->state_dir, &c->state_dir, "/" },
                { "--scratch-dir", a->scratch_dir, &c->scratch_dir, "/" },
                { "--worker", a->worker, &c->worker, "/" },
        };
        int r;

        for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
                if (!strs[i].val)
                        continue;
                if (strncmp(strs[i].val, strs[i].prefix, strlen(strs[i].prefix)) ||
                    !strs[i].val[strlen(strs[i].prefix)]) {
                        snprintf(err, errlen, "%s '%s': must start with '%s'", strs[i].opt,
                                 strs[i].val, strs[i].prefix);
                        return -EINVAL;
                }
                if (replace(strs[i].dst, strs[i].val) < 0)
                        goto oom;
        }
        if (a->sandbox) {
                if (!strcmp(a->sandbox, "strict"))
                        c->sandbox = CONFIG_SANDBOX_STRICT;
                else if (!strcmp(a->sandbox, "basic"))
                        c->sandbox = CONFIG_SANDBOX_BASIC;
                else if (!strcmp(a->sandbox, "off"))
                        c->sandbox = CONFIG_SANDBOX_OFF;
                else {
                        snprintf(err, errlen, "--sandbox '%s': must be strict, basic or off",
                                 a->sandbox);
                        return -EINVAL;
                }
        }
        /* --worker-mlock-max: [realtime] worker_mlock_max_bytes; "infinity": no bound. */
        if (a->mlock_max) {
                uint64_t u = UINT64_MAX;

                if (strcmp(a->mlock_max, "infinity") && config_parse_size(a->mlock_max, &u) < 0) {
                        snprintf(err, errlen, "--worker-mlock-max '%s': must be a size such as "
                                 "1G, or infinity", a->mlock_max);
                        return -EINVAL;
                }
                c->rt_worker_mlock_max_bytes = u;
        }
        if (a->pass_env) {
                const char *why = worker_env_bad(a->pass_env);

                if (why) {
                        snprintf(err, errlen, "--pass-env '%s': %s", a->pass_env, why);
                        return -EINVAL;
                }
                if (replace(&c->pass_env, a->pass_env) < 0)
                        goto oom;
        }
        r = replace_dirs("--allow", a->allow, a->n_allow, &c->allow, &c->n_allow, err, errlen);
        if (r == 0)
                r = replace_dirs("--output-dir", a->output, a->n_output, &c->output, &c->n_output,
                                 err, errlen);
        return r;
oom:
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
}

/* fmud-worker next to this program, in a build tree, or in an installation. */
/* fmud-worker next to fmud, in a build tree or an installation (no environment). */
static char *find_worker(void)
{
        static const char *const rel[] = { "fmud-worker", "../worker/fmud-worker",
                                           "../libexec/fmud/fmud-worker" };

        return paths_program(NULL, rel, sizeof(rel) / sizeof(rel[0]));
}

static int default_cache(char **ret)
{
        const char *cd = getenv("CACHE_DIRECTORY"), *xdg = getenv("XDG_CACHE_HOME");
        const char *home = getenv("HOME");
        int n;

        if (cd && *cd == '/')
                n = asprintf(ret, "%.*s", (int)strcspn(cd, ":"), cd);
        else if (geteuid() == 0)
                n = asprintf(ret, "/var/cache/fmud");
        else if (xdg && *xdg == '/')
                n = asprintf(ret, "%s/fmud", xdg);
        else if (home && *home == '/')
                n = asprintf(ret, "%s/.cache/fmud", home);
        else
                n = asprintf(ret, "/tmp/fmud-cache-%u", (unsigned)geteuid());
        return n < 0 ? -ENOMEM : 0;
}

/* As the cache: systemd's StateDirectory=, /var/lib/fmud for root, else the user's. */
static int default_state(char **ret)
{
        const char *sd = getenv("STATE_DIRECTORY"), *xdg = getenv("XDG_STATE_HOME");
        const char *home = getenv("HOME");
        int n;

        if (sd && *sd == '/')
                n = asprintf(ret, "%.*s", (int)strcspn(sd, ":"), sd);
        else if (geteuid() == 0)
                n = asprintf(ret, "/var/lib/fmud");
        else if (xdg && *xdg == '/')
                n = asprintf(ret, "%s/fmud", xdg);
        else if (home && *home == '/')
                n = asprintf(ret, "%s/.local/state/fmud", home);
        else
                n = asprintf(ret, "/tmp/fmud-state-%u", (unsigned)geteuid());
        return n < 0 ? -ENOMEM : 0;
}

/* [rig] remote_endpoint's ports: PORT, LO-HI (LO <= HI) or *, after the last ':'. */
static bool rig_ports_ok(const char *ep)
{
        const char *colon = strrchr(ep, ':');
        unsigned lo, hi;
        int used = 0;

        if (!colon || colon < ep + 6 || !strcmp(colon + 1, "*"))
                return colon && colon > ep + 6;
        if (sscanf(colon + 1, "%5u-%5u%n", &lo, &hi, &used) == 2 && !colon[1 + used])
                return lo >= 1 && lo <= hi && hi <= 65535;
        return sscanf(colon + 1, "%5u%n", &lo, &used) == 1 && !colon[1 + used] && lo >= 1 &&
               lo <= 65535;
}

int config_finish(struct fmud_config *c, char *err, size_t errlen)
{
        char buf[4096];
        int r;

        r = fmud_runtime_dir(buf, sizeof(buf));
        if (r < 0) {
                snprintf(err, errlen, "the run directory's path is too long");
                return r;
        }
        if (!c->run_dir && !(c->run_dir = strdup(buf)))
                goto oom;
        if (!c->endpoint && (fmud_default_endpoint(buf, sizeof(buf)) < 0 ||
                             !(c->endpoint = strdup(buf))))
                goto oom;
        /* Next to the control socket: a second daemon given only --endpoint has its own. */
        if (!c->pub_endpoint) {
                r = fmud_pub_endpoint_for(c->endpoint, buf, sizeof(buf));
                if (r == -EEXIST || r == -EINVAL) {
                        snprintf(err, errlen, "endpoint '%s': %s", c->endpoint,
                                 r == -EEXIST ? "the events socket would be the control socket "
                                                "itself: set pub_endpoint (--pub-endpoint)" :
                                                "must be ipc:///PATH");
                        return r == -EEXIST ? -EINVAL : r;
                }
                if (r < 0 || !(c->pub_endpoint = strdup(buf)))
                        goto oom;
        }
        if (!c->scratch_dir && asprintf(&c->scratch_dir, "%s/scratch", c->run_dir) < 0) {
                c->scratch_dir = NULL;
                goto oom;
        }
        if (!c->cache_dir && default_cache(&c->cache_dir) < 0)
                goto oom;
        if (!c->state_dir && default_state(&c->state_dir) < 0)
                goto oom;
        if (!c->worker && !(c->worker = find_worker())) {
                snprintf(err, errlen, "fmud-worker not found next to fmud, in ../worker or "
                                      "../libexec/fmud: set [paths] worker");
                return -ENOENT;
        }
        if (c->tcp_pub_endpoint && !c->tcp_endpoint) {
                snprintf(err, errlen, "tcp_pub_endpoint needs tcp_endpoint");
                return -EINVAL;
        }
        if (c->rig_remote_endpoint && !rig_ports_ok(c->rig_remote_endpoint)) {
                snprintf(err, errlen, "remote_endpoint '%s': expected tcp://ADDRESS:PORT, "
                                      "tcp://ADDRESS:LO-HI or tcp://ADDRESS:*",
                         c->rig_remote_endpoint);
                return -EINVAL;
        }
        if (c->rig_remote_endpoint && !c->tcp_endpoint) {
                snprintf(err, errlen, "remote_endpoint needs tcp_endpoint (its keys and "
                                      "authorized_keys)");
                return -EINVAL;
        }
        if (c->tcp_endpoint && (!c->server_secret_key || !c->authorized_keys)) {
                snprintf(err, errlen, "tcp_endpoint '%s' needs server_secret_key and "
                                      "authorized_keys (remote access is CURVE only)",
                         c->tcp_endpoint);
                return -EINVAL;
        }
        return 0;
oom:
        snprintf(err, errlen, "out of memory or path too long");
        return -ENOMEM;
}
