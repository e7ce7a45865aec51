/*
 * The worker sandbox (worker/sandbox.h) end to end: real fmud-worker
 * processes, the layer report the daemon receives, the worker's /proc
 * files read from outside, kill_on_violation, and LinearOde giving the
 * same results in every mode. The escape attempts are in
 * test_sandbox_escape.c.
 *
 * Whether namespaces and Landlock exist depends on the kernel: the tests
 * read the worker's report and assert what it says (active, or
 * unavailable with a reason) instead of failing where a layer cannot be
 * had. Seccomp, the limits and the privileges exist on every kernel the
 * project supports and must be active.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "engine/instance/instance.h"
#include "sandbox_fixture.h"
#include "support/run.h"
#include "support/tmpdir.h"

static void check_report(struct inst *in, enum sandbox_mode mode)
{
        const struct inst_layer *l = inst_sandbox(in);

        for (int i = 0; i < SANDBOX_LAYER_COUNT; i++) {
                cr_assert(l[i].detail && l[i].detail[0], "layer %s without detail",
                          sandbox_layer_name(i));
                cr_log_info("%s %s: %s: %s", sandbox_mode_name(mode), sandbox_layer_name(i),
                            sandbox_state_name(l[i].state), l[i].detail);
        }
        cr_assert(l[SANDBOX_ENVIRONMENT].state == SANDBOX_ACTIVE, "%s", l[0].detail);
        if (mode == SANDBOX_OFF) {
                for (int i = SANDBOX_LIMITS; i < SANDBOX_LAYER_COUNT; i++)
                        cr_assert(l[i].state == SANDBOX_DISABLED, "%s", sandbox_layer_name(i));
                return;
        }
        cr_assert(l[SANDBOX_LIMITS].state == SANDBOX_ACTIVE, "%s", l[SANDBOX_LIMITS].detail);
        cr_assert(l[SANDBOX_PRIVILEGES].state == SANDBOX_ACTIVE, "%s", l[SANDBOX_PRIVILEGES].detail);
        cr_assert(l[SANDBOX_SECCOMP].state == SANDBOX_ACTIVE, "%s", l[SANDBOX_SECCOMP].detail);
        if (mode == SANDBOX_BASIC)
                cr_assert(l[SANDBOX_NAMESPACES].state == SANDBOX_DISABLED);
        /* What the kernel may lack is active or says why not ("call: reason"). */
        for (int i = SANDBOX_NAMESPACES; i <= SANDBOX_LANDLOCK; i++)
                if (l[i].state == SANDBOX_UNAVAILABLE)
                        cr_assert(strchr(l[i].detail, ':'), "no reason: %s", l[i].detail);
                else if (mode == SANDBOX_STRICT || i == SANDBOX_LANDLOCK)
                        cr_assert(l[i].state == SANDBOX_ACTIVE, "%s", sandbox_layer_name(i));
}

static void check_process(struct inst *in)
{
        pid_t pid = inst_pid(in);
        char v[128], path[64], link[4096], fmu[4096];
        const char *scratch = inst_scratch_dir(in);
        char *env;
        size_t len, off;
        int n_env = 0;

        sbx_status_field(pid, "NoNewPrivs", v, sizeof(v));
        cr_assert(!strcmp(v, "1"), "NoNewPrivs %s", v);
        sbx_status_field(pid, "Seccomp", v, sizeof(v));
        cr_assert(!strcmp(v, "2"), "Seccomp %s", v);
        sbx_status_field(pid, "CapEff", v, sizeof(v));
        cr_assert(strtoull(v, NULL, 16) == 0, "CapEff %s", v);
        if (geteuid() == 0) {
                sbx_status_field(pid, "Uid", v, sizeof(v));
                cr_assert(strtoul(v, NULL, 10) != 0, "a root daemon's worker still runs as root");
                sbx_status_field(pid, "CapPrm", v, sizeof(v));
                cr_assert(strtoull(v, NULL, 16) == 0, "CapPrm %s", v);
        }
#ifndef SANITIZED
        cr_assert(sbx_limit_of(pid, "Max address space") == SANDBOX_MEM_DEFAULT);
#else
        cr_assert(sbx_limit_of(pid, "Max address space") >= SANDBOX_MEM_DEFAULT);
#endif
        cr_assert(sbx_limit_of(pid, "Max open files") == SANDBOX_NOFILE);
        cr_assert(sbx_limit_of(pid, "Max file size") == SANDBOX_FSIZE);
        cr_assert(sbx_limit_of(pid, "Max core file size") == 0);
        cr_assert(sbx_limit_of(pid, "Max cpu time") == ~0ull);

        cr_assert(scratch, "a sandboxed instance has a scratch dir");
        /* Namespaces, when the report says they are there. */
        if (inst_sandbox(in)[SANDBOX_NAMESPACES].state == SANDBOX_ACTIVE) {
                char mine[64], its[64];
                ssize_t a, b;

                snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
                a = readlink("/proc/self/ns/net", mine, sizeof(mine) - 1);
                b = readlink(path, its, sizeof(its) - 1);
                cr_assert(a > 0 && b > 0);
                mine[a] = its[b] = '\0';
                cr_assert(strcmp(mine, its) != 0, "the worker shares our network namespace");
                snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
                a = readlink("/proc/self/ns/mnt", mine, sizeof(mine) - 1);
                b = readlink(path, its, sizeof(its) - 1);
                cr_assert(a > 0 && b > 0);
                mine[a] = its[b] = '\0';
                cr_assert(strcmp(mine, its) != 0, "the worker shares our mount namespace");
        }
        /* Its own process group. */
        cr_assert(getpgid(pid) == pid);
        if (geteuid() != 0) {
                /* A non-dumpable worker's environ and fd are root's to read. */
                cr_log_warn("not root: the worker's environment and descriptors are not checked");
                return;
        }
        /* The environment: TMPDIR=scratch, HOME=scratch and nothing else we did not set. */
        snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
        env = sbx_slurp(path, &len);
        for (off = 0; off < len; off += strlen(env + off) + 1, n_env++) {
                if (!strncmp(env + off, "TMPDIR=", 7))
                        cr_assert(!strcmp(env + off + 7, scratch), "%s", env + off);
                else if (!strncmp(env + off, "HOME=", 5))
                        cr_assert(!strcmp(env + off + 5, scratch), "%s", env + off);
#ifdef SANITIZED
                else if (!strcmp(env + off, "LSAN_OPTIONS=detect_leaks=0"))
                        ;
#endif
                else
                        cr_assert_fail("unexpected environment entry '%s'", env + off);
        }
        cr_assert(n_env >= 2);

        /*
         * Descriptors: 0 on /dev/null, 1 and 2 the files the FMU's output
         * is read from (worker/output.c), 3 the channel, 4 the FMU
         * directory (held open, O_PATH, from before the privileges were
         * dropped), then the worker's own descriptors of those two files;
         * with a sanitizer first the stderr it was given (/dev/null here),
         * for the sanitizer's reports. Nothing else.
         */
        cr_assert(realpath(FMUD_TEST_FMU_DIR "/Escape", fmu));
        for (int fd = 0; fd < 64; fd++) {
#ifdef SANITIZED
                const int own = 6;
#else
                const int own = 5;
#endif
                ssize_t n;

                snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
                n = readlink(path, link, sizeof(link) - 1);
                if (fd > own + 1) {
                        cr_assert(n < 0, "worker descriptor %d is open", fd);
                        continue;
                }
                cr_assert(n > 0, "worker descriptor %d is closed", fd);
                link[n] = '\0';
                if (fd == 0 || (fd > 4 && fd < own))
                        cr_assert(!strcmp(link, "/dev/null"), "fd %d: %s", fd, link);
                else if (fd == 1 || fd == own)
                        cr_assert(!strncmp(link, "/memfd:stdout", 13), "fd %d: %s", fd, link);
                else if (fd == 2 || fd == own + 1)
                        cr_assert(!strncmp(link, "/memfd:stderr", 13), "fd %d: %s", fd, link);
                else if (fd == 3)
                        cr_assert(!strncmp(link, "/memfd:", 7), "fd 3: %s", link);
                else
                        cr_assert(!strcmp(link, fmu), "fd 4: %s, not %s", link, fmu);
        }
}

Test(sandbox, strict_reports_layers_and_confines_the_process)
{
        struct esc e;
        struct stat st;
        char *scratch;

        sbx_esc_start(&e, SANDBOX_STRICT, false);
        check_report(e.inst, SANDBOX_STRICT);
        check_process(e.inst);
        scratch = strdup(inst_scratch_dir(e.inst));
        cr_assert(stat(scratch, &st) == 0 && S_ISDIR(st.st_mode));
        cr_assert(inst_free(e.inst) == 0);
        cr_assert(stat(scratch, &st) < 0 && errno == ENOENT, "scratch dir '%s' left behind", scratch);
        free(scratch);
}

Test(sandbox, basic_reports_layers_and_confines_the_process)
{
        struct esc e;

        sbx_esc_start(&e, SANDBOX_BASIC, false);
        check_report(e.inst, SANDBOX_BASIC);
        check_process(e.inst);
        cr_assert(inst_free(e.inst) == 0);
}

Test(sandbox, off_reports_only_the_environment)
{
        struct esc e;

        sbx_esc_start(&e, SANDBOX_OFF, false);
        check_report(e.inst, SANDBOX_OFF);
        cr_assert(inst_scratch_dir(e.inst) == NULL);
        cr_assert(inst_free(e.inst) == 0);
}

Test(sandbox, kill_on_violation_kills_the_worker)
{
        struct esc e;
        struct inst_step_result res;
        struct inst_step st = { .t = 0, .h = 0.1 };
        const uint32_t va = VR_ATTEMPT;
        int32_t attempt = 1;
        int status;

        sbx_esc_start(&e, SANDBOX_STRICT, true);
        cr_assert(inst_set(e.inst, MD_INT32, &va, 1, &attempt, 1) == INST_OK);
        cr_assert(inst_do_step(e.inst, &st, &res) == -ESRCH, "%s", inst_message(e.inst));
        cr_assert(inst_exit_status(e.inst, &status) == 0);
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS, "status %#x", status);
        cr_assert(inst_free(e.inst) == -ESRCH);
}

/* LinearOde through a worker in mode m: x after 100 steps of 0.01, bit for bit. */
static void linear_ode(enum sandbox_mode m, double ret[100])
{
        const uint32_t vx = 1;
        struct inst_step_result res;
        struct inst_opts o;
        struct inst *in;

        sbx_opts_for(&o, "LinearOde", m);
        o.sandbox.mem_limit = 1ull << 30;
        o.sandbox.cpu_limit_s = 600;
        in = sbx_start(&o);
        if (m != SANDBOX_OFF) {
                cr_assert(sbx_limit_of(inst_pid(in), "Max cpu time") == 600);
#ifndef SANITIZED
                cr_assert(sbx_limit_of(inst_pid(in), "Max address space") == 1ull << 30);
#endif
        }
        for (int i = 0; i < 100; i++) {
                struct inst_step st = { .t = i * 0.01, .h = 0.01 };

                cr_assert(inst_do_step(in, &st, &res) == INST_OK, "%s", inst_message(in));
                cr_assert(inst_get(in, MD_FLOAT64, &vx, 1, &ret[i], 1) == INST_OK);
        }
        cr_assert(inst_free(in) == 0);
}

Test(sandbox, linear_ode_is_identical_in_every_mode)
{
        double off[100], basic[100], strict[100];

        linear_ode(SANDBOX_OFF, off);
        linear_ode(SANDBOX_BASIC, basic);
        linear_ode(SANDBOX_STRICT, strict);
        cr_assert(memcmp(off, basic, sizeof(off)) == 0);
        cr_assert(memcmp(off, strict, sizeof(off)) == 0);
        cr_assert(off[99] < 1.0 && off[99] > 0.3);
}

Test(sandbox, modes_parse_and_name)
{
        cr_assert(sandbox_mode_parse("off") == SANDBOX_OFF);
        cr_assert(sandbox_mode_parse("basic") == SANDBOX_BASIC);
        cr_assert(sandbox_mode_parse("strict") == SANDBOX_STRICT);
        cr_assert(sandbox_mode_parse("Strict") == -EINVAL);
        cr_assert(sandbox_mode_parse(NULL) == -EINVAL);
        cr_assert(!strcmp(sandbox_layer_name(SANDBOX_SECCOMP), "seccomp"));
        cr_assert(!strcmp(sandbox_layer_name(SANDBOX_LAYER_COUNT), "?"));
}

Test(sandbox, a_bad_mode_is_refused)
{
        struct inst_opts o;
        struct inst *in = NULL;

        sbx_opts_for(&o, "LinearOde", SANDBOX_OFF);
        o.sandbox.mode = (enum sandbox_mode)7;
        cr_assert(inst_new(&o, &in, NULL) == -EINVAL);
}

/* A root daemon's FMU cache may be private to root: the worker still loads from it. */
Test(sandbox, an_fmu_behind_a_private_directory_still_loads)
{
        char *priv = tmpdir_new("fmud-sandbox-private");
        char *const cp[] = { (char *)"/bin/cp", (char *)"-r", (char *)FMUD_TEST_FMU_DIR "/Escape",
                             priv, NULL };
        struct run_result rr;
        struct inst_opts o;
        struct esc e = { 0 };
        char dir[1100];

        if (geteuid() != 0) {
                tmpdir_free(priv);
                cr_skip_test("only a root daemon's workers change user");
        }
        cr_assert(priv && chmod(priv, 0700) == 0);
        cr_assert(run_capture(cp, &rr) == 0 && rr.exit_code == 0);
        run_result_fini(&rr);
        snprintf(dir, sizeof(dir), "%s/Escape", priv);
        for (int m = SANDBOX_BASIC; m <= SANDBOX_STRICT; m++) {
                sbx_opts_for(&o, "Escape", (enum sandbox_mode)m);
                o.fmu_dir = dir;
                o.log = sbx_on_log;
                o.log_ctx = &e.log;
                e.inst = sbx_start(&o);
                e.t = 0;
                e.steps = 0;
                cr_assert(sbx_esc_try(&e, 9, 0, NULL) == 0, "reading its own resources");
                cr_assert(inst_free(e.inst) == 0);
        }
        tmpdir_free(priv);
}
