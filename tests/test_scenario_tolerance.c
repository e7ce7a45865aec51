/*
 * scenario_tolerance: the relative tolerance each component gets (the
 * tolerance of fmi3EnterInitializationMode and fmi2SetupExperiment): an
 * override beats the fmud:Settings tolerance, which beats each FMU's own
 * DefaultExperiment tolerance; with none of them, none. A tolerance that
 * is not above 0 and below 1 is refused, naming where it came from.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "test_scenario_fixture.h"

static struct sx x;

static void setup(void)
{
        sx_stage(&x, NULL, NULL);
}

static void teardown(void)
{
        sx_fini(&x);
}

/* fast: LinearOde (DefaultExperiment tolerance 1e-5); slow: LinearOde2 (none). */
static void write_ssd(const char *settings_attrs)
{
        char *text;

        cr_assert(asprintf(&text,
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<ssd:SystemStructureDescription version=\"1.0\" name=\"tol\"\n"
                "    xmlns:ssd=\"http://ssp-standard.org/SSP1/SystemStructureDescription\"\n"
                "    xmlns:ssc=\"http://ssp-standard.org/SSP1/SystemStructureCommon\"\n"
                "    xmlns:fmud=\"urn:fmud:ssp:settings\">\n"
                "  <ssd:System name=\"tol\"><ssd:Elements>\n"
                "    <ssd:Component name=\"fast\" source=\"resources/LinearOde.fmu\"/>\n"
                "    <ssd:Component name=\"slow\" source=\"resources/LinearOde2.fmu\"/>\n"
                "  </ssd:Elements></ssd:System>\n"
                "  <ssd:Annotations><ssc:Annotation type=\"org.fmud.settings\">\n"
                "    <fmud:Settings version=\"1\" %s/>\n"
                "  </ssc:Annotation></ssd:Annotations>\n"
                "</ssd:SystemStructureDescription>\n", settings_attrs) >= 0);
        sx_write(x.dir, "SystemStructure.ssd", text);
        free(text);
}

static void clear_diags(void)
{
        diag_list_fini(&x.diags);
        diag_list_init(&x.diags, 0);
}

static void load_ok(const struct scenario_overrides *ov)
{
        int r = sx_load(&x, NULL, ov);

        if (r != 0)
                sx_dump(&x);
        cr_assert(eq(int, r, 0));
}

static void assert_tolerance(const char *comp, bool defined, double tolerance)
{
        const struct scenario_component *c = &x.s->components[sx_comp(&x, comp)];

        cr_assert(eq(int, c->tolerance_defined, defined), "%s", comp);
        if (defined)
                cr_assert(eq(dbl, c->tolerance, tolerance), "%s", comp);
}

Test(scenario_tolerance, each_fmu_gets_its_default_experiment_tolerance, .init = setup,
     .fini = teardown)
{
        write_ssd("");
        load_ok(NULL);
        cr_assert(not(x.s->experiment.tolerance_given));
        assert_tolerance("fast", true, 1e-5);
        assert_tolerance("slow", false, 0);
}

Test(scenario_tolerance, the_settings_tolerance_goes_to_every_fmu, .init = setup,
     .fini = teardown)
{
        write_ssd("tolerance=\"1e-7\"");
        load_ok(NULL);
        cr_assert(x.s->experiment.tolerance_given);
        cr_assert(eq(dbl, x.s->experiment.tolerance, 1e-7));
        assert_tolerance("fast", true, 1e-7);
        assert_tolerance("slow", true, 1e-7);
}

Test(scenario_tolerance, an_override_beats_the_settings, .init = setup, .fini = teardown)
{
        struct scenario_overrides ov = { .has_tolerance = true, .tolerance = 1e-3 };

        write_ssd("tolerance=\"1e-7\"");
        load_ok(&ov);
        assert_tolerance("fast", true, 1e-3);
        assert_tolerance("slow", true, 1e-3);
}

Test(scenario_tolerance, a_single_fmu_takes_an_override, .init = setup, .fini = teardown)
{
        struct scenario_overrides ov = { .has_tolerance = true, .tolerance = 2.5e-6 };
        char *p;

        cr_assert(asprintf(&p, "%s/LinearOde2.fmu", FMUD_TEST_FMU_DIR) >= 0);
        cr_assert(eq(int, sx_load(&x, p, NULL), 0));
        assert_tolerance("LinearOde2", false, 0);
        scenario_free(x.s);
        x.s = NULL;
        cr_assert(eq(int, sx_load(&x, p, &ov), 0));
        assert_tolerance("LinearOde2", true, 2.5e-6);
        free(p);
}

Test(scenario_tolerance, overrides_outside_zero_to_one_are_refused, .init = setup,
     .fini = teardown)
{
        static const double bad[] = { 0.0, -1e-6, 1.0, 2.0, INFINITY, NAN };
        static const char *const shown[] = { "0", "-1e-06", "1", "2", "inf", "nan" };

        write_ssd("tolerance=\"1e-7\"");
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                struct scenario_overrides ov = { .has_tolerance = true, .tolerance = bad[i] };
                char want[96];

                clear_diags();
                cr_assert(eq(int, sx_load(&x, NULL, &ov), -EINVAL), "%s", shown[i]);
                cr_assert(x.s == NULL);
                snprintf(want, sizeof(want), "tolerance %s: must be a relative tolerance above 0 "
                         "and below 1", shown[i]);
                cr_assert(sx_has(&x, "--tolerance", want), "%s", want);
                cr_assert(sx_clean(&x));
        }
}

Test(scenario_tolerance, a_settings_tolerance_outside_zero_to_one_is_refused, .init = setup,
     .fini = teardown)
{
        write_ssd("tolerance=\"1\"");
        cr_assert(eq(int, sx_load(&x, NULL, NULL), -EINVAL));
        cr_assert(x.s == NULL);
        cr_assert(sx_has(&x, "SystemStructure.ssd:11", "tolerance 1: must be a relative tolerance "
                         "above 0 and below 1"));
        clear_diags();
        write_ssd("tolerance=\"small\"");
        cr_assert(eq(int, sx_load(&x, NULL, NULL), -EINVAL));
        cr_assert(sx_has(&x, "tolerance", NULL));
        cr_assert(sx_clean(&x));
}

/* resources/LinearOde.fmu with its DefaultExperiment tolerance replaced by tolerance. */
static void set_default_tolerance(const char *tolerance)
{
        char *path = NULL, *xml, *at, *text = NULL;
        struct zip_stat st;
        zip_source_t *src;
        zip_file_t *f;
        zip_t *z;

        cr_assert(asprintf(&path, "%s/resources/LinearOde.fmu", x.dir) > 0);
        z = zip_open(path, 0, NULL);
        cr_assert(z != NULL);
        cr_assert(zip_stat(z, "modelDescription.xml", 0, &st) == 0);
        xml = calloc(1, st.size + 1);
        f = zip_fopen(z, "modelDescription.xml", 0);
        cr_assert(xml && f && zip_fread(f, xml, st.size) == (zip_int64_t)st.size);
        zip_fclose(f);
        at = strstr(xml, "tolerance=\"1e-5\"");
        cr_assert(at != NULL);
        *at = '\0';
        cr_assert(asprintf(&text, "%stolerance=\"%s\"%s", xml, tolerance,
                           at + strlen("tolerance=\"1e-5\"")) > 0);
        src = zip_source_buffer(z, text, strlen(text), 0);
        cr_assert(src != NULL);
        cr_assert(zip_file_add(z, "modelDescription.xml", src, ZIP_FL_OVERWRITE) >= 0);
        cr_assert(zip_close(z) == 0);
        free(text);
        free(xml);
        free(path);
}

Test(scenario_tolerance, a_default_experiment_tolerance_outside_zero_to_one_is_not_passed,
     .init = setup, .fini = teardown)
{
        bool warned = false;

        set_default_tolerance("1.5");
        write_ssd("");
        load_ok(NULL);
        assert_tolerance("fast", false, 0);
        for (size_t i = 0; i < x.diags.n; i++)
                warned |= x.diags.v[i].severity == DIAG_WARNING;
        cr_assert(warned);
        cr_assert(sx_has(&x, "'fast'", "DefaultExperiment tolerance 1.5 is not above 0 and "
                         "below 1: the FMU gets no tolerance"));
}
