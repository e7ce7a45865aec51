/*
 * daemon_require: [sandbox] require = all refuses to run an FMU in a
 * worker that lacks a layer its mode wants, naming the layer and why;
 * without it the worker runs, status and the log say what is missing.
 * The layer is made unavailable with FMUD_TEST_SANDBOX_SKIP (the
 * daemon's workers skip it, as on a kernel without it).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_fixture.h"
#include "support/tmpdir.h"

#define MISBEHAVE       FMUD_TEST_FMU_DIR "/Misbehave.fmu"

static struct fmud_daemon d;
static struct fmud *c;
static char *conf_dir;

static void start(const char *require)
{
        char text[128], path[4096];

        conf_dir = tmpdir_new("fmud-require");
        cr_assert(conf_dir != NULL);
        snprintf(text, sizeof(text), "[sandbox]\nmode = basic\nrequire = %s\n", require);
        cr_assert(tmpdir_write(conf_dir, "fmud.conf", text, strlen(text)) == 0);
        snprintf(path, sizeof(path), "%s/fmud.conf", conf_dir);
        cr_assert(setenv("FMUD_TEST_SANDBOX_SKIP", "landlock", 1) == 0);
        daemon_start(&d, (const char *const[]){ "--config", path, NULL });
        cr_assert(unsetenv("FMUD_TEST_SANDBOX_SKIP") == 0);
        c = daemon_connect(&d);
}

static void teardown(void)
{
        fmud_close(c);
        c = NULL;
        daemon_stop(&d);
        if (conf_dir)
                tmpdir_free(conf_dir);
        conf_dir = NULL;
}

Test(daemon_require, all_refuses_a_worker_without_a_layer, .fini = teardown)
{
        struct proto_load a = { .path = daemon_str(MISBEHAVE) };
        struct proto_list_result l;
        uint64_t s = 0;
        char *log;
        int r;

        start("all");
        r = fmud_load(c, &a, &s, NULL);
        daemon_assert_refused(c, r, PROTO_E_FAULT, "a load without landlock");
        cr_assert(strstr(fmud_errmsg(c), "the sandbox layer landlock is unavailable (skipped for "
                                         "a test (FMUD_TEST_SANDBOX_SKIP)) and sandbox.require "
                                         "= all") != NULL, "%s", fmud_errmsg(c));
        /* Nothing is left: no session, no worker (daemon_stop() checks the processes). */
        cr_assert(fmud_list(c, &l) == 0, "%s", fmud_errmsg(c));
        cr_assert(eq(u32, l.n, 0));
        log = daemon_log(&d);
        cr_assert(strstr(log, "<3>fmud: session 1 (") && strstr(log, "load of '" MISBEHAVE
                                                                  "' refused (fault): "),
                  "%s", log);
        cr_assert(strstr(log, "the sandbox layer landlock is unavailable") != NULL, "%s", log);
        free(log);
}

Test(daemon_require, none_runs_it_and_says_what_is_missing, .fini = teardown)
{
        struct proto_load a = { .path = daemon_str(MISBEHAVE) };
        struct proto_session_status st;
        const struct proto_layer *ll = NULL;
        uint64_t s;
        char *log;

        start("none");
        s = daemon_load(c, &a, NULL);
        cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
        for (uint32_t i = 0; i < st.insts[0].n_layers; i++)
                if (daemon_str_eq(st.insts[0].layers[i].name, "landlock"))
                        ll = &st.insts[0].layers[i];
        cr_assert(ll && ll->state == PROTO_LAYER_UNAVAILABLE);
        log = daemon_log(&d);
        cr_assert(strstr(log, "<4>fmud: session 1 (") &&
                  strstr(log, "runs without the sandbox layer landlock: skipped for a test"),
                  "%s", log);
        free(log);
}

/* A test hook the daemon honours is said at warning when it starts, never silently. */
Test(daemon_require, a_test_hook_is_logged_at_warning, .fini = teardown)
{
        char *log;

        start("none");
        log = daemon_log(&d);
        cr_assert(strstr(log, "<4>fmud: test hook FMUD_TEST_SANDBOX_SKIP set: workers skip "
                              "sandbox layers") != NULL, "%s", log);
        free(log);
}
