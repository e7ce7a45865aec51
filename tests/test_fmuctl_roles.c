/*
 * fmuctl and roles (docs/security.md): list and status name who loaded a
 * session, and shutdown by the daemon's own user (an admin) ends the
 * daemon with status 0.
 */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
        daemon_kill(&d);
}

static struct run_result fmuctl(const char *const args[])
{
        char *argv[16] = { (char *)FMUD_FMUCTL };
        struct run_result r = { 0 };
        size_t n = 1;

        for (; args[n - 1] && n < 15; n++)
                argv[n] = (char *)args[n - 1];
        argv[n] = NULL;
        cr_assert(run_capture(argv, &r) == 0);
        return r;
}

Test(fmuctl_roles, list_and_status_name_who_loaded_and_shutdown_exits_0, .init = setup,
     .fini = teardown)
{
        struct json_object *o, *v = NULL, *u = NULL;
        struct run_result r;
        char want[64];

        snprintf(want, sizeof(want), "uid %lu", (unsigned long)geteuid());
        r = fmuctl((const char *[]){ "load", FMUD_EXAMPLES "/msd.ssp", NULL });
        cr_assert(r.exit_code == 0 && strcmp(r.out, "1\n") == 0, "%s%s", r.out, r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "list", "--json", NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        o = json_tokener_parse(r.out);
        cr_assert(o && json_object_object_get_ex(o, "sessions", &v), "%s", r.out);
        cr_assert(json_object_object_get_ex(json_object_array_get_idx(v, 0), "user", &u), "%s",
                  r.out);
        cr_assert_str_eq(json_object_get_string(u), want);
        json_object_put(o);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "list", NULL });
        cr_assert(r.exit_code == 0 && strstr(r.out, "[user uid "), "%s", r.out);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "status", "1", NULL });
        cr_assert(r.exit_code == 0 && strstr(r.out, want), "%s", r.out);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "shutdown", NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        run_result_fini(&r);
        daemon_join(&d);
}
