/*
 * upload: the upload store (upload.h): puts and the least-recently-used
 * eviction (the load directories: upload_dir.c).
 *
 * DESIGN: see upload.h. Every file is opened beneath the store's own
 * descriptor with O_NOFOLLOW; names are built here from hex digits only,
 * except a load's relative names, which upload_name_check() checks.
 */
#include "daemon/upload.h"
#include "daemon/upload_int.h"
#include "fmi/sha256.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PARTIAL_TTL_S   3600            /* a partial untouched this long is dropped */
#define PART_NAME_MAX   (16 + 1 + SHA256_HEX_LEN + 1)

struct upart {
        struct upart *next;
        char *ident;
        char name[PART_NAME_MAX];       /* below partial/ */
        char sha[SHA256_HEX_LEN + 1];
        uint64_t size, have;
        int fd;
        struct sha256_ctx *hash;
        time_t used;                    /* CLOCK_MONOTONIC seconds */
};


static time_t mono_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec;
}

/* A private subdirectory of the store, emptied; its descriptor or -errno. */
static int sub_dir(int dfd, const char *name)
{
        int fd, c;

        if (mkdirat(dfd, name, 0700) < 0 && errno != EEXIST)
                return -errno;
        fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        c = dup(fd);
        if (c >= 0)
                upload_clear_dir(c);
        return fd;
}

int upload_new(const struct upload_opts *o, struct upload **ret, char *msg, size_t size)
{
        struct upload *u = calloc(1, sizeof(*u));
        int r;

        if (!u || !(u->dir = strdup(o->dir))) {
                free(u);
                snprintf(msg, size, "out of memory");
                return -ENOMEM;
        }
        u->dfd = u->pfd = u->lfd = -1;
        u->max_file = o->max_file ? o->max_file : UPLOAD_MAX_FILE_DEFAULT;
        u->quota = o->quota ? o->quota : UPLOAD_QUOTA_DEFAULT;
        u->store_bytes = o->store_bytes ? o->store_bytes : UPLOAD_STORE_DEFAULT;
        pthread_mutex_init(&u->lock, NULL);
        if (mkdir(o->dir, 0700) < 0 && errno != EEXIST) {
                r = -errno;
                goto out_fail;
        }
        u->dfd = open(o->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (u->dfd < 0 || fchmod(u->dfd, 0700) < 0) {
                r = -errno;
                goto out_fail;
        }
        r = u->pfd = sub_dir(u->dfd, "partial");
        if (r >= 0)
                r = u->lfd = sub_dir(u->dfd, "load");
        if (r < 0)
                goto out_fail;
        *ret = u;
        return 0;

out_fail:
        snprintf(msg, size, "upload store '%s': %s", o->dir, strerror(-r));
        upload_free(u);
        return r;
}

static void part_free(struct upart *p)
{
        if (p->fd >= 0)
                close(p->fd);
        sha256_free(p->hash);
        free(p->ident);
        free(p);
}

/* Drop partial p (its file too), unlinked from u->parts. */
static void part_drop(struct upload *u, struct upart *p)
{
        for (struct upart **pp = &u->parts; *pp; pp = &(*pp)->next)
                if (*pp == p) {
                        *pp = p->next;
                        break;
                }
        /* Renamed into the store (finish()): nothing left under partial/. */
        if (p->name[0])
                (void) unlinkat(u->pfd, p->name, 0);
        part_free(p);
}

void upload_free(struct upload *u)
{
        if (!u)
                return;
        while (u->parts)
                part_drop(u, u->parts);
        if (u->pfd >= 0)
                close(u->pfd);
        if (u->lfd >= 0)
                close(u->lfd);
        if (u->dfd >= 0)
                close(u->dfd);
        pthread_mutex_destroy(&u->lock);
        free(u->dir);
        free(u);
}

struct entry {
        char name[SHA256_HEX_LEN + 1];
        uint64_t size;
        struct timespec used;
        bool linked;
};

static int by_age(const void *a, const void *b)
{
        const struct entry *x = a, *y = b;

        if (x->used.tv_sec != y->used.tv_sec)
                return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
        return x->used.tv_nsec < y->used.tv_nsec ? -1 : x->used.tv_nsec > y->used.tv_nsec;
}

/* Remove the least recently used complete uploads past store_bytes, never keep's nor a linked one. */
static void evict(struct upload *u, const char *keep)
{
        struct entry *v = NULL, *nv;
        size_t n = 0, cap = 0;
        uint64_t total = 0;
        struct dirent *e;
        struct stat st;
        int fd = dup(u->dfd);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

        if (!d) {
                if (fd >= 0)
                        close(fd);
                return;
        }
        rewinddir(d);
        while ((e = readdir(d))) {
                if (!upload_hex_name(e->d_name) || fstatat(u->dfd, e->d_name, &st,
                                                    AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISREG(st.st_mode))
                        continue;
                if (n == cap) {
                        cap = cap ? 2 * cap : 64;
                        nv = realloc(v, cap * sizeof(*v));
                        if (!nv)
                                break;
                        v = nv;
                }
                memcpy(v[n].name, e->d_name, SHA256_HEX_LEN + 1);
                v[n].size = (uint64_t)st.st_size;
                v[n].used = st.st_mtim;
                v[n].linked = st.st_nlink > 1 || !strcmp(e->d_name, keep);
                total += v[n].size;
                n++;
        }
        closedir(d);
        if (v)
                qsort(v, n, sizeof(*v), by_age);
        for (size_t i = 0; i < n && total > u->store_bytes; i++) {
                if (v[i].linked)
                        continue;
                if (unlinkat(u->dfd, v[i].name, 0) < 0)
                        continue;
                total -= v[i].size;
        }
        free(v);
}

/* The last byte is in: check the hash, then the partial becomes the complete upload. */
static int finish(struct upload *u, struct upart *p, char *msg, size_t size)
{
        char hex[SHA256_HEX_LEN + 1];

        if (sha256_final(p->hash, hex) < 0) {
                snprintf(msg, size, "put: out of memory");
                part_drop(u, p);
                return PROTO_E_INTERNAL;
        }
        if (strcmp(hex, p->sha)) {
                snprintf(msg, size, "put: the content's SHA-256 is %s, not %s as named: "
                         "upload discarded", hex, p->sha);
                part_drop(u, p);
                return PROTO_E_INVALID;
        }
        /*
         * Read-only, and readable by all below the private store: the
         * client sent these bytes, so a load's messages may quote them
         * (a file others may not read withholds every detail, scenario.c).
         */
        if (fsync(p->fd) < 0 || fchmod(p->fd, 0444) < 0 ||
            renameat(u->pfd, p->name, u->dfd, p->sha) < 0) {
                snprintf(msg, size, "put: cannot keep the upload: %s", strerror(errno));
                part_drop(u, p);
                return PROTO_E_INTERNAL;
        }
        p->name[0] = '\0';
        evict(u, p->sha);
        part_drop(u, p);
        return -1;
}

/* Drop the partials nobody touched for PARTIAL_TTL_S. */
static void expire(struct upload *u, time_t now)
{
        struct upart *p = u->parts, *next;

        for (; p; p = next) {
                next = p->next;
                if (now - p->used > PARTIAL_TTL_S)
                        part_drop(u, p);
        }
}

static struct upart *part_find(struct upload *u, const char *ident, const char *sha)
{
        for (struct upart *p = u->parts; p; p = p->next)
                if (!strcmp(p->sha, sha) && !strcmp(p->ident, ident))
                        return p;
        return NULL;
}

/* Whether a new partial of ident's, of a->size bytes, is within the limits: -1 or a refusal. */
static int part_limits(struct upload *u, const char *ident, const struct proto_put *a, char *msg,
                       size_t size)
{
        unsigned mine = 0, all = 0;
        uint64_t held = 0;
        struct upart *p;

        if (a->size > u->max_file) {
                snprintf(msg, size, "put: %" PRIu64 " bytes is over the limit of %" PRIu64
                         " bytes per file ([upload] max_file_bytes)", a->size, u->max_file);
                return PROTO_E_LIMIT;
        }
        for (p = u->parts; p; p = p->next, all++)
                if (!strcmp(p->ident, ident)) {
                        held += p->size;
                        mine++;
                }
        if (a->size > u->quota || held > u->quota - a->size) {
                snprintf(msg, size, "put: %" PRIu64 " more bytes would take this client's "
                         "uploads in progress to %" PRIu64 " bytes, over its quota of %" PRIu64
                         " bytes ([upload] quota_bytes)", a->size, held + a->size, u->quota);
                return PROTO_E_LIMIT;
        }
        if (all >= UPLOAD_MAX_PARTIALS) {
                snprintf(msg, size, "put: %u uploads in progress (the limit)", all);
                return PROTO_E_LIMIT;
        }
        if (mine >= UPLOAD_MAX_PARTIALS_CLIENT) {
                snprintf(msg, size, "put: %u uploads of this client's in progress (the limit "
                         "per client)", mine);
                return PROTO_E_LIMIT;
        }
        return -1;
}

/* A new partial for (ident, sha) of size bytes (part_limits() passed); -1 or a refusal. */
static int part_new(struct upload *u, const char *ident, const char *sha,
                    const struct proto_put *a, struct upart **ret, char *msg, size_t size)
{
        char idhex[SHA256_HEX_LEN + 1];
        struct upart *p;

        p = calloc(1, sizeof(*p));
        if (p)
                p->fd = -1;
        if (!p || !(p->ident = strdup(ident)) || !(p->hash = sha256_new()) ||
            sha256_buf(ident, strlen(ident), idhex) < 0) {
                if (p)
                        part_free(p);
                snprintf(msg, size, "put: out of memory");
                return PROTO_E_INTERNAL;
        }
        snprintf(p->name, sizeof(p->name), "%.16s-%s", idhex, sha);
        memcpy(p->sha, sha, SHA256_HEX_LEN + 1);
        p->size = a->size;
        (void) unlinkat(u->pfd, p->name, 0);
        p->fd = openat(u->pfd, p->name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (p->fd < 0) {
                snprintf(msg, size, "put: cannot make the partial upload: %s", strerror(errno));
                part_free(p);
                return PROTO_E_INTERNAL;
        }
        p->next = u->parts;
        u->parts = p;
        *ret = p;
        return -1;
}

static int put_locked(struct upload *u, const char *ident, const struct proto_put *a,
                      struct proto_put_result *ret, char *msg, size_t size)
{
        char sha[SHA256_HEX_LEN + 1];
        struct upart *p;
        uint64_t have = 0;
        ssize_t n;
        int code;

        snprintf(sha, sizeof(sha), "%.*s", (int)a->sha256.len, a->sha256.ptr);
        expire(u, mono_s());
        if (upload_complete_size(u, sha, &have) == 0) {
                *ret = (struct proto_put_result){ .offset = have, .have = true };
                return -1;
        }
        p = part_find(u, ident, sha);
        if (p && p->size != a->size) {
                snprintf(msg, size, "put: the upload of %s in progress is of %" PRIu64
                         " bytes, not %" PRIu64, sha, p->size, a->size);
                return PROTO_E_INVALID;
        }
        /*
         * Only data makes a partial (or an empty file, complete at once): a
         * probe of a new upload is answered, nothing kept.
         */
        if (!p && a->offset == 0) {
                code = part_limits(u, ident, a, msg, size);
                if (code < 0 && (a->len || a->size == 0))
                        code = part_new(u, ident, sha, a, &p, msg, size);
                if (code >= 0)
                        return code;
        }
        have = p ? p->have : 0;
        /* No data: a probe, answered with what the daemon has wherever it points. */
        if (a->len && a->offset != have) {
                snprintf(msg, size, "put: a chunk at offset %" PRIu64 ", but the upload of %s "
                         "has %" PRIu64 " bytes: send from %" PRIu64, a->offset, sha, have, have);
                return PROTO_E_INVALID;
        }
        if (!p) {
                *ret = (struct proto_put_result){ .offset = 0, .have = false };
                return -1;
        }
        p->used = mono_s();
        if (a->len) {
                n = pwrite(p->fd, a->data, a->len, (off_t)p->have);
                if (n != (ssize_t)a->len || sha256_update(p->hash, a->data, a->len) < 0) {
                        snprintf(msg, size, "put: cannot write the partial upload: %s",
                                 n < 0 ? strerror(errno) : "short write");
                        part_drop(u, p);
                        return PROTO_E_INTERNAL;
                }
                p->have += a->len;
                /* Writeback starts now: the last chunk's fsync does not wait for the file. */
                (void) sync_file_range(p->fd, (off_t)(p->have - a->len), (off_t)a->len,
                                       SYNC_FILE_RANGE_WRITE);
        }
        if (p->have == p->size) {
                code = finish(u, p, msg, size);
                if (code >= 0)
                        return code;
                *ret = (struct proto_put_result){ .offset = a->size, .have = true };
                return -1;
        }
        *ret = (struct proto_put_result){ .offset = p->have, .have = false };
        return -1;
}

int upload_put(struct upload *u, const char *ident, const struct proto_put *a,
               struct proto_put_result *ret, char *msg, size_t size)
{
        int code;

        pthread_mutex_lock(&u->lock);
        code = put_locked(u, ident ? ident : "", a, ret, msg, size);
        pthread_mutex_unlock(&u->lock);
        return code;
}
