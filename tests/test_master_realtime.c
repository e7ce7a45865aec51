/*
 * master_realtime: the real-time settings of a scenario (rtPriority,
 * rtWorkerPriority, rtCpus, rtWorkerCpus, rtBestEffort on fmud:Settings)
 * as the experiment holds them, and the values refused at load with the
 * attribute named.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <string.h>

#include "test_master_sys.h"

static bool has_error(const struct msys *x, const char *text)
{
        for (size_t i = 0; i < x->diags.n; i++)
                if (x->diags.v[i].severity == DIAG_ERROR && strstr(x->diags.v[i].message, text))
                        return true;
        return false;
}

Test(master_realtime, the_settings_reach_the_experiment)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("lin", "LinearOde"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\" rtPriority=\"50\" rtWorkerPriority=\"49\" "
                         "rtCpus=\"1\" rtWorkerCpus=\"0,2-3\" rtBestEffort=\"true\" "
                         "rtMlock=\"false\"",
        };
        const struct scenario_realtime *rt;
        struct msys x;

        msys_load(&x, &spec);
        rt = &x.sc->experiment.realtime;
        cr_assert(rt->has_priority);
        cr_assert(eq(u32, rt->priority, 50));
        cr_assert(rt->has_worker_priority);
        cr_assert(eq(u32, rt->worker_priority, 49));
        cr_assert(eq(str, (char *)rt->cpus, "1"));
        cr_assert(eq(str, (char *)rt->worker_cpus, "0,2-3"));
        cr_assert(rt->best_effort);
        /* false is said, not left out: it turns a daemon's default off. */
        cr_assert(rt->has_mlock && !rt->mlock);
        msys_fini(&x);
}

Test(master_realtime, without_settings_nothing_is_asked)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("lin", "LinearOde"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
        };
        const struct scenario_realtime *rt;
        struct msys x;

        msys_load(&x, &spec);
        rt = &x.sc->experiment.realtime;
        cr_assert(eq(int, rt->has_priority + rt->has_worker_priority + rt->best_effort +
                              rt->has_mlock, 0));
        cr_assert(eq(str, (char *)rt->cpus, ""));
        cr_assert(eq(str, (char *)rt->worker_cpus, ""));
        msys_fini(&x);
}

Test(master_realtime, bad_values_are_refused_naming_the_attribute)
{
        static const struct { const char *attrs, *error; } cases[] = {
                { "rtPriority=\"100\"", "rtPriority \"100\": expected a SCHED_FIFO priority, "
                                        "0 (none) to 99" },
                { "rtWorkerPriority=\"-1\"", "rtWorkerPriority \"-1\": expected a SCHED_FIFO" },
                { "rtCpus=\"one\"", "rtCpus \"one\": expected a cpu list such as 0-1,3" },
                { "rtWorkerCpus=\"\"", "rtWorkerCpus \"\": expected a cpu list" },
                { "rtBestEffort=\"yes\"", "rtBestEffort \"yes\": expected true or false" },
                { "rtMlock=\"1\"", "rtMlock \"1\": expected true or false" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct msys_spec spec = {
                        .elements = MSYS_COMP("lin", "LinearOde"),
                        .stop = 1.0,
                        .attrs = cases[i].attrs,
                };
                struct msys x = { 0 };

                cr_assert(eq(int, msys_load_try(&x, &spec), -EINVAL), "%s", cases[i].attrs);
                cr_assert(has_error(&x, cases[i].error), "%s: no error '%s'", cases[i].attrs,
                          cases[i].error);
                msys_fini(&x);
        }
}
