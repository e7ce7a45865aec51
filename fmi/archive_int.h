/*
 * archive_int: what archive.c, archive_check.c and cache.c share about one
 * open archive. Internal to fmi/ (the fuzzer also reads the entry table, to
 * decompress every entry).
 */
#ifndef FMUD_FMI_ARCHIVE_INT_H
#define FMUD_FMI_ARCHIVE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <zip.h>

#include "archive.h"
#include "archive_src.h"
#include "sha256.h"
#include "zip_cdir.h"

#define AR_MD_ENTRY "modelDescription.xml"

enum ar_kind {
        AR_FILE,
        AR_DIR,
};

struct ar_entry {
        char *name;             /* normal form, no trailing '/' */
        zip_uint64_t index;     /* in libzip */
        uint64_t size;          /* declared uncompressed size, within the limits */
        uint32_t crc;           /* declared CRC-32 */
        enum ar_kind kind;
        bool twin;              /* a duplicate of the previous entry with the same data: dropped */
};

/* One open archive. Used by one thread at a time (libzip's zip_t is not shared). */
struct fmu_archive {
        struct ar_src src;      /* libzip's source points here: the struct never moves */
        zip_t *zip;
        struct fmu_limits lim;
        char sha256[SHA256_HEX_LEN + 1];
        char *label;            /* the path (or the caller's name), for diagnostics */
        struct stat st;         /* of src.fd when opened, to notice a rewritten file */
        struct ar_entry *v;     /* entries with acceptable names, sorted by strcmp() */
        size_t n;
        size_t twins;           /* duplicate entries with identical data, dropped from v */
};

/* Where one operation's diagnostics go; errors are counted even without a list. */
struct ar_report {
        struct diag_list *diags;
        const char *file;
        size_t errors;
        const struct fmi_cancel *cancel;        /* polled while unpacking; may be NULL */
};

/*
 * Add an error about the entry named by raw (len bytes), whose message
 * starts with the name, quoted and escaped (arpath_escape()); raw NULL for
 * the archive as a whole. The file is rep->file.
 */
__attribute__((format(printf, 4, 5)))
void ar_error(struct ar_report *rep, const char *raw, size_t len, const char *fmt, ...);

/* The same as a warning: it does not count in rep->errors. */
__attribute__((format(printf, 4, 5)))
void ar_warn(struct ar_report *rep, const char *raw, size_t len, const char *fmt, ...);

/*
 * Whether two file entries of one name hold the same bytes: same declared
 * size and CRC, and the same SHA-256 of their decompressed data (a CRC can
 * be forged, a SHA-256 cannot). Returns 1, 0 (different, or either cannot
 * be decompressed), or -ENOMEM. archive_twin.c.
 */
int ar_same_data(const struct fmu_archive *ar, const struct ar_entry *a, const struct ar_entry *b);

/*
 * Check every entry of ar (opened by libzip) against cd (our own reading)
 * and ar->lim, reporting each broken rule; fill ar->v with the entries whose
 * names are acceptable. Returns 0 (look at rep->errors) or -ENOMEM.
 */
int ar_check(struct fmu_archive *ar, const struct cdir *cd, struct ar_report *rep);

/* The entry with this normal-form name, or NULL. */
const struct ar_entry *ar_find(const struct fmu_archive *ar, const char *name);

/* Takes len bytes of an entry's data; returns 0 or -errno to stop. */
typedef int ar_sink_fn(void *ctx, const void *buf, size_t len);

/*
 * Decompress e into sink, in chunks, never more than its declared size.
 * Returns 0; -EBADMSG when the data is not exactly the declared size or
 * fails its CRC (*reason then says which, if reason is not NULL); the
 * sink's error; -ENOMEM; -EIO.
 */
/* A sink that writes everything to the descriptor *(int *)ctx. */
int ar_fd_sink(void *ctx, const void *buf, size_t len);

int ar_stream(const struct fmu_archive *ar, const struct ar_entry *e, ar_sink_fn *sink,
              void *ctx, const char **reason);

/*
 * 0 when the archive file still looks as it did when opened (same inode,
 * size, mtime and ctime), else -ESTALE with a diagnostic.
 */
int ar_unchanged(const struct fmu_archive *ar, struct ar_report *rep);

#endif
