/*
 * test_scenario_fixture: scenario folders staged at test time. A fixture
 * .ssd from tests/ssp/ is copied in as SystemStructure.ssd, with the test
 * FMUs in resources/, into a fresh temporary folder; a second temporary
 * folder is the cache. Every scenario test uses these.
 */
#ifndef FMUD_TESTS_SCENARIO_FIXTURE_H
#define FMUD_TESTS_SCENARIO_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/scenario/scenario.h"

struct sx {
        char *dir;                      /* the staged scenario folder */
        char *cache;                    /* the cache given to scenario_load() */
        char *ssd;                      /* dir/SystemStructure.ssd */
        char *listing;                  /* dir's files before the load */
        struct scenario_opts opts;
        struct diag_list diags;
        struct scenario *s;
};

/*
 * Stage tests/ssp/<fixture> (NULL: an empty folder) with the test FMUs in
 * resources/ and the files named in extra (NULL-terminated, relative to
 * the fixture's folder) beside it. Aborts the test on failure.
 */
void sx_stage(struct sx *x, const char *fixture, const char *const *extra);

/* Load path (NULL: the staged SystemStructure.ssd); returns scenario_load()'s result. */
int sx_load(struct sx *x, const char *path, const struct scenario_overrides *ov);

/* Free the scenario, the diagnostics and both folders. */
void sx_fini(struct sx *x);

/* Whether one formatted diagnostic contains a (and b, when not NULL). */
bool sx_has(const struct sx *x, const char *a, const char *b);

/* Print every diagnostic (for a failing test). */
void sx_dump(const struct sx *x);

/*
 * Nothing was left behind: the staged folder holds exactly the files it
 * held before the load, and the cache holds no temporary file (a name
 * starting with '.'), at any depth.
 */
bool sx_clean(const struct sx *x);

/* The variable index of name in component c of the loaded scenario (-1: none). */
long sx_var(const struct sx *x, size_t c, const char *name);

/* The component index of name (aborts when missing). */
size_t sx_comp(const struct sx *x, const char *name);

/* The connection feeding component input "comp.var", or NULL. */
const struct scenario_connection *sx_conn_to(const struct sx *x, const char *comp,
                                             const char *var);

/* The start value given to "comp.var", or NULL. */
const struct scenario_start *sx_start(const struct sx *x, const char *comp, const char *var);

/* Copy a file (aborts on failure). */
void sx_copy(const char *from, const char *to);

/* Write text to dir/name, creating folders (aborts on failure). */
void sx_write(const char *dir, const char *name, const char *text);

/* A recursive, sorted listing of dir's files ("a\nb/c\n"); caller frees. */
char *sx_listing(const char *dir);

#endif
