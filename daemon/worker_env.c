/*
 * worker_env: which of the daemon's environment its workers get (see
 * worker_env.h).
 */
#include "daemon/worker_env.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define SEPARATORS      " \t,"

static const char default_path[] = "PATH=/usr/local/bin:/usr/bin:/bin";

static bool name_char(char c, bool first)
{
        return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
               (!first && c >= '0' && c <= '9');
}

const char *worker_env_bad(const char *s)
{
        size_t names = 0;

        if (!s)
                return NULL;
        if (strlen(s) > WORKER_ENV_MAX_LEN)
                return "longer than 4096 characters";
        for (s += strspn(s, SEPARATORS); *s; s += strspn(s, SEPARATORS)) {
                size_t len = strcspn(s, SEPARATORS);

                if (++names > WORKER_ENV_MAX_NAMES)
                        return "more than 128 names";
                if (len == 1 && *s == '*') {
                        s++;
                        continue;
                }
                for (size_t i = 0; i < len; i++)
                        if (!name_char(s[i], i == 0))
                                return "names environment variables: letters, digits and "
                                       "underscores, not starting with a digit, or '*' for all";
                s += len;
        }
        return NULL;
}

/*
 * The service manager's variables, which speak for the daemon itself: a
 * worker with NOTIFY_SOCKET could tell systemd the daemon is ready or
 * stopping. '*' passes everything but these; a name passes them.
 */
static bool the_daemons(const char *e, size_t len)
{
        static const char *const names[] = {
                "NOTIFY_SOCKET", "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES",
                "CREDENTIALS_DIRECTORY", "INVOCATION_ID", "JOURNAL_STREAM", "WATCHDOG_PID",
                "WATCHDOG_USEC", "MAINPID", "MANAGERPID", "SYSTEMD_EXEC_PID",
        };

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (strlen(names[i]) == len && !strncmp(names[i], e, len))
                        return true;
        return false;
}

/* Whether the variable of entry e ("NAME=value") is one of pass's names, or pass has '*'. */
static bool passed(const char *pass, const char *e)
{
        size_t elen = strcspn(e, "=");
        bool all = false;

        for (const char *s = pass + strspn(pass, SEPARATORS); *s; s += strspn(s, SEPARATORS)) {
                size_t len = strcspn(s, SEPARATORS);

                if (len == elen && !strncmp(s, e, len))
                        return true;
                all |= len == 1 && *s == '*';
                s += len;
        }
        return all && !the_daemons(e, elen);
}

char **worker_env_new(const char *pass, char *const *from)
{
        size_t n = 0, k = 0;
        bool path = false;
        char **env;

        while (from && from[n])
                n++;
        env = calloc(n + 2, sizeof(*env));
        if (!env)
                return NULL;
        for (size_t i = 0; pass && i < n; i++) {
                if (!strchr(from[i], '=') || !passed(pass, from[i]))
                        continue;
                path |= !strncmp(from[i], "PATH=", 5);
                env[k++] = from[i];
        }
        if (!path)
                env[k++] = (char *)default_path;
        env[k] = NULL;
        return env;
}
