/*
 * daemon_ids: a session id is never handed out again by a daemon started
 * anew on the same state directory, so that a client's target from before
 * the restart (session, generation) names no session after it, instead
 * of the first one loaded since (which got the same id and generation 1).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_fixture.h"
#include "support/run.h"
#include "support/tmpdir.h"

Test(daemon_ids, a_target_from_before_a_restart_names_no_session_after_it, .timeout = 120)
{
        char *dir = tmpdir_new("fmud-ids");
        char ep[512], pub[512];
        struct fmud_daemon d1 = { 0 }, d2 = { 0 };
        struct proto_load msd = { .path = daemon_str(FMUD_EXAMPLES "/msd.ssp") };
        struct proto_progress pr;
        struct proto_target old;
        uint64_t s2, gen;
        struct fmud *a, *b;
        int r;

        cr_assert(dir != NULL);
        snprintf(ep, sizeof(ep), "ipc://%s/control.sock", dir);
        snprintf(pub, sizeof(pub), "ipc://%s/events.sock", dir);
        const char *const extra[] = { "--state-dir", dir, "--endpoint", ep, "--pub-endpoint",
                                      pub, NULL };

        daemon_start(&d1, extra);
        cr_assert(eq(int, fmud_connect(ep, NULL, &a, NULL, 0), 0));
        old.session = daemon_load(a, &msd, &gen);
        old.generation = gen;
        daemon_stop(&d1);

        daemon_start(&d2, extra);
        cr_assert(eq(int, fmud_connect(ep, NULL, &b, NULL, 0), 0));
        s2 = daemon_load(b, &msd, &gen);
        cr_assert(eq(u64, s2, old.session + 1), "%lu after %lu", (unsigned long)s2,
                  (unsigned long)old.session);
        /* The old handle reconnects; its target names nothing now. */
        r = fmud_step(a, &old, 1, &pr);
        daemon_assert_refused(a, r, PROTO_E_NO_SESSION, "step with a target of before");
        r = fmud_unload(a, &old);
        daemon_assert_refused(a, r, PROTO_E_NO_SESSION, "unload with a target of before");
        /* The run loaded since is untouched. */
        r = fmud_unload(b, &(struct proto_target){ s2, gen });
        cr_assert(eq(int, r, 0), "%s", fmud_errmsg(b));
        fmud_close(a);
        fmud_close(b);
        daemon_stop(&d2);
        tmpdir_free(dir);
}

/*
 * A second daemon on a state directory one already uses is refused at
 * start: both would hand out the same ids (and write the same results).
 */
Test(daemon_ids, a_second_daemon_on_the_same_state_directory_is_refused, .timeout = 120)
{
        struct fmud_daemon d = { 0 };
        char *dir = tmpdir_new("fmud-ids2"), ep[512], pub[512], cache[512], scratch[512];
        struct run_result r;

        cr_assert(dir != NULL);
        daemon_start(&d, (const char *const[]){ "--state-dir", dir, NULL });
        snprintf(ep, sizeof(ep), "ipc://%s/c2.sock", dir);
        snprintf(pub, sizeof(pub), "ipc://%s/p2.sock", dir);
        snprintf(cache, sizeof(cache), "%s/cache2", dir);
        snprintf(scratch, sizeof(scratch), "%s/scratch2", dir);
        cr_assert(eq(int, run_capture((char *[]){ (char *)FMUD_BINARY, (char *)"--no-config",
                                                  (char *)"--endpoint", ep,
                                                  (char *)"--pub-endpoint", pub,
                                                  (char *)"--state-dir", dir,
                                                  (char *)"--cache-dir", cache,
                                                  (char *)"--scratch-dir", scratch,
                                                  (char *)"--worker", (char *)FMUD_WORKER,
                                                  NULL }, &r), 0));
        cr_assert(not(eq(int, r.exit_code, 0)), "%s", r.err);
        cr_assert(strstr(r.err, "is in use by another fmud") != NULL, "%s", r.err);
        run_result_fini(&r);
        daemon_stop(&d);
        tmpdir_free(dir);
}
