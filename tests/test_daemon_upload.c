/*
 * daemon_upload: files put into the daemon's upload store and loaded by
 * content (PROTOCOL.md, put and load): the same run as a load by path,
 * an upload resumed after a break, the store's eviction, and each refusal
 * (per-file size, quota, SHA-256, a chunk out of order, a hostile archive,
 * an .ssd's file names) with its message and nothing else harmed.
 * fmuctl's uploads: test_fmuctl_upload.c.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive_fixture.h"
#include "daemon_fixture.h"
#include "fmi/sha256.h"
#include "support/tmpdir.h"

#define FT_FMU FMUD_TEST_FMU_DIR "/Feedthrough.fmu"
#define MAX_FILES       256             /* names in a load's files (PROTOCOL.md) */
#define MAX_PARTIALS    8               /* uploads in progress of one client */

/* Run session s to its end; the results file's content (caller frees). */
static char *run_to_end(struct fmud *c, uint64_t s)
{
        char *out = strdup(fmud_load_out(c));
        char *csv;

        cr_assert(out != NULL);
        cr_assert(eq(int, fmud_start(c, &(struct proto_target){ s, 0 }, NULL), 0), "%s",
                  fmud_errmsg(c));
        daemon_wait_state(c, s, PROTO_STATE_FINISHED, NULL);
        cr_assert(eq(int, fmud_unload(c, &(struct proto_target){ s, 0 }), 0), "%s",
                  fmud_errmsg(c));
        csv = daemon_slurp(out, NULL);
        free(out);
        return csv;
}

/* A put request through libfmud's codec, sent raw: the reply (caller finishes it). */
static void raw_put(struct daemon_raw *raw, const char *sha, uint64_t size, uint64_t offset,
                    const void *data, uint32_t len, struct daemon_raw_reply *ret)
{
        struct pw w;

        cr_assert(pw_init(&w) == 0);
        proto_put_encode(&w, 7, &(struct proto_put){ .sha256 = daemon_str(sha), .size = size,
                                                      .offset = offset, .data = data,
                                                      .len = len });
        daemon_raw_send_pw(raw, &w);
        pw_fini(&w);
        daemon_raw_recv(raw, ret);
}

/* What a refused put said: asserts the code, returns the message (static). */
static const char *refused(struct daemon_raw_reply *rep, enum proto_err code)
{
        static char msg[1100];

        cr_assert(eq(int, rep->rep.ok, 0), "the put was taken");
        cr_assert(eq(int, rep->rep.code, (int)code), "%s", rep->message);
        snprintf(msg, sizeof(msg), "%s", rep->message);
        daemon_raw_reply_fini(rep);
        return msg;
}

/* The offset a taken put answers. */
static uint64_t taken(struct daemon_raw_reply *rep, bool *ret_have)
{
        struct proto_put_result res;
        char err[160];

        cr_assert(rep->rep.ok, "%s", rep->message);
        cr_assert(eq(int, proto_put_result_decode(rep->rep.result, &res, err, sizeof(err)), 0),
                  "%s", err);
        daemon_raw_reply_fini(rep);
        if (ret_have)
                *ret_have = res.have;
        return res.offset;
}

static char *store_path(const struct fmud_daemon *d, const char *name)
{
        char *p;

        cr_assert(asprintf(&p, "%s/upload/%s", d->cache_dir, name) > 0);
        return p;
}

/* The partial uploads in the store (files below partial/). */
static int partials(const struct fmud_daemon *d)
{
        char *p = store_path(d, "partial");
        int n = fx_count_dir(p);

        free(p);
        return n;
}

Test(daemon_upload, a_load_by_content_runs_as_the_load_by_path)
{
        char sha[FMUD_SHA256_HEX + 1], *by_path, *by_content, *kept;
        struct fmud_daemon d;
        struct fmud *c;
        uint64_t sent = 1, s;
        struct stat st;

        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        cr_assert(eq(int, fmud_put_file(c, FT_FMU, "fmu", sha, &sent), 0), "%s", fmud_errmsg(c));
        cr_assert(eq(int, stat(FT_FMU, &st), 0));
        cr_assert(eq(u64, sent, (uint64_t)st.st_size));
        /* Kept read-only under its SHA-256, which is the file's. */
        kept = store_path(&d, sha);
        cr_assert(eq(int, stat(kept, &st), 0));
        cr_assert(eq(u32, (uint32_t)(st.st_mode & 0777), 0444u));
        /* Put again: the daemon has it, nothing is sent. */
        cr_assert(eq(int, fmud_put_file(c, FT_FMU, "fmu", sha, &sent), 0), "%s", fmud_errmsg(c));
        cr_assert(eq(u64, sent, 0));
        s = daemon_load(c, &(struct proto_load){ .path = daemon_str(FT_FMU) }, NULL);
        by_path = run_to_end(c, s);
        s = daemon_load(c, &(struct proto_load){ .content = daemon_str(sha) }, NULL);
        by_content = run_to_end(c, s);
        cr_assert(eq(str, by_content, by_path));
        /* The session's own directory went with it. */
        {
                char *load = store_path(&d, "load");

                cr_assert(eq(int, fx_count_dir(load), 0));
                free(load);
        }
        free(by_path);
        free(by_content);
        free(kept);
        fmud_close(c);
        daemon_stop(&d);
}

Test(daemon_upload, an_upload_that_broke_off_resumes_where_the_daemon_is)
{
        char sha[SHA256_HEX_LEN + 1], got[FMUD_SHA256_HEX + 1], *bytes;
        struct daemon_raw_reply rep;
        struct daemon_raw raw;
        struct fmud_daemon d;
        struct fmud *c;
        uint64_t sent;
        size_t len;
        bool have;

        bytes = daemon_slurp(FT_FMU, &len);
        cr_assert(sha256_buf(bytes, len, sha) == 0);
        daemon_start(&d, NULL);
        daemon_raw_open(&d, &raw);
        raw_put(&raw, sha, len, 0, bytes, 1000, &rep);
        cr_assert(eq(u64, taken(&rep, &have), 1000));
        cr_assert(not(have));
        /* A probe (no data) answers what the daemon has. */
        raw_put(&raw, sha, len, 0, NULL, 0, &rep);
        cr_assert(eq(u64, taken(&rep, NULL), 1000));
        daemon_raw_close(&raw);
        /* Another connection of the same client goes on from there. */
        c = daemon_connect(&d);
        cr_assert(eq(int, fmud_put_file(c, FT_FMU, NULL, got, &sent), 0), "%s", fmud_errmsg(c));
        cr_assert(eq(str, got, sha));
        cr_assert(eq(u64, sent, (uint64_t)len - 1000));
        cr_assert(eq(int, partials(&d), 0));
        daemon_load(c, &(struct proto_load){ .content = daemon_str(sha) }, NULL);
        fmud_close(c);
        free(bytes);
        daemon_stop(&d);
}

Test(daemon_upload, refusals_name_what_was_wrong_and_harm_nothing)
{
        static const char conf_text[] = "[upload]\nmax_file_bytes = 2K\nquota_bytes = 3K\n";
        char sha[SHA256_HEX_LEN + 1], other[SHA256_HEX_LEN + 1], want[512], *conf, *dir;
        char data[2048];
        struct daemon_raw_reply rep;
        struct daemon_raw raw;
        struct fmud_daemon d;
        bool have;

        dir = tmpdir_new("fmud-upload-conf");
        cr_assert(tmpdir_write(dir, "fmud.conf", conf_text, sizeof(conf_text) - 1) == 0);
        conf = fx_path(dir, "fmud.conf");
        memset(data, 'x', sizeof(data));
        cr_assert(sha256_buf(data, sizeof(data), sha) == 0);
        cr_assert(sha256_buf(data, 100, other) == 0);
        daemon_start(&d, (const char *[]){ "--config", conf, NULL });
        daemon_raw_open(&d, &raw);

        /* Over the per-file size. */
        raw_put(&raw, sha, 4096, 0, NULL, 0, &rep);
        cr_assert(eq(str, (char *)refused(&rep, PROTO_E_LIMIT),
                     "put: 4096 bytes is over the limit of 2048 bytes per file "
                     "([upload] max_file_bytes)"));
        cr_assert(eq(int, partials(&d), 0));

        /* A chunk out of order: nothing is there yet. */
        raw_put(&raw, sha, sizeof(data), 1024, data, 1024, &rep);
        snprintf(want, sizeof(want), "put: a chunk at offset 1024, but the upload of %s has 0 "
                 "bytes: send from 0", sha);
        cr_assert(eq(str, (char *)refused(&rep, PROTO_E_INVALID), want));
        raw_put(&raw, sha, sizeof(data), 0, data, 1024, &rep);
        cr_assert(eq(u64, taken(&rep, NULL), 1024));
        raw_put(&raw, sha, sizeof(data), 0, data, 1024, &rep);
        snprintf(want, sizeof(want), "put: a chunk at offset 0, but the upload of %s has 1024 "
                 "bytes: send from 1024", sha);
        cr_assert(eq(str, (char *)refused(&rep, PROTO_E_INVALID), want));

        /* Over the quota: 2048 in progress, 2048 more. */
        raw_put(&raw, other, 2048, 0, data, 100, &rep);
        cr_assert(eq(str, (char *)refused(&rep, PROTO_E_LIMIT),
                     "put: 2048 more bytes would take this client's uploads in progress to "
                     "4096 bytes, over its quota of 3072 bytes ([upload] quota_bytes)"));
        cr_assert(eq(int, partials(&d), 1));

        /* The upload in progress was not harmed: it completes. */
        raw_put(&raw, sha, sizeof(data), 1024, data + 1024, 1024, &rep);
        cr_assert(eq(u64, taken(&rep, &have), sizeof(data)));
        cr_assert(have == true);
        cr_assert(eq(int, partials(&d), 0));

        /* A SHA-256 that is not the content's: discarded, both named. */
        raw_put(&raw, other, 200, 0, data, 200, &rep);
        {
                char actual[SHA256_HEX_LEN + 1], *kept = store_path(&d, other);

                cr_assert(sha256_buf(data, 200, actual) == 0);
                snprintf(want, sizeof(want), "put: the content's SHA-256 is %s, not %s as named: "
                         "upload discarded", actual, other);
                cr_assert(eq(str, (char *)refused(&rep, PROTO_E_INVALID), want));
                cr_assert(access(kept, F_OK) < 0);
                free(kept);
        }
        cr_assert(eq(int, partials(&d), 0));
        /* The first upload is still there. */
        raw_put(&raw, sha, sizeof(data), 0, NULL, 0, &rep);
        cr_assert(eq(u64, taken(&rep, &have), sizeof(data)));
        cr_assert(have == true);
        daemon_raw_close(&raw);
        daemon_stop(&d);
        free(conf);
        tmpdir_free(dir);
}

/* msg with every from replaced by to (static). */
static const char *replaced(const char *msg, const char *from, const char *to)
{
        static char buf[2048];
        size_t n = 0, fl = strlen(from);

        while (*msg && n + strlen(to) + 2 < sizeof(buf)) {
                if (!strncmp(msg, from, fl)) {
                        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s", to);
                        msg += fl;
                } else {
                        buf[n++] = *msg++;
                }
        }
        buf[n] = '\0';
        return buf;
}

Test(daemon_upload, a_hostile_archive_is_refused_as_from_a_path)
{
        static const char md[] = FX_MD;
        const struct fx_entry v[] = {
                { .name = "modelDescription.xml", .data = md, .len = sizeof(md) - 1 },
                { .name = "../evil.txt", .data = "x", .len = 1 },
        };
        char sha[FMUD_SHA256_HEX + 1], by_path[2048], *fmu;
        struct fmud_daemon d;
        struct fmud *c;
        uint64_t s;
        int r;

        daemon_start(&d, NULL);
        fmu = daemon_path(&d, "hostile.fmu");
        cr_assert(eq(int, fx_write_raw(fmu, v, 2, false), 0));
        c = daemon_connect(&d);
        r = fmud_load(c, &(struct proto_load){ .path = daemon_str(fmu) }, &s, NULL);
        daemon_assert_refused(c, r, PROTO_E_INVALID, "a hostile archive by path");
        /* As the content load names it: model.fmu, relative to its own directory. */
        snprintf(by_path, sizeof(by_path), "%s", replaced(fmud_errmsg(c), fmu, "model.fmu"));
        snprintf(by_path, sizeof(by_path), "%s", replaced(by_path, "'hostile.fmu'",
                                                          "'model.fmu'"));
        cr_assert(eq(int, fmud_put_file(c, fmu, "fmu", sha, NULL), 0), "%s", fmud_errmsg(c));
        r = fmud_load(c, &(struct proto_load){ .content = daemon_str(sha) }, &s, NULL);
        daemon_assert_refused(c, r, PROTO_E_INVALID, "a hostile archive by content");
        cr_assert(eq(str, (char *)fmud_errmsg(c), by_path));
        cr_assert(strstr(by_path, "..") != NULL, "%s", by_path);
        /*
         * Nothing of it was unpacked outside, and the daemon goes on: an FMU
         * unpacks into <cache>/<sha256>/, so "../evil.txt" would be <cache>/evil.txt.
         */
        {
                char *evil = daemon_path(&d, "cache/evil.txt");

                cr_assert(access(evil, F_OK) < 0);
                free(evil);
                evil = daemon_path(&d, "cache/upload/load/evil.txt");
                cr_assert(access(evil, F_OK) < 0);
                free(evil);
        }
        daemon_load(c, &(struct proto_load){ .path = daemon_str(FT_FMU) }, NULL);
        fmud_close(c);
        free(fmu);
        daemon_stop(&d);
}

Test(daemon_upload, an_ssd_files_name_must_be_a_plain_relative_path)
{
        static const char *const bad[] = { "../x.fmu", "/etc/x.fmu", "a/../x.fmu", "./x.fmu",
                                           "a//x.fmu" };
        char sha[FMUD_SHA256_HEX + 1], want[512];
        struct fmud_daemon d;
        struct fmud *c;
        uint64_t s;
        int r;

        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        cr_assert(eq(int, fmud_put_file(c, FT_FMU, "fmu", sha, NULL), 0), "%s", fmud_errmsg(c));
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                struct proto_assign f = { daemon_str(bad[i]), daemon_str(sha) };

                r = fmud_load(c, &(struct proto_load){ .content = daemon_str(sha), .n_files = 1,
                                                       .files = &f }, &s, NULL);
                daemon_assert_refused(c, r, PROTO_E_INVALID, bad[i]);
                snprintf(want, sizeof(want), "files: '%s' is not a plain relative path (none "
                         "starts with '/'; no empty, '.' or '..' part)", bad[i]);
                cr_assert(eq(str, (char *)fmud_errmsg(c), want));
        }
        /* No session was made, no load directory is left. */
        {
                char *load = store_path(&d, "load");

                cr_assert(eq(int, fx_count_dir(load), 0));
                free(load);
        }
        daemon_load(c, &(struct proto_load){ .content = daemon_str(sha) }, NULL);
        fmud_close(c);
        daemon_stop(&d);
}

/* A small file of n bytes of c in dir; its path (caller frees). */
static char *small(const char *dir, const char *name, char c, size_t n)
{
        char buf[1024];

        cr_assert(n <= sizeof(buf));
        memset(buf, c, n);
        cr_assert(tmpdir_write(dir, name, buf, n) == 0);
        return fx_path(dir, name);
}

Test(daemon_upload, the_store_evicts_the_least_recently_used_but_never_what_a_session_uses)
{
        char conf_text[128], ft[FMUD_SHA256_HEX + 1], a[FMUD_SHA256_HEX + 1];
        char b[FMUD_SHA256_HEX + 1], *dir, *conf, *fa, *fb, *p;
        struct fmud_daemon d;
        struct stat st;
        struct fmud *c;

        cr_assert(eq(int, stat(FT_FMU, &st), 0));
        dir = tmpdir_new("fmud-upload-evict");
        /* Room for the FMU and one small file, not two. */
        snprintf(conf_text, sizeof(conf_text), "[upload]\nstore_bytes = %llu\n",
                 (unsigned long long)st.st_size + 1500);
        cr_assert(tmpdir_write(dir, "fmud.conf", conf_text, strlen(conf_text)) == 0);
        conf = fx_path(dir, "fmud.conf");
        fa = small(dir, "a.csv", 'a', 1000);
        fb = small(dir, "b.csv", 'b', 1000);
        daemon_start(&d, (const char *[]){ "--config", conf, NULL });
        c = daemon_connect(&d);
        cr_assert(eq(int, fmud_put_file(c, FT_FMU, "fmu", ft, NULL), 0), "%s", fmud_errmsg(c));
        /* Loaded, so in use: its directory links the upload. */
        daemon_load(c, &(struct proto_load){ .content = daemon_str(ft) }, NULL);
        cr_assert(eq(int, fmud_put_file(c, fa, "csv", a, NULL), 0), "%s", fmud_errmsg(c));
        cr_assert(eq(int, fmud_put_file(c, fb, "csv", b, NULL), 0), "%s", fmud_errmsg(c));
        /* Past store_bytes: a.csv went (the oldest not in use); the FMU stays. */
        p = store_path(&d, a);
        cr_assert(access(p, F_OK) < 0, "a.csv was kept");
        free(p);
        p = store_path(&d, b);
        cr_assert(eq(int, access(p, F_OK), 0));
        free(p);
        p = store_path(&d, ft);
        cr_assert(eq(int, access(p, F_OK), 0), "the FMU a session uses was evicted");
        free(p);
        fmud_close(c);
        daemon_stop(&d);
        free(fa);
        free(fb);
        free(conf);
        tmpdir_free(dir);
}

/* A load by content of the FMU with files f (n of them): refused as code, its message. */
static const char *load_refused(struct fmud *c, const char *sha, struct proto_assign *f,
                                uint32_t n, enum proto_err code)
{
        static char msg[1100];
        uint64_t s;
        int r;

        r = fmud_load(c, &(struct proto_load){ .content = daemon_str(sha), .n_files = n,
                                               .files = f }, &s, NULL);
        daemon_assert_refused(c, r, code, "a load by content");
        snprintf(msg, sizeof(msg), "%s", fmud_errmsg(c));
        return msg;
}

Test(daemon_upload, a_load_s_files_are_bounded_in_number_length_and_depth)
{
        static const char deep[] = "a/b/c/d/e/f/g/h/x.fmu", ok8[] = "a/b/c/d/e/f/g/x.fmu";
        char sha[FMUD_SHA256_HEX + 1], want[512], longest[257], *load, (*names)[8];
        struct proto_assign *f;
        struct fmud_daemon d;
        struct fmud *c;

        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        load = store_path(&d, "load");
        cr_assert(eq(int, fmud_put_file(c, FT_FMU, "fmu", sha, NULL), 0), "%s", fmud_errmsg(c));
        f = calloc(MAX_FILES + 1, sizeof(*f));
        names = calloc(MAX_FILES + 1, sizeof(*names));
        cr_assert(f && names);
        for (size_t i = 0; i <= MAX_FILES; i++) {
                snprintf(names[i], sizeof(names[i]), "f%zu", i);
                f[i] = (struct proto_assign){ daemon_str(names[i]), daemon_str(sha) };
        }
        /* One name more than the limit. */
        cr_assert(eq(str, (char *)load_refused(c, sha, f, MAX_FILES + 1, PROTO_E_INVALID),
                     "files: 257 names, over the limit of 256"));
        /* A name of 256 bytes. */
        memset(longest, 'n', 256);
        longest[256] = '\0';
        f[0].name = daemon_str(longest);
        snprintf(want, sizeof(want), "files: '%.40s...' is 256 bytes long, over the limit of 255",
                 longest);
        cr_assert(eq(str, (char *)load_refused(c, sha, f, 1, PROTO_E_INVALID), want));
        /* Nine parts. */
        f[0].name = daemon_str(deep);
        cr_assert(eq(str, (char *)load_refused(c, sha, f, 1, PROTO_E_INVALID),
                     "files: 'a/b/c/d/e/f/g/h/x.fmu' has 9 parts, over the limit of 8"));
        cr_assert(eq(int, fx_count_dir(load), 0));
        /* At the limits: taken, and its directory goes with the session. */
        longest[255] = '\0';
        f[0].name = daemon_str(ok8);
        f[1].name = daemon_str(longest);
        {
                uint64_t s = daemon_load(c, &(struct proto_load){ .content = daemon_str(sha),
                                                                  .n_files = 2, .files = f },
                                         NULL);

                cr_assert(eq(int, fx_count_dir(load), 1));
                free(run_to_end(c, s));
        }
        cr_assert(eq(int, fx_count_dir(load), 0));
        free(f);
        free(names);
        free(load);
        fmud_close(c);
        daemon_stop(&d);
}

Test(daemon_upload, a_deep_load_directory_left_behind_is_removed_at_start)
{
        char *dir = tmpdir_new("fmud-upload-deep"), *cache, *up, *load;
        const char *extra[] = { "--cache-dir", NULL, NULL };
        struct fmud_daemon d;
        int fd, sub;

        /* 2000 levels, more than a process may hold descriptors. */
        cache = fx_path(dir, "cache");
        up = fx_path(cache, "upload");
        load = fx_path(up, "load");
        cr_assert(eq(int, mkdir(cache, 0755), 0));
        cr_assert(eq(int, mkdir(up, 0700), 0));
        cr_assert(eq(int, mkdir(load, 0700), 0));
        fd = open(load, O_RDONLY | O_DIRECTORY);
        cr_assert(fd >= 0);
        for (int i = 0; i < 2000; i++) {
                cr_assert(eq(int, mkdirat(fd, "d", 0700), 0));
                sub = openat(fd, "d", O_RDONLY | O_DIRECTORY);
                cr_assert(sub >= 0);
                close(fd);
                fd = sub;
        }
        close(fd);
        extra[1] = cache;
        /* The descriptors of a usual service, fewer than the levels. */
        {
                struct rlimit was, low;

                cr_assert(eq(int, getrlimit(RLIMIT_NOFILE, &was), 0));
                low = was;
                low.rlim_cur = was.rlim_max < 1024 ? was.rlim_max : 1024;
                cr_assert(eq(int, setrlimit(RLIMIT_NOFILE, &low), 0));
                daemon_start(&d, extra);
                cr_assert(eq(int, setrlimit(RLIMIT_NOFILE, &was), 0));
        }
        cr_assert(eq(int, fx_count_dir(load), 0));
        daemon_stop(&d);
        free(load);
        free(up);
        free(cache);
        tmpdir_free(dir);
}

Test(daemon_upload, a_probe_keeps_nothing_and_a_client_has_few_uploads_in_progress)
{
        char sha[MAX_PARTIALS + 1][SHA256_HEX_LEN + 1], want[512];
        struct daemon_raw_reply rep;
        struct daemon_raw raw;
        struct fmud_daemon d;
        char data[3] = "ab";
        bool have = true;

        for (size_t i = 0; i <= MAX_PARTIALS; i++) {
                data[0] = (char)('a' + i);
                cr_assert(sha256_buf(data, 2, sha[i]) == 0);
        }
        daemon_start(&d, NULL);
        daemon_raw_open(&d, &raw);
        /* A probe of an upload the daemon has not seen: offset 0, nothing made. */
        raw_put(&raw, sha[0], 2, 0, NULL, 0, &rep);
        cr_assert(eq(u64, taken(&rep, &have), 0));
        cr_assert(not(have));
        cr_assert(eq(int, partials(&d), 0));
        /* Each upload begun takes one; past the client's limit, refused. */
        for (size_t i = 0; i < MAX_PARTIALS; i++) {
                data[0] = (char)('a' + i);
                raw_put(&raw, sha[i], 2, 0, data, 1, &rep);
                cr_assert(eq(u64, taken(&rep, NULL), 1));
        }
        data[0] = (char)('a' + MAX_PARTIALS);
        raw_put(&raw, sha[MAX_PARTIALS], 2, 0, data, 1, &rep);
        snprintf(want, sizeof(want), "put: %d uploads of this client's in progress (the limit "
                 "per client)", MAX_PARTIALS);
        cr_assert(eq(str, (char *)refused(&rep, PROTO_E_LIMIT), want));
        cr_assert(eq(int, partials(&d), MAX_PARTIALS));
        /* Those in progress are not harmed: one completes, and then there is room. */
        raw_put(&raw, sha[0], 2, 1, "b", 1, &rep);
        cr_assert(eq(u64, taken(&rep, &have), 2));
        cr_assert(have == true);
        raw_put(&raw, sha[MAX_PARTIALS], 2, 0, data, 1, &rep);
        cr_assert(eq(u64, taken(&rep, NULL), 1));
        daemon_raw_close(&raw);
        daemon_stop(&d);
}

Test(daemon_upload, the_content_s_kind_comes_from_its_bytes_not_from_the_put)
{
        char sha[FMUD_SHA256_HEX + 1], csv[FMUD_SHA256_HEX + 1], want[512], *dir, *fc, *load;
        struct fmud_daemon d;
        struct fmud *c;
        uint64_t s;

        dir = tmpdir_new("fmud-upload-kind");
        fc = small(dir, "a.csv", 'a', 100);
        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        load = store_path(&d, "load");
        /* An FMU's bytes put as "csv" first: its loads still take it as an FMU. */
        cr_assert(eq(int, fmud_put_file(c, FT_FMU, "csv", sha, NULL), 0), "%s", fmud_errmsg(c));
        cr_assert(eq(int, fmud_put_file(c, FT_FMU, "fmu", sha, NULL), 0), "%s", fmud_errmsg(c));
        s = daemon_load(c, &(struct proto_load){ .content = daemon_str(sha) }, NULL);
        free(run_to_end(c, s));
        /* A CSV file's bytes put as "fmu" are not a model, whatever the put said. */
        cr_assert(eq(int, fmud_put_file(c, fc, "fmu", csv, NULL), 0), "%s", fmud_errmsg(c));
        snprintf(want, sizeof(want), "content: upload %s is neither a zip archive (.fmu, .ssp) "
                 "nor XML (.ssd)", csv);
        cr_assert(eq(str, (char *)load_refused(c, csv, NULL, 0, PROTO_E_INVALID), want));
        cr_assert(eq(int, fx_count_dir(load), 0));
        daemon_load(c, &(struct proto_load){ .content = daemon_str(sha) }, NULL);
        free(load);
        fmud_close(c);
        daemon_stop(&d);
        free(fc);
        tmpdir_free(dir);
}
