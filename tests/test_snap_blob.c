/*
 * snap_blob: the snapshot file format on its own (daemon/snap_blob.h): a
 * snapshot written and read back field for field; each way a file can be
 * wrong refused with its own message; and the fuzz target's regression
 * inputs (tests/fuzz/snapblob/) replayed through its harness, the valid
 * ones decoding and the others refused as their names say.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/snap_blob.h"
#include "fmi/sha256.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct snap_blob_inst two[] = {
        { .name = "mass1", .name_len = 5, .token = "{tok-1}", .token_len = 7,
          .sha256 = "0000000000000000000000000000000000000000000000000000000000000000",
          .state = (const uint8_t *)"state-one", .state_len = 9 },
        { .name = "mass2", .name_len = 5, .token = "{tok-2}", .token_len = 7,
          .sha256 = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
          .state = (const uint8_t *)"", .state_len = 0 },
};

static uint8_t *encode_two(size_t *len)
{
        struct snap_blob b = { .flags = SNAP_BLOB_PAUSED, .time = 0.5, .n = 2,
                               .insts = (struct snap_blob_inst *)two,
                               .master = (const uint8_t *)"mmmm", .master_len = 4 };
        uint8_t *p;

        cr_assert(eq(int, snap_blob_encode(&b, &p, len), 0));
        return p;
}

static void reseal(uint8_t *p, size_t len)
{
        char sum[SHA256_HEX_LEN + 1];

        cr_assert(eq(int, sha256_buf(p, len - SNAP_BLOB_SUM_LEN, sum), 0));
        memcpy(p + len - SNAP_BLOB_SUM_LEN, sum, SNAP_BLOB_SUM_LEN);
}

static void refused(const uint8_t *p, size_t len, const char *want)
{
        struct snap_blob b;
        char msg[256] = "";

        cr_assert(eq(int, snap_blob_decode(p, len, &b, msg, sizeof(msg)), -EBADMSG), "%s", want);
        cr_assert(eq(str, msg, (char *)want));
        cr_assert(eq(u32, b.n, 0));
        cr_assert(b.insts == NULL);
}

Test(snap_blob, a_snapshot_reads_back_field_for_field)
{
        struct snap_blob b;
        char msg[256];
        size_t len;
        uint8_t *p = encode_two(&len);

        cr_assert(eq(int, memcmp(p, "FMUDSNAP", 8), 0));
        cr_assert(eq(int, snap_blob_decode(p, len, &b, msg, sizeof(msg)), 0), "%s", msg);
        cr_assert(eq(u32, b.flags, SNAP_BLOB_PAUSED));
        cr_assert(eq(dbl, b.time, 0.5));
        cr_assert(eq(u32, b.n, 2));
        for (uint32_t i = 0; i < 2; i++) {
                cr_assert(eq(sz, b.insts[i].name_len, two[i].name_len));
                cr_assert(eq(int, memcmp(b.insts[i].name, two[i].name, 5), 0));
                cr_assert(eq(int, memcmp(b.insts[i].token, two[i].token, 7), 0));
                cr_assert(eq(str, b.insts[i].sha256, (char *)two[i].sha256));
                cr_assert(eq(sz, b.insts[i].state_len, two[i].state_len));
        }
        cr_assert(eq(int, memcmp(b.insts[0].state, "state-one", 9), 0));
        cr_assert(eq(sz, b.master_len, 4));
        cr_assert(eq(int, memcmp(b.master, "mmmm", 4), 0));
        snap_blob_fini(&b);
        free(p);
}

Test(snap_blob, every_kind_of_wrong_file_is_refused_with_its_own_message)
{
        size_t len, at;
        uint8_t *p = encode_two(&len), *q = malloc(len + 8);

        cr_assert(q != NULL);
        refused(p, 4, "snapshot: not a snapshot file (no 'FMUDSNAP' at its start)");
        refused(p, 40, "snapshot: truncated: 40 bytes, a snapshot has at least 96");
        refused(p, len - 1, "snapshot: its checksum does not match its bytes (the file is "
                "damaged or truncated)");
        memcpy(q, p, len);
        q[8] = 9;
        refused(q, len, "snapshot: version 9, this daemon reads version 1");
        memcpy(q, p, len);
        q[12] = 2;
        reseal(q, len);
        refused(q, len, "snapshot: unknown flags 0x2");
        /* n = 1000 instances in a file of a few hundred bytes. */
        memcpy(q, p, len);
        q[24] = 0xe8;
        q[25] = 0x03;
        reseal(q, len);
        refused(q, len, "snapshot: 1000 instances cannot fit in its 285 bytes");
        /* The first name's length past the end. */
        memcpy(q, p, len);
        q[28] = 0xff;
        q[29] = 0x0f;
        reseal(q, len);
        refused(q, len, "snapshot: instance 0's name of 4095 bytes at byte 32 passes the end "
                "(221 bytes)");
        memcpy(q, p, len);
        q[29] = 0x20;
        reseal(q, len);
        refused(q, len, "snapshot: instance 0's name of 8197 bytes, over the limit of 4096");
        /* The first SHA-256 not hex. */
        at = 28 + 4 + 5 + 4 + 7;
        memcpy(q, p, len);
        q[at] = 'G';
        reseal(q, len);
        refused(q, len, "snapshot: instance 0's SHA-256 is not 64 lowercase hex digits");
        /* Bytes after the master's state, sealed. */
        memcpy(q, p, len - SNAP_BLOB_SUM_LEN);
        memcpy(q + len - SNAP_BLOB_SUM_LEN, "tail", 4);
        reseal(q, len + 4);
        refused(q, len + 4, "snapshot: 4 bytes after the master's state");
        free(q);
        free(p);
}

Test(snap_blob, lengths_over_their_bounds_are_not_written)
{
        struct snap_blob_inst big = two[0];
        struct snap_blob b = { .n = 1, .insts = &big };
        uint8_t *p = NULL;
        size_t len;

        big.state_len = SNAP_BLOB_MAX_STATE + 1;
        cr_assert(eq(int, snap_blob_encode(&b, &p, &len), -EINVAL));
        cr_assert(p == NULL);
}

static uint8_t *slurp(const char *path, size_t *ret_len)
{
        FILE *f = fopen(path, "rb");
        uint8_t *p = malloc(1 << 16);
        size_t n;

        cr_assert(f != NULL && p != NULL, "%s", path);
        n = fread(p, 1, 1 << 16, f);
        fclose(f);
        *ret_len = n;
        return p;
}

Test(snap_blob, the_fuzz_inputs_replay_through_the_harness)
{
        glob_t g;
        size_t valid = 0;

        cr_assert(eq(int, glob(FMUD_TEST_SRC_DIR "/fuzz/snapblob/*", 0, NULL, &g), 0));
        cr_assert(g.gl_pathc >= 8);
        for (size_t i = 0; i < g.gl_pathc; i++) {
                struct snap_blob b;
                char msg[256];
                size_t len;
                uint8_t *p = slurp(g.gl_pathv[i], &len);
                bool want = strstr(g.gl_pathv[i], "/seed-valid-") != NULL;
                int r = snap_blob_decode(p, len, &b, msg, sizeof(msg));

                cr_assert(eq(int, r, want ? 0 : -EBADMSG), "%s: %s", g.gl_pathv[i], msg);
                snap_blob_fini(&b);
                valid += want;
                cr_assert(eq(int, LLVMFuzzerTestOneInput(p, len), 0));
                free(p);
        }
        cr_assert(eq(sz, valid, 2));
        globfree(&g);
}
