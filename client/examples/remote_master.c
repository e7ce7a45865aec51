/*
 * remote_master: a remote master in a page of C, through libfmud.
 *
 *   remote_master [--endpoint URL] [--server-key FILE --key FILE] [--points N]
 *                 [--set NAME=VALUE]... SCENARIO NAME...
 *
 * It connects to a running fmud, loads SCENARIO (a .ssp, .ssd, folder or
 * .fmu below one of the daemon's allowed directories) and drives the
 * session itself, one communication point at a time: read the variables
 * NAME... ("instance.variable", or the bare name for a single FMU) and
 * print them as a CSV row, write the --set values (before the first step
 * only), "step 1", and so on. It stops after N
 * points (default: at the scenario's stop time) and unloads the session.
 *
 * This is the shape of any remote master: between two steps it may read
 * outputs, decide, and write inputs (fmud_set_f64()) that the next step
 * uses. The daemon still runs every FMU in its own sandboxed worker; only
 * the decision of when to advance is here.
 *
 * The endpoint defaults to the one fmuctl would use
 * (fmud_endpoint_default()). A daemon on tcp:// is reached with CURVE only:
 * --server-key is the daemon's public key file, --key this client's
 * secret key file (fmuctl keygen makes both kinds), and a key the daemon
 * does not take is said as such. Numbers print with 17 significant digits, so they
 * read back bit for bit.
 *
 * Exit: 0 done, 1 the daemon refused or a step faulted, 2 usage.
 */
/* getopt_long, strdup and the like, whatever -std the build asks for. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmud.h"

#define MAX_SETS 32

static void usage(FILE *f)
{
        fprintf(f, "usage: remote_master [--endpoint URL] [--server-key FILE --key FILE] "
                   "[--points N]\n                     [--set NAME=VALUE]... SCENARIO NAME...\n");
}

/* Print one row: the time, then every value. */
static void print_row(double time, const double *v, size_t n)
{
        printf("%.17g", time);
        for (size_t i = 0; i < n; i++)
                printf(",%.17g", v[i]);
        putchar('\n');
}

static int fail(struct fmud *c, const char *what)
{
        fprintf(stderr, "remote_master: %s: %s\n", what, fmud_errmsg(c));
        return 1;
}

/* Load, then get, print, set and step point by point. */
static int drive(struct fmud *c, const char *scenario, uint64_t points, const char *const *set_names,
                 const double *set_values, size_t n_sets, const char *const *names, size_t n)
{
        struct proto_load load = { .path = { scenario, (uint32_t)strlen(scenario) } };
        struct proto_target t = { 0 };
        struct proto_session_status st;
        struct proto_progress p;
        double *v = calloc(n, sizeof(double));
        double time;
        int r = 1;

        if (!v)
                return 1;
        /* The reply comes once every worker runs and the system is initialized. */
        if (fmud_load(c, &load, &t.session, &t.generation) < 0) {
                free(v);
                return fail(c, "load");
        }
        /*
         * From here on every request names the generation load returned: if
         * someone restores the session behind our back, the daemon refuses
         * our requests (stale) instead of mixing two runs.
         */
        /* Where the session starts (status of a loaded session: time = start). */
        if (fmud_status(c, t.session, &st) < 0) {
                fail(c, "status");
                goto out_unload;
        }
        time = st.time;
        for (size_t i = 0; i < n; i++)
                printf("%s%s", i ? "," : "time,", names[i]);
        putchar('\n');
        for (uint64_t k = 0;; k++) {
                /* Outputs at the current point... */
                if (fmud_get_f64(c, &t, names, n, v) < 0) {
                        fail(c, "get");
                        goto out_unload;
                }
                print_row(time, v, n);
                if (k == points)
                        break;
                /*
                 * ... inputs for the next step: here the --set values, once;
                 * a controller would compute them from the outputs it just
                 * read. (FMI: no get after a set before the next step.) ...
                 */
                if (k == 0 && n_sets &&
                    fmud_set_f64(c, &t, set_names, set_values, n_sets) < 0) {
                        fail(c, "set");
                        goto out_unload;
                }
                /* ... then one communication point further. */
                if (fmud_step(c, &t, 1, &p) < 0) {
                        /* Refused with "state" once the session is finished. */
                        if (points == UINT64_MAX && fmud_errcode(c) == PROTO_E_STATE)
                                break;
                        fail(c, "step");
                        goto out_unload;
                }
                if (p.state == PROTO_STATE_FAULTED) {
                        fprintf(stderr, "remote_master: faulted at t = %g: %.*s\n", p.time,
                                (int)p.message.len, p.message.ptr);
                        goto out_unload;
                }
                time = p.time;
                if (p.state == PROTO_STATE_FINISHED && points == UINT64_MAX) {
                        if (fmud_get_f64(c, &t, names, n, v) < 0) {
                                fail(c, "get");
                                goto out_unload;
                        }
                        print_row(time, v, n);
                        break;
                }
        }
        r = 0;
out_unload:
        if (fmud_unload(c, &t) < 0 && r == 0)
                r = fail(c, "unload");
        free(v);
        return r;
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
                { "endpoint", required_argument, NULL, 'e' },
                { "points", required_argument, NULL, 'n' },
                { "set", required_argument, NULL, 's' },
                { "server-key", required_argument, NULL, 'S' },
                { "key", required_argument, NULL, 'k' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        char endpoint[4096] = "", err[256], path[PATH_MAX], *end;
        char server[FMUD_KEY_Z85_LEN + 1], secret[FMUD_KEY_Z85_LEN + 1];
        const char *server_file = NULL, *key_file = NULL;
        /* hello is answered at once: do not hang on a wrong address. */
        struct fmud_opts co = { .client_name = "remote_master", .connect_timeout_ms = 10000 };
        const char *set_names[MAX_SETS];
        double set_values[MAX_SETS];
        uint64_t points = UINT64_MAX;
        size_t n_sets = 0;
        struct fmud *c;
        int o, r;

        while ((o = getopt_long(argc, argv, "e:n:s:h", opts, NULL)) != -1) {
                switch (o) {
                case 'S':
                        server_file = optarg;
                        break;
                case 'k':
                        key_file = optarg;
                        break;
                case 'e':
                        snprintf(endpoint, sizeof(endpoint), "%s", optarg);
                        break;
                case 'n':
                        errno = 0;
                        points = strtoull(optarg, &end, 10);
                        if (errno || *end || end == optarg) {
                                usage(stderr);
                                return 2;
                        }
                        break;
                case 's': {
                        char *eq = strchr(optarg, '=');

                        if (!eq || eq == optarg || n_sets == MAX_SETS) {
                                usage(stderr);
                                return 2;
                        }
                        *eq = '\0';
                        set_names[n_sets] = optarg;
                        set_values[n_sets] = strtod(eq + 1, &end);
                        if (*end || end == eq + 1) {
                                usage(stderr);
                                return 2;
                        }
                        n_sets++;
                        break;
                }
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return 2;
                }
        }
        if (argc - optind < 2 || !server_file != !key_file) {
                if (!server_file != !key_file)
                        fprintf(stderr, "remote_master: CURVE needs both --server-key and --key\n");
                usage(stderr);
                return 2;
        }
        if (server_file) {
                if (fmud_key_read(server_file, server, err, sizeof(err)) < 0 ||
                    fmud_key_read(key_file, secret, err, sizeof(err)) < 0) {
                        fprintf(stderr, "remote_master: %s\n", err);
                        return 2;
                }
                co.server_key = server;
                co.secret_key = secret;
        }
        if (!endpoint[0] && fmud_endpoint_default(endpoint, sizeof(endpoint)) < 0) {
                fprintf(stderr, "remote_master: no default endpoint\n");
                return 2;
        }
        /* The daemon wants absolute paths: it does not know our working directory. */
        if (!realpath(argv[optind], path)) {
                fprintf(stderr, "remote_master: '%s': %s\n", argv[optind], strerror(errno));
                return 2;
        }
        /* Connecting says hello and checks that we speak the daemon's protocol version. */
        r = fmud_connect(endpoint, &co, &c, err, sizeof(err));
        memset(secret, 0, sizeof(secret));
        if (r < 0) {
                fprintf(stderr, "remote_master: %s\n", err);
                return 1;
        }
        r = drive(c, path, points, set_names, set_values, n_sets,
                  (const char *const *)argv + optind + 1, (size_t)(argc - optind - 1));
        fmud_close(c);
        return r;
}
