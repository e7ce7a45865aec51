/*
 * sandbox: the layers fmud-worker puts between an FMU's native code and
 * the rest of the machine, applied before the FMU's library is loaded
 * (its constructors run inside dlopen).
 *
 * DESIGN
 * - Six layers, each reported to the daemon as active, unavailable (with
 *   the reason, e.g. the errno of a refused unshare) or disabled by the
 *   mode, in one CALL_EV_SANDBOX event before HELLO (worker/call.h):
 *     environment  empty environment but TMPDIR, descriptors 0-2 on
 *                  /dev/null, the channel and (O_PATH) the FMU directory
 *                  only, own process group, SIGKILL when the daemon dies
 *     limits       RLIMIT_AS, RLIMIT_CPU, RLIMIT_NOFILE, RLIMIT_FSIZE,
 *                  RLIMIT_CORE 0, RLIMIT_NPROC: SANDBOX_THREADS more
 *                  tasks than its user has at the start (the kernel
 *                  counts per user; seccomp refuses new processes)
 *     privileges   no_new_privs; a root daemon's worker becomes an
 *                  unprivileged user with no capabilities
 *     namespaces   no network at all; a mount namespace in which every
 *                  mount is read-only but the scratch directory, and the
 *                  other instances' scratch directories are not visible
 *     landlock     read/execute on the FMU and system directories,
 *                  read/write on the scratch directory only; no TCP
 *                  bind/connect, no signals or abstract sockets outside
 *                  (as far as the kernel's Landlock ABI goes)
 *     seccomp      an allowlist of system calls (sandbox_seccomp.c)
 * - Modes: strict (all), basic (all but namespaces), off (only the
 *   environment basics the spawner always gives).
 * - A layer the kernel refuses is reported and the others still apply:
 *   each layer stands on its own. The namespaces are made while the
 *   worker still has the daemon's privileges (so root needs no user
 *   namespace), then privileges are dropped, then Landlock and seccomp
 *   close the door.
 * - A system call seccomp refuses fails with EPERM and is logged: the
 *   SIGSYS handler only records it in a lock-free array, and the worker
 *   sends the records as LOG events (category "sandbox") after the FMU
 *   call returns, before its reply (sandbox_flush()). SIGSYS stays
 *   unblocked in threads that block every signal (worker/sigmask.c), so
 *   the refusal is an EPERM there too. With kill_on_violation the
 *   worker is killed instead.
 *
 * The names and the options are shared with the daemon; sandbox_apply(),
 * sandbox_send_report() and sandbox_flush() are the worker's.
 */
#ifndef FMUD_WORKER_SANDBOX_H
#define FMUD_WORKER_SANDBOX_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum sandbox_mode { SANDBOX_OFF, SANDBOX_BASIC, SANDBOX_STRICT };

enum sandbox_layer {
        SANDBOX_ENVIRONMENT,
        SANDBOX_LIMITS,
        SANDBOX_PRIVILEGES,
        SANDBOX_NAMESPACES,
        SANDBOX_LANDLOCK,
        SANDBOX_SECCOMP,
        SANDBOX_LAYER_COUNT
};

enum sandbox_layer_state { SANDBOX_ACTIVE, SANDBOX_UNAVAILABLE, SANDBOX_DISABLED };

#define SANDBOX_MEM_DEFAULT     (4ull << 30)    /* RLIMIT_AS bytes */
#define SANDBOX_NOFILE          256u
#define SANDBOX_FSIZE           (1ull << 30)
#define SANDBOX_THREADS         512u    /* more tasks of its user a worker may start */

struct sandbox_opts {
        enum sandbox_mode mode;         /* zero value = SANDBOX_OFF */
        /*
         * Per-instance scratch dirs are made below (the spawner makes and
         * removes them); NULL: a private dir under $TMPDIR or /tmp.
         */
        const char *scratch_root;
        uint64_t mem_limit;             /* RLIMIT_AS bytes; 0: default 4 GiB */
        uint64_t cpu_limit_s;           /* RLIMIT_CPU seconds; 0: none */
        bool kill_on_violation;         /* seccomp: kill the worker instead of EPERM */
        /*
         * Strict mode: a directory the worker must not see, covered with an
         * empty tmpfs in its mount namespace (the daemon's run directory,
         * whose control socket a worker could otherwise see; seccomp
         * refuses socket() besides, where it is active). Not hidden when
         * the FMU lies below it; the scratch directory below it is bound
         * back. NULL: none.
         */
        const char *hide;
        /* When the daemon is root: run as these (0: resolve user "fmud", else nobody). */
        uid_t uid;
        gid_t gid;
        /*
         * Every layer the mode wants must be active: a worker that lacks one
         * says which and why in its HELLO and exits before the FMU's code
         * runs (the daemon's sandbox.require = all).
         */
        bool require_all;
        /*
         * Tests only (the daemon's FMUD_TEST_SANDBOX_SKIP): bit l set, layer
         * l is not applied and reported unavailable, as on a kernel without it.
         */
        uint32_t skip_layers;
};

/* "environment", "limits", "privileges", "namespaces", "landlock", "seccomp"; "?" else. */
const char *sandbox_layer_name(enum sandbox_layer l);
/* "off", "basic", "strict"; "?" else. */
const char *sandbox_mode_name(enum sandbox_mode m);
/* "active", "unavailable", "disabled"; "?" else. */
const char *sandbox_state_name(enum sandbox_layer_state s);
/* The mode named s, or -EINVAL. */
int sandbox_mode_parse(const char *s);
/* The layer named s, or -EINVAL. */
int sandbox_layer_parse(const char *s);

/* ---- The worker's side ------------------------------------------------ */

/* What the worker was told to do (fmud-worker's command line). */
struct sandbox_args {
        struct sandbox_opts opts;       /* uid/gid as given: 0 means stay */
        const char *fmu_dir;            /* the unpacked FMU (read/execute) */
        const char *scratch;            /* the instance's scratch dir (read/write); may be NULL */
        int chan_fd;                    /* the one descriptor besides 0-2 that stays open */
        int fmu_fd;                     /* set by sandbox_apply(): the FMU directory, O_PATH; -1 */
};

/*
 * Apply the layers args asks for, in order, to the calling process (which
 * must still be single-threaded), and remember the report. Never fails: a
 * layer that cannot be applied is reported. Returns the number of layers
 * the mode wanted that are not active.
 */
int sandbox_apply(const struct sandbox_args *args);

/*
 * The FMU directory as the worker must open it from now on: a sandboxed
 * worker holds it open (O_PATH) from before it dropped its privileges, so
 * the directories above it need not be searchable by the worker's user:
 * "/proc/self/fd/N". NULL when the sandbox is off or the directory could
 * not be opened (then use the path as given).
 */
const char *sandbox_fmu_path(void);

/* The state and detail of layer l as applied (DISABLED before sandbox_apply()). */
enum sandbox_layer_state sandbox_state(enum sandbox_layer l);
const char *sandbox_detail(enum sandbox_layer l);
/*
 * With require_all: whether a layer the mode wanted is missing; then why
 * (the layer and its detail) is in buf. False without require_all.
 */
bool sandbox_refused(char *buf, size_t size);

/*
 * True once seccomp traps refused calls to the SIGSYS handler (not with
 * kill_on_violation, not where the trap path does not exist): SIGSYS
 * must then stay unblocked in every thread (worker/sigmask.c).
 */
bool sandbox_traps(void);

struct worker;
/* Send the report as CALL_EV_SANDBOX (when a mode other than off was asked for). 0 or -errno. */
int sandbox_send_report(struct worker *w);
/*
 * Send the system calls seccomp refused since the last flush as LOG
 * events (category "sandbox"); the worker's thread only, outside any
 * signal handler.
 */
void sandbox_flush(struct worker *w);

#endif
