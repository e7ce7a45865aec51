/*
 * archive_fixture: zip archives built at test time, for the archive tests.
 *
 * Two writers: libzip's (well-formed archives, deflate, attributes,
 * encryption) and a raw one for what libzip refuses to write (duplicate,
 * absolute or NUL-holding names, lying sizes, odd flags and methods,
 * overlapping entries, ZIP64 records).
 */
#ifndef FMUD_TESTS_ARCHIVE_FIXTURE_H
#define FMUD_TESTS_ARCHIVE_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fmi/diag.h"

#define FX_MD "<?xml version=\"1.0\"?><fmiModelDescription fmiVersion=\"3.0\"/>\n"

/* One entry for fx_write_raw(). Zero fields take the defaults noted. */
struct fx_entry {
        const char *name;
        size_t name_len;        /* 0: strlen(name) */
        const void *data;       /* what is stored: the bytes, or raw deflate for method 8 */
        size_t len;
        const void *plain;      /* uncompressed bytes for size and CRC; NULL: data */
        size_t plain_len;
        uint16_t method;
        uint16_t flags;         /* general purpose bits */
        bool lie;               /* declare lie_size instead of the real size */
        uint64_t lie_size;
        uint32_t mode;          /* unix mode; 0: 0100644, or 040755 for names ending in '/' */
        bool quotes_next;       /* this entry's data is the next entry's local header and data */
        bool descriptor;        /* bit 3, as libarchive writes it: local CRC and compressed size 0,
                                   uncompressed size set, data descriptor after the data */
        const char *local_name; /* a different name in the local header */
        uint32_t local_size;    /* a different uncompressed size in the local header; 0: none */
};

/* CRC-32 (ISO 3309), as zip uses it. */
uint32_t fx_crc32(const void *p, size_t len);

/* Write a stored/deflate archive with these entries; zip64 adds ZIP64 records. Returns 0 or -errno. */
int fx_write_raw(const char *path, const struct fx_entry *v, size_t n, bool zip64);

/* One entry for fx_write_libzip(). */
struct fx_lzentry {
        const char *name;       /* ending in '/': a directory */
        const void *data;
        size_t len;
        int32_t method;         /* ZIP_CM_STORE or ZIP_CM_DEFLATE; 0 is store */
        uint32_t mode;          /* unix mode to record; 0: libzip's default */
        uint16_t encryption;    /* ZIP_EM_*; 0: none */
};

int fx_write_libzip(const char *path, const struct fx_lzentry *v, size_t n);

/* Raw deflate of data (through libzip), malloc'ed into *ret, for fx_entry.data. */
int fx_deflate(const void *data, size_t len, void **ret, size_t *ret_len);

/* dir/name as a new string (test-only: aborts on OOM). */
char *fx_path(const char *dir, const char *name);

/* Whether one formatted diagnostic contains both substrings. */
bool fx_has_diag(const struct diag_list *l, const char *a, const char *b);

/* Print every diagnostic to stderr (for failing tests). */
void fx_dump_diags(const struct diag_list *l);

/* Number of entries in a directory, -1 when it cannot be read, 0 when missing. */
int fx_count_dir(const char *dir);

#endif
