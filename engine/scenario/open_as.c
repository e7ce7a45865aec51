/*
 * open_as: another user's filesystem identity on the calling thread
 * (open_as.h).
 */
#include "engine/scenario/open_as.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int open_as_user(struct open_as *as, uid_t uid, gid_t gid)
{
        struct passwd pw, *res = NULL;
        char buf[4096];
        int n = OPEN_AS_MAX_GROUPS;

        memset(as, 0, sizeof(*as));
        if (geteuid() != 0 || (uid == geteuid() && gid == getegid()))
                return 0;
        as->set = true;
        as->uid = uid;
        as->gid = gid;
        if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) != 0 || !res)
                return 0;
        /* More groups than fit: the first ones only (a group can only add rights). */
        if (getgrouplist(res->pw_name, gid, as->groups, &n) < 0)
                n = OPEN_AS_MAX_GROUPS;
        as->n_groups = n < 0 ? 0 : n > OPEN_AS_MAX_GROUPS ? OPEN_AS_MAX_GROUPS : n;
        return 0;
}

/* The thread's fsuid (fsgid) now: a set to -1 changes nothing and answers the current one. */
static uid_t fsuid_now(void)
{
        return (uid_t)syscall(SYS_setfsuid, (uid_t)-1);
}

static gid_t fsgid_now(void)
{
        return (gid_t)syscall(SYS_setfsgid, (gid_t)-1);
}

int open_as_enter(const struct open_as *as, struct open_as_saved *saved)
{
        saved->switched = false;
        if (!as || !as->set)
                return 0;
        saved->fsuid = fsuid_now();
        saved->fsgid = fsgid_now();
        saved->n_groups = getgroups(OPEN_AS_MAX_GROUPS, saved->groups);
        if (saved->n_groups < 0)
                return -EACCES;
        saved->switched = true;
        /* Groups first: once the fsuid is not 0, the thread may no longer change them. */
        (void) syscall(SYS_setfsgid, as->gid);
        if (fsgid_now() != as->gid ||
            syscall(SYS_setgroups, (size_t)as->n_groups, as->groups) < 0)
                goto fail;
        (void) syscall(SYS_setfsuid, as->uid);
        if (fsuid_now() != as->uid)
                goto fail;
        return 0;
fail:
        open_as_leave(saved);
        return -EACCES;
}

void open_as_leave(struct open_as_saved *saved)
{
        if (!saved->switched)
                return;
        (void) syscall(SYS_setfsuid, saved->fsuid);
        (void) syscall(SYS_setgroups, (size_t)saved->n_groups, saved->groups);
        (void) syscall(SYS_setfsgid, saved->fsgid);
        saved->switched = false;
}
