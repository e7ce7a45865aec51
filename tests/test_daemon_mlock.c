/*
 * daemon_mlock: a session's workers lock their memory (rtMlock, mlockall
 * before the sandbox, worker/mlock.c) against a real fmud: the kernel's
 * VmLck of each worker, status's worker-mlock per instance, and a lock the
 * worker cannot keep locked failing the load with the reason unless
 * best-effort.
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
#include <unistd.h>

#include "daemon_fixture.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED true
#else
#define SANITIZED false
#endif

#define SMALL_MEMLOCK   (8u << 20)      /* far below what a worker maps */

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
 * Without a sandbox a root daemon's worker keeps CAP_IPC_LOCK, which locks
 * past RLIMIT_MEMLOCK now and later.
 */
static void start_unsandboxed(void)
{
        daemon_start(&d, (const char *const[]){ "--sandbox", "off", NULL });
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
        daemon_start_bounded(&d, caps_but(1ull << CAP_SYS_RESOURCE), NULL);
        c = daemon_connect(&d);
}

/* Without a sandbox but also without CAP_IPC_LOCK: the same limit, the same refusal. */
static void start_unsandboxed_without_ipc_lock(void)
{
        memlock_limit(SMALL_MEMLOCK);
        daemon_start_bounded(&d, caps_but((1ull << CAP_IPC_LOCK) | (1ull << CAP_SYS_RESOURCE)),
                             (const char *const[]){ "--sandbox", "off", NULL });
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
