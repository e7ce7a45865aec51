/*
 * archive_src: the bytes of one archive, from an open file or from memory,
 * read at an offset; and a read-only libzip source over them.
 *
 * DESIGN: the archive is opened once and every reader (the hash, libzip, our
 * own central-directory walker) reads the same open file, never the path
 * again, so they all see one file even if the name is replaced meanwhile.
 */
#ifndef FMUD_FMI_ARCHIVE_SRC_H
#define FMUD_FMI_ARCHIVE_SRC_H

#include <stddef.h>
#include <stdint.h>

#include <zip.h>

struct ar_src {
        int fd;                         /* -1 when the bytes are in memory */
        const unsigned char *mem;       /* borrowed */
        uint64_t size;
};

/*
 * Read exactly len bytes at off. Returns 0; -EBADMSG when [off, off + len)
 * is not inside the archive; -errno from pread() (-EIO on a short read of a
 * file that shrank).
 */
int ar_src_pread(const struct ar_src *s, void *buf, size_t len, uint64_t off);

/*
 * A seekable, read-only libzip source over s (borrowed: s must outlive the
 * source). Returns NULL with err set when out of memory. zip_open_from_source()
 * takes it over on success; on failure the caller frees it with
 * zip_source_free().
 */
zip_source_t *ar_src_zip_source(const struct ar_src *s, zip_error_t *err);

#endif
