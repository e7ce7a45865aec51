/* cli_conn: connection options, error lines and exit codes of fmuctl's daemon subcommands (cli.h). */
#include <errno.h>
#include <grp.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "proto/endpoint.h"

const char *cli_endpoint(const struct cli *a, char *buf, size_t len)
{
        if (a->endpoint)
                return a->endpoint;
        return fmud_endpoint_default(buf, len) < 0 ? NULL : buf;
}

/* The group of the first directory on path this user may not search, else of path itself. */
static gid_t denying_group(const char *path)
{
        char buf[4096];
        size_t len = strlen(path);
        struct stat st;

        if (len >= sizeof(buf))
                return (gid_t)-1;
        memcpy(buf, path, len + 1);
        for (char *p = buf + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (access(buf, X_OK) < 0 && errno == EACCES)
                        return stat(buf, &st) == 0 ? st.st_gid : (gid_t)-1;
                *p = '/';
        }
        return stat(path, &st) == 0 ? st.st_gid : (gid_t)-1;
}

bool cli_ipc_denied(const char *ep, char *msg, size_t len)
{
        const char *path;
        struct group *g;
        gid_t gid;

        if (strncmp(ep, "ipc://", 6))
                return false;
        path = ep + 6;
        /* Connecting to a socket file takes write access to it and search on its directories. */
        if (access(path, W_OK) == 0 || errno != EACCES)
                return false;
        gid = denying_group(path);
        g = gid == (gid_t)-1 ? NULL : getgrgid(gid);
        if (g)
                snprintf(msg, len, "permission denied: %s (ask to be added to group %s)", path,
                         g->gr_name);
        else if (gid != (gid_t)-1)
                snprintf(msg, len, "permission denied: %s (ask to be added to group %u)", path,
                         (unsigned)gid);
        else
                snprintf(msg, len, "permission denied: %s", path);
        return true;
}

static const char *env_or(const char *v, const char *name)
{
        const char *env = getenv(name);

        return v ? v : env && *env ? env : NULL;
}

int cli_open(struct cli *a)
{
        char buf[4096], err[4096], server[FMUD_KEY_Z85_LEN + 1], secret[FMUD_KEY_Z85_LEN + 1];
        const char *ep = cli_endpoint(a, buf, sizeof(buf));
        const char *skf = env_or(a->server_key_file, "FMUD_SERVER_KEY");
        const char *kf = env_or(a->key_file, "FMUD_KEY");
        struct fmud_opts o = {
                .timeout_ms = a->timeout_ms, .client_name = "fmuctl",
                /* An answer to hello is immediate; do not hang on a wrong address. */
                .connect_timeout_ms = 10000,
        };
        int r;

#ifdef FMUD_TEST_HOOKS
        /*
         * A build made for the tests alone (never packaged): a shorter
         * request timeout, so that a test of what outlasts it (a long load,
         * a long Terminate) needs not wait 30 s.
         */
        const char *test_ms = getenv("FMUD_TEST_REQUEST_MS");

        if (!a->timeout_ms && test_ms) {
                a->timeout_ms = atoi(test_ms);
                o.timeout_ms = a->timeout_ms;
        }
#endif

        if (!ep) {
                fprintf(stderr, "fmuctl: cannot connect: the default endpoint is too long\n");
                return FMUCTL_EXIT_SYSTEM;
        }
        /* At once: libzmq would retry a refused ipc connection until the hello times out. */
        if (cli_ipc_denied(ep, err, sizeof(err))) {
                fprintf(stderr, "fmuctl: %s\n", err);
                return FMUCTL_EXIT_INVALID;
        }
        if (!skf != !kf) {
                fprintf(stderr, "fmuctl: cannot connect to '%s': CURVE needs both --server-key "
                        "and --key\n", ep);
                return FMUCTL_EXIT_USAGE;
        }
        if (skf) {
                if (fmud_key_read(skf, server, err, sizeof(err)) < 0 ||
                    fmud_key_read(kf, secret, err, sizeof(err)) < 0) {
                        fprintf(stderr, "fmuctl: cannot connect to '%s': %s\n", ep, err);
                        return FMUCTL_EXIT_INVALID;
                }
                o.server_key = server;
                o.secret_key = secret;
        }
        r = fmud_connect(ep, &o, &a->c, err, sizeof(err));
        explicit_bzero(secret, sizeof(secret));
        if (r < 0) {
                fprintf(stderr, "fmuctl: cannot connect to '%s': %s\n", ep, err);
                return r == -EINVAL ? FMUCTL_EXIT_USAGE : r == FMUD_E_REFUSED ? FMUCTL_EXIT_INVALID :
                       FMUCTL_EXIT_SYSTEM;
        }
        return 0;
}

void cli_close(struct cli *a)
{
        fmud_close(a->c);
        a->c = NULL;
}

int cli_exit_code(const struct cli *a, int r)
{
        if (r >= 0)
                return FMUCTL_EXIT_OK;
        if (r == -EINTR)
                return FMUCTL_EXIT_INTERRUPTED;
        if (r == FMUD_E_REFUSED) {
                switch (fmud_errcode(a->c)) {
                case PROTO_E_FAULT: return FMUCTL_EXIT_FAULT;
                case PROTO_E_INTERNAL: return FMUCTL_EXIT_SYSTEM;
                default: return FMUCTL_EXIT_INVALID;
                }
        }
        if (r == -EPROTOTYPE || r == -EINVAL)
                return FMUCTL_EXIT_INVALID;
        return FMUCTL_EXIT_SYSTEM;
}

int cli_fail(struct cli *a, int r, const char *fmt, ...)
{
        const char *msg = a->c ? fmud_errmsg(a->c) : strerror(-r), *nl;
        va_list ap;

        fprintf(stderr, "fmuctl: cannot ");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        nl = strchr(msg, '\n');
        fprintf(stderr, ": %.*s\n", nl ? (int)(nl - msg) : (int)strlen(msg), msg);
        /* The daemon's further lines (diagnostics) as details. */
        while (nl) {
                const char *line = nl + 1;

                nl = strchr(line, '\n');
                fprintf(stderr, "  %.*s\n", nl ? (int)(nl - line) : (int)strlen(line), line);
        }
        return cli_exit_code(a, r);
}

int cli_usage_error(const struct cli *a, const char *fmt, ...)
{
        va_list ap;

        fprintf(stderr, "fmuctl %s: ", a->cmd);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\n(see 'fmuctl %s --help')\n", a->cmd);
        return FMUCTL_EXIT_USAGE;
}

static int whole(const char *s, uint64_t *ret)
{
        char *end;
        unsigned long long v;

        if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno || end == s || *end)
                return -EINVAL;
        *ret = v;
        return 0;
}

int cli_target(const struct cli *a, const char *s, struct proto_target *ret)
{
        struct proto_target t = { 0 };
        const char *at = strchr(s, '@');
        char id[32];

        if (at && (size_t)(at - s) < sizeof(id)) {
                memcpy(id, s, (size_t)(at - s));
                id[at - s] = '\0';
                if (whole(id, &t.session) == 0 && whole(at + 1, &t.generation) == 0 && t.session)
                        goto ok;
        } else if (!at && whole(s, &t.session) == 0 && t.session) {
                goto ok;
        }
        return cli_usage_error(a, "'%s' is not a session (N, or N@GENERATION)", s);
ok:
        *ret = t;
        return 0;
}

int cli_number(const struct cli *a, const char *opt, const char *s, double *ret)
{
        char *end;
        double d;

        errno = 0;
        d = strtod(s, &end);
        if (errno || end == s || *end || !isfinite(d))
                return cli_usage_error(a, "%s needs a finite number, not '%s'", opt, s);
        *ret = d;
        return 0;
}

int cli_count(const struct cli *a, const char *opt, const char *s, uint64_t *ret)
{
        if (whole(s, ret) < 0)
                return cli_usage_error(a, "%s needs a whole number, not '%s'", opt, s);
        return 0;
}

int cli_open_session(struct cli *a, int argc, char **argv, struct proto_target *ret)
{
        int code;

        if (optind != argc - 1)
                return cli_usage_error(a, "expected one SESSION");
        code = cli_target(a, argv[optind], ret);
        return code ? code : cli_open(a);
}
