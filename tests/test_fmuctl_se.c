/*
 * fmuctl_se: a Scheduled Execution FMU (FMI 3.0 section 5) through the
 * real fmuctl and a real fmud: `fmuctl run --interface se` runs Partitions
 * to its hand-computed end; a load refuses, saying why, an FMU without the
 * interface asked for and one whose input Clock has no priority; a bad
 * --interface is a usage error.
 */
#include <criterion/criterion.h>
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

/* fmuctl ARGS... (NULL-terminated); the caller frees with run_result_fini(). */
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

Test(fmuctl_se, run_with_interface_se_activates_the_partitions, .init = setup, .fini = teardown)
{
        char *out = NULL, *csv, *last;
        struct run_result r;

        cr_assert(asprintf(&out, "%s/p.csv", d.dir) > 0);
        /* Clocked outputs are recorded when named. */
        r = fmuctl((const char *[]){ "run", FMUD_TEST_FMU_DIR "/Partitions.fmu", "--interface", "se",
                                     "--record", "shared", "--record", "seen", "--record", "n_slow",
                                     "--record", "t_slow", "--out", out, NULL });
        cr_assert(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
        /* 13 points (0.025 and 0.075 extra), each with the row left before its tick. */
        cr_assert(strstr(r.out, "p.csv: 26 rows, 4 columns") != NULL, "%s", r.out);
        run_result_fini(&r);
        csv = daemon_slurp(out, NULL);
        cr_assert(strncmp(csv, "time,shared,seen,n_slow,t_slow\n", 31) == 0, "%.400s", csv);
        /* At 0.05 both tick and fast runs first: slow sees 6, not 5. */
        cr_assert(strstr(csv, "\n0.05,5,3,2,0.025\n0.05,6,6,3,0.05\n") != NULL, "%s", csv);
        /* The last row, at 0.1: shared 11, seen 11, n_slow 5, t_slow 0.1. */
        if (csv[strlen(csv) - 1] == '\n')
                csv[strlen(csv) - 1] = '\0';
        last = strrchr(csv, '\n');
        cr_assert(last != NULL);
        cr_assert(strcmp(last + 1, "0.1,11,11,5,0.1") == 0, "%s", csv);
        free(csv);
        free(out);
}

Test(fmuctl_se, loads_without_the_interface_or_a_priority_are_refused, .init = setup,
     .fini = teardown)
{
        struct run_result r;

        r = fmuctl((const char *[]){ "load", FMUD_TEST_FMU_DIR "/LinearOde.fmu", "--interface", "se",
                                     NULL });
        cr_assert(r.exit_code == 1, "exit %d: %s", r.exit_code, r.err);
        cr_assert(strstr(r.err, "ScheduledExecution asked for, but the FMU has no "
                                "ScheduledExecution interface (it has CoSimulation)") != NULL,
                  "%s", r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "load", FMUD_TEST_FMU_DIR "/PartitionsNoPrio.fmu", NULL });
        cr_assert(r.exit_code == 1, "exit %d: %s", r.exit_code, r.err);
        cr_assert(strstr(r.err, "input Clock 'slow' has no priority") != NULL, "%s", r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "load", FMUD_TEST_FMU_DIR "/Partitions.fmu", "--interface",
                                     "sched", NULL });
        cr_assert(r.exit_code == 2, "exit %d: %s", r.exit_code, r.err);
        cr_assert(strstr(r.err, "--interface needs cs, me or se, not 'sched'") != NULL, "%s", r.err);
        run_result_fini(&r);
        /* Nothing was loaded. */
        r = fmuctl((const char *[]){ "list", NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        cr_assert(strstr(r.out, "Partitions") == NULL && strstr(r.out, "LinearOde") == NULL,
                  "%s", r.out);
        run_result_fini(&r);
}

/* status names the partitions of a Scheduled Execution instance, in activation order. */
Test(fmuctl_se, status_shows_the_partitions, .init = setup, .fini = teardown)
{
        struct run_result r;

        r = fmuctl((const char *[]){ "load", FMUD_TEST_FMU_DIR "/Partitions.fmu", NULL });
        cr_assert(r.exit_code == 0 && strcmp(r.out, "1\n") == 0, "%s%s", r.out, r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "status", "1", NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        cr_assert(strstr(r.out, "    partitions fast (priority 1), slow (priority 2) (Scheduled "
                                "Execution)\n") != NULL, "%s", r.out);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "status", "1", "--json", NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        cr_assert(strstr(r.out, "\"partitions\":\"fast (priority 1), slow (priority 2)\"") != NULL ||
                  strstr(r.out, "\"partitions\": \"fast (priority 1), slow (priority 2)\"") != NULL,
                  "%s", r.out);
        run_result_fini(&r);
        /* A Co-Simulation instance has none. */
        r = fmuctl((const char *[]){ "load", FMUD_TEST_FMU_DIR "/LinearOde.fmu", NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "status", "2", "--json", NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        cr_assert(strstr(r.out, "partitions") == NULL, "%s", r.out);
        run_result_fini(&r);
}
