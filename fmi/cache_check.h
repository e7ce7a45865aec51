/*
 * cache_check: whether a cached tree is still what was unpacked into it,
 * and taking away one that is not.
 *
 * An FMU that runs without the sandbox (fmuctl run --local, a daemon with
 * --sandbox off) may write into its own unpacked tree, into resources/
 * most often, and root ignores the read-only modes. The next run would
 * then start from what the last one left. FMI 3.0 section 2.5.1 does not
 * allow it; FMI 2.0 is silent, and exports do it.
 *
 * DESIGN: after a tree is published, the file "<cache_dir>/<sha256>.seal"
 * is created, made again until its change time is strictly later than
 * that of the tree's root, the node changed last (on a file system with
 * coarse times, such as 1 s, that takes up to one tick). Writing,
 * truncating, chmod, renaming, adding or removing a node from then on
 * gives the node or its directory a change time at or after the seal's,
 * and no process can set a change time back. A reuse checks every entry
 * of the archive, and each directory on the way to it, against the seal:
 * node kind, file size, change time before the seal's. No seal (a crash
 * between publish and seal, a cache of an older version) counts as
 * changed.
 *
 * A process that uses a tree holds a shared flock on its root directory
 * (cache_hold()) for as long as it does. A changed tree is renamed out of
 * the way at once, so its name takes a fresh tree, and removed only when
 * no process holds it; else it stays behind, hidden, and a later discard
 * of the same archive removes it once it is free.
 *
 * The check follows the archive's own names, never the tree's listing,
 * so a changed tree cannot choose its depth; taking one away walks it,
 * at most CACHE_DISCARD_DEPTH levels deep (below that, nodes stay behind
 * under a name starting with '.', which may be removed at any time). The
 * seal and the lock file beside it (cache.c) stay as long as the tree.
 */
#ifndef FMUD_FMI_CACHE_CHECK_H
#define FMUD_FMI_CACHE_CHECK_H

#include "archive_int.h"

#define CACHE_DISCARD_DEPTH 128

/* Seal the tree "<cache_fd>/<sha>", whose root is root_fd, unsealed. 0 or -errno. */
int cache_seal(int cache_fd, const char *sha, int root_fd);

/*
 * Open and hold the tree "<cache_fd>/<sha>": its root directory's fd with a
 * shared flock, for as long as the caller uses the tree (closing the fd
 * lets go). -ENOENT when there is none, or -errno.
 */
int cache_hold(int cache_fd, const char *sha);

/* 1: the tree held as root_fd is as unpacked from ar; 0: it is not, or has no seal; -errno. */
int cache_intact(int cache_fd, const struct fmu_archive *ar, int root_fd);

/*
 * Take the tree "<cache_fd>/<sha>" and its seal away: the seal first, then
 * the tree, renamed to a hidden name and removed. 0 (also when there was
 * none), or -errno.
 */
int cache_discard(int cache_fd, const char *sha);

#endif
