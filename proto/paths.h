/*
 * paths: where fmud and fmuctl find what they run: the fmud-worker
 * binary and the FMU cache directory.
 */
#ifndef FMUD_PROTO_PATHS_H
#define FMUD_PROTO_PATHS_H

#include <stddef.h>

/*
 * A program: $env when set (env may be NULL), else the first of rel[]
 * (paths relative to this program's directory) that is executable.
 * Returns a malloc'ed path, or NULL when none exists.
 */
char *paths_program(const char *env, const char *const rel[], size_t n);

/*
 * The fmud-worker to start: $FMUD_WORKER, else next to this program, else
 * ../worker/fmud-worker (a build tree), else ../libexec/fmud/fmud-worker
 * (an installation). Returns a malloc'ed path, or NULL when none exists.
 */
char *paths_worker(void);

/*
 * The cache where FMUs are unpacked: $FMUD_CACHE_DIR, else
 * $XDG_CACHE_HOME/fmud, else $HOME/.cache/fmud, else /tmp/fmud-cache-UID.
 * Returns a malloc'ed path (not created), or NULL when out of memory.
 */
char *paths_cache(void);

#endif
