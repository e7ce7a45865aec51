/*
 * run: `fmuctl run` of an FMU with a fixed internal step larger than the
 * communication step (FixedStep), in process and through a private
 * daemon, gives row for row what a plain in-process loop gives that calls
 * fmi3DoStep(t_n, h) at every t_n = t0 + n h, as fmusim and FMPy do.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmu_direct.h"
#include "support/private_env.h"
#include "support/run.h"
#include "support/tmpdir.h"

enum { FS_X = 1, FS_TAU = 3, FS_STEPS = 4 };

static char *dir;

static void setup(void)
{
        dir = tmpdir_new("fmud-runfs");
        cr_assert(dir != NULL);
        /* Nothing else on the machine is used: no other daemon, no other cache. */
        cr_assert(eq(int, private_env(dir), 0));
}

static void teardown(void)
{
        tmpdir_free(dir);
}

/* Compare the CSV (time,steps,tau,x or any order of those) with the plain loop. */
static void same_as_plain_loop(const char *path, double h, size_t n_points)
{
        FILE *f = fopen(path, "r");
        char *line = NULL, *tok, *save;
        size_t cap = 0, row = 0;
        int col_x = -1, col_tau = -1, col_steps = -1, c = 0;
        struct fmi3 api;
        fmi3Instance fi;

        cr_assert(f != NULL, "%s", path);
        cr_assert(getline(&line, &cap, f) > 0);
        line[strcspn(line, "\r\n")] = '\0';
        for (tok = strtok_r(line, ",", &save); tok; tok = strtok_r(NULL, ",", &save), c++) {
                if (!strcmp(tok, "x"))
                        col_x = c;
                else if (!strcmp(tok, "tau"))
                        col_tau = c;
                else if (!strcmp(tok, "steps"))
                        col_steps = c;
        }
        cr_assert(col_x > 0 && col_tau > 0 && col_steps > 0, "columns of %s", path);

        load3(&api, "FixedStep", NULL);
        fi = instantiate3(&api, "FixedStep", false, false, NULL, 0, NULL);
        initialize3(&api, fi, 0.0);
        while (getline(&line, &cap, f) > 0) {
                double v[8] = { 0 }, t;

                c = 0;
                for (tok = strtok_r(line, ",", &save); tok && c < 8; tok = strtok_r(NULL, ",", &save))
                        v[c++] = strtod(tok, NULL);
                if (row > 0)
                        cr_assert(eq(int, step3(&api, fi, (double)(row - 1) * h, h, NULL, NULL),
                                     fmi3OK), "%s", last_log);
                /*
                 * The time column: the grid point as the step was written (0.35, where
                 * 35 * 0.01 is 0.35000000000000003), within rounding of the time the
                 * FMU was given; the values equal to the bit.
                 */
                t = (double)row * h;
                cr_assert(fabs(v[0] - t) <= 4 * (nextafter(t, INFINITY) - t), "row %zu at %.17g",
                          row, v[0]);
                cr_assert(v[col_x] == get_f64(&api, fi, FS_X), "row %zu: x", row);
                cr_assert(v[col_tau] == get_f64(&api, fi, FS_TAU), "row %zu: tau", row);
                cr_assert(v[col_steps] == (double)get_i32(&api, fi, FS_STEPS), "row %zu", row);
                row++;
        }
        cr_assert(eq(sz, row, n_points));
        api.FreeInstance(fi);
        free(line);
        fclose(f);
}

static void run_fixed_step(const char *mode, bool note_on_stderr)
{
        char *out = NULL;
        struct run_result r = { 0 };
        char *argv[] = { (char *)FMUD_FMUCTL, "run", FMUD_TEST_FMU_DIR "/FixedStep.fmu", "--step",
                         "0.01", "--stop-time", "1", "--out", NULL, (char *)mode, "--quiet", NULL };

        cr_assert(asprintf(&out, "%s/fs%s.csv", dir, mode) > 0);
        argv[8] = out;
        cr_assert(eq(int, run_capture(argv, &r), 0));
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        if (note_on_stderr)
                cr_assert(strstr(r.err, "lastSuccessfulTime") &&
                          strstr(r.err, "earlyReturn = false"), "%s", r.err);
        same_as_plain_loop(out, 0.01, 101);
        run_result_fini(&r);
        free(out);
}

Test(run_fixed_step, in_process_it_matches_a_plain_loop_row_for_row, .init = setup, .fini = teardown)
{
        run_fixed_step("--local", true);
}

Test(run_fixed_step, through_a_daemon_it_matches_a_plain_loop_row_for_row, .init = setup,
     .fini = teardown)
{
        run_fixed_step("--private", false);
}
