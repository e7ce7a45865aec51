/* Test helpers: a real fmud and raw ZeroMQ clients (test_fmud.h). */
#include "test_fmud.h"

#include <errno.h>
#include <fcntl.h>
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

#include "support/tmpdir.h"

void tf_path(const struct tf_daemon *d, const char *name, char *buf, size_t len)
{
        snprintf(buf, len, "%s/%s", d->dir, name);
}

int tf_start(struct tf_daemon *d, const char *conf, const char *const *extra)
{
        char conf_path[512], cache[512], scratch[512], allowed[512], log[512], fdarg[16];
        char state[512];
        const char *argv[64];
        int n = 0, pfd[2], r;
        char buf[16] = "";
        struct pollfd pp;
        ssize_t got;

        memset(d, 0, sizeof(*d));
        d->pid = -1;
        d->dir = tmpdir_new("fmud-test");
        if (!d->dir)
                return -errno;
        snprintf(d->run_dir, sizeof(d->run_dir), "%s/run", d->dir);
        snprintf(d->ctl_path, sizeof(d->ctl_path), "%s/control.sock", d->run_dir);
        snprintf(d->pub_path, sizeof(d->pub_path), "%s/events.sock", d->run_dir);
        snprintf(d->ctl, sizeof(d->ctl), "ipc://%s", d->ctl_path);
        snprintf(d->pub, sizeof(d->pub), "ipc://%s", d->pub_path);
        tf_path(d, "fmud.conf", conf_path, sizeof(conf_path));
        tf_path(d, "cache", cache, sizeof(cache));
        tf_path(d, "scratch", scratch, sizeof(scratch));
        tf_path(d, "state", state, sizeof(state));
        tf_path(d, "allowed", allowed, sizeof(allowed));
        tf_path(d, "fmud.log", log, sizeof(log));
        if (tmpdir_write(d->dir, "fmud.conf", conf ? conf : "", conf ? strlen(conf) : 0) < 0 ||
            mkdir(allowed, 0755) < 0)
                return -errno;
        if (pipe2(pfd, O_CLOEXEC) < 0)
                return -errno;
        snprintf(fdarg, sizeof(fdarg), "%d", 3);
        argv[n++] = FMUD_BINARY;
        argv[n++] = "--config";
        argv[n++] = conf_path;
        argv[n++] = "--endpoint";
        argv[n++] = d->ctl;
        argv[n++] = "--pub-endpoint";
        argv[n++] = d->pub;
        argv[n++] = "--cache-dir";
        argv[n++] = cache;
        argv[n++] = "--scratch-dir";
        argv[n++] = scratch;
        /* The daemon makes its state directory at start: not the system's. */
        argv[n++] = "--state-dir";
        argv[n++] = state;
        argv[n++] = "--allow";
        argv[n++] = allowed;
        argv[n++] = "--ready-fd";
        argv[n++] = fdarg;
        for (int i = 0; extra && extra[i] && n < 62; i++)
                argv[n++] = extra[i];
        argv[n] = NULL;
        d->pid = fork();
        if (d->pid < 0)
                return -errno;
        if (d->pid == 0) {
                int lfd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);

                if (lfd >= 0)
                        dup2(lfd, 2);
                dup2(pfd[1], 3);        /* dup2 clears O_CLOEXEC on the copy */
                execv(argv[0], (char *const *)argv);
                _exit(127);
        }
        close(pfd[1]);
        pp = (struct pollfd){ .fd = pfd[0], .events = POLLIN };
        r = poll(&pp, 1, TF_REPLY_MS);
        got = r > 0 ? read(pfd[0], buf, sizeof(buf) - 1) : -1;
        close(pfd[0]);
        d->zctx = zmq_ctx_new();
        if (got != 6 || strcmp(buf, "READY\n")) {
                /* Exited (tf_wait() tells how), or never got ready: see fmud.log. */
                if (got != 0) {
                        kill(d->pid, SIGKILL);
                        tf_wait(d);
                }
                return -ECHILD;
        }
        return 0;
}

int tf_wait(struct tf_daemon *d)
{
        int status;

        if (d->pid <= 0)
                return -1;
        while (waitpid(d->pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -1;
        d->pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int tf_stop(struct tf_daemon *d, int sig)
{
        if (d->pid <= 0)
                return -1;
        kill(d->pid, sig);
        return tf_wait(d);
}

void tf_cleanup(struct tf_daemon *d)
{
        char log[512], *text = NULL;
        FILE *f;

        /* SIGTERM, so that every test goes through the daemon's whole exit path. */
        if (d->pid > 0) {
                int status = 0;

                kill(d->pid, SIGTERM);
                for (int i = 0; i < 600 && waitpid(d->pid, &status, WNOHANG) == 0; i++)
                        usleep(50 * 1000);
                if (waitpid(d->pid, &status, WNOHANG) == 0) {
                        fprintf(stderr, "fmud %d ignored SIGTERM for 30 s: killed\n", (int)d->pid);
                        kill(d->pid, SIGKILL);
                        tf_wait(d);
                }
                if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
                        fprintf(stderr, "fmud exited %d after SIGTERM: see its log\n",
                                WEXITSTATUS(status));
                d->pid = -1;
        }
        if (d->zctx) {
                zmq_ctx_term(d->zctx);
                d->zctx = NULL;
        }
        if (!d->dir)
                return;
        /* The daemon's log helps a failing test; print it when asked. */
        if (getenv("FMUD_TEST_VERBOSE")) {
                tf_path(d, "fmud.log", log, sizeof(log));
                f = fopen(log, "r");
                if (f) {
                        size_t cap = 0;

                        while (getline(&text, &cap, f) > 0)
                                fprintf(stderr, "fmud.log: %s", text);
                        free(text);
                        fclose(f);
                }
        }
        tmpdir_free(d->dir);
        d->dir = NULL;
}

void *tf_dealer(struct tf_daemon *d, const char *ep, int timeout_ms)
{
        void *s = zmq_socket(d->zctx, ZMQ_DEALER);
        int linger = 0;

        if (!s)
                return NULL;
        zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof(linger));
        zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout_ms, sizeof(timeout_ms));
        if (ep && zmq_connect(s, ep) < 0) {
                zmq_close(s);
                return NULL;
        }
        return s;
}

int tf_send(void *s, const void *buf, size_t len)
{
        return zmq_send(s, buf, len, 0) < 0 ? -1 : 0;
}

int tf_recv_reply(void *s, struct pv_doc *doc, struct proto_reply *ret, void **ret_buf)
{
        struct proto_limits lim;
        char err[256];
        zmq_msg_t m;
        void *buf;
        size_t len;
        int more = 0;
        size_t sz = sizeof(more);

        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, s, 0) < 0) {
                zmq_msg_close(&m);
                return -EAGAIN;
        }
        zmq_getsockopt(s, ZMQ_RCVMORE, &more, &sz);
        len = zmq_msg_size(&m);
        buf = malloc(len ? len : 1);
        memcpy(buf, zmq_msg_data(&m), len);
        zmq_msg_close(&m);
        if (more)
                return -EBADMSG;        /* the daemon answers a DEALER with one frame */
        proto_limits_default(&lim);
        memset(doc, 0, sizeof(*doc));
        if (pv_decode(buf, len, &lim, doc, err, sizeof(err)) < 0 ||
            proto_reply_decode(doc->root, ret, err, sizeof(err)) < 0) {
                fprintf(stderr, "undecodable reply: %s\n", err);
                pv_doc_fini(doc);
                free(buf);
                return -EBADMSG;
        }
        *ret_buf = buf;
        return 0;
}

int tf_call(void *s, struct pw *w, struct pv_doc *doc, struct proto_reply *ret, void **ret_buf)
{
        if (w->error || tf_send(s, pw_data(w), pw_size(w)) < 0)
                return -EIO;
        return tf_recv_reply(s, doc, ret, ret_buf);
}

bool tf_hello_ok(void *s)
{
        struct proto_hello h = { .version = PROTO_VERSION, .client = { "test", 4 } };
        struct proto_reply rep;
        struct pv_doc doc;
        void *buf;
        struct pw w;
        bool ok;

        pw_init(&w);
        proto_hello_encode(&w, 7, &h);
        if (tf_call(s, &w, &doc, &rep, &buf) < 0) {
                pw_fini(&w);
                return false;
        }
        ok = rep.ok && rep.id == 7;
        pv_doc_fini(&doc);
        free(buf);
        pw_fini(&w);
        return ok;
}

bool tf_pid_alive(pid_t pid)
{
        char path[64], line[512];
        bool alive = false;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        f = fopen(path, "r");
        if (!f)
                return false;
        if (fgets(line, sizeof(line), f)) {
                char *p = strrchr(line, ')');

                alive = p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
        }
        fclose(f);
        return alive;
}
