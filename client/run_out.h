/*
 * run_out: the results file a daemon on this machine wrote for a session
 * of fmuctl run --out -, copied to a stream and then removed (run_out.c).
 */
#ifndef FMUD_CLIENT_RUN_OUT_H
#define FMUD_CLIENT_RUN_OUT_H

#include <stdint.h>
#include <stdio.h>

/*
 * Copy the daemon's results file at path for session to `to`, then remove
 * it and its directory. path must be the file the daemon makes for one
 * load, STATE/results/session-<session>-XXXXXX/results.csv, the file and
 * its directory this user's own: any other path, a link, or a file of
 * someone else is refused (-EPERM) and left as it is. 0, or -errno with
 * why in err.
 */
int run_out_take(const char *path, uint64_t session, FILE *to, char *err, size_t size);

#endif
