/*
 * ssd_sources: the files an .ssd names by relative source URI
 * (scenario.h, scenario_ssd_sources()), for a client that uploads them
 * to a daemon before a load by content.
 *
 * DESIGN: the document is read by ssd_read(), the parser the load uses,
 * and each source is judged by scenario_source.c's rules, so the client
 * sends exactly the files the daemon will open: a commented-out element
 * names nothing, a single-quoted or percent-encoded source is read as
 * the load reads it. The limits are the load's defaults.
 */
#include "engine/scenario/scenario_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct names {
        char **v;
        size_t n, cap;
};

/* Add uri's path once; 0 or -ENOMEM. */
static int add(struct names *s, const char *uri)
{
        bool nomem = false;
        char *name = uri ? sc_source_relative(uri, &nomem) : NULL;

        if (!name)
                return nomem ? -ENOMEM : 0;
        for (size_t i = 0; i < s->n; i++)
                if (!strcmp(s->v[i], name)) {
                        free(name);
                        return 0;
                }
        if (s->n == s->cap) {
                size_t cap = s->cap ? 2 * s->cap : 16;
                char **v = realloc(s->v, cap * sizeof(*v));

                if (!v) {
                        free(name);
                        return -ENOMEM;
                }
                s->v = v;
                s->cap = cap;
        }
        s->v[s->n++] = name;
        return 0;
}

static int walk(struct names *s, const struct ssd_element *e, int depth)
{
        int r = 0;

        if (depth > 64)
                return 0;       /* ssd_read() bounds the depth already */
        for (size_t i = 0; r == 0 && i < e->n_bindings; i++)
                r = add(s, e->bindings[i].source);
        if (e->kind == SSD_COMPONENT)
                return r ? r : add(s, e->source);
        for (size_t i = 0; r == 0 && i < e->n_elements; i++)
                r = walk(s, &e->elements[i], depth + 1);
        return r;
}

int scenario_ssd_sources(const void *buf, size_t len, const char *file, char ***ret,
                         size_t *ret_n)
{
        struct scenario_opts o;
        struct diag_list diags;
        struct ssd_doc doc = { 0 };
        struct names s = { 0 };
        int r;

        *ret = NULL;
        *ret_n = 0;
        scenario_opts_default(&o);
        diag_list_init(&diags, 0);
        doc.x = (struct mx){ .diags = &diags, .file = file, .max_depth = o.max_xml_depth,
                             .max_attributes = o.max_xml_attributes,
                             .max_elements = o.max_xml_elements };
        r = ssd_read(&doc, buf, len);
        if (r == 0)
                r = walk(&s, &doc.root, 0);
        ssd_doc_fini(&doc);
        diag_list_fini(&diags);
        if (r < 0) {
                for (size_t i = 0; i < s.n; i++)
                        free(s.v[i]);
                free(s.v);
                return r;
        }
        *ret = s.v;
        *ret_n = s.n;
        return 0;
}
