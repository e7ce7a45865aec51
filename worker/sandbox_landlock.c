/*
 * sandbox_landlock: the worker's Landlock domain (sandbox.h, layer
 * "landlock"): read and execute on the FMU directory and the system
 * directories a loaded library needs, read and write on the scratch
 * directory, /dev/null and the private /tmp (sandbox_ns.c) where there is
 * one, nothing anywhere else; no TCP bind or connect
 * (ABI 4), no signals to and no abstract sockets of processes outside the
 * domain (ABI 6).
 *
 * DESIGN: best effort by ABI version, as the kernel documentation
 * recommends: every right the running kernel knows is handled (denied
 * unless a rule allows it), rights it does not know are left out. The
 * constants of later ABIs are defined here when the installed header
 * predates them. System paths that do not exist (/lib64 on some
 * architectures) are skipped. What a loaded FMU legitimately reads:
 * /usr and /lib* (libraries, locale, zoneinfo), /etc (ld.so.cache, nss,
 * localtime), /proc/self (glibc and sanitizers read maps and status),
 * /sys/devices/system/cpu (sysconf's processor count), /proc/cpuinfo,
 * /proc/meminfo and /proc/stat (what OpenMP and BLAS runtimes, a JVM or
 * an embedded Python read to size themselves: facts of the machine, not
 * of another process), the random and zero devices.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "worker/sandbox_int.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER        (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE     (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV    (1ULL << 15)
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP    (1ULL << 0)
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET     (1ULL << 0)
#define LANDLOCK_SCOPE_SIGNAL                   (1ULL << 1)
#endif

/* struct landlock_ruleset_attr as of ABI 6; older kernels get a shorter prefix. */
struct ruleset_attr {
        uint64_t handled_access_fs;
        uint64_t handled_access_net;    /* ABI 4 */
        uint64_t scoped;                /* ABI 6 */
};

#define FS_RO   (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | \
                 LANDLOCK_ACCESS_FS_READ_DIR)
/* The rights that apply to a file rather than a directory. */
#define FS_FILE (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
                 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
                 LANDLOCK_ACCESS_FS_IOCTL_DEV)

static uint64_t fs_rights(int abi)
{
        uint64_t all = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;  /* ABI 1 */

        if (abi >= 2)
                all |= LANDLOCK_ACCESS_FS_REFER;
        if (abi >= 3)
                all |= LANDLOCK_ACCESS_FS_TRUNCATE;
        if (abi >= 5)
                all |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
        return all;
}

/* Allow access under the file or directory fd (a file: only its file rights). */
static int allow_fd(int ruleset, int fd, uint64_t access, uint64_t handled)
{
        struct landlock_path_beneath_attr pb = { 0 };
        struct stat st;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                access &= FS_FILE;
        pb.allowed_access = access & handled;
        pb.parent_fd = fd;
        if (pb.allowed_access &&
            syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
                return -errno;
        return 0;
}

/* The same for a path; -ENOENT when it does not exist. */
static int allow(int ruleset, const char *path, uint64_t access, uint64_t handled)
{
        int fd, r;

        fd = open(path, O_PATH | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = allow_fd(ruleset, fd, access, handled);
        close(fd);
        return r;
}

int sandbox_landlock(const struct sandbox_args *a, char *buf, size_t size)
{
        static const char *const system_ro[] = {
                "/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc", "/proc/self",
                "/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/sys/devices/system/cpu",
                "/dev/urandom", "/dev/random", "/dev/zero",
        };
        struct ruleset_attr ra = { 0 };
        size_t ra_size;
        const char *failed = NULL;
        int abi, fd, r = 0;

        abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
        if (abi < 0) {
                r = -errno;
                snprintf(buf, size, "Landlock: %s", r == -EOPNOTSUPP ? "disabled at boot" :
                         r == -ENOSYS ? "not in this kernel" : strerror(-r));
                return r;
        }
        ra.handled_access_fs = fs_rights(abi);
        ra_size = sizeof(ra.handled_access_fs);
        if (abi >= 4) {
                ra.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
                ra_size = offsetof(struct ruleset_attr, scoped);
        }
        if (abi >= 6) {
                ra.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
                ra_size = sizeof(ra);
        }
        fd = (int)syscall(SYS_landlock_create_ruleset, &ra, ra_size, 0);
        if (fd < 0) {
                r = -errno;
                snprintf(buf, size, "landlock_create_ruleset: %s", strerror(-r));
                return r;
        }
        for (size_t i = 0; i < sizeof(system_ro) / sizeof(system_ro[0]) && r == 0; i++) {
                r = allow(fd, system_ro[i], FS_RO, ra.handled_access_fs);
                if (r == -ENOENT)
                        r = 0;
                failed = system_ro[i];
        }
        if (r == 0) {
                failed = "/dev/null";
                r = allow(fd, "/dev/null", ra.handled_access_fs & ~LANDLOCK_ACCESS_FS_EXECUTE,
                          ra.handled_access_fs);
        }
        if (r == 0) {
                failed = a->fmu_dir;
                r = a->fmu_fd >= 0 ? allow_fd(fd, a->fmu_fd, FS_RO, ra.handled_access_fs) :
                    allow(fd, a->fmu_dir, FS_RO, ra.handled_access_fs);
        }
        if (r == 0 && a->scratch) {
                failed = a->scratch;
                r = allow(fd, a->scratch, ra.handled_access_fs & ~LANDLOCK_ACCESS_FS_EXECUTE,
                          ra.handled_access_fs);
        }
        /* The worker's own /tmp (sandbox_ns.c), never the machine's. */
        if (r == 0 && sandbox_private_tmp()) {
                failed = "/tmp";
                r = allow(fd, "/tmp", ra.handled_access_fs & ~LANDLOCK_ACCESS_FS_EXECUTE,
                          ra.handled_access_fs);
        }
        if (r < 0) {
                snprintf(buf, size, "landlock_add_rule('%.100s'): %s", failed, strerror(-r));
                goto out_close;
        }
        if (syscall(SYS_landlock_restrict_self, fd, 0) < 0) {
                r = -errno;
                snprintf(buf, size, "landlock_restrict_self: %s", strerror(-r));
                goto out_close;
        }
        snprintf(buf, size, "ABI %d: read-only FMU and system dirs, read-write scratch%s%s%s", abi,
                 sandbox_private_tmp() ? " and private /tmp" : "",
                 abi >= 4 ? ", no TCP" : ", TCP not covered (ABI < 4)",
                 abi >= 6 ? ", signals and abstract sockets scoped" : "");
out_close:
        close(fd);
        return r;
}
