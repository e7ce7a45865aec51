/*
 * fmuctl_keys: keys for remote access: `fmuctl keygen` keys admit a
 * client to a real fmud over tcp with CURVE, and any public key a
 * daemon can be given is one it authorizes.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zmq.h>

#include "daemon_fixture.h"
#include "support/run.h"
#include "support/tmpdir.h"

/* fmuctl ARGS... (NULL-terminated); the caller frees with run_result_fini(). */
static struct run_result fmuctl(const char *const args[])
{
        char *argv[32] = { (char *)FMUD_FMUCTL };
        struct run_result r = { 0 };
        size_t n = 1;

        for (; args[n - 1] && n < 31; n++)
                argv[n] = (char *)args[n - 1];
        argv[n] = NULL;
        cr_assert(run_capture(argv, &r) == 0);
        return r;
}

/* A free tcp port on the loopback (bind to 0, read it back). */
static int free_port(void)
{
        void *ctx = zmq_ctx_new(), *s = zmq_socket(ctx, ZMQ_REP);
        char ep[64];
        size_t len = sizeof(ep);
        int port;

        cr_assert(zmq_bind(s, "tcp://127.0.0.1:*") == 0);
        cr_assert(zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, ep, &len) == 0);
        port = atoi(strrchr(ep, ':') + 1);
        zmq_close(s);
        zmq_ctx_term(ctx);
        return port;
}

/* The first line of a key file: a 40-character Z85 key. */
static void read_key(const char *path, char key[FMUD_KEY_Z85_LEN + 1])
{
        char *text = daemon_slurp(path, NULL);

        cr_assert(strlen(text) >= FMUD_KEY_Z85_LEN, "'%s' holds no key", path);
        memcpy(key, text, FMUD_KEY_Z85_LEN);
        key[FMUD_KEY_Z85_LEN] = '\0';
        free(text);
}

/* err is exactly the message fmt makes of the endpoint. */
static void __attribute__((format(printf, 2, 0)))
expect_said(const char *err, const char *fmt, const char *endpoint)
{
        char want[512];

        snprintf(want, sizeof(want), fmt, endpoint);
        cr_assert(eq(str, (char *)err, want));
}

static void keygen(const char *dir, const char *name)
{
        char *base = NULL;
        struct run_result r;

        cr_assert(asprintf(&base, "%s/%s", dir, name) > 0);
        r = fmuctl((const char *[]){ "keygen", base, NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        run_result_fini(&r);
        /* Never overwrites a key. */
        r = fmuctl((const char *[]){ "keygen", base, NULL });
        cr_assert(r.exit_code == 1, "keygen over an existing key: exit %d", r.exit_code);
        run_result_fini(&r);
        free(base);
}

Test(fmuctl_daemon, keygen_keys_admit_a_client_over_tcp_with_curve)
{
        char *dir = tmpdir_new("fmud-keys"), *conf = NULL, *tcp = NULL, *path = NULL,
             *client = NULL;
        char client_pub[FMUD_KEY_Z85_LEN + 1], server_pub[FMUD_KEY_Z85_LEN + 1],
             other_key[FMUD_KEY_Z85_LEN + 1], other_pub[FMUD_KEY_Z85_LEN + 1],
             client_key[FMUD_KEY_Z85_LEN + 1], err[256];
        const char *extra[3] = { "--config", NULL, NULL };
        struct fmud_opts o = { .connect_timeout_ms = 2000 };
        struct fmud_daemon td;
        struct run_result r;
        struct fmud *fc = NULL;

        cr_assert(dir != NULL);
        keygen(dir, "server");
        keygen(dir, "other");
        /*
         * Z85 keys may hold '#', which authorized_keys takes for a comment
         * (a_public_key_with_a_hash_sign_can_be_authorized): use a client
         * key without one here, so that this test checks the rest.
         */
        for (int i = 0;; i++) {
                char name[32];

                cr_assert(i < 50, "50 keys with a '#'");
                snprintf(name, sizeof(name), "client%d", i);
                keygen(dir, name);
                free(client);
                cr_assert(asprintf(&client, "%s/%s", dir, name) > 0);
                cr_assert(asprintf(&path, "%s.pub", client) > 0);
                read_key(path, client_pub);
                free(path);
                if (!strchr(client_pub, '#'))
                        break;
        }
        cr_assert(asprintf(&path, "%s/server.pub", dir) > 0);
        read_key(path, server_pub);
        free(path);
        cr_assert(asprintf(&path, "%s/other.key", dir) > 0);
        read_key(path, other_key);
        free(path);
        cr_assert(asprintf(&path, "%s/other.pub", dir) > 0);
        read_key(path, other_pub);
        free(path);
        cr_assert(asprintf(&path, "%s.key", client) > 0);
        read_key(path, client_key);
        free(path);
        /* Only the client's public key is authorized. */
        cr_assert(tmpdir_write(dir, "authorized_keys", client_pub, FMUD_KEY_Z85_LEN) == 0);
        cr_assert(asprintf(&tcp, "tcp://127.0.0.1:%d", free_port()) > 0);
        cr_assert(asprintf(&conf, "[control]\ntcp_endpoint = %s\nserver_secret_key = %s/server.key\n"
                           "authorized_keys = %s/authorized_keys\n", tcp, dir, dir) > 0);
        cr_assert(tmpdir_write(dir, "fmud.conf", conf, strlen(conf)) == 0);
        free(conf);
        cr_assert(asprintf(&conf, "%s/fmud.conf", dir) > 0);
        extra[1] = conf;
        daemon_start(&td, extra);

        /* The listed key is admitted through fmuctl's --server-key and --key ... */
        {
                char *spub = NULL, *ckey = NULL;

                cr_assert(asprintf(&spub, "%s/server.pub", dir) > 0);
                cr_assert(asprintf(&ckey, "%s.key", client) > 0);
                r = fmuctl((const char *[]){ "list", "--endpoint", tcp, "--server-key", spub,
                                             "--key", ckey, "--json", NULL });
                cr_assert(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
                run_result_fini(&r);
                /*
                 * ... and a run there writes its --out on this side: the rows
                 * fetched from the daemon, the same as a run in process makes.
                 */
                {
                        char *here = NULL, *local = NULL, *got, *want;

                        cr_assert(asprintf(&here, "%s/remote.csv", dir) > 0);
                        cr_assert(asprintf(&local, "%s/local.csv", dir) > 0);
                        r = fmuctl((const char *[]){ "run", FMUD_EXAMPLES "/msd.ssp", "--endpoint",
                                                     tcp, "--server-key", spub, "--key", ckey,
                                                     "--out", here, "--quiet", NULL });
                        cr_assert(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
                        run_result_fini(&r);
                        r = fmuctl((const char *[]){ "run", FMUD_EXAMPLES "/msd.ssp", "--local",
                                                     "--out", local, "--quiet", NULL });
                        cr_assert(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
                        run_result_fini(&r);
                        got = daemon_slurp(here, NULL);
                        want = daemon_slurp(local, NULL);
                        cr_assert(strcmp(got, want) == 0, "the rows fetched over tcp differ");
                        free(got);
                        free(want);
                        free(here);
                        free(local);
                }
                free(spub);
                free(ckey);
        }
        /* ... another key is not, and the client is told that it is the key. */
        o.server_key = server_pub;
        o.secret_key = other_key;
        cr_assert(eq(int, fmud_connect(tcp, &o, &fc, err, sizeof(err)), -EACCES),
                  "an unlisted key: %s", err);
        expect_said(err, "hello: the daemon at %s does not accept this client's key (status 400): "
                    "its public key is not in the daemon's authorized_keys", tcp);
        /* Without CURVE at all, neither: the daemon requires it. */
        o.server_key = o.secret_key = NULL;
        cr_assert(eq(int, fmud_connect(tcp, &o, &fc, err, sizeof(err)), -EACCES),
                  "plain tcp: %s", err);
        expect_said(err, "hello: the daemon at %s requires CURVE: give its public key and this "
                    "client's key", tcp);
        /* A server key that is not the daemon's: the handshake fails on it. */
        o.server_key = other_pub;
        o.secret_key = client_key;
        cr_assert(eq(int, fmud_connect(tcp, &o, &fc, err, sizeof(err)), -EACCES),
                  "a wrong server key: %s", err);
        expect_said(err, "hello: the CURVE handshake with %s failed: the server key is not the "
                    "daemon's public key", tcp);
        /* fmuctl says the same, and a missing client key before it connects at all. */
        {
                char *opub = NULL, *ckey = NULL, *spub = NULL;

                cr_assert(asprintf(&opub, "%s/other.pub", dir) > 0);
                cr_assert(asprintf(&spub, "%s/server.pub", dir) > 0);
                cr_assert(asprintf(&ckey, "%s.key", client) > 0);
                r = fmuctl((const char *[]){ "list", "--endpoint", tcp, "--server-key", opub,
                                             "--key", ckey, NULL });
                cr_assert(r.exit_code != 0);
                cr_assert(strstr(r.err, "the server key is not the daemon's public key") != NULL,
                          "%s", r.err);
                run_result_fini(&r);
                r = fmuctl((const char *[]){ "list", "--endpoint", tcp, NULL });
                cr_assert(r.exit_code != 0);
                cr_assert(strstr(r.err, "requires CURVE: give its public key and this client's "
                                 "key") != NULL, "%s", r.err);
                run_result_fini(&r);
                r = fmuctl((const char *[]){ "list", "--endpoint", tcp, "--server-key", spub, NULL });
                cr_assert(r.exit_code != 0);
                cr_assert(strstr(r.err, "CURVE needs both --server-key") != NULL, "%s", r.err);
                run_result_fini(&r);
                free(opub);
                free(spub);
                free(ckey);
        }
        /* The admitted key still is, over the same daemon. */
        o.server_key = server_pub;
        o.secret_key = client_key;
        cr_assert(eq(int, fmud_connect(tcp, &o, &fc, err, sizeof(err)), 0), "%s", err);
        fmud_close(fc);
        daemon_stop(&td);
        tmpdir_free(dir);
        free(conf);
        free(tcp);
        free(client);
}

/* A daemon on tcp that authorizes the one public key pub; returns the tcp endpoint. */
static char *start_tcp(struct fmud_daemon *td, const char *dir, const char *server_secret,
                       const char *pub)
{
        char *conf = NULL, *tcp = NULL, *path = NULL;
        const char *extra[3] = { "--config", NULL, NULL };

        cr_assert(tmpdir_write(dir, "server.key", server_secret, strlen(server_secret)) == 0);
        cr_assert(asprintf(&path, "%s/server.key", dir) > 0);
        cr_assert(chmod(path, 0600) == 0);
        free(path);
        cr_assert(tmpdir_write(dir, "authorized_keys", pub, strlen(pub)) == 0);
        cr_assert(asprintf(&tcp, "tcp://127.0.0.1:%d", free_port()) > 0);
        cr_assert(asprintf(&conf, "[control]\ntcp_endpoint = %s\nserver_secret_key = %s/server.key\n"
                           "authorized_keys = %s/authorized_keys\n", tcp, dir, dir) > 0);
        cr_assert(tmpdir_write(dir, "fmud.conf", conf, strlen(conf)) == 0);
        free(conf);
        cr_assert(asprintf(&conf, "%s/fmud.conf", dir) > 0);
        extra[1] = conf;
        daemon_start(td, extra);
        free(conf);
        return tcp;
}

/* Z85 (ZeroMQ RFC 32) has '#' among its 85 characters: about one key in three holds one. */
Test(fmuctl_daemon, a_public_key_with_a_hash_sign_can_be_authorized)
{
        char *dir = tmpdir_new("fmud-keys"), *tcp, err[256];
        char spub[41], ssec[41], cpub[41], csec[41];
        struct fmud_opts o = { .connect_timeout_ms = 10000 };
        struct fmud_daemon td;
        struct fmud *fc = NULL;

        cr_assert(dir != NULL);
        cr_assert(zmq_curve_keypair(spub, ssec) == 0);
        do
                cr_assert(zmq_curve_keypair(cpub, csec) == 0);
        while (!strchr(cpub, '#'));
        tcp = start_tcp(&td, dir, ssec, cpub);
        o.server_key = spub;
        o.secret_key = csec;
        cr_assert(fmud_connect(tcp, &o, &fc, err, sizeof(err)) == 0, "key '%s': %s", cpub, err);
        fmud_close(fc);
        daemon_stop(&td);
        tmpdir_free(dir);
        free(tcp);
}
