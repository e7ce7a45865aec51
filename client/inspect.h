/*
 * inspect: how `fmuctl inspect` shows an imported FMU, as a table for people
 * (inspect_text.c) and as a stable JSON object for programs (inspect_json.c,
 * documented in docs/inspect-json.md).
 */
#ifndef FMUD_CLIENT_INSPECT_H
#define FMUD_CLIENT_INSPECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "fmi/diag.h"
#include "fmi/fmu.h"

/* fmu may be NULL (nothing could be read); diags holds every problem. */
void inspect_print_text(FILE *out, FILE *err, const char *path, const struct fmu *fmu,
                        const struct diag_list *diags);
/* Returns 0, or -ENOMEM. */
int inspect_print_json(FILE *out, const char *path, const struct fmu *fmu,
                       const struct diag_list *diags, bool strict);

/*
 * The problems on err: errors, then warnings, each under a heading, then a
 * summary line naming path ("N errors: <refused>", or "valid, with N
 * warnings").
 */
void inspect_print_problems(FILE *err, const char *path, const struct diag_list *diags,
                            const char *refused);
/* "problems", "errors" and "warnings" arrays into root. Returns 0 or -ENOMEM. */
struct json_object;
int inspect_put_problems(struct json_object *root, const struct diag_list *diags);

/*
 * fmuctl inspect of a system (.ssp, .ssd, a folder), loaded as the daemon
 * loads it (inspect_ssp.c). Returns the exit code.
 */
int inspect_system(const char *path, bool json, bool strict);

/* The Boolean Co-Simulation capability flags by their XML attribute names. */
struct inspect_flag {
        const char *name;
        bool value;
};

/* Fills out[] (room for INSPECT_MAX_FLAGS) and returns the count. */
#define INSPECT_MAX_FLAGS 24
size_t inspect_cosim_flags(const struct md *md, struct inspect_flag out[INSPECT_MAX_FLAGS]);

#endif
