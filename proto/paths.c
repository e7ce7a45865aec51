/* paths: the worker binary and the cache directory for daemon-less runs. */
#include "paths.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *paths_program(const char *env, const char *const rel[], size_t n)
{
        const char *e = env ? getenv(env) : NULL;
        char self[PATH_MAX], *dir, *p;
        ssize_t len;

        if (e && *e)
                return strdup(e);
        len = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (len <= 0)
                return NULL;
        self[len] = '\0';
        dir = dirname(self);
        for (size_t i = 0; i < n; i++) {
                if (asprintf(&p, "%s/%s", dir, rel[i]) < 0)
                        return NULL;
                if (access(p, X_OK) == 0)
                        return p;
                free(p);
        }
        return NULL;
}

char *paths_worker(void)
{
        static const char *const rel[] = { "fmud-worker", "../worker/fmud-worker",
                                           "../libexec/fmud/fmud-worker" };

        return paths_program("FMUD_WORKER", rel, sizeof(rel) / sizeof(rel[0]));
}

char *paths_cache(void)
{
        const char *env = getenv("FMUD_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
        const char *home = getenv("HOME");
        char *p;
        int n;

        if (env && *env)
                n = asprintf(&p, "%s", env);
        else if (xdg && *xdg == '/')
                n = asprintf(&p, "%s/fmud", xdg);
        else if (home && *home == '/')
                n = asprintf(&p, "%s/.cache/fmud", home);
        else
                n = asprintf(&p, "/tmp/fmud-cache-%u", (unsigned)getuid());
        return n < 0 ? NULL : p;
}
