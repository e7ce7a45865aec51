/* Test helpers: a real fmud per test (see daemon_fixture.h). */
#include "daemon_fixture.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "support/private_env.h"
#include "support/tmpdir.h"

/* Liveness bounds, not performance figures: generous for ASan on a busy machine. */
#define READY_TIMEOUT_MS        60000
#define EXIT_TIMEOUT_MS         60000
#define MAX_ARGS                64
#define MAX_CHILDREN            256

char *daemon_path(const struct fmud_daemon *d, const char *name)
{
        char *s;

        cr_assert(asprintf(&s, "%s/%s", d->dir, name) >= 0);
        return s;
}

char *daemon_slurp(const char *path, size_t *ret_len)
{
        FILE *f = fopen(path, "rb");
        char *buf;
        long n;

        cr_assert(f != NULL, "open '%s': %s", path, strerror(errno));
        cr_assert(fseek(f, 0, SEEK_END) == 0);
        n = ftell(f);
        cr_assert(n >= 0);
        rewind(f);
        buf = malloc((size_t)n + 1);
        cr_assert(buf != NULL);
        cr_assert(fread(buf, 1, (size_t)n, f) == (size_t)n, "read '%s'", path);
        buf[n] = '\0';
        fclose(f);
        if (ret_len)
                *ret_len = (size_t)n;
        return buf;
}

char *daemon_log(const struct fmud_daemon *d)
{
        if (!d->log_path || access(d->log_path, R_OK) < 0)
                return strdup("");
        return daemon_slurp(d->log_path, NULL);
}

/* Field 4 of /proc/PID/stat, after the parenthesised command (which may hold anything). */
static pid_t parent_of(const char *pid)
{
        char path[64], buf[512], *p;
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "/proc/%s/stat", pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return -1;
        buf[n] = '\0';
        p = strrchr(buf, ')');
        if (!p)
                return -1;
        return (pid_t)strtol(p + 4, NULL, 10);     /* ") S PPID" */
}

size_t daemon_children(pid_t ppid, pid_t *ret, size_t max)
{
        DIR *proc = opendir("/proc");
        struct dirent *e;
        size_t n = 0;

        cr_assert(proc != NULL);
        while ((e = readdir(proc)) != NULL) {
                if (e->d_name[0] < '1' || e->d_name[0] > '9')
                        continue;
                if (parent_of(e->d_name) != ppid)
                        continue;
                if (n < max)
                        ret[n] = (pid_t)strtol(e->d_name, NULL, 10);
                n++;
        }
        closedir(proc);
        return n < max ? n : max;
}

bool daemon_pid_alive(pid_t pid)
{
        char path[64];

        snprintf(path, sizeof(path), "/proc/%d", (int)pid);
        return access(path, F_OK) == 0;
}

static void fail_with_log(const struct fmud_daemon *d, const char *what)
{
        char *log = daemon_log(d);

        cr_log_error("fmud log (%s):\n%s", d->log_path, log);
        free(log);
        cr_assert_fail("%s", what);
}

static void free_fields(struct fmud_daemon *d);

/* A daemon that did not start: print its log, kill it, remove its folder, fail. */
static void fail_start(struct fmud_daemon *d, const char *what)
{
        char *log = daemon_log(d);

        if (d->pid) {
                (void) kill(d->pid, SIGKILL);
                (void) waitpid(d->pid, NULL, 0);
        }
        free_fields(d);
        cr_log_error("fmud log:\n%s", log);
        free(log);
        cr_assert_fail("%s", what);
}

static long now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The capabilities the next daemon_start() leaves in the daemon's bounding set (all: ~0). */
static uint64_t bounding = ~(uint64_t)0;

static void exec_daemon(const struct fmud_daemon *d, int ready_fd, char **argv)
{
        int log = open(d->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

        for (int c = 0; c < 64 && prctl(PR_CAPBSET_READ, c) >= 0; c++)
                if (!(bounding & ((uint64_t)1 << c)) && prctl(PR_CAPBSET_DROP, c) < 0)
                        _exit(126);

        /* The daemon must not outlive a test that crashed. */
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (log < 0 || null < 0 || dup2(null, 0) < 0 || dup2(log, 2) < 0 || dup2(log, 1) < 0)
                _exit(127);
        /* ready_fd was made inheritable by the parent (no O_CLOEXEC on it). */
        (void) ready_fd;
        execv(argv[0], argv);
        _exit(127);
}

static void wait_ready(struct fmud_daemon *d, int fd)
{
        char buf[16];
        size_t got = 0;
        long deadline = now_ms() + READY_TIMEOUT_MS;

        while (got < 6) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                long left = deadline - now_ms();
                ssize_t n;

                if (left <= 0)
                        fail_start(d, "fmud did not write READY in time");
                if (poll(&p, 1, (int)left) < 0) {
                        cr_assert(errno == EINTR);
                        continue;
                }
                if (!p.revents)
                        continue;
                n = read(fd, buf + got, sizeof(buf) - 1 - got);
                if (n <= 0)
                        fail_start(d, "fmud closed its ready fd without READY (did it exit?)");
                got += (size_t)n;
        }
        buf[got] = '\0';
        if (strcmp(buf, "READY\n") != 0)
                fail_start(d, "the ready fd said something else than READY");
}

void daemon_start(struct fmud_daemon *d, const char *const *extra)
{
        char *argv[MAX_ARGS], fdarg[16];
        int pipefd[2], n = 0;
        pid_t pid;

        *d = (struct fmud_daemon){ 0 };
        d->dir = tmpdir_new("fmud-e2e");
        cr_assert(d->dir != NULL);
        d->control_sock = daemon_path(d, "control.sock");
        d->events_sock = daemon_path(d, "events.sock");
        d->cache_dir = daemon_path(d, "cache");
        d->scratch_dir = daemon_path(d, "scratch");
        d->state_dir = daemon_path(d, "state");
        d->log_path = daemon_path(d, "fmud.log");
        cr_assert(asprintf(&d->endpoint, "ipc://%s", d->control_sock) >= 0);
        cr_assert(asprintf(&d->pub_endpoint, "ipc://%s", d->events_sock) >= 0);
        /*
         * A root daemon's workers run as an unprivileged user: they must
         * reach the cache (read) through the folder, as under /var/cache.
         */
        cr_assert(chmod(d->dir, 0711) == 0);
        /* fmuctl, the remote master, this daemon: never another one's endpoint or cache. */
        cr_assert(private_env(d->dir) == 0);
        cr_assert(mkdir(d->cache_dir, 0755) == 0);
        cr_assert(mkdir(d->scratch_dir, 0711) == 0);
        /* Orphans of the daemon come to us, where daemon_stop() finds them. */
        cr_assert(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);

        /* Only the write end is inherited: the read end is close-on-exec. */
        cr_assert(pipe2(pipefd, O_CLOEXEC) == 0);
        cr_assert(fcntl(pipefd[1], F_SETFD, 0) == 0);
        snprintf(fdarg, sizeof(fdarg), "%d", pipefd[1]);

        argv[n++] = (char *)FMUD_BINARY;
        argv[n++] = "--endpoint";
        argv[n++] = d->endpoint;
        argv[n++] = "--pub-endpoint";
        argv[n++] = d->pub_endpoint;
        argv[n++] = "--cache-dir";
        argv[n++] = d->cache_dir;
        argv[n++] = "--scratch-dir";
        argv[n++] = d->scratch_dir;
        argv[n++] = "--worker";
        argv[n++] = (char *)FMUD_WORKER;
        argv[n++] = "--ready-fd";
        argv[n++] = fdarg;
        argv[n++] = "--allow";
        argv[n++] = (char *)FMUD_TEST_FMU_DIR;
        argv[n++] = "--allow";
        argv[n++] = (char *)FMUD_EXAMPLES;
        argv[n++] = "--allow";
        argv[n++] = (char *)FMUD_MASTER_FMU_DIR;
        argv[n++] = "--allow";
        argv[n++] = d->dir;
        argv[n++] = "--output-dir";
        argv[n++] = d->dir;
        argv[n++] = "--state-dir";
        argv[n++] = d->state_dir;
        for (size_t i = 0; extra && extra[i]; i++) {
                cr_assert(n < MAX_ARGS - 1);
                argv[n++] = (char *)extra[i];
        }
        argv[n] = NULL;

        pid = fork();
        cr_assert(pid >= 0);
        if (pid == 0)
                exec_daemon(d, pipefd[1], argv);
        close(pipefd[1]);
        d->pid = pid;
        wait_ready(d, pipefd[0]);
        close(pipefd[0]);
}

void daemon_start_conf(struct fmud_daemon *d, const char *conf)
{
        char *dir = tmpdir_new("fmud-conf"), path[512];

        cr_assert(dir != NULL);
        cr_assert(tmpdir_write(dir, "fmud.conf", conf, strlen(conf)) == 0);
        snprintf(path, sizeof(path), "%s/fmud.conf", dir);
        daemon_start(d, (const char *const[]){ "--config", path, NULL });
        d->conf_dir = dir;
}

void daemon_start_bounded(struct fmud_daemon *d, uint64_t caps, const char *const *extra)
{
        bounding = caps;
        daemon_start(d, extra);
        bounding = ~(uint64_t)0;
}

/* waitpid with a bound; returns the status, or -1 after SIGKILL on timeout. */
static int reap(pid_t pid, long timeout_ms)
{
        long deadline = now_ms() + timeout_ms;
        int status;

        for (;;) {
                pid_t r = waitpid(pid, &status, WNOHANG);

                if (r == pid)
                        return status;
                cr_assert(r == 0 || errno == EINTR, "waitpid: %s", strerror(errno));
                if (now_ms() > deadline) {
                        (void) kill(pid, SIGKILL);
                        (void) waitpid(pid, &status, 0);
                        return -1;
                }
                usleep(10000);
        }
}

static size_t count_entries(const char *dir)
{
        DIR *dh = opendir(dir);
        struct dirent *e;
        size_t n = 0;

        if (!dh)
                return 0;
        while ((e = readdir(dh)) != NULL)
                n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
        closedir(dh);
        return n;
}

static void free_fields(struct fmud_daemon *d)
{
        if (d->dir)
                tmpdir_free(d->dir);
        if (d->conf_dir)
                tmpdir_free(d->conf_dir);
        free(d->endpoint);
        free(d->pub_endpoint);
        free(d->control_sock);
        free(d->events_sock);
        free(d->cache_dir);
        free(d->scratch_dir);
        free(d->state_dir);
        free(d->log_path);
        *d = (struct fmud_daemon){ 0 };
}

/* The first thing wrong after SIGTERM, or NULL. */
static const char *check_shutdown(struct fmud_daemon *d, const pid_t *workers, size_t n_workers,
                                  char *what, size_t len)
{
        pid_t left[MAX_CHILDREN];
        size_t n_left;
        int status;

        status = reap(d->pid, EXIT_TIMEOUT_MS);
        d->pid = 0;
        if (status == -1)
                return "fmud did not exit after SIGTERM (killed)";
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                snprintf(what, len, "fmud ended with %s %d after SIGTERM",
                         WIFEXITED(status) ? "exit status" : "signal",
                         WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
                return what;
        }
        if (access(d->control_sock, F_OK) == 0)
                return "control socket file left behind";
        if (access(d->events_sock, F_OK) == 0)
                return "events socket file left behind";
        for (size_t i = 0; i < n_workers; i++)
                if (daemon_pid_alive(workers[i])) {
                        (void) kill(workers[i], SIGKILL);
                        snprintf(what, len, "process %d the daemon started outlived it",
                                 (int)workers[i]);
                        return what;
                }
        /* Anything else the daemon started and did not reap was re-parented to us. */
        n_left = daemon_children(getpid(), left, MAX_CHILDREN);
        for (size_t i = 0; i < n_left; i++) {
                (void) kill(left[i], SIGKILL);
                (void) waitpid(left[i], NULL, 0);
        }
        if (n_left) {
                snprintf(what, len, "%zu orphan(s) of the daemon left, first %d", n_left,
                         (int)left[0]);
                return what;
        }
        if (count_entries(d->scratch_dir) != 0)
                return "scratch folder not empty after shutdown";
        return NULL;
}

void daemon_stop(struct fmud_daemon *d)
{
        pid_t workers[MAX_CHILDREN];
        const char *problem = NULL;
        char what[160];
        char *log = NULL;
        size_t n_workers;

        if (!d->dir)
                return;
        if (d->pid) {
                n_workers = daemon_children(d->pid, workers, MAX_CHILDREN);
                cr_assert(kill(d->pid, SIGTERM) == 0);
                problem = check_shutdown(d, workers, n_workers, what, sizeof(what));
        }
        if (problem)
                log = daemon_log(d);
        free_fields(d);
        if (problem) {
                cr_log_error("fmud log:\n%s", log);
                free(log);
                cr_assert_fail("%s", problem);
        }
}

void daemon_kill(struct fmud_daemon *d)
{
        if (d->pid) {
                (void) kill(d->pid, SIGKILL);
                (void) waitpid(d->pid, NULL, 0);
        }
        free_fields(d);
}

void daemon_join(struct fmud_daemon *d)
{
        const char *problem = NULL;
        char what[160];
        char *log = NULL;

        if (!d->dir)
                return;
        if (d->pid)
                problem = check_shutdown(d, NULL, 0, what, sizeof(what));
        if (problem)
                log = daemon_log(d);
        free_fields(d);
        if (problem) {
                cr_log_error("fmud log:\n%s", log);
                free(log);
                cr_assert_fail("%s", problem);
        }
}

/* ---- Client side ---------------------------------------------------------------- */

struct fmud *daemon_connect(const struct fmud_daemon *d)
{
        struct fmud_opts o = { .client_name = "fmud e2e test" };
        struct fmud *c = NULL;
        char err[256] = "";
        int r;

        r = fmud_connect(d->endpoint, &o, &c, err, sizeof(err));
        if (r < 0)
                fail_with_log(d, err);
        return c;
}

struct proto_str daemon_str(const char *s)
{
        return (struct proto_str){ .ptr = s, .len = s ? (uint32_t)strlen(s) : 0 };
}

bool daemon_str_eq(struct proto_str s, const char *c)
{
        return s.len == strlen(c) && memcmp(s.ptr, c, s.len) == 0;
}

uint64_t daemon_load(struct fmud *c, const struct proto_load *a, uint64_t *ret_generation)
{
        uint64_t session = 0, gen = 0;
        int r = fmud_load(c, a, &session, &gen);

        cr_assert(r == 0, "load '%.*s': %d %s", (int)a->path.len, a->path.ptr, r,
                  fmud_errmsg(c));
        cr_assert(session > 0);
        if (ret_generation)
                *ret_generation = gen;
        return session;
}

static bool final_state(enum proto_state s)
{
        return s == PROTO_STATE_FINISHED || s == PROTO_STATE_FAULTED || s == PROTO_STATE_STOPPED;
}

void daemon_wait_state(struct fmud *c, uint64_t session, enum proto_state want,
                       struct proto_session_status *ret_status)
{
        long deadline = now_ms() + READY_TIMEOUT_MS;
        struct proto_session_status st;

        for (;;) {
                int r = fmud_status(c, session, &st);

                cr_assert(r == 0, "status %" PRIu64 ": %s", session, fmud_errmsg(c));
                if (st.state == want)
                        break;
                cr_assert(!final_state(st.state) || st.state == want,
                          "session %" PRIu64 " is %s (%.*s), waited for %s", session,
                          proto_state_name(st.state), (int)st.message.len, st.message.ptr,
                          proto_state_name(want));
                cr_assert(now_ms() < deadline, "session %" PRIu64 " still %s, waited for %s",
                          session, proto_state_name(st.state), proto_state_name(want));
                usleep(5000);
        }
        if (ret_status)
                *ret_status = st;
}

static const char *err_name(int code)
{
        const char *s = code >= 0 ? proto_err_name((enum proto_err)code) : NULL;

        return s ? s : "(none)";
}

void daemon_assert_refused(struct fmud *c, int r, enum proto_err code, const char *what)
{
        cr_assert(r == FMUD_E_REFUSED, "%s: expected refusal '%s', got %d (%s)", what,
                  err_name((int)code), r, fmud_errmsg(c));
        cr_assert(fmud_errcode(c) == (int)code, "%s: expected '%s', got '%s': %s", what,
                  err_name((int)code), err_name(fmud_errcode(c)), fmud_errmsg(c));
        cr_assert(fmud_errmsg(c)[0] != '\0', "%s: a refusal says why", what);
}

/* ---- Raw messages ------------------------------------------------------------------ */

void daemon_raw_open(const struct fmud_daemon *d, struct daemon_raw *r)
{
        int linger = 0, timeout = DAEMON_RAW_RECV_MS;

        r->ctx = zmq_ctx_new();
        cr_assert(r->ctx);
        r->s = zmq_socket(r->ctx, ZMQ_DEALER);
        cr_assert(r->s);
        cr_assert(zmq_setsockopt(r->s, ZMQ_LINGER, &linger, sizeof(linger)) == 0);
        cr_assert(zmq_setsockopt(r->s, ZMQ_RCVTIMEO, &timeout, sizeof(timeout)) == 0);
        cr_assert(zmq_connect(r->s, d->endpoint) == 0);
}

void daemon_raw_close(struct daemon_raw *r)
{
        if (r->s)
                zmq_close(r->s);
        if (r->ctx)
                zmq_ctx_term(r->ctx);
        r->s = r->ctx = NULL;
}

void daemon_raw_send(struct daemon_raw *r, const void *buf, size_t len, bool more)
{
        cr_assert(zmq_send(r->s, buf, len, more ? ZMQ_SNDMORE : 0) == (int)len, "send: %s",
                  zmq_strerror(zmq_errno()));
}

void daemon_raw_send_pw(struct daemon_raw *r, struct pw *w)
{
        cr_assert(!w->error);
        daemon_raw_send(r, pw_data(w), pw_size(w), false);
        pw_reset(w);
}

void daemon_raw_recv(struct daemon_raw *r, struct daemon_raw_reply *ret)
{
        char err[256];
        zmq_msg_t m;
        size_t n;

        memset(ret, 0, sizeof(*ret));
        zmq_msg_init(&m);
        cr_assert(zmq_msg_recv(&m, r->s, 0) >= 0, "no reply: %s", zmq_strerror(zmq_errno()));
        n = zmq_msg_size(&m);
        ret->buf = malloc(n ? n : 1);
        cr_assert(ret->buf);
        memcpy(ret->buf, zmq_msg_data(&m), n);
        zmq_msg_close(&m);
        cr_assert(pv_decode(ret->buf, n, NULL, &ret->doc, err, sizeof(err)) == 0, "reply: %s",
                  err);
        cr_assert(proto_reply_decode(ret->doc.root, &ret->rep, err, sizeof(err)) == 0, "%s", err);
        n = ret->rep.ok ? 0 : ret->rep.message_len;
        if (n >= sizeof(ret->message))
                n = sizeof(ret->message) - 1;
        memcpy(ret->message, ret->rep.message, n);
        ret->message[n] = '\0';
}

void daemon_raw_reply_fini(struct daemon_raw_reply *r)
{
        pv_doc_fini(&r->doc);
        free(r->buf);
        r->buf = NULL;
}
