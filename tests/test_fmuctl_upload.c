/*
 * fmuctl_upload: fmuctl load and run send the files a daemon cannot open
 * (docs/fmuctl.md "Uploads"): an FMU outside the allowed directories, an
 * .ssd folder with the FMUs it names, an input file, anything over tcp;
 * --no-upload sends the paths. Part of the daemon_upload suite.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "archive_fixture.h"
#include "daemon_fixture.h"
#include "support/run.h"
#include "support/tmpdir.h"

#define FT_FMU FMUD_TEST_FMU_DIR "/Feedthrough.fmu"

Test(daemon_upload, fmuctl_run_uploads_a_file_the_daemon_may_not_open)
{
        char *outside = tmpdir_new("fmud-upload-outside"), *fmu, *out, *csv, *bytes;
        struct fmud_daemon d;
        struct run_result r = { 0 };
        size_t len;

        cr_assert(outside != NULL);
        bytes = daemon_slurp(FT_FMU, &len);
        cr_assert(tmpdir_write(outside, "model.fmu", bytes, len) == 0);
        fmu = fx_path(outside, "model.fmu");
        daemon_start(&d, NULL);
        out = daemon_path(&d, "up.csv");
        cr_assert(run_capture((char *[]){ FMUD_FMUCTL, "--endpoint", d.endpoint, "run", fmu,
                                          "--out", out, NULL }, &r) == 0);
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(strstr(r.err, "fmuctl run: uploading model.fmu (") != NULL, "%s", r.err);
        csv = daemon_slurp(out, NULL);
        cr_assert(strncmp(csv, "time,", 5) == 0, "%s", csv);
        run_result_fini(&r);
        /* --no-upload: the daemon's refusal stands. */
        cr_assert(run_capture((char *[]){ FMUD_FMUCTL, "--endpoint", d.endpoint, "load", fmu,
                                          "--no-upload", NULL }, &r) == 0);
        cr_assert(r.exit_code != 0);
        cr_assert(strstr(r.err, "uploading") == NULL, "%s", r.err);
        cr_assert(strstr(r.err, "not below an allowed directory") != NULL, "%s", r.err);
        run_result_fini(&r);
        free(csv);
        free(out);
        free(fmu);
        free(bytes);
        daemon_stop(&d);
        tmpdir_free(outside);
}

/* Copy src to dir/name. */
static void copy(const char *src, const char *dir, const char *name)
{
        size_t len;
        char *bytes = daemon_slurp(src, &len);

        cr_assert(tmpdir_write(dir, name, bytes, len) == 0);
        free(bytes);
}

/* fmuctl run of path on d's endpoint with more arguments (NULL-terminated, at most 4). */
static void run_fmuctl(const struct fmud_daemon *d, const char *path, const char *out,
                       const char *const *more, struct run_result *r)
{
        char *argv[16] = { FMUD_FMUCTL, "--endpoint", d->endpoint, "run", (char *)path,
                           "--out", (char *)out };
        size_t n = 7;

        for (size_t i = 0; more && more[i] && n < 15; i++)
                argv[n++] = (char *)more[i];
        argv[n] = NULL;
        cr_assert(run_capture(argv, r) == 0);
}

Test(daemon_upload, fmuctl_run_uploads_an_ssd_with_the_files_it_names)
{
        char *outside = tmpdir_new("fmud-upload-ssd"), *by_path, *by_content, *out1, *out2;
        struct fmud_daemon d;
        struct run_result r = { 0 };

        cr_assert(outside != NULL);
        copy(FMUD_EXAMPLES "/msd/SystemStructure.ssd", outside, "SystemStructure.ssd");
        copy(FMUD_EXAMPLES "/msd/resources/MsdMass1.fmu", outside, "resources/MsdMass1.fmu");
        copy(FMUD_EXAMPLES "/msd/resources/MsdMass2.fmu", outside, "resources/MsdMass2.fmu");
        daemon_start(&d, NULL);
        out1 = daemon_path(&d, "path.csv");
        out2 = daemon_path(&d, "content.csv");
        run_fmuctl(&d, FMUD_EXAMPLES "/msd", out1, NULL, &r);
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(strstr(r.err, "uploading") == NULL, "%s", r.err);
        run_result_fini(&r);
        run_fmuctl(&d, outside, out2, NULL, &r);
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(strstr(r.err, "fmuctl run: uploading SystemStructure.ssd (") != NULL, "%s",
                  r.err);
        cr_assert(strstr(r.err, "fmuctl run: uploading MsdMass1.fmu (") != NULL, "%s", r.err);
        cr_assert(strstr(r.err, "fmuctl run: uploading MsdMass2.fmu (") != NULL, "%s", r.err);
        run_result_fini(&r);
        by_path = daemon_slurp(out1, NULL);
        by_content = daemon_slurp(out2, NULL);
        cr_assert(eq(str, by_content, by_path));
        free(by_path);
        free(by_content);
        free(out1);
        free(out2);
        daemon_stop(&d);
        tmpdir_free(outside);
}

/* s with the first from replaced by to, in a new string. */
static char *replace(const char *s, const char *from, const char *to)
{
        const char *at = strstr(s, from);
        char *out;

        cr_assert(at != NULL, "'%s' not found", from);
        cr_assert(asprintf(&out, "%.*s%s%s", (int)(at - s), s, to, at + strlen(from)) > 0);
        return out;
}

/*
 * The files an .ssd names are found as the daemon's load finds them: a
 * single-quoted source and a percent-encoded one are uploaded under the
 * names the daemon opens, a source in a comment is not uploaded at all.
 */
Test(daemon_upload, fmuctl_uploads_the_sources_the_ssd_parser_finds)
{
        char *outside = tmpdir_new("fmud-upload-ssd-forms"), *ref, *got, *out1, *out2;
        char *text, *t1, *t2, *t3;
        struct fmud_daemon d;
        struct run_result r = { 0 };

        cr_assert(outside != NULL);
        text = daemon_slurp(FMUD_EXAMPLES "/msd/SystemStructure.ssd", NULL);
        t1 = replace(text, "source=\"resources/MsdMass1.fmu\"", "source='resources/MsdMass1.fmu'");
        t2 = replace(t1, "source=\"resources/MsdMass2.fmu\"",
                     "source=\"./resources/Msd%20Mass%232.fmu\"");
        t3 = replace(t2, "<ssd:Elements>", "<ssd:Elements>\n<!-- <ssd:Component name=\"old\" "
                     "source=\"resources/Old.fmu\"/> -->");
        cr_assert(tmpdir_write(outside, "SystemStructure.ssd", t3, strlen(t3)) == 0);
        copy(FMUD_EXAMPLES "/msd/resources/MsdMass1.fmu", outside, "resources/MsdMass1.fmu");
        copy(FMUD_EXAMPLES "/msd/resources/MsdMass2.fmu", outside, "resources/Msd Mass#2.fmu");
        copy(FMUD_EXAMPLES "/msd/resources/MsdMass2.fmu", outside, "resources/Old.fmu");
        daemon_start(&d, NULL);
        out1 = daemon_path(&d, "path.csv");
        out2 = daemon_path(&d, "content.csv");
        run_fmuctl(&d, FMUD_EXAMPLES "/msd", out1, NULL, &r);
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        run_result_fini(&r);
        run_fmuctl(&d, outside, out2, NULL, &r);
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(strstr(r.err, "fmuctl run: uploading MsdMass1.fmu (") != NULL, "%s", r.err);
        cr_assert(strstr(r.err, "fmuctl run: uploading Msd Mass#2.fmu (") != NULL, "%s", r.err);
        cr_assert(strstr(r.err, "Old.fmu") == NULL, "%s", r.err);
        run_result_fini(&r);
        ref = daemon_slurp(out1, NULL);
        got = daemon_slurp(out2, NULL);
        cr_assert(eq(str, got, ref));
        free(ref);
        free(got);
        free(out1);
        free(out2);
        free(text);
        free(t1);
        free(t2);
        free(t3);
        daemon_stop(&d);
        tmpdir_free(outside);
}

Test(daemon_upload, fmuctl_run_uploads_the_input_file_too)
{
        static const char in_csv[] = "time,Float64_input\n0.25,1.5\n0.5,3\n";
        char *outside = tmpdir_new("fmud-upload-input"), *in, *inside, *out1, *out2;
        char *by_path, *by_content;
        struct fmud_daemon d;
        struct run_result r = { 0 };
        const char *more[] = { "--input", NULL, "--step", "0.25", "--stop-time", "1",
                               "--record", "Float64_output", NULL };

        cr_assert(outside != NULL);
        cr_assert(tmpdir_write(outside, "in.csv", in_csv, sizeof(in_csv) - 1) == 0);
        in = fx_path(outside, "in.csv");
        daemon_start(&d, NULL);
        cr_assert(tmpdir_write(d.dir, "in.csv", in_csv, sizeof(in_csv) - 1) == 0);
        inside = daemon_path(&d, "in.csv");
        out1 = daemon_path(&d, "path.csv");
        out2 = daemon_path(&d, "content.csv");
        more[1] = inside;
        run_fmuctl(&d, FT_FMU, out1, more, &r);
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        run_result_fini(&r);
        /* The FMU the daemon may open, the input not: both go, by content. */
        more[1] = in;
        run_fmuctl(&d, FT_FMU, out2, more, &r);
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(strstr(r.err, "fmuctl run: uploading in.csv (") != NULL, "%s", r.err);
        run_result_fini(&r);
        by_path = daemon_slurp(out1, NULL);
        by_content = daemon_slurp(out2, NULL);
        cr_assert(eq(str, by_content, by_path));
        cr_assert(strstr(by_path, ",3\n") != NULL, "%s", by_path);
        free(by_path);
        free(by_content);
        free(out1);
        free(out2);
        free(inside);
        free(in);
        daemon_stop(&d);
        tmpdir_free(outside);
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

/* fmuctl keygen DIR/NAME; the public key's first line (caller frees). */
static char *keygen(const char *dir, const char *name)
{
        char *base = fx_path(dir, name), *pub, *text;
        struct run_result r = { 0 };

        cr_assert(run_capture((char *[]){ FMUD_FMUCTL, "keygen", base, NULL }, &r) == 0);
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        run_result_fini(&r);
        cr_assert(asprintf(&pub, "%s.pub", base) > 0);
        text = daemon_slurp(pub, NULL);
        cr_assert(strlen(text) >= FMUD_KEY_Z85_LEN);
        text[FMUD_KEY_Z85_LEN] = '\0';
        free(pub);
        free(base);
        return text;
}

Test(daemon_upload, fmuctl_uploads_over_tcp_whatever_the_daemon_could_open)
{
        char *dir = tmpdir_new("fmud-upload-tcp"), *conf = NULL, *tcp = NULL, *cpub = NULL;
        char *spub, *ckey = NULL, name[32];
        struct fmud_daemon d;
        struct run_result r = { 0 };

        cr_assert(dir != NULL);
        free(keygen(dir, "server"));
        /* authorized_keys takes '#' for a comment: a client key without one. */
        for (int i = 0; !cpub || strchr(cpub, '#'); i++) {
                cr_assert(i < 50);
                free(cpub);
                snprintf(name, sizeof(name), "client%d", i);
                cpub = keygen(dir, name);
        }
        cr_assert(asprintf(&ckey, "%s/%s.key", dir, name) > 0);
        cr_assert(tmpdir_write(dir, "authorized_keys", cpub, strlen(cpub)) == 0);
        cr_assert(asprintf(&tcp, "tcp://127.0.0.1:%d", free_port()) > 0);
        cr_assert(asprintf(&conf, "[control]\ntcp_endpoint = %s\nserver_secret_key = "
                           "%s/server.key\nauthorized_keys = %s/authorized_keys\n", tcp, dir,
                           dir) > 0);
        cr_assert(tmpdir_write(dir, "fmud.conf", conf, strlen(conf)) == 0);
        free(conf);
        conf = fx_path(dir, "fmud.conf");
        spub = fx_path(dir, "server.pub");
        daemon_start(&d, (const char *[]){ "--config", conf, NULL });
        /* Below an allowed directory, but a remote daemon opens nothing of ours: sent. */
        cr_assert(run_capture((char *[]){ FMUD_FMUCTL, "--endpoint", tcp, "--server-key", spub,
                                          "--key", ckey, "load", FT_FMU, NULL }, &r) == 0);
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(strstr(r.err, "fmuctl load: uploading Feedthrough.fmu (") != NULL, "%s",
                  r.err);
        cr_assert(strtoull(r.out, NULL, 10) > 0, "%s", r.out);
        run_result_fini(&r);
        /* --no-upload: the path, which this daemon may open. */
        cr_assert(run_capture((char *[]){ FMUD_FMUCTL, "--endpoint", tcp, "--server-key", spub,
                                          "--key", ckey, "load", FT_FMU, "--no-upload", NULL },
                              &r) == 0);
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(strstr(r.err, "uploading") == NULL, "%s", r.err);
        run_result_fini(&r);
        daemon_stop(&d);
        free(spub);
        free(ckey);
        free(cpub);
        free(conf);
        free(tcp);
        tmpdir_free(dir);
}
