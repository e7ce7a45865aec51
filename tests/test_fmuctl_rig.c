/*
 * fmuctl_rig: fmuctl load's rig options against a real fmud: the ports
 * and policy reach the session and status shows its rig (text and
 * --json); a connected input refuses the load naming its connection; a
 * bad policy or timeout is a usage error; --local refuses them.
 */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_fixture.h"
#include "support/run.h"

static struct fmud_daemon d;

static void setup(void)
{
        daemon_start(&d, NULL);
        cr_assert(setenv("FMUD_ENDPOINT", d.endpoint, 1) == 0);
}

static void teardown(void)
{
        daemon_stop(&d);
}

TestSuite(fmuctl_rig, .init = setup, .fini = teardown);

static struct run_result fmuctl(const char *const args[])
{
        char *argv[32] = { (char *)FMUD_FMUCTL };
        struct run_result r = { 0 };
        size_t n = 1;

        for (; args[n - 1] && n < 31; n++)
                argv[n] = (char *)args[n - 1];
        argv[n] = NULL;
        cr_assert(run_capture(argv, &r) == 0);
        return r;
}

Test(fmuctl_rig, the_ports_reach_the_session_and_status_shows_its_rig)
{
        struct json_object *o, *rig, *v;
        struct run_result r;

        r = fmuctl((const char *[]){ "load", FMUD_EXAMPLES "/msd.ssp", "--rig-out", "mass1.x1",
                                     "--rig-policy", "pause", "--rig-timeout", "20", NULL });
        cr_assert(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "status", "1", NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        cr_assert(strstr(r.out, "rig          none, policy pause; 0 writes applied, 0 late, "
                         "0 missing, 0 dropped, 0 bad\n"), "%s", r.out);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "status", "1", "--json", NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        o = json_tokener_parse(r.out);
        cr_assert(o && json_object_object_get_ex(o, "rig", &rig), "%s", r.out);
        cr_assert(json_object_object_get_ex(rig, "policy", &v));
        cr_assert(!strcmp(json_object_get_string(v), "pause"));
        json_object_put(o);
        run_result_fini(&r);
}

Test(fmuctl_rig, a_connected_input_refuses_the_load_naming_its_connection)
{
        struct run_result r;

        r = fmuctl((const char *[]){ "load", FMUD_EXAMPLES "/msd.ssp", "--rig-in", "mass1.F=0",
                                     NULL });
        cr_assert(r.exit_code == 1, "exit %d: %s", r.exit_code, r.err);
        cr_assert(strstr(r.err, "'mass1.F': rig input: connected from 'mass2.F'"), "%s", r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "list", NULL });
        cr_assert(r.exit_code == 0 && !strstr(r.out, "msd"), "%s", r.out);
        run_result_fini(&r);
}

Test(fmuctl_rig, bad_policies_and_timeouts_are_usage_errors_and_local_runs_refuse_rigs)
{
        struct run_result r;

        r = fmuctl((const char *[]){ "load", FMUD_EXAMPLES "/msd.ssp", "--rig-policy", "later",
                                     NULL });
        cr_assert(r.exit_code == 2, "exit %d: %s", r.exit_code, r.err);
        cr_assert(strstr(r.err, "--rig-policy needs hold, safe or pause, not 'later'"), "%s",
                  r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "load", FMUD_EXAMPLES "/msd.ssp", "--rig-timeout", "0",
                                     NULL });
        cr_assert(r.exit_code == 2, "exit %d: %s", r.exit_code, r.err);
        cr_assert(strstr(r.err, "--rig-timeout needs milliseconds, 1 to 60000"), "%s", r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "run", "--local", FMUD_EXAMPLES "/msd.ssp", "--rig-out",
                                     "mass1.x1", NULL });
        cr_assert(r.exit_code == 2, "exit %d: %s", r.exit_code, r.err);
        cr_assert(strstr(r.err, "the --rig-* options need a daemon, not --local"), "%s", r.err);
        run_result_fini(&r);
}
