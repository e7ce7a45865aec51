/*
 * open_as: open a file with another user's filesystem identity, on the
 * calling thread only, so that a root daemon reads and writes a client's
 * files with the client's rights and no more.
 *
 * DESIGN: open_as_enter() sets the thread's fsgid, supplementary groups
 * and fsuid with the raw system calls (SYS_setfsgid, SYS_setgroups,
 * SYS_setfsuid): the kernel keeps them per thread, where glibc's
 * setgroups() would change every thread of the daemon. When the fsuid
 * leaves 0 the kernel drops CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and
 * CAP_FOWNER from the thread's effective set, so the open is checked as
 * the user's own would be; open_as_leave() sets the daemon's identity
 * back (fsuid 0 raises those capabilities again). Only a daemon running
 * as root switches: a daemon an ordinary user runs opens with that
 * user's rights, which are all it has. Each set is read back, and an
 * identity that did not take refuses the open.
 */
#ifndef FMUD_ENGINE_OPEN_AS_H
#define FMUD_ENGINE_OPEN_AS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define OPEN_AS_MAX_GROUPS 64

/* Who a file is opened as. set false: the caller's own identity. */
struct open_as {
        bool set;
        uid_t uid;
        gid_t gid;
        int n_groups;                   /* supplementary groups, <= OPEN_AS_MAX_GROUPS */
        gid_t groups[OPEN_AS_MAX_GROUPS];
};

/* The thread's identity before open_as_enter(), for open_as_leave(). */
struct open_as_saved {
        bool switched;
        uid_t fsuid;
        gid_t fsgid;
        int n_groups;
        gid_t groups[OPEN_AS_MAX_GROUPS];
};

/*
 * The identity of uid with primary group gid and the supplementary groups
 * the group database gives uid's name (getgrouplist(); none when uid has
 * no name). Not set when it is the caller's own, or the caller is not
 * root (nothing to switch). 0, or -errno.
 */
int open_as_user(struct open_as *as, uid_t uid, gid_t gid);

/* Switch the calling thread to as (NULL or not set: nothing). 0, or -EACCES. */
int open_as_enter(const struct open_as *as, struct open_as_saved *saved);

/* Back to the identity open_as_enter() saved. */
void open_as_leave(struct open_as_saved *saved);

#endif
