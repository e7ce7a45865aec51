/*
 * md_fixture: see md_fixture.h.
 */
#include "md_fixture.h"

#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct diag_list mdx_diags;
struct md *mdx_md;

void mdx_setup(void)
{
        diag_list_init(&mdx_diags, 0);
        mdx_md = NULL;
}

void mdx_teardown(void)
{
        md_free(mdx_md);
        diag_list_fini(&mdx_diags);
}

char *mdx_slurp(const char *path, size_t *ret_len)
{
        FILE *f = fopen(path, "rb");
        char *buf = NULL;
        long n;

        cr_assert(ne(ptr, f, NULL), "cannot open %s", path);
        cr_assert(eq(int, fseek(f, 0, SEEK_END), 0));
        n = ftell(f);
        rewind(f);
        buf = malloc((size_t)n + 1);
        cr_assert(ne(ptr, buf, NULL));
        cr_assert(eq(sz, fread(buf, 1, (size_t)n, f), (size_t)n));
        buf[n] = '\0';
        fclose(f);
        *ret_len = (size_t)n;
        return buf;
}

/* Parse a fixture under tests/ into the globals; returns md_parse()'s result. */
int mdx_parse_file(const char *rel, const struct md_limits *lim)
{
        char path[1024];
        size_t len;
        char *buf;
        int r;

        snprintf(path, sizeof(path), "%s/%s", FMUD_TEST_SRC_DIR, rel);
        buf = mdx_slurp(path, &len);
        r = md_parse(buf, len, rel, lim, &mdx_diags, &mdx_md);
        free(buf);
        return r;
}

int mdx_parse_text(const char *text, const struct md_limits *lim)
{
        return md_parse(text, strlen(text), "test.xml", lim, &mdx_diags, &mdx_md);
}

void mdx_dump(void)
{
        char line[1024];

        for (size_t i = 0; i < mdx_diags.n; i++) {
                diag_format(&mdx_diags.v[i], line, sizeof(line));
                cr_log_info("%s", line);
        }
}

/* Some diagnostic (error or not) contains 'text'. */
bool mdx_has_diag(const char *text)
{
        for (size_t i = 0; i < mdx_diags.n; i++)
                if (strstr(mdx_diags.v[i].message, text))
                        return true;
        return false;
}

const struct md_variable *mdx_var(const char *name)
{
        const struct md_variable *v = md_find_name(mdx_md, name);

        cr_assert(ne(ptr, (void *)v, NULL), "no variable '%s'", name);
        return v;
}
