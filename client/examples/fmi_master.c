/*
 * fmi_master: a remote master with its own co-simulation algorithm, at the
 * FMI level, through libfmud.
 *
 *   fmi_master [--endpoint URL] [--server-key FILE --key FILE] [--points N]
 *              [--step H] [--in VR] [--out VR] FMU
 *
 * It connects to a running fmud, creates two instances "a" and "b" of FMU
 * (a Co-Simulation .fmu below one of the daemon's allowed directories; the
 * daemon runs each in its own sandboxed worker), initializes them and
 * couples them in a loop of its own: at every communication point the
 * output --out of each instance (a Float64 value reference, default 20:
 * y0 of the test FMU LinearOde) feeds the input --in of the other (default
 * 10: u0), Jacobi style. One message per point carries both sets, both
 * doSteps and both gets (fmud_fmi_submit()); it prints "time,a,b" rows
 * with 17 significant digits, N points (default 10) of step H (default
 * 0.1), then frees both instances.
 *
 * Over tcp:// the daemon is reached with CURVE only: --server-key is its
 * public key file, --key this client's secret key file (fmuctl keygen).
 * The endpoint defaults to the local daemon's control socket. The
 * instances are transient: should this program die, the daemon frees them
 * once their lease runs out.
 *
 * Exit: 0 done, 1 the daemon refused a call, 2 usage.
 */
/* getopt_long, strdup and the like, whatever -std the build asks for. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmud.h"

static void usage(FILE *f)
{
        fprintf(f, "usage: fmi_master [--endpoint URL] [--server-key FILE --key FILE] "
                   "[--points N]\n                  [--step H] [--in VR] [--out VR] FMU\n");
}

static int fail(struct fmud *c, const char *what)
{
        fprintf(stderr, "fmi_master: %s: %s\n", what, fmud_errmsg(c));
        return 1;
}

/* Initialize both instances, then couple them for points steps. */
static int drive(struct fmud *c, const uint64_t inst[2], uint64_t points, double h,
                 uint32_t in, uint32_t out)
{
        struct fmud_batch *b = fmud_fmi_batch_new();
        double y[2] = { 0, 0 }, t = 0;
        int r = 1;

        if (!b)
                return 1;
        for (int i = 0; i < 2; i++) {
                fmud_fmi_add(b, inst[i], "enterInitializationMode");
                fmud_fmi_add(b, inst[i], "exitInitializationMode");
                fmud_fmi_add_get_f64(b, inst[i], &out, 1);
        }
        if (fmud_fmi_submit(c, b) < 0) {
                fail(c, "initialize");
                goto out;
        }
        (void) fmud_fmi_f64(b, 2, &y[0], 1);
        (void) fmud_fmi_f64(b, 5, &y[1], 1);
        printf("time,a,b\n%.17g,%.17g,%.17g\n", t, y[0], y[1]);
        for (uint64_t k = 0; k < points; k++) {
                /* The algorithm is the master's: here, each feeds the other (Jacobi). */
                fmud_fmi_batch_clear(b);
                fmud_fmi_add_set_f64(b, inst[0], &in, &y[1], 1);
                fmud_fmi_add_set_f64(b, inst[1], &in, &y[0], 1);
                fmud_fmi_add_do_step(b, inst[0], t, h);
                fmud_fmi_add_do_step(b, inst[1], t, h);
                fmud_fmi_add_get_f64(b, inst[0], &out, 1);
                fmud_fmi_add_get_f64(b, inst[1], &out, 1);
                if (fmud_fmi_submit(c, b) < 0) {
                        fail(c, "step");
                        goto out;
                }
                if (fmud_fmi_f64(b, 4, &y[0], 1) < 0 || fmud_fmi_f64(b, 5, &y[1], 1) < 0) {
                        fprintf(stderr, "fmi_master: a get answered no Float64\n");
                        goto out;
                }
                t += h;
                printf("%.17g,%.17g,%.17g\n", t, y[0], y[1]);
        }
        r = 0;
out:
        fmud_fmi_batch_free(b);
        return r;
}

/* A number option into *ret: 0, or -1 for a bad one. */
static int number(const char *s, double *ret)
{
        char *end;

        errno = 0;
        *ret = strtod(s, &end);
        return errno || *end || end == s ? -1 : 0;
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
                { "endpoint", required_argument, NULL, 'e' },
                { "points", required_argument, NULL, 'n' },
                { "step", required_argument, NULL, 't' },
                { "in", required_argument, NULL, 'i' },
                { "out", required_argument, NULL, 'o' },
                { "server-key", required_argument, NULL, 'S' },
                { "key", required_argument, NULL, 'k' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        char endpoint[4096] = "", err[256], path[PATH_MAX];
        char server[FMUD_KEY_Z85_LEN + 1], secret[FMUD_KEY_Z85_LEN + 1];
        const char *server_file = NULL, *key_file = NULL;
        struct fmud_opts co = { .client_name = "fmi_master", .connect_timeout_ms = 10000 };
        double points = 10, h = 0.1, in = 10, out = 20;
        uint64_t inst[2] = { 0, 0 };
        struct fmud *c;
        int o, r;

        while ((o = getopt_long(argc, argv, "e:n:h", opts, NULL)) != -1) {
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
                case 't':
                case 'i':
                case 'o':
                        if (number(optarg, o == 'n' ? &points : o == 't' ? &h : o == 'i' ? &in :
                                   &out) < 0) {
                                usage(stderr);
                                return 2;
                        }
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return 2;
                }
        }
        if (argc - optind != 1 || !server_file != !key_file || !(points >= 0) || !(h > 0) ||
            !(in >= 0 && in <= UINT32_MAX) || !(out >= 0 && out <= UINT32_MAX)) {
                usage(stderr);
                return 2;
        }
        if (server_file) {
                if (fmud_key_read(server_file, server, err, sizeof(err)) < 0 ||
                    fmud_key_read(key_file, secret, err, sizeof(err)) < 0) {
                        fprintf(stderr, "fmi_master: %s\n", err);
                        return 2;
                }
                co.server_key = server;
                co.secret_key = secret;
        }
        if (!endpoint[0] && fmud_endpoint_default(endpoint, sizeof(endpoint)) < 0) {
                fprintf(stderr, "fmi_master: no default endpoint\n");
                return 2;
        }
        if (!realpath(argv[optind], path)) {
                fprintf(stderr, "fmi_master: '%s': %s\n", argv[optind], strerror(errno));
                return 2;
        }
        r = fmud_connect(endpoint, &co, &c, err, sizeof(err));
        memset(secret, 0, sizeof(secret));
        if (r < 0) {
                fprintf(stderr, "fmi_master: %s\n", err);
                return 1;
        }
        r = 0;
        for (int i = 0; i < 2 && r == 0; i++)
                if (fmud_instantiate(c, &(struct proto_instantiate){
                            .fmu = { path, (uint32_t)strlen(path) },
                            .instance_name = { i ? "b" : "a", 1 }, .transient = true },
                            &inst[i]) < 0)
                        r = fail(c, "instantiate");
        if (r == 0)
                r = drive(c, inst, (uint64_t)points, h, (uint32_t)in, (uint32_t)out);
        for (int i = 0; i < 2; i++)
                if (inst[i] && fmud_free_instance(c, inst[i]) < 0 && r == 0)
                        r = fail(c, "free");
        fmud_close(c);
        return r;
}
