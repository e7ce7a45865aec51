/*
 * mlock: fmud-worker --mlock, the worker's memory locked with
 * mlockall(MCL_CURRENT | MCL_FUTURE) for a real-time session
 * (docs/realtime.md), and the outcome reported to the daemon before HELLO
 * (CALL_EV_MLOCK, worker/call_ops.h).
 *
 * DESIGN: the lock is taken first thing, before the sandbox: while the
 * worker still has its daemon's privileges (a root daemon's CAP_IPC_LOCK)
 * and before seccomp, whose allowlist has no mlockall. MCL_FUTURE locks
 * what is mapped later too (the FMU's library, its heap, thread stacks),
 * and once the privileges are dropped the kernel checks each such mapping
 * against RLIMIT_MEMLOCK, failing it with EAGAIN: an FMU's next malloc,
 * or the worker's own channel, would fail. So a worker that may raise the
 * limit first sets it to its address-space bound (the sandbox's
 * RLIMIT_AS; none without a sandbox), and a worker whose limit stays
 * below that bound and that will not keep CAP_IPC_LOCK (every sandboxed
 * one: the sandbox drops it) does not lock at all and reports ENOMEM, as
 * the kernel would for the first mapping past the limit. The service
 * gives LimitMEMLOCK=infinity (systemd/fmud.service). Otherwise a refusal
 * (ENOMEM: more mapped than RLIMIT_MEMLOCK allows, EPERM) is the kernel's
 * word, reported as is; whether it refuses the session is the daemon's
 * call. Nothing is undone: the lock ends with the worker.
 *
 * A daemon with a locked-memory budget gives each worker its share
 * (--mlock-limit, [realtime] worker_mlock_bytes): the worker sets both
 * RLIMIT_MEMLOCK limits to it and gives up CAP_IPC_LOCK before it locks,
 * so that the kernel holds it to that share from the first page on
 * (mlockall(MCL_CURRENT) refuses past it, a later mapping past it fails)
 * and the daemon's sum of shares is a bound, not a hope. A share the
 * worker cannot have (a lower hard limit it may not raise) is refused
 * with ENOMEM, as above.
 */
#include <errno.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "worker/sandbox.h"
#include "worker/worker.h"

static struct {
        bool asked;
        int error;                      /* 0, or -errno of mlockall */
} lock;

/* Whether CAP_IPC_LOCK is in the effective set (locking past RLIMIT_MEMLOCK). */
static bool has_ipc_lock(void)
{
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct cap[_LINUX_CAPABILITY_U32S_3];

        memset(cap, 0, sizeof(cap));
        if (syscall(SYS_capget, &h, cap) < 0)
                return false;
        return cap[CAP_TO_INDEX(CAP_IPC_LOCK)].effective & CAP_TO_MASK(CAP_IPC_LOCK);
}

/* RLIMIT_MEMLOCK up to bound (RLIM_INFINITY: none), where this process may; true when it is. */
static bool raise_limit(rlim_t bound)
{
        struct rlimit rl;

        if (getrlimit(RLIMIT_MEMLOCK, &rl) < 0)
                return false;
        if (rl.rlim_cur == RLIM_INFINITY || (bound != RLIM_INFINITY && rl.rlim_cur >= bound))
                return true;
        /* Past the hard limit only with CAP_SYS_RESOURCE. */
        return setrlimit(RLIMIT_MEMLOCK, &(struct rlimit){ bound, bound }) == 0;
}

/* RLIMIT_MEMLOCK exactly limit, both soft and hard (raising the hard one needs CAP_SYS_RESOURCE). */
static bool set_limit(rlim_t limit)
{
        return setrlimit(RLIMIT_MEMLOCK, &(struct rlimit){ limit, limit }) == 0;
}

/* CAP_IPC_LOCK out of the effective, permitted and inheritable sets: 0 or -errno. */
static int drop_ipc_lock(void)
{
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct cap[_LINUX_CAPABILITY_U32S_3];
        unsigned i = CAP_TO_INDEX(CAP_IPC_LOCK);

        memset(cap, 0, sizeof(cap));
        if (syscall(SYS_capget, &h, cap) < 0)
                return -errno;
        cap[i].effective &= ~CAP_TO_MASK(CAP_IPC_LOCK);
        cap[i].permitted &= ~CAP_TO_MASK(CAP_IPC_LOCK);
        cap[i].inheritable &= ~CAP_TO_MASK(CAP_IPC_LOCK);
        return syscall(SYS_capset, &h, cap) < 0 ? -errno : 0;
}

int worker_lock_memory(const struct sandbox_opts *o, uint64_t limit)
{
        rlim_t bound = RLIM_INFINITY;
        bool keeps_cap, covered;

        if (o->mode != SANDBOX_OFF)
                bound = (rlim_t)(o->mem_limit ? o->mem_limit : SANDBOX_MEM_DEFAULT);
        /* Without a sandbox the worker keeps what it has; with one, no capability. */
        keeps_cap = o->mode == SANDBOX_OFF && has_ipc_lock();
        lock.asked = true;
        if (limit) {
                /* The share is the kernel's to enforce: no capability past it. */
                if (keeps_cap && (lock.error = drop_ipc_lock()) < 0)
                        return lock.error;
                keeps_cap = false;
                covered = set_limit((rlim_t)limit);
        } else {
                covered = raise_limit(bound);
        }
        if (!covered && !keeps_cap)
                lock.error = -ENOMEM;
        else
                lock.error = mlockall(MCL_CURRENT | MCL_FUTURE) < 0 ? -errno : 0;
        return lock.error;
}

int mlock_send_report(struct worker *w)
{
        struct call_mlock ev = { .error = lock.error };

        if (!lock.asked)
                return 0;
        return send_event(w, CALL_EV_MLOCK, &ev, sizeof(ev), NULL, 0, false);
}
