/*
 * FMI 2.0 Model Exchange FMUs hosted in the worker and integrated with
 * CVODE (worker/me.c through worker/me_api.c's FMI 2.0 calls), with the
 * worker sandbox on: BallME2 (BallME's model behind common/fmi2_me.c, which
 * iterates fmi2NewDiscreteStates in two passes at each event, as tools'
 * exports do) against the closed form; BallBoth2, which has both
 * interfaces, hosted as either; descriptions whose sizes cannot be
 * integrated refused at load.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive_fixture.h"
#include "fmi/fmu.h"
#include "me_ball.h"
#include "test_master_sys.h"

static double val(const struct msys *x, const struct mrow *row, const char *name)
{
        return row->v[msys_col(x, name)];
}

static void run(struct msys *x, const struct msys_spec *spec)
{
        msys_load(x, spec);
        x->so.sandbox.mode = SANDBOX_STRICT;
        msys_start(x);
        cr_assert(eq(int, master_run(x->m), MASTER_FINISHED), "%s", master_message(x->m));
}

Test(me2, an_fmi2_bouncing_ball_meets_its_closed_form_across_state_and_time_events)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("ball", "BallME2"),
                .stop = 3.0,
                .attrs = "stepSize=\"0.01\"",
                .settings = MSYS_RECORD("ball.h") MSYS_RECORD("ball.v"),
        };
        const struct mrow **g;
        struct msys x;
        size_t n;

        run(&x, &spec);
        cr_assert(x.sc->components[0].fmu->md->hosted_me);
        g = msys_grid(&x, &n);
        cr_assert(eq(sz, n, (size_t)301));
        /* Impacts at 0.4515, 1.0836 (g = 9.81), then 1.5277, 2.289, 2.821 (3.71 from 1.5 on). */
        cr_assert(eq(sz, me_ball_check(&x, "ball.h", "ball.v", 1e-5), (size_t)5));
        /* The time event at 1.5 (nextEventTime): the velocity falls by 9.81 per second before, 3.71 after. */
        cr_assert(fabs(val(&x, g[140], "ball.v") - val(&x, g[141], "ball.v") - 0.0981) < 1e-9);
        cr_assert(fabs(val(&x, g[160], "ball.v") - val(&x, g[161], "ball.v") - 0.0371) < 1e-9);
        free(g);
        msys_fini(&x);
}

/* A parameter set on the FMI 2.0 ME instance (fmi2SetReal) is what it integrates: from h0 = 2. */
Test(me2, a_parameter_set_on_an_fmi2_model_exchange_instance_is_integrated)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("ball", "BallME2"),
                .stop = 0.7,
                .attrs = "stepSize=\"0.01\"",
                .parameters = MSYS_REAL("ball.h0", "2"),
                .settings = MSYS_RECORD("ball.h") MSYS_RECORD("ball.v"),
        };
        double impact = sqrt(2.0 * 2.0 / 9.81);        /* 0.63855 */
        const struct mrow **g;
        struct msys x;
        size_t n;

        run(&x, &spec);
        g = msys_grid(&x, &n);
        cr_assert(eq(sz, n, (size_t)71));
        for (size_t k = 0; k < n; k++) {
                double t = g[k]->t, h = t < impact ? 2.0 - 0.5 * 9.81 * t * t : NAN;

                if (t < impact)
                        cr_assert(fabs(val(&x, g[k], "ball.h") - h) < 1e-5, "t = %g", t);
                else
                        cr_assert(gt(dbl, val(&x, g[k], "ball.v"), 0.0), "t = %g", t);
        }
        free(g);
        msys_fini(&x);
}

/*
 * BallBoth2 has CoSimulation and ModelExchange: CoSimulation by default
 * (its own fixed RK4 steps, events found at their ends), ModelExchange when
 * the SSP implementation attribute asks, as fmuctl's --interface does.
 */
Test(me2, an_fmi2_fmu_with_both_interfaces_is_hosted_as_either)
{
        const char *ifaces[] = { "", "implementation=\"CoSimulation\"",
                                 "implementation=\"ModelExchange\"" };
        bool me[] = { false, false, true };

        for (size_t i = 0; i < 3; i++) {
                char elements[256];
                struct msys_spec spec = {
                        .elements = elements,
                        .stop = 3.0,
                        .attrs = "stepSize=\"0.01\"",
                        .settings = MSYS_RECORD("ball.h") MSYS_RECORD("ball.v"),
                };
                struct msys x;

                snprintf(elements, sizeof(elements), "<ssd:Component name=\"ball\" "
                         "source=\"resources/BallBoth2.fmu\" %s/>", ifaces[i]);
                run(&x, &spec);
                cr_assert(eq(int, x.sc->components[0].fmu->md->hosted_me, me[i]), "%s", ifaces[i]);
                /* CVODE to its tolerance; the FMU's own steps of 1e-4 find impacts a step late. */
                cr_assert(eq(sz, me_ball_check(&x, "ball.h", "ball.v", me[i] ? 1e-5 : 5e-3), (size_t)5),
                          "%s", ifaces[i]);
                msys_fini(&x);
        }
}

/* The worker's own checks of the FMU's event iteration say which FMI 2.0 call they are about. */
Test(me2, a_next_event_time_that_does_not_advance_faults_the_fmi2_step_clearly)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("ball", "BallME2"),
                .parameters = MSYS_REAL("ball.t_stuck", "1"),
                .stop = 3.0,
                .attrs = "stepSize=\"0.01\"",
                .settings = MSYS_RECORD("ball.h"),
        };
        struct msys x;
        size_t n;

        msys_load(&x, &spec);
        x.so.sandbox.mode = SANDBOX_STRICT;
        msys_start(&x);
        cr_assert(lt(int, master_run(x.m), 0));
        cr_assert(strstr(master_message(x.m), "the Model Exchange integration (CVODE, in its "
                                              "worker) at t = 1.08") != NULL &&
                  strstr(master_message(x.m), " is not after the event at t = 1.0836567") != NULL,
                  "%s", master_message(x.m));
        free(msys_grid(&x, &n));
        cr_assert(eq(sz, n, (size_t)109));
        msys_fini(&x);
}

/* BallME2's description with from replaced by to. */
static char *ball2_with(const char *from, const char *to)
{
        static const char *path = FMUD_TEST_FMU_DIR "/BallME2/modelDescription.xml";
        FILE *f = fopen(path, "r");
        char *md = calloc(1, 1 << 16), *out, *at;
        size_t len;

        cr_assert(f != NULL && md != NULL);
        len = fread(md, 1, (1 << 16) - 1, f);
        fclose(f);
        md[len] = '\0';
        at = strstr(md, from);
        cr_assert(at != NULL, "%s", from);
        out = calloc(1, len + strlen(to) + 1);
        cr_assert(out != NULL);
        memcpy(out, md, (size_t)(at - md));
        strcat(out, to);
        strcat(out, at + strlen(from));
        free(md);
        return out;
}

/* Load BallME2 with the binary and a changed description; the diagnostics as one text. */
static int load_changed(const char *from, const char *to, char *text, size_t size)
{
        char dir[] = "/tmp/fmud-me2-XXXXXX", *md = ball2_with(from, to), *so, *entry, *archive;
        struct fx_lzentry e[2] = { { .name = "modelDescription.xml" }, { .name = NULL } };
        struct fmu_opts opts;
        struct diag_list diags;
        struct fmu *fmu = NULL;
        size_t n = 0, so_len;
        FILE *f;
        int r;

        cr_assert(mkdtemp(dir) != NULL);
        cr_assert(asprintf(&so, "%s/BallME2/binaries/%s/BallME2.so", FMUD_TEST_FMU_DIR,
                           fmu_platform_dir(MD_FMI2)) > 0);
        cr_assert(asprintf(&entry, "binaries/%s/BallME2.so", fmu_platform_dir(MD_FMI2)) > 0);
        f = fopen(so, "rb");
        cr_assert(f != NULL, "%s", so);
        e[1].data = malloc(1 << 20);
        so_len = fread((void *)e[1].data, 1, 1 << 20, f);
        fclose(f);
        e[0].data = md;
        e[0].len = strlen(md);
        e[1].name = entry;
        e[1].len = so_len;
        archive = fx_path(dir, "BallME2.fmu");
        cr_assert(eq(int, fx_write_libzip(archive, e, 2), 0));
        fmu_opts_default(&opts);
        diag_list_init(&diags, 0);
        r = fmu_open(archive, &opts, &diags, &fmu);
        text[0] = '\0';
        for (size_t i = 0; i < diags.n && n + 1 < size; i++) {
                diag_format(&diags.v[i], text + n, size - n);
                n += strlen(text + n);
                if (n + 1 < size) {
                        text[n++] = '\n';
                        text[n] = '\0';
                }
        }
        diag_list_fini(&diags);
        fmu_free(fmu);
        unlink(archive);
        rmdir(dir);
        free(archive);
        free((void *)e[1].data);
        free(so);
        free(entry);
        free(md);
        return r;
}

Test(me2, a_description_the_worker_cannot_integrate_is_refused_at_load_saying_why)
{
        char text[4096];

        /* The unchanged FMU loads: the refusals below are the changes'. */
        cr_assert(eq(int, load_changed("numberOfEventIndicators=\"1\"",
                                       "numberOfEventIndicators=\"1\"", text, sizeof(text)), 0),
                  "%s", text);

        cr_assert(eq(int, load_changed("numberOfEventIndicators=\"1\"",
                                       "numberOfEventIndicators=\"-1\"", text, sizeof(text)),
                     -EINVAL));
        cr_assert(strstr(text, "numberOfEventIndicators") != NULL &&
                  strstr(text, "\"-1\"") != NULL, "%s", text);

        cr_assert(eq(int, load_changed("numberOfEventIndicators=\"1\"",
                                       "numberOfEventIndicators=\"4000000000\"", text,
                                       sizeof(text)), -EINVAL));
        cr_assert(strstr(text, "ModelExchange with 2 continuous states and 4000000000 event "
                               "indicators (numberOfEventIndicators): fmud integrates at most "
                               "1048576 of each") != NULL, "%s", text);

        cr_assert(eq(int, load_changed("derivative=\"4\"", "derivative=\"16\"", text,
                                       sizeof(text)), -EINVAL));
        cr_assert(strstr(text, "derivative=\"16\" is not a ScalarVariable index (1..15)") != NULL,
                  "%s", text);

        cr_assert(eq(int, load_changed("<Unknown index=\"5\" dependencies=\"\"/>",
                                       "<Unknown index=\"99\" dependencies=\"\"/>", text,
                                       sizeof(text)), -EINVAL));
        cr_assert(strstr(text, "index 99 in <Derivatives/Unknown> is not a ScalarVariable index (1..15)") != NULL,
                  "%s", text);
}
