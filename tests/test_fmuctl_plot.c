/*
 * fmuctl_plot: fmuctl plot draws a results file with the real gnuplot
 * (a PNG's signature, an SVG's <svg>, the names as they are, quotes and
 * all), refuses a name the file has no column for, and says how to get
 * gnuplot when there is none on the PATH.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/run.h"
#include "support/tmpdir.h"

static char *dir;

static void setup(void)
{
        static const char plain[] = "time,a.x,b.v\n0,1,2\n0.5,1.5,2.5\n1,2,3\n";
        static const char units[] = "time,x,\"we'ird \"\"n\"\"\",v\ns,m,m,m/s\n0,1,2,3\n1,2,3,4\n";

        dir = tmpdir_new("fmuctl-plot");
        cr_assert(dir != NULL);
        cr_assert(tmpdir_write(dir, "r.csv", plain, strlen(plain)) == 0);
        cr_assert(tmpdir_write(dir, "u.csv", units, strlen(units)) == 0);
}

static void teardown(void)
{
        tmpdir_free(dir);
}

TestSuite(fmuctl_plot, .init = setup, .fini = teardown);

/* fmuctl plot DIR/csv NAMES... -o DIR/out; the caller frees with run_result_fini(). */
static struct run_result plot(const char *csv, const char *out, const char *name)
{
        char in[512], o[512];
        char *argv[] = { FMUD_FMUCTL, "plot", in, "-o", o, (char *)name, NULL };
        struct run_result r = { 0 };

        snprintf(in, sizeof(in), "%s/%s", dir, csv);
        snprintf(o, sizeof(o), "%s/%s", dir, out);
        cr_assert(run_capture(argv, &r) == 0);
        return r;
}

static char *slurp(const char *name, size_t *len)
{
        char path[512], *buf;
        FILE *f;
        long n;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "rb");
        cr_assert(f != NULL, "no %s", path);
        fseek(f, 0, SEEK_END);
        n = ftell(f);
        rewind(f);
        buf = calloc(1, (size_t)n + 1);
        cr_assert(buf != NULL && fread(buf, 1, (size_t)n, f) == (size_t)n);
        fclose(f);
        *len = (size_t)n;
        return buf;
}

Test(fmuctl_plot, draws_a_png_and_an_svg_with_the_names_as_they_are)
{
        struct run_result r = plot("r.csv", "a.png", NULL);
        size_t len;
        char *png, *svg;

        if (r.exit_code == 3 && strstr(r.err, "needs gnuplot"))
                cr_skip_test("no gnuplot here (scripts/install-deps installs it)");
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        run_result_fini(&r);
        png = slurp("a.png", &len);
        cr_assert(len > 8 && !memcmp(png, "\x89PNG\r\n\x1a\n", 8), "not a PNG");
        free(png);
        /* A units row: one panel per unit; a name with quotes is drawn as it is. */
        r = plot("u.csv", "b.svg", NULL);
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        run_result_fini(&r);
        svg = slurp("b.svg", &len);
        cr_assert(strstr(svg, "<svg") != NULL);
        cr_assert(strstr(svg, "we'ird \"n\"") || strstr(svg, "we&apos;ird &quot;n&quot;") ||
                  strstr(svg, "we'ird &quot;n&quot;"), "the quoted name is not drawn");
        cr_assert(strstr(svg, "m/s") != NULL, "no panel for m/s");
        free(svg);
        /* One column by name: its key is drawn, the other column's is not. */
        r = plot("r.csv", "c.svg", "b.v");
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        run_result_fini(&r);
        svg = slurp("c.svg", &len);
        cr_assert(strstr(svg, ">b.v<") != NULL, "the named column is not drawn");
        cr_assert(strstr(svg, ">a.x<") == NULL, "a column not named is drawn");
        free(svg);
}

Test(fmuctl_plot, an_unknown_name_is_refused_and_nothing_is_drawn)
{
        struct run_result r = plot("r.csv", "d.png", "nosuch");
        char path[512];

        cr_assert(eq(int, r.exit_code, 1));
        snprintf(path, sizeof(path), "fmuctl plot: no column 'nosuch' in '%s/r.csv'\n", dir);
        cr_assert(eq(str, r.err, path));
        snprintf(path, sizeof(path), "%s/d.png", dir);
        cr_assert(access(path, F_OK) != 0, "a picture was drawn");
        run_result_fini(&r);
}

Test(fmuctl_plot, no_gnuplot_on_the_path_is_said_with_how_to_get_it)
{
        struct run_result r;

        cr_assert(setenv("PATH", dir, 1) == 0);
        r = plot("r.csv", "e.png", NULL);
        cr_assert(eq(int, r.exit_code, 3));
        cr_assert(eq(str, r.err, "fmuctl plot needs gnuplot: apt-get install gnuplot-nox\n"));
        run_result_fini(&r);
}

Test(fmuctl_plot, a_picture_that_is_not_png_or_svg_is_a_usage_error)
{
        struct run_result r = plot("r.csv", "f.jpg", NULL);

        cr_assert(eq(int, r.exit_code, 2));
        cr_assert(strstr(r.err, "expected -o FILE.png or -o FILE.svg") != NULL, "%s", r.err);
        run_result_fini(&r);
}

/* No units row: the scenario's FMUs give them, one panel (ylabel) each. */
Test(fmuctl_plot, units_come_from_the_scenario_when_the_file_has_none)
{
        static const char msd[] = "time,mass1.x1,mass1.v1,mass2.F\n0,0,0,5\n0.1,0.1,1,4\n";
        char in[512], out[512];
        char *argv[] = { FMUD_FMUCTL, "plot", in, "-o", out, "--scenario",
                         FMUD_EXAMPLES "/msd.ssp", NULL };
        struct run_result r = { 0 };
        size_t len;
        char *svg;

        cr_assert(tmpdir_write(dir, "m.csv", msd, strlen(msd)) == 0);
        snprintf(in, sizeof(in), "%s/m.csv", dir);
        snprintf(out, sizeof(out), "%s/m.svg", dir);
        cr_assert(run_capture(argv, &r) == 0);
        if (r.exit_code == 3 && strstr(r.err, "needs gnuplot"))
                cr_skip_test("no gnuplot here (scripts/install-deps installs it)");
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        run_result_fini(&r);
        svg = slurp("m.svg", &len);
        cr_assert(strstr(svg, ">m<") && strstr(svg, ">m/s<") && strstr(svg, ">N<"),
                  "not a panel each for m, m/s and N");
        free(svg);
}
