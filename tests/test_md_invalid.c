/*
 * model_description: the invalid fixtures in md/invalid, one file per
 * rule, each with the message and line it must produce, and what a parse
 * that fails still returns.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi/model_description.h"
#include "md_fixture.h"

/* ---- invalid documents: one file per rule ------------------------------ */

struct invalid_case {
        char file[64];
        int line;
        char message[256];
};

static const struct invalid_case invalid_cases[] = {
        { "duplicate-name.xml", 8, "name is not unique: also used on line 7 (FMI 3.0 section 2.4.7.4)" },
        { "duplicate-vr.xml", 8, "valueReference=1 is not unique: 'a' on line 7 has it too (FMI 3.0 section 2.4.7.4)" },
        { "illegal-causality-variability.xml", 6, "causality=\"parameter\" with variability=\"continuous\" is not an allowed combination (FMI 3.0 section 2.4.7.4)" },
        { "illegal-initial.xml", 6, "initial=\"calculated\" is not allowed for causality=\"parameter\", variability=\"fixed\" (FMI 3.0 section 2.4.7.5)" },
        { "input-without-start.xml", 6, "no start value, but causality=\"input\" requires one (FMI 3.0 section 2.4.7.5)" },
        { "parameter-without-start.xml", 6, "no start value, but causality=\"parameter\" requires one (FMI 3.0 section 2.4.7.5)" },
        { "calculated-with-start.xml", 7, "has a start value, but initial=\"calculated\" (the default here) forbids one (FMI 3.0 section 2.4.7.5)" },
        { "unknown-declared-type.xml", 6, "declaredType=\"Nope\" is not defined in TypeDefinitions (FMI 3.0 section 2.4.7.5)" },
        { "declared-type-mismatch.xml", 9, "declaredType=\"Speed\" is a Float64 type, but the variable is a Int32 (FMI 3.0 section 2.4.7.5)" },
        { "unknown-unit.xml", 9, "unit=\"furlong\" is not defined in UnitDefinitions (FMI 3.0 section 2.4.7.5)" },
        { "unknown-display-unit.xml", 9, "displayUnit=\"ft\" is not defined in unit \"m\" (FMI 3.0 section 2.4.7.5)" },
        { "type-unknown-unit.xml", 5, "unit=\"K\" is not defined in UnitDefinitions (FMI 3.0 section 2.4.4)" },
        { "bad-model-identifier.xml", 3, "modelIdentifier=\"../../lib/evil\" is not a C identifier" },
        { "model-identifier-too-long.xml", 3, "has 253 characters: its shared library's file name (with \".so\") would be longer than 255 bytes" },
        { "int8-start-out-of-range.xml", 6, "start=\"200\" is outside the range of Int8 (FMI 3.0 section 2.4.7.5)" },
        { "uint64-start-out-of-range.xml", 6, "start=\"18446744073709551616\" is outside the range of UInt64 (FMI 3.0 section 2.4.7.5)" },
        { "float32-start-out-of-range.xml", 6, "start=\"1e39\" is outside the range of Float32 (FMI 3.0 section 2.4.7.5)" },
        { "start-trailing-garbage.xml", 6, "start=\"1.5x\" is not a valid Float64 (FMI 3.0 section 2.4.7.5)" },
        { "start-comma-decimal.xml", 7, "start=\"1,5\" is not a valid Float64 (FMI 3.0 section 2.4.7.5)" },
        { "boolean-start-invalid.xml", 6, "start=\"yes\" is not a valid Boolean (FMI 3.0 section 2.4.7.5)" },
        { "binary-start-not-hex.xml", 7, "Start value=\"0xabc\" is not hexBinary" },
        { "min-greater-than-max.xml", 6, "min=2 is greater than max=1 (FMI 3.0 section 2.4.4)" },
        { "output-missing-from-model-structure.xml", 7, "output variable is not listed in ModelStructure <Output> (FMI 3.0 section 2.4.8)" },
        { "output-entry-not-output.xml", 9, "<Output> lists a variable whose causality is \"parameter\", not output (FMI 3.0 section 2.4.8)" },
        { "model-structure-unknown-vr.xml", 8, "valueReference 42 in <InitialUnknown> is not the valueReference of any variable (FMI 3.0 section 2.4.8)" },
        { "dependency-unknown-vr.xml", 9, "dependency 77 in <Output> is not the valueReference of any variable (FMI 3.0 section 2.4.8)" },
        { "dependencies-kind-length.xml", 9, "dependenciesKind of <Output> must have as many entries as dependencies (1) (FMI 3.0 section 2.4.8)" },
        { "dependencies-kind-without-dependencies.xml", 9, "dependenciesKind of <Output> is given without dependencies (FMI 3.0 section 2.4.8)" },
        { "dependencies-kind-initial-unknown.xml", 10, "dependenciesKind \"tunable\" is not allowed for <InitialUnknown> (FMI 3.0 section 2.4.8)" },
        { "derivative-entry-without-derivative.xml", 9, "<ContinuousStateDerivative> lists a variable that is not a floating point variable with a derivative attribute (FMI 3.0 section 2.4.8)" },
        { "duplicate-output-entry.xml", 10, "variable is listed twice in <Output> (FMI 3.0 section 2.4.8)" },
        { "dimension-not-structural.xml", 7, "Dimension valueReference=1 refers to 'n', which is not a scalar UInt64 structural parameter or constant (FMI 3.0 section 2.4.7.2)" },
        { "dimension-unknown-vr.xml", 6, "Dimension valueReference=9 is not the value reference of any variable (FMI 3.0 section 2.4.7.2)" },
        { "dimension-start-zero.xml", 7, "Dimension start=\"0\": initial dimension sizes must be positive (FMI 3.0 section 2.4.7.2)" },
        { "dimension-start-and-vr.xml", 8, "Dimension has both start and valueReference; they are exclusive (FMI 3.0 section 2.4.7.2)" },
        { "structural-parameter-zero.xml", 7, "refers to 'n', whose start is 0; initial dimension sizes must be positive (FMI 3.0 section 2.4.7.2)" },
        { "start-list-length.xml", 6, "start has 2 values, but the dimensions give 3 elements (FMI 3.0 section 2.4.7.5)" },
        { "scalar-with-start-list.xml", 6, "a scalar variable has 2 start values (FMI 3.0 section 2.4.7.5)" },
        { "structural-parameter-with-dimension.xml", 6, "a structural parameter must not have a Dimension (FMI 3.0 section 2.4.7.4)" },
        { "two-independent.xml", 6, "a second independent variable ('time' on line 5 is one already) (FMI 3.0 section 2.4.7.4)" },
        { "independent-with-start.xml", 5, "an independent variable must not have a start value (FMI 3.0 section 2.4.7.4)" },
        { "independent-not-float.xml", 5, "the independent variable must be of a floating point type (FMI 3.0 section 2.4.7.4)" },
        { "continuous-integer.xml", 6, "only Float32 and Float64 variables may be continuous (FMI 3.0 section 2.4.7.4)" },
        { "clock-output-not-triggered.xml", 6, "an output Clock must have intervalVariability=\"triggered\" (FMI 3.0 section 2.2.8.2)" },
        { "clock-without-interval-variability.xml", 6, "Clock without intervalVariability (on the variable or its ClockType) (FMI 3.0 section 2.4.4)" },
        { "clocks-not-a-clock.xml", 7, "clocks lists 1, which is not a Clock (FMI 3.0 section 2.4.7.4)" },
        { "previous-self.xml", 7, "previous refers to the variable itself (FMI 3.0 section 2.4.7.4)" },
        { "event-mode-required.xml", 2, "the FMU has Clocks, so CoSimulation needs hasEventMode=\"true\" (FMI 3.0 section 4.4)" },
        { "serialize-without-get-set.xml", 3, "canSerializeFMUState=\"true\" requires canGetAndSetFMUState=\"true\" (FMI 3.0 section 2.4.2)" },
        { "early-return-without-intermediate-update.xml", 3, "canReturnEarlyAfterIntermediateUpdate=\"true\" requires providesIntermediateUpdate=\"true\" (FMI 3.0 section 4.4)" },
        { "no-interface.xml", 2, "none of ModelExchange, CoSimulation or ScheduledExecution is present (FMI 3.0 section 2.4.1)" },
        { "guid-in-fmi3.xml", 2, "missing required attribute instantiationToken (guid is its FMI 2.0 name) (FMI 3.0 section 2.4.1)" },
        { "string-start-attribute.xml", 6, "a String variable has a start attribute; FMI 3.0 gives String start values as <Start value=\"...\"/> child elements (FMI 3.0 section 2.4.7.5)" },
        { "missing-instantiation-token.xml", 2, "missing required attribute instantiationToken (FMI 3.0 section 2.4.1)" },
        { "missing-model-structure.xml", 2, "missing required element ModelStructure (FMI 3.0 section 2.4.1)" },
        { "enumeration-without-declared-type.xml", 6, "an Enumeration variable needs a declaredType (FMI 3.0 section 2.4.7.5)" },
        { "enumeration-start-not-item.xml", 12, "start value 3 is not an Item of type \"E\" (FMI 3.0 section 2.4.4)" },
        { "enumeration-duplicate-item.xml", 5, "Item value 1 is not unique (FMI 3.0 section 2.4.4)" },
        { "duplicate-type-name.xml", 6, "type name is not unique: also defined on line 5 (FMI 3.0 section 2.4.4)" },
        { "type-name-equals-variable.xml", 5, "a type name must differ from every variable name, but variable on line 9 has it (FMI 3.0 section 2.4.4)" },
        { "duplicate-unit.xml", 6, "unit name is not unique: also defined on line 5 (FMI 3.0 section 2.4.3)" },
        { "display-unit-inverse-offset.xml", 6, "inverse=\"true\" is only allowed with offset=\"0\" (FMI 3.0 section 2.4.3)" },
        { "alias-duplicate-name.xml", 7, "name is not unique: also used on line 5 (FMI 3.0 section 2.4.7.3)" },
        { "bad-causality.xml", 6, "causality=\"params\" is not one of the values the standard defines (FMI 3.0 section 2.4.7.4)" },
        { "missing-value-reference.xml", 6, "missing required attribute valueReference (FMI 3.0 section 2.4.7.4)" },
        { "log-category-duplicate.xml", 4, "log category name is not unique (FMI 3.0 section 2.4.5)" },
        { "not-well-formed.xml", 6, "not well-formed XML: Opening and ending tag mismatch" },
        { "wrong-root.xml", 2, "the root element is <fmiModelDescriptions>, not <fmiModelDescription> (FMI 3.0 section 2.4.1)" },
        { "unsupported-version.xml", 2, "fmiVersion=\"1.0\" is not supported: fmud reads FMI 2.0 and FMI 3.x" },
        { "doctype.xml", 2, "DOCTYPE declarations are refused" },
        { "external-entity.xml", 2, "DOCTYPE declarations are refused" },
        { "external-dtd.xml", 2, "DOCTYPE declarations are refused" },
        { "undeclared-entity.xml", 2, "not well-formed XML: Entity 'undeclared' not defined" },
        { "not-utf8.xml", 1, "empty, or not XML in UTF-8: a model description must be UTF-8 (FMI 3.0 section 2.4)" },
        { "latin1-bytes.xml", 2, "not UTF-8: byte 0xE8 does not begin a valid UTF-8 sequence (the XML declaration says encoding=\"ISO-8859-1\"); a model description must be UTF-8 (FMI 3.0 section 2.4)" },
        { "truncated-utf8.xml", 4, "not UTF-8: byte 0xC3 does not begin a valid UTF-8 sequence; a model description must be UTF-8 (FMI 3.0 section 2.4)" },
        { "fmi2-bad-index.xml", 11, "index 3 in <Outputs/Unknown> is not a ScalarVariable index (1..2) (FMI 2.0 section 2.2.8)" },
        { "fmi2-bad-dependency-index.xml", 10, "dependency 0 in <Outputs/Unknown> is not a ScalarVariable index (1..2) (FMI 2.0 section 2.2.8)" },
        { "fmi2-output-missing.xml", 6, "output variable is not listed in ModelStructure <Outputs/Unknown> (FMI 2.0 section 2.2.8)" },
        { "fmi2-alias-start.xml", 13, "alias of 'a' (line 10, same valueReference 1) with a different start value (FMI 2.0 section 2.2.7)" },
        { "fmi2-bad-derivative.xml", 6, "derivative=\"5\" is not a ScalarVariable index (1..2) (FMI 2.0 section 2.2.7)" },
        { "fmi2-input-with-initial.xml", 6, "initial must not be given for causality=\"input\" (FMI 2.0 section 2.2.7)" },
        { "fmi2-input-without-start.xml", 6, "no start value, but causality=\"input\" requires one (FMI 2.0 section 2.2.7)" },
        { "fmi2-no-type-element.xml", 6, "a ScalarVariable needs exactly one of Real, Integer, Boolean, String or Enumeration (it has 0) (FMI 2.0 section 2.2.7)" },
        { "fmi2-missing-guid.xml", 2, "missing required attribute guid (FMI 2.0 section 2.2.1)" },
        { "fmi2-integer-start-out-of-range.xml", 6, "start=\"2147483648\" is outside the range of Int32 (FMI 2.0 section 2.2.7)" },
        { "fmi2-derivative-not-real.xml", 7, "derivative=\"2\" refers to 'k', which is not a Real (FMI 2.0 section 2.2.7)" },
        { "fmi2-no-interface.xml", 2, "neither ModelExchange nor CoSimulation is present (FMI 2.0 section 2.2.1)" },
};

ParameterizedTestParameters(model_description, each_invalid_fixture_breaks_its_rule)
{
        return cr_make_param_array(struct invalid_case, invalid_cases,
                                   sizeof(invalid_cases) / sizeof(*invalid_cases));
}

ParameterizedTest(const struct invalid_case *tc, model_description,
                  each_invalid_fixture_breaks_its_rule, .init = mdx_setup, .fini = mdx_teardown)
{
        char rel[128];
        bool found = false;

        snprintf(rel, sizeof(rel), "md/invalid/%s", tc->file);
        cr_assert(eq(int, mdx_parse_file(rel, NULL), -EINVAL), "%s", tc->file);
        mdx_dump();
        /* One rule per file: a second error would mean the fixture tests two. */
        cr_expect(eq(sz, diag_errors(&mdx_diags), 1), "%s", tc->file);
        for (size_t i = 0; i < mdx_diags.n && !found; i++)
                found = mdx_diags.v[i].severity == DIAG_ERROR && mdx_diags.v[i].line == tc->line &&
                        strstr(mdx_diags.v[i].message, tc->message) && mdx_diags.v[i].file &&
                        strcmp(mdx_diags.v[i].file, rel) == 0;
        cr_assert(found, "%s: no error on line %d containing \"%s\"", tc->file, tc->line,
                  tc->message);
}

/* A fixture added to md/invalid without a row above would test nothing. */
Test(model_description, every_invalid_fixture_is_listed)
{
        char path[1024];
        struct dirent *e;
        DIR *d;

        snprintf(path, sizeof(path), "%s/md/invalid", FMUD_TEST_SRC_DIR);
        d = opendir(path);
        cr_assert(ne(ptr, d, NULL));
        while ((e = readdir(d))) {
                bool listed = false;

                if (!strstr(e->d_name, ".xml"))
                        continue;
                for (size_t i = 0; i < sizeof(invalid_cases) / sizeof(*invalid_cases); i++)
                        listed |= strcmp(invalid_cases[i].file, e->d_name) == 0;
                cr_expect(listed, "md/invalid/%s has no expected message", e->d_name);
        }
        closedir(d);
}

Test(model_description, invalid_document_still_returns_what_was_read, .init = mdx_setup,
     .fini = mdx_teardown)
{
        cr_assert(eq(int, mdx_parse_file("md/invalid/duplicate-vr.xml", NULL), -EINVAL));
        cr_assert(ne(ptr, mdx_md, NULL));
        cr_assert(eq(sz, mdx_md->n_vars, 3));
        cr_assert(eq(str, mdx_md->vars[2].name, "b"));
        md_free(mdx_md);
        mdx_md = NULL;
        cr_assert(eq(int, mdx_parse_file("md/invalid/not-well-formed.xml", NULL), -EINVAL));
        cr_assert(eq(ptr, mdx_md, NULL));
}

/* Model Exchange only is a valid description; whether fmud runs it is fmu_open()'s call. */
Test(model_description, model_exchange_only_is_valid_without_a_word, .init = mdx_setup,
     .fini = mdx_teardown)
{
        const char *doc = "<fmiModelDescription fmiVersion=\"3.0\" modelName=\"M\" "
                          "instantiationToken=\"t\"><ModelExchange modelIdentifier=\"M\"/>"
                          "<ModelVariables><Float64 name=\"time\" valueReference=\"0\" "
                          "causality=\"independent\"/></ModelVariables><ModelStructure/>"
                          "</fmiModelDescription>";

        cr_assert(eq(int, mdx_parse_text(doc, NULL), 0));
        cr_assert(mdx_md->has_model_exchange);
        cr_assert(not(mdx_md->cs.present));
        cr_assert(eq(sz, mdx_diags.n, 0));
}

/* libxml2 keeps 16-bit line numbers; diagnostics must not wrap past 65535. */
Test(model_description, line_numbers_past_65535_are_exact, .init = mdx_setup, .fini = mdx_teardown)
{
        const char *head = "<fmiModelDescription fmiVersion=\"3.0\" modelName=\"M\" "
                           "instantiationToken=\"t\"><CoSimulation modelIdentifier=\"M\"/>"
                           "<ModelVariables><Float64 name=\"time\" valueReference=\"0\" "
                           "causality=\"independent\"/>";
        const char *bad = "<Float64 name=\"u\" valueReference=\"1\"\n causality=\"input\"/>"
                          "</ModelVariables><ModelStructure/></fmiModelDescription>";
        size_t n = strlen(head) + 70000 + strlen(bad) + 1;
        char *doc = malloc(n);

        cr_assert(ne(ptr, doc, NULL));
        strcpy(doc, head);
        memset(doc + strlen(head), '\n', 70000);
        strcpy(doc + strlen(head) + 70000, bad);
        cr_assert(eq(int, mdx_parse_text(doc, NULL), -EINVAL));
        cr_assert(eq(sz, mdx_diags.n, 1));
        /* The line of the tag's '<', not of its end. */
        cr_assert(eq(int, mdx_diags.v[0].line, 70001));
        free(doc);
}
