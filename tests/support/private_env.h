/*
 * Test helper: a private environment for the programs a test starts
 * (fmuctl, fmud, fmud-worker), so that a test never depends on what else
 * runs on the machine or on the developer's shell.
 *
 * DESIGN: fmuctl and fmud find their default endpoints from
 * RUNTIME_DIRECTORY, else /run/fmud (root) or $XDG_RUNTIME_DIR/fmud
 * (proto/endpoint.h); fmuctl takes $FMUD_ENDPOINT, $FMUD_SERVER_KEY and
 * $FMUD_KEY before those, and the programs it starts from $FMUD_DAEMON and
 * $FMUD_WORKER; FMUs are unpacked in $FMUD_CACHE_DIR, else below
 * $XDG_CACHE_HOME or /var/cache/fmud (root). All of them are set to
 * folders below the test's own, or removed.
 */
#ifndef FMUD_TESTS_PRIVATE_ENV_H
#define FMUD_TESTS_PRIVATE_ENV_H

/*
 * In this process's environment (inherited by what it starts): the run
 * directories dir/env/run (RUNTIME_DIRECTORY) and dir/env/xdg
 * (XDG_RUNTIME_DIR), both 0700 and empty, the cache dir/env/cache
 * (FMUD_CACHE_DIR, XDG_CACHE_HOME; 0755), and no FMUD_ENDPOINT,
 * FMUD_SERVER_KEY, FMUD_KEY, FMUD_DAEMON, FMUD_WORKER or CACHE_DIRECTORY.
 * dir becomes 0711, so that the workers of a root daemon (another user)
 * reach the cache. A test that sets one of these variables for itself does
 * so afterwards. Returns 0 or -errno.
 */
int private_env(const char *dir);

#endif
