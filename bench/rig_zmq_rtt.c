/*
 * rig_zmq_rtt: a remote rig's round trip through the daemon's bridge
 * (daemon/rig_bridge.h) over tcp loopback with CURVE, next to a bare
 * ZeroMQ round trip of messages of the same sizes, in the same run.
 *
 * The session: one LinearOde test FMU (y_i = x + u_i) with rig input
 * lin.u0 and rig outputs lin.y0, lin.y1 (as bench/rig_rtt.c), so y0 - y1
 * of a point is the u0 its step applied: every round trip ends at the
 * point that applied its own write. In this process: the master on its
 * own thread, a bridge started as the daemon starts one (rig_bridge_start()
 * on a dup of the channel, the ZAP handler of daemon/zap.h admitting the
 * rig's key), and the remote rig on this thread: a DEALER with CURVE that
 * speaks proto/rig_wire.h. Rows:
 *
 *   remote   the rig sends a write for the current point and waits for the
 *            point whose outputs show it: the bridge's read and
 *            rig_write(), the master's step (it steps once the bridge has
 *            written, seen by the heartbeat the bridge stores after the
 *            write: a free-running master never waits for its rig), the
 *            worker's doStep, the publication, the bridge's point thread
 *            and relay, and tcp both ways.
 *   bare     a DEALER sends a message of the write's size to a ROUTER with
 *            CURVE on another thread, which answers one of the point's
 *            size: ZeroMQ's round trip alone.
 *
 * DESIGN: as rig_rtt, every run starts a fresh session, bridge and sockets,
 * the runs of the rows are interleaved, and a cell is the median over
 * runs of each run's median and 99th percentile; the ratio is remote
 * over bare.
 *
 *   rig_zmq_rtt [-n POINTS] [-r RUNS] [--quick]
 *
 * Results are in docs/BENCHMARKS.md ("Remote rig").
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "daemon/rig_bridge.h"
#include "daemon/zap.h"
#include "proto/rig_wire.h"
#include "session_util.h"
#include "shm/rig.h"

#define H               1e-3
#define MAX_POINTS      200000u
#define WARMUP          50u
#define RECV_MS         10000   /* a message that must come: a hang guard */

enum row { ROW_REMOTE, ROW_BARE, ROW_END };

static const char *const row_names[ROW_END] = { "remote", "bare" };

struct cell {
        double med[BENCH_MAX_RUNS], p99[BENCH_MAX_RUNS];        /* µs */
};

static unsigned arg_points = 10000, arg_runs = 5;
static char fmu_path[512], keydir[64], key_file[128];
static char server_pub[41], server_sec[41], rig_pub[41], rig_sec[41];
static void *zctx;
static size_t write_size = 20, point_size = 60;

static int cmp_dbl(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return x < y ? -1 : x > y;
}

static void summary(double *t, size_t n, double *ret_med, double *ret_p99)
{
        qsort(t, n, sizeof(*t), cmp_dbl);
        *ret_med = t[n / 2] / 1e3;
        *ret_p99 = t[n * 99 / 100] / 1e3;
}

static void *dealer(const char *ep)
{
        void *s = zmq_socket(zctx, ZMQ_DEALER);
        int tmo = RECV_MS, zero = 0;

        if (!s || zmq_setsockopt(s, ZMQ_RCVTIMEO, &tmo, sizeof(tmo)) < 0 ||
            zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof(zero)) < 0 ||
            zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, server_pub, 41) < 0 ||
            zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, rig_pub, 41) < 0 ||
            zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, rig_sec, 41) < 0 || zmq_connect(s, ep) < 0)
                bench_die("dealer", -EIO);
        return s;
}

/* ---- The remote row ------------------------------------------------------------- */

struct master_side {
        struct master *m;
        struct rig *obs;                /* the channel, to read the heartbeat */
        uint64_t last;                  /* the heartbeat before the first write */
        _Atomic bool stop;
};

/* Step once the bridge has written (a new heartbeat), until the write is applied. */
static void *master_thread(void *arg)
{
        struct master_side *ms = arg;
        uint64_t last = ms->last;

        while (!atomic_load(&ms->stop)) {
                struct master_rig_stats st;
                uint64_t beat = rig_heartbeat(ms->obs), applied;

                if (beat == last) {
                        sched_yield();
                        continue;
                }
                last = beat;
                master_rig_stats(ms->m, &st);
                applied = st.applied;
                for (int i = 0; i < 4 && st.applied == applied; i++) {
                        if (master_step(ms->m, 1) != MASTER_RUNNING)
                                return NULL;
                        master_rig_stats(ms->m, &st);
                }
        }
        return NULL;
}

static void session_start(struct bench_sys *x, uint64_t points)
{
        bench_rig_sys_start(x, fmu_path, H, (double)(5 * points + 100) * H, 0, FMUD_WORKER);
}

static void send_pw(void *s, struct pw *w)
{
        if (w->error || zmq_send(s, pw_data(w), pw_size(w), 0) != (int)pw_size(w))
                bench_die("zmq_send", -EIO);
}

/* The next message from the bridge, decoded; vals (2) for a point. */
static void recv_msg(void *s, struct rigw_msg *m, double *vals)
{
        static struct rigw_port in[RIGW_MAX_PORTS], out[RIGW_MAX_PORTS];
        static char buf[RIGW_MAX_MSG];
        struct pv_doc doc = { 0 };
        char err[200];
        int n = zmq_recv(s, buf, sizeof(buf), 0);

        if (n < 0 || n > (int)sizeof(buf))
                bench_die("no message from the bridge", -ETIMEDOUT);
        if (rigw_decode(buf, (size_t)n, m, vals, 2, in, out, &doc, err, sizeof(err)) < 0)
                bench_die(err, -EPROTO);
        pv_doc_fini(&doc);
        if (m->kind == RIGW_POINT)
                point_size = (size_t)n;
}

static void run_remote(struct cell *c, unsigned k)
{
        uint64_t total = WARMUP + arg_points, cur = 0;
        double *t = calloc(arg_points, sizeof(*t)), vals[2];
        struct master_side ms = { 0 };
        struct bench_sys x = { 0 };
        struct rig_bridge *b = NULL;
        char ep[256], err[320], token[RIGW_TOKEN_LEN + 1];
        struct rigw_msg m;
        unsigned port;
        size_t n = 0;
        pthread_t th;
        struct pw w;
        void *s;
        int fd, r;

        if (!t || pw_init(&w) < 0)
                bench_die("calloc", -ENOMEM);
        session_start(&x, total);
        ms.m = x.m;
        fd = dup(master_rig_fd(x.m));
        if (fd < 0 || (r = rig_attach(fd, &ms.obs)) < 0)
                bench_die("rig_attach", -EIO);
        fd = dup(master_rig_fd(x.m));
        memset(token, 'b', RIGW_TOKEN_LEN);
        token[RIGW_TOKEN_LEN] = '\0';
        r = rig_bridge_start(&(struct rig_bridge_params){
                                     .zctx = zctx, .endpoint = "tcp://127.0.0.1:*",
                                     .secret_key_file = key_file, .fd = fd, .session = 1,
                                     .key = rig_pub, .token = token,
                                     .token_ms = 60000 },
                             &b, ep, sizeof(ep), &port, err, sizeof(err));
        if (r < 0)
                bench_die(err, r);
        s = dealer(ep);
        rigw_hello(&w, token);
        send_pw(s, &w);
        recv_msg(s, &m, vals);
        if (m.kind != RIGW_PORTS)
                bench_die("the bridge did not answer hello with the ports", -EPROTO);
        /* The hello's beat came before its answer; the first write's comes after this. */
        ms.last = rig_heartbeat(ms.obs);
        if (pthread_create(&th, NULL, master_thread, &ms) != 0)
                bench_die("pthread_create", -EAGAIN);
        for (uint64_t i = 0; i < total; i++) {
                double u = (double)(i % 1000) + 1;
                uint64_t t0 = rig_now_ns(), t1;

                rigw_write(&w, cur, &u, 1);
                write_size = pw_size(&w);
                send_pw(s, &w);
                do
                        recv_msg(s, &m, vals);
                while (m.kind != RIGW_POINT || fabs(vals[0] - vals[1] - u) > 1e-9);
                t1 = rig_now_ns();
                cur = m.point;
                if (i >= WARMUP && n < arg_points)
                        t[n++] = (double)(t1 - t0);
        }
        atomic_store(&ms.stop, true);
        pthread_join(th, NULL);
        zmq_close(s);
        rig_bridge_stop(b);
        rig_close(ms.obs);
        bench_sys_close(&x);
        pw_fini(&w);
        summary(t, n, &c->med[k], &c->p99[k]);
        free(t);
}

/* ---- The bare row ---------------------------------------------------------------- */

static void *echo_thread(void *arg)
{
        void *s = arg;
        char *reply = calloc(1, point_size), id[256], buf[4096];

        for (;;) {
                int n = zmq_recv(s, id, sizeof(id), 0), len;

                if (n < 0)
                        break;
                len = zmq_recv(s, buf, sizeof(buf), 0);
                if (len <= 0)
                        break;          /* the empty message: stop */
                zmq_send(s, id, (size_t)n, ZMQ_SNDMORE);
                zmq_send(s, reply, point_size, 0);
        }
        free(reply);
        return NULL;
}

static void run_bare(struct cell *c, unsigned k)
{
        uint64_t total = WARMUP + arg_points;
        double *t = calloc(arg_points, sizeof(*t));
        char *msg = calloc(1, write_size), buf[4096], secret[41], ep[256], err[256];
        void *srv = zmq_socket(zctx, ZMQ_ROUTER), *s;
        int one = 1, zero = 0;
        size_t eplen = sizeof(ep), n = 0;
        pthread_t th;

        if (!t || !msg || !srv || zap_read_secret(key_file, secret, err, sizeof(err)) < 0 ||
            zmq_setsockopt(srv, ZMQ_LINGER, &zero, sizeof(zero)) < 0 ||
            zmq_setsockopt(srv, ZMQ_CURVE_SERVER, &one, sizeof(one)) < 0 ||
            zmq_setsockopt(srv, ZMQ_CURVE_SECRETKEY, secret, 41) < 0 ||
            zmq_setsockopt(srv, ZMQ_ZAP_DOMAIN, "fmud", 4) < 0 ||
            zmq_bind(srv, "tcp://127.0.0.1:*") < 0 ||
            zmq_getsockopt(srv, ZMQ_LAST_ENDPOINT, ep, &eplen) < 0)
                bench_die("the echo socket", -EIO);
        if (pthread_create(&th, NULL, echo_thread, srv) != 0)
                bench_die("pthread_create", -EAGAIN);
        s = dealer(ep);
        for (uint64_t i = 0; i < total; i++) {
                uint64_t t0 = rig_now_ns();

                if (zmq_send(s, msg, write_size, 0) < 0 || zmq_recv(s, buf, sizeof(buf), 0) < 0)
                        bench_die("echo", -EIO);
                if (i >= WARMUP && n < arg_points)
                        t[n++] = (double)(rig_now_ns() - t0);
        }
        zmq_send(s, "", 0, 0);
        pthread_join(th, NULL);
        zmq_close(s);
        zmq_close(srv);
        summary(t, n, &c->med[k], &c->p99[k]);
        free(t);
        free(msg);
}

/* ---- Keys, arguments ---------------------------------------------------------------- */

static struct zap *keys(void)
{
        char text[128], path[160], err[256];
        struct zap *z = NULL;
        FILE *f;

        if (zmq_curve_keypair(server_pub, server_sec) < 0 ||
            zmq_curve_keypair(rig_pub, rig_sec) < 0)
                bench_die("zmq_curve_keypair (a libzmq without CURVE?)", -ENOTSUP);
        bench_mkdtemp(keydir, sizeof(keydir));
        snprintf(key_file, sizeof(key_file), "%s/server.key", keydir);
        snprintf(path, sizeof(path), "%s/authorized_keys", keydir);
        f = fopen(key_file, "w");
        if (!f || fprintf(f, "%s\n", server_sec) < 0 || fchmod(fileno(f), 0600) < 0 ||
            fclose(f) != 0)
                bench_die("server.key", -EIO);
        snprintf(text, sizeof(text), "%s operator\n", rig_pub);
        f = fopen(path, "w");
        if (!f || fputs(text, f) < 0 || fclose(f) != 0)
                bench_die("authorized_keys", -EIO);
        if (zap_start(zctx, path, &z, err, sizeof(err)) < 0)
                bench_die(err, -EIO);
        return z;
}

static void usage(void)
{
        fprintf(stderr, "usage: rig_zmq_rtt [-n POINTS] [-r RUNS] [--quick]\n"
                "  -n  timed round trips per run and row (default 10000, at most %u)\n"
                "  -r  runs per row (default 5, at most %d)\n"
                "  --quick  500 round trips, 1 run\n", MAX_POINTS, BENCH_MAX_RUNS);
        exit(2);
}

int main(int argc, char **argv)
{
        static const struct option longs[] = {
                { "quick", no_argument, NULL, 'q' }, { NULL, 0, NULL, 0 },
        };
        static struct cell cells[ROW_END];
        struct zap *z;
        double bare;
        int opt;

        while ((opt = getopt_long(argc, argv, "n:r:h", longs, NULL)) != -1) {
                switch (opt) {
                case 'n': arg_points = (unsigned)strtoul(optarg, NULL, 10); break;
                case 'r': arg_runs = (unsigned)strtoul(optarg, NULL, 10); break;
                case 'q': arg_points = 500; arg_runs = 1; break;
                default: usage();
                }
        }
        if (optind != argc || !arg_points || arg_points > MAX_POINTS || !arg_runs ||
            arg_runs > BENCH_MAX_RUNS)
                usage();
        snprintf(fmu_path, sizeof(fmu_path), "%s/LinearOde.fmu", FMUD_TEST_FMU_DIR);
        zctx = zmq_ctx_new();
        if (!zctx)
                bench_die("zmq_ctx_new", -ENOMEM);
        z = keys();
        bench_machine();
        printf("# %u runs of %u round trips per row over tcp loopback with CURVE; median over "
               "runs of each run's median / p99, in µs; ratio: median over bare\n", arg_runs,
               arg_points);
        fflush(stdout);
        for (unsigned k = 0; k < arg_runs; k++) {
                run_remote(&cells[ROW_REMOTE], k);
                run_bare(&cells[ROW_BARE], k);
        }
        printf("# messages: write %zu bytes, point %zu bytes (bare: the same sizes)\n",
               write_size, point_size);
        bare = bench_median(cells[ROW_BARE].med, arg_runs);
        printf("%-8s %9s %9s %7s\n", "row", "median", "p99", "ratio");
        for (int i = 0; i < ROW_END; i++) {
                double med = bench_median(cells[i].med, arg_runs);

                printf("%-8s %9.2f %9.2f %7.2f\n", row_names[i], med,
                       bench_median(cells[i].p99, arg_runs), med / bare);
        }
        printf("# load average after: %.2f\n", bench_load());
        zap_stop(z);
        zmq_ctx_term(zctx);
        bench_rmrf(keydir);
        return 0;
}
