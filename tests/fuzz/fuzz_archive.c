/*
 * fuzz_archive: arbitrary bytes as an FMU archive. Every input goes through
 * the entry-name rules on its own and through fmu_archive_open_buffer(); an
 * archive that passes is read entry by entry, so decompression against lying
 * headers is exercised too. Small limits keep each run cheap.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fmi/archive.h"
#include "fmi/archive_int.h"
#include "fmi/archive_path.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_all(const struct fmu_archive *ar, const struct fmu_limits *lim)
{
        void *buf;
        size_t len;

        if (fmu_archive_read(ar, AR_MD_ENTRY, lim->max_md_size, &buf, &len) == 0)
                free(buf);
        for (size_t i = 0; i < ar->n; i++) {
                if (ar->v[i].kind != AR_FILE)
                        continue;
                if (fmu_archive_read(ar, ar->v[i].name, lim->max_entry_size, &buf, &len) == 0)
                        free(buf);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct fmu_archive *ar = NULL;
        struct diag_list diags;
        struct fmu_limits lim;
        char *norm = NULL;
        bool is_dir;

        if (arpath_check((const char *)data, size < 4096 ? size : 4096, 256, &is_dir, &norm) == 0)
                free(norm);

        fmu_limits_default(&lim);
        lim.max_entries = 64;
        lim.max_total_size = 1 << 20;
        lim.max_entry_size = 256 << 10;
        lim.max_ratio = 50;
        lim.ratio_min_size = 1024;
        lim.max_path_len = 256;
        lim.max_md_size = 64 << 10;
        diag_list_init(&diags, 16);
        if (fmu_archive_open_buffer(data, size, "fuzz.fmu", &lim, &diags, &ar) == 0) {
                read_all(ar, &lim);
                fmu_archive_close(ar);
        }
        diag_list_fini(&diags);
        return 0;
}
