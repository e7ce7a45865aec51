/*
 * rig: a rig process in a page of C, through libfmud's rig API.
 *
 *   rig [--endpoint URL] [--step H] [--points N] [--idle-ms MS] SESSION
 *
 * It connects to a running fmud and opens the rig channel of SESSION (a
 * session loaded with rig ports: the rig inputs first, the first being a
 * force, then rig outputs such as positions; the mass-spring-damper's
 * mass 1 alone: --rig-in F --rig-out x1). At every point it reads the
 * outputs and writes, for the next point (time t + H), the force
 * F = sin(2 pi t) into the first input (the others get 0). It stops after
 * point N, or when no point came for --idle-ms (default 5000: the
 * session ended). It prints its ports once it has the channel, and a
 * summary line at the end:
 *
 *   in F out x1
 *   points=LAST read=R skipped=S writes=W last=P full=F x=LAST_OUTPUT
 *
 * (skipped: points published that it never read; P: the point its last
 * write was for; full: writes the master had no room for). This is the shape of any rig: a real controller's I/O
 * loop would read its sensors where this computes F.
 *
 * Against a remote daemon (--endpoint tcp://HOST:PORT) it takes the keys
 * fmuctl takes, $FMUD_SERVER_KEY and $FMUD_KEY (key files), and the same
 * calls go through the daemon's bridge (client/fmud.h).
 *
 * Exit: 0 done, 1 the daemon refused or the channel broke, 2 usage.
 */
/* getopt_long, strdup and the like, whatever -std the build asks for. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmud.h"

#define MAX_PORTS 256

static void usage(FILE *f)
{
        fprintf(f, "usage: rig [--endpoint URL] [--step H] [--points N] [--idle-ms MS] "
                   "SESSION\n");
}

static bool number(const char *s, double *ret)
{
        char *end;

        errno = 0;
        *ret = strtod(s, &end);
        return !errno && *s && !*end && isfinite(*ret);
}

static int run(struct fmud_rig *rig, double h, uint64_t last, int idle_ms)
{
        double in[MAX_PORTS] = { 0 }, out[MAX_PORTS] = { 0 };
        uint64_t read = 0, skipped = 0, writes = 0, full = 0, last_for = 0;
        struct fmud_rig_point pt = { 0 };
        size_t n_in, n_out;
        int r;

        fmud_rig_ports(rig, false, &n_in);
        fmud_rig_ports(rig, true, &n_out);
        if (n_in == 0 || n_in > MAX_PORTS || n_out > MAX_PORTS) {
                fprintf(stderr, "rig: expected 1 to %d inputs (the force first), at most %d "
                                "outputs\n", MAX_PORTS, MAX_PORTS);
                return 1;
        }
        printf("in");
        for (size_t i = 0; i < n_in; i++)
                printf(" %s", fmud_rig_ports(rig, false, &n_in)[i].name);
        printf(" out");
        for (size_t i = 0; i < n_out; i++)
                printf(" %s", fmud_rig_ports(rig, true, &n_out)[i].name);
        putchar('\n');
        fflush(stdout);
        for (;;) {
                r = fmud_rig_wait(rig, idle_ms, &pt);
                if (r == -ETIMEDOUT)
                        break;
                if (r < 0) {
                        fprintf(stderr, "rig: waiting: %s\n", strerror(-r));
                        return 1;
                }
                read++;
                skipped += pt.skipped;
                (void)fmud_rig_read(rig, out, n_out, NULL);
                if (pt.point >= last)
                        break;
                /* For the next point: applied at the start of the step from it. */
                in[0] = sin(2 * M_PI * (pt.time + h));
                r = fmud_rig_write(rig, in, n_in);
                if (r == -ENOSPC)
                        full++;
                else if (r < 0) {
                        fprintf(stderr, "rig: writing: %s\n", strerror(-r));
                        return 1;
                }
                else {
                        writes++;
                        last_for = pt.point + 1;
                }
        }
        printf("points=%" PRIu64 " read=%" PRIu64 " skipped=%" PRIu64 " writes=%" PRIu64
               " last=%" PRIu64 " full=%" PRIu64 " x=%.17g\n", pt.point, read, skipped, writes,
               last_for, full, n_out ? out[0] : 0.0);
        return 0;
}

/* CURVE keys from $FMUD_SERVER_KEY and $FMUD_KEY, when set (both or neither). */
static int keys(struct fmud_opts *o, char *server, char *secret)
{
        const char *skf = getenv("FMUD_SERVER_KEY"), *kf = getenv("FMUD_KEY");
        char err[512];

        if (!skf && !kf)
                return 0;
        if (!skf || !kf) {
                fprintf(stderr, "rig: CURVE needs both $FMUD_SERVER_KEY and $FMUD_KEY\n");
                return -1;
        }
        if (fmud_key_read(skf, server, err, sizeof(err)) < 0 ||
            fmud_key_read(kf, secret, err, sizeof(err)) < 0) {
                fprintf(stderr, "rig: %s\n", err);
                return -1;
        }
        o->server_key = server;
        o->secret_key = secret;
        return 0;
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
                { "endpoint", required_argument, NULL, 'e' },
                { "step", required_argument, NULL, 's' },
                { "points", required_argument, NULL, 'n' },
                { "idle-ms", required_argument, NULL, 'i' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        char endpoint[4096] = "", err[256];
        double h = 0.001, v, idle = 5000, session;
        uint64_t last = UINT64_MAX;
        char server[FMUD_KEY_Z85_LEN + 1], secret[FMUD_KEY_Z85_LEN + 1];
        struct fmud_rig *rig = NULL;
        struct fmud_opts o = { 0 };
        struct fmud *c;
        int opt, r;

        while ((opt = getopt_long(argc, argv, "e:s:n:i:h", opts, NULL)) != -1) {
                switch (opt) {
                case 'e':
                        snprintf(endpoint, sizeof(endpoint), "%s", optarg);
                        break;
                case 's':
                case 'n':
                case 'i':
                        if (!number(optarg, &v) || v <= 0 || (opt != 's' && v != floor(v)) ||
                            (opt == 'i' && v > 3600000)) {
                                usage(stderr);
                                return 2;
                        }
                        if (opt == 'n' && v >= 1e15) {
                                usage(stderr);
                                return 2;
                        }
                        if (opt == 'n')
                                last = (uint64_t)v;
                        else
                                *(opt == 's' ? &h : &idle) = v;
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return 2;
                }
        }
        if (argc - optind != 1 || !number(argv[optind], &session) || session < 1 ||
            session != floor(session)) {
                usage(stderr);
                return 2;
        }
        if (!endpoint[0] && fmud_endpoint_default(endpoint, sizeof(endpoint)) < 0) {
                fprintf(stderr, "rig: no default endpoint\n");
                return 1;
        }
        if (keys(&o, server, secret) < 0)
                return 1;
        r = fmud_connect(endpoint, &o, &c, err, sizeof(err));
        explicit_bzero(secret, sizeof(secret));
        if (r < 0) {
                fprintf(stderr, "rig: %s\n", err);
                return 1;
        }
        r = fmud_rig_open(c, (uint64_t)session, &rig);
        if (r < 0) {
                fprintf(stderr, "rig: %s\n", fmud_errmsg(c));
                fmud_close(c);
                return 1;
        }
        r = run(rig, h, last, (int)idle);
        fmud_rig_close(rig);
        fmud_close(c);
        return r;
}
