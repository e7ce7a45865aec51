/*
 * fuzz_snapblob: arbitrary bytes as a snapshot file (daemon/snap_blob.h),
 * as snapshot-import reads an upload. Whatever decodes is encoded again
 * and must be the same bytes (the format has one spelling of each
 * snapshot), and every length it answers lies within the input.
 */
#include <stdlib.h>
#include <string.h>

#include "daemon/snap_blob.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int within(const void *p, size_t n, const uint8_t *data, size_t size)
{
        const uint8_t *q = p;

        return n == 0 || (q >= data && n <= size && q - data <= (ptrdiff_t)(size - n));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct snap_blob b;
        char msg[256];
        uint8_t *again;
        size_t len;

        if (snap_blob_decode(data, size, &b, msg, sizeof(msg)) < 0)
                return 0;
        for (uint32_t i = 0; i < b.n; i++)
                if (!within(b.insts[i].name, b.insts[i].name_len, data, size) ||
                    !within(b.insts[i].token, b.insts[i].token_len, data, size) ||
                    !within(b.insts[i].state, b.insts[i].state_len, data, size) ||
                    b.insts[i].state_len > SNAP_BLOB_MAX_STATE)
                        abort();
        if (!within(b.master, b.master_len, data, size))
                abort();
        if (snap_blob_encode(&b, &again, &len) < 0)
                abort();
        if (len != size || memcmp(again, data, size))
                abort();
        free(again);
        snap_blob_fini(&b);
        return 0;
}
