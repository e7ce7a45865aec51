/*
 * sandbox: the order in which the worker's sandbox layers are applied,
 * the environment layer, and the report to the daemon (sandbox.h).
 *
 * DESIGN: the layers are applied in the order that lets each one work
 * without the next: environment and limits first, then the namespaces
 * while the worker still has the daemon's privileges (so a root daemon
 * needs no user namespace), then the privileges are dropped, then
 * Landlock and seccomp, which need no privileges at all. The report lists
 * them in enum order. Nothing here allocates after seccomp is loaded
 * except what the allowlist permits (malloc's brk and mmap).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "worker/sandbox_int.h"
#include "worker/worker.h"

static struct {
        enum sandbox_mode mode;
        bool applied;
        bool require_all;
        char fmu_path[32];              /* "/proc/self/fd/N"; "": none */
        enum sandbox_layer_state state[SANDBOX_LAYER_COUNT];
        char detail[SANDBOX_LAYER_COUNT][CALL_SANDBOX_DETAIL_MAX + 1];
} report;

static_assert(SANDBOX_LAYER_COUNT <= CALL_SANDBOX_LAYERS_MAX, "the report carries every layer");

static int close_others(int keep)
{
        int r = 0;

        /* Everything above 2 but the channel; close_range exists since Linux 5.9. */
        if (keep > 3 && syscall(SYS_close_range, 3u, (unsigned)keep - 1, 0u) < 0)
                r = -errno;
        if (r == 0 && syscall(SYS_close_range, (unsigned)keep + 1, ~0u, 0u) < 0)
                r = -errno;
        return r;
}

int sandbox_environment(const struct sandbox_args *a, char *buf, size_t size)
{
        int r;

        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        r = close_others(a->chan_fd);
        if (r < 0) {
                snprintf(buf, size, "close_range: %s", strerror(-r));
                return r;
        }
        /* The spawner made us a group leader; make sure (a group kill reaches only us). */
        if (getpgid(0) != getpid() && setpgid(0, 0) < 0) {
                r = -errno;
                snprintf(buf, size, "setpgid: %s", strerror(-r));
                return r;
        }
        /*
         * The environment is what the spawner gave: none of the daemon's
         * but what its [sandbox] pass_env names (daemon/worker_env.h).
         * Sandboxed, the scratch directory is the home and the temporary
         * directory: the one place the FMU may write.
         */
        if (a->opts.mode != SANDBOX_OFF) {
                if (a->scratch && (setenv("TMPDIR", a->scratch, 1) < 0 ||
                                   setenv("HOME", a->scratch, 1) < 0)) {
                        snprintf(buf, size, "setenv: out of memory");
                        return -ENOMEM;
                }
                if (a->scratch && chdir(a->scratch) < 0) {
                        r = -errno;
                        snprintf(buf, size, "chdir('%.100s'): %s", a->scratch, strerror(-r));
                        return r;
                }
        }
        snprintf(buf, size, "%s, descriptors 0-2 and %d only%s, own process group, "
                 "parent-death SIGKILL", a->opts.mode == SANDBOX_OFF ? "environment as given" :
                 "environment as given but TMPDIR and HOME", a->chan_fd,
                 a->opts.mode == SANDBOX_OFF ? "" : " (and the FMU directory)");
        return 0;
}

typedef int layer_fn(const struct sandbox_args *a, char *buf, size_t size);

/*
 * The death signal again: the kernel clears it whenever the credentials
 * change (a new user namespace, another uid or gid), and a worker that
 * outlived its parent would go on running an FMU stuck in a call, as
 * another user, with nobody to stop it. A parent that died before is
 * checked for after.
 */
static void rearm_death_signal(pid_t parent)
{
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
                _exit(127);
}

int sandbox_apply(const struct sandbox_args *a)
{
        /* Application order; see DESIGN. */
        static const struct {
                enum sandbox_layer layer;
                layer_fn *fn;
                enum sandbox_mode min;          /* the weakest mode that wants it */
                bool strict_only;
        } order[] = {
                { SANDBOX_ENVIRONMENT, sandbox_environment, SANDBOX_OFF, false },
                { SANDBOX_LIMITS, sandbox_limits, SANDBOX_BASIC, false },
                { SANDBOX_NAMESPACES, sandbox_namespaces, SANDBOX_STRICT, true },
                { SANDBOX_PRIVILEGES, sandbox_privileges, SANDBOX_BASIC, false },
                { SANDBOX_LANDLOCK, sandbox_landlock, SANDBOX_BASIC, false },
                { SANDBOX_SECCOMP, sandbox_seccomp, SANDBOX_BASIC, false },
        };
        struct sandbox_args b = *a;
        pid_t parent = getppid();
        int missing = 0;

        report.mode = a->opts.mode;
        report.applied = true;
        report.require_all = a->opts.require_all;
        b.fmu_fd = -1;
        for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
                enum sandbox_layer l = order[i].layer;
                char *d = report.detail[l];

                /*
                 * Right after the descriptors were closed and before the
                 * privileges go: the FMU directory, held open, stays
                 * reachable whatever the modes of the directories above it.
                 */
                if (i == 1 && a->opts.mode != SANDBOX_OFF) {
                        b.fmu_fd = open(a->fmu_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
                        if (b.fmu_fd >= 0)
                                snprintf(report.fmu_path, sizeof(report.fmu_path),
                                         "/proc/self/fd/%d", b.fmu_fd);
                }

                if (a->opts.mode < order[i].min) {
                        report.state[l] = SANDBOX_DISABLED;
                        snprintf(d, sizeof(report.detail[l]), "not in mode %s",
                                 sandbox_mode_name(a->opts.mode));
                        continue;
                }
                if (a->opts.skip_layers & (1u << l)) {
                        report.state[l] = SANDBOX_UNAVAILABLE;
                        snprintf(d, sizeof(report.detail[l]), "skipped for a test "
                                 "(FMUD_TEST_SANDBOX_SKIP)");
                        missing++;
                        continue;
                }
                /* Before seccomp, which does not allow setting it. */
                if (l == SANDBOX_SECCOMP)
                        rearm_death_signal(parent);
                if (order[i].fn(&b, d, sizeof(report.detail[l])) == 0) {
                        report.state[l] = SANDBOX_ACTIVE;
                } else {
                        report.state[l] = SANDBOX_UNAVAILABLE;
                        missing++;
                }
        }
        /* Where seccomp did not come (mode off, a test's skip), here. */
        if (a->opts.mode < SANDBOX_BASIC || (a->opts.skip_layers & (1u << SANDBOX_SECCOMP)))
                rearm_death_signal(parent);
        return missing;
}

const char *sandbox_fmu_path(void)
{
        return report.fmu_path[0] ? report.fmu_path : NULL;
}

enum sandbox_layer_state sandbox_state(enum sandbox_layer l)
{
        if ((unsigned)l >= SANDBOX_LAYER_COUNT || !report.applied)
                return SANDBOX_DISABLED;
        return report.state[l];
}

const char *sandbox_detail(enum sandbox_layer l)
{
        if ((unsigned)l >= SANDBOX_LAYER_COUNT || !report.applied)
                return "";
        return report.detail[l];
}

bool sandbox_refused(char *buf, size_t size)
{
        if (!report.applied || !report.require_all)
                return false;
        for (unsigned l = 0; l < SANDBOX_LAYER_COUNT; l++)
                if (report.state[l] == SANDBOX_UNAVAILABLE) {
                        snprintf(buf, size, "the sandbox layer %s is unavailable (%s) and "
                                 "sandbox.require = all: the FMU is not loaded",
                                 sandbox_layer_name((enum sandbox_layer)l), report.detail[l]);
                        return true;
                }
        return false;
}

int sandbox_send_report(struct worker *w)
{
        unsigned char payload[SANDBOX_LAYER_COUNT * (CALL_SANDBOX_DETAIL_MAX + 1)];
        struct call_sandbox ev = {
                .mode = (uint32_t)report.mode,
                .n_layers = SANDBOX_LAYER_COUNT,
        };
        size_t len = 0;

        if (!report.applied)
                return 0;
        for (unsigned l = 0; l < SANDBOX_LAYER_COUNT; l++) {
                size_t n = strnlen(report.detail[l], CALL_SANDBOX_DETAIL_MAX);

                ev.state[l] = (uint8_t)report.state[l];
                memcpy(payload + len, report.detail[l], n);
                payload[len + n] = '\0';
                len += n + 1;
        }
        ev.details = (struct call_range){ 0, len };
        return send_event(w, CALL_EV_SANDBOX, &ev, sizeof(ev), payload, len, false);
}
