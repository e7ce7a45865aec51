/*
 * model_description: documents built to exhaust the parser (attributes by
 * the hundred thousand on one element, elements by the million) are
 * refused by the linear pre-scan before libxml2 builds anything, naming
 * the limit, the line and the element; large real descriptions still
 * parse; a parse stops when its cancellation callback says so.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi/model_description.h"
#include "md_fixture.h"

static const char *head = "<?xml version=\"1.0\"?>\n"
                          "<fmiModelDescription fmiVersion=\"3.0\" modelName=\"M\" "
                          "instantiationToken=\"t\">\n<CoSimulation modelIdentifier=\"M\"/>\n"
                          "<ModelVariables>\n";
static const char *tail = "</ModelVariables>\n<ModelStructure/>\n</fmiModelDescription>\n";

/* A growing text buffer; aborts the test on OOM. */
struct text {
        char *s;
        size_t len, cap;
};

__attribute__((format(printf, 2, 3)))
static void put(struct text *t, const char *fmt, ...)
{
        va_list ap;
        int n;

        for (;;) {
                va_start(ap, fmt);
                n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
                va_end(ap);
                cr_assert(ge(int, n, 0));
                if (t->s && t->len + (size_t)n < t->cap)
                        break;
                t->cap = (t->cap + (size_t)n + 1) * 2;
                t->s = realloc(t->s, t->cap);
                cr_assert(ne(ptr, t->s, NULL));
                if (t->len == 0)
                        t->s[0] = '\0';
        }
        t->len += (size_t)n;
}

/* The diagnostic whose message holds text, or NULL. */
static const struct diag *find_diag(const char *text)
{
        for (size_t i = 0; i < mdx_diags.n; i++)
                if (strstr(mdx_diags.v[i].message, text))
                        return &mdx_diags.v[i];
        return NULL;
}

/* A Float64 on line 6 with n attributes: name, valueReference and n - 2 more. */
static char *attribute_bomb(size_t n)
{
        struct text t = { 0 };

        put(&t, "%s\n<Float64 name=\"x\" valueReference=\"1\"", head);
        for (size_t i = 2; i < n; i++)
                put(&t, " attribute%zu=\"1\"", i);
        put(&t, "/>\n%s", tail);
        return t.s;
}

Test(model_description, attribute_bomb_is_refused_by_the_pre_scan, .init = mdx_setup,
     .fini = mdx_teardown)
{
        char *doc = attribute_bomb(120000);
        const struct diag *d;

        cr_assert(gt(sz, strlen(doc), (size_t)2 << 20));
        cr_assert(eq(int, mdx_parse_text(doc, NULL), -EINVAL));
        cr_assert(eq(ptr, mdx_md, NULL));
        /* Only the pre-scan names this limit: libxml2 never saw the tag. */
        d = find_diag("element <Float64> has more than 256 attributes, the limit of attributes "
                      "per element; document refused");
        cr_assert(ne(ptr, (void *)d, NULL));
        cr_assert(eq(int, d->line, 6));
        cr_assert(eq(sz, mdx_diags.n, 1));
        free(doc);
}

Test(model_description, attributes_up_to_the_limit_parse, .init = mdx_setup, .fini = mdx_teardown)
{
        struct md_limits lim = { .max_attributes = 40 };
        char *doc = attribute_bomb(40);

        /* Unknown attributes are the schema's business, not the pre-scan's. */
        (void)mdx_parse_text(doc, &lim);
        cr_assert(ne(ptr, mdx_md, NULL));
        cr_assert(ne(ptr, (void *)mdx_var("x"), NULL));
        cr_assert(eq(ptr, (void *)find_diag("limit of attributes"), NULL));
        free(doc);
        md_free(mdx_md);
        mdx_md = NULL;
        doc = attribute_bomb(41);
        cr_assert(eq(int, mdx_parse_text(doc, &lim), -EINVAL));
        cr_assert(ne(ptr, (void *)find_diag("element <Float64> has more than 40 attributes"),
                     NULL));
        free(doc);
}

Test(model_description, equals_signs_in_quoted_values_are_not_attributes, .init = mdx_setup,
     .fini = mdx_teardown)
{
        struct md_limits lim = { .max_attributes = 4 };
        struct text t = { 0 };

        /* Three attributes; the description holds '=', '>', '<' escaped and a newline. */
        put(&t, "%s<Float64 name=\"x\" valueReference=\"1\" description='a=b=c=d=e &lt;f&gt; g=\n"
                "h=i=j'/>\n%s", head, tail);
        cr_assert(eq(int, mdx_parse_text(t.s, &lim), 0));
        cr_assert(ne(ptr, (void *)mdx_var("x"), NULL));
        free(t.s);
}

Test(model_description, element_bomb_is_refused_by_the_pre_scan, .init = mdx_setup,
     .fini = mdx_teardown)
{
        struct text t = { 0 };
        const struct diag *d;

        /* The default limit of 4,000,000 elements, crossed inside an Annotations element. */
        put(&t, "%s<Float64 name=\"x\" valueReference=\"1\">\n<Annotations>\n", head);
        for (size_t i = 0; i < 4000000; i++)
                put(&t, "<a/>");
        put(&t, "\n</Annotations>\n</Float64>\n%s", tail);
        cr_assert(eq(int, mdx_parse_text(t.s, NULL), -EINVAL));
        cr_assert(eq(ptr, mdx_md, NULL));
        d = find_diag("more than 4000000 elements, the limit of elements in a document, at <a>; "
                      "document refused");
        cr_assert(ne(ptr, (void *)d, NULL));
        cr_assert(eq(int, d->line, 7));
        free(t.s);
}

Test(model_description, comments_and_cdata_hold_no_elements, .init = mdx_setup,
     .fini = mdx_teardown)
{
        /* fmiModelDescription, CoSimulation, ModelVariables, Float64, ModelStructure. */
        struct md_limits lim = { .max_elements = 5 };
        struct text t = { 0 };

        put(&t, "%s<!-- <a/><b x=\"1\"/> --><?pi <c/>?>"
                "<Float64 name=\"x\" valueReference=\"1\"/>\n%s", head, tail);
        cr_assert(eq(int, mdx_parse_text(t.s, &lim), 0));
        lim.max_elements = 4;
        md_free(mdx_md);
        mdx_md = NULL;
        cr_assert(eq(int, mdx_parse_text(t.s, &lim), -EINVAL));
        cr_assert(ne(ptr, (void *)find_diag("more than 4 elements, the limit of elements in a "
                                            "document, at <ModelStructure>"), NULL));
        free(t.s);
}

/* n outputs of an FMI 3.0 description, each in ModelStructure as well. */
static char *many_variables(size_t n)
{
        struct text t = { 0 };

        put(&t, "%s", head);
        for (size_t i = 0; i < n; i++)
                put(&t, "<Float64 name=\"y%zu\" valueReference=\"%zu\" causality=\"output\" "
                        "variability=\"continuous\"/>\n", i, i);
        put(&t, "</ModelVariables>\n<ModelStructure>\n");
        for (size_t i = 0; i < n; i++)
                put(&t, "<Output valueReference=\"%zu\"/>\n", i);
        put(&t, "</ModelStructure>\n</fmiModelDescription>\n");
        return t.s;
}

Test(model_description, a_large_valid_description_still_parses, .init = mdx_setup,
     .fini = mdx_teardown)
{
        char *doc = many_variables(100000);

        cr_assert(eq(int, mdx_parse_text(doc, NULL), 0));
        cr_assert(eq(sz, mdx_md->n_vars, 100000));
        cr_assert(ne(ptr, (void *)mdx_var("y99999"), NULL));
        free(doc);
}

struct countdown {
        int polls, cancel_at;
};

static bool cancel_at(void *ctx)
{
        struct countdown *c = ctx;

        return ++c->polls >= c->cancel_at;
}

Test(model_description, a_parse_stops_when_cancelled, .init = mdx_setup, .fini = mdx_teardown)
{
        struct countdown cd = { .cancel_at = 50 };
        struct md_limits lim = { .cancel = { .fn = cancel_at, .ctx = &cd } };
        char *doc = many_variables(1000);

        /* Polled at each element: the 50th of some 2,000 stops the parse there. */
        cr_assert(eq(int, mdx_parse_text(doc, &lim), -ECANCELED));
        cr_assert(eq(int, cd.polls, 50));
        cr_assert(eq(ptr, mdx_md, NULL));
        cr_assert(eq(sz, mdx_diags.n, 0));
        free(doc);
}
