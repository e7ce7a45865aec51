/* Test helpers: staged scenario folders (see test_scenario_fixture.h). */
#include "test_scenario_fixture.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support/tmpdir.h"

static const char *const test_fmus[] = {
        "LinearOde", "LinearOde2", "MsdMass1", "MsdMass2", "Feedthrough", "BouncingBall",
        "IntermediateProbe", "GlobalCounter", "ClockedDeriv", "MsdNoBase",
};

void sx_copy(const char *from, const char *to)
{
        FILE *in = fopen(from, "rb"), *out;
        char buf[65536];
        size_t n;

        cr_assert(in != NULL, "open %s", from);
        out = fopen(to, "wb");
        cr_assert(out != NULL, "create %s", to);
        while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
                cr_assert(fwrite(buf, 1, n, out) == n);
        fclose(in);
        cr_assert(fclose(out) == 0);
}

void sx_write(const char *dir, const char *name, const char *text)
{
        cr_assert(tmpdir_write(dir, name, text, strlen(text)) == 0, "write %s/%s", dir, name);
}

static char *join(const char *a, const char *b)
{
        char *s;

        cr_assert(asprintf(&s, "%s/%s", a, b) >= 0);
        return s;
}

void sx_stage(struct sx *x, const char *fixture, const char *const *extra)
{
        char *res, *src, *dst, *fixdir, *slash;

        *x = (struct sx){ 0 };
        x->dir = tmpdir_new("fmud-scn");
        x->cache = tmpdir_new("fmud-scn-cache");
        cr_assert(x->dir && x->cache);
        res = join(x->dir, "resources");
        cr_assert(mkdir(res, 0755) == 0);
        for (size_t i = 0; i < sizeof(test_fmus) / sizeof(*test_fmus); i++) {
                char name[128];

                snprintf(name, sizeof(name), "%s.fmu", test_fmus[i]);
                src = join(FMUD_TEST_FMU_DIR, name);
                dst = join(res, name);
                sx_copy(src, dst);
                free(src);
                free(dst);
        }
        free(res);
        x->ssd = join(x->dir, "SystemStructure.ssd");
        if (fixture) {
                src = NULL;
                cr_assert(asprintf(&src, "%s/ssp/%s", FMUD_TEST_SRC_DIR, fixture) >= 0);
                sx_copy(src, x->ssd);
                fixdir = src;
                slash = strrchr(fixdir, '/');
                *slash = '\0';
                for (size_t i = 0; extra && extra[i]; i++) {
                        char *from = join(fixdir, extra[i]), *to = join(x->dir, extra[i]);

                        sx_copy(from, to);
                        free(from);
                        free(to);
                }
                free(src);
        }
        scenario_opts_default(&x->opts);
        x->opts.cache_dir = x->cache;
        diag_list_init(&x->diags, 0);
}

int sx_load(struct sx *x, const char *path, const struct scenario_overrides *ov)
{
        free(x->listing);
        x->listing = sx_listing(x->dir);
        return scenario_load(path ? path : x->ssd, &x->opts, ov, &x->diags, &x->s);
}

void sx_fini(struct sx *x)
{
        scenario_free(x->s);
        diag_list_fini(&x->diags);
        tmpdir_free(x->dir);
        tmpdir_free(x->cache);
        free(x->ssd);
        free(x->listing);
        *x = (struct sx){ 0 };
}

bool sx_has(const struct sx *x, const char *a, const char *b)
{
        char buf[2048];

        for (size_t i = 0; i < x->diags.n; i++) {
                diag_format(&x->diags.v[i], buf, sizeof(buf));
                if (strstr(buf, a) && (!b || strstr(buf, b)))
                        return true;
        }
        return false;
}

void sx_dump(const struct sx *x)
{
        char buf[2048];

        for (size_t i = 0; i < x->diags.n; i++) {
                diag_format(&x->diags.v[i], buf, sizeof(buf));
                cr_log_info("%s", buf);
        }
}

/* The listing under construction (nftw has no context argument). */
static char *g_list;
static size_t g_len, g_base;

static int list_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
        size_t n = strlen(path + g_base) + 2;
        char *p;

        (void)st;
        (void)f;
        if (type != FTW_F && type != FTW_SL)
                return 0;
        p = realloc(g_list, g_len + n + 1);
        cr_assert(p != NULL);
        g_list = p;
        g_len += (size_t)sprintf(g_list + g_len, "%s\n", path + g_base);
        return 0;
}

static int cmp_lines(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

char *sx_listing(const char *dir)
{
        char *lines[4096], *out, *save = NULL;
        size_t n = 0, at = 0;

        g_list = calloc(1, 1);
        g_len = 0;
        g_base = strlen(dir);
        cr_assert(nftw(dir, list_one, 16, FTW_PHYS) == 0);
        for (char *l = strtok_r(g_list, "\n", &save); l && n < 4096; l = strtok_r(NULL, "\n", &save))
                lines[n++] = l;
        qsort(lines, n, sizeof(*lines), cmp_lines);
        out = calloc(1, g_len + 1);
        cr_assert(out != NULL);
        for (size_t i = 0; i < n; i++)
                at += (size_t)sprintf(out + at, "%s\n", lines[i]);
        free(g_list);
        g_list = NULL;
        return out;
}

bool sx_clean(const struct sx *x)
{
        char *now = sx_listing(x->dir), *cache = sx_listing(x->cache);
        bool ok = x->listing && strcmp(now, x->listing) == 0;

        if (!ok)
                cr_log_error("scenario folder changed:\nbefore:\n%s\nafter:\n%s", x->listing, now);
        if (strstr(cache, "/.")) {
                cr_log_error("temporary files left in the cache:\n%s", cache);
                ok = false;
        }
        free(now);
        free(cache);
        return ok;
}

long sx_var(const struct sx *x, size_t c, const char *name)
{
        const struct md *md = x->s->components[c].fmu->md;
        const struct md_variable *v = md_find_name(md, name);

        return v ? (long)(v - md->vars) : -1;
}

size_t sx_comp(const struct sx *x, const char *name)
{
        int i = scenario_find_component(x->s, name);

        cr_assert(i >= 0, "component %s", name);
        return (size_t)i;
}

const struct scenario_connection *sx_conn_to(const struct sx *x, const char *comp,
                                             const char *var)
{
        size_t c = sx_comp(x, comp);
        long v = sx_var(x, c, var);

        for (size_t i = 0; i < x->s->n_connections; i++)
                if (x->s->connections[i].to_comp == c && (long)x->s->connections[i].to_var == v)
                        return &x->s->connections[i];
        return NULL;
}

const struct scenario_start *sx_start(const struct sx *x, const char *comp, const char *var)
{
        size_t c = sx_comp(x, comp);
        long v = sx_var(x, c, var);
        const struct scenario_component *sc = &x->s->components[c];

        for (size_t i = 0; i < sc->n_starts; i++)
                if ((long)sc->starts[i].var == v)
                        return &sc->starts[i];
        return NULL;
}
