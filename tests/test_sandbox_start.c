/*
 * A sandboxed worker's start and its threads: refusals while the FMU's
 * library loads, refusals in threads that block every signal, the
 * working directory in strict mode; against the Escape test FMU.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "engine/instance/instance.h"
#include "support/tmpdir.h"
#include "sandbox_fixture.h"

/* A copy of the Escape FMU whose constructor tries a refused call (resources/ctor-socket). */
static char *escape_with_ctor_socket(void)
{
        char *dir = tmpdir_new("fmud-sandbox-ctor");
        char cmd[2048], res[1100];

        cr_assert(dir != NULL);
        cr_assert(chmod(dir, 0755) == 0);
        snprintf(cmd, sizeof(cmd), "cp -R '%s/Escape' '%s/Escape'", FMUD_TEST_FMU_DIR, dir);
        cr_assert(system(cmd) == 0, "%s", cmd);
        snprintf(res, sizeof(res), "%s/Escape/resources", dir);
        cr_assert(tmpdir_write(res, "ctor-socket", "", 0) == 0);
        snprintf(cmd, sizeof(cmd), "chmod -R a+rX '%s'", dir);
        cr_assert(system(cmd) == 0, "%s", cmd);
        return dir;
}

static void refused_while_loading(enum sandbox_mode mode)
{
        char *dir = escape_with_ctor_socket();
        char fmu[1100];
        struct inst_opts o;
        struct esc e;

        memset(&e, 0, sizeof(e));
        sbx_opts_for(&o, "Escape", mode);
        snprintf(fmu, sizeof(fmu), "%s/Escape", dir);
        o.fmu_dir = fmu;
        o.log = sbx_on_log;
        o.log_ctx = &e.log;
        e.inst = sbx_start(&o);
        cr_assert(sbx_logged(&e.log, "refused system call socket (AF_INET)") != NULL,
                  "the constructor's refusal was not logged (%d messages)", e.log.n);
        cr_assert(eq(int, sbx_esc_try(&e, 9, 0, NULL), 0), "reading its own resources");
        cr_assert(eq(int, inst_free(e.inst), 0));
        tmpdir_free(dir);
}

Test(sandbox_start, strict_refusal_in_a_constructor_is_logged_and_the_fmu_loads)
{
        refused_while_loading(SANDBOX_STRICT);
}

Test(sandbox_start, basic_refusal_in_a_constructor_is_logged_and_the_fmu_loads)
{
        refused_while_loading(SANDBOX_BASIC);
}

static void blocked_threads(enum sandbox_mode mode)
{
        struct esc e;

        sbx_esc_start(&e, mode, false);
        /* 1: pthread_sigmask, 2: sigprocmask; every signal blocked, SIGSYS included. */
        for (int how = 1; how <= 2; how++) {
                int r;

                e.log.n = 0;
                r = sbx_esc_try(&e, 11, how, NULL);
                cr_assert(eq(int, r, EPERM), "blocking with %d: errno %d (%s)", how, r,
                          strerror(r));
                cr_assert(sbx_logged(&e.log, "refused system call socket (AF_INET)") != NULL,
                          "blocking with %d: not logged", how);
        }
        cr_assert(eq(int, sbx_esc_try(&e, 0, 0, NULL), 0));
        cr_assert(eq(int, inst_free(e.inst), 0));
}

Test(sandbox_start, strict_refusal_in_a_thread_blocking_signals_is_an_eperm)
{
        blocked_threads(SANDBOX_STRICT);
}

Test(sandbox_start, basic_refusal_in_a_thread_blocking_signals_is_an_eperm)
{
        blocked_threads(SANDBOX_BASIC);
}

static void working_directory(enum sandbox_mode mode)
{
        char path[1100];
        struct esc e;
        int r;

        sbx_esc_start(&e, mode, false);
        r = sbx_esc_try(&e, 3, 0, ".");
        cr_assert(eq(int, r, 0), "writing in the working directory: errno %d (%s)", r,
                  strerror(r));
        snprintf(path, sizeof(path), "%s/escape-%d.txt", inst_scratch_dir(e.inst),
                 (int)inst_pid(e.inst));
        cr_assert(access(path, F_OK) == 0, "no '%s'", path);
        cr_assert(eq(int, inst_free(e.inst), 0));
}

Test(sandbox_start, strict_working_directory_is_the_writable_scratch)
{
        working_directory(SANDBOX_STRICT);
}

Test(sandbox_start, basic_working_directory_is_the_scratch)
{
        working_directory(SANDBOX_BASIC);
}
