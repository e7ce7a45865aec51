/*
 * sandbox_ns: the worker's namespaces (sandbox.h, layer "namespaces"): a
 * new network namespace (no interface up, not even loopback) and a mount
 * namespace in which everything is read-only but the instance's scratch
 * directory, and the directory that holds the scratch directories of the
 * other instances shows only this one.
 *
 * DESIGN: a root worker unshares directly; any other worker needs an
 * unprivileged user namespace too, mapping its own uid and gid only (the
 * capabilities it holds there are dropped by the privileges layer). The
 * mounts are made private first, so nothing propagates back to the
 * daemon's namespace. Read-only is one mount_setattr(AT_RECURSIVE) over
 * the whole tree (Linux 5.12); the scratch directory is then its own
 * bind mount with the read-only flag cleared. When the FMU directory
 * lies below the scratch directories' parent, that parent is left
 * visible (still read-only), since hiding it would hide the FMU. The
 * daemon's run directory (opts.hide), where its control socket lives, is
 * covered the same way, so that an FMU cannot connect to the daemon.
 *
 * /tmp is the worker's own: a new tmpfs (mode 1777, at most the worker's
 * memory limit), writable, since FMUs write there whatever TMPDIR says
 * (glibc's tmpfile() always does). Being new, it holds nothing another
 * process could have planted; the scratch directory, when it lies below
 * /tmp, is bound back at its path (scratch_make() made it canonical) from
 * a descriptor opened before /tmp was covered, so no path is resolved in a
 * place an FMU could write. An FMU directory below /tmp is reached through
 * the descriptor sandbox_apply() holds, never by its path. A file there
 * is gone with the worker, as it is seen by no one else.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "worker/sandbox_int.h"

#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

/* struct mount_attr of <linux/mount.h>, which clashes with <sys/mount.h> on older glibc. */
struct mattr {
        uint64_t attr_set;
        uint64_t attr_clr;
        uint64_t propagation;
        uint64_t userns_fd;
};

static int set_ro(const char *path, bool ro, unsigned flags)
{
        struct mattr m = { 0 };

        if (ro)
                m.attr_set = MOUNT_ATTR_RDONLY;
        else
                m.attr_clr = MOUNT_ATTR_RDONLY;
        return syscall(SYS_mount_setattr, AT_FDCWD, path, flags, &m, sizeof(m)) < 0 ? -errno : 0;
}

static int write_file(const char *path, const char *text)
{
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        ssize_t n;
        int r = 0;

        if (fd < 0)
                return -errno;
        n = write(fd, text, strlen(text));
        if (n < 0)
                r = -errno;
        else if ((size_t)n != strlen(text))
                r = -EIO;
        close(fd);
        return r;
}

static int map_ids(uid_t uid, gid_t gid)
{
        char line[64];
        int r;

        r = write_file("/proc/self/setgroups", "deny");
        if (r < 0 && r != -ENOENT)
                return r;
        snprintf(line, sizeof(line), "%u %u 1", (unsigned)uid, (unsigned)uid);
        r = write_file("/proc/self/uid_map", line);
        if (r < 0)
                return r;
        snprintf(line, sizeof(line), "%u %u 1", (unsigned)gid, (unsigned)gid);
        return write_file("/proc/self/gid_map", line);
}

static bool below(const char *path, const char *dir)
{
        size_t n = strlen(dir);

        return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0' || n == 1);
}

/* Cover the scratch dir's parent with an empty tmpfs and bind the scratch dir back. 1: hidden. */
static int hide_siblings(const char *scratch, const char *fmu_dir)
{
        char parent[PATH_MAX], fmu[PATH_MAX], proc[64];
        char *slash;
        int fd, r = 0;

        if (!realpath(scratch, parent) || !realpath(fmu_dir, fmu))
                return -errno;
        slash = strrchr(parent, '/');
        if (!slash || slash == parent)
                return 0;
        *slash = '\0';
        if (below(fmu, parent))
                return 0;
        fd = open(scratch, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (mount("tmpfs", parent, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                  "mode=0755,size=16k,nr_inodes=16") < 0 ||
            (mkdir(scratch, 0700) < 0 && errno != EEXIST)) {
                r = -errno;
                goto out_close;
        }
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        if (mount(proc, scratch, NULL, MS_BIND, NULL) < 0)
                r = -errno;
        else
                r = 1;
out_close:
        close(fd);
        return r;
}

/* mkdir -p for the part of 'path' below 'top' (an existing directory). */
static int make_path(const char *path, size_t top_len)
{
        char p[PATH_MAX], keep;

        if (strlen(path) >= sizeof(p))
                return -ENAMETOOLONG;
        strcpy(p, path);
        for (char *c = p + top_len + 1; ; c++) {
                if (*c != '/' && *c != '\0')
                        continue;
                keep = *c;
                *c = '\0';
                if (mkdir(p, 0755) < 0 && errno != EEXIST)
                        return -errno;
                *c = keep;
                if (!keep)
                        return 0;
        }
}

/*
 * Cover 'hide' with an empty tmpfs (sandbox.h, opts.hide). When the
 * scratch directory lies below it, its path is made again inside the
 * tmpfs and the scratch directory bound back there: *ret_bound. 1:
 * hidden; 0: not, since it does not exist or the FMU lies below it.
 */
static int hide_dir(const char *hide, const char *scratch, const char *fmu_dir, bool *ret_bound)
{
        char h[PATH_MAX], fmu[PATH_MAX], sc[PATH_MAX], proc[64];
        int fd = -1, r = 1;

        *ret_bound = false;
        if (!realpath(hide, h))
                return errno == ENOENT ? 0 : -errno;
        if (!realpath(fmu_dir, fmu))
                return -errno;
        if (below(fmu, h) || !strcmp(h, "/"))
                return 0;
        if (scratch) {
                if (!realpath(scratch, sc))
                        return -errno;
                if (below(sc, h) && strcmp(sc, h)) {
                        fd = open(sc, O_PATH | O_DIRECTORY | O_CLOEXEC);
                        if (fd < 0)
                                return -errno;
                }
        }
        if (mount("tmpfs", h, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                  "mode=0755,size=16k,nr_inodes=64") < 0) {
                r = -errno;
                goto out;
        }
        if (fd >= 0) {
                r = make_path(sc, strlen(h));
                if (r < 0)
                        goto out;
                snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
                if (mount(proc, sc, NULL, MS_BIND, NULL) < 0) {
                        r = -errno;
                        goto out;
                }
                *ret_bound = true;
                r = 1;
        }
out:
        if (fd >= 0)
                close(fd);
        return r;
}

static bool tmp_private;

bool sandbox_private_tmp(void)
{
        return tmp_private;
}

/*
 * Cover /tmp with a new tmpfs (see DESIGN), binding back the directories
 * in keep[] (NULL entries skipped) that lie below it. 1: done; 0: not,
 * since there is no /tmp or one of them is /tmp itself.
 */
static int private_tmp(const char *const keep[], size_t n, uint64_t tmp_size)
{
        char t[PATH_MAX], p[2][PATH_MAX], opts[64], proc[64];
        int fds[2] = { -1, -1 }, r = 1;

        if (n > 2)
                return -EINVAL;
        if (!realpath("/tmp", t))
                return errno == ENOENT ? 0 : -errno;
        for (size_t i = 0; i < n; i++) {
                if (!keep[i])
                        continue;
                if (!realpath(keep[i], p[i])) {
                        r = -errno;
                        goto out;
                }
                if (!strcmp(p[i], t)) {
                        r = 0;
                        goto out;
                }
                if (below(p[i], t)) {
                        fds[i] = open(p[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
                        if (fds[i] < 0) {
                                r = -errno;
                                goto out;
                        }
                }
        }
        snprintf(opts, sizeof(opts), "mode=1777,size=%llu", (unsigned long long)tmp_size);
        if (mount("tmpfs", t, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
                r = -errno;
                goto out;
        }
        for (size_t i = 0; i < n; i++) {
                if (fds[i] < 0)
                        continue;
                r = make_path(p[i], strlen(t));
                if (r < 0)
                        goto out;
                snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fds[i]);
                if (mount(proc, p[i], NULL, MS_BIND, NULL) < 0) {
                        r = -errno;
                        goto out;
                }
        }
        r = 1;
out:
        for (size_t i = 0; i < n; i++)
                if (fds[i] >= 0)
                        close(fds[i]);
        return r;
}

int sandbox_namespaces(const struct sandbox_args *a, char *buf, size_t size)
{
        /*
         * Only the scratch directory comes back under a private /tmp: the
         * worker reaches the FMU through the descriptor sandbox_apply()
         * holds, and a bind there would come under /tmp's Landlock rule,
         * writable.
         */
        const char *keep[1] = { a->scratch };
        bool userns = geteuid() != 0;
        uid_t uid = getuid();
        gid_t gid = getgid();
        const char *step;
        bool bound = false, tmp = false;
        int r, hidden = 0, covered = 0;

        step = userns ? "unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS)" :
               "unshare(CLONE_NEWNET | CLONE_NEWNS)";
        if (unshare(CLONE_NEWNET | CLONE_NEWNS | (userns ? CLONE_NEWUSER : 0)) < 0)
                goto out_errno;
        step = "uid_map";
        if (userns && (r = map_ids(uid, gid)) < 0)
                goto out;
        step = "making mounts private";
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                goto out_errno;
        if (a->opts.hide) {
                step = "hiding the daemon's run directory";
                covered = hide_dir(a->opts.hide, a->scratch, a->fmu_dir, &bound);
                if (covered < 0) {
                        r = covered;
                        goto out;
                }
                hidden = bound;
        }
        if (a->scratch && !bound) {
                step = "hiding the other scratch directories";
                hidden = hide_siblings(a->scratch, a->fmu_dir);
                if (hidden < 0) {
                        r = hidden;
                        goto out;
                }
                step = "binding the scratch directory";
                if (!hidden && mount(a->scratch, a->scratch, NULL, MS_BIND, NULL) < 0)
                        goto out_errno;
        }
        step = "a private /tmp";
        r = private_tmp(keep, 1, a->opts.mem_limit ? a->opts.mem_limit : SANDBOX_MEM_DEFAULT);
        if (r < 0)
                goto out;
        tmp = r == 1;
        step = "mount_setattr(/, AT_RECURSIVE, MOUNT_ATTR_RDONLY)";
        r = set_ro("/", true, AT_RECURSIVE);
        if (r < 0)
                goto out;
        if (tmp) {
                step = "making /tmp writable";
                r = set_ro("/tmp", false, 0);
                if (r < 0)
                        goto out;
        }
        if (a->scratch) {
                step = "making the scratch directory writable";
                r = set_ro(a->scratch, false, 0);
                if (r < 0)
                        goto out;
                /*
                 * The working directory the environment layer chose is the
                 * old mount's, read-only now: enter the writable one.
                 */
                step = "chdir to the scratch directory";
                if (chdir(a->scratch) < 0)
                        goto out_errno;
        }
        snprintf(buf, size, "no network; all mounts read-only%s%s%s%s%s", a->scratch ? " but the "
                 "scratch directory" : "", tmp ? ", a private /tmp" : "",
                 hidden ? ", other scratch directories hidden" : "",
                 covered ? ", the daemon's run directory hidden" : "",
                 userns ? " (user namespace)" : "");
        tmp_private = tmp;
        return 0;

out_errno:
        r = -errno;
out:
        snprintf(buf, size, "%s: %s", step, strerror(-r));
        return r;
}
