/*
 * beneath: open a file beneath a directory's descriptor, so that nothing
 * swapped into the path between a check and the use can lead anywhere
 * else (a symbolic link put in place of a directory of the path, a
 * rename(RENAME_EXCHANGE) loop): the open is the check.
 *
 * DESIGN: the kernel resolves the path beneath the directory with
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS):
 * no "..", no symbolic link of any kind on the way, the last component
 * included. Where the kernel has no openat2 (before 5.6), or a seccomp
 * profile refuses it, the same walk is made component by component with
 * O_NOFOLLOW, each directory opened from the one before, and any "." or
 * ".." component is refused. A ".." is refused by its text before either
 * walk, even one that would stay inside. Which allowed directory a path is
 * in is decided on the path's text alone (no system call: a client
 * spelling an allowed directory through a link is refused), and a path
 * is bounded (PATH_MAX, BENEATH_MAX_DEPTH components) before anything is
 * done with it. The daemon opens every file a client names
 * this way (host_beneath.c, and the scenario's files when the scenario
 * is loaded confined: scenario_opts.confined).
 */
#ifndef FMUD_ENGINE_BENEATH_H
#define FMUD_ENGINE_BENEATH_H

#include <stddef.h>
#include <sys/types.h>

/* The most components a path a client names may have. */
#define BENEATH_MAX_DEPTH 256

/*
 * Open rel (relative, not empty) beneath the directory dfd. flags as
 * open(2) (O_CLOEXEC is added). Returns the descriptor, or -ELOOP (a
 * symbolic or magic link on the way), -EXDEV (it leaves dfd, or has a
 * ".." component), -errno.
 */
int beneath_openat(int dfd, const char *rel, int flags, mode_t mode);

/*
 * 0, or -ENAMETOOLONG when path has PATH_MAX bytes or more, or more than
 * BENEATH_MAX_DEPTH components.
 */
int beneath_bounded(const char *path);

/*
 * Which of the n allowed directories (absolute, resolved) the absolute
 * path is in, by its text alone (no system call); *ret_rel: the rest of
 * path, "" for the directory itself. -EPERM when none, -ENAMETOOLONG
 * (beneath_bounded()).
 */
int beneath_split(const char *const *allowed, size_t n, const char *path, const char **ret_rel);

/*
 * Open the absolute path beneath the allowed directory it is in (as
 * beneath_openat(); the directory itself when nothing follows it, which
 * flags must then allow). -EPERM when it is in none, -ENAMETOOLONG, else
 * as beneath_openat().
 */
int beneath_open(const char *const *allowed, size_t n, const char *path, int flags, mode_t mode);

struct open_as;

/*
 * beneath_openat() and beneath_open() with the filesystem identity as
 * (open_as.h; NULL or not set: the caller's own) on the calling thread
 * for the open only. -EACCES also when the identity could not be taken.
 */
int beneath_openat_as(const struct open_as *as, int dfd, const char *rel, int flags, mode_t mode);
int beneath_open_as(const struct open_as *as, const char *const *allowed, size_t n,
                    const char *path, int flags, mode_t mode);

#endif
