/*
 * input_csv_int: the reader's state, shared by engine/master/input_csv.c (fields,
 * rows, values) and engine/master/input_csv_header.c (the header resolved
 * against the scenario).
 */
#ifndef FMUD_ENGINE_INPUT_CSV_INT_H
#define FMUD_ENGINE_INPUT_CSV_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/master/input_csv.h"

struct icsv {
        const char *file;               /* for messages */
        struct input_csv_limits lim;
        char *buf;                      /* the file, NUL after its end; fields split in place */
        char *p, *end;                  /* the next byte; the end of the data */
        size_t line;                    /* the line of p, 1-based */
        char *line_start;               /* where that line starts */
        bool strings;                   /* a String value points into buf */
        bool opaque;                    /* messages must not quote the file's content */
        size_t err_line, err_col;       /* where the first refusal is */
        char msg[1024];
};

/* One field, NUL-terminated in place, and where it starts (1-based line, byte column). */
struct icsv_field {
        char *s;
        size_t line, col;
};

/* Write "file:line:col: ..." (line 0: "file: ...") to c->msg; returns -EINVAL. */
int icsv_err(struct icsv *c, size_t line, size_t col, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* The next field; *ret_last: it ended its record. 0 or -EINVAL. */
int icsv_field(struct icsv *c, struct icsv_field *f, bool *ret_last);

/* Read the header record into a new table with its columns resolved (no rows). 0 or -errno. */
int icsv_header(struct icsv *c, const struct scenario *sc, struct input_table **ret);

#endif
