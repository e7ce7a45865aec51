/*
 * daemon: transient sessions are leased to the connection that loaded
 * them (host.h, PROTOCOL.md "load"). A client killed with SIGKILL cannot
 * unload; its transient session goes once the lease runs out, its workers
 * reaped, while its persistent session stays, and a client that keeps
 * asking for the status keeps its transient session.
 *
 * The daemon runs with transient_grace = 1 s (a config file passed with
 * --config). Waits are bounded by generous hang guards, never measured.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon_fixture.h"

#define GUARD_POLLS     1200    /* of 50 ms: a minute, a hang guard only */
#define MAX_WORKERS     8

static struct fmud_daemon d;
static struct fmud *c;
static char conf_dir[] = "/tmp/fmud-transient-XXXXXX";
static char conf[sizeof(conf_dir) + 16];
static pid_t client = -1;

static void nap_ms(long ms)
{
        struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

        nanosleep(&ts, NULL);
}

static void setup(void)
{
        const char *extra[] = { "--config", conf, NULL };
        FILE *f;

        cr_assert(mkdtemp(conf_dir) != NULL, "mkdtemp: %s", strerror(errno));
        snprintf(conf, sizeof(conf), "%s/fmud.conf", conf_dir);
        f = fopen(conf, "w");
        cr_assert(f != NULL);
        fputs("[limits]\ntransient_grace = 1\n", f);
        cr_assert(fclose(f) == 0);
        daemon_start(&d, extra);
}

static void teardown(void)
{
        if (client > 0) {
                kill(client, SIGKILL);
                waitpid(client, NULL, 0);
                client = -1;
        }
        fmud_close(c);
        c = NULL;
        daemon_stop(&d);
        unlink(conf);
        rmdir(conf_dir);
}

/* The msd example paced at real time (10 s of simulated time): still running past the grace. */
static struct proto_load msd(bool transient)
{
        return (struct proto_load){ .path = daemon_str(FMUD_EXAMPLES "/msd.ssp"),
                                    .has_warp = true, .warp = 1.0, .transient = transient };
}

/* Whether session is in the daemon's list; *ret_transient its flag. */
static bool listed(uint64_t session, bool *ret_transient)
{
        struct proto_list_result l;

        cr_assert(eq(int, fmud_list(c, &l), 0), "%s", fmud_errmsg(c));
        for (uint32_t i = 0; i < l.n; i++)
                if (l.sessions[i].session == session) {
                        if (ret_transient)
                                *ret_transient = l.sessions[i].transient;
                        return true;
                }
        return false;
}

/* The worker pids of session, into pids; returns how many. */
static size_t workers_of(uint64_t session, pid_t *pids, size_t max)
{
        struct proto_session_status st;
        size_t n = 0;

        cr_assert(eq(int, fmud_status(c, session, &st), 0), "%s", fmud_errmsg(c));
        for (uint32_t i = 0; i < st.n_insts && n < max; i++)
                pids[n++] = (pid_t)st.insts[i].pid;
        return n;
}

/*
 * A client process: loads a transient and a persistent session, starts
 * both, writes their ids to fd, then waits to be killed sending nothing.
 */
static void run_client(int fd)
{
        struct proto_load t = msd(true), p = msd(false);
        uint64_t ids[2];
        struct fmud *cc = daemon_connect(&d);

        /* No cr_assert here: a child's failure is said on stderr and in its exit code. */
        for (int i = 0; i < 2; i++)
                if (fmud_load(cc, i ? &p : &t, &ids[i], NULL) < 0) {
                        fprintf(stderr, "client: load: %s\n", fmud_errmsg(cc));
                        _exit(2);
                }
        for (int i = 0; i < 2; i++)
                if (fmud_start(cc, &(struct proto_target){ .session = ids[i] }, NULL) < 0) {
                        fprintf(stderr, "client: start %d: %s\n", i, fmud_errmsg(cc));
                        _exit(3);
                }
        if (write(fd, ids, sizeof(ids)) != (ssize_t)sizeof(ids))
                _exit(4);
        for (;;)
                pause();
}

Test(daemon_transient, a_killed_clients_transient_session_is_unloaded_and_its_persistent_one_stays,
     .init = setup, .fini = teardown)
{
        pid_t workers[MAX_WORKERS];
        uint64_t ids[2];
        bool transient = false, gone = false;
        size_t n;
        char *log, want[128];
        int fds[2];

        cr_assert(pipe(fds) == 0);
        client = fork();
        cr_assert(client >= 0);
        if (client == 0) {
                close(fds[0]);
                run_client(fds[1]);
        }
        close(fds[1]);
        if (read(fds[0], ids, sizeof(ids)) != (ssize_t)sizeof(ids)) {
                int status = 0;

                cr_assert(waitpid(client, &status, 0) == client);
                client = -1;
                cr_assert(0, "the client loaded nothing: exit status %#x (its stderr says why)",
                          status);
        }
        close(fds[0]);
        c = daemon_connect(&d);
        cr_assert(listed(ids[0], &transient) && transient, "the transient session, listed so");
        cr_assert(listed(ids[1], &transient) && !transient, "the persistent session, listed so");
        n = workers_of(ids[0], workers, MAX_WORKERS);
        cr_assert(eq(sz, n, 2), "msd's two workers");

        cr_assert(kill(client, SIGKILL) == 0);
        cr_assert(eq(int, waitpid(client, NULL, 0), client));
        client = -1;

        for (int i = 0; i < GUARD_POLLS && !gone; i++) {
                gone = !listed(ids[0], NULL);
                if (!gone)
                        nap_ms(50);
        }
        cr_assert(gone, "session %llu still listed long after its owner died",
                  (unsigned long long)ids[0]);
        for (size_t k = 0; k < n; k++) {
                int i;

                for (i = 0; i < GUARD_POLLS && daemon_pid_alive(workers[k]); i++)
                        nap_ms(50);
                cr_expect(daemon_pid_alive(workers[k]) == false, "worker %d was not reaped",
                          (int)workers[k]);
        }
        cr_assert(listed(ids[1], &transient) && !transient, "the persistent session stays");
        cr_assert(eq(sz, daemon_children(d.pid, workers, MAX_WORKERS), 2),
                  "the persistent session's workers run on");
        log = daemon_log(&d);
        snprintf(want, sizeof(want), "session %llu: transient, its owner (ipc 0x",
                 (unsigned long long)ids[0]);
        cr_expect(strstr(log, want) != NULL, "no '%s' in the log:\n%s", want, log);
        cr_expect(strstr(log, "the lease ran out") != NULL, "the log says why:\n%s", log);
        free(log);
}

Test(daemon_transient, a_transient_session_whose_client_keeps_asking_stays_past_the_grace,
     .init = setup, .fini = teardown)
{
        struct proto_load a = msd(true);
        struct proto_session_status st;
        uint64_t s;

        c = daemon_connect(&d);
        s = daemon_load(c, &a, NULL);
        cr_assert(eq(int, fmud_start(c, &(struct proto_target){ .session = s }, NULL), 0), "%s",
                  fmud_errmsg(c));
        /* Four times the grace, asking every 200 ms (a fifth of it). */
        for (int i = 0; i < 20; i++) {
                cr_assert(eq(int, fmud_status(c, s, &st), 0), "%s", fmud_errmsg(c));
                cr_assert(st.transient, "status says transient");
                cr_assert(st.owner.len > 0 && !memcmp(st.owner.ptr, "ipc 0x", 6),
                          "status names the owner");
                nap_ms(200);
        }
        cr_assert(eq(int, fmud_status(c, s, &st), 0), "%s", fmud_errmsg(c));
        cr_assert(st.state == PROTO_STATE_RUNNING || st.state == PROTO_STATE_FINISHED,
                  "state %s", proto_state_name(st.state));
        cr_assert(eq(int, fmud_unload(c, &(struct proto_target){ .session = s }), 0), "%s",
                  fmud_errmsg(c));
}

Test(daemon_transient, a_transient_load_needs_no_more_than_the_flag_and_others_stay_persistent,
     .init = setup, .fini = teardown)
{
        struct proto_load a = msd(false);
        struct proto_session_status st;
        uint64_t s;

        c = daemon_connect(&d);
        s = daemon_load(c, &a, NULL);
        cr_assert(eq(int, fmud_status(c, s, &st), 0), "%s", fmud_errmsg(c));
        cr_assert(st.transient == false && st.owner.len == 0, "a plain load is persistent");
        /* Silent for three times the grace: a persistent session has no lease. */
        nap_ms(3000);
        cr_assert(listed(s, NULL), "the persistent session stays");
}

/* How many sessions the daemon lists. */
static uint32_t n_listed(void)
{
        struct proto_list_result l;

        cr_assert(eq(int, fmud_list(c, &l), 0), "%s", fmud_errmsg(c));
        return l.n;
}

Test(daemon_transient, a_killed_fmuctl_run_leaves_no_session, .init = setup, .fini = teardown)
{
        char *errpath = daemon_path(&d, "run.err"), *out = daemon_path(&d, "run.csv"), *err;
        bool transient = false;
        int i;

        client = fork();
        cr_assert(client >= 0);
        if (client == 0) {
                int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);

                dup2(fd, STDOUT_FILENO);
                dup2(fd, STDERR_FILENO);
                execl(FMUD_FMUCTL, "fmuctl", "run", FMUD_EXAMPLES "/msd.ssp", "--warp", "1",
                      "--out", out, "--endpoint", d.endpoint, "--quiet", (char *)NULL);
                _exit(127);
        }
        c = daemon_connect(&d);
        for (i = 0; i < GUARD_POLLS && n_listed() == 0 && waitpid(client, NULL, WNOHANG) == 0; i++)
                nap_ms(50);
        err = daemon_slurp(errpath, NULL);
        cr_assert(eq(u32, n_listed(), 1), "fmuctl run loaded no session: %s", err);
        free(err);
        free(errpath);
        free(out);
        cr_assert(listed(1, &transient) && transient, "fmuctl run loads transient sessions");
        cr_assert(kill(client, SIGKILL) == 0);
        cr_assert(eq(int, waitpid(client, NULL, 0), client));
        client = -1;
        for (i = 0; i < GUARD_POLLS && n_listed() > 0; i++)
                nap_ms(50);
        cr_assert(eq(u32, n_listed(), 0), "the killed run's session stays");
}
