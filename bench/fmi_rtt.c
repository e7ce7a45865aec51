/*
 * fmi_rtt: a remote master's point at the FMI level (PROTOCOL.md "fmi"):
 * one batch that sets 10 Float64 inputs, steps and gets 10 outputs of one
 * LinearOde instance in fmud, next to the same point without fmud, in the
 * same run. Rows, in points per second:
 *
 *   fmi       the batch over ipc to a real fmud (started here) and its
 *             reply: the control thread's decode and checks, the hand-over
 *             to the instance's thread, three calls to the sandboxed
 *             worker, the reply's encoding, ZeroMQ both ways;
 *   bare      a DEALER sends a message of the batch's size over ipc to a
 *             ROUTER in another process that answers one of the reply's
 *             size: ZeroMQ's round trip alone, the floor of any remote call;
 *   inproc    the same set + doStep + get from this process through
 *             inst_do_step() (engine/instance/instance.h) to a worker of its
 *             own, unsandboxed: one round trip over shared memory, what a
 *             master inside the daemon pays.
 *
 * DESIGN: as bench/control.c, the daemon and the echo server are separate
 * processes, so the fmi and bare rows cross the same process boundary; the
 * runs of the rows are interleaved (run 1 of each row, then run 2, ...)
 * and a cell is the median over runs of each run's median point time
 * (points per second: its inverse). The batch is encoded anew for every
 * point and its reply decoded and checked (y_i - u_i the same for all i),
 * as a master would. The ratio fmi / bare is the target's (within 1.5x).
 *
 *   fmi_rtt [-n POINTS] [-r RUNS]
 *
 * Results are in docs/BENCHMARKS.md ("FMI-level remote master").
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "engine/instance/instance.h"
#include "proto/proto.h"

#define MAX_RUNS        32
#define NCH             10
#define H               1e-3

enum row { ROW_FMI, ROW_BARE, ROW_INPROC, ROW_END };
static const char *const row_names[ROW_END] = { "fmi (fmud, ipc)", "bare ZeroMQ (ipc)",
                                                "inproc (inst_do_step)" };

static char dir[] = "/tmp/fmud-fmi-rtt-XXXXXX";
static char ep[300], echo_ep[300];
static pid_t fmud_pid = -1, echo_pid = -1;
static uint32_t vr_u[NCH], vr_y[NCH];

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

static double median(double *v, size_t n)
{
        qsort(v, n, sizeof(*v), cmp_dbl);
        return v[n / 2];
}

static void die(const char *what, const char *why)
{
        fprintf(stderr, "fmi_rtt: %s: %s\n", what, why);
        exit(1);
}

/* The echo server: answers a message with one of the size its first 4 bytes name. */
static void echo_main(void)
{
        void *ctx = zmq_ctx_new(), *s = zmq_socket(ctx, ZMQ_ROUTER);
        static char reply[1 << 16];

        if (zmq_bind(s, echo_ep) < 0)
                _exit(1);
        for (;;) {
                zmq_msg_t id, m;
                uint32_t n = 0;

                zmq_msg_init(&id);
                zmq_msg_init(&m);
                if (zmq_msg_recv(&id, s, 0) < 0 || zmq_msg_recv(&m, s, 0) < 0)
                        _exit(0);
                if (zmq_msg_size(&m) >= 4)
                        memcpy(&n, zmq_msg_data(&m), 4);
                if (n > sizeof(reply))
                        n = sizeof(reply);
                zmq_msg_send(&id, s, ZMQ_SNDMORE);
                zmq_send(s, reply, n, 0);
                zmq_msg_close(&m);
        }
}

static void start_fmud(void)
{
        char conf[2048], path[400], ready[8] = "";
        struct pollfd pp;
        int pfd[2], fd;

        snprintf(conf, sizeof(conf),
                 "[control]\nendpoint = %s\npub_endpoint = ipc://%s/events.sock\n"
                 "[paths]\nallow = %s\ncache_dir = %s/cache\nscratch_dir = %s/scratch\n"
                 "[log]\nlevel = warning\n", ep, dir, FMUD_TEST_FMU_DIR, dir, dir);
        snprintf(path, sizeof(path), "%s/fmud.conf", dir);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || write(fd, conf, strlen(conf)) != (ssize_t)strlen(conf))
                die(path, strerror(errno));
        close(fd);
        if (pipe(pfd) < 0)
                die("pipe", strerror(errno));
        fmud_pid = fork();
        if (fmud_pid == 0) {
                dup2(pfd[1], 3);
                execl(FMUD_BINARY, FMUD_BINARY, "--config", path, "--ready-fd", "3",
                      (char *)NULL);
                _exit(127);
        }
        close(pfd[1]);
        pp = (struct pollfd){ .fd = pfd[0], .events = POLLIN };
        if (poll(&pp, 1, 30000) <= 0 || read(pfd[0], ready, sizeof(ready) - 1) != 6)
                die("fmud", "did not start");
        close(pfd[0]);
}

static void *dealer(void *ctx, const char *endpoint)
{
        void *s = zmq_socket(ctx, ZMQ_DEALER);
        int linger = 0, to = 10000;

        zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof(linger));
        zmq_setsockopt(s, ZMQ_RCVTIMEO, &to, sizeof(to));
        if (zmq_connect(s, endpoint) < 0)
                die(endpoint, zmq_strerror(zmq_errno()));
        return s;
}

/* Send w's request on s and decode the reply into doc/rep; the reply's size. */
static size_t call(void *s, struct pw *w, char *buf, size_t cap, struct pv_doc *doc,
                   struct proto_reply *rep)
{
        struct proto_limits lim;
        char err[256];
        int n;

        if (zmq_send(s, pw_data(w), pw_size(w), 0) < 0 || (n = zmq_recv(s, buf, cap, 0)) < 0)
                die("fmi", zmq_strerror(zmq_errno()));
        pw_reset(w);
        proto_limits_default(&lim);
        pv_doc_fini(doc);
        if ((size_t)n > cap || pv_decode(buf, (size_t)n, &lim, doc, err, sizeof(err)) < 0 ||
            proto_reply_decode(doc->root, rep, err, sizeof(err)) < 0)
                die("fmi reply", err);
        if (!rep->ok)
                die("fmi", "refused");
        return (size_t)n;
}

static void call_map(struct pw *w, uint64_t inst, const char *fn, uint32_t n_more)
{
        pw_map(w, 2 + n_more);
        pw_str(w, "instance");
        pw_u64(w, inst);
        pw_str(w, "fn");
        pw_str(w, fn);
}

static void vrs(struct pw *w, const uint32_t *v)
{
        pw_str(w, "vrs");
        pw_array(w, NCH);
        for (int i = 0; i < NCH; i++)
                pw_u64(w, v[i]);
}

/* One point's batch: set u, doStep from t, get y. */
static void encode_point(struct pw *w, uint64_t id, uint64_t inst, double t, const double *u)
{
        proto_req_begin(w, id, PROTO_OP_FMI, 1);
        pw_str(w, "calls");
        pw_array(w, 3);
        call_map(w, inst, "set", 3);
        pw_str(w, "type");
        pw_str(w, "Float64");
        vrs(w, vr_u);
        pw_str(w, "values");
        pw_array(w, NCH);
        for (int i = 0; i < NCH; i++)
                pw_f64(w, u[i]);
        call_map(w, inst, "doStep", 2);
        pw_str(w, "t");
        pw_f64(w, t);
        pw_str(w, "h");
        pw_f64(w, H);
        call_map(w, inst, "get", 2);
        pw_str(w, "type");
        pw_str(w, "Float64");
        vrs(w, vr_y);
}

/* y_i - u_i is x for every i: the point's outputs are its own. */
static void check_point(const struct proto_reply *rep, const double *u)
{
        const struct pv *r = pv_get(rep->result, "results"), *y;
        double x = 0, v;

        if (!r || r->type != PV_ARRAY || r->a.n != 3 || (y = &r->a.items[2])->type != PV_ARRAY ||
            y->a.n != NCH)
                die("fmi reply", "not three results with 10 values");
        for (int i = 0; i < NCH; i++) {
                if (pv_f64(&y->a.items[i], &v) < 0)
                        die("fmi reply", "not a number");
                if (i == 0)
                        x = v - u[0];
                else if (v - u[i] - x > 1e-9 || v - u[i] - x < -1e-9)
                        die("fmi reply", "y_i - u_i differ");
        }
}

struct rig {
        void *ctx, *fmi, *echo;
        uint64_t inst, next_id;
        double t, t_local;              /* the fmud instance's time, the local one's */
        struct pw w;
        struct pv_doc doc;
        char buf[1 << 16];
        size_t req_size, rep_size;      /* of the fmi batch and its reply */
        struct inst *local;
        struct inst_in in;
        struct inst_out out;
        double u[NCH], y[NCH];
};

static void rig_open(struct rig *g)
{
        struct proto_reply rep;
        struct inst_opts o;
        char *why = NULL;
        int r;

        g->ctx = zmq_ctx_new();
        g->fmi = dealer(g->ctx, ep);
        g->echo = dealer(g->ctx, echo_ep);
        if (pw_init(&g->w) < 0)
                die("pw_init", "out of memory");
        proto_instantiate_encode(&g->w, ++g->next_id, &(struct proto_instantiate){
                .fmu = { FMUD_TEST_FMU_DIR "/LinearOde.fmu",
                         (uint32_t)strlen(FMUD_TEST_FMU_DIR "/LinearOde.fmu") } });
        call(g->fmi, &g->w, g->buf, sizeof(g->buf), &g->doc, &rep);
        if (pv_u64(pv_get(rep.result, "instance"), &g->inst) < 0)
                die("instantiate", "no instance");
        proto_req_begin(&g->w, ++g->next_id, PROTO_OP_FMI, 1);
        pw_str(&g->w, "calls");
        pw_array(&g->w, 2);
        call_map(&g->w, g->inst, "enterInitializationMode", 0);
        call_map(&g->w, g->inst, "exitInitializationMode", 0);
        call(g->fmi, &g->w, g->buf, sizeof(g->buf), &g->doc, &rep);
        /* The sizes the bare row sends and answers. */
        encode_point(&g->w, ++g->next_id, g->inst, g->t, g->u);
        g->req_size = pw_size(&g->w);
        g->rep_size = call(g->fmi, &g->w, g->buf, sizeof(g->buf), &g->doc, &rep);
        g->t += H;
        inst_opts_default(&o);
        o.worker_path = FMUD_WORKER;
        o.fmu_dir = FMUD_TEST_FMU_DIR "/LinearOde";
        o.name = "fmi_rtt";
        r = inst_new(&o, &g->local, &why);
        if (r < 0)
                die("inst_new", why ? why : strerror(-r));
        if (inst_instantiate(g->local, &(struct inst_instantiate){ 0 }) != INST_OK ||
            inst_enter_initialization_mode(g->local, NULL) != INST_OK ||
            inst_exit_initialization_mode(g->local) != INST_OK)
                die("inproc", inst_message(g->local));
        g->in = (struct inst_in){ MD_FLOAT64, vr_u, NCH, g->u, NULL, NCH };
        g->out = (struct inst_out){ MD_FLOAT64, vr_y, NCH, g->y, NULL, NCH };
}

static void rig_close(struct rig *g)
{
        (void) inst_free(g->local);
        pv_doc_fini(&g->doc);
        pw_fini(&g->w);
        zmq_close(g->fmi);
        zmq_close(g->echo);
        zmq_ctx_term(g->ctx);
}

/* n points of row; the median µs of one. */
static double run_row(struct rig *g, enum row row, unsigned n)
{
        double *t = malloc(n * sizeof(*t)), med;
        char *bare = calloc(1, g->req_size);
        uint32_t rs = (uint32_t)g->rep_size;
        struct proto_reply rep;

        if (!t || !bare)
                die("malloc", "out of memory");
        memcpy(bare, &rs, 4);
        for (unsigned k = 0; k < n + n / 10; k++) {
                double t0;

                for (int i = 0; i < NCH; i++)
                        g->u[i] = (double)(k % 100) + i;
                t0 = now_us();
                if (row == ROW_FMI) {
                        encode_point(&g->w, ++g->next_id, g->inst, g->t, g->u);
                        call(g->fmi, &g->w, g->buf, sizeof(g->buf), &g->doc, &rep);
                        check_point(&rep, g->u);
                        g->t += H;
                } else if (row == ROW_BARE) {
                        if (zmq_send(g->echo, bare, g->req_size, 0) < 0 ||
                            zmq_recv(g->echo, g->buf, sizeof(g->buf), 0) < 0)
                                die("bare", zmq_strerror(zmq_errno()));
                } else {
                        struct inst_step s = { .t = g->t_local, .h = H, .no_set_prior = true,
                                               .inputs = &g->in, .n_inputs = 1,
                                               .outputs = &g->out, .n_outputs = 1 };
                        struct inst_step_result res;

                        if (inst_do_step(g->local, &s, &res) != INST_OK)
                                die("inproc", inst_message(g->local));
                        g->t_local += H;
                }
                if (k >= n / 10)        /* the first tenth warms up */
                        t[k - n / 10] = now_us() - t0;
        }
        med = median(t, n);
        free(t);
        free(bare);
        return med;
}

int main(int argc, char **argv)
{
        unsigned n = 5000, runs = 5;
        double med[ROW_END][MAX_RUNS], m[ROW_END];
        struct rig g = { 0 };
        int c;

        while ((c = getopt(argc, argv, "n:r:")) != -1) {
                switch (c) {
                case 'n': n = (unsigned)atoi(optarg); break;
                case 'r': runs = (unsigned)atoi(optarg); break;
                default:
                        fprintf(stderr, "usage: fmi_rtt [-n POINTS] [-r RUNS]\n");
                        return 2;
                }
        }
        if (n < 10 || runs < 1 || runs > MAX_RUNS)
                return 2;
        for (int i = 0; i < NCH; i++) {
                vr_u[i] = 10 + (uint32_t)i;
                vr_y[i] = 20 + (uint32_t)i;
        }
        if (!mkdtemp(dir))
                die("mkdtemp", strerror(errno));
        snprintf(ep, sizeof(ep), "ipc://%s/control.sock", dir);
        snprintf(echo_ep, sizeof(echo_ep), "ipc://%s/echo.sock", dir);
        echo_pid = fork();
        if (echo_pid == 0)
                echo_main();
        start_fmud();
        rig_open(&g);
        for (unsigned r = 0; r < runs; r++)
                for (int row = 0; row < ROW_END; row++)
                        med[row][r] = run_row(&g, (enum row)row, n);
        printf("FMI-level point: set 10 Float64 + doStep + get 10, %u points x %u runs "
               "(batch %zu bytes, reply %zu bytes)\n", n, runs, g.req_size, g.rep_size);
        printf("%-24s %12s %12s\n", "row", "median us", "points/s");
        for (int row = 0; row < ROW_END; row++) {
                m[row] = median(med[row], runs);
                printf("%-24s %12.1f %12.0f\n", row_names[row], m[row], 1e6 / m[row]);
        }
        printf("fmi / bare: %.2fx (target: within 1.5x); fmi / inproc: %.2fx\n",
               m[ROW_FMI] / m[ROW_BARE], m[ROW_FMI] / m[ROW_INPROC]);
        rig_close(&g);
        kill(fmud_pid, SIGTERM);
        waitpid(fmud_pid, NULL, 0);
        kill(echo_pid, SIGKILL);
        waitpid(echo_pid, NULL, 0);
        {
                char cmd[400];

                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
                if (system(cmd) != 0)
                        fprintf(stderr, "could not remove %s\n", dir);
        }
        return 0;
}
