/* dirs: the directories fmud needs, made before it serves (dirs.h). */
#include "dirs.h"

#include <errno.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/control_log.h"
#include "engine/instance/instance.h"

#define PARENT_MODE     0755

static int remember(struct dirs *d, const char *path)
{
        if (d->n_made >= DIRS_MAX_MADE)
                return 0;       /* left behind at exit, no harm */
        d->made[d->n_made] = strdup(path);
        if (!d->made[d->n_made])
                return -ENOMEM;
        d->n_made++;
        return 0;
}

/*
 * One directory: made with mode exactly (not through the umask), or
 * already a directory. *ret_made: whether we made it. 0 or -errno with err.
 */
static int make_one(const char *path, mode_t mode, bool *ret_made, char *err, size_t errlen)
{
        struct stat st;
        int r;

        *ret_made = false;
        if (mkdir(path, mode) == 0) {
                *ret_made = true;
                if (chmod(path, mode) == 0)
                        return 0;
                r = -errno;
                snprintf(err, errlen, "chmod('%s', %04o): %s", path, (unsigned)mode, strerror(-r));
                return r;
        }
        r = -errno;
        if (r == -EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
                return 0;
        if (r == -EEXIST)
                r = -ENOTDIR;
        snprintf(err, errlen, "mkdir('%s'): %s", path, strerror(-r));
        return r;
}

/*
 * path and its missing parents: the parents PARENT_MODE (run_dir, when
 * one of them, 0700), path itself mode. Those made are remembered in d
 * when transient (this run's only).
 */
static int make_path(struct dirs *d, const char *path, mode_t mode, bool transient,
                     const char *run_dir, char *err, size_t errlen)
{
        char buf[4096], why[4200];
        size_t len = strlen(path);
        bool made;
        int r;

        if (path[0] != '/' || len >= sizeof(buf)) {
                snprintf(err, errlen, "'%s': %s", path, path[0] != '/' ? "not an absolute path" :
                                                                          strerror(ENAMETOOLONG));
                return path[0] != '/' ? -EINVAL : -ENAMETOOLONG;
        }
        memcpy(buf, path, len + 1);
        while (len > 1 && buf[len - 1] == '/')
                buf[--len] = '\0';
        for (char *p = buf + 1;; p++) {
                char c = *p;
                bool leaf = c == '\0', run;

                if (c != '/' && !leaf)
                        continue;
                *p = '\0';
                run = run_dir && !strcmp(buf, run_dir);
                r = make_one(buf, leaf ? mode : run ? 0700 : PARENT_MODE, &made, why,
                             sizeof(why));
                if (r == 0 && made && (transient || run))
                        r = remember(d, buf);
                if (r < 0) {
                        /* The directory asked for, then the step that failed. */
                        snprintf(err, errlen, "'%s': %s", path,
                                 r == -ENOMEM ? strerror(ENOMEM) : why);
                        return r;
                }
                if (leaf)
                        return 0;
                *p = c;
        }
}

/*
 * The unpacked FMUs are the clients' models: a root daemon's cache is for
 * its workers' group alone (0750 root:GROUP), not every local user. A
 * daemon of another user keeps its cache as it is (its own, in its home).
 */
static void cache_private(const struct fmud_config *cfg)
{
        struct sandbox_opts o = { 0 };
        struct passwd pw, *res = NULL;
        char buf[4096];
        uid_t uid = 0;
        gid_t gid = 0;
        int r;

        if (geteuid() != 0 || cfg->sandbox == CONFIG_SANDBOX_OFF)
                return;
        if (cfg->sandbox_user && getpwnam_r(cfg->sandbox_user, &pw, buf, sizeof(buf), &res) == 0 &&
            res) {
                o.uid = pw.pw_uid;
                o.gid = pw.pw_gid;
        }
        r = sandbox_user(&o, &uid, &gid);
        if (r == 0 && (chown(cfg->cache_dir, 0, gid) < 0 || chmod(cfg->cache_dir, 0750) < 0))
                r = -errno;
        if (r < 0)
                log_warn("cache '%s': cannot make it readable by the workers' group alone: %s, "
                         "ignoring", cfg->cache_dir, strerror(-r));
}

/* The directory of an ipc endpoint's socket file into buf; false for another endpoint. */
static bool socket_parent(const char *ep, char *buf, size_t size)
{
        const char *slash;

        if (!ep || strncmp(ep, "ipc:///", 7))
                return false;
        slash = strrchr(ep + 6, '/');
        /* The socket's own directory is control_sock.c's (mode, group); its parents are ours. */
        if (slash == ep + 6 || (size_t)(slash - (ep + 6)) >= size)
                return false;
        snprintf(buf, size, "%.*s", (int)(slash - (ep + 6)), ep + 6);
        slash = strrchr(buf, '/');
        if (slash == buf)
                return false;
        buf[slash - buf] = '\0';
        return true;
}

int dirs_make(const struct fmud_config *cfg, struct dirs *d, char *err, size_t errlen)
{
        const char *eps[] = { cfg->endpoint, cfg->pub_endpoint };
        char buf[4096];
        int r;

        for (size_t i = 0; i < sizeof(eps) / sizeof(eps[0]); i++)
                if (socket_parent(eps[i], buf, sizeof(buf))) {
                        r = make_path(d, buf, PARENT_MODE, true, cfg->run_dir, err, errlen);
                        if (r < 0)
                                return r;
                }
        /* The cache outlives us; the scratch root is ours while we run. */
        r = make_path(d, cfg->cache_dir, 0750, false, cfg->run_dir, err, errlen);
        if (r < 0)
                return r;
        cache_private(cfg);
        r = make_path(d, cfg->state_dir, 0755, false, cfg->run_dir, err, errlen);
        if (r < 0)
                return r;
        if (snprintf(buf, sizeof(buf), "%s/results", cfg->state_dir) >= (int)sizeof(buf)) {
                snprintf(err, errlen, "state directory '%s': %s", cfg->state_dir,
                         strerror(ENAMETOOLONG));
                return -ENAMETOOLONG;
        }
        r = make_path(d, buf, 0755, false, cfg->run_dir, err, errlen);
        if (r < 0)
                return r;
        return make_path(d, cfg->scratch_dir, 0700, true, cfg->run_dir, err, errlen);
}

void dirs_remove(struct dirs *d)
{
        while (d->n_made) {
                char *p = d->made[--d->n_made];

                (void)rmdir(p);
                free(p);
        }
}
