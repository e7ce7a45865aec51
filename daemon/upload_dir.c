/*
 * upload_dir: the load directories that link a store's uploads
 * (upload.h), and what upload.c shares with them (upload_int.h).
 *
 * DESIGN: a load directory is made below the store's load/ and filled
 * only with hard links under names upload_name_valid() accepts, their
 * directories made here (0700); nothing in it is ever followed as a link.
 */
#include "daemon/upload.h"
#include "daemon/upload_int.h"
#include "fmi/sha256.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Remove everything below the directory fd (its descriptor is consumed). */
void upload_clear_dir(int fd)
{
        DIR *d = fdopendir(fd);
        struct dirent *e;

        if (!d) {
                close(fd);
                return;
        }
        while ((e = readdir(d))) {
                int sub;

                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                        continue;
                if (unlinkat(dirfd(d), e->d_name, 0) == 0)
                        continue;
                sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub >= 0) {
                        upload_clear_dir(sub);
                        (void) unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
                }
        }
        closedir(d);
}

bool upload_hex_name(const char *s)
{
        size_t n = strlen(s);

        if (n != SHA256_HEX_LEN)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        return true;
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

int upload_dir_new(struct upload *u, char **ret_path)
{
        char *path = NULL;

        if (asprintf(&path, "%s/load/XXXXXX", u->dir) < 0)
                return -ENOMEM;
        if (!mkdtemp(path)) {
                int r = -errno;

                free(path);
                return r;
        }
        *ret_path = path;
        return 0;
}

bool upload_name_valid(const char *name)
{
        const char *s = name, *slash;

        if (!*name || *name == '/')
                return false;
        for (;; s = slash + 1) {
                size_t n;

                slash = strchr(s, '/');
                n = slash ? (size_t)(slash - s) : strlen(s);
                if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
                        return false;
                if (!slash)
                        return true;
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

int upload_link(struct upload *u, const char *dir, const char *sha, const char *name, char *msg,
                size_t size)
{
        uint64_t have;
        int dfd, r;

        if (!upload_hex_name(sha) || !upload_name_valid(name)) {
                snprintf(msg, size, "'%s': not a plain relative path", name);
                return PROTO_E_INVALID;
        }
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0) {
                snprintf(msg, size, "load directory: %s", strerror(errno));
                return PROTO_E_INTERNAL;
        }
        pthread_mutex_lock(&u->lock);
        r = upload_complete_size(u, sha, &have);
        if (r < 0) {
                snprintf(msg, size, "%s: no upload %s in the store (put it first)", name, sha);
                r = PROTO_E_INVALID;
        } else if ((r = make_parents(dfd, name)) < 0 ||
                   (r = linkat(u->dfd, sha, dfd, name, 0) < 0 ? -errno : 0) < 0) {
                snprintf(msg, size, "%s: cannot link upload %s: %s", name, sha, strerror(-r));
                r = r == -EEXIST || r == -ENOTDIR ? PROTO_E_INVALID : PROTO_E_INTERNAL;
        } else {
                r = -1;
        }
        pthread_mutex_unlock(&u->lock);
        close(dfd);
        return r;
}

void upload_dir_remove(struct upload *u, const char *dir)
{
        const char *base;
        int fd;

        if (!dir)
                return;
        base = strrchr(dir, '/');
        pthread_mutex_lock(&u->lock);
        fd = base ? openat(u->lfd, base + 1, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
        if (fd >= 0) {
                upload_clear_dir(fd);
                (void) unlinkat(u->lfd, base + 1, AT_REMOVEDIR);
        }
        pthread_mutex_unlock(&u->lock);
}
