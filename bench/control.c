/*
 * control: the control plane's round trip. One request and its reply
 * through fmud (the daemon's own status: decode, answer, encode) next to
 * a bare ZeroMQ DEALER/ROUTER echo of the same bytes through another
 * process, on the same transport in the same run: ipc, and tcp with
 * CURVE on 127.0.0.1. Then remote-master stepping: step 1 then get of 10
 * variables on the msd example, in points per second.
 *
 * DESIGN: the daemon and the echo server are separate processes started
 * here, so both round trips cross the same process boundary; the rows of
 * every run are interleaved (run 1 of every row, then run 2, ...) and a
 * row shows the median over runs of each run's median and 99th
 * percentile. Results are in docs/BENCHMARKS.md.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "proto/proto.h"

#ifndef FMUD_BINARY
#define FMUD_BINARY     "fmud"
#endif
#ifndef FMUD_EXAMPLES
#define FMUD_EXAMPLES   "."
#endif

#define MAX_RUNS        32

static char dir[] = "/tmp/fmud-bench-XXXXXX";
static char srv_pub[41], srv_sec[41], cli_pub[41], cli_sec[41];
static char ep_ipc[300], ep_tcp[64], echo_ipc[300], echo_tcp[64];
static pid_t fmud_pid = -1, echo_pid = -1;

static double now_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp_dbl(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return x < y ? -1 : x > y;
}

/* Two ports nobody listens on now (the kernel's choice for port 0, both held while choosing). */
static int free_ports(int *a, int *b)
{
        int fds[2] = { -1, -1 }, *ports[2] = { a, b }, r = 0;

        for (int i = 0; i < 2; i++) {
                struct sockaddr_in sa = { .sin_family = AF_INET,
                                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
                socklen_t len = sizeof(sa);

                fds[i] = socket(AF_INET, SOCK_STREAM, 0);
                if (fds[i] < 0 || bind(fds[i], (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
                    getsockname(fds[i], (struct sockaddr *)&sa, &len) < 0)
                        r = -1;
                *ports[i] = ntohs(sa.sin_port);
        }
        for (int i = 0; i < 2; i++)
                if (fds[i] >= 0)
                        close(fds[i]);
        return r;
}

static void write_file(const char *name, const char *text, mode_t mode)
{
        char path[400];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
        if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
                perror(path);
                exit(1);
        }
        close(fd);
}

/* The echo server: a ROUTER on ipc and one on tcp+CURVE that send every message back. */
static void echo_main(void)
{
        void *ctx = zmq_ctx_new(), *ipc = zmq_socket(ctx, ZMQ_ROUTER), *tcp = zmq_socket(ctx, ZMQ_ROUTER);
        int one = 1;

        zmq_setsockopt(tcp, ZMQ_CURVE_SERVER, &one, sizeof(one));
        zmq_setsockopt(tcp, ZMQ_CURVE_SECRETKEY, srv_sec, 41);
        if (zmq_bind(ipc, echo_ipc) < 0 || zmq_bind(tcp, echo_tcp) < 0)
                _exit(1);
        for (;;) {
                zmq_pollitem_t it[] = { { .socket = ipc, .events = ZMQ_POLLIN },
                                        { .socket = tcp, .events = ZMQ_POLLIN } };

                if (zmq_poll(it, 2, -1) < 0)
                        _exit(0);
                for (int i = 0; i < 2; i++) {
                        void *s = it[i].socket;
                        int more = 1;
                        size_t sz = sizeof(more);

                        if (!(it[i].revents & ZMQ_POLLIN))
                                continue;
                        while (more) {
                                zmq_msg_t m;

                                zmq_msg_init(&m);
                                if (zmq_msg_recv(&m, s, 0) < 0)
                                        _exit(0);
                                zmq_getsockopt(s, ZMQ_RCVMORE, &more, &sz);
                                zmq_msg_send(&m, s, more ? ZMQ_SNDMORE : 0);
                        }
                }
        }
}

static int start_fmud(void)
{
        char conf[1024], path[400], fdarg[8];
        char ready[8] = "";
        int pfd[2];
        struct pollfd pp;

        snprintf(conf, sizeof(conf), "%s\n", srv_sec);
        write_file("server.key", conf, 0600);
        snprintf(conf, sizeof(conf), "%s\n", cli_pub);
        write_file("authorized_keys", conf, 0644);
        snprintf(conf, sizeof(conf),
                 "[control]\nendpoint = %s\npub_endpoint = ipc://%s/events.sock\n"
                 "tcp_endpoint = %s\nserver_secret_key = %s/server.key\n"
                 "authorized_keys = %s/authorized_keys\n"
                 "[paths]\nallow = %s\ncache_dir = %s/cache\nscratch_dir = %s/scratch\n"
                 "[log]\nlevel = warning\n",
                 ep_ipc, dir, ep_tcp, dir, dir, FMUD_EXAMPLES, dir, dir);
        write_file("fmud.conf", conf, 0644);
        snprintf(path, sizeof(path), "%s/fmud.conf", dir);
        if (pipe(pfd) < 0)
                return -1;
        fmud_pid = fork();
        if (fmud_pid == 0) {
                dup2(pfd[1], 3);
                snprintf(fdarg, sizeof(fdarg), "3");
                execl(FMUD_BINARY, FMUD_BINARY, "--config", path, "--ready-fd", fdarg, (char *)NULL);
                _exit(127);
        }
        close(pfd[1]);
        pp = (struct pollfd){ .fd = pfd[0], .events = POLLIN };
        if (poll(&pp, 1, 30000) <= 0 || read(pfd[0], ready, sizeof(ready) - 1) != 6) {
                close(pfd[0]);
                return -1;
        }
        close(pfd[0]);
        return 0;
}

static void *client(void *ctx, const char *ep, bool curve)
{
        void *s = zmq_socket(ctx, ZMQ_DEALER);
        int linger = 0, to = 10000;

        zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof(linger));
        zmq_setsockopt(s, ZMQ_RCVTIMEO, &to, sizeof(to));
        if (curve) {
                zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, srv_pub, 41);
                zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, cli_pub, 41);
                zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, cli_sec, 41);
        }
        if (zmq_connect(s, ep) < 0) {
                fprintf(stderr, "connect %s: %s\n", ep, zmq_strerror(zmq_errno()));
                exit(1);
        }
        return s;
}

/* n round trips of msg on s; the median and p99 in µs. */
static int round_trips(void *s, const void *msg, size_t len, unsigned n, double *med, double *p99)
{
        double *t = malloc(n * sizeof(*t));
        char buf[4096];

        for (unsigned i = 0; i < n + n / 10; i++) {
                double t0 = now_us();

                if (zmq_send(s, msg, len, 0) < 0 || zmq_recv(s, buf, sizeof(buf), 0) < 0) {
                        fprintf(stderr, "round trip: %s\n", zmq_strerror(zmq_errno()));
                        free(t);
                        return -1;
                }
                if (i >= n / 10)        /* the first tenth warms up */
                        t[i - n / 10] = now_us() - t0;
        }
        qsort(t, n, sizeof(*t), cmp_dbl);
        *med = t[n / 2];
        *p99 = t[(size_t)(n * 0.99)];
        free(t);
        return 0;
}

static int request(void *s, struct pw *w, struct pv_doc *doc, struct proto_reply *rep, char *buf,
                   size_t cap)
{
        struct proto_limits lim;
        char err[256];
        int n;

        if (zmq_send(s, pw_data(w), pw_size(w), 0) < 0 || (n = zmq_recv(s, buf, cap, 0)) < 0)
                return -1;
        pw_reset(w);
        proto_limits_default(&lim);
        if (n > (int)cap || pv_decode(buf, (size_t)n, &lim, doc, err, sizeof(err)) < 0 ||
            proto_reply_decode(doc->root, rep, err, sizeof(err)) < 0)
                return -1;
        return 0;
}

/* Remote master: step 1, get 10 variables; points per second. */
static int stepping(void *ctx, unsigned points, double *ret_pps)
{
        static const char *const names[] = { "mass1.x1", "mass1.v1", "mass1.F", "mass1.k1",
                                             "mass2.x2", "mass2.v2", "mass2.F", "mass2.x1",
                                             "mass2.v1", "mass2.kc" };
        struct proto_str ns[10];
        struct proto_load a = { .has_stop = true, .stop = 1e9 };
        struct proto_load_result lr;
        struct proto_reply rep;
        struct pv_doc doc = { 0 };
        char path[400], buf[65536], err[256];
        void *s = client(ctx, ep_ipc, false);
        struct pw w;
        double t0;

        snprintf(path, sizeof(path), "%s/msd.ssp", FMUD_EXAMPLES);
        a.path = (struct proto_str){ path, (uint32_t)strlen(path) };
        for (int i = 0; i < 10; i++)
                ns[i] = (struct proto_str){ names[i], (uint32_t)strlen(names[i]) };
        pw_init(&w);
        proto_load_encode(&w, 1, &a);
        if (request(s, &w, &doc, &rep, buf, sizeof(buf)) < 0 || !rep.ok ||
            proto_load_result_decode(rep.result, &lr, err, sizeof(err)) < 0) {
                fprintf(stderr, "load msd.ssp: %.*s\n", (int)rep.message_len, rep.message);
                return -1;
        }
        pv_doc_fini(&doc);
        t0 = now_us();
        for (unsigned i = 0; i < points; i++) {
                struct proto_step st = { .t = { lr.session, 0 }, .n = 1 };
                struct proto_get g = { .t = { lr.session, 0 }, .n = 10, .names = ns };

                proto_step_encode(&w, 2, &st);
                if (request(s, &w, &doc, &rep, buf, sizeof(buf)) < 0 || !rep.ok)
                        goto fail;
                pv_doc_fini(&doc);
                proto_get_encode(&w, 3, &g);
                if (request(s, &w, &doc, &rep, buf, sizeof(buf)) < 0 || !rep.ok)
                        goto fail;
                pv_doc_fini(&doc);
        }
        *ret_pps = points / ((now_us() - t0) * 1e-6);
        pw_fini(&w);
        zmq_close(s);
        return 0;
fail:
        fprintf(stderr, "stepping: %.*s\n", (int)rep.message_len, rep.message);
        return -1;
}

static double median(double *v, int n)
{
        qsort(v, (size_t)n, sizeof(*v), cmp_dbl);
        return v[n / 2];
}

int main(int argc, char **argv)
{
        unsigned n = 20000, runs = 5, points = 5000;
        double med[4][MAX_RUNS], p99[4][MAX_RUNS], pps = 0;
        static const char *const rows[4] = { "ipc: bare echo", "ipc: fmud status",
                                             "tcp+CURVE: bare echo", "tcp+CURVE: fmud status" };
        struct proto_target t0 = { 0 };
        void *ctx, *s[4];
        struct pw w;
        int c, rc = 1, port, echo_port;

        while ((c = getopt(argc, argv, "n:r:k:")) != -1) {
                switch (c) {
                case 'n': n = (unsigned)atoi(optarg); break;
                case 'r': runs = (unsigned)atoi(optarg); break;
                case 'k': points = (unsigned)atoi(optarg); break;
                default:
                        fprintf(stderr, "usage: control [-n requests] [-r runs] [-k points]\n");
                        return 2;
                }
        }
        if (n < 100 || runs < 1 || runs > MAX_RUNS)
                return 2;
        if (!mkdtemp(dir) || !zmq_has("curve"))
                return 1;
        zmq_curve_keypair(srv_pub, srv_sec);
        zmq_curve_keypair(cli_pub, cli_sec);
        snprintf(ep_ipc, sizeof(ep_ipc), "ipc://%s/control.sock", dir);
        snprintf(echo_ipc, sizeof(echo_ipc), "ipc://%s/echo.sock", dir);
        if (free_ports(&port, &echo_port) < 0)
                return 1;
        snprintf(ep_tcp, sizeof(ep_tcp), "tcp://127.0.0.1:%d", port);
        snprintf(echo_tcp, sizeof(echo_tcp), "tcp://127.0.0.1:%d", echo_port);
        echo_pid = fork();
        if (echo_pid == 0)
                echo_main();
        if (start_fmud() < 0) {
                fprintf(stderr, "fmud did not start\n");
                goto out;
        }
        ctx = zmq_ctx_new();
        s[0] = client(ctx, echo_ipc, false);
        s[1] = client(ctx, ep_ipc, false);
        s[2] = client(ctx, echo_tcp, true);
        s[3] = client(ctx, ep_tcp, true);
        pw_init(&w);
        proto_target_encode(&w, 1, PROTO_OP_STATUS, &t0);
        for (unsigned r = 0; r < runs; r++)
                for (int i = 0; i < 4; i++)
                        if (round_trips(s[i], pw_data(&w), pw_size(&w), n, &med[i][r],
                                        &p99[i][r]) < 0)
                                goto out_close;
        printf("control round trip, %u requests x %u runs (%zu-byte status request)\n", n, runs,
               pw_size(&w));
        printf("%-24s %12s %12s\n", "row", "median us", "p99 us");
        for (int i = 0; i < 4; i++)
                printf("%-24s %12.1f %12.1f\n", rows[i], median(med[i], (int)runs),
                       median(p99[i], (int)runs));
        printf("status / echo (median): ipc %.2fx, tcp+CURVE %.2fx\n",
               median(med[1], (int)runs) / median(med[0], (int)runs),
               median(med[3], (int)runs) / median(med[2], (int)runs));
        if (points) {
                if (stepping(ctx, points, &pps) == 0)
                        printf("remote master over ipc (step 1 + get 10 variables): %.0f points/s "
                               "(%u points)\n", pps, points);
        }
        rc = 0;
out_close:
        for (int i = 0; i < 4; i++)
                zmq_close(s[i]);
        pw_fini(&w);
        zmq_ctx_term(ctx);
out:
        if (fmud_pid > 0) {
                kill(fmud_pid, SIGTERM);
                waitpid(fmud_pid, NULL, 0);
        }
        if (echo_pid > 0) {
                kill(echo_pid, SIGKILL);
                waitpid(echo_pid, NULL, 0);
        }
        {
                char cmd[400];

                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
                if (system(cmd) != 0)
                        fprintf(stderr, "could not remove %s\n", dir);
        }
        return rc;
}
