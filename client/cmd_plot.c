/*
 * fmuctl plot RESULTS.csv [NAME...] -o FILE.png|svg [--scenario FILE]:
 * the chosen columns (none named: all) against time, one panel per unit,
 * drawn by gnuplot.
 *
 * Units: from the results' units row (a second line whose first cell is
 * not a number), else from the scenario's model descriptions
 * (--scenario), else none (one panel).
 *
 * DESIGN: fmuctl writes a gnuplot script and runs gnuplot on it through
 * posix_spawnp() with an argument vector, never a shell, so no name or
 * path is ever shell text. In the script every name, unit and path is a
 * single-quoted gnuplot string (only '' is special there) with the
 * enhanced-text markup off, so any character of a variable's name is
 * drawn as it is. Columns are referred to by number, not by name.
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "engine/engine.h"
#include "fmi/fmu.h"
#include "fmi/model_description.h"
#include "proto/paths.h"

extern char **environ;

#define MAX_COLS        4096
#define MAX_LINE        (1u << 20)

enum { O_OUT = 'o', O_SCENARIO = 0x100 };

struct table {
        char *head, *units;             /* the first two lines, split in place */
        char *name[MAX_COLS], *unit[MAX_COLS];
        size_t n;
        bool has_units;
};

/* Split line in place at commas (a cell in double quotes may hold commas, "" a quote). */
static size_t split(char *line, char **cells, size_t max)
{
        size_t n = 0;
        char *r = line, *w;

        while (n < max) {
                cells[n++] = w = r;
                if (*r == '"') {
                        cells[n - 1] = w = ++r;
                        while (*r && !(*r == '"' && r[1] != '"'))
                                *w++ = *r == '"' ? (r += 2, '"') : *r++;
                        if (*r == '"')
                                r++;
                }
                while (*r && *r != ',')
                        *w++ = *r++;
                if (!*r) {
                        *w = '\0';
                        break;
                }
                *w = '\0';
                r++;
        }
        return n;
}

static char *read_line(FILE *f)
{
        char *line = NULL;
        size_t cap = 0;
        ssize_t n = getline(&line, &cap, f);

        if (n < 0 || n > (ssize_t)MAX_LINE) {
                free(line);
                return NULL;
        }
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
                line[--n] = '\0';
        return line;
}

static int read_table(const char *path, struct table *t)
{
        FILE *f = fopen(path, "r");
        char *end;

        if (!f) {
                fprintf(stderr, "fmuctl plot: cannot open '%s': %s\n", path, strerror(errno));
                return FMUCTL_EXIT_SYSTEM;
        }
        t->head = read_line(f);
        t->units = t->head ? read_line(f) : NULL;
        fclose(f);
        if (!t->head || !*t->head) {
                fprintf(stderr, "fmuctl plot: '%s' has no header line\n", path);
                return FMUCTL_EXIT_INVALID;
        }
        t->n = split(t->head, t->name, MAX_COLS);
        if (t->n < 2) {
                fprintf(stderr, "fmuctl plot: '%s' has no column after the time\n", path);
                return FMUCTL_EXIT_INVALID;
        }
        if (t->units) {
                char *first = t->units;

                (void) strtod(first, &end);
                t->has_units = end == first || (*end && *end != ',');
        }
        if (t->has_units) {
                size_t n = split(t->units, t->unit, MAX_COLS);

                for (size_t i = n; i < t->n; i++)
                        t->unit[i] = (char *)"";
        } else {
                for (size_t i = 0; i < t->n; i++)
                        t->unit[i] = (char *)"";
        }
        return 0;
}

/* Units of "instance.variable" columns from the scenario's model descriptions. */
static int scenario_units(const char *path, struct table *t, struct scenario **ret)
{
        struct scenario_opts o;
        struct diag_list diags;
        char *cache = paths_cache();
        int r;

        if (!cache)
                return FMUCTL_EXIT_SYSTEM;
        scenario_opts_default(&o);
        o.cache_dir = cache;
        diag_list_init(&diags, 0);
        r = scenario_load(path, &o, NULL, &diags, ret);
        diag_list_fini(&diags);
        free(cache);
        if (r < 0) {
                fprintf(stderr, "fmuctl plot: cannot load the scenario '%s': %s\n", path,
                        r == -EINVAL ? "invalid (fmuctl inspect says why)" : strerror(-r));
                return FMUCTL_EXIT_INVALID;
        }
        /* The scenario's own columns name their variables (as the daemon's .mat does). */
        for (size_t i = 1; i < t->n; i++)
                for (size_t k = 0; k < (*ret)->n_columns; k++) {
                        const struct scenario_column *c = &(*ret)->columns[k];
                        const struct fmu *fmu = (*ret)->components[c->comp].fmu;
                        char *unit;

                        if (strcmp(t->name[i], c->name) || !fmu || !fmu->md)
                                continue;
                        unit = fmu->md->vars[c->var].attrs.unit;
                        if (unit)
                                t->unit[i] = unit;
                        break;
                }
        return 0;
}

/* s as a single-quoted gnuplot string: only ' is special, written ''. */
static void quoted(FILE *f, const char *s)
{
        fputc('\'', f);
        for (; *s; s++) {
                if (*s == '\'')
                        fputc('\'', f);
                /* A line break would end the command: drawn as a blank. */
                fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
        }
        fputc('\'', f);
}

static void write_script(FILE *f, const char *csv, const char *out, bool svg, const struct table *t,
                         const size_t *cols, size_t n)
{
        const char *panel[MAX_COLS];
        size_t n_panels = 0;

        for (size_t i = 0; i < n; i++) {
                size_t p = 0;

                while (p < n_panels && strcmp(panel[p], t->unit[cols[i]]))
                        p++;
                if (p == n_panels)
                        panel[n_panels++] = t->unit[cols[i]];
        }
        fprintf(f, "set terminal %s size 1000,%zu noenhanced\nset output ", svg ? "svg" : "png",
                200 + 250 * n_panels);
        quoted(f, out);
        fprintf(f, "\nset datafile separator ','\nset key outside right\nset grid\n"
                   "set multiplot layout %zu,1\n", n_panels);
        for (size_t p = 0; p < n_panels; p++) {
                bool first = true;

                fputs("set ylabel ", f);
                quoted(f, panel[p]);
                fputs("\nset xlabel ", f);
                quoted(f, p + 1 == n_panels ? t->name[0] : "");
                fputs("\nplot ", f);
                for (size_t i = 0; i < n; i++) {
                        if (strcmp(t->unit[cols[i]], panel[p]))
                                continue;
                        fputs(first ? "" : ", ", f);
                        quoted(f, csv);
                        fprintf(f, " skip %d using 1:%zu with lines title ", t->has_units ? 2 : 1,
                                cols[i] + 1);
                        quoted(f, t->name[cols[i]]);
                        first = false;
                }
                fputc('\n', f);
        }
        fputs("unset multiplot\n", f);
}

/* gnuplot SCRIPT, no shell; its exit code, or an exit code of ours after saying why. */
static int run_gnuplot(const char *script)
{
        char *argv[] = { (char *)"gnuplot", (char *)script, NULL };
        pid_t pid;
        int r, st;

        r = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);
        if (r == ENOENT) {
                fprintf(stderr, "fmuctl plot needs gnuplot: apt-get install gnuplot-nox\n");
                return FMUCTL_EXIT_SYSTEM;
        }
        if (r) {
                fprintf(stderr, "fmuctl plot: cannot run gnuplot: %s\n", strerror(r));
                return FMUCTL_EXIT_SYSTEM;
        }
        while (waitpid(pid, &st, 0) < 0)
                if (errno != EINTR)
                        return FMUCTL_EXIT_SYSTEM;
        if (!WIFEXITED(st) || WEXITSTATUS(st)) {
                fprintf(stderr, "fmuctl plot: gnuplot failed\n");
                return FMUCTL_EXIT_SYSTEM;
        }
        return FMUCTL_EXIT_OK;
}

static bool ends_with(const char *s, const char *tail)
{
        size_t n = strlen(s), k = strlen(tail);

        return n > k && !strcmp(s + n - k, tail);
}

static const struct cli_opt opts[] = {
        { "output", O_OUT, "FILE", "the picture: FILE.png or FILE.svg (required)" },
        { "scenario", O_SCENARIO, "FILE", "units from this scenario's FMUs, when the results\n"
                                          "have no units row" },
        { 0 },
};

static const struct cli_cmd def = {
        .name = "plot",
        .usage = "RESULTS.csv [NAME...] -o FILE.png|FILE.svg [options]",
        .about = "Draws the named columns of a results file (none named: all) against\n"
                 "time with gnuplot, one panel per unit: the units row of the file,\n"
                 "else --scenario's, else one panel.",
        .opts = { opts },
};

int cmd_plot(int argc, char **argv)
{
        struct cli a = { .def = &def };
        struct table *t = calloc(1, sizeof(*t));
        struct scenario *sc = NULL;
        const char *out = NULL, *scen = NULL;
        char script[] = "/tmp/fmuctl-plot-XXXXXX";
        size_t *cols = NULL, n = 0;
        int c, code, fd = -1;
        bool made = false;
        FILE *f = NULL;

        if (!t)
                return FMUCTL_EXIT_SYSTEM;
        while ((c = cli_getopt(&a, argc, argv)) > 0)
                if (c == O_OUT)
                        out = optarg;
                else if (c == O_SCENARIO)
                        scen = optarg;
        code = c < 0 ? FMUCTL_EXIT_USAGE : 0;
        if (!code && a.help) {
                free(t);
                return cli_help(&a, stdout);
        }
        if (!code && optind >= argc)
                code = cli_usage_error(&a, "expected RESULTS.csv");
        if (!code && (!out || !(ends_with(out, ".png") || ends_with(out, ".svg"))))
                code = cli_usage_error(&a, "expected -o FILE.png or -o FILE.svg");
        if (!code)
                code = read_table(argv[optind], t);
        if (!code && !t->has_units && scen)
                code = scenario_units(scen, t, &sc);
        if (!code && !(cols = calloc(t->n, sizeof(*cols))))
                code = FMUCTL_EXIT_SYSTEM;
        for (int i = optind + 1; !code && i < argc; i++) {
                size_t k = 1;

                while (k < t->n && strcmp(t->name[k], argv[i]))
                        k++;
                if (k == t->n) {
                        fprintf(stderr, "fmuctl plot: no column '%s' in '%s'\n", argv[i],
                                argv[optind]);
                        code = FMUCTL_EXIT_INVALID;
                } else if (n < t->n) {
                        cols[n++] = k;
                }
        }
        for (size_t k = 1; !code && optind + 1 == argc && k < t->n; k++)
                cols[n++] = k;
        if (!code && (fd = mkstemp(script)) >= 0)
                made = true;
        if (!code && (fd < 0 || !(f = fdopen(fd, "w")))) {
                fprintf(stderr, "fmuctl plot: cannot write the script: %s\n", strerror(errno));
                code = FMUCTL_EXIT_SYSTEM;
        }
        if (!code) {
                write_script(f, argv[optind], out, ends_with(out, ".svg"), t, cols, n);
                code = fclose(f) ? FMUCTL_EXIT_SYSTEM : run_gnuplot(script);
                f = NULL;
                fd = -1;
        }
        if (f)
                fclose(f);
        else if (fd >= 0)
                close(fd);
        if (made)
                (void) unlink(script);
        scenario_free(sc);
        free(cols);
        free(t->head);
        free(t->units);
        free(t);
        return code;
}
