/*
 * sandbox_privs: the worker's privileges (sandbox.h, layer "privileges"):
 * no_new_privs, and a root daemon's worker turned into an unprivileged
 * user with no capabilities at all.
 *
 * DESIGN: the order is the classic one: no_new_privs (so nothing exec'd
 * or loaded can gain privileges back), empty the capability bounding set
 * while CAP_SETPCAP is still there, drop the supplementary groups, then
 * the gid, then the uid (after setresuid from 0 to non-zero the kernel
 * clears the permitted and effective sets); a worker that is not root but
 * holds capabilities (the owner of a user namespace it made) clears them
 * with capset. The result is checked, not assumed: the layer is active
 * only when the effective and permitted sets read back empty.
 */
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "worker/sandbox_int.h"

static int cap_sets(unsigned long long *ret_eff, unsigned long long *ret_prm)
{
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2] = { 0 };

        if (syscall(SYS_capget, &h, d) < 0)
                return -errno;
        *ret_eff = (unsigned long long)d[1].effective << 32 | d[0].effective;
        *ret_prm = (unsigned long long)d[1].permitted << 32 | d[0].permitted;
        return 0;
}

static int clear_caps(void)
{
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2] = { 0 };

        return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

static void drop_bounding(void)
{
        /* Fails with EPERM without CAP_SETPCAP, EINVAL past the last capability. */
        for (int c = 0; c < 64; c++)
                if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno == EINVAL)
                        break;
        (void) prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
}

static int become(uid_t uid, gid_t gid, char *buf, size_t size)
{
        if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0) {
                int r = -errno;

                snprintf(buf, size, "becoming uid %u gid %u: %s", (unsigned)uid, (unsigned)gid,
                         strerror(-r));
                return r;
        }
        return 0;
}

int sandbox_privileges(const struct sandbox_args *a, char *buf, size_t size)
{
        unsigned long long eff = 0, prm = 0;
        bool was_root = geteuid() == 0;
        int r;

        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
                r = -errno;
                snprintf(buf, size, "PR_SET_NO_NEW_PRIVS: %s", strerror(-r));
                return r;
        }
        drop_bounding();
        if (was_root) {
                if (a->opts.uid == 0) {
                        snprintf(buf, size, "no_new_privs, but still root: no user to run as");
                        (void) clear_caps();
                        return -EPERM;
                }
                r = become(a->opts.uid, a->opts.gid, buf, size);
                if (r < 0)
                        return r;
        }
        /* Not root (any more), yet capable: the owner of our own user namespace. */
        r = cap_sets(&eff, &prm);
        if (r == 0 && (eff || prm))
                r = clear_caps();
        if (r == 0)
                r = cap_sets(&eff, &prm);
        if (r < 0 || eff || prm) {
                snprintf(buf, size, "capabilities left (effective %#llx): %s", eff,
                         r < 0 ? strerror(-r) : "capset did not clear them");
                return r < 0 ? r : -EPERM;
        }
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        if (was_root)
                snprintf(buf, size, "no_new_privs, uid %u gid %u, no groups, no capabilities",
                         (unsigned)getuid(), (unsigned)getgid());
        else
                snprintf(buf, size, "no_new_privs, uid %u (not root), no capabilities",
                         (unsigned)getuid());
        return 0;
}
