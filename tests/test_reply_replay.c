/*
 * reply_replay: fuzz_reply's inputs (tests/fuzz/reply/) through its
 * harness (tests/fuzz/fuzz_reply.c) in the test suite: the instance API
 * reading what a worker wrote, with no worker behind it. Each input runs
 * to its end without a crash (or, under the asan preset, a sanitizer
 * report) and leaves no descriptor open; the inputs named seed-valid-*
 * are well-formed replies, and every call they answer must succeed, so
 * that the harness is known to reach the decoders and not only the
 * checks in front of them.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_instance_drv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern unsigned fuzz_reply_calls, fuzz_reply_calls_ok;
extern uint64_t fuzz_reply_timeout_ns;

Test(reply_replay, fuzz_inputs_run_cleanly_and_valid_ones_succeed, .timeout = 120)
{
        unsigned valid = 0;
        glob_t g;

        /* Every input here answers its calls: no deadline should decide anything. */
        fuzz_reply_timeout_ns = 5000000000ull;
        cr_assert(glob(FMUD_TEST_SRC_DIR "/fuzz/reply/*", 0, NULL, &g) == 0);
        for (size_t i = 0; i < g.gl_pathc; i++) {
                static uint8_t buf[1 << 16];
                const char *path = g.gl_pathv[i];
                int fds = drv_count_fds();
                FILE *f = fopen(path, "rb");
                size_t n;

                cr_assert(f != NULL, "%s", path);
                n = fread(buf, 1, sizeof(buf), f);
                fclose(f);
                LLVMFuzzerTestOneInput(buf, n);
                cr_assert(eq(int, drv_count_fds(), fds), "%s left a descriptor open", path);
                if (strstr(path, "/seed-valid-")) {
                        valid++;
                        cr_assert(fuzz_reply_calls > 0, "%s", path);
                        cr_assert(eq(u32, fuzz_reply_calls_ok, fuzz_reply_calls), "%s", path);
                }
        }
        cr_assert(valid >= 9, "%u valid inputs", valid);
        globfree(&g);
}
