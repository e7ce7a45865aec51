/*
 * host_out: where a session's results file is written, and whose it is.
 * A file the client names lies below an output directory (host_paths.c)
 * and is opened beneath it (host_beneath.c); a load that names none
 * writes STATE/results/session-ID-XXXXXX/results.csv.
 *
 * DESIGN: a root daemon may write what its client may not, so it never
 * replaces a file it did not write for that client: an existing file is
 * opened without O_CREAT or O_TRUNC, checked on that descriptor (fstat:
 * a regular file with no other hard link; the mark below) and only then
 * truncated. A file the
 * daemon creates is marked with an extended attribute holding the
 * client's identity ("uid=N" for a local peer, "curve=KEY" for a remote
 * one): trusted.fmud.results where the daemon has CAP_SYS_ADMIN (no
 * client can set it), else user.fmud.results. A later run of the same
 * client replaces a file so marked that the client owns (the daemon, for
 * a remote client) and that no group or other may write; anything else
 * only with force, and
 * where the file system keeps no extended attributes only force
 * replaces. A new file (and its session directory) is chowned to the
 * client's uid and gid where the peer is local and the daemon may, so the
 * client can read, move and delete its results. The file is opened for
 * reading too: the results operation reads it back through a duplicate of
 * this descriptor (host_results.c), never by its path again.
 *
 * Threads: the session thread (hout_open()), the control thread
 * (hout_ident(), at load); hout_mark_name() once at host_new().
 */
#include "daemon/host_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "engine/scenario/beneath.h"

#define MARK_TRUSTED    "trusted.fmud.results"
#define MARK_USER       "user.fmud.results"
#define RESULTS_NAME    "results.csv"

const char *hout_mark_name(void)
{
        struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[2] = { 0 };

        if (syscall(SYS_capget, &hdr, data) == 0 &&
            (data[CAP_SYS_ADMIN / 32].effective & (1u << (CAP_SYS_ADMIN % 32))))
                return MARK_TRUSTED;
        return MARK_USER;
}

void hout_as(const struct host_peer *peer, struct open_as *ret)
{
        memset(ret, 0, sizeof(*ret));
        if (!peer)
                return;
        if (peer->has_cred)
                (void) open_as_user(ret, peer->uid, peer->gid);
        else
                (void) open_as_user(ret, HOST_REMOTE_UID, HOST_REMOTE_GID);
}

bool hout_as_client(const struct hsess *hs)
{
        return hs->as.set || (hs->peer_cred && hs->peer_uid == geteuid());
}

void hout_ident(struct hsess *hs, const struct host_peer *peer, const struct open_as *as)
{
        hs->as = *as;
        hs->peer_cred = peer && peer->has_cred;
        hs->peer_uid = hs->peer_cred ? peer->uid : 0;
        hs->peer_gid = hs->peer_cred ? peer->gid : 0;
        if (hs->peer_cred)
                snprintf(hs->peer_ident, sizeof(hs->peer_ident), "uid=%u", (unsigned)peer->uid);
        else if (peer && peer->user && !strncmp(peer->user, "key ", 4) && peer->user[4])
                /* access.h names a CURVE client "key <Z85>". */
                snprintf(hs->peer_ident, sizeof(hs->peer_ident), "curve=%s", peer->user + 4);
        else
                snprintf(hs->peer_ident, sizeof(hs->peer_ident), "unknown");
}

/*
 * Whether fd (st) is this client's results file: it carries the client's
 * mark, is owned by the client (a local peer; a remote one's files are the
 * daemon's) and no one else may write it. The mark alone is not enough: a
 * user.* attribute is set by whoever may write the file, so a file another
 * user made writable to all could carry anyone's mark.
 */
static bool marked_ours(const struct hsess *hs, int fd, const struct stat *st)
{
        char v[HOST_IDENT_MAX];
        size_t len = strlen(hs->peer_ident);
        uid_t owner = hs->as.set ? hs->as.uid : geteuid();
        ssize_t n;

        if (st->st_uid != owner || (st->st_mode & (S_IWGRP | S_IWOTH)))
                return false;
        n = fgetxattr(fd, hs->h->mark, v, sizeof(v));
        return n >= 0 && (size_t)n == len && !memcmp(v, hs->peer_ident, len);
}

/*
 * A new file or directory: the identity's it is opened with (a file
 * created with it is already; the daemon's own session directory is
 * given); then marked.
 */
static void make_theirs(const struct hsess *hs, int fd, bool mark)
{
        if (hs->as.set)
                (void) fchown(fd, hs->as.uid, hs->as.gid);
        /* Unsupported (ENOTSUP) or refused: the file is not marked, only force replaces it. */
        if (mark)
                (void) fsetxattr(fd, hs->h->mark, hs->peer_ident, strlen(hs->peer_ident), 0);
}

/*
 * The session's hold on its results file: an exclusive lock on its open
 * file description, which goes with the session's last descriptor of it.
 * Two sessions writing one file would each truncate and write over the
 * other's rows; the second is refused while the first holds it.
 */
static int hold(int fd, const char *out, char *msg, size_t size)
{
        int e;

        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
                return -1;
        e = errno;
        /* A file system without locks (NFS without lockd): written as before, unheld. */
        if (e == ENOLCK || e == EOPNOTSUPP)
                return -1;
        if (e == EWOULDBLOCK)
                snprintf(msg, size, "'%s' is locked by another session still loaded (or another "
                         "process): not replaced (unload it, or name another file)", out);
        else
                snprintf(msg, size, "cannot lock '%s': %s", out, strerror(e));
        return e == EWOULDBLOCK ? PROTO_E_STATE : PROTO_E_INTERNAL;
}

/* out, named by the client, below an output directory. */
static int open_named(struct hsess *hs, const char *out, bool force, int *ret_fd, char *msg,
                      size_t size)
{
        struct stat st;
        int fd = -1, err, code;

        /* No O_CREAT: an existing file is looked at before anything is done to it. */
        code = hpath_open_in(&hs->as, hs->output, hs->n_output, "output", out,
                             O_RDWR | O_NONBLOCK, 0, &fd, &err, msg, size);
        if (code >= 0 && err == ENOENT) {
                code = hpath_open_in(&hs->as, hs->output, hs->n_output, "output", out,
                                     O_RDWR | O_CREAT | O_EXCL | O_NONBLOCK, 0644, &fd, &err,
                                     msg, size);
                if (code >= 0)
                        return code;
                code = hold(fd, out, msg, size);
                if (code >= 0) {
                        close(fd);
                        return code;
                }
                make_theirs(hs, fd, true);
                if (fcntl(fd, F_SETFL, 0) < 0) {
                        snprintf(msg, size, "cannot write '%s': %s", out, strerror(errno));
                        close(fd);
                        return PROTO_E_INTERNAL;
                }
                *ret_fd = fd;
                return -1;
        }
        if (code >= 0)
                return code;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                snprintf(msg, size, "cannot write '%s': not a regular file", out);
                close(fd);
                return PROTO_E_INVALID;
        }
        /* Another name for the same file may be anyone's (a link made to it): never through it. */
        if (st.st_nlink != 1) {
                snprintf(msg, size, "'%s' has other hard links: not replaced", out);
                close(fd);
                return PROTO_E_DENIED;
        }
        if (!force && !marked_ours(hs, fd, &st)) {
                snprintf(msg, size, "'%s' exists and is not this client's results file from an "
                         "earlier run: not replaced (--force replaces it)", out);
                close(fd);
                return PROTO_E_DENIED;
        }
        code = hold(fd, out, msg, size);
        if (code >= 0) {
                close(fd);
                return code;
        }
        if (fcntl(fd, F_SETFL, 0) < 0 || ftruncate(fd, 0) < 0) {
                snprintf(msg, size, "cannot write '%s': %s", out, strerror(errno));
                close(fd);
                return PROTO_E_INTERNAL;
        }
        /* Replaced for this client: from now on its own results. */
        (void) fsetxattr(fd, hs->h->mark, hs->peer_ident, strlen(hs->peer_ident), 0);
        *ret_fd = fd;
        return -1;
}

/* path and its missing parents, 0755 (the daemon's own directories). -1 with errno. */
static int mkdir_p(const char *path)
{
        char buf[4096];
        size_t len = strlen(path);

        if (len >= sizeof(buf)) {
                errno = ENAMETOOLONG;
                return -1;
        }
        memcpy(buf, path, len + 1);
        for (char *p = buf + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                        return -1;
                *p = '/';
        }
        return mkdir(buf, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

/* A directory of its own in STATE/results for a load that named no file. */
static int open_state(struct hsess *hs, int *ret_fd, char **ret_path, char *msg, size_t size)
{
        const char *state = hs->h->state_dir;
        char *dir = NULL, *path = NULL;
        int dfd = -1, fd = -1, code = PROTO_E_INTERNAL;

        if (!state) {
                *ret_fd = -1;
                return -1;
        }
        /* The state directory is the daemon's own (systemd StateDirectory=, or made here). */
        if (asprintf(&dir, "%s/results", state) < 0) {
                dir = NULL;
                snprintf(msg, size, "out of memory");
                goto out;
        }
        if (mkdir_p(dir) < 0) {
                snprintf(msg, size, "state directory '%s': %s", dir, strerror(errno));
                goto out;
        }
        free(dir);
        dir = NULL;
        if (asprintf(&dir, "%s/results/session-%llu-XXXXXX", state,
                     (unsigned long long)hs->id) < 0) {
                dir = NULL;
                snprintf(msg, size, "out of memory");
                goto out;
        }
        if (!mkdtemp(dir) || (dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
                                         O_CLOEXEC)) < 0) {
                snprintf(msg, size, "results directory in '%s': %s", state, strerror(errno));
                goto out;
        }
        make_theirs(hs, dfd, false);
        fd = beneath_openat_as(&hs->as, dfd, RESULTS_NAME, O_RDWR | O_CREAT | O_EXCL, 0644);
        if (fd < 0 || asprintf(&path, "%s/" RESULTS_NAME, dir) < 0) {
                snprintf(msg, size, "cannot write '%s/" RESULTS_NAME "': %s", dir,
                         strerror(fd < 0 ? -fd : ENOMEM));
                path = NULL;
                goto out;
        }
        make_theirs(hs, fd, true);
        *ret_fd = fd;
        *ret_path = path;
        fd = -1;
        code = -1;
out:
        if (fd >= 0)
                close(fd);
        if (dfd >= 0)
                close(dfd);
        free(dir);
        return code;
}

int hout_open(struct hsess *hs, const char *out, bool force, int *ret_fd, char **ret_path,
              char *msg, size_t size)
{
        int code;

        *ret_path = NULL;
        if (!out)
                return open_state(hs, ret_fd, ret_path, msg, size);
        code = open_named(hs, out, force, ret_fd, msg, size);
        if (code < 0 && !(*ret_path = strdup(out))) {
                close(*ret_fd);
                snprintf(msg, size, "out of memory");
                return PROTO_E_INTERNAL;
        }
        return code;
}
