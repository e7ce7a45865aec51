/*
 * fmuctl_realtime: fmuctl load's real-time options against a real fmud:
 * a refused option fails the load with one line naming it and the
 * kernel's reason; --rt-best-effort loads and status (text and --json)
 * says "refused: REASON"; bad priorities are usage errors.
 */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_fixture.h"
#include "support/run.h"

#define MISSING_CPU     "1000"  /* below CPU_SETSIZE, above any cpu this machine has */

static struct fmud_daemon d;

static void setup(void)
{
        daemon_start(&d, (const char *const[]){ "--worker-mlock-max", "1G", NULL });
        cr_assert(setenv("FMUD_ENDPOINT", d.endpoint, 1) == 0);
}

static void teardown(void)
{
        daemon_stop(&d);
}

TestSuite(fmuctl_realtime, .init = setup, .fini = teardown);

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

static struct json_object *key(struct json_object *o, const char *k)
{
        struct json_object *v = NULL;

        cr_assert(json_object_object_get_ex(o, k, &v), "no key '%s' in %s", k,
                  json_object_to_json_string(o));
        return v;
}

Test(fmuctl_realtime, a_refused_option_fails_the_load_naming_it_and_the_reason)
{
        struct run_result r;

        r = fmuctl((const char *[]){ "load", FMUD_EXAMPLES "/msd.ssp", "--rt-worker-cpus",
                                     MISSING_CPU, NULL });
        cr_assert(r.exit_code == 1, "exit %d: %s", r.exit_code, r.err);
        cr_assert(strstr(r.err, "realtime worker-cpus: Invalid argument (task "), "%s", r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "list", NULL });
        cr_assert(r.exit_code == 0 && !strstr(r.out, "msd"), "%s", r.out);
        run_result_fini(&r);
}

Test(fmuctl_realtime, best_effort_loads_and_status_reports_the_refusal)
{
        struct json_object *o, *rt, *e;
        struct run_result r;

        r = fmuctl((const char *[]){ "load", FMUD_EXAMPLES "/msd.ssp", "--rt-worker-cpus",
                                     MISSING_CPU, "--rt-best-effort", NULL });
        cr_assert(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "status", "1", NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        cr_assert(strstr(r.out, "realtime     worker-cpus      refused: Invalid argument (task "),
                  "%s", r.out);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "status", "1", "--json", NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        o = json_tokener_parse(r.out);
        cr_assert(o, "%s", r.out);
        rt = key(o, "realtime");
        /* The refused option, then how the (ordinary) master waits. */
        cr_assert(json_object_array_length(rt) == 2);
        e = json_object_array_get_idx(rt, 1);
        cr_assert(!strcmp(json_object_get_string(key(e, "option")), "master-wait"));
        cr_assert(!strcmp(json_object_get_string(key(e, "state")), "adaptive"));
        e = json_object_array_get_idx(rt, 0);
        cr_assert(!strcmp(json_object_get_string(key(e, "option")), "worker-cpus"));
        cr_assert(!strncmp(json_object_get_string(key(e, "state")),
                           "refused: Invalid argument (task ", 32), "%s",
                  json_object_get_string(key(e, "state")));
        json_object_put(o);
        run_result_fini(&r);
}

Test(fmuctl_realtime, a_priority_above_99_is_a_usage_error)
{
        struct run_result r;

        r = fmuctl((const char *[]){ "load", FMUD_EXAMPLES "/msd.ssp", "--rt-priority", "100",
                                     NULL });
        cr_assert(r.exit_code == 2, "exit %d: %s", r.exit_code, r.err);
        cr_assert(strstr(r.err, "--rt-priority needs a SCHED_FIFO priority, 1 to 99 (0: none)"),
                  "%s", r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "load", FMUD_EXAMPLES "/msd.ssp", "--rt-worker-priority",
                                     "x", NULL });
        cr_assert(r.exit_code == 2, "exit %d: %s", r.exit_code, r.err);
        run_result_fini(&r);
}

Test(fmuctl_realtime, run_local_refuses_the_realtime_options)
{
        struct run_result r;

        r = fmuctl((const char *[]){ "run", "--local", FMUD_EXAMPLES "/msd.ssp", "--rt-priority",
                                     "10", NULL });
        cr_assert(r.exit_code == 2, "exit %d: %s", r.exit_code, r.err);
        cr_assert(strstr(r.err, "fmuctl run: the --rt-* options need a daemon, not --local"),
                  "%s", r.err);
        run_result_fini(&r);
}

/*
 * --rt-mlock: status lists worker-mlock once per instance, with its name,
 * as text and in --json. Whether the lock holds is the machine's say (a
 * sandboxed worker locks only where RLIMIT_MEMLOCK covers what it maps
 * after dropping CAP_IPC_LOCK): best effort loads either way.
 */
Test(fmuctl_realtime, rt_mlock_is_reported_per_instance)
{
        static const char *const insts[] = { "mass1", "mass2" };
        struct json_object *o, *rt;
        struct run_result r;
        char line[96];

        r = fmuctl((const char *[]){ "load", FMUD_EXAMPLES "/msd.ssp", "--rt-mlock",
                                     "--rt-best-effort", NULL });
        cr_assert(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "status", "1", NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        for (size_t i = 0; i < 2; i++) {
                char *at;

                snprintf(line, sizeof(line), "(instance %s)\n", insts[i]);
                at = strstr(r.out, line);
                cr_assert(at != NULL, "%s: %s", line, r.out);
                while (at > r.out && at[-1] != '\n')
                        at--;
                cr_assert(!strncmp(at, "realtime     worker-mlock     active (instance", 46) ||
                          !strncmp(at, "realtime     worker-mlock     refused: ", 39), "%s", at);
        }
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "status", "1", "--json", NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        o = json_tokener_parse(r.out);
        cr_assert(o, "%s", r.out);
        rt = key(o, "realtime");
        cr_assert(json_object_array_length(rt) == 2, "%s", r.out);
        for (size_t i = 0; i < 2; i++) {
                struct json_object *e = json_object_array_get_idx(rt, i);

                cr_assert(!strcmp(json_object_get_string(key(e, "option")), "worker-mlock"));
                cr_assert(!strcmp(json_object_get_string(key(e, "instance")), insts[i]));
        }
        json_object_put(o);
        run_result_fini(&r);
}

Test(fmuctl_realtime, run_local_refuses_rt_mlock)
{
        struct run_result r;

        r = fmuctl((const char *[]){ "run", "--local", FMUD_EXAMPLES "/msd.ssp", "--rt-mlock",
                                     NULL });
        cr_assert(r.exit_code == 2, "exit %d: %s", r.exit_code, r.err);
        cr_assert(strstr(r.err, "fmuctl run: the --rt-* options need a daemon, not --local"),
                  "%s", r.err);
        run_result_fini(&r);
}
