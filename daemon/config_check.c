/*
 * config_check: `fmud --check-config [FILE]` (config.h), as `nginx -t`:
 * the settings read as the daemon would read them, every problem
 * reported with its file and line, and the paths they name checked on
 * the disk, without opening a socket or creating anything.
 *
 * DESIGN: the file is read with config_load_all(), which goes on after a
 * problem; each key it sets comes back here with its line and the paths,
 * files, users and groups it names are checked at once, so that their
 * problems carry that line too. A key set twice is checked twice: both
 * lines are in the file. What the file leaves unset is derived as the
 * daemon derives it (config_finish(): the worker next to fmud, the
 * cross-key rules), reported without a line. The service runs this
 * before every start and reload (systemd/fmud.service.in).
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/zap.h"

struct check {
        const char *path;
        FILE *err;
        bool worker_set;        /* the file names the worker: checked at its line */
};

static void report(struct check *k, int line, const char *msg)
{
        if (line > 0)
                fprintf(k->err, "fmud: %s:%d: %s\n", k->path, line, msg);
        else
                fprintf(k->err, "fmud: %s: %s\n", k->path, msg);
}

static void on_problem(void *ctx, int line, const char *msg)
{
        report(ctx, line, msg);
}

/* What is wrong with path as a directory that must exist; NULL: nothing. */
static const char *bad_dir(const char *path, char *buf, size_t size)
{
        struct stat st;

        if (stat(path, &st) < 0)
                return strerror(errno);
        if (!S_ISDIR(st.st_mode))
                return "not a directory";
        (void)buf;
        (void)size;
        return NULL;
}

/* A directory fmud creates when missing (cache, state, scratch): it, or its parent, exists. */
static const char *bad_made_dir(const char *path, char *buf, size_t size)
{
        char parent[4096];
        struct stat st;
        char *slash;

        if (stat(path, &st) == 0 || errno != ENOENT || strlen(path) >= sizeof(parent))
                return bad_dir(path, buf, size);
        memcpy(parent, path, strlen(path) + 1);
        slash = strrchr(parent, '/');
        if (slash == parent)
                return NULL;
        *slash = '\0';
        if (bad_dir(parent, buf, size)) {
                snprintf(buf, size, "neither it nor its parent directory exists");
                return buf;
        }
        return NULL;
}

static const char *bad_worker(const char *path, char *buf, size_t size)
{
        struct stat st;

        (void)buf;
        (void)size;
        if (stat(path, &st) < 0)
                return strerror(errno);
        if (!S_ISREG(st.st_mode))
                return "not a regular file";
        if (access(path, X_OK) < 0)
                return "not executable";
        return NULL;
}

static const char *bad_secret(const char *path, char *buf, size_t size)
{
        char z85[ZAP_KEY_Z85_LEN + 1];

        if (zap_read_secret(path, z85, buf, size) < 0)
                return buf;
        explicit_bzero(z85, sizeof(z85));
        return NULL;
}

static const char *bad_keys(const char *path, char *buf, size_t size)
{
        uint8_t (*keys)[32] = NULL, *roles = NULL;
        size_t n = 0;
        int r = zap_read_keys_roles(path, &keys, &roles, &n, buf, size);

        free(keys);
        free(roles);
        return r < 0 ? buf : NULL;
}

/* A user or group given by name or number. */
static bool user_exists(const char *s, size_t len, bool group)
{
        char name[256];
        char *end;

        if (len == 0 || len >= sizeof(name))
                return false;
        memcpy(name, s, len);
        name[len] = '\0';
        errno = 0;
        (void)strtoul(name, &end, 10);
        if (!*end && !errno)
                return true;    /* a number: any id may be used */
        return group ? getgrnam(name) != NULL : getpwnam(name) != NULL;
}

static int on_key(void *ctx, int line, const char *section, const char *name, const char *value)
{
        static const struct {
                const char *section, *name;
                const char *(*bad)(const char *path, char *buf, size_t size);
        } paths[] = {
                { "paths", "allow", bad_dir },
                { "paths", "output_dir", bad_dir },
                { "paths", "state_dir", bad_made_dir },
                { "paths", "cache_dir", bad_made_dir },
                { "paths", "scratch_dir", bad_made_dir },
                { "paths", "worker", bad_worker },
                { "control", "server_secret_key", bad_secret },
                { "control", "authorized_keys", bad_keys },
        };
        struct check *k = ctx;
        char buf[512], msg[1024];
        const char *why;
        bool group;

        if (!*value)
                return 0;
        if (!strcmp(section, "paths") && !strcmp(name, "worker"))
                k->worker_set = true;
        for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
                if (strcmp(paths[i].section, section) || strcmp(paths[i].name, name))
                        continue;
                buf[0] = '\0';
                why = paths[i].bad(value, buf, sizeof(buf));
                if (!why)
                        return 0;
                snprintf(msg, sizeof(msg), "[%s] %s = '%s': %s", section, name, value, why);
                report(k, line, msg);
                return 1;
        }
        group = !strcmp(name, "socket_group") || (!strcmp(section, "roles") && !strcmp(name, "group"));
        if (group || (!strcmp(section, "sandbox") && !strcmp(name, "user")) ||
            (!strcmp(section, "roles") && !strcmp(name, "user"))) {
                size_t len = strcmp(section, "roles") ? strlen(value) : strcspn(value, " \t");

                if (user_exists(value, len, group))
                        return 0;
                snprintf(msg, sizeof(msg), "[%s] %s = '%s': no such %s '%.*s'", section, name,
                         value, group ? "group" : "user", (int)len, value);
                report(k, line, msg);
                return 1;
        }
        return 0;
}

int config_check(const char *path, bool required, const struct fmud_args *a, FILE *out,
                 FILE *err)
{
        struct check k = { .path = path, .err = err };
        const struct config_report rep = { .problem = on_problem, .key = on_key, .ctx = &k };
        struct fmud_config c;
        const char *why;
        char msg[512];
        int n;

        config_init(&c);
        n = config_load_all(&c, path, required, &rep, msg, sizeof(msg));
        if (n < 0) {
                fprintf(err, "fmud: %s\n", msg);
                config_fini(&c);
                return 1;
        }
        if (config_apply_args(&c, a, msg, sizeof(msg)) < 0 ||
            config_finish(&c, msg, sizeof(msg)) < 0) {
                report(&k, 0, msg);
                n++;
        } else if (!k.worker_set && (why = bad_worker(c.worker, msg, sizeof(msg)))) {
                char line[sizeof(msg) + 64];

                snprintf(line, sizeof(line), "the worker '%s': %s", c.worker, why);
                report(&k, 0, line);
                n++;
        }
        if (n == 0 && !required && access(path, F_OK) < 0 && errno == ENOENT)
                fprintf(out, "fmud: %s: not found, the built-in defaults apply: configuration OK\n",
                        path);
        else if (n == 0)
                fprintf(out, "fmud: %s: configuration OK\n", path);
        else
                fprintf(err, "fmud: %s: %d problem%s\n", path, n, n == 1 ? "" : "s");
        config_fini(&c);
        return n == 0 ? 0 : 1;
}
