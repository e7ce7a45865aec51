/*
 * ring_rtt: round-trip time of one small message through a channel, per
 * wait strategy, with 1 worker process and with more workers than cores.
 *
 * One round: the parent (the daemon's role) posts one request (16 bytes,
 * or -b bytes, up to 1024, to see what the record's size costs) to
 * every worker, then waits for every reply. Each worker (its own process,
 * attached from descriptor 3 as fmud-worker is) waits for a request and
 * echoes it back. The time of each round is taken with CLOCK_MONOTONIC;
 * a configuration is run several times (fresh processes each time) and the
 * table shows the median over runs of each run's median and 99th percentile.
 *
 * DESIGN: the strategy is the wait API's own parameter (struct wait_policy),
 * the same code path fmud runs; nothing here is compiled differently.
 * The parent tells each worker how many processes are active through the
 * channel's spin hint, exactly as the daemon does. Results are in
 * docs/BENCHMARKS.md.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shm/channel.h"

#define MAX_WORKERS     64
#define WORKER_FD       3
#define STOP            UINT64_MAX
#define PEER_DEAD_NS    (30ull * 1000000000u)

/* A record: seq and its complement, then filler up to arg_bytes (-b). */
#define MSG_BYTES_MAX   1024u
struct msg {
        uint64_t seq;
        uint64_t payload;
        unsigned char fill[MSG_BYTES_MAX - 16];
};

struct fleet {
        unsigned n;
        struct chan *c[MAX_WORKERS];
        pid_t pid[MAX_WORKERS];
};

struct result {
        double median_us, p99_us;
        size_t rounds;
};

static unsigned arg_rounds = 20000;
static unsigned arg_rounds_multi = 5000;
static unsigned arg_runs = 5;
static double arg_cap_s = 5.0;
static unsigned arg_workers[16] = { 1, 4, 8 };
static unsigned arg_nworkers = 3;
static enum wait_strategy arg_strategies[WAIT_STRATEGY_COUNT] = {
        WAIT_SPIN, WAIT_SPIN_FUTEX, WAIT_ADAPTIVE, WAIT_FUTEX,
};
static unsigned arg_nstrategies = 4;
static long arg_spin_ns = -1;           /* -1: the wait module's default */
static long arg_yield_ns = -1;
static unsigned arg_bytes = 16;        /* record payload of a request and of a reply */

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(int err, const char *what)
{
        fprintf(stderr, "ring_rtt: %s: %s\n", what, strerror(-err));
        exit(1);
}

/* The policy for strategy s, with the budgets from the command line if given. */
static void policy(struct wait_policy *wp, enum wait_strategy s)
{
        wait_policy_init(wp, s);
        if (arg_spin_ns >= 0)
                wp->spin_ns = (uint32_t)arg_spin_ns;
        if (arg_yield_ns >= 0)
                wp->yield_ns = (uint32_t)arg_yield_ns;
}

/* A worker: echo every request until STOP. The exit code names the failing step. */
static int worker_main(enum wait_strategy s)
{
        struct wait_policy wp;
        struct timespec dl;
        struct chan *c;
        struct msg m;

        if (chan_attach(WORKER_FD, &c) < 0)
                return 2;
        policy(&wp, s);
        for (;;) {
                int r;

                wait_deadline_in(&dl, PEER_DEAD_NS);
                r = ring_pop(chan_rx(c), &m, arg_bytes);
                if (r == -EAGAIN) {
                        /* runnable 0: the daemon's hint in the channel decides. */
                        if (chan_wait_rx(c, &wp, &dl) < 0)
                                return 3;
                        continue;
                }
                if (r != (int)arg_bytes)
                        return 4;
                if (m.seq == STOP)
                        break;
                while ((r = ring_push(chan_tx(c), &m, arg_bytes)) == -ENOSPC)
                        if (ring_wait_writable(chan_tx(c), &wp, &dl) < 0)
                                return 5;
                if (r < 0)
                        return 6;
        }
        chan_close(c);
        return 0;
}

static void fleet_start(struct fleet *f, unsigned n, enum wait_strategy s)
{
        struct chan_params p = {
                .name = "ring_rtt",
                .slot_size = 64,
                .req_slots = 64,
                .rep_slots = 64,
        };

        f->n = n;
        for (unsigned i = 0; i < n; i++) {
                int fd = chan_create(&p, &f->c[i]);

                if (fd < 0)
                        die(fd, "chan_create");
                chan_set_active(f->c[i], n + 1);
        }
        for (unsigned i = 0; i < n; i++) {
                pid_t pid = fork();

                if (pid < 0)
                        die(-errno, "fork");
                if (pid == 0) {
                        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                        if (dup2(chan_fd(f->c[i]), WORKER_FD) < 0)
                                _exit(1);
                        _exit(worker_main(s));
                }
                f->pid[i] = pid;
        }
}

static void fleet_stop(struct fleet *f)
{
        struct msg stop = { .seq = STOP };

        for (unsigned i = 0; i < f->n; i++) {
                int status;

                if (ring_push(chan_tx(f->c[i]), &stop, arg_bytes) < 0)
                        kill(f->pid[i], SIGKILL);
                if (waitpid(f->pid[i], &status, 0) != f->pid[i] ||
                    !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                        fprintf(stderr, "ring_rtt: worker %u ended with status 0x%x\n", i, status);
                chan_close(f->c[i]);
        }
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

        return x < y ? -1 : x > y;
}

/* One round: post to every worker, then wait for every reply. */
static void round_trip(struct fleet *f, const struct wait_policy *wp, uint64_t seq)
{
        struct timespec dl;
        static struct msg m;
        int r;

        m.seq = seq;
        m.payload = ~seq;
        for (unsigned i = 0; i < f->n; i++)
                if ((r = ring_push(chan_tx(f->c[i]), &m, arg_bytes)) < 0)
                        die(r, "ring_push");
        wait_deadline_in(&dl, PEER_DEAD_NS);
        for (unsigned i = 0; i < f->n; i++) {
                static struct msg back;

                while ((r = ring_pop(chan_rx(f->c[i]), &back, arg_bytes)) == -EAGAIN)
                        if ((r = ring_wait_readable(chan_rx(f->c[i]), wp, &dl)) < 0)
                                die(r, "waiting for a reply");
                if (r != (int)arg_bytes || back.seq != seq || back.payload != ~seq)
                        die(r < 0 ? r : -EBADMSG, "reply");
        }
}

static struct result run_once(unsigned n, enum wait_strategy s, unsigned rounds)
{
        unsigned warmup = rounds / 10 + 1;
        uint64_t *t = calloc(rounds, sizeof(*t)), start, cap;
        struct wait_policy wp;
        struct fleet f;
        struct result res;
        size_t done = 0;

        if (!t)
                die(-ENOMEM, "calloc");
        policy(&wp, s);
        wp.runnable = n + 1;
        fleet_start(&f, n, s);
        for (unsigned i = 0; i < warmup; i++)
                round_trip(&f, &wp, i);
        start = now_ns();
        cap = (uint64_t)(arg_cap_s * 1e9);
        while (done < rounds) {
                uint64_t t0 = now_ns();

                round_trip(&f, &wp, warmup + done);
                t[done++] = now_ns() - t0;
                if (now_ns() - start > cap)
                        break;
        }
        fleet_stop(&f);
        qsort(t, done, sizeof(*t), cmp_u64);
        res.rounds = done;
        res.median_us = (double)t[done / 2] / 1e3;
        res.p99_us = (double)t[(done * 99) / 100] / 1e3;
        free(t);
        return res;
}

static int cmp_dbl(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return x < y ? -1 : x > y;
}

static void print_machine(void)
{
        char line[256], model[256] = "unknown";
        struct utsname u;
        FILE *f = fopen("/proc/cpuinfo", "r");

        while (f && fgets(line, sizeof(line), f))
                if (strncmp(line, "model name", 10) == 0) {
                        char *v = strchr(line, ':');

                        snprintf(model, sizeof(model), "%s", v ? v + 2 : line);
                        model[strcspn(model, "\n")] = 0;
                        break;
                }
        if (f)
                fclose(f);
        uname(&u);
        printf("# cpus online: %u, cpu: %s, kernel: %s\n", wait_ncpu(), model, u.release);
        printf("# budgets: spin %ld ns, yield %ld ns; %u runs per row; median over runs of each run's median / p99 per round, in µs\n",
               arg_spin_ns >= 0 ? arg_spin_ns : (long)WAIT_SPIN_NS_DEFAULT,
               arg_yield_ns >= 0 ? arg_yield_ns : (long)WAIT_YIELD_NS_DEFAULT, arg_runs);
}

static void usage(void)
{
        fprintf(stderr,
                "usage: ring_rtt [-r rounds] [-R rounds] [-n runs] [-w workers,...] [-s strategy,...] [-t seconds] [-b bytes]\n"
                "                [-S spin_ns] [-Y yield_ns]\n"
                "  -r  measured rounds per run with 1 worker (default 20000)\n"
                "  -R  measured rounds per run with more workers (default 5000)\n"
                "  -n  runs per row (default 5)\n"
                "  -w  worker counts (default 1,4,8)\n"
                "  -s  strategies: spin, spin-futex, adaptive, futex (default all)\n"
                "  -t  cap on one run's measuring time in seconds (default 5)\n"
                "  -S  pure spin budget per wait in ns (default WAIT_SPIN_NS_DEFAULT)\n"
                "  -Y  sched_yield budget per wait in ns (default WAIT_YIELD_NS_DEFAULT)\n"
                "  -b  bytes of each request and reply, 16..1024 (default 16)\n");
        exit(2);
}

static void parse_args(int argc, char **argv)
{
        char *tok, *save;
        int opt;

        while ((opt = getopt(argc, argv, "r:R:n:w:s:t:S:Y:b:h")) != -1) {
                switch (opt) {
                case 'r': arg_rounds = (unsigned)strtoul(optarg, NULL, 10); break;
                case 'R': arg_rounds_multi = (unsigned)strtoul(optarg, NULL, 10); break;
                case 'n': arg_runs = (unsigned)strtoul(optarg, NULL, 10); break;
                case 't': arg_cap_s = strtod(optarg, NULL); break;
                case 'S': arg_spin_ns = strtol(optarg, NULL, 10); break;
                case 'Y': arg_yield_ns = strtol(optarg, NULL, 10); break;
                case 'b':
                        arg_bytes = (unsigned)strtoul(optarg, NULL, 10);
                        if (arg_bytes < 16 || arg_bytes > MSG_BYTES_MAX)
                                usage();
                        break;
                case 'w':
                        arg_nworkers = 0;
                        for (tok = strtok_r(optarg, ",", &save); tok && arg_nworkers < 16;
                             tok = strtok_r(NULL, ",", &save)) {
                                unsigned v = (unsigned)strtoul(tok, NULL, 10);

                                if (v < 1 || v > MAX_WORKERS)
                                        usage();
                                arg_workers[arg_nworkers++] = v;
                        }
                        break;
                case 's':
                        arg_nstrategies = 0;
                        for (tok = strtok_r(optarg, ",", &save); tok && arg_nstrategies < WAIT_STRATEGY_COUNT;
                             tok = strtok_r(NULL, ",", &save))
                                if (wait_strategy_parse(tok, &arg_strategies[arg_nstrategies++]) < 0)
                                        usage();
                        break;
                default:
                        usage();
                }
        }
        if (!arg_rounds || !arg_rounds_multi || !arg_runs || !arg_nworkers || !arg_nstrategies)
                usage();
}

int main(int argc, char **argv)
{
        parse_args(argc, argv);
        print_machine();
        printf("%-8s %-11s %10s %10s %21s %8s\n",
               "workers", "strategy", "median", "p99", "run medians min..max", "rounds");
        for (unsigned w = 0; w < arg_nworkers; w++)
                for (unsigned s = 0; s < arg_nstrategies; s++) {
                        unsigned n = arg_workers[w];
                        double med[64], p99[64];
                        size_t rounds = 0;
                        unsigned runs = arg_runs > 64 ? 64 : arg_runs;

                        for (unsigned k = 0; k < runs; k++) {
                                struct result r = run_once(n, arg_strategies[s],
                                                           n == 1 ? arg_rounds : arg_rounds_multi);

                                med[k] = r.median_us;
                                p99[k] = r.p99_us;
                                rounds += r.rounds;
                        }
                        qsort(med, runs, sizeof(double), cmp_dbl);
                        qsort(p99, runs, sizeof(double), cmp_dbl);
                        printf("%-8u %-11s %10.2f %10.2f %10.2f..%-10.2f %8zu\n", n,
                               wait_strategy_name(arg_strategies[s]), med[runs / 2], p99[runs / 2],
                               med[0], med[runs - 1], rounds / runs);
                        fflush(stdout);
                }
        return 0;
}
