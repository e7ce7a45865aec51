/*
 * model_description: md_parse()'s limits (size, nesting, arrays, counts),
 * its independence from the locale and from other threads, and the other
 * descriptions that must parse: the test FMUs' and the fuzzer's
 * regression inputs.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <glob.h>
#include <langinfo.h>
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fmi/model_description.h"
#include "support/run.h"
#include "support/tmpdir.h"
#include "md_fixture.h"

/* ---- limits ----------------------------------------------------------- */

Test(model_description, document_over_the_size_cap_is_not_parsed, .init = mdx_setup,
     .fini = mdx_teardown)
{
        struct md_limits lim = { .max_bytes = 100 };
        char doc[200];

        memset(doc, ' ', sizeof(doc));
        memcpy(doc, "<a/>", 4);
        cr_assert(eq(int, md_parse(doc, sizeof(doc), "big.xml", &lim, &mdx_diags, &mdx_md), -EFBIG));
        cr_assert(eq(ptr, mdx_md, NULL));
        cr_assert(mdx_has_diag("over the limit of 100 bytes"));
}

/* 'depth' nested elements inside the first variable's Annotations. */
static char *nested(int depth)
{
        const char *head = "<?xml version=\"1.0\"?>\n"
                           "<fmiModelDescription fmiVersion=\"3.0\" modelName=\"M\" "
                           "instantiationToken=\"t\">\n<CoSimulation modelIdentifier=\"M\"/>\n"
                           "<ModelVariables>\n<Float64 name=\"time\" valueReference=\"0\" "
                           "causality=\"independent\">\n<Annotations>\n";
        const char *tail = "</Annotations>\n</Float64>\n</ModelVariables>\n<ModelStructure/>\n"
                           "</fmiModelDescription>\n";
        size_t n = strlen(head) + strlen(tail) + (size_t)depth * 8 + 1;
        char *s = malloc(n), *p;

        cr_assert(ne(ptr, s, NULL));
        p = s + sprintf(s, "%s", head);
        for (int i = 0; i < depth; i++)
                p += sprintf(p, "<a>");
        for (int i = 0; i < depth; i++)
                p += sprintf(p, "</a>");
        sprintf(p, "%s", tail);
        return s;
}

Test(model_description, nesting_deeper_than_the_cap_is_refused, .init = mdx_setup, .fini = mdx_teardown)
{
        struct md_limits lim = { .max_depth = 10 };
        char *doc;

        /* fmiModelDescription, ModelVariables, Float64, Annotations: 4 levels. */
        doc = nested(6);
        cr_assert(eq(int, mdx_parse_text(doc, &lim), 0));
        free(doc);
        md_free(mdx_md);
        mdx_md = NULL;
        doc = nested(7);
        cr_assert(eq(int, mdx_parse_text(doc, &lim), -EINVAL));
        cr_assert(eq(ptr, mdx_md, NULL));
        cr_assert(mdx_has_diag("elements nested deeper than 10 levels"));
        free(doc);
        /* The default cap of 64 holds too, below libxml2's own. */
        doc = nested(200);
        cr_assert(eq(int, mdx_parse_text(doc, NULL), -EINVAL));
        cr_assert(mdx_has_diag("elements nested deeper than 64 levels"));
        free(doc);
}

static char *with_start_list(size_t n)
{
        char *s = malloc(n * 2 + 512), *p;

        cr_assert(ne(ptr, s, NULL));
        p = s + sprintf(s, "<fmiModelDescription fmiVersion=\"3.0\" modelName=\"M\" "
                           "instantiationToken=\"t\"><CoSimulation modelIdentifier=\"M\"/>"
                           "<ModelVariables><Float64 name=\"time\" valueReference=\"0\" "
                           "causality=\"independent\"/><UInt8 name=\"v\" valueReference=\"1\" "
                           "causality=\"parameter\" start=\"");
        for (size_t i = 0; i < n; i++)
                p += sprintf(p, "1 ");
        sprintf(p, "\"><Dimension start=\"%zu\"/></UInt8></ModelVariables><ModelStructure/>"
                   "</fmiModelDescription>", n);
        return s;
}

Test(model_description, start_list_over_max_array_elements_is_refused, .init = mdx_setup,
     .fini = mdx_teardown)
{
        struct md_limits lim = { .max_array_elements = 1000 };
        char *doc = with_start_list(1000);

        cr_assert(eq(int, mdx_parse_text(doc, &lim), 0));
        cr_assert(eq(sz, md_find_name(mdx_md, "v")->start.n, 1000));
        free(doc);
        md_free(mdx_md);
        mdx_md = NULL;
        doc = with_start_list(1001);
        cr_assert(eq(int, mdx_parse_text(doc, &lim), -EINVAL));
        cr_assert(mdx_has_diag("start lists more than 1000 values"));
        cr_assert(mdx_has_diag("array of more than 1000 elements"));
        free(doc);
}

Test(model_description, variables_and_strings_over_their_caps_are_refused, .init = mdx_setup,
     .fini = mdx_teardown)
{
        struct md_limits lim = { .max_variables = 2, .max_string_bytes = 4 };

        cr_assert(eq(int, mdx_parse_file("md/valid/fmi2-cosim.xml", &lim), -EINVAL));
        cr_assert(mdx_has_diag("more than 2 variables (13); ModelVariables refused"));
        cr_assert(mdx_has_diag("start string longer than 4 bytes") == false);
        md_free(mdx_md);
        mdx_md = NULL;
        lim.max_variables = 0;
        cr_assert(eq(int, mdx_parse_file("md/valid/fmi2-cosim.xml", &lim), -EINVAL));
        cr_assert(mdx_has_diag("start string longer than 4 bytes; refused"));
}

/* ---- the process around the parser ------------------------------------ */

/* A locale whose decimal point is ',', installed or built into a temporary dir. */
static bool comma_locale(char **ret_dir, const char **ret_name)
{
        static const char *const names[] = { "de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8",
                                             "fr_FR.utf8", "nl_NL.UTF-8", "de_DE" };
        char out[1024], *dir;
        struct run_result rr;
        int r;

        *ret_dir = NULL;
        for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
                if (setlocale(LC_NUMERIC, names[i])) {
                        *ret_name = names[i];
                        return true;
                }
        }
        if (access("/usr/bin/localedef", X_OK) != 0)
                return false;
        dir = tmpdir_new("fmud-locale");
        if (!dir)
                return false;
        snprintf(out, sizeof(out), "%s/de_DE.UTF-8", dir);
        r = run_capture((char *const[]){ "/usr/bin/localedef", "-i", "de_DE", "-f", "UTF-8", out,
                                         NULL }, &rr);
        if (r == 0)
                run_result_fini(&rr);
        /* glibc reads LOCPATH on every setlocale(). */
        setenv("LOCPATH", dir, 1);
        if (r != 0 || !setlocale(LC_NUMERIC, "de_DE.UTF-8")) {
                tmpdir_free(dir);
                return false;
        }
        *ret_dir = dir;
        *ret_name = "de_DE.UTF-8";
        return true;
}

Test(model_description, numbers_do_not_depend_on_lc_numeric, .init = mdx_setup, .fini = mdx_teardown,
     .timeout = 120)
{
        const char *doc = "<fmiModelDescription fmiVersion=\"3.0\" modelName=\"M\" "
                          "instantiationToken=\"t\"><CoSimulation modelIdentifier=\"M\"/>"
                          "<ModelVariables><Float64 name=\"time\" valueReference=\"0\" "
                          "causality=\"independent\"/><Float64 name=\"p\" valueReference=\"1\" "
                          "causality=\"parameter\" start=\"1.5\" min=\"-2.25e1\"/>"
                          "</ModelVariables><ModelStructure/></fmiModelDescription>";
        const char *name;
        char *dir, *end;
        double d;

        if (!comma_locale(&dir, &name))
                cr_skip_test("no locale with a decimal comma, and none could be built");
        cr_log_info("LC_NUMERIC=%s", name);
        cr_assert(eq(str, nl_langinfo(RADIXCHAR), ","));
        /* The locale is in force: the C library's own strtod stops at '.'. */
        d = strtod("1.5", &end);
        cr_assert(eq(dbl, d, 1.0));
        cr_assert(eq(int, mdx_parse_text(doc, NULL), 0));
        cr_assert(eq(dbl, md_find_name(mdx_md, "p")->start.f[0], 1.5));
        cr_assert(eq(dbl, md_find_name(mdx_md, "p")->attrs.min.f, -22.5));
        setlocale(LC_NUMERIC, "C");
        if (dir)
                tmpdir_free(dir);
}

struct thread_arg {
        const char *buf;
        size_t len;
        int failures;
};

static void *parse_many(void *p)
{
        struct thread_arg *a = p;

        for (int i = 0; i < 50; i++) {
                struct diag_list d;
                struct md *m = NULL;

                diag_list_init(&d, 0);
                if (md_parse(a->buf, a->len, "t.xml", NULL, &d, &m) != 0 || !m ||
                    m->n_vars != 30 || m->vars[11].start.i[0] != INT64_C(9007199254740993))
                        a->failures++;
                md_free(m);
                diag_list_fini(&d);
        }
        return NULL;
}

Test(model_description, parses_from_several_threads_at_once)
{
        struct thread_arg args[4];
        pthread_t t[4];
        char path[1024];
        size_t len;
        char *buf;

        snprintf(path, sizeof(path), "%s/md/valid/fmi3-all-types.xml", FMUD_TEST_SRC_DIR);
        buf = mdx_slurp(path, &len);
        for (int i = 0; i < 4; i++) {
                args[i] = (struct thread_arg){ .buf = buf, .len = len };
                cr_assert(eq(int, pthread_create(&t[i], NULL, parse_many, &args[i]), 0));
        }
        for (int i = 0; i < 4; i++) {
                pthread_join(t[i], NULL);
                cr_expect(eq(int, args[i].failures, 0));
        }
        free(buf);
}

/* ---- other files that must parse --------------------------------------- */

Test(model_description, every_test_fmu_description_parses_without_error)
{
        char pattern[1024];
        glob_t g;
        int r;

        snprintf(pattern, sizeof(pattern), "%s/fmus/*/modelDescription.xml", FMUD_TEST_SRC_DIR);
        r = glob(pattern, 0, NULL, &g);
        if (r == GLOB_NOMATCH)
                cr_skip_test("no test FMU descriptions");
        cr_assert(eq(int, r, 0));
        for (size_t i = 0; i < g.gl_pathc; i++) {
                size_t len;
                char *buf = mdx_slurp(g.gl_pathv[i], &len);

                mdx_setup();
                cr_expect(eq(int, md_parse(buf, len, g.gl_pathv[i], NULL, &mdx_diags, &mdx_md), 0),
                          "%s", g.gl_pathv[i]);
                if (diag_errors(&mdx_diags))
                        mdx_dump();
                mdx_teardown();
                free(buf);
        }
        globfree(&g);
}

/* The fuzzer's regression inputs: none may crash, leak or trip a sanitizer. */
Test(model_description, fuzz_regression_inputs_replay_cleanly)
{
        struct md_limits lim = {
                .max_bytes = 1 << 20,
                .max_variables = 1000,
                .max_array_elements = 1000,
                .max_string_bytes = 4096,
                .max_depth = 32,
        };
        char pattern[1024];
        glob_t g;

        snprintf(pattern, sizeof(pattern), "%s/fuzz/md/*", FMUD_TEST_SRC_DIR);
        cr_assert(eq(int, glob(pattern, 0, NULL, &g), 0));
        for (size_t i = 0; i < g.gl_pathc; i++) {
                size_t len;
                char *buf = mdx_slurp(g.gl_pathv[i], &len);

                mdx_setup();
                (void)md_parse(buf, len, g.gl_pathv[i], &lim, &mdx_diags, &mdx_md);
                mdx_teardown();
                free(buf);
        }
        globfree(&g);
}
