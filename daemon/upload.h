/*
 * upload: the daemon's upload store, where a client puts the files of a
 * load it cannot name by a path the daemon could open (PROTOCOL.md, put).
 *
 * DESIGN: one private directory (0700) below the cache directory:
 *
 *   <dir>/<sha256>            a complete upload, its SHA-256 checked, 0444
 *   <dir>/partial/<id>-<sha256>  an upload in progress, one per (client
 *                             identity, content); <id>: 16 hex digits of
 *                             the SHA-256 of the identity
 *   <dir>/load/<name>         a load by content's private directory: the
 *                             uploads it reads, hard links to the store's
 *
 * A chunk is taken only at the current end of its partial file, and hashed
 * as it is written, so the last chunk verifies the whole without reading
 * it again. Partials live in memory too (what they hold, their hash): they
 * do not outlive the daemon (its start removes what an earlier one left),
 * and one untouched for an hour is dropped. The store keeps at most
 * store_bytes of complete uploads: past that, the least recently used
 * (mtime, set on every put or load that uses it) are removed, but never
 * one a load directory still links (st_nlink > 1), nor the newest.
 *
 * Threads: every function takes the store's lock; the control thread puts,
 * session threads link.
 */
#ifndef FMUD_DAEMON_UPLOAD_H
#define FMUD_DAEMON_UPLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

#define UPLOAD_MAX_FILE_DEFAULT         (1ull << 30)    /* [upload] max_file_bytes */
#define UPLOAD_QUOTA_DEFAULT            (4ull << 30)    /* [upload] quota_bytes */
#define UPLOAD_STORE_DEFAULT            (8ull << 30)    /* [upload] store_bytes */
#define UPLOAD_MAX_PARTIALS             64              /* uploads in progress, every client */
#define UPLOAD_MAX_PARTIALS_CLIENT      8               /* uploads in progress, one client */
#define UPLOAD_MAX_FILES                256u            /* names in a load's files */
#define UPLOAD_NAME_MAX                 255u            /* bytes of one such name */
#define UPLOAD_NAME_PARTS               8u              /* '/'-separated parts of one */

struct upload_opts {
        const char *dir;                /* the store; made (0700) when missing */
        uint64_t max_file;              /* bytes of one file; 0: the default */
        uint64_t quota;                 /* bytes of one client's uploads in progress; 0: default */
        uint64_t store_bytes;           /* complete uploads kept; 0: the default */
};

struct upload;

/* Open (and clean) the store. 0, or -errno with msg saying what. */
int upload_new(const struct upload_opts *o, struct upload **ret, char *msg, size_t size);
void upload_free(struct upload *u);

/*
 * One put from client ident ("uid 1000", "key <Z85>"; "" unknown): -1 with
 * *ret filled, or the refusal's enum proto_err with msg.
 */
int upload_put(struct upload *u, const char *ident, const struct proto_put *p,
               struct proto_put_result *ret, char *msg, size_t size);

/*
 * A new private load directory below the store: *ret_path malloc'ed,
 * *ret_fd its descriptor (the caller closes it). 0 or -errno.
 */
int upload_dir_new(struct upload *u, char **ret_path, int *ret_fd);
/*
 * Hard-link complete upload sha to name (a relative path, its directories
 * made as needed) in the directory dfd of upload_dir_new(); marks it used.
 * what names the upload in the message when the store has none ("content").
 * -1, or the refusal's enum proto_err with msg.
 */
int upload_link(struct upload *u, int dfd, const char *sha, const char *name, const char *what,
                char *msg, size_t size);
/* Remove a directory of upload_dir_new() and everything in it. NULL: nothing. */
void upload_dir_remove(struct upload *u, const char *dir);

/* What upload_name_check() found of a name. */
enum upload_name {
        UPLOAD_NAME_OK,
        UPLOAD_NAME_LONG,               /* over UPLOAD_NAME_MAX bytes */
        UPLOAD_NAME_DEEP,               /* over UPLOAD_NAME_PARTS parts */
        UPLOAD_NAME_NOT_PLAIN,          /* a '/' at its start or end, a "", "." or ".." part */
};

/*
 * Whether name is a plain relative path within UPLOAD_NAME_MAX bytes and
 * UPLOAD_NAME_PARTS parts, checked in that order; *ret_parts (may be NULL):
 * its '/'-separated parts.
 */
enum upload_name upload_name_check(const char *name, unsigned *ret_parts);

#endif
