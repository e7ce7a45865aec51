/*
 * cache_seal: whether an unpacked copy in the cache is still what its
 * archive unpacked to.
 *
 * DESIGN: an FMU must not write into its unpacked copy (FMI 3.0 section
 * 2.5.1: "The FMU instance must not write to or delete the directory or
 * parts of it"), and in the sandbox it cannot; but a worker without one,
 * run by root, can: the next run would then start from the FMU's own
 * leftovers instead of its archive's files. When a copy is published its
 * seal, "<sha256>.seal" beside it, records the latest ctime of its root,
 * of every entry of the archive and of every entry's parent. Any change
 * since (a write, a file added or removed, a chmod) moves one of those
 * ctimes past it, which no process can set back; an entry missing, of
 * another kind or of another size tells it too. A changed copy is set
 * aside (renamed, then removed) and unpacked again. A copy without a seal
 * (one of an older fmud) is sealed as it is.
 */
#ifndef FMUD_FMI_CACHE_SEAL_H
#define FMUD_FMI_CACHE_SEAL_H

#include "archive_int.h"

/* Seal the published copy "<cache_fd>/<sha256>" of ar. 0 or -errno. */
int cache_seal_write(int cache_fd, const struct fmu_archive *ar);

/* 0: the copy is as sealed (or was unsealed, and is sealed now); 1: it changed; -errno. */
int cache_seal_check(int cache_fd, const struct fmu_archive *ar);

/*
 * Take the changed copy out of the cache: rename it away (a copy another
 * process already took away is fine), then remove it. 0 or -errno.
 */
int cache_set_aside(int cache_fd, const char *sha256);

#endif
