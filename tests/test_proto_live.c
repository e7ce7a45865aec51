/*
 * proto: the time get and set answer with (ops_live.c): written and read
 * back exactly, absent in a reply of a daemon that predates it, refused
 * when it is not a finite number.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"

/* Decode w's bytes into doc; the root is the result. */
static const struct pv *decode(struct pw *w, struct pv_doc *doc)
{
        struct proto_limits lim;
        char err[256];

        proto_limits_default(&lim);
        cr_assert(pv_decode(pw_data(w), pw_size(w), &lim, doc, err, sizeof(err)) == 0, "%s", err);
        return doc->root;
}

Test(proto_live, set_and_get_results_carry_the_time_exactly)
{
        struct pv_doc doc = { 0 };
        struct proto_get_result g;
        char err[256];
        double t = NAN;
        void *mem = NULL;
        bool has = false;
        struct pw w;

        cr_assert(pw_init(&w) == 0);
        proto_set_result_encode(&w, 0.1 + 0.2);
        cr_assert(proto_result_time(decode(&w, &doc), &t, &has, err, sizeof(err)) == 0, "%s", err);
        cr_assert(has && t == 0.1 + 0.2, "time %.17g", t);
        pv_doc_fini(&doc);
        pw_reset(&w);
        proto_get_result_begin_at(&w, 1, 5e-324);
        pw_bool(&w, true);
        cr_assert(proto_get_result_decode(decode(&w, &doc), &g, &mem, err, sizeof(err)) == 0, "%s",
                  err);
        cr_assert(g.n == 1 && g.values[0]->type == PV_BOOL && g.values[0]->b);
        cr_assert(proto_result_time(doc.root, &t, &has, err, sizeof(err)) == 0, "%s", err);
        cr_assert(has && t == 5e-324, "time %.17g", t);
        free(mem);
        pv_doc_fini(&doc);
        pw_fini(&w);
}

Test(proto_live, a_result_without_time_has_none)
{
        struct pv_doc doc = { 0 };
        char err[256];
        double t = 0;
        bool has = true;
        struct pw w;

        cr_assert(pw_init(&w) == 0);
        pw_nil(&w);             /* set's result before it had a time */
        cr_assert(proto_result_time(decode(&w, &doc), &t, &has, err, sizeof(err)) == 0, "%s", err);
        cr_assert(!has && isnan(t));
        pv_doc_fini(&doc);
        pw_fini(&w);
}

Test(proto_live, a_time_that_is_no_finite_number_is_refused)
{
        struct pv_doc doc = { 0 };
        char err[256] = "";
        double t = 0;
        bool has = true;
        struct pw w;

        cr_assert(pw_init(&w) == 0);
        pw_map(&w, 1);
        pw_str(&w, "time");
        pw_str(&w, "0.5");
        cr_assert(proto_result_time(decode(&w, &doc), &t, &has, err, sizeof(err)) < 0);
        cr_assert(!has && strstr(err, "result.time: expected a finite number"), "%s", err);
        pv_doc_fini(&doc);
        pw_reset(&w);
        pw_map(&w, 1);
        pw_str(&w, "time");
        pw_f64(&w, INFINITY);
        cr_assert(proto_result_time(decode(&w, &doc), &t, &has, err, sizeof(err)) < 0);
        cr_assert(!has, "an infinite time is none");
        pv_doc_fini(&doc);
        pw_fini(&w);
}
