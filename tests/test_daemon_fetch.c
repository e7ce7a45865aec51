/*
 * daemon_fetch: a session's results fetched through the daemon (the
 * results operation, fmud_results_read(), fmuctl results, fmuctl run
 * --fetch), end to end with a real daemon and the msd example: the bytes
 * fetched are the daemon's file byte for byte, after the run and while a
 * paced run records (complete lines only); another user, an unknown
 * session and an offset past the end are refused with a clear message and
 * harm nothing. And .mat output (fmuctl run --local, --fetch, fmuctl
 * results) read back by the minimal MAT v4 reader below, every header
 * field and every value checked bit for bit against the CSV of the run.
 */
#include <criterion/criterion.h>
#include <sys/wait.h>
#include <signal.h>
#include <fcntl.h>
#include <criterion/new/assert.h>
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon_fixture.h"
#include "engine/record/mat4_csv.h"
#include "support/as_other.h"
#include "support/run.h"
#include "support/tmpdir.h"

#define MSD FMUD_EXAMPLES "/msd.ssp"

static struct fmud_daemon d;
static struct fmud *c;

static void setup(void)
{
        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        cr_assert(eq(int, setenv("FMUD_ENDPOINT", d.endpoint, 1), 0));
        cr_assert(eq(int, chdir(d.dir), 0));
}

static void teardown(void)
{
        fmud_close(c);
        c = NULL;
        daemon_stop(&d);
}

TestSuite(daemon_fetch, .init = setup, .fini = teardown);

/* msd to its end (no out: the daemon's state directory); the session and its file's path. */
static uint64_t run_msd(char **ret_path, double warp)
{
        struct proto_load a = { .path = daemon_str(MSD), .has_warp = warp > 0, .warp = warp };
        struct proto_session_status st;
        struct proto_target t = { 0 };

        t.session = daemon_load(c, &a, NULL);
        cr_assert(eq(int, fmud_start(c, &t, NULL), 0), "%s", fmud_errmsg(c));
        if (warp > 0)
                return t.session;
        daemon_wait_state(c, t.session, PROTO_STATE_FINISHED, &st);
        cr_assert(st.out.len > 0);
        *ret_path = strndup(st.out.ptr, st.out.len);
        return t.session;
}

/* The whole file through fmud_results_read() in pieces of max bytes; caller frees. */
static char *fetch_all(uint64_t session, size_t max, size_t *ret_len)
{
        struct proto_target t = { .session = session };
        struct fmud_results res;
        char *all = NULL, *buf = malloc(max);
        size_t len = 0;

        cr_assert(buf != NULL);
        for (int i = 0; i < 100000; i++) {
                cr_assert(eq(int, fmud_results_read(c, &t, len, buf, max, &res), 0), "%s",
                          fmud_errmsg(c));
                cr_assert(eq(u64, res.offset, len));
                cr_assert(le(sz, res.len, max));
                cr_assert(eq(str, res.format, "csv"));
                all = realloc(all, len + res.len + 1);
                cr_assert(all != NULL);
                memcpy(all + len, buf, res.len);
                len += res.len;
                if (res.done) {
                        cr_assert(eq(u64, res.size, len));
                        break;
                }
                cr_assert(res.len == max, "a short piece (%zu of %zu) that is not the end",
                          res.len, max);
        }
        free(buf);
        all[len] = '\0';
        *ret_len = len;
        return all;
}

Test(daemon_fetch, fetched_results_are_the_daemons_file_byte_for_byte)
{
        char *path = NULL, *file, *got;
        size_t flen, glen;
        uint64_t s = run_msd(&path, 0);

        file = daemon_slurp(path, &flen);
        cr_assert(gt(sz, flen, 4096));
        /* Pieces that cut lines anywhere, and the largest piece there is. */
        got = fetch_all(s, 4093, &glen);
        cr_assert(eq(sz, glen, flen));
        cr_assert(eq(int, memcmp(got, file, flen), 0));
        free(got);
        got = fetch_all(s, PROTO_RESULTS_CHUNK, &glen);
        cr_assert(eq(sz, glen, flen));
        cr_assert(eq(int, memcmp(got, file, flen), 0));
        free(got);
        free(file);
        free(path);
}

Test(daemon_fetch, a_running_session_serves_complete_lines_as_they_are_written)
{
        struct proto_target t = { 0 };
        struct proto_session_status st;
        struct fmud_results res;
        char *buf = malloc(PROTO_RESULTS_CHUNK), *all = NULL, *file, *path;
        size_t len = 0, flen;
        bool seen_running = false;

        /* Paced: 10 s of simulated time at warp 4, rows flushed every second while it runs. */
        t.session = run_msd(NULL, 4);
        cr_assert(buf != NULL);
        for (int i = 0; i < 100000; i++) {
                cr_assert(eq(int, fmud_results_read(c, &t, len, buf, PROTO_RESULTS_CHUNK, &res), 0),
                          "%s", fmud_errmsg(c));
                if (res.len) {
                        /* Only whole rows, whatever the daemon is writing meanwhile. */
                        cr_assert(eq(chr, buf[res.len - 1], '\n'));
                        all = realloc(all, len + res.len + 1);
                        cr_assert(all != NULL);
                        memcpy(all + len, buf, res.len);
                        len += res.len;
                        if (!res.done)
                                seen_running = true;
                }
                if (res.done)
                        break;
                usleep(50000);
        }
        cr_assert(res.done);
        cr_assert(seen_running, "no rows were fetched before the end of a 2.5 s paced run");
        cr_assert(eq(int, fmud_status(c, t.session, &st), 0));
        cr_assert(eq(int, st.state, PROTO_STATE_FINISHED));
        path = strndup(st.out.ptr, st.out.len);
        file = daemon_slurp(path, &flen);
        cr_assert(eq(sz, len, flen));
        cr_assert(eq(int, memcmp(all, file, flen), 0));
        free(file);
        free(path);
        free(all);
        free(buf);
}

struct other_read {
        const char *endpoint;
        uint64_t session;
};

/* As the other user: fmud_results_read(); its message on report_fd, exit 5 when it read. */
static int read_as_other(void *ctx, int report_fd)
{
        const struct other_read *o = ctx;
        struct proto_target t = { .session = o->session };
        struct fmud_results res;
        struct fmud *oc = NULL;
        static char buf[4096];
        char err[256];
        int r;

        if (fmud_connect(o->endpoint, NULL, &oc, err, sizeof(err)) < 0)
                return 3;
        r = fmud_results_read(oc, &t, 0, buf, sizeof(buf), &res);
        (void) !write(report_fd, fmud_errmsg(oc), strlen(fmud_errmsg(oc)));
        fmud_close(oc);
        return r == 0 ? 5 : 0;
}

Test(daemon_fetch, another_users_session_is_refused)
{
        char *path = NULL, *cs = daemon_path(&d, "control.sock"), *ps = daemon_path(&d, "events.sock");
        uint64_t s = run_msd(&path, 0);
        struct other_read o = { d.endpoint, s };
        char line[512], *want = NULL, *got, *data;
        int status = -1;
        size_t len;
        ssize_t n;

        cr_assert(eq(int, chmod(d.dir, 0777), 0));
        cr_assert(eq(int, chmod(cs, 0666), 0));
        cr_assert(eq(int, chmod(ps, 0666), 0));
        n = as_other(read_as_other, &o, line, sizeof(line) - 1, &status);
        cr_assert(n >= 0);
        line[n] = '\0';
        cr_assert(eq(int, status, 0), "the other user read the results: %s", line);
        cr_assert(asprintf(&want, "results of session %llu needs its owner (uid %u) or the admin "
                           "role; you are observer (uid %u)", (unsigned long long)s,
                           (unsigned)getuid(), AS_OTHER_UID) > 0);
        cr_assert(strstr(line, want) != NULL, "%s", line);
        /* The owner still reads all of it. */
        got = fetch_all(s, PROTO_RESULTS_CHUNK, &len);
        data = daemon_slurp(path, NULL);
        cr_assert(eq(sz, len, strlen(data)));
        free(data);
        free(got);
        free(want);
        free(path);
        free(cs);
        free(ps);
}

Test(daemon_fetch, an_unknown_session_and_an_offset_past_the_end_are_refused)
{
        struct proto_target t = { .session = 999 };
        struct fmud_results res;
        char buf[64], *path = NULL, *want = NULL, *file;
        size_t flen;
        int r;

        r = fmud_results_read(c, &t, 0, buf, sizeof(buf), &res);
        daemon_assert_refused(c, r, PROTO_E_NO_SESSION, "results of session 999");
        cr_assert(eq(str, (char *)fmud_errmsg(c), "no session 999"));
        t.session = run_msd(&path, 0);
        file = daemon_slurp(path, &flen);
        r = fmud_results_read(c, &t, flen + 1, buf, sizeof(buf), &res);
        daemon_assert_refused(c, r, PROTO_E_INVALID, "an offset past the end");
        cr_assert(asprintf(&want, "offset %zu is past the end of the results of session "
                           "%llu (%zu bytes)", flen + 1, (unsigned long long)t.session, flen) > 0);
        cr_assert(eq(str, (char *)fmud_errmsg(c), want));
        /* At the end exactly: nothing, and done. */
        cr_assert(eq(int, fmud_results_read(c, &t, flen, buf, sizeof(buf), &res), 0));
        cr_assert(eq(sz, res.len, 0));
        cr_assert(res.done);
        /* The session is as it was: the file is still served from its start. */
        cr_assert(eq(int, fmud_results_read(c, &t, 0, buf, sizeof(buf), &res), 0));
        cr_assert(eq(int, memcmp(buf, file, sizeof(buf)), 0));
        free(want);
        free(file);
        free(path);
}

/* ---- MAT v4, read back by hand ---------------------------------------------------- */

struct mat {
        int32_t type, rows, cols;
        char name[32];
        const unsigned char *data;
};

/* The next matrix at *off of the file s (len); checks imagf 0 and the name's NUL. */
static struct mat next_mat(const unsigned char *s, size_t len, size_t *off)
{
        struct mat m = { 0 };
        int32_t h[5];
        size_t el;

        cr_assert(le(sz, *off + sizeof(h), len));
        memcpy(h, s + *off, sizeof(h));
        *off += sizeof(h);
        m.type = h[0], m.rows = h[1], m.cols = h[2];
        cr_assert(eq(i32, h[3], 0), "imagf");
        cr_assert(h[4] > 1 && h[4] < 32);
        cr_assert(le(sz, *off + (size_t)h[4], len));
        memcpy(m.name, s + *off, (size_t)h[4]);
        cr_assert(eq(chr, m.name[h[4] - 1], '\0'));
        *off += (size_t)h[4];
        el = m.type == 0 ? 8 : m.type == 20 ? 4 : m.type == 51 ? 1 : 0;
        cr_assert(el != 0, "%s: type %d", m.name, m.type);
        m.data = s + *off;
        *off += el * (size_t)m.rows * (size_t)m.cols;
        cr_assert(le(sz, *off, len), "%s runs past the end of the file", m.name);
        return m;
}

/* Column j of a text matrix, without its padding. */
static void text_col(const struct mat *m, int j, char *out, size_t size)
{
        size_t n = 0;

        for (int i = 0; i < m->rows && n + 1 < size; i++)
                out[n++] = (char)m->data[(size_t)j * (size_t)m->rows + (size_t)i];
        out[n] = '\0';
        while (n && (out[n - 1] == '\0' || out[n - 1] == ' '))
                out[--n] = '\0';
}

static double f64_at(const struct mat *m, int row, int col)
{
        double v;

        memcpy(&v, m->data + 8 * ((size_t)col * (size_t)m->rows + (size_t)row), sizeof(v));
        return v;
}

/* The .mat at mat_path holds the CSV at csv_path: every field and value, bit for bit. */
static void assert_mat_is_csv(const char *mat_path, const char *csv_path)
{
        size_t mlen, off = 0, ncols = 1, nrows = 0;
        unsigned char *ms = (unsigned char *)daemon_slurp(mat_path, &mlen);
        char *csv = daemon_slurp(csv_path, NULL), *line, *save = NULL, *tok, *s2, name[64], *last;
        static const char *const aclass[4] = { "Atrajectory", "1.1", "", "binTrans" };
        struct mat m;
        locale_t cl = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);

        for (char *p = csv; *p != '\n'; p++)
                ncols += *p == ',';
        for (char *p = csv; *p; p++)
                nrows += *p == '\n';
        nrows--;        /* the header */
        m = next_mat(ms, mlen, &off);
        cr_assert(eq(str, m.name, "Aclass"));
        cr_assert(eq(i32, m.type, 51));
        cr_assert(eq(i32, m.rows, 4));
        cr_assert(eq(i32, m.cols, 11));
        for (int i = 0; i < 4; i++) {
                char row[12];

                for (int j = 0; j < 11; j++)
                        row[j] = (char)m.data[j * 4 + i];
                row[11] = '\0';
                for (int j = 10; j >= 0 && row[j] == ' '; j--)
                        row[j] = '\0';
                cr_assert(eq(str, row, (char *)aclass[i]));
        }
        m = next_mat(ms, mlen, &off);
        cr_assert(eq(str, m.name, "name"));
        cr_assert(eq(i32, m.type, 51));
        cr_assert(eq(i32, m.cols, (int32_t)ncols));
        s2 = strdup(csv);
        line = strtok_r(s2, "\n", &save);
        tok = strtok(line, ",");
        for (int j = 0; j < (int)ncols; j++, tok = strtok(NULL, ",")) {
                text_col(&m, j, name, sizeof(name));
                cr_assert(eq(str, name, tok));
        }
        free(s2);
        m = next_mat(ms, mlen, &off);
        cr_assert(eq(str, m.name, "description"));
        cr_assert(eq(i32, m.type, 51));
        cr_assert(eq(i32, m.cols, (int32_t)ncols));
        text_col(&m, 0, name, sizeof(name));
        cr_assert(eq(str, name, "Time in [s]"));
        m = next_mat(ms, mlen, &off);
        cr_assert(eq(str, m.name, "dataInfo"));
        cr_assert(eq(i32, m.type, 20));
        cr_assert(eq(i32, m.rows, 4));
        cr_assert(eq(i32, m.cols, (int32_t)ncols));
        for (int j = 0; j < (int)ncols; j++) {
                int32_t info[4];

                memcpy(info, m.data + 16 * j, sizeof(info));
                /* msd records outputs only: every column time-varying, in data_2's order. */
                cr_assert(eq(i32, info[0], j ? 2 : 0));
                cr_assert(eq(i32, info[1], j + 1));
                cr_assert(eq(i32, info[2], 0));
                cr_assert(eq(i32, info[3], -1));
        }
        m = next_mat(ms, mlen, &off);
        cr_assert(eq(str, m.name, "data_1"));
        cr_assert(eq(i32, m.type, 0));
        cr_assert(eq(i32, m.rows, 1));
        cr_assert(eq(i32, m.cols, 2));
        cr_assert(eq(dbl, f64_at(&m, 0, 0), 0.0));
        /* The first and the last time: the CSV's last row's. */
        last = strrchr(csv, '\n');
        while (last > csv && last[-1] != '\n')
                last--;
        cr_assert(eq(dbl, f64_at(&m, 0, 1), strtod_l(last, NULL, cl)));
        m = next_mat(ms, mlen, &off);
        cr_assert(eq(str, m.name, "data_2"));
        cr_assert(eq(i32, m.type, 0));
        cr_assert(eq(i32, m.rows, (int32_t)ncols));
        cr_assert(eq(i32, m.cols, (int32_t)nrows));
        cr_assert(eq(sz, off, mlen), "bytes after data_2");
        /* Every row, bit for bit: the CSV's shortest round-trip text read back. */
        save = NULL;
        line = strtok_r(csv, "\n", &save);
        for (int r = 0; (line = strtok_r(NULL, "\n", &save)); r++) {
                char *f = line, *end;

                for (int j = 0; j < (int)ncols; j++) {
                        double want = strtod_l(f, &end, cl), got = f64_at(&m, j, r);

                        cr_assert(eq(int, memcmp(&want, &got, sizeof(want)), 0),
                                  "row %d column %d: %.17g in the .mat, %.17g in the CSV", r, j,
                                  got, want);
                        f = end + 1;
                }
        }
        freelocale(cl);
        free(csv);
        free(ms);
}

static struct run_result fmuctl(const char *const args[])
{
        char *argv[32] = { (char *)FMUD_FMUCTL };
        struct run_result r = { 0 };
        size_t n = 1;

        for (; args[n - 1] && n < 31; n++)
                argv[n] = (char *)args[n - 1];
        argv[n] = NULL;
        cr_assert(eq(int, run_capture(argv, &r), 0));
        return r;
}

Test(daemon_fetch, fmuctl_results_and_run_fetch_write_the_rows_here_as_csv_and_mat)
{
        char *path = NULL, *file, *data, session[32];
        uint64_t s = run_msd(&path, 0);
        struct run_result r;

        file = daemon_slurp(path, NULL);
        snprintf(session, sizeof(session), "%llu", (unsigned long long)s);
        /* fmuctl results: standard output, a file, a .mat. */
        r = fmuctl((const char *[]){ "results", session, NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(eq(str, r.out, file));
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "results", session, "--out", "got.csv", NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        data = daemon_slurp("got.csv", NULL);
        cr_assert(eq(str, data, file));
        free(data);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "results", session, "--out", "got.mat", NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        assert_mat_is_csv("got.mat", path);
        run_result_fini(&r);
        /* An unknown session: said, and nothing written to standard output. */
        r = fmuctl((const char *[]){ "results", "999", NULL });
        cr_assert(eq(int, r.exit_code, 1), "%s", r.err);
        cr_assert(eq(str, r.out, ""));
        cr_assert(strstr(r.err, "no session 999") != NULL, "%s", r.err);
        run_result_fini(&r);
        /* ... and a file --out names is left as it was, not truncated, nor created. */
        r = fmuctl((const char *[]){ "results", "999", "--out", "got.csv", NULL });
        cr_assert(eq(int, r.exit_code, 1), "%s", r.err);
        run_result_fini(&r);
        data = daemon_slurp("got.csv", NULL);
        cr_assert(eq(str, data, file));
        free(data);
        r = fmuctl((const char *[]){ "results", "999", "--out", "none.mat", NULL });
        cr_assert(eq(int, r.exit_code, 1), "%s", r.err);
        cr_assert(eq(int, access("none.mat", F_OK), -1));
        run_result_fini(&r);
        /* fmuctl run --fetch: the same rows as the daemon's own file, here. */
        r = fmuctl((const char *[]){ "run", MSD, "--fetch", "--out", "fetched.csv", "--quiet",
                                     NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        data = daemon_slurp("fetched.csv", NULL);
        cr_assert(eq(str, data, file));
        free(data);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "run", MSD, "--out", "fetched.mat", NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(strstr(r.out, "results       fetched.mat: 101 rows, 5 columns") != NULL, "%s",
                  r.out);
        assert_mat_is_csv("fetched.mat", path);
        run_result_fini(&r);
        /* --local converts its own rows with the same writer. */
        r = fmuctl((const char *[]){ "run", MSD, "--local", "--out", "local.mat", "--quiet", NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        assert_mat_is_csv("local.mat", path);
        run_result_fini(&r);
        free(file);
        free(path);
}

Test(daemon_fetch, a_load_that_names_a_mat_file_gets_it_from_the_daemon)
{
        struct proto_load a = { .path = daemon_str(MSD) };
        char *mat = daemon_path(&d, "daemon.mat"), *csv, desc[128];
        struct proto_session_status st;
        struct proto_target t = { 0 };
        size_t len, off = 0;
        unsigned char *ms;
        struct mat m;
        FILE *f;

        a.out = daemon_str(mat);
        t.session = daemon_load(c, &a, NULL);
        cr_assert(eq(int, fmud_start(c, &t, NULL), 0), "%s", fmud_errmsg(c));
        daemon_wait_state(c, t.session, PROTO_STATE_FINISHED, &st);
        cr_assert(daemon_str_eq(st.out, mat));
        cr_assert(daemon_str_eq(st.results, "complete"));
        /* results serves the rows as CSV, the .mat holds the same, bit for bit. */
        csv = fetch_all(t.session, PROTO_RESULTS_CHUNK, &len);
        cr_assert(eq(int, strncmp(csv, "time,mass1.x1,", 14), 0), "%s", csv);
        f = fopen("fetched.csv", "w");
        cr_assert(f != NULL);
        cr_assert(eq(sz, fwrite(csv, 1, len, f), len));
        cr_assert(eq(int, fclose(f), 0));
        assert_mat_is_csv(mat, "fetched.csv");
        /* The daemon knows each column's description and unit: "description [unit]". */
        ms = (unsigned char *)daemon_slurp(mat, &len);
        for (int i = 0; i < 3; i++)
                m = next_mat(ms, len, &off);
        cr_assert(eq(str, m.name, "description"));
        text_col(&m, 1, desc, sizeof(desc));
        cr_assert(eq(str, desc, "Position of mass 1 [m]"));
        free(ms);
        free(csv);
        free(mat);
}

/* csv_path's CSV without the columns named in drop (NULL-terminated), written to out_path. */
static void csv_without(const char *csv_path, const char *const *drop, const char *out_path)
{
        char *csv = daemon_slurp(csv_path, NULL), *line, *save = NULL, *tok, *fsave;
        bool keep[64];
        FILE *f = fopen(out_path, "w");

        cr_assert(f != NULL);
        for (int row = 0; (line = strtok_r(row ? NULL : csv, "\n", &save)); row++) {
                fsave = NULL;
                tok = strtok_r(line, ",", &fsave);
                for (int j = 0; tok; j++, tok = strtok_r(NULL, ",", &fsave)) {
                        cr_assert(lt(int, j, 64));
                        if (!row) {
                                keep[j] = true;
                                for (size_t k = 0; drop[k]; k++)
                                        keep[j] = keep[j] && strcmp(tok, drop[k]);
                        }
                        if (keep[j])
                                fprintf(f, "%s%s", j ? "," : "", tok);
                }
                fputc('\n', f);
        }
        cr_assert(eq(int, fclose(f), 0));
        free(csv);
}

/*
 * A .mat file holds numbers only: String and Binary columns are left out,
 * with a warning, every way a .mat is written, and the run succeeds. The
 * columns are told by their variables' types, not by their values: the
 * Binary here is hex that reads as a number.
 */
Test(daemon_fetch, a_mat_file_leaves_string_and_binary_columns_out_every_way)
{
        static const char *const text[] = { "String_output", "Binary_output", NULL };
        /* fmuctl names the file; the daemon's load reply is about the file it names. */
        static const char *const warning = "2 String or Binary columns left out";
        static const char *const names = "a .csv file has them): String_output, Binary_output\n";
        const char *fmu = FMUD_TEST_FMU_DIR "/Feedthrough.fmu";
        /* A String holding a newline and quotes: a quoted field over two lines of the CSV. */
        struct proto_assign start[] = { { .name = daemon_str("Binary_input"),
                                          .value = daemon_str("1234") },
                                        { .name = daemon_str("String_input"),
                                          .value = daemon_str("one\ntwo \"2\"") } };
        /* No matrix: its element names hold commas, which the CSV helpers here do not split. */
        const struct proto_str record[] = { daemon_str("Float64_output"), daemon_str("String_output"),
                                            daemon_str("Int32_output"), daemon_str("Binary_output"),
                                            daemon_str("Float64_vector_output") };
        struct proto_load a = { .path = daemon_str(fmu), .has_stop = true, .stop = 10,
                                .has_step = true, .step = 1, .n_starts = 2, .starts = start,
                                .n_record = 5, .record = record };
#define RECORD  "--record", "Float64_output", "--record", "String_output", "--record", \
                "Int32_output", "--record", "Binary_output", "--record", "Float64_vector_output"
        static const char *const ways[][2] = { { "--local", "local.mat" },
                                               { "--private", "fetched.mat" } };
        char *mat = daemon_path(&d, "daemon.mat"), *csv, session[32];
        struct proto_session_status st;
        struct proto_target t = { 0 };
        struct run_result r;

        r = fmuctl((const char *[]){ "run", fmu, "--local", "--quiet", "--stop-time", "10",
                                     "--step", "1", "--start", "Binary_input=1234", "--out",
                                     "all.csv", RECORD, NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        run_result_fini(&r);
        csv = daemon_slurp("all.csv", NULL);
        cr_assert(strstr(csv, "time,Float64_output,String_output,Int32_output,Binary_output,"
                             "Float64_vector_output[1],") == csv, "%s", csv);
        cr_assert(strstr(csv, ",hello,-32,1234,") != NULL, "%s", csv);
        free(csv);
        csv_without("all.csv", text, "numbers.csv");
        for (size_t i = 0; i < 2; i++) {
                r = fmuctl((const char *[]){ "run", fmu, ways[i][0], "--stop-time", "10", "--step",
                                             "1", "--start", "Binary_input=1234", "--start",
                                             "String_input=one\ntwo \"2\"", "--out", ways[i][1],
                                             RECORD, NULL });
                cr_assert(eq(int, r.exit_code, 0), "%s: %s", ways[i][0], r.err);
                cr_assert(strstr(r.err, warning) != NULL, "%s: %s", ways[i][0], r.err);
                cr_assert(strstr(r.err, names) != NULL, "%s: %s", ways[i][0], r.err);
                /* The summary counts the file's columns after time: 2 scalars, 4 elements. */
                cr_assert(strstr(r.out, ": 11 rows, 6 columns") != NULL, "%s: %s", ways[i][0],
                          r.out);
                assert_mat_is_csv(ways[i][1], "numbers.csv");
                run_result_fini(&r);
        }
        /* A load naming a .mat: the daemon writes it, and the load's reply warns. */
        a.out = daemon_str(mat);
        t.session = daemon_load(c, &a, NULL);
        cr_assert(fmud_load_warnings(c) && strstr(fmud_load_warnings(c), warning) &&
                  strstr(fmud_load_warnings(c), "String_output, Binary_output"),
                  "%s", fmud_load_warnings(c) ? fmud_load_warnings(c) : "(none)");
        cr_assert(eq(int, fmud_start(c, &t, NULL), 0), "%s", fmud_errmsg(c));
        daemon_wait_state(c, t.session, PROTO_STATE_FINISHED, &st);
        cr_assert(daemon_str_eq(st.results, "complete"));
        assert_mat_is_csv(mat, "numbers.csv");
        /* fmuctl results of that session into a .mat of its own. */
        snprintf(session, sizeof(session), "%llu", (unsigned long long)t.session);
        r = fmuctl((const char *[]){ "results", session, "--out", "results.mat", NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(strstr(r.err, warning) != NULL && strstr(r.err, names) != NULL, "%s", r.err);
        assert_mat_is_csv("results.mat", "numbers.csv");
        run_result_fini(&r);
        free(mat);
#undef RECORD
}

/*
 * A load with more warnings than its reply lists (32 lines): the session's
 * own warning, what its .mat leaves out, comes first, and the last line
 * counts the warnings not listed, never dropping them without a word.
 * 40 components of an FMU that cannot be rolled back, under
 * rollbackOnFault, give 40 warnings of the scenario; one Feedthrough gives
 * the .mat its String and Binary columns.
 */
Test(daemon_fetch, a_load_with_more_warnings_than_listed_keeps_its_own_and_counts_the_rest)
{
        enum { N = 40 };
        static const char head[] =
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<ssd:SystemStructureDescription version=\"1.0\" name=\"many\"\n"
                "    xmlns:ssd=\"http://ssp-standard.org/SSP1/SystemStructureDescription\"\n"
                "    xmlns:ssc=\"http://ssp-standard.org/SSP1/SystemStructureCommon\"\n"
                "    xmlns:fmud=\"urn:fmud:ssp:settings\">\n"
                "  <ssd:System name=\"many\"><ssd:Elements>\n"
                "    <ssd:Component name=\"ft\" source=\"resources/Feedthrough.fmu\"/>\n";
        static const char tail[] =
                "  </ssd:Elements></ssd:System>\n"
                "  <ssd:DefaultExperiment startTime=\"0\" stopTime=\"1\"/>\n"
                "  <ssd:Annotations><ssc:Annotation type=\"org.fmud.settings\">\n"
                "    <fmud:Settings version=\"1\" stepSize=\"0.1\" rollbackOnFault=\"true\"/>\n"
                "  </ssc:Annotation></ssd:Annotations>\n"
                "</ssd:SystemStructureDescription>\n";
        static const char *const fmus[] = { "FixedStep.fmu", "Feedthrough.fmu" };
        char ssd[sizeof(head) + sizeof(tail) + N * 96], name[64], *path, *mat, *data;
        struct proto_load a = { 0 };
        const char *w, *line;
        size_t len, n = strlen(head), lines = 0;

        for (size_t i = 0; i < 2; i++) {
                snprintf(name, sizeof(name), "%s/%s", FMUD_TEST_FMU_DIR, fmus[i]);
                data = daemon_slurp(name, &len);
                snprintf(name, sizeof(name), "many/resources/%s", fmus[i]);
                cr_assert(eq(int, tmpdir_write(d.dir, name, data, len), 0));
                free(data);
        }
        memcpy(ssd, head, n);
        for (int i = 0; i < N; i++)
                n += (size_t)snprintf(ssd + n, sizeof(ssd) - n, "    <ssd:Component name=\"fs%d\" "
                                      "source=\"resources/FixedStep.fmu\"/>\n", i);
        memcpy(ssd + n, tail, sizeof(tail));
        n += sizeof(tail) - 1;
        cr_assert(eq(int, tmpdir_write(d.dir, "many/SystemStructure.ssd", ssd, n), 0));
        path = daemon_path(&d, "many/SystemStructure.ssd");
        mat = daemon_path(&d, "many.mat");
        a.path = daemon_str(path);
        a.out = daemon_str(mat);
        (void) daemon_load(c, &a, NULL);
        w = fmud_load_warnings(c);
        cr_assert(w != NULL);
        /* Its own first, then the scenario's; 32 lines, the last the count of the rest. */
        cr_assert(strstr(w, "2 String or Binary columns left out") == w, "%s", w);
        cr_assert(strstr(w, "ft.String_output, ft.Binary_output") != NULL, "%s", w);
        cr_assert(strstr(w, "cannot be rolled back") != NULL, "%s", w);
        for (line = w; *line; line++) {
                lines++;
                line = strchr(line, '\n');
                if (!line)
                        break;
        }
        cr_assert(eq(sz, lines, 32), "%s", w);
        /* 41 warnings, 31 of them listed. */
        cr_assert(strstr(w, "\n10 more warnings not listed") != NULL, "%s", w);
        free(path);
        free(mat);
}

/*
 * A run that fails still gets a .mat of the rows it recorded up to the
 * failure, as its .csv has them, and the failure's exit code; a .mat of
 * text columns only is refused before the run, the file left as it was.
 */
Test(daemon_fetch, a_failed_run_keeps_its_rows_in_the_mat_and_all_text_is_refused)
{
        const char *mb = FMUD_TEST_FMU_DIR "/Misbehave.fmu", *ft = FMUD_TEST_FMU_DIR "/Feedthrough.fmu";
        static const char *const ways[][2] = { { "--local", "local.mat" },
                                               { "--private", "private.mat" } };
        const struct proto_str text[] = { daemon_str("String_output"), daemon_str("Binary_output") };
        struct proto_load a = { .path = daemon_str(ft), .n_record = 2, .record = text };
        char *mat = daemon_path(&d, "text.mat");
        struct run_result r;
        char *csv;

        r = fmuctl((const char *[]){ "run", mb, "--local", "-q", "--start", "fault=1", "--start",
                                     "at=0.5", "--out", "failed.csv", NULL });
        cr_assert(eq(int, r.exit_code, 4), "%s", r.err);
        run_result_fini(&r);
        csv = daemon_slurp("failed.csv", NULL);
        cr_assert(strstr(csv, "\n0.5,") != NULL, "%s", csv);
        free(csv);
        for (size_t i = 0; i < 2; i++) {
                r = fmuctl((const char *[]){ "run", mb, ways[i][0], "-q", "--start", "fault=1",
                                             "--start", "at=0.5", "--out", ways[i][1], NULL });
                cr_assert(eq(int, r.exit_code, 4), "%s: %s", ways[i][0], r.err);
                assert_mat_is_csv(ways[i][1], "failed.csv");
                run_result_fini(&r);
        }
        /* Refused before the run, and the file there is left as it was. */
        for (size_t i = 0; i < 2; i++) {
                char *before = daemon_slurp(ways[i][1], NULL), *after;

                r = fmuctl((const char *[]){ "run", ft, ways[i][0], "-q", "--record", "String_output",
                                             "--record", "Binary_output", "--out", ways[i][1],
                                             NULL });
                cr_assert(eq(int, r.exit_code, 1), "%s: %s", ways[i][0], r.err);
                cr_assert(strstr(r.err, MAT4_ALL_TEXT) != NULL, "%s: %s", ways[i][0], r.err);
                run_result_fini(&r);
                after = daemon_slurp(ways[i][1], NULL);
                cr_assert(eq(str, after, before), "%s", ways[i][0]);
                free(before);
                free(after);
        }
        a.out = daemon_str(mat);
        cr_assert(fmud_load(c, &a, NULL, NULL) < 0);
        cr_assert(strstr(fmud_errmsg(c), MAT4_ALL_TEXT) != NULL, "%s", fmud_errmsg(c));
        cr_assert(eq(int, access(mat, F_OK), -1), "no file");
        free(mat);
}

/* A file over fmuctl's RLIMIT_FSIZE is a write error it says, exit 3, not its death by SIGXFSZ. */
Test(daemon_fetch, results_over_the_file_size_limit_are_a_write_error)
{
        char *path = NULL, session[32];
        uint64_t s = run_msd(&path, 0);
        struct run_result r;

        snprintf(session, sizeof(session), "%llu", (unsigned long long)s);
        {
                char *argv[] = { "/usr/bin/prlimit", "--fsize=2000", (char *)FMUD_FMUCTL, "results",
                                 session, "--out", "big.csv", NULL };

                cr_assert(eq(int, run_capture(argv, &r), 0));
        }
        cr_assert(eq(int, r.exit_code, 3), "%s", r.err);
        cr_assert(strstr(r.err, "File too large") != NULL, "%s", r.err);
        run_result_fini(&r);
        /* Cut back to its last complete row, as a run's own file is: no half row for a reader. */
        {
                size_t len = 0;
                char *got = daemon_slurp("big.csv", &len);

                cr_assert(len > 0 && len <= 2000, "%zu bytes", len);
                cr_assert(eq(chr, got[len - 1], '\n'), "ends with '%s'",
                          got + (len > 20 ? len - 20 : 0));
                free(got);
        }
        free(path);
}

/*
 * Ctrl-C stops a --local run at its next point and keeps the rows so far
 * in the .mat, exit 130, as through a daemon.
 */
Test(daemon_fetch, ctrl_c_keeps_the_rows_of_a_local_run_in_its_mat)
{
        const char *ft = FMUD_TEST_FMU_DIR "/Feedthrough.fmu";
        char *mat = daemon_path(&d, "c.mat"), *tmp = NULL;
        int status, i;
        size_t len, off = 0;
        unsigned char *ms;
        struct mat m;
        pid_t pid = fork();

        cr_assert(pid >= 0);
        if (pid == 0) {
                int null = open("/dev/null", O_WRONLY);

                dup2(null, 1);
                dup2(null, 2);
                signal(SIGINT, SIG_DFL);
                execl(FMUD_FMUCTL, FMUD_FMUCTL, "run", ft, "--local", "-q", "--warp", "1",
                      "--stop-time", "60", "--record", "Float64_output", "--out", mat, (char *)NULL);
                _exit(127);
        }
        /*
         * The .mat is written as the recording starts, after fmuctl took
         * the signal, to a file of its own beside it (c.mat.PID-0), renamed
         * over it at the end.
         */
        cr_assert(asprintf(&tmp, "%s.%d-0", mat, (int)pid) > 0);
        for (i = 0; i < 20000 && access(tmp, F_OK) < 0; i++)
                usleep(1000);
        if (access(tmp, F_OK) < 0)
                kill(pid, SIGKILL);
        cr_assert(eq(int, access(tmp, F_OK), 0), "the run did not start");
        usleep(200000);         /* a few points: the test holds whatever came */
        cr_assert(eq(int, kill(pid, SIGINT), 0));
        cr_assert(eq(int, waitpid(pid, &status, 0), pid));
        cr_assert(eq(int, WIFEXITED(status) ? WEXITSTATUS(status) : -1, 130), "status %#x", status);
        cr_assert(access(tmp, F_OK) < 0, "'%s' was left", tmp);
        free(tmp);
        ms = (unsigned char *)daemon_slurp(mat, &len);
        do
                m = next_mat(ms, len, &off);
        while (strcmp(m.name, "data_2"));
        cr_assert(eq(i32, m.rows, 2), "time and Float64_output");
        cr_assert(ge(i32, m.cols, 1), "the rows before the stop");
        cr_assert(lt(i32, m.cols, 601), "stopped before the end");
        free(ms);
        free(mat);
}

Test(daemon_fetch, a_loaded_session_serves_its_header_and_first_row_before_it_starts)
{
        struct proto_load a = { .path = daemon_str(MSD) };
        struct proto_target t = { 0 };
        struct fmud_results res = { 0 };
        char buf[4096];

        t.session = daemon_load(c, &a, NULL);
        /* The load writes them at once; the recorder's flush is waited for, not timed. */
        for (int i = 0; i < 20000 && res.len == 0; i++) {
                cr_assert(eq(int, fmud_results_read(c, &t, 0, buf, sizeof(buf) - 1, &res), 0),
                          "%s", fmud_errmsg(c));
                if (!res.len)
                        usleep(1000);
        }
        cr_assert(gt(sz, res.len, 0));
        cr_assert(res.done == false);
        buf[res.len] = '\0';
        cr_assert(eq(str, buf, "time,mass1.x1,mass1.v1,mass2.x2,mass2.v2,mass2.F\n0,0,0,0.5,0,5\n"));
}
