/*
 * daemon_snapio: snapshots exported to a file and imported back, end to
 * end with a real daemon and real workers: a snapshot taken after a
 * warm-up, exported, imported into a new session of the same scenario and
 * restored runs on to the same rows, bit for bit, as the original run;
 * hostile files (truncated, damaged, another format or version, another
 * FMU, lengths over their bounds, another instance count, a master state
 * of another shape) are each refused with a clear message, the session
 * unchanged and still runnable; an FMU that cannot serialize its state is
 * refused on export, by name.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/snap_blob.h"
#include "daemon_fixture.h"
#include "fmi/sha256.h"

#define MSD FMUD_EXAMPLES "/msd.ssp"

static struct fmud_daemon d;
static struct fmud *c;

static void setup(void)
{
        daemon_start(&d, NULL);
        c = daemon_connect(&d);
}

static void teardown(void)
{
        fmud_close(c);
        c = NULL;
        daemon_stop(&d);
}

TestSuite(daemon_snapio, .init = setup, .fini = teardown);

static uint64_t load(const char *path)
{
        return daemon_load(c, &(struct proto_load){ .path = daemon_str(path) }, NULL);
}

static void step(uint64_t s, uint64_t n)
{
        struct proto_target t = { .session = s };

        cr_assert(eq(int, fmud_step(c, &t, n, NULL), 0), "%s", fmud_errmsg(c));
}

static uint64_t snapshot(uint64_t s)
{
        struct proto_target t = { .session = s };
        uint64_t id = 0;

        cr_assert(eq(int, fmud_snapshot(c, &t, &id, NULL), 0), "%s", fmud_errmsg(c));
        return id;
}

/* The whole results file of a session that has ended; caller frees. */
static char *fetch_all(uint64_t s, size_t *ret_len)
{
        struct proto_target t = { .session = s };
        struct fmud_results res = { 0 };
        char *all = NULL, *buf = malloc(PROTO_RESULTS_CHUNK);
        size_t len = 0;

        cr_assert(buf != NULL);
        /* Bounded by count: the daemon confirms the last rows a flush after the stop. */
        for (int i = 0; i < 100000 && !res.done; i++) {
                cr_assert(eq(int, fmud_results_read(c, &t, len, buf, PROTO_RESULTS_CHUNK, &res),
                             0), "%s", fmud_errmsg(c));
                all = realloc(all, len + res.len + 1);
                cr_assert(all != NULL);
                memcpy(all + len, buf, res.len);
                len += res.len;
                if (!res.done && !res.len)
                        nanosleep(&(struct timespec){ 0, 10 * 1000000L }, NULL);
        }
        cr_assert(res.done, "the results of session %llu never ended", (unsigned long long)s);
        free(buf);
        all[len] = '\0';
        *ret_len = len;
        return all;
}

/* The start of the last n lines of buf. */
static const char *last_lines(const char *buf, size_t len, size_t n)
{
        size_t i = len;

        cr_assert(len > 0 && buf[len - 1] == '\n');
        for (i = len - 1; i > 0; i--)
                if (buf[i - 1] == '\n' && --n == 0)
                        return buf + i;
        cr_assert(false, "fewer lines than asked for");
        return NULL;
}

static void stop(uint64_t s)
{
        struct proto_target t = { .session = s };

        cr_assert(eq(int, fmud_stop(c, &t, NULL), 0), "%s", fmud_errmsg(c));
        daemon_wait_state(c, s, PROTO_STATE_STOPPED, NULL);
}

static uint8_t *read_file(const char *path, size_t *ret_len)
{
        FILE *f = fopen(path, "rb");
        uint8_t *p;
        long n;

        cr_assert(f != NULL, "%s", path);
        cr_assert(fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0);
        p = malloc((size_t)n);
        cr_assert(p != NULL && fread(p, 1, (size_t)n, f) == (size_t)n);
        fclose(f);
        *ret_len = (size_t)n;
        return p;
}

static void write_file(const char *path, const void *p, size_t len)
{
        FILE *f = fopen(path, "wb");

        cr_assert(f != NULL && fwrite(p, 1, len, f) == len && fclose(f) == 0, "%s", path);
}

/*
 * A new session of msd with the snapshot file at path imported (at time)
 * and restored, run 200 points on and stopped: its results file.
 */
static char *restored_rows(const char *path, double time, size_t *ret_len)
{
        struct proto_target t = { 0 };
        struct proto_snapshots_result l;
        uint64_t imported;
        double at = -1;

        t.session = load(MSD);
        cr_assert(eq(int, fmud_snapshot_import(c, &t, path, &imported, &at), 0), "%s",
                  fmud_errmsg(c));
        cr_assert(eq(dbl, at, time));
        cr_assert(eq(int, fmud_snapshots(c, &t, &l), 0), "%s", fmud_errmsg(c));
        cr_assert(eq(u32, l.n, 1));
        cr_assert(eq(u64, l.snapshots[0].snapshot, imported));
        cr_assert(eq(dbl, l.snapshots[0].time, time));
        cr_assert(eq(int, fmud_restore(c, &t, imported, NULL), 0), "%s", fmud_errmsg(c));
        step(t.session, 200);
        stop(t.session);
        return fetch_all(t.session, ret_len);
}

/* The last 20 rows of a and b are the same bytes; and b, restored, has fewer rows than a. */
static void same_tail(const char *a, size_t a_len, const char *b, size_t b_len)
{
        const char *ta = last_lines(a, a_len, 20), *tb = last_lines(b, b_len, 20);
        size_t n = (size_t)(a + a_len - ta);

        cr_assert(eq(sz, (size_t)(b + b_len - tb), n), "rows differ:\n%s\n---\n%s", ta, tb);
        cr_assert(eq(int, memcmp(ta, tb, n), 0), "rows differ:\n%s\n---\n%s", ta, tb);
        /* The restored session had not got there by itself: it skipped the warm-up's rows. */
        cr_assert(b_len < a_len);
}

Test(daemon_snapio, an_imported_snapshot_restores_to_the_same_rows_bit_for_bit)
{
        char dir[] = "/tmp/fmud-snapio-XXXXXX", path[64], *rows1, *rows2, *rows3;
        struct proto_target t1 = { 0 };
        size_t len1, len2, len3;
        double time = -1;
        uint64_t id;

        cr_assert(mkdtemp(dir) != NULL);
        snprintf(path, sizeof(path), "%s/warm.fmudsnap", dir);
        /* msd records every 10th point: 200 points after the snapshot are 20 rows. */
        t1.session = load(MSD);
        step(t1.session, 100);
        cr_assert(eq(int, fmud_snapshot(c, &t1, &id, &time), 0), "%s", fmud_errmsg(c));
        cr_assert(time > 0);
        cr_assert(eq(int, fmud_snapshot_export(c, &t1, id, path), 0), "%s", fmud_errmsg(c));
        step(t1.session, 200);
        stop(t1.session);
        rows1 = fetch_all(t1.session, &len1);

        /* Another session of the same scenario, in this daemon. */
        rows2 = restored_rows(path, time, &len2);
        same_tail(rows1, len1, rows2, len2);

        /* And in another daemon, the first one gone. */
        fmud_close(c);
        daemon_stop(&d);
        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        rows3 = restored_rows(path, time, &len3);
        same_tail(rows1, len1, rows3, len3);

        cr_assert(eq(int, unlink(path), 0));
        cr_assert(eq(int, rmdir(dir), 0));
        free(rows1);
        free(rows2);
        free(rows3);
}

/* The file's SHA-256 trailer made right again after an edit. */
static void reseal(uint8_t *p, size_t len)
{
        char sum[SHA256_HEX_LEN + 1];

        cr_assert(eq(int, sha256_buf(p, len - SNAP_BLOB_SUM_LEN, sum), 0));
        memcpy(p + len - SNAP_BLOB_SUM_LEN, sum, SNAP_BLOB_SUM_LEN);
}

/* good decoded, changed by edit, encoded again into *ret. */
static uint8_t *reencode(const uint8_t *good, size_t len, void (*edit)(struct snap_blob *),
                         size_t *ret_len)
{
        struct snap_blob b;
        char msg[256];
        uint8_t *p;

        cr_assert(eq(int, snap_blob_decode(good, len, &b, msg, sizeof(msg)), 0), "%s", msg);
        edit(&b);
        cr_assert(eq(int, snap_blob_encode(&b, &p, ret_len), 0));
        snap_blob_fini(&b);
        return p;
}

static void other_token(struct snap_blob *b)
{
        b->insts[0].token = "{00000000-0000-0000-0000-000000000000}";
        b->insts[0].token_len = strlen(b->insts[0].token);
}

static void other_sha(struct snap_blob *b)
{
        memset(b->insts[1].sha256, 'a', 64);
}

static void one_instance(struct snap_blob *b)
{
        b->n = 1;
}

static void short_master(struct snap_blob *b)
{
        b->master_len -= 8;
}

/* Import p and expect the refusal code with a message holding want. */
static void refused(uint64_t s, const char *path, const void *p, size_t len, enum proto_err code,
                    const char *want)
{
        struct proto_target t = { .session = s };
        uint64_t id = 0;
        int r;

        write_file(path, p, len);
        r = fmud_snapshot_import(c, &t, path, &id, NULL);
        daemon_assert_refused(c, r, code, want);
        cr_assert(strstr(fmud_errmsg(c), want) != NULL, "expected '%s' in: %s", want,
                  fmud_errmsg(c));
}

Test(daemon_snapio, hostile_files_are_refused_and_the_session_goes_on)
{
        char *good_path = daemon_path(&d, "good.fmudsnap"), *bad = daemon_path(&d, "bad.fmudsnap");
        struct proto_target t = { 0 };
        struct proto_snapshots_result l;
        struct proto_session_status st;
        uint8_t *good, *p;
        size_t len, n;
        uint64_t id, imported;
        double at;

        t.session = load(MSD);
        step(t.session, 5);
        id = snapshot(t.session);
        cr_assert(eq(int, fmud_snapshot_export(c, &t, id, good_path), 0), "%s", fmud_errmsg(c));
        good = read_file(good_path, &len);
        step(t.session, 3);
        cr_assert(eq(int, fmud_status(c, t.session, &st), 0), "%s", fmud_errmsg(c));
        at = st.time;

        refused(t.session, bad, good, len / 2, PROTO_E_INVALID,
                "its checksum does not match its bytes (the file is damaged or truncated)");
        p = malloc(len);
        cr_assert(p != NULL);
        memcpy(p, good, len);
        p[len / 2] ^= 0x40;
        refused(t.session, bad, p, len, PROTO_E_INVALID, "its checksum does not match");
        memcpy(p, good, len);
        p[0] = 'X';
        refused(t.session, bad, p, len, PROTO_E_INVALID, "not a snapshot file (no 'FMUDSNAP'");
        memcpy(p, good, len);
        p[8] = 2;
        refused(t.session, bad, p, len, PROTO_E_INVALID,
                "snapshot: version 2, this daemon reads version 1");
        /* An instance's FMU state length over the bound, the checksum made right. */
        memcpy(p, good, len);
        {
                struct snap_blob b;
                char msg[256];
                size_t at_len;

                cr_assert(eq(int, snap_blob_decode(good, len, &b, msg, sizeof(msg)), 0), "%s",
                          msg);
                at_len = (size_t)(b.insts[0].state - good) - 4;
                snap_blob_fini(&b);
                p[at_len] = 0xff;
                p[at_len + 1] = 0xff;
                p[at_len + 2] = 0xff;
                p[at_len + 3] = 0x7f;
        }
        reseal(p, len);
        refused(t.session, bad, p, len, PROTO_E_INVALID,
                "instance 0's FMU state of 2147483647 bytes, over the limit of 1048576");
        free(p);

        p = reencode(good, len, other_token, &n);
        refused(t.session, bad, p, n, PROTO_E_INVALID,
                "was saved from another FMU (its instantiationToken differs)");
        free(p);
        p = reencode(good, len, other_sha, &n);
        refused(t.session, bad, p, n, PROTO_E_INVALID, "was saved from another FMU archive "
                "(SHA-256 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
        free(p);
        p = reencode(good, len, one_instance, &n);
        refused(t.session, bad, p, n, PROTO_E_INVALID,
                "the snapshot holds 1 instances, the session 2");
        free(p);
        p = reencode(good, len, short_master, &n);
        refused(t.session, bad, p, n, PROTO_E_INVALID, "snapshot-import: master state: ");
        free(p);

        /* Nothing changed: one snapshot, the same time, and the session steps on. */
        cr_assert(eq(int, fmud_snapshots(c, &t, &l), 0), "%s", fmud_errmsg(c));
        cr_assert(eq(u32, l.n, 1));
        cr_assert(eq(u64, l.snapshots[0].snapshot, id));
        cr_assert(eq(int, fmud_status(c, t.session, &st), 0), "%s", fmud_errmsg(c));
        cr_assert(eq(dbl, st.time, at));
        cr_assert(eq(str, (char *)proto_state_name(st.state), "paused"));
        step(t.session, 1);
        /* And the file refused in all those shapes imports as it is. */
        cr_assert(eq(int, fmud_snapshot_import(c, &t, good_path, &imported, NULL), 0), "%s",
                  fmud_errmsg(c));
        cr_assert(eq(u64, imported, id + 1));
        free(good);
        free(good_path);
        free(bad);
}

Test(daemon_snapio, an_fmu_that_cannot_serialize_its_state_is_refused_by_name)
{
        char *path = daemon_path(&d, "never.fmudsnap");
        struct proto_target t = { 0 };
        uint64_t id;
        int r;

        t.session = load(FMUD_TEST_FMU_DIR "/NoSerialize.fmu");
        step(t.session, 2);
        id = snapshot(t.session);
        r = fmud_snapshot_export(c, &t, id, path);
        daemon_assert_refused(c, r, PROTO_E_UNSUPPORTED, "export");
        cr_assert(strstr(fmud_errmsg(c), "snapshot-export: instance 'NoSerialize' cannot "
                         "serialize its state (its FMU does not declare "
                         "canSerializeFMUState)") != NULL, "%s", fmud_errmsg(c));
        cr_assert(access(path, F_OK) != 0, "no file is left behind");
        /* The snapshot is still there and restores. */
        cr_assert(eq(int, fmud_restore(c, &t, id, NULL), 0), "%s", fmud_errmsg(c));
        step(t.session, 1);
        free(path);
}

/*
 * A snapshot past the stop time of the session it is imported into (one
 * loaded with a longer run) is refused, naming both times: restored, its
 * session had no point left to reach and ran on the spot for ever. One at
 * the stop time is taken, and a step from it finishes the session.
 */
Test(daemon_snapio, a_snapshot_past_the_sessions_stop_time_is_refused)
{
        char *at_end = daemon_path(&d, "end.fmudsnap"), *late = daemon_path(&d, "late.fmudsnap");
        struct proto_target t = { 0 }, u = { 0 };
        struct proto_session_status st;
        uint64_t id, imported = 0;
        int r;

        t.session = daemon_load(c, &(struct proto_load){
                .path = daemon_str(FMUD_TEST_FMU_DIR "/Feedthrough.fmu"), .has_stop = true,
                .stop = 1000, .has_step = true, .step = 0.1 }, NULL);
        step(t.session, 10);
        id = snapshot(t.session);
        cr_assert(eq(int, fmud_snapshot_export(c, &t, id, at_end), 0), "%s", fmud_errmsg(c));
        step(t.session, 5);
        id = snapshot(t.session);
        cr_assert(eq(int, fmud_snapshot_export(c, &t, id, late), 0), "%s", fmud_errmsg(c));
        u.session = daemon_load(c, &(struct proto_load){
                .path = daemon_str(FMUD_TEST_FMU_DIR "/Feedthrough.fmu"), .has_stop = true,
                .stop = 1, .has_step = true, .step = 0.1 }, NULL);
        r = fmud_snapshot_import(c, &u, late, &imported, NULL);
        daemon_assert_refused(c, r, PROTO_E_INVALID, "a snapshot past the stop time");
        cr_assert(strstr(fmud_errmsg(c), "at t = 1.5 (point 15), past this session's stop time 1 "
                         "(point 10)") != NULL, "%s", fmud_errmsg(c));
        /* At the stop time: restored, the next step finishes at once. */
        cr_assert(eq(int, fmud_snapshot_import(c, &u, at_end, &imported, NULL), 0), "%s",
                  fmud_errmsg(c));
        cr_assert(eq(int, fmud_restore(c, &u, imported, NULL), 0), "%s", fmud_errmsg(c));
        step(u.session, 1);
        cr_assert(eq(int, fmud_status(c, u.session, &st), 0), "%s", fmud_errmsg(c));
        cr_assert(eq(int, st.state, PROTO_STATE_FINISHED));
        cr_assert(eq(dbl, st.time, 1));
        free(at_end);
        free(late);
}

Test(daemon_snapio, a_snapshot_of_other_array_sizes_is_refused_saying_so)
{
        char *path = daemon_path(&d, "n4.fmudsnap");
        static const struct proto_assign n0 = { { "n", 1 }, { "0", 1 } };
        struct proto_target t = { 0 }, u = { 0 };
        uint64_t id, imported = 0;
        int r;

        /* Every output recorded, Float64_vector_output with n = 4 in one and 0 in the other. */
        t.session = daemon_load(c, &(struct proto_load){
                .path = daemon_str(FMUD_TEST_FMU_DIR "/Feedthrough.fmu"), .has_stop = true,
                .stop = 10, .has_step = true, .step = 0.1 }, NULL);
        step(t.session, 2);
        id = snapshot(t.session);
        cr_assert(eq(int, fmud_snapshot_export(c, &t, id, path), 0), "%s", fmud_errmsg(c));
        u.session = daemon_load(c, &(struct proto_load){
                .path = daemon_str(FMUD_TEST_FMU_DIR "/Feedthrough.fmu"), .has_stop = true,
                .stop = 10, .has_step = true, .step = 0.1, .n_starts = 1, .starts = &n0 }, NULL);
        step(u.session, 1);
        r = fmud_snapshot_import(c, &u, path, &imported, NULL);
        daemon_assert_refused(c, r, PROTO_E_INVALID, "a snapshot of other array sizes");
        cr_assert(strstr(fmud_errmsg(c), "it was taken with other array sizes (structural "
                         "parameters)") != NULL, "%s", fmud_errmsg(c));
        /* The session goes on. */
        step(u.session, 1);
        free(path);
}
