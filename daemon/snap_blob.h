/*
 * snap_blob: a snapshot as one self-describing file, for fmuctl snapshot
 * export and import (PROTOCOL.md "snapshot-export", "snapshot-import").
 *
 * DESIGN: little-endian, in this order:
 *
 *   "FMUDSNAP"                 8 bytes of magic
 *   version                    u32, SNAP_BLOB_VERSION
 *   flags                      u32: SNAP_BLOB_PAUSED (taken while paused,
 *                              else while loaded); other bits are refused
 *   time                       f64, the simulated time it was taken at
 *   n                          u32, instances (at most SNAP_BLOB_MAX_INSTANCES)
 *   n times:                   name (u32 length, bytes), the FMU's
 *                              instantiationToken (u32 length, bytes), the
 *                              FMU archive's SHA-256 (64 lowercase hex
 *                              digits), its serialized FMU state (u32 length
 *                              at most SNAP_BLOB_MAX_STATE, bytes: the
 *                              worker's format, FMI 3.0 section 2.2.7.4)
 *   master                     u32 length (at most SNAP_BLOB_MAX_MASTER),
 *                              bytes: master_saved_encode()'s
 *   checksum                   64 lowercase hex digits: the SHA-256 of
 *                              every byte before it
 *
 * The decoder checks the magic, the version and the checksum first, then
 * every length against its bound and the bytes left, and that nothing
 * follows: what it answers points into the bytes it was given, and it
 * allocates one array of n entries. Whether the blob fits a session
 * (names, tokens, SHA-256s, the master state's shape) is the caller's to
 * check (host_snap_io.c).
 *
 * Threads: any; no state.
 */
#ifndef FMUD_DAEMON_SNAP_BLOB_H
#define FMUD_DAEMON_SNAP_BLOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SNAP_BLOB_MAGIC         "FMUDSNAP"
#define SNAP_BLOB_VERSION       1u
#define SNAP_BLOB_PAUSED        (1u << 0)
#define SNAP_BLOB_MAX_INSTANCES 65536u
#define SNAP_BLOB_MAX_NAME      4096u           /* bytes of a name or a token */
#define SNAP_BLOB_MAX_STATE     (1u << 20)      /* a serialized FMU state, as an fmi call's */
#define SNAP_BLOB_MAX_MASTER    (64u << 20)     /* the master's state */
#define SNAP_BLOB_SUM_LEN       64u

struct snap_blob_inst {
        const char *name;               /* not NUL-terminated: name_len bytes */
        size_t name_len;
        const char *token;
        size_t token_len;
        char sha256[65];
        const uint8_t *state;
        size_t state_len;
};

struct snap_blob {
        uint32_t flags;
        double time;
        uint32_t n;
        struct snap_blob_inst *insts;   /* decode: allocated (snap_blob_fini()) */
        const uint8_t *master;
        size_t master_len;
};

/* The bytes a blob of b takes at most: the bound a reader checks a file's size against. */
size_t snap_blob_max_size(uint32_t n);
/* b as bytes: *ret (malloc'ed), *ret_len. 0, -EINVAL (a length over its bound) or -ENOMEM. */
int snap_blob_encode(const struct snap_blob *b, uint8_t **ret, size_t *ret_len);
/* len bytes at p: 0 and *ret, -EBADMSG with msg saying what is wrong, or -ENOMEM. */
int snap_blob_decode(const uint8_t *p, size_t len, struct snap_blob *ret, char *msg, size_t size);
void snap_blob_fini(struct snap_blob *b);

#endif
