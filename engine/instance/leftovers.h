/*
 * leftovers: what a daemon that died without its shutdown (SIGKILL, a
 * crash, the OOM killer) left below its scratch root, found and removed
 * by the next daemon's start.
 *
 * DESIGN: every worker started with a scratch root is recorded in
 * ROOT/.workers/PID (the worker's start time from /proc/PID/stat and the
 * name of its scratch directory), written by the daemon after fork and
 * removed after the worker is reaped. The directory is the daemon's own
 * (a strict worker's mount namespace shows it only its own scratch
 * directory). A worker is its own process group (spawn.c), so the
 * record names the group too. PR_SET_PDEATHSIG kills a worker when its
 * daemon dies, but not at once when many die together; the next start
 * kills (SIGKILL, group and process) every recorded worker that still
 * runs with the recorded start time (never a reused pid) and whose parent
 * is not a running fmud (a daemon sharing the root keeps its workers),
 * waits a bounded time for them to exit, then removes every scratch
 * directory (ROOT/fmud-XXXXXX) that no kept worker owns. The removal
 * never follows a symbolic link and stays on the root's file system.
 */
#ifndef FMUD_ENGINE_LEFTOVERS_H
#define FMUD_ENGINE_LEFTOVERS_H

#include <stddef.h>
#include <sys/types.h>

#define LEFTOVERS_REC_DIR       ".workers"      /* below the scratch root */
#define LEFTOVERS_WAIT_MS       5000            /* for killed workers to exit */

/*
 * Record worker pid, whose scratch directory is scratch (NULL: none),
 * below root. *ret_path (malloc'ed) is the record to pass to
 * leftovers_forget(). 0 or -errno.
 */
int leftovers_record(const char *root, pid_t pid, const char *scratch, char **ret_path);

/* Remove a record (the worker is reaped) and free path; NULL is a no-op. */
void leftovers_forget(char *path);

struct leftovers_report {
        size_t killed;          /* recorded workers killed */
        size_t stuck;           /* of those, still not gone after LEFTOVERS_WAIT_MS */
        size_t kept;            /* recorded workers of a running daemon, left alone */
        size_t removed;         /* scratch directories removed */
        size_t failed;          /* scratch directories that could not be removed whole */
};

/* At start, before any worker: kill and remove what a dead daemon left. 0 or -errno. */
int leftovers_sweep(const char *root, struct leftovers_report *ret);

#endif
