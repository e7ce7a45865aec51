/*
 * cache: unpack a checked archive into "<cache_dir>/<sha256>/", atomically.
 *
 * DESIGN: entries are written into a private temporary directory beside
 * the final one (mode 0700), each created relative to an open directory fd
 * with O_NOFOLLOW and O_EXCL, one validated component at a time, so no
 * name can reach outside it. Files are made read-only and synced (each
 * fsync'ed, or one syncfs for a tree of many), then the tree is renamed
 * into place without replacing anything. A concurrent
 * unpack of the same archive either wins the rename or finds the winner's
 * directory and discards its own copy. A tree that changed since it was
 * unpacked is unpacked again (cache_check.h). Anything that fails removes the
 * temporary tree. A crash (SIGKILL, power loss) can leave a ".<sha256>.*"
 * directory behind; it is never used and may be removed at any time.
 */
#ifndef FMUD_FMI_CACHE_H
#define FMUD_FMI_CACHE_H

#include "archive_int.h"

/*
 * Unpack ar, unless "<cache_dir>/<sha256>" exists (then nothing is read or
 * written). Creates cache_dir (0755, with parents) if missing. Returns 0 with
 * *ret_dir set (caller frees); -EBADMSG when an entry's data disagrees with
 * its header (reported); *ret_hold (NULL: not wanted) the tree held in
 * use, an fd to close when done with it (cache_hold()); -ESTALE when the
 * archive file changed since it was
 * opened (reported); -ENOTDIR when the final name exists and is not a
 * directory; other -errno from the file system.
 */
int cache_unpack(const struct fmu_archive *ar, const char *cache_dir, struct ar_report *rep,
                 char **ret_dir, int *ret_hold);

#endif
