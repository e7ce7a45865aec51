/*
 * worker_env: the environment a daemon's workers start with. Workers start
 * from a clean environment (DESIGN.md: a worker runs untrusted code, and
 * the daemon's own environment is none of its business), but FMUs may need
 * some of it: a licence server (LM_LICENSE_FILE, a vendor's variable), a
 * tool's runtime. [sandbox] pass_env (or --pass-env) names the variables
 * of the daemon's environment that every worker gets; '*' passes all of
 * it but the service manager's (NOTIFY_SOCKET, LISTEN_*, ...), which speak
 * for the daemon (fmuctl's private daemon, which runs as its user, passes
 * '*', as an in-process importer would have it all). A worker without PATH gets a default one;
 * a sandboxed worker's HOME and TMPDIR are its scratch directory
 * (engine/instance/spawn.c).
 */
#ifndef FMUD_DAEMON_WORKER_ENV_H
#define FMUD_DAEMON_WORKER_ENV_H

#include <stddef.h>

/* Longest pass_env value, and most names in it. */
#define WORKER_ENV_MAX_LEN      4096u
#define WORKER_ENV_MAX_NAMES    128u

/*
 * Whether s is a pass_env value: names of environment variables
 * ([A-Za-z_][A-Za-z0-9_]*) separated by spaces or commas, or '*'. NULL:
 * it is; else why not.
 */
const char *worker_env_bad(const char *s);

/*
 * The workers' environment from 'from' (the daemon's environ) and pass (a
 * value worker_env_bad() accepts; NULL or empty: none): a NULL-terminated
 * array whose strings are borrowed from 'from' but a default PATH. NULL:
 * out of memory. Free the array alone.
 */
char **worker_env_new(const char *pass, char *const *from);

#endif
