/*
 * upload_dir: the load directories that link a store's uploads
 * (upload.h), and what upload.c shares with them (upload_int.h).
 *
 * DESIGN: a load directory is made below the store's load/ and filled
 * only with hard links under names upload_name_check() accepts, their
 * directories made here (0700); nothing in it is ever followed as a link.
 */
#include "daemon/upload.h"
#include "daemon/upload_int.h"
#include "fmi/sha256.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Remove what can go in the directory fd; 1 with the name of a directory
 * that is not empty in sub, 0 when nothing is left, -1 when it cannot be read.
 */
static int clear_level(int fd, char *sub, size_t size)
{
        int c = dup(fd), r = 0;
        DIR *d = c >= 0 ? fdopendir(c) : NULL;
        struct dirent *e;

        if (!d) {
                if (c >= 0)
                        close(c);
                return -1;
        }
        rewinddir(d);
        while (!r && (e = readdir(d))) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                        continue;
                if (unlinkat(fd, e->d_name, 0) == 0 || unlinkat(fd, e->d_name, AT_REMOVEDIR) == 0)
                        continue;
                snprintf(sub, size, "%s", e->d_name);
                r = 1;
        }
        closedir(d);
        return r;
}

/*
 * Remove everything below the directory fd (its descriptor is consumed).
 * Depth first without recursion, one descriptor held whatever the depth:
 * down into a directory that is not empty, up ("..") when one is emptied.
 */
void upload_clear_dir(int fd)
{
        char sub[NAME_MAX + 1];
        unsigned long depth = 0;
        ino_t left = 0;                 /* the directory just emptied and left */
        struct stat st;
        int r, c;

        while (fd >= 0) {
                r = clear_level(fd, sub, sizeof(sub));
                if (r > 0) {
                        c = openat(fd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        /* Back at the directory that would not go: give up rather than loop. */
                        if (c >= 0 && (fstat(c, &st) < 0 || st.st_ino == left)) {
                                close(c);
                                c = -1;
                        }
                        depth += c >= 0;
                        left = 0;
                } else {
                        if (r < 0 || depth == 0 || fstat(fd, &st) < 0)
                                break;
                        left = st.st_ino;
                        c = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        depth--;
                }
                close(fd);
                fd = c;
        }
        if (fd >= 0)
                close(fd);
}

bool upload_hex_name(const char *s)
{
        size_t n = strnlen(s, SHA256_HEX_LEN + 1);

        return proto_sha256_valid((struct proto_str){ s, (uint32_t)n });
}

/* Complete upload sha: its size, touched (most recently used); -errno when there is none. */
int upload_complete_size(struct upload *u, const char *sha, uint64_t *ret)
{
        struct stat st;

        if (fstatat(u->dfd, sha, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -ENOENT;
        (void) utimensat(u->dfd, sha, NULL, AT_SYMLINK_NOFOLLOW);
        *ret = (uint64_t)st.st_size;
        return 0;
}

int upload_dir_new(struct upload *u, char **ret_path, int *ret_fd)
{
        char *path = NULL;
        int fd, r;

        if (asprintf(&path, "%s/load/XXXXXX", u->dir) < 0)
                return -ENOMEM;
        if (!mkdtemp(path)) {
                r = -errno;
                free(path);
                return r;
        }
        /* Opened beneath load/, once: every link of the load is made on this descriptor. */
        fd = openat(u->lfd, strrchr(path, '/') + 1, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
                    O_CLOEXEC);
        if (fd < 0) {
                r = -errno;
                (void) unlinkat(u->lfd, strrchr(path, '/') + 1, AT_REMOVEDIR);
                free(path);
                return r;
        }
        *ret_path = path;
        *ret_fd = fd;
        return 0;
}

enum upload_name upload_name_check(const char *name, unsigned *ret_parts)
{
        const char *s, *slash;
        unsigned parts = 1;

        for (s = name; *s; s++)
                parts += *s == '/';
        if (ret_parts)
                *ret_parts = parts;
        if ((size_t)(s - name) > UPLOAD_NAME_MAX)
                return UPLOAD_NAME_LONG;
        if (parts > UPLOAD_NAME_PARTS)
                return UPLOAD_NAME_DEEP;
        for (s = name;; s = slash + 1) {
                size_t n;

                slash = strchr(s, '/');
                n = slash ? (size_t)(slash - s) : strlen(s);
                if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
                        return UPLOAD_NAME_NOT_PLAIN;
                if (!slash)
                        return UPLOAD_NAME_OK;
        }
}

/* Make the directories of name below dfd; the last component is the file's. */
static int make_parents(int dfd, const char *name)
{
        char buf[4096];
        char *s;

        if (snprintf(buf, sizeof(buf), "%s", name) >= (int)sizeof(buf))
                return -ENAMETOOLONG;
        for (s = strchr(buf, '/'); s; s = strchr(s + 1, '/')) {
                *s = '\0';
                if (mkdirat(dfd, buf, 0700) < 0 && errno != EEXIST)
                        return -errno;
                *s = '/';
        }
        return 0;
}

int upload_link(struct upload *u, int dfd, const char *sha, const char *name, const char *what,
                char *msg, size_t size)
{
        uint64_t have;
        int r;

        /* The store's own guard: nothing is linked under a name that could leave dfd. */
        if (!upload_hex_name(sha) || upload_name_check(name, NULL) != UPLOAD_NAME_OK) {
                snprintf(msg, size, "'%s': not a plain relative path", name);
                return PROTO_E_INVALID;
        }
        pthread_mutex_lock(&u->lock);
        r = upload_complete_size(u, sha, &have);
        if (r < 0) {
                snprintf(msg, size, "%s: no upload %s in the store (put it first)", what, sha);
                r = PROTO_E_INVALID;
        } else if ((r = make_parents(dfd, name)) < 0 ||
                   (r = linkat(u->dfd, sha, dfd, name, 0) < 0 ? -errno : 0) < 0) {
                snprintf(msg, size, "%s: cannot link upload %s: %s", name, sha, strerror(-r));
                r = r == -EEXIST || r == -ENOTDIR ? PROTO_E_INVALID : PROTO_E_INTERNAL;
        } else {
                r = -1;
        }
        pthread_mutex_unlock(&u->lock);
        return r;
}

/*
 * Renamed away under the lock (no link is made in it after), emptied
 * outside it: a put on the control thread does not wait for the removal.
 * Its depth is bounded by UPLOAD_NAME_PARTS (upload_name_check()).
 */
void upload_dir_remove(struct upload *u, const char *dir)
{
        char gone[64];
        const char *base;
        int fd, r;

        base = dir ? strrchr(dir, '/') : NULL;
        if (!base || snprintf(gone, sizeof(gone), ".gone-%s", base + 1) >= (int)sizeof(gone))
                return;
        pthread_mutex_lock(&u->lock);
        r = renameat(u->lfd, base + 1, u->lfd, gone);
        pthread_mutex_unlock(&u->lock);
        if (r < 0)
                return;
        fd = openat(u->lfd, gone, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) {
                upload_clear_dir(fd);
                (void) unlinkat(u->lfd, gone, AT_REMOVEDIR);
        }
}
