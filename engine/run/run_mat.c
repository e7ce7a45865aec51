/*
 * run_mat: what a .mat results file says of each column beside its values
 * (run.h run_mat4_meta()), from the scenario's model descriptions; the
 * same for fmuctl's own runs and the daemon's.
 */
#include "engine/run/run.h"
#include "engine/record/mat4_csv.h"

#include <stdio.h>
#include <stdlib.h>

/* What a .mat file cannot hold: a String's or a Binary's values. */
static bool is_text(enum md_type t)
{
        return t == MD_STRING || t == MD_BINARY;
}

struct mat4_var *run_mat4_meta(const struct scenario *sc)
{
        struct mat4_var *v = calloc(sc->n_columns ? sc->n_columns : 1, sizeof(*v));

        for (size_t i = 0; v && i < sc->n_columns; i++) {
                const struct scenario_column *c = &sc->columns[i];
                const struct md_variable *mv = &sc->components[c->comp].fmu->md->vars[c->var];

                v[i] = (struct mat4_var){
                        .name = c->name, .description = mv->description,
                        .unit = mv->attrs.unit,
                        .parameter = mv->variability == MD_VARIABILITY_CONSTANT ||
                                     mv->variability == MD_VARIABILITY_FIXED,
                        .text = is_text(mv->type),
                };
        }
        return v;
}

size_t run_mat4_left_out(const struct scenario *sc, char *buf, size_t size)
{
        bool cut = size == 0;
        size_t n = 0;

        if (size)
                buf[0] = '\0';
        for (size_t i = 0; i < sc->n_columns; i++) {
                const struct scenario_column *c = &sc->columns[i];
                enum md_type t = sc->components[c->comp].fmu->md->vars[c->var].type;

                if (!is_text(t))
                        continue;
                cut = mat4_list_add(buf, size, cut, c->name);
                n++;
        }
        return n;
}

void run_mat4_note(char *buf, size_t size, const char *file, size_t n, const char *names)
{
        snprintf(buf, size, "%s%s%s%zu String or Binary column%s left out (a .mat file holds "
                 "numbers only; a .csv file has them): %s", file ? "'" : "", file ? file : "",
                 file ? "': " : "", n, n == 1 ? "" : "s", names);
}
