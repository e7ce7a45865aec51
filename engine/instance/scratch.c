/*
 * scratch: the per-instance scratch directory of a sandboxed worker (its
 * TMPDIR, its working directory, the one place it may write), and the
 * user a root daemon's workers run as.
 *
 * DESIGN: the daemon makes the directory before the worker starts and
 * removes it, with whatever the FMU left there, after the worker has been
 * reaped, so nothing of the FMU can race the removal. The tree walk does
 * not follow symbolic links (an FMU may leave links pointing anywhere)
 * and stays on one file system. Layout: SCRATCH_ROOT/fmud-XXXXXX when a
 * root is configured (the worker's mount namespace then shows it only
 * its own), else $TMPDIR/fmud-XXXXXX/scratch, the outer directory made
 * for this instance alone.
 */
#include <errno.h>
#include <ftw.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/instance/inst_int.h"

static int lookup(const char *name, uid_t *ret_uid, gid_t *ret_gid)
{
        struct passwd pw, *res = NULL;
        char buf[4096];

        if (getpwnam_r(name, &pw, buf, sizeof(buf), &res) != 0 || !res)
                return -ENOENT;
        *ret_uid = pw.pw_uid;
        *ret_gid = pw.pw_gid;
        return 0;
}

int sandbox_user(const struct sandbox_opts *o, uid_t *ret_uid, gid_t *ret_gid)
{
        uid_t uid = 0;
        gid_t gid = 0;

        if (geteuid() != 0) {
                *ret_uid = 0;
                *ret_gid = 0;
                return 0;
        }
        if (o->uid) {
                uid = o->uid;
                gid = o->gid;
                if (!gid) {
                        struct passwd pw, *res = NULL;
                        char buf[4096];

                        /* The user's own group, else nogroup: never root's group. */
                        gid = getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res &&
                              pw.pw_gid ? pw.pw_gid : 65534;
                }
        } else if (lookup("fmud", &uid, &gid) < 0 && lookup("nobody", &uid, &gid) < 0) {
                return -ENOENT;
        }
        if (uid == 0 || uid == (uid_t)-1 || gid == (gid_t)-1)
                return -EINVAL;
        *ret_uid = uid;
        *ret_gid = gid ? gid : 65534;
        return 0;
}

int scratch_make(struct inst *inst, const struct sandbox_opts *o, uid_t uid, gid_t gid)
{
        const char *tmp = getenv("TMPDIR");
        char *base = NULL, *dir = NULL;
        int r;

        if (o->scratch_root) {
                if (asprintf(&dir, "%s/fmud-XXXXXX", o->scratch_root) < 0)
                        return -ENOMEM;
        } else {
                if (!tmp || tmp[0] != '/')
                        tmp = "/tmp";
                if (asprintf(&base, "%s/fmud-XXXXXX", tmp) < 0)
                        return -ENOMEM;
                if (!mkdtemp(base)) {
                        r = -errno;
                        free(base);
                        return r;
                }
                /* Others may pass through to the scratch dir (a worker of another uid). */
                if (chmod(base, 0711) < 0 || asprintf(&dir, "%s/scratch", base) < 0) {
                        r = dir ? -errno : -ENOMEM;
                        goto out_base;
                }
        }
        if (base ? mkdir(dir, 0700) < 0 : !mkdtemp(dir)) {
                r = -errno;
                goto out_base;
        }
        if (uid && chown(dir, uid, gid) < 0) {
                r = -errno;
                (void) rmdir(dir);
                goto out_base;
        }
        /*
         * By its canonical path: the worker's mount namespace binds it back
         * at that path under a private /tmp (worker/sandbox_ns.c), where a
         * symbolic link on the way (TMPDIR=/tmp/link) would not be.
         */
        {
                char *real = realpath(dir, NULL);

                if (!real) {
                        r = -errno;
                        (void) rmdir(dir);
                        goto out_base;
                }
                free(dir);
                dir = real;
        }
        inst->scratch_dir = dir;
        inst->scratch_base = base;
        return 0;

out_base:
        free(dir);
        if (base) {
                (void) rmdir(base);
                free(base);
        }
        return r;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
        (void) st;
        (void) f;
        if (type == FTW_DP)
                (void) rmdir(path);
        else
                (void) unlink(path);
        return 0;
}

void scratch_remove(struct inst *inst)
{
        if (inst->scratch_dir) {
                (void) nftw(inst->scratch_dir, remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
                free(inst->scratch_dir);
                inst->scratch_dir = NULL;
        }
        if (inst->scratch_base) {
                (void) rmdir(inst->scratch_base);
                free(inst->scratch_base);
                inst->scratch_base = NULL;
        }
}
