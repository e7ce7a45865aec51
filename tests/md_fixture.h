/*
 * md_fixture: what the model_description tests share: the parse result
 * and diagnostics of the test in progress, parsing a fixture file or a
 * text into them, and looking at what came out.
 */
#ifndef FMUD_TESTS_MD_FIXTURE_H
#define FMUD_TESTS_MD_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>

#include "fmi/model_description.h"

/* The diagnostics and the model of the test in progress (mdx_setup() ... mdx_teardown()). */
extern struct diag_list mdx_diags;
extern struct md *mdx_md;

void mdx_setup(void);
void mdx_teardown(void);
/* A whole file, NUL-terminated (free it); fails the test when it cannot be read. */
char *mdx_slurp(const char *path, size_t *ret_len);
/* Parse a fixture under tests/ into the globals; returns md_parse()'s result. */
int mdx_parse_file(const char *rel, const struct md_limits *lim);
/* Parse text, named "test.xml", into the globals. */
int mdx_parse_text(const char *text, const struct md_limits *lim);
/* Log every diagnostic (to see why a test failed). */
void mdx_dump(void);
/* Some diagnostic (error or not) contains 'text'. */
bool mdx_has_diag(const char *text);
/* The variable named name; fails the test when there is none. */
const struct md_variable *mdx_var(const char *name);

#endif
