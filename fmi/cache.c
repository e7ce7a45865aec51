/*
 * cache: the content-addressed FMU cache. One directory per archive hash,
 * built under a temporary name and renamed into place.
 */
#include "cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache_check.h"
#include "cache_tree.h"

/* Like mkdir -p: every missing component of path, with mode. */
static int mkdir_p(const char *path, mode_t mode)
{
        char *p = strdup(path), *s, c;
        struct stat st;
        int r = 0;

        if (!p)
                return -ENOMEM;
        for (s = p + 1; r == 0; s++) {
                if (*s != '/' && *s != '\0')
                        continue;
                c = *s;
                *s = '\0';
                if (mkdir(p, mode) < 0 && errno != EEXIST)
                        r = -errno;
                *s = c;
                if (c == '\0')
                        break;
        }
        if (r == 0 && stat(p, &st) < 0)
                r = -errno;
        else if (r == 0 && !S_ISDIR(st.st_mode))
                r = -ENOTDIR;
        free(p);
        return r;
}

/* 1 when the final directory is there, 0 when not, or -errno. */
static int final_exists(int cache_fd, const char *name)
{
        struct stat st;

        if (fstatat(cache_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        return S_ISDIR(st.st_mode) ? 1 : -ENOTDIR;
}

/* Shared objects must stay loadable; everything else is data. */
static mode_t file_mode(const char *name)
{
        const char *base = strrchr(name, '/');
        size_t n = strlen(name);

        if (strncmp(name, "binaries/", 9) != 0 || !base)
                return 0444;
        if ((n > 3 && strcmp(name + n - 3, ".so") == 0) || strstr(base, ".so."))
                return 0555;
        return 0444;
}

/* Polled every CANCEL_POLL bytes written: one entry may be large. */
#define CANCEL_POLL     (4u << 20)

struct cancel_sink {
        int fd;
        const struct fmi_cancel *cancel;
        size_t since_poll;
};

static int cancel_sink(void *ctx, const void *buf, size_t len)
{
        struct cancel_sink *s = ctx;

        s->since_poll += len;
        if (s->since_poll >= CANCEL_POLL) {
                s->since_poll = 0;
                if (fmi_cancelled(s->cancel))
                        return -ECANCELED;
        }
        return ar_fd_sink(&s->fd, buf, len);
}

/*
 * Up to this many files, each is fsync'ed (a journal commit each); past
 * it, one syncfs() for the tree: 20,000 files (an embedded runtime) took
 * half a minute one by one. syncfs() also flushes whatever else is dirty
 * on that file system, which only a large tree is worth.
 */
#define FSYNC_EACH_MAX  256

static int write_file(const struct fmu_archive *ar, struct tree *t, const struct ar_entry *e,
                      bool sync, struct ar_report *rep)
{
        struct cancel_sink sink = { .cancel = rep->cancel };
        const char *why = "";
        int fd, r;

        fd = tree_create_file(t, e->name);
        if (fd < 0)
                return fd;
        sink.fd = fd;
        r = ar_stream(ar, e, cancel_sink, &sink, &why);
        if (r == -EBADMSG)
                ar_error(rep, e->name, strlen(e->name), "data does not match its header: %s", why);
        if (r == 0 && ((sync && fsync(fd) < 0) || fchmod(fd, file_mode(e->name)) < 0))
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        return r;
}

static int write_all(const struct fmu_archive *ar, struct tree *t, struct ar_report *rep)
{
        size_t files = 0;
        bool each;
        int r;

        for (size_t i = 0; i < ar->n; i++)
                files += ar->v[i].kind != AR_DIR;
        each = files <= FSYNC_EACH_MAX;
        for (size_t i = 0; i < ar->n; i++) {
                const struct ar_entry *e = &ar->v[i];

                if (fmi_cancelled(rep->cancel))
                        return -ECANCELED;
                r = e->kind == AR_DIR ? tree_create_dir(t, e->name)
                                      : write_file(ar, t, e, each, rep);
                if (r < 0)
                        return r;
        }
        /* The data on disk before the seal written after it, which must not outlive it on a crash. */
        if (!each && syncfs(t->root_fd) < 0)
                return -errno;
        return tree_seal(t, 0555);
}

/* Rename without replacing: 1 when another process got there first. */
static int publish(int cache_fd, const char *tmp, const char *final)
{
        if (renameat2(cache_fd, tmp, cache_fd, final, RENAME_NOREPLACE) == 0)
                return 0;
        /* File systems without RENAME_NOREPLACE: a plain rename never replaces a non-empty directory. */
        if (errno == EINVAL && renameat(cache_fd, tmp, cache_fd, final) == 0)
                return 0;
        if (errno == EEXIST || errno == ENOTEMPTY)
                return 1;
        return -errno;
}

/* Build the tree under a temporary name and publish it. */
static int build(const struct fmu_archive *ar, const char *cache_dir, int cache_fd,
                 struct ar_report *rep)
{
        struct tree t;
        char *tmpl;
        const char *tmp;
        int root_fd, r;

        if (asprintf(&tmpl, "%s/.%s.XXXXXX", cache_dir, ar->sha256) < 0)
                return -ENOMEM;
        if (!mkdtemp(tmpl)) {
                r = -errno;
                goto out_free;
        }
        tmp = strrchr(tmpl, '/') + 1;
        root_fd = openat(cache_fd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (root_fd < 0) {
                r = -errno;
                (void) unlinkat(cache_fd, tmp, AT_REMOVEDIR);
                goto out_free;
        }
        tree_init(&t, root_fd);
        r = write_all(ar, &t, rep);
        /* Checked again last: a file rewritten while we read it would poison the cache. */
        if (r == 0)
                r = ar_unchanged(ar, rep);
        if (r == 0)
                r = publish(cache_fd, tmp, ar->sha256);
        if (r != 0) {
                /* Failed, or lost the race (r == 1) and the winner's copy is used. */
                (void) tree_remove(&t);
                (void) unlinkat(cache_fd, tmp, AT_REMOVEDIR);
                if (r == 1)
                        r = 0;
        } else if (fsync(cache_fd) < 0) {
                r = -errno;
        } else {
                /* Later than every node of the tree: what a reuse checks it against. */
                r = cache_seal(cache_fd, ar->sha256, root_fd);
        }
        tree_fini(&t);
        close(root_fd);

out_free:
        free(tmpl);
        return r;
}

/*
 * One process at a time builds or replaces the tree of one archive: an
 * exclusive lock on "<cache_dir>/<sha256>.lock" (0600: only this user's
 * processes can take it; the directory's own fd any user could lock).
 * Waits while the other unpacks, until cancelled. The fd to close, or
 * -errno.
 */
static int lock_archive(int cache_fd, const char *sha, const struct fmi_cancel *cancel)
{
        char name[SHA256_HEX_LEN + 8];
        int fd;

        snprintf(name, sizeof(name), "%s.lock", sha);
        fd = openat(cache_fd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                int err = errno;

                if (err != EWOULDBLOCK && err != EINTR) {
                        close(fd);
                        return -err;
                }
                if (fmi_cancelled(cancel)) {
                        close(fd);
                        return -ECANCELED;
                }
                (void) nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
        }
        return fd;
}

/* The tree held (cache_hold()) if it is there and as unpacked: its fd, -ENOENT, or -errno. */
static int held_intact(int cache_fd, const struct fmu_archive *ar)
{
        int fd = cache_hold(cache_fd, ar->sha256), r;

        if (fd < 0)
                return fd;
        r = cache_intact(cache_fd, ar, fd);
        if (r == 1)
                return fd;
        close(fd);
        return r < 0 ? r : -ENOENT;
}

/*
 * The tree, unpacked now, or as unpacked before and unchanged since
 * (cache_check.h): one that changed is taken away and unpacked again.
 * Returns the tree's fd, held for as long as it is used, or -errno.
 */
static int fresh_tree(const struct fmu_archive *ar, const char *cache_dir, int cache_fd,
                      struct ar_report *rep)
{
        int lock, r;

        r = held_intact(cache_fd, ar);
        if (r != -ENOENT)
                return r;
        lock = lock_archive(cache_fd, ar->sha256, rep->cancel);
        if (lock < 0)
                return lock;
        /* Again under the lock: another process may have unpacked it meanwhile. */
        r = held_intact(cache_fd, ar);
        if (r == -ENOENT) {
                r = final_exists(cache_fd, ar->sha256);
                if (r == 1)
                        r = cache_discard(cache_fd, ar->sha256);
                if (r == 0)
                        r = ar_unchanged(ar, rep);
                if (r == 0)
                        r = build(ar, cache_dir, cache_fd, rep);
                if (r == 0)
                        r = cache_hold(cache_fd, ar->sha256);
        }
        close(lock);
        return r;
}

int cache_unpack(const struct fmu_archive *ar, const char *cache_dir, struct ar_report *rep,
                 char **ret_dir, int *ret_hold)
{
        char *final = NULL;
        int cache_fd, r;

        r = mkdir_p(cache_dir, 0755);
        if (r < 0)
                return r;
        cache_fd = open(cache_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (cache_fd < 0)
                return -errno;
        if (asprintf(&final, "%s/%s", cache_dir, ar->sha256) < 0) {
                final = NULL;
                r = -ENOMEM;
                goto out_close;
        }
        r = fresh_tree(ar, cache_dir, cache_fd, rep);
        if (r < 0)
                goto out_close;
        if (ret_hold)
                *ret_hold = r;
        else
                close(r);
        *ret_dir = final;
        final = NULL;
        r = 0;

out_close:
        free(final);
        close(cache_fd);
        return r;
}
