/*
 * zip_cdir: our own reading of a zip's central directory, next to libzip's.
 *
 * DESIGN: libzip is the decompressor, but it smooths over things an importer
 * must see: it turns NUL bytes in names into spaces and does not report
 * general-purpose flags or where each entry's local data lies. This walker
 * reads only the central directory records (and, on request, one local
 * header) with bounds checks on every field, so archive.c can compare the
 * two readings entry by entry and refuse an archive where they differ.
 */
#ifndef FMUD_FMI_ZIP_CDIR_H
#define FMUD_FMI_ZIP_CDIR_H

#include <stddef.h>
#include <stdint.h>

#include "archive_src.h"

#define CDIR_FLAG_ENCRYPTED             0x0001u
#define CDIR_FLAG_DATA_DESCRIPTOR       0x0008u
#define CDIR_FLAG_STRONG_ENCRYPTION     0x0040u

struct cdir_entry {
        uint16_t flags;         /* general purpose bit flags */
        uint16_t method;        /* compression method */
        uint32_t crc;
        uint64_t comp_size;
        uint64_t size;          /* uncompressed, as declared */
        uint64_t local_offset;  /* of the local header */
        char *name;             /* raw bytes, may contain NULs; NUL-terminated copy */
        size_t name_len;
};

struct cdir {
        struct cdir_entry *v;
        size_t n;
        uint64_t offset;        /* where the central directory starts */
};

/*
 * Read the central directory of s. Returns 0 with *ret filled (free with
 * cdir_fini()); -E2BIG when it declares more than max_entries entries;
 * -EBADMSG when a record is malformed or outside the archive; -ENOMEM;
 * -errno from reading.
 */
int cdir_read(const struct ar_src *s, size_t max_entries, struct cdir *ret);

void cdir_fini(struct cdir *cd);

/*
 * Read e's local header and compare it with e: same name, method,
 * encryption flags, CRC and sizes (a CRC or size of zero is accepted when
 * bit 3 says a data descriptor follows). Returns 0 with *ret_end set to the
 * first byte past the entry's data; -EBADMSG with *reason set when the
 * header is missing, leaves the archive or disagrees; -ENOMEM; -errno.
 */
int cdir_check_local(const struct ar_src *s, const struct cdir_entry *e, uint64_t *ret_end,
                     const char **reason);

#endif
