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
 * that walks the descriptor table pays for a huge one. A worker gets the
 * soft limit back as it was before exec (inst_fd_limit_child()), as
 * systemd does for its services: a library that uses select() breaks on
 * descriptors past 1024. Its sandbox, when there is one, sets its own.
 */
#include <errno.h>
#include <sys/resource.h>

#include "engine/instance/instance.h"

#define FD_LIMIT_CAP    (1u << 20)

/* The soft limit before it was raised; 0: never raised. Written before any worker starts. */
static rlim_t soft_before;

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
                rlim_t before = rl.rlim_cur;

                rl.rlim_cur = want;
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                        return -errno;
                if (!soft_before)
                        soft_before = before;
        }
        if (ret_now)
                *ret_now = (uint64_t)rl.rlim_cur;
        return 0;
}

void inst_fd_limit_child(void)
{
        struct rlimit rl;

        /* Between fork and exec: getrlimit and setrlimit are async-signal-safe system calls. */
        if (soft_before && getrlimit(RLIMIT_NOFILE, &rl) == 0) {
                rl.rlim_cur = soft_before;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }
}
