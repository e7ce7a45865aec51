/*
 * dirs: the directories fmud needs, made before it binds or announces
 * anything, so that a daemon that says it serves can serve.
 *
 * DESIGN: every directory the settings name (config.h) is made with its
 * missing parents, each with the mode it is meant to have whatever the
 * umask: the cache 0750 (root:workers' group for a root daemon with a
 * sandbox), the state directory and its results/ 0755, the scratch root
 * 0700, the run directory 0700 (control_sock.c gives it the socket
 * group's 0750 when it holds the sockets), the directories above the
 * ipc sockets 0755 (the socket's own directory is control_sock.c's).
 * What already exists is left as it is. A failure names the path and the
 * reason and stops the daemon before it serves. The directories made
 * for this run only (run directory, scratch root, parents of the
 * sockets) are remembered and removed, newest first and only when empty,
 * by dirs_remove(); the cache and state outlive the daemon.
 *
 * The main thread only.
 */
#ifndef FMUD_DAEMON_DIRS_H
#define FMUD_DAEMON_DIRS_H

#include <stddef.h>

#include "daemon/config.h"

#define DIRS_MAX_MADE   32

struct dirs {
        char *made[DIRS_MAX_MADE];      /* this run's, oldest first */
        size_t n_made;
};

/*
 * Make cfg's directories (see above). Returns 0, or -errno with err
 * saying which path and why ("mkdir('/x/y'): Not a directory"). What was
 * made before a failure stays in d for dirs_remove().
 */
int dirs_make(const struct fmud_config *cfg, struct dirs *d, char *err, size_t errlen);

/* Remove the run's directories d made that are empty now; d is emptied. */
void dirs_remove(struct dirs *d);

#endif
