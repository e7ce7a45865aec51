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
 * is created; its change time is later than that of every node of the
 * tree. Writing, truncating, chmod, renaming, adding or removing a node
 * moves the change time of the node or of its directory past it, and no
 * process can set a change time back. A reuse checks every entry of the
 * archive, and each directory on the way to it, against the seal: node
 * kind, file size, change time. No seal (a crash between publish and
 * seal, a cache of an older version) counts as changed.
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

/* Create the seal of the tree "<cache_fd>/<sha>" (0 if it exists already), or -errno. */
int cache_seal(int cache_fd, const char *sha);

/* 1: the tree is as unpacked from ar; 0: it is not, or has no seal; -errno. */
int cache_intact(int cache_fd, const struct fmu_archive *ar);

/*
 * Take the tree "<cache_fd>/<sha>" and its seal away: the seal first, then
 * the tree, renamed to a hidden name and removed. 0 (also when there was
 * none), or -errno.
 */
int cache_discard(int cache_fd, const char *sha);

#endif
