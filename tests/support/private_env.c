/* Test helper: a private environment for the programs a test starts (private_env.h). */
#include "private_env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* dir/name made with mode (it must not exist yet), then exported as each of vars. */
static int export_dir(const char *dir, const char *name, mode_t mode, const char *const vars[])
{
        char *path;
        int r = 0;

        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        /* mkdir's mode goes through the umask: chmod says exactly what is meant. */
        if (mkdir(path, mode) < 0 || chmod(path, mode) < 0)
                r = -errno;
        for (size_t i = 0; r == 0 && vars[i]; i++)
                if (setenv(vars[i], path, 1) < 0)
                        r = -errno;
        free(path);
        return r;
}

int private_env(const char *dir)
{
        static const char *const gone[] = { "FMUD_ENDPOINT", "FMUD_SERVER_KEY", "FMUD_KEY",
                                            "FMUD_DAEMON", "FMUD_WORKER", "CACHE_DIRECTORY" };
        static const char *const none[] = { NULL };
        char *env;
        int r;

        if (asprintf(&env, "%s/env", dir) < 0)
                return -ENOMEM;
        /* Searchable by all: the workers of a root daemon run as another user, and read the cache. */
        r = chmod(dir, 0711) < 0 ? -errno : 0;
        if (r == 0)
                r = export_dir(dir, "env", 0711, none);
        if (r == 0)
                r = export_dir(env, "run", 0700, (const char *const[]){ "RUNTIME_DIRECTORY", NULL });
        if (r == 0)
                r = export_dir(env, "xdg", 0700, (const char *const[]){ "XDG_RUNTIME_DIR", NULL });
        if (r == 0)
                r = export_dir(env, "cache", 0755,
                               (const char *const[]){ "FMUD_CACHE_DIR", "XDG_CACHE_HOME", NULL });
        free(env);
        for (size_t i = 0; r == 0 && i < sizeof(gone) / sizeof(gone[0]); i++)
                if (unsetenv(gone[i]) < 0)
                        r = -errno;
        return r;
}
