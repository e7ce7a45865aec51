/*
 * cache_tree: create, seal and remove the nodes of one unpacked archive,
 * always relative to directory fds. Cost: each directory is opened from the
 * root (O(depth) opens), except that the parent of the previous file is
 * kept open, which serves the common case of files sorted by directory.
 */
#include "cache_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

void tree_init(struct tree *t, int root_fd)
{
        *t = (struct tree){ .root_fd = root_fd, .parent_fd = -1 };
}

static void forget_parent(struct tree *t)
{
        if (t->parent_fd >= 0)
                close(t->parent_fd);
        free(t->parent);
        t->parent = NULL;
        t->parent_fd = -1;
}

void tree_fini(struct tree *t)
{
        forget_parent(t);
        for (size_t i = 0; i < t->n; i++)
                free(t->v[i].path);
        free(t->v);
        t->v = NULL;
        t->n = t->cap = 0;
}

/*
 * Make room for one more node and stage its path, before the node is
 * created: once it exists, recording it can no longer fail.
 */
static int stage(struct tree *t, const char *path, size_t len)
{
        if (t->n == t->cap) {
                size_t cap = t->cap ? 2 * t->cap : 64;
                struct tree_node *v = realloc(t->v, cap * sizeof(*v));

                if (!v)
                        return -ENOMEM;
                t->v = v;
                t->cap = cap;
        }
        t->v[t->n].path = strndup(path, len);
        return t->v[t->n].path ? 0 : -ENOMEM;
}

static void commit(struct tree *t, bool dir)
{
        t->v[t->n++].dir = dir;
}

static void unstage(struct tree *t)
{
        free(t->v[t->n].path);
        t->v[t->n].path = NULL;
}

/* mkdirat() one component, recording it when it is new. */
static int make_dir(struct tree *t, int fd, const char *name, const char *path, size_t len)
{
        int r = stage(t, path, len);

        if (r < 0)
                return r;
        if (mkdirat(fd, name, 0700) == 0) {
                commit(t, true);
                return 0;
        }
        r = errno == EEXIST ? 0 : -errno;
        unstage(t);
        return r;
}

/* Open the directory path[0..len) below the root, creating missing components when asked. */
static int open_dir(struct tree *t, const char *path, size_t len, bool create, int *ret_fd)
{
        char *buf, *c, *slash;
        int fd, nfd, r = 0;

        buf = strndup(path, len);
        if (!buf)
                return -ENOMEM;
        fd = openat(t->root_fd, ".", DIR_FLAGS);
        if (fd < 0) {
                r = -errno;
                goto out_free;
        }
        for (c = buf; len > 0 && c; c = slash ? slash + 1 : NULL) {
                slash = strchr(c, '/');
                if (slash)
                        *slash = '\0';
                if (create) {
                        r = make_dir(t, fd, c, path, (size_t)(c - buf) + strlen(c));
                        if (r < 0)
                                break;
                }
                nfd = openat(fd, c, DIR_FLAGS);
                if (nfd < 0)
                        r = -errno;
                close(fd);
                fd = nfd;
                if (r < 0)
                        break;
        }
        if (r < 0) {
                if (fd >= 0)
                        close(fd);
        } else {
                *ret_fd = fd;
        }

out_free:
        free(buf);
        return r;
}

static int parent_of(struct tree *t, const char *path, const char **ret_last, int *ret_fd)
{
        const char *slash = strrchr(path, '/');
        size_t len = slash ? (size_t)(slash - path) : 0;
        int fd, r;

        *ret_last = slash ? slash + 1 : path;
        if (t->parent && strlen(t->parent) == len && memcmp(t->parent, path, len) == 0) {
                *ret_fd = t->parent_fd;
                return 0;
        }
        forget_parent(t);
        t->parent = strndup(path, len);
        if (!t->parent)
                return -ENOMEM;
        r = open_dir(t, path, len, true, &fd);
        if (r < 0) {
                forget_parent(t);
                return r;
        }
        t->parent_fd = fd;
        *ret_fd = fd;
        return 0;
}

int tree_create_file(struct tree *t, const char *path)
{
        const char *last;
        int pfd, fd, r;

        r = parent_of(t, path, &last, &pfd);
        if (r < 0)
                return r;
        r = stage(t, path, strlen(path));
        if (r < 0)
                return r;
        fd = openat(pfd, last, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
                r = -errno;
                unstage(t);
                return r;
        }
        commit(t, false);
        return fd;
}

int tree_create_dir(struct tree *t, const char *path)
{
        int fd, r;

        r = open_dir(t, path, strlen(path), true, &fd);
        if (r < 0)
                return r;
        close(fd);
        return 0;
}

static int chmod_dir(struct tree *t, const char *path, mode_t mode, bool sync)
{
        int fd, r;

        r = open_dir(t, path, strlen(path), false, &fd);
        if (r < 0)
                return r;
        if (fchmod(fd, mode) < 0 || (sync && fsync(fd) < 0))
                r = -errno;
        close(fd);
        return r;
}

int tree_seal(struct tree *t, mode_t mode)
{
        int r;

        forget_parent(t);
        for (size_t i = 0; i < t->n; i++) {
                if (!t->v[i].dir)
                        continue;
                r = chmod_dir(t, t->v[i].path, mode, true);
                if (r < 0)
                        return r;
        }
        if (fchmod(t->root_fd, mode) < 0 || fsync(t->root_fd) < 0)
                return -errno;
        return 0;
}

int tree_remove(struct tree *t)
{
        int r = 0, q;

        forget_parent(t);
        /* A sealed tree is read-only: unlinkat() needs write access to each parent. */
        if (fchmod(t->root_fd, 0700) < 0)
                r = -errno;
        for (size_t i = 0; i < t->n; i++) {
                if (t->v[i].dir && (q = chmod_dir(t, t->v[i].path, 0700, false)) < 0 && !r)
                        r = q;
        }
        /* Reverse creation order removes children before their parents. */
        for (size_t i = t->n; i-- > 0;) {
                const char *path = t->v[i].path, *slash = strrchr(path, '/');
                int pfd;

                q = open_dir(t, path, slash ? (size_t)(slash - path) : 0, false, &pfd);
                if (q == 0) {
                        if (unlinkat(pfd, slash ? slash + 1 : path,
                                     t->v[i].dir ? AT_REMOVEDIR : 0) < 0 && errno != ENOENT)
                                q = -errno;
                        close(pfd);
                }
                if (q < 0 && !r)
                        r = q;
        }
        return r;
}
