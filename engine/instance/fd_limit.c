/*
 * fd_limit: the open-files limit of a process that starts workers.
 *
 * DESIGN: a worker costs its starter about three descriptors for its life
 * (the channel's memfd, a pidfd, the FMU directory), so the usual soft
 * limit of 1024 (a shell's, systemd's default for a service) stops a
 * system near 300 instances with "Too many open files", far below the
 * 4096 components a scenario may have. The soft limit is raised to the
 * hard one, as servers commonly do (the hard limit is the administrator's
 * word; LimitNOFILE= in the unit), capped at FD_LIMIT_CAP so that nothing
 * that walks the descriptor table pays for a huge one. Every descriptor
 * fmud opens is close-on-exec or closed by close_range, so a high limit
 * never leaks into a worker, whose sandbox sets its own.
 */
#include <errno.h>
#include <sys/resource.h>

#include "engine/instance/instance.h"

#define FD_LIMIT_CAP    (1u << 20)

int inst_fd_limit_raise(uint64_t *ret_before, uint64_t *ret_now)
{
        struct rlimit rl;
        rlim_t want;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return -errno;
        if (ret_before)
                *ret_before = (uint64_t)rl.rlim_cur;
        want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > FD_LIMIT_CAP ? FD_LIMIT_CAP :
               rl.rlim_max;
        if (want > rl.rlim_cur) {
                rl.rlim_cur = want;
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                        return -errno;
        }
        if (ret_now)
                *ret_now = (uint64_t)rl.rlim_cur;
        return 0;
}
