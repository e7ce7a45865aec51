/*
 * fmud over tcp: CURVE only, and only for the keys in authorized_keys
 * (daemon/zap.h). Everything runs on 127.0.0.1.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "daemon/access.h"
#include "daemon/zap.h"
#include "support/tmpdir.h"
#include "test_fmud.h"

static struct tf_daemon d;
static char server_pub[41], server_sec[41], ok_pub[41], ok_sec[41], bad_pub[41], bad_sec[41];
static char tcp_ep[64], tcp_pub_ep[64];
static char *keydir;

static void cleanup(void)
{
        tf_cleanup(&d);
        if (keydir)
                tmpdir_free(keydir);
        keydir = NULL;
}

/* Two ports nobody listens on now (the kernel's choice for port 0, both held while choosing). */
static void free_ports(int *a, int *b)
{
        int fds[2], *ports[2] = { a, b };

        for (int i = 0; i < 2; i++) {
                struct sockaddr_in sa = { .sin_family = AF_INET,
                                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
                socklen_t len = sizeof(sa);

                fds[i] = socket(AF_INET, SOCK_STREAM, 0);
                cr_assert(fds[i] >= 0);
                cr_assert(bind(fds[i], (struct sockaddr *)&sa, sizeof(sa)) == 0);
                cr_assert(getsockname(fds[i], (struct sockaddr *)&sa, &len) == 0);
                *ports[i] = ntohs(sa.sin_port);
        }
        close(fds[0]);
        close(fds[1]);
}

static void write_file(const char *dir, const char *name, const char *text, mode_t mode)
{
        char path[512];

        cr_assert(tmpdir_write(dir, name, text, strlen(text)) == 0);
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        cr_assert(chmod(path, mode) == 0);
}

/* Start fmud with tcp; keys live in a directory of their own. Returns tf_start's result. */
static int start_tcp(mode_t secret_mode, bool with_authorized)
{
        char conf[2048], line[128];
        int port, pub_port;

        if (!zmq_has("curve"))
                cr_skip_test("libzmq without CURVE");
        cr_assert(zmq_curve_keypair(server_pub, server_sec) == 0);
        cr_assert(zmq_curve_keypair(ok_pub, ok_sec) == 0);
        cr_assert(zmq_curve_keypair(bad_pub, bad_sec) == 0);
        keydir = tmpdir_new("fmud-keys");
        cr_assert(keydir);
        snprintf(line, sizeof(line), "%s\n", server_sec);
        write_file(keydir, "server.key", line, secret_mode);
        snprintf(line, sizeof(line), "# the one client\n\n  %s  # laptop\n", ok_pub);
        write_file(keydir, "authorized_keys", line, 0644);
        free_ports(&port, &pub_port);
        snprintf(tcp_ep, sizeof(tcp_ep), "tcp://127.0.0.1:%d", port);
        snprintf(tcp_pub_ep, sizeof(tcp_pub_ep), "tcp://127.0.0.1:%d", pub_port);
        snprintf(conf, sizeof(conf),
                 "[control]\ntcp_endpoint = %s\ntcp_pub_endpoint = %s\n"
                 "server_secret_key = %s/server.key\n%s%s%s\n",
                 tcp_ep, tcp_pub_ep, keydir, with_authorized ? "authorized_keys = " : "",
                 with_authorized ? keydir : "", with_authorized ? "/authorized_keys" : "");
        return tf_start(&d, conf, NULL);
}

static void *curve_client(const char *pub, const char *sec, int timeout_ms)
{
        void *s = tf_dealer(&d, NULL, timeout_ms);

        cr_assert(s);
        cr_assert(zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, server_pub, 41) == 0);
        cr_assert(zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, pub, 41) == 0);
        cr_assert(zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, sec, 41) == 0);
        cr_assert(zmq_connect(s, tcp_ep) == 0);
        return s;
}

/* A hang fails its test by name, well inside ctest's limit for the file. */
TestSuite(fmud_curve, .timeout = 120);

Test(fmud_curve, a_listed_key_is_served_and_an_unlisted_one_is_not, .fini = cleanup)
{
        struct proto_hello h = { .version = PROTO_VERSION };
        struct proto_hello_result res;
        struct proto_reply rep;
        struct pv_doc doc;
        char err[256];
        void *good, *bad, *plain, *buf;
        struct pw w;

        cr_assert(start_tcp(0600, true) == 0, "fmud did not start: %s/fmud.log", d.dir);
        good = curve_client(ok_pub, ok_sec, TF_REPLY_MS);
        pw_init(&w);
        proto_hello_encode(&w, 1, &h);
        cr_assert(tf_call(good, &w, &doc, &rep, &buf) == 0, "the listed key got no reply");
        cr_assert(rep.ok);
        cr_assert(proto_hello_result_decode(rep.result, &res, err, sizeof(err)) == 0);
        /* A remote client is told the remote PUB endpoint. */
        cr_assert(res.pub_endpoint.len == strlen(tcp_pub_ep) &&
                  !memcmp(res.pub_endpoint.ptr, tcp_pub_ep, res.pub_endpoint.len));
        pv_doc_fini(&doc);
        free(buf);
        pw_fini(&w);

        bad = curve_client(bad_pub, bad_sec, TF_RECV_MS);
        cr_assert(!tf_hello_ok(bad), "an unlisted key was served");
        plain = tf_dealer(&d, tcp_ep, TF_RECV_MS);
        cr_assert(!tf_hello_ok(plain), "a client without CURVE was served");
        /* The refusals did not disturb the admitted client, nor local ones (no ZAP for ipc). */
        cr_assert(tf_hello_ok(good));
        {
                void *ipc = tf_dealer(&d, d.ctl, TF_REPLY_MS);

                cr_assert(tf_hello_ok(ipc), "ipc refused while the ZAP handler runs");
                zmq_close(ipc);
        }
        zmq_close(good);
        zmq_close(bad);
        zmq_close(plain);
        cr_assert(tf_stop(&d, SIGTERM) == 0);
}

Test(fmud_curve, sighup_reloads_the_authorized_keys, .fini = cleanup)
{
        char text[256];
        void *bad;
        bool served = false;

        cr_assert(start_tcp(0600, true) == 0, "fmud did not start: %s/fmud.log", d.dir);
        snprintf(text, sizeof(text), "%s\n%s\n", ok_pub, bad_pub);
        write_file(keydir, "authorized_keys", text, 0644);
        kill(d.pid, SIGHUP);
        /* The reload and a new connection race; a few tries bound the wait. */
        for (int i = 0; i < 10 && !served; i++) {
                bad = curve_client(bad_pub, bad_sec, TF_RECV_MS);
                served = tf_hello_ok(bad);
                zmq_close(bad);
        }
        cr_assert(served, "a key added before SIGHUP was not admitted");
        cr_assert(tf_stop(&d, SIGTERM) == 0);
}

Test(fmud_curve, tcp_without_authorized_keys_is_refused, .fini = cleanup)
{
        cr_assert(start_tcp(0600, false) != 0, "fmud served tcp without a key list");
        cr_assert(tf_wait(&d) == 1);
}

Test(fmud_curve, a_secret_key_readable_by_others_is_refused, .fini = cleanup)
{
        cr_assert(start_tcp(0644, true) != 0, "fmud used a world-readable secret key");
        cr_assert(tf_wait(&d) == 1);
}

Test(fmud_curve, authorized_keys_take_comments_and_keys_with_hash_digits, .fini = cleanup)
{
        char pub[41], sec[41], text[512], path[512], err[256];
        uint8_t (*keys)[32] = NULL, raw[32];
        size_t n = 0;

        /* '#' is a Z85 digit: find a key that has one. */
        for (int i = 0; i < 1000; i++) {
                cr_assert(zmq_curve_keypair(pub, sec) == 0);
                if (strchr(pub, '#'))
                        break;
        }
        cr_assert(strchr(pub, '#'), "no key with a '#' in 1000 tries");
        keydir = tmpdir_new("fmud-keys");
        snprintf(text, sizeof(text), "# clients\n\n   \n%s\n\t%s   # trailing comment\n#%s\n",
                 pub, pub, "no key here, just words");
        write_file(keydir, "authorized_keys", text, 0644);
        snprintf(path, sizeof(path), "%s/authorized_keys", keydir);
        cr_assert(zap_read_keys(path, &keys, &n, err, sizeof(err)) == 0, "%s", err);
        cr_assert(n == 2, "%zu keys", n);
        cr_assert(zmq_z85_decode(raw, pub));
        cr_assert(!memcmp(keys[0], raw, 32) && !memcmp(keys[1], raw, 32));
        free(keys);

        write_file(keydir, "authorized_keys", "# ok\nnot-a-key\n", 0644);
        cr_assert(zap_read_keys(path, &keys, &n, err, sizeof(err)) == -EINVAL);
        cr_assert(strstr(err, "authorized_keys:2:"), "%s", err);
        snprintf(text, sizeof(text), "%s extra\n", pub);
        write_file(keydir, "authorized_keys", text, 0644);
        cr_assert(zap_read_keys(path, &keys, &n, err, sizeof(err)) == -EINVAL);
        cr_assert(strstr(err, "authorized_keys:1:"), "%s", err);
}

Test(fmud_curve, a_secret_key_file_is_read_with_bounds, .fini = cleanup)
{
        char pub[41], sec[41], got[41], text[128], path[512], err[256];

        cr_assert(zmq_curve_keypair(pub, sec) == 0);
        keydir = tmpdir_new("fmud-keys");
        snprintf(path, sizeof(path), "%s/k", keydir);
        snprintf(text, sizeof(text), "\n%s\n", sec);
        write_file(keydir, "k", text, 0600);
        cr_assert(zap_read_secret(path, got, err, sizeof(err)) == 0, "%s", err);
        cr_assert_str_eq(got, sec);
        write_file(keydir, "k", text, 0640);
        cr_assert(zap_read_secret(path, got, err, sizeof(err)) == -EPERM);
        write_file(keydir, "k", "short\n", 0600);
        cr_assert(zap_read_secret(path, got, err, sizeof(err)) == -EINVAL);
        {
                char *big = malloc(1 << 20);

                memset(big, 'a', 1 << 20);
                cr_assert(tmpdir_write(keydir, "k", big, 1 << 20) == 0);
                cr_assert(zap_read_secret(path, got, err, sizeof(err)) < 0);
                free(big);
        }
}

/* One request over tcp with key pub/sec; the reply's ok, and its message in msg. */
static bool curve_ask(const char *pub, const char *sec, struct pw *w, char *msg, size_t size,
                      int *ret_code)
{
        void *s = curve_client(pub, sec, TF_REPLY_MS), *buf;
        struct proto_reply rep;
        struct pv_doc doc;
        bool ok;

        cr_assert(tf_call(s, w, &doc, &rep, &buf) == 0, "no reply over tcp");
        ok = rep.ok;
        *ret_code = rep.ok ? -1 : rep.code;
        snprintf(msg, size, "%.*s", rep.ok ? 0 : (int)rep.message_len, rep.ok ? "" : rep.message);
        pv_doc_fini(&doc);
        free(buf);
        pw_reset(w);
        zmq_close(s);
        return ok;
}

Test(fmud_curve, each_key_has_the_role_written_after_it, .fini = cleanup)
{
        char obs_pub[41], obs_sec[41], adm_pub[41], adm_sec[41], text[512], msg[256], log[512];
        struct proto_load l = {
                .path = { FMUD_EXAMPLES "/msd.ssp", (uint32_t)strlen(FMUD_EXAMPLES "/msd.ssp") },
        };
        int code;
        struct pw w;
        FILE *f;

        cr_assert(start_tcp(0600, true) == 0, "fmud did not start: %s/fmud.log", d.dir);
        tf_stop(&d, SIGTERM);
        /* ok_pub without a role (operator), one observer, one admin; the daemon again. */
        cr_assert(zmq_curve_keypair(obs_pub, obs_sec) == 0);
        cr_assert(zmq_curve_keypair(adm_pub, adm_sec) == 0);
        snprintf(text, sizeof(text), "%s\n%s observer # a dashboard\n%s\tadmin\n", ok_pub, obs_pub,
                 adm_pub);
        write_file(keydir, "authorized_keys", text, 0644);
        {
                char conf[1024];
                const char *extra[] = { "--allow", FMUD_EXAMPLES, "--sandbox", "off", NULL };

                snprintf(conf, sizeof(conf),
                         "[control]\ntcp_endpoint = %s\nserver_secret_key = %s/server.key\n"
                         "authorized_keys = %s/authorized_keys\n", tcp_ep, keydir, keydir);
                tf_cleanup(&d);
                cr_assert(tf_start(&d, conf, extra) == 0, "fmud did not start: %s/fmud.log", d.dir);
        }
        pw_init(&w);
        proto_req_begin(&w, 1, PROTO_OP_LIST, 0);
        cr_assert(curve_ask(obs_pub, obs_sec, &w, msg, sizeof(msg), &code), "%s", msg);
        proto_load_encode(&w, 2, &l);
        cr_assert(!curve_ask(obs_pub, obs_sec, &w, msg, sizeof(msg), &code));
        cr_assert(code == PROTO_E_DENIED);
        cr_assert_str_eq(msg, "load needs the operator role; you are observer");
        proto_load_encode(&w, 3, &l);
        cr_assert(curve_ask(ok_pub, ok_sec, &w, msg, sizeof(msg), &code), "%s", msg);
        proto_req_begin(&w, 4, PROTO_OP_SHUTDOWN, 0);
        cr_assert(!curve_ask(ok_pub, ok_sec, &w, msg, sizeof(msg), &code));
        cr_assert(code == PROTO_E_DENIED);
        cr_assert_str_eq(msg, "shutdown needs the admin role; you are operator");
        /* The operator's session is not the admin's, but an admin may change it. */
        proto_target_encode(&w, 5, PROTO_OP_UNLOAD, &(struct proto_target){ .session = 1 });
        cr_assert(curve_ask(adm_pub, adm_sec, &w, msg, sizeof(msg), &code), "%s", msg);
        proto_req_begin(&w, 6, PROTO_OP_SHUTDOWN, 0);
        cr_assert(curve_ask(adm_pub, adm_sec, &w, msg, sizeof(msg), &code), "%s", msg);
        pw_fini(&w);
        cr_assert(tf_wait(&d) == 0);
        tf_path(&d, "fmud.log", log, sizeof(log));
        f = fopen(log, "r");
        cr_assert(f);
        {
                char line[512], want[3][160];
                bool seen[3] = { false, false, false };

                snprintf(want[0], sizeof(want[0]), "request: load session 1 by key %s as operator: ok",
                         ok_pub);
                snprintf(want[1], sizeof(want[1]), "request: unload session 1 by key %s as admin: ok",
                         adm_pub);
                snprintf(want[2], sizeof(want[2]), "request: shutdown by key %s as admin: ok",
                         adm_pub);
                while (fgets(line, sizeof(line), f))
                        for (int i = 0; i < 3; i++)
                                seen[i] |= strstr(line, want[i]) != NULL;
                fclose(f);
                for (int i = 0; i < 3; i++)
                        cr_assert(seen[i], "the log has no '%s'", want[i]);
        }
}

Test(fmud_curve, a_role_that_is_not_one_refuses_the_keys_file, .fini = cleanup)
{
        char pub[41], sec[41], text[256], path[512], err[256];
        uint8_t (*keys)[32], *roles;
        size_t n;

        cr_assert(zmq_curve_keypair(pub, sec) == 0);
        keydir = tmpdir_new("fmud-keys");
        snprintf(text, sizeof(text), "%s admin\n%s observer#c\n%s\n", pub, pub, pub);
        write_file(keydir, "authorized_keys", text, 0644);
        snprintf(path, sizeof(path), "%s/authorized_keys", keydir);
        cr_assert(zap_read_keys_roles(path, &keys, &roles, &n, err, sizeof(err)) == 0, "%s", err);
        cr_assert(n == 3 && roles[0] == ACCESS_ADMIN && roles[1] == ACCESS_OBSERVER &&
                  roles[2] == ACCESS_OPERATOR);
        free(keys);
        free(roles);
        snprintf(text, sizeof(text), "# ok\n%s superuser\n", pub);
        write_file(keydir, "authorized_keys", text, 0644);
        cr_assert(zap_read_keys_roles(path, &keys, &roles, &n, err, sizeof(err)) == -EINVAL);
        cr_assert(strstr(err, "authorized_keys:2: 'superuser' is not a role"), "%s", err);
        snprintf(text, sizeof(text), "%s admin extra\n", pub);
        write_file(keydir, "authorized_keys", text, 0644);
        cr_assert(zap_read_keys_roles(path, &keys, &roles, &n, err, sizeof(err)) == -EINVAL);
        cr_assert(strstr(err, "authorized_keys:1:"), "%s", err);
}

Test(fmud_curve, a_key_removed_by_a_reload_is_refused_on_its_open_connection, .fini = cleanup)
{
        char text[128];
        struct proto_reply rep;
        struct pv_doc doc;
        bool denied = false;
        void *s, *buf;
        struct pw w;

        cr_assert(start_tcp(0600, true) == 0, "fmud did not start: %s/fmud.log", d.dir);
        s = curve_client(ok_pub, ok_sec, TF_REPLY_MS);
        pw_init(&w);
        proto_req_begin(&w, 1, PROTO_OP_LIST, 0);
        cr_assert(tf_call(s, &w, &doc, &rep, &buf) == 0 && rep.ok);
        pv_doc_fini(&doc);
        free(buf);
        snprintf(text, sizeof(text), "%s observer\n", bad_pub);
        write_file(keydir, "authorized_keys", text, 0644);
        cr_assert(kill(d.pid, SIGHUP) == 0);
        /* The reload happens on the daemon's loop: ask until it has (a bounded number of times). */
        for (int i = 0; i < 500 && !denied; i++) {
                cr_assert(tf_call(s, &w, &doc, &rep, &buf) == 0);
                denied = !rep.ok;
                if (denied) {
                        cr_assert(rep.code == PROTO_E_DENIED);
                        cr_assert(rep.message_len == strlen("list: this key is no longer authorized") &&
                                  !memcmp(rep.message, "list: this key is no longer authorized",
                                          rep.message_len), "%.*s", (int)rep.message_len,
                                  rep.message);
                }
                pv_doc_fini(&doc);
                free(buf);
                if (!denied)
                        usleep(10000);
        }
        cr_assert(denied, "the removed key is still served");
        pw_fini(&w);
        zmq_close(s);
}

Test(fmud_curve, rig_is_refused_over_tcp_without_a_remote_endpoint, .fini = cleanup)
{
        char msg[256];
        int code;
        struct pw w;

        cr_assert(start_tcp(0600, true) == 0, "fmud did not start: %s/fmud.log", d.dir);
        pw_init(&w);
        /* Refused before any session is looked up: no [rig] remote_endpoint, no bridge. */
        proto_target_encode(&w, 1, PROTO_OP_RIG, &(struct proto_target){ .session = 1 });
        cr_assert(!curve_ask(ok_pub, ok_sec, &w, msg, sizeof(msg), &code));
        cr_assert(code == PROTO_E_UNSUPPORTED, "code %d: %s", code, msg);
        cr_assert_str_eq(msg, "rig: remote rigs are not served here (the daemon's [rig] "
                              "remote_endpoint is not set)");
        /* The daemon still serves the same key. */
        proto_req_begin(&w, 2, PROTO_OP_LIST, 0);
        cr_assert(curve_ask(ok_pub, ok_sec, &w, msg, sizeof(msg), &code), "%s", msg);
        pw_fini(&w);
        cr_assert(tf_stop(&d, SIGTERM) == 0);
}
