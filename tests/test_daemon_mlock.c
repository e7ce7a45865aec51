/*
 * daemon_mlock: a session's workers lock their memory (rtMlock, mlockall
 * before the sandbox, worker/mlock.c) against a real fmud: the kernel's
 * VmLck of each worker, status's worker-mlock per instance, and a lock the
 * worker cannot keep locked failing the load with the reason unless
 * best-effort; the daemon's locked-memory budget ([realtime]
 * worker_mlock_max_bytes, none by default) and each worker's share
 * ([realtime] worker_mlock_bytes) as its RLIMIT_MEMLOCK.
 * AddressSanitizer's mlockall() succeeds without locking: under it only
 * the VmLck check is left out.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "daemon_fixture.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED true
#else
#define SANITIZED false
#endif

#define SMALL_MEMLOCK   (8u << 20)      /* far below what a worker maps */
#define DEFAULT_SHARE   (256ull << 20)  /* [realtime] worker_mlock_bytes unless set */
#define SHARE           (64ull << 20)   /* [realtime] worker_mlock_bytes of the budget tests */
#define BUDGET          (100ull << 20)  /* worker_mlock_max_bytes: one share, not two */

static struct fmud_daemon d;
static struct fmud *c;

static void teardown(void)
{
        fmud_close(c);
        c = NULL;
        daemon_stop(&d);
}

static struct proto_load scripted(void)
{
        return (struct proto_load){ .path = daemon_str(FMUD_MASTER_FMU_DIR "/Scripted.fmu"),
                                    .has_stop = true, .stop = 0.1, .has_step = true,
                                    .step = 0.01 };
}

/* VmLck of pid in kB, as the kernel counts it. */
static unsigned long long vm_locked_kb(pid_t pid)
{
        unsigned long long kb = 0;
        char path[64], line[256];
        bool found = false;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
        f = fopen(path, "r");
        cr_assert(f != NULL, "%s", path);
        while (fgets(line, sizeof(line), f))
                if (!strncmp(line, "VmLck:", 6)) {
                        kb = strtoull(line + 6, NULL, 10);
                        found = true;
                }
        fclose(f);
        cr_assert(found, "no VmLck in %s", path);
        return kb;
}

/* Status's worker-mlock entry of instance name: its state into buf, or NULL. */
static const char *worker_mlock(const struct proto_session_status *st, struct proto_str name,
                                char *buf, size_t size)
{
        for (uint32_t i = 0; i < st->n_realtime; i++)
                if (daemon_str_eq(st->realtime[i].name, "worker-mlock") &&
                    st->realtime[i].instance.len == name.len &&
                    !memcmp(st->realtime[i].instance.ptr, name.ptr, name.len)) {
                        snprintf(buf, size, "%.*s", (int)st->realtime[i].state.len,
                                 st->realtime[i].state.ptr);
                        return buf;
                }
        return NULL;
}

/*
 * Whether a worker of this process's daemon can have bytes as its
 * RLIMIT_MEMLOCK: under the hard limit, or past it with CAP_SYS_RESOURCE.
 * (A container may give root CAP_IPC_LOCK but neither.)
 */
static bool share_settable(uint64_t bytes)
{
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct cap[_LINUX_CAPABILITY_U32S_3];
        struct rlimit rl;

        cr_assert(eq(int, getrlimit(RLIMIT_MEMLOCK, &rl), 0));
        if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= bytes)
                return true;
        memset(cap, 0, sizeof(cap));
        cr_assert(eq(int, (int)syscall(SYS_capget, &h, cap), 0));
        return cap[CAP_TO_INDEX(CAP_SYS_RESOURCE)].effective & CAP_TO_MASK(CAP_SYS_RESOURCE);
}

/*
 * Without a sandbox a root daemon's worker has CAP_IPC_LOCK; with a share
 * it gives that up, so it locks only where its share is its limit.
 */
static void start_unsandboxed(void)
{
        daemon_start(&d, (const char *const[]){ "--sandbox", "off", "--worker-mlock-max", "1G",
                                                NULL });
        c = daemon_connect(&d);
}

Test(daemon_mlock, workers_lock_their_memory_and_status_says_so_per_instance,
     .init = start_unsandboxed, .fini = teardown)
{
        struct proto_load a = scripted();
        struct proto_session_status st, plain;
        uint64_t s, s0;
        char buf[128];

        if (geteuid() != 0)
                cr_skip_test("a worker locks its memory with root's CAP_IPC_LOCK only");
        /* Without the option: nothing locked, nothing reported. */
        s0 = daemon_load(c, &a, NULL);
        cr_assert(fmud_status(c, s0, &plain) == 0, "%s", fmud_errmsg(c));
        cr_assert(eq(u32, plain.n_realtime, 0));
        cr_assert(eq(u64, (uint64_t)vm_locked_kb((pid_t)plain.insts[0].pid), 0));

        a.rt_mlock = true;
        if (!share_settable(DEFAULT_SHARE)) {
                /* Its share cannot be its limit here: the worker says so, nothing locked. */
                a.rt_best_effort = true;
                s = daemon_load(c, &a, NULL);
                cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
                cr_assert(worker_mlock(&st, st.insts[0].name, buf, sizeof(buf)) != NULL);
                cr_assert(eq(str, buf, "refused: Cannot allocate memory"));
                cr_assert(eq(u64, (uint64_t)vm_locked_kb((pid_t)st.insts[0].pid), 0));
                return;
        }
        s = daemon_load(c, &a, NULL);
        cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
        cr_assert(eq(u32, st.n_insts, 1));
        cr_assert(eq(u32, st.n_realtime, 1));
        cr_assert(worker_mlock(&st, st.insts[0].name, buf, sizeof(buf)) != NULL, "no worker-mlock");
        cr_assert(eq(str, buf, "active"));
        /* The kernel's word, where mlockall() is not AddressSanitizer's no-op. */
        if (!SANITIZED)
                cr_assert(vm_locked_kb((pid_t)st.insts[0].pid) > 0, "VmLck 0 kB");
        /* The locked worker runs its session to the end as usual. */
        cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        daemon_wait_state(c, s, PROTO_STATE_FINISHED, NULL);
        cr_assert(fmud_unload(c, &(struct proto_target){ s, 0 }) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_unload(c, &(struct proto_target){ s0, 0 }) == 0, "%s", fmud_errmsg(c));
}

/* All capabilities but those in drop. */
static uint64_t caps_but(uint64_t drop)
{
        return ((1ull << (CAP_LAST_CAP + 1)) - 1) & ~drop;
}

/* This test's process only (each test runs in a process of its own): what the daemon inherits. */
static void memlock_limit(rlim_t bytes)
{
        if (geteuid() != 0)
                cr_skip_test("the bounding set is cut down as root only");
        cr_assert(eq(int, setrlimit(RLIMIT_MEMLOCK, &(struct rlimit){ bytes, bytes }), 0));
}

/*
 * A sandboxed worker drops CAP_IPC_LOCK; with RLIMIT_MEMLOCK at 8 MiB and
 * no CAP_SYS_RESOURCE to raise it, every mapping after the drop would fail
 * (the worker died at its start): it does not lock and says ENOMEM.
 */
static void start_sandboxed_small_limit(void)
{
        memlock_limit(SMALL_MEMLOCK);
        daemon_start_bounded(&d, caps_but(1ull << CAP_SYS_RESOURCE),
                             (const char *const[]){ "--worker-mlock-max", "1G", NULL });
        c = daemon_connect(&d);
}

/* Without a sandbox but also without CAP_IPC_LOCK: the same limit, the same refusal. */
static void start_unsandboxed_without_ipc_lock(void)
{
        memlock_limit(SMALL_MEMLOCK);
        daemon_start_bounded(&d, caps_but((1ull << CAP_IPC_LOCK) | (1ull << CAP_SYS_RESOURCE)),
                             (const char *const[]){ "--sandbox", "off", "--worker-mlock-max", "1G",
                                                    NULL });
        c = daemon_connect(&d);
}

/* rt_mlock refused for the limit, named with the instance; best effort runs unlocked. */
static void refused_then_best_effort(void)
{
        struct proto_load a = scripted();
        struct proto_session_status st;
        char buf[128], want[160];
        pid_t kids[8];
        uint64_t s;
        int r;

        a.rt_mlock = true;
        r = fmud_load(c, &a, &s, NULL);
        daemon_assert_refused(c, r, PROTO_E_INVALID, "mlock over RLIMIT_MEMLOCK");
        cr_assert(strstr(fmud_errmsg(c), "realtime worker-mlock: Cannot allocate memory "
                         "(instance ") != NULL &&
                  strstr(fmud_errmsg(c), ") (rtBestEffort: load anyway)") != NULL, "%s",
                  fmud_errmsg(c));
        /* Nothing left behind. */
        cr_assert(eq(sz, daemon_children(d.pid, kids, 8), 0));
        /* Best effort: it loads, runs to the end, and status says why it is not locked. */
        a.rt_best_effort = true;
        s = daemon_load(c, &a, NULL);
        cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
        cr_assert(worker_mlock(&st, st.insts[0].name, buf, sizeof(buf)) != NULL,
                  "no worker-mlock");
        snprintf(want, sizeof(want), "refused: %s", strerror(ENOMEM));
        cr_assert(eq(str, buf, want));
        cr_assert(eq(u64, (uint64_t)vm_locked_kb((pid_t)st.insts[0].pid), 0));
        cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        daemon_wait_state(c, s, PROTO_STATE_FINISHED, NULL);
}

Test(daemon_mlock, a_sandboxed_worker_under_a_small_limit_refuses_to_lock,
     .init = start_sandboxed_small_limit, .fini = teardown)
{
        refused_then_best_effort();
}

Test(daemon_mlock, a_worker_without_ipc_lock_under_a_small_limit_refuses_to_lock,
     .init = start_unsandboxed_without_ipc_lock, .fini = teardown)
{
        refused_then_best_effort();
}

/* ---- the budget ---- */

/* A daemon with the config text (a file of its own, gone once it runs). */
static void start_with(const char *text, const char *sandbox)
{
        char conf[] = "/tmp/fmud-mlock-XXXXXX";
        int fd = mkstemp(conf);

        cr_assert(fd >= 0);
        cr_assert(eq(sz, (size_t)write(fd, text, strlen(text)), strlen(text)));
        close(fd);
        daemon_start(&d, (const char *const[]){ "--config", conf, "--sandbox", sandbox, NULL });
        unlink(conf);
        c = daemon_connect(&d);
}

static void start_unbudgeted(void)
{
        start_with("[realtime]\nbest_effort = yes\n", "strict");
}

static void start_budgeted(void)
{
        start_with("[realtime]\nworker_mlock_bytes = 64M\nworker_mlock_max_bytes = 100M\n",
                   "strict");
}

static void start_budgeted_unsandboxed(void)
{
        start_with("[realtime]\nworker_mlock_bytes = 64M\nworker_mlock_max_bytes = 100M\n",
                   "off");
}

static void assert_budget(uint64_t budget, uint64_t used)
{
        struct proto_daemon_status ds;

        cr_assert(fmud_status_daemon(c, &ds) == 0, "%s", fmud_errmsg(c));
        cr_assert(eq(u64, ds.mlock_budget, budget));
        cr_assert(eq(u64, ds.mlock_used, used));
}

/* A number from /proc/PID/FILE's line that starts with key (its first field after it). */
static unsigned long long proc_field(pid_t pid, const char *file, const char *key, int base)
{
        char path[64], line[256];
        unsigned long long v = 0;
        bool found = false;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
        f = fopen(path, "r");
        cr_assert(f != NULL, "%s", path);
        while (fgets(line, sizeof(line), f))
                if (!strncmp(line, key, strlen(key))) {
                        v = strtoull(line + strlen(key), NULL, base);
                        found = true;
                }
        fclose(f);
        cr_assert(found, "no %s in %s", key, path);
        return v;
}

Test(daemon_mlock, without_a_budget_no_worker_locks_even_best_effort,
     .init = start_unbudgeted, .fini = teardown)
{
        struct proto_load a = scripted();
        pid_t kids[8];
        uint64_t s;
        int r;

        assert_budget(0, 0);
        a.rt_mlock = true;
        a.rt_best_effort = true;
        r = fmud_load(c, &a, &s, NULL);
        daemon_assert_refused(c, r, PROTO_E_LIMIT, "mlock without a budget");
        cr_assert(eq(str, (char *)fmud_errmsg(c),
                     "realtime worker-mlock: over the daemon's locked-memory budget ([realtime] "
                     "worker_mlock_max_bytes): 0 bytes, 0 in use, 268435456 asked (1 workers of "
                     "268435456)"));
        cr_assert(eq(sz, daemon_children(d.pid, kids, 8), 0));
        assert_budget(0, 0);
        /* Without the lock the same load is as always. */
        a.rt_mlock = false;
        s = daemon_load(c, &a, NULL);
        cr_assert(fmud_unload(c, &(struct proto_target){ s, 0 }) == 0, "%s", fmud_errmsg(c));
}

Test(daemon_mlock, the_budget_is_reserved_per_worker_and_given_back_at_unload,
     .init = start_budgeted, .fini = teardown)
{
        struct proto_load a = scripted();
        pid_t kids[8];
        uint64_t s, s2;
        int r;

        assert_budget(BUDGET, 0);
        a.rt_mlock = true;
        a.rt_best_effort = true;
        s = daemon_load(c, &a, NULL);
        assert_budget(BUDGET, SHARE);
        /* A second share does not fit: refused, naming budget, use and ask; the first runs on. */
        r = fmud_load(c, &a, &s2, NULL);
        daemon_assert_refused(c, r, PROTO_E_LIMIT, "a second share");
        cr_assert(eq(str, (char *)fmud_errmsg(c),
                     "realtime worker-mlock: over the daemon's locked-memory budget ([realtime] "
                     "worker_mlock_max_bytes): 104857600 bytes, 67108864 in use, 67108864 asked "
                     "(1 workers of 67108864)"));
        cr_assert(eq(sz, daemon_children(d.pid, kids, 8), 1));
        assert_budget(BUDGET, SHARE);
        cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        daemon_wait_state(c, s, PROTO_STATE_FINISHED, NULL);
        cr_assert(fmud_unload(c, &(struct proto_target){ s, 0 }) == 0, "%s", fmud_errmsg(c));
        assert_budget(BUDGET, 0);
        /* Given back: the next one fits. */
        s2 = daemon_load(c, &a, NULL);
        assert_budget(BUDGET, SHARE);
        cr_assert(fmud_unload(c, &(struct proto_target){ s2, 0 }) == 0, "%s", fmud_errmsg(c));
        assert_budget(BUDGET, 0);
}

/*
 * The share is the worker's RLIMIT_MEMLOCK, and a worker that would keep
 * CAP_IPC_LOCK (root, no sandbox) gives it up, so the kernel enforces it.
 */
Test(daemon_mlock, each_worker_is_held_to_its_share_by_the_kernel,
     .init = start_budgeted_unsandboxed, .fini = teardown)
{
        struct proto_load a = scripted();
        struct proto_session_status st;
        pid_t pid;
        char buf[128];
        uint64_t s;

        if (geteuid() != 0)
                cr_skip_test("a worker keeps CAP_IPC_LOCK with root's only");
        a.rt_mlock = true;
        a.rt_best_effort = !share_settable(SHARE);
        s = daemon_load(c, &a, NULL);
        cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
        cr_assert(worker_mlock(&st, st.insts[0].name, buf, sizeof(buf)) != NULL, "no worker-mlock");
        pid = (pid_t)st.insts[0].pid;
        /* Either way the capability is gone and nothing is locked past the share. */
        cr_assert(eq(u64, (uint64_t)(proc_field(pid, "status", "CapEff:", 16) &
                                     (1ull << CAP_IPC_LOCK)), 0));
        if (a.rt_best_effort) {
                /* A share this machine cannot give is refused, as a limit the kernel would. */
                cr_assert(eq(str, buf, "refused: Cannot allocate memory"));
                cr_assert(eq(u64, (uint64_t)vm_locked_kb(pid), 0));
                return;
        }
        cr_assert(eq(str, buf, "active"));
        cr_assert(eq(u64, (uint64_t)proc_field(pid, "limits", "Max locked memory", 10), SHARE));
        if (!SANITIZED)
                cr_assert(vm_locked_kb(pid) > 0 && vm_locked_kb(pid) <= SHARE / 1024,
                          "VmLck %llu kB", vm_locked_kb(pid));
        cr_assert(fmud_unload(c, &(struct proto_target){ s, 0 }) == 0, "%s", fmud_errmsg(c));
}
