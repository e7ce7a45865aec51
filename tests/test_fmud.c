/*
 * fmud end to end: a real daemon on private ipc endpoints, driven with raw
 * ZeroMQ and proto.h. What a client sends is hostile here: every bad
 * message must get an error reply and leave the daemon serving.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include <zmq.h>

#include "test_fmud.h"

static struct tf_daemon d;

static void start(void)
{
        int r = tf_start(&d, NULL, NULL);

        cr_assert(r == 0, "fmud did not get ready (%d): see %s/fmud.log", r, d.dir);
}

static void stop(void)
{
        tf_cleanup(&d);
}

static bool err_is(const struct proto_reply *r, enum proto_err code)
{
        return !r->ok && r->code == (int)code;
}

/* A hang fails its test by name, well inside ctest's limit for the file. */
TestSuite(fmud, .timeout = 120);

Test(fmud, hello_is_answered_with_version_and_pub_endpoint, .init = start, .fini = stop)
{
        struct proto_hello h = { .version = PROTO_VERSION, .client = { "t", 1 } };
        struct proto_hello_result res;
        struct proto_reply rep;
        struct pv_doc doc;
        char err[256];
        void *s = tf_dealer(&d, d.ctl, TF_REPLY_MS), *buf;
        struct pw w;

        pw_init(&w);
        proto_hello_encode(&w, 41, &h);
        cr_assert(tf_call(s, &w, &doc, &rep, &buf) == 0);
        cr_assert(rep.ok, "hello refused: %.*s", (int)rep.message_len, rep.message);
        cr_assert(rep.id == 41);
        cr_assert(proto_hello_result_decode(rep.result, &res, err, sizeof(err)) == 0, "%s", err);
        cr_assert(res.version == PROTO_VERSION);
        cr_assert(res.server.len > 5 && !memcmp(res.server.ptr, "fmud ", 5));
        cr_assert(res.pub_endpoint.len == strlen(d.pub) &&
                  !memcmp(res.pub_endpoint.ptr, d.pub, res.pub_endpoint.len));
        cr_assert(res.max_msg == 16u << 20, "max_msg %llu", (unsigned long long)res.max_msg);
        pv_doc_fini(&doc);
        free(buf);
        pw_fini(&w);
        zmq_close(s);
}

Test(fmud, hello_with_another_version_is_refused, .init = start, .fini = stop)
{
        struct proto_hello h = { .version = PROTO_VERSION + 98, .client = { "t", 1 } };
        struct proto_reply rep;
        struct pv_doc doc;
        void *s = tf_dealer(&d, d.ctl, TF_REPLY_MS), *buf;
        struct pw w;

        pw_init(&w);
        proto_hello_encode(&w, 5, &h);
        cr_assert(tf_call(s, &w, &doc, &rep, &buf) == 0);
        cr_assert(err_is(&rep, PROTO_E_VERSION), "ok %d code %d", rep.ok, rep.code);
        cr_assert(rep.id == 5);
        pv_doc_fini(&doc);
        free(buf);
        pw_fini(&w);
        cr_assert(tf_hello_ok(s), "the daemon stopped serving after a version refusal");
        zmq_close(s);
}

/* Send raw bytes; expect a bad-request error with the given id, then a working hello. */
static void expect_bad_request(void *s, const void *msg, size_t len, uint64_t id)
{
        struct proto_reply rep;
        struct pv_doc doc;
        void *buf;

        cr_assert(tf_send(s, msg, len) == 0);
        cr_assert(tf_recv_reply(s, &doc, &rep, &buf) == 0, "no error reply");
        cr_assert(err_is(&rep, PROTO_E_BAD_REQUEST), "ok %d code %d", rep.ok, rep.code);
        cr_assert(rep.id == id, "id %llu, expected %llu", (unsigned long long)rep.id,
                  (unsigned long long)id);
        cr_assert(rep.message_len > 0, "an error without a message");
        pv_doc_fini(&doc);
        free(buf);
        cr_assert(tf_hello_ok(s), "the daemon stopped serving");
}

Test(fmud, garbage_gets_bad_request_and_the_daemon_still_serves, .init = start, .fini = stop)
{
        static const uint8_t garbage[] = { 0xc1, 0xff, 0x00, 0x13, 0x37 };
        /* an array [1, 2]: valid msgpack, not a map */
        static const uint8_t array[] = { 0x92, 0x01, 0x02 };
        /* a map32 announcing 2^32-1 pairs in 5 bytes */
        static const uint8_t huge_map[] = { 0xdf, 0xff, 0xff, 0xff, 0xff };
        /* an array32 of 2^32-1 elements inside a map value */
        static const uint8_t huge_array[] = { 0x81, 0xa2, 'i', 'd', 0xdd, 0xff, 0xff, 0xff, 0xff };
        /* {id: 9, op: "no-such-op"} */
        static const uint8_t bad_op[] = { 0x82, 0xa2, 'i', 'd', 0x09, 0xa2, 'o', 'p',
                                          0xaa, 'n', 'o', '-', 's', 'u', 'c', 'h', '-', 'o', 'p' };
        /* a str32 claiming 1 GiB */
        static const uint8_t long_str[] = { 0xdb, 0x40, 0x00, 0x00, 0x00, 'x' };
        void *s = tf_dealer(&d, d.ctl, TF_REPLY_MS);

        expect_bad_request(s, garbage, sizeof(garbage), 0);
        expect_bad_request(s, "", 0, 0);
        expect_bad_request(s, array, sizeof(array), 0);
        expect_bad_request(s, huge_map, sizeof(huge_map), 0);
        expect_bad_request(s, huge_array, sizeof(huge_array), 0);
        expect_bad_request(s, long_str, sizeof(long_str), 0);
        /* Decodable but not a request: the id is echoed. */
        {
                struct proto_reply rep;
                struct pv_doc doc;
                void *buf;

                cr_assert(tf_send(s, bad_op, sizeof(bad_op)) == 0);
                cr_assert(tf_recv_reply(s, &doc, &rep, &buf) == 0);
                cr_assert(!rep.ok && rep.id == 9, "ok %d id %llu", rep.ok,
                          (unsigned long long)rep.id);
                cr_assert(rep.code == PROTO_E_BAD_REQUEST || rep.code == PROTO_E_UNKNOWN_OP,
                          "code %d", rep.code);
                pv_doc_fini(&doc);
                free(buf);
        }
        cr_assert(tf_hello_ok(s));
        zmq_close(s);
}

Test(fmud, a_three_frame_message_is_refused, .init = start, .fini = stop)
{
        struct proto_hello h = { .version = PROTO_VERSION };
        struct proto_reply rep;
        struct pv_doc doc;
        void *s = tf_dealer(&d, d.ctl, TF_REPLY_MS), *buf;
        struct pw w;

        pw_init(&w);
        proto_hello_encode(&w, 3, &h);
        /* [junk, body]: the daemon sees [identity, junk, body] */
        cr_assert(zmq_send(s, "junk", 4, ZMQ_SNDMORE) == 4);
        cr_assert(zmq_send(s, pw_data(&w), pw_size(&w), 0) >= 0);
        cr_assert(tf_recv_reply(s, &doc, &rep, &buf) == 0);
        cr_assert(err_is(&rep, PROTO_E_BAD_REQUEST));
        pv_doc_fini(&doc);
        free(buf);
        /* Four frames too. */
        cr_assert(zmq_send(s, "a", 1, ZMQ_SNDMORE) == 1);
        cr_assert(zmq_send(s, "b", 1, ZMQ_SNDMORE) == 1);
        cr_assert(zmq_send(s, pw_data(&w), pw_size(&w), 0) >= 0);
        cr_assert(tf_recv_reply(s, &doc, &rep, &buf) == 0);
        cr_assert(err_is(&rep, PROTO_E_BAD_REQUEST));
        pv_doc_fini(&doc);
        free(buf);
        /* A REQ-style empty delimiter is fine, and the reply keeps it. */
        cr_assert(zmq_send(s, "", 0, ZMQ_SNDMORE) == 0);
        cr_assert(zmq_send(s, pw_data(&w), pw_size(&w), 0) >= 0);
        {
                zmq_msg_t m;
                int more = 0;
                size_t sz = sizeof(more);

                zmq_msg_init(&m);
                cr_assert(zmq_msg_recv(&m, s, 0) == 0, "the delimiter first");
                zmq_getsockopt(s, ZMQ_RCVMORE, &more, &sz);
                cr_assert(more);
                zmq_msg_close(&m);
        }
        cr_assert(tf_recv_reply(s, &doc, &rep, &buf) == 0);
        cr_assert(rep.ok && rep.id == 3);
        pv_doc_fini(&doc);
        free(buf);
        pw_fini(&w);
        zmq_close(s);
}

Test(fmud, a_req_socket_is_served, .init = start, .fini = stop)
{
        void *s = zmq_socket(d.zctx, ZMQ_REQ);
        int linger = 0, to = TF_REPLY_MS;

        zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof(linger));
        zmq_setsockopt(s, ZMQ_RCVTIMEO, &to, sizeof(to));
        cr_assert(zmq_connect(s, d.ctl) == 0);
        cr_assert(tf_hello_ok(s));
        zmq_close(s);
}

Test(fmud, a_message_above_max_message_drops_the_peer_only)
{
        static const char conf[] = "[control]\nmax_message = 64K\n";
        struct proto_reply rep;
        struct pv_doc doc;
        size_t big = 100 << 10;
        char *junk = calloc(1, big);
        void *s, *s2, *buf;

        cr_assert(tf_start(&d, conf, NULL) == 0);
        s = tf_dealer(&d, d.ctl, TF_RECV_MS);
        cr_assert(tf_hello_ok(s));
        cr_assert(tf_send(s, junk, big) == 0);
        cr_assert(tf_recv_reply(s, &doc, &rep, &buf) == -EAGAIN,
                  "a message above ZMQ_MAXMSGSIZE was answered");
        zmq_close(s);
        s2 = tf_dealer(&d, d.ctl, TF_REPLY_MS);
        cr_assert(tf_hello_ok(s2), "a new client was not served");
        zmq_close(s2);
        free(junk);
        tf_cleanup(&d);
}

Test(fmud, ipc_sockets_are_0600_in_a_0700_directory, .init = start, .fini = stop)
{
        struct stat st;

        cr_assert(stat(d.ctl_path, &st) == 0);
        cr_assert(S_ISSOCK(st.st_mode));
        cr_assert((st.st_mode & 0777) == 0600, "mode %o", st.st_mode & 0777);
        cr_assert(stat(d.pub_path, &st) == 0);
        cr_assert((st.st_mode & 0777) == 0600, "mode %o", st.st_mode & 0777);
        cr_assert(stat(d.run_dir, &st) == 0);
        cr_assert((st.st_mode & 0777) == 0700, "mode %o", st.st_mode & 0777);
}

Test(fmud, sigterm_exits_0_and_removes_the_sockets, .init = start, .fini = stop)
{
        void *s = tf_dealer(&d, d.ctl, TF_REPLY_MS);

        cr_assert(tf_hello_ok(s));
        zmq_close(s);
        cr_assert(tf_stop(&d, SIGTERM) == 0);
        cr_assert(access(d.ctl_path, F_OK) < 0 && errno == ENOENT, "control.sock left behind");
        cr_assert(access(d.pub_path, F_OK) < 0 && errno == ENOENT, "events.sock left behind");
        cr_assert(access(d.run_dir, F_OK) < 0 && errno == ENOENT, "run directory left behind");
}

Test(fmud, sigint_exits_0, .init = start, .fini = stop)
{
        cr_assert(tf_stop(&d, SIGINT) == 0);
        cr_assert(access(d.ctl_path, F_OK) < 0);
}

Test(fmud, shutdown_is_answered_then_the_daemon_exits_0, .init = start, .fini = stop)
{
        struct proto_reply rep;
        struct pv_doc doc;
        void *s = tf_dealer(&d, d.ctl, TF_REPLY_MS), *buf;
        struct pw w;

        pw_init(&w);
        proto_req_begin(&w, 77, PROTO_OP_SHUTDOWN, 0);
        cr_assert(tf_call(s, &w, &doc, &rep, &buf) == 0, "no reply to shutdown");
        cr_assert(rep.ok && rep.id == 77);
        pv_doc_fini(&doc);
        free(buf);
        pw_fini(&w);
        zmq_close(s);
        cr_assert(tf_wait(&d) == 0);
        cr_assert(access(d.ctl_path, F_OK) < 0, "control.sock left behind");
}

Test(fmud, daemon_status_reports_counts_and_sandbox, .init = start, .fini = stop)
{
        struct proto_target t = { 0 };
        struct proto_daemon_status st;
        struct proto_reply rep;
        struct pv_doc doc;
        char err[256];
        void *s = tf_dealer(&d, d.ctl, TF_REPLY_MS), *buf;
        struct pw w;

        pw_init(&w);
        proto_target_encode(&w, 12, PROTO_OP_STATUS, &t);
        cr_assert(tf_call(s, &w, &doc, &rep, &buf) == 0);
        cr_assert(rep.ok && rep.id == 12);
        cr_assert(proto_daemon_status_decode(rep.result, &st, err, sizeof(err)) == 0, "%s", err);
        cr_assert(st.version == PROTO_VERSION);
        cr_assert(st.sessions == 0 && st.workers == 0);
        cr_assert(st.sandbox.len == 6 && !memcmp(st.sandbox.ptr, "strict", 6));
        cr_assert(st.uptime_s >= 0);
        pv_doc_fini(&doc);
        free(buf);
        pw_fini(&w);
        zmq_close(s);
}

Test(fmud, a_second_daemon_on_the_same_socket_is_refused, .init = start, .fini = stop)
{
        struct tf_daemon d2;
        char arg[300];
        const char *extra[] = { "--endpoint", arg, NULL };
        void *s;

        snprintf(arg, sizeof(arg), "%s", d.ctl);
        cr_assert(tf_start(&d2, NULL, extra) != 0, "a second daemon took over the socket");
        cr_assert(tf_wait(&d2) == 1, "the second daemon did not exit 1");
        tf_cleanup(&d2);
        s = tf_dealer(&d, d.ctl, TF_REPLY_MS);
        cr_assert(tf_hello_ok(s), "the first daemon lost its socket");
        zmq_close(s);
}

/* A datagram socket standing in for the service manager's notify socket. */
static int notify_listener(const char *path)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct timeval tv = { .tv_sec = 10 };

        cr_assert(fd >= 0);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
        if (path[0] == '@')
                sa.sun_path[0] = '\0';
        cr_assert(bind(fd, (struct sockaddr *)&sa,
                       (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) +
                                   (path[0] == '/'))) == 0);
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        return fd;
}

/* Read datagrams until one contains want. */
static bool notified(int fd, const char *want)
{
        char buf[512];
        ssize_t n;

        for (int i = 0; i < 100; i++) {
                n = recv(fd, buf, sizeof(buf) - 1, 0);
                if (n < 0)
                        return false;
                buf[n] = '\0';
                if (strstr(buf, want))
                        return true;
        }
        return false;
}

static void notify_cycle(const char *sock_name)
{
        int fd;

        fd = notify_listener(sock_name);
        cr_assert(setenv("NOTIFY_SOCKET", sock_name, 1) == 0);
        cr_assert(setenv("WATCHDOG_USEC", "100000", 1) == 0);
        unsetenv("WATCHDOG_PID");
        cr_assert(tf_start(&d, NULL, NULL) == 0);
        cr_assert(notified(fd, "READY=1"), "no READY=1");
        cr_assert(notified(fd, "WATCHDOG=1"), "no WATCHDOG=1");
        kill(d.pid, SIGHUP);
        cr_assert(notified(fd, "RELOADING=1"), "no RELOADING=1");
        cr_assert(notified(fd, "READY=1"), "no READY=1 after the reload");
        kill(d.pid, SIGTERM);
        cr_assert(notified(fd, "STOPPING=1"), "no STOPPING=1");
        cr_assert(tf_wait(&d) == 0);
        close(fd);
        tf_cleanup(&d);
}

Test(fmud, notifies_the_service_manager_on_a_path_socket)
{
        char path[108];

        snprintf(path, sizeof(path), "/tmp/fmud-notify-%d", (int)getpid());
        (void)unlink(path);
        notify_cycle(path);
        (void)unlink(path);
}

Test(fmud, notifies_the_service_manager_on_an_abstract_socket)
{
        char name[64];

        snprintf(name, sizeof(name), "@fmud-notify-test-%d", (int)getpid());
        notify_cycle(name);
}

Test(fmud, socket_group_makes_the_sockets_0660_and_the_directory_0750)
{
        static const char conf[] = "[control]\nsocket_group = 65534\n";
        struct stat st;

        if (geteuid() != 0)
                cr_skip_test("chown to another group needs root");
        cr_assert(tf_start(&d, conf, NULL) == 0);
        cr_assert(stat(d.ctl_path, &st) == 0);
        cr_assert((st.st_mode & 0777) == 0660 && st.st_gid == 65534, "mode %o gid %u",
                  st.st_mode & 0777, (unsigned)st.st_gid);
        cr_assert(stat(d.pub_path, &st) == 0);
        cr_assert((st.st_mode & 0777) == 0660 && st.st_gid == 65534);
        cr_assert(stat(d.run_dir, &st) == 0);
        cr_assert((st.st_mode & 0777) == 0750 && st.st_gid == 65534, "mode %o",
                  st.st_mode & 0777);
        tf_cleanup(&d);
}
