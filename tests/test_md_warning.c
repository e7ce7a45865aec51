/*
 * model_description: the fixtures in md/warning, one file per rule that
 * FMI 2.0 states only in non-normative text (or that FMI 2.0.1 and the
 * FMI cross-check rules settled later): each parses as valid, with exactly
 * one warning, the message and line given here, and no error. Their FMI
 * 3.0 counterparts in md/invalid stay errors. Also start values outside
 * min and max, which neither version refuses normatively, and FMI 2.0
 * forms in an FMI 3.0 document that are ignored with a word.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fmi/model_description.h"
#include "md_fixture.h"

struct warning_case {
        char file[64];
        int line;
        char message[256];
};

static const struct warning_case warning_cases[] = {
        { "fmi2-unknown-unit.xml", 6, "unit=\"m\" is not defined in UnitDefinitions (FMI 2.0 section 2.2.7)" },
        { "fmi2-unit-definitions-absent.xml", 6, "unit=\"m\" is not defined in UnitDefinitions (FMI 2.0 section 2.2.3)" },
        { "fmi2-unknown-display-unit.xml", 9, "displayUnit=\"ft\" is not defined in unit \"m\"; it is ignored (FMI 2.0 section 2.2.7)" },
        { "fmi2-alias-variability.xml", 7, "alias of 'a' (line 6, same valueReference 1) with a different variability (FMI 2.0 section 2.2.7)" },
        /* min and max only inform (FMI 3.0 section 2.2.7.3): a warning in both versions. */
        { "start-below-min.xml", 6, "start value -1 is below min=0 (FMI 3.0 section 2.4.4)" },
        { "start-above-inherited-max.xml", 9, "start value 11 is above max=10 (FMI 3.0 section 2.4.4)" },
        /* FMI 2.0 forms in an FMI 3.0 document, ignored: the message names the FMI 3.0 form. */
        { "fmi3-scalar-variable.xml", 6, "<ScalarVariable> is FMI 2.0 and is ignored; an FMI 3.0 variable is an element named after its type (<Float64>, <Int32>, <Boolean>, ...) (FMI 3.0 section 2.4.7.1)" },
        { "fmi3-outputs-list.xml", 8, "<Outputs> is FMI 2.0 and is ignored; FMI 3.0 lists each entry directly in ModelStructure as <Output valueReference=\"...\"/> (FMI 3.0 section 2.4.8)" },
        { "fmi3-simple-type.xml", 5, "<SimpleType> is FMI 2.0 and is ignored; an FMI 3.0 type definition is an element named after its type (<Float64Type>, <EnumerationType>, ...) (FMI 3.0 section 2.4.4)" },
        { "fmi2-float64-element.xml", 6, "<Float64> is not a ScalarVariable; ignored (it is an FMI 3.0 variable element; an FMI 2.0 variable is a <ScalarVariable> with a <Real>, <Integer>, <Boolean>, <String> or <Enumeration> child) (FMI 2.0 section 2.2.7)" },
        /* XML Schema 1.1 rounds a float beyond the range to an infinity: the Float64 limits as a Float32's. */
        { "fmi3-float32-max-beyond-range.xml", 6, "max=\"1.7976931348623157E308\" is beyond the range of Float32 and is read as INF, as XML Schema 1.1 rounds it (FMI 3.0 section 2.4.4)" },
        { "fmi3-float32-type-min-beyond-range.xml", 5, "min=\"-1.7976931348623157E308\" is beyond the range of Float32 and is read as -INF, as XML Schema 1.1 rounds it (FMI 3.0 section 2.4.4)" },
        { "fmi3-fmi2-flag-spelling.xml", 3, "canGetAndSetFMUstate is the FMI 2.0 spelling and is ignored; FMI 3.0 reads canGetAndSetFMUState (FMI 3.0 section 4.4)" },
};

ParameterizedTestParameters(model_description, each_warning_fixture_warns_and_is_valid)
{
        return cr_make_param_array(struct warning_case, warning_cases,
                                   sizeof(warning_cases) / sizeof(*warning_cases));
}

ParameterizedTest(const struct warning_case *tc, model_description,
                  each_warning_fixture_warns_and_is_valid, .init = mdx_setup, .fini = mdx_teardown)
{
        char rel[128];

        snprintf(rel, sizeof(rel), "md/warning/%s", tc->file);
        cr_assert(eq(int, mdx_parse_file(rel, NULL), 0), "%s", tc->file);
        mdx_dump();
        cr_assert(ne(ptr, mdx_md, NULL));
        cr_expect(eq(sz, diag_errors(&mdx_diags), 0), "%s", tc->file);
        cr_assert(eq(sz, mdx_diags.n, 1), "%s", tc->file);
        cr_assert(eq(int, mdx_diags.v[0].severity, DIAG_WARNING), "%s", tc->file);
        cr_assert(eq(int, mdx_diags.v[0].line, tc->line), "%s", tc->file);
        cr_assert(eq(str, mdx_diags.v[0].message, (char *)tc->message), "%s", tc->file);
}

/* A fixture added to md/warning without a row above would test nothing. */
Test(model_description, every_warning_fixture_is_listed)
{
        char path[1024];
        struct dirent *e;
        DIR *d;

        snprintf(path, sizeof(path), "%s/md/warning", FMUD_TEST_SRC_DIR);
        d = opendir(path);
        cr_assert(ne(ptr, d, NULL));
        while ((e = readdir(d))) {
                bool listed = false;

                if (!strstr(e->d_name, ".xml"))
                        continue;
                for (size_t i = 0; i < sizeof(warning_cases) / sizeof(*warning_cases); i++)
                        listed |= strcmp(warning_cases[i].file, e->d_name) == 0;
                cr_expect(listed, "md/warning/%s has no expected message", e->d_name);
        }
        closedir(d);
}

/* A Float32 min or max beyond its range is an infinity: no bound on that side. */
Test(model_description, float32_limits_beyond_the_range_are_infinities, .init = mdx_setup,
     .fini = mdx_teardown)
{
        const struct md_variable *v;

        cr_assert(eq(int, mdx_parse_file("md/warning/fmi3-float32-max-beyond-range.xml", NULL), 0));
        v = &mdx_md->vars[1];
        cr_assert(v->attrs.has_max && isinf(v->attrs.max.f) && v->attrs.max.f > 0);
        cr_assert(eq(dbl, v->attrs.min.f, 0.0));
        mdx_teardown();
        mdx_setup();
        cr_assert(eq(int, mdx_parse_file("md/warning/fmi3-float32-type-min-beyond-range.xml", NULL), 0));
        v = &mdx_md->vars[1];
        cr_assert(v->attrs.has_min && isinf(v->attrs.min.f) && v->attrs.min.f < 0);
        cr_assert(eq(dbl, v->attrs.max.f, (double)FLT_MAX));
}

/* An undefined unit is kept as a name without a definition: no conversion is made up. */
Test(model_description, fmi2_undefined_unit_is_kept_without_definition, .init = mdx_setup,
     .fini = mdx_teardown)
{
        const struct md_variable *v;

        cr_assert(eq(int, mdx_parse_file("md/warning/fmi2-unit-definitions-absent.xml", NULL), 0));
        v = md_find_name(mdx_md, "x");
        cr_assert(ne(ptr, (void *)v, NULL));
        cr_assert(eq(str, v->attrs.unit, "m"));
        cr_assert(eq(ptr, (void *)v->unit_def, NULL));
}

/* An alias's different start value is a contradiction, not a style issue: still refused. */
Test(model_description, fmi2_alias_with_other_variability_and_start_is_refused, .init = mdx_setup,
     .fini = mdx_teardown)
{
        const char *doc = "<fmiModelDescription fmiVersion=\"2.0\" modelName=\"M\" guid=\"g\">"
                          "<CoSimulation modelIdentifier=\"M\"/><ModelVariables>"
                          "<ScalarVariable name=\"a\" valueReference=\"1\" causality=\"parameter\" "
                          "variability=\"fixed\"><Real start=\"1\"/></ScalarVariable>"
                          "<ScalarVariable name=\"b\" valueReference=\"1\" causality=\"parameter\" "
                          "variability=\"tunable\"><Real start=\"2\"/></ScalarVariable>"
                          "</ModelVariables><ModelStructure/></fmiModelDescription>";

        cr_assert(eq(int, mdx_parse_text(doc, NULL), -EINVAL));
        cr_assert(eq(sz, diag_errors(&mdx_diags), 1));
        cr_assert(eq(sz, mdx_diags.n, 2));
        cr_assert(eq(int, mdx_diags.v[0].severity, DIAG_WARNING));
        cr_assert(ne(ptr, strstr(mdx_diags.v[1].message, "with a different start value"), NULL));
}
