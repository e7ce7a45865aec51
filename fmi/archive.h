/*
 * archive: an FMU archive (zip) opened as hostile input.
 *
 * DESIGN: fmu_archive_open() hashes the file and checks every entry before
 * anything is written anywhere; fmu_archive_unpack() then writes into a
 * cache directory keyed by the archive's SHA-256, through a temporary name
 * and a rename, so concurrent loads of one FMU are safe and a second load
 * costs only the hash. Decompression never trusts the sizes the zip
 * declares: it stops at the declared size and at the limits.
 */
#ifndef FMUD_FMI_ARCHIVE_H
#define FMUD_FMI_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cancel.h"
#include "diag.h"

/* Limits on one archive. fmu_limits_default() gives sane defaults. */
struct fmu_limits {
        size_t max_entries;             /* default 100,000 */
        uint64_t max_total_size;        /* sum of uncompressed sizes; default 4 GiB */
        uint64_t max_entry_size;        /* one entry; default 2 GiB */
        uint32_t max_ratio;             /* uncompressed/compressed, per entry and in total; default 200 */
        uint64_t ratio_min_size;        /* entries (and archives) smaller skip the ratio check; default 256 MiB */
        size_t max_path_len;            /* one entry name; default 1024 */
        size_t max_depth;               /* components of one entry name; default 64 */
        size_t max_dirs;                /* distinct directories the names imply; default 100,000 */
        size_t max_md_size;             /* modelDescription.xml; default MD_MAX_BYTES */
        bool container;                 /* not an FMU (an .ssp): no modelDescription.xml required */
};

void fmu_limits_default(struct fmu_limits *lim);

struct fmu_archive;

/*
 * Open 'path', hash it, and check every entry against the rules: no absolute
 * path, no '..' component, nothing that escapes after normalisation, only
 * regular files and directories (no symlinks or devices), no duplicate
 * names (after normalisation) unless the copies hold the same bytes, no
 * encryption, entry count, sizes, compression ratio, name depth and the
 * number of directories the names imply within lim, and a
 * modelDescription.xml present (unless lim->container).
 * Every broken rule is appended to diags, naming the entry. Duplicates
 * with the same bytes are a warning (DIAG_WARNING) and one copy is kept.
 *
 * Returns 0 on success with *ret_ar set (free with fmu_archive_close());
 * -EINVAL when any entry breaks a rule (nothing is returned); -errno when the
 * file cannot be read; -EBADMSG when it is not a zip archive; -ESTALE when
 * it changed while being hashed. lim NULL means the defaults; diags may be
 * NULL. A diagnostic about an entry starts its message with the name, quoted,
 * non-printable bytes escaped as \xNN.
 */
int fmu_archive_open(const char *path, const struct fmu_limits *lim, struct diag_list *diags,
                     struct fmu_archive **ret_ar);

/*
 * The same on a file the caller opened (fd is borrowed: the archive keeps
 * a duplicate, so the caller may close fd at once); label names it in
 * diagnostics. Returns as fmu_archive_open().
 */
int fmu_archive_open_fd(int fd, const char *label, const struct fmu_limits *lim,
                        struct diag_list *diags, struct fmu_archive **ret_ar);

/*
 * The same checks on an archive held in memory (an FMU inside an SSP archive,
 * the fuzzer). buf is borrowed until fmu_archive_close(); name labels the
 * diagnostics. Returns as fmu_archive_open().
 */
int fmu_archive_open_buffer(const void *buf, size_t len, const char *name,
                            const struct fmu_limits *lim, struct diag_list *diags,
                            struct fmu_archive **ret_ar);

void fmu_archive_close(struct fmu_archive *ar);

/* Lower-case hex SHA-256 of the whole archive file (64 chars). Borrowed. */
const char *fmu_archive_sha256(const struct fmu_archive *ar);

/* Whether a regular-file entry of that (normalised) name exists. */
bool fmu_archive_has(const struct fmu_archive *ar, const char *name);

/*
 * Read one entry into a new buffer, NUL-terminated (not counted in *ret_len).
 * Refuses entries over max bytes with -EFBIG; -ENOENT when absent; -EBADMSG
 * when the data does not decompress to its declared size.
 * Caller frees *ret_buf with free().
 */
int fmu_archive_read(const struct fmu_archive *ar, const char *name, size_t max,
                     void **ret_buf, size_t *ret_len);

/*
 * Decompress one regular-file entry into fd (written from its current
 * offset), never more than its declared size. Returns 0; -ENOENT;
 * -EISDIR; -EBADMSG when the data does not decompress to its declared
 * size (part of it may have been written); -errno of write(2).
 */
int fmu_archive_copy(const struct fmu_archive *ar, const char *name, int fd);

/*
 * Unpack into "<cache_dir>/<sha256>/" unless that directory already exists
 * (then nothing is written). cache_dir is created if missing. The files are
 * made read-only. Returns 0 with *ret_dir set to the directory's path
 * (caller frees), or -errno; -EBADMSG when an entry's data disagrees with
 * its header, with a diagnostic naming it; -ESTALE when the file changed
 * since fmu_archive_open(); -ECANCELED when cancel (may be NULL), polled
 * between entries and every few MiB, answered true (nothing is left
 * behind).
 */
int fmu_archive_unpack(const struct fmu_archive *ar, const char *cache_dir, struct diag_list *diags,
                       const struct fmi_cancel *cancel, char **ret_dir);
/*
 * The same, and *ret_hold an fd that holds the directory in use until it
 * is closed: a changed copy is then not removed under its user (an FMU
 * that writes into it, fmi/cache_check.h).
 */
int fmu_archive_unpack_held(const struct fmu_archive *ar, const char *cache_dir,
                            struct diag_list *diags, const struct fmi_cancel *cancel,
                            char **ret_dir, int *ret_hold);

#endif
