/*
 * input_csv: a CSV file that drives a scenario's unconnected inputs over
 * time (fmuctl run --input FILE.csv), read into an input_table
 * (input_table.h), as fmusim and FMPy read theirs.
 *
 * Format (docs/fmuctl.md, "Input files"): RFC 4180 CSV, records ending in
 * LF or CRLF, fields separated by ',', a field in double quotes may hold
 * ',', line breaks and '""' (one quote). The first record is the header:
 * "time", then one name per column: "instance.variable" (the bare
 * variable name when the scenario is one FMU); an array input gives one
 * column per element with FMI's 1-based indices, "x[2]", "m[1,3]", as
 * the results file names them, and every element must have a column.
 * Each further record is a row: a finite time (non-decreasing from row to
 * row), then one value per column: a decimal number for Float and
 * integer types (in the type's range), true/false/1/0 for Boolean, the
 * text for String. Binary and Clock inputs are not driven from a file.
 *
 * DESIGN: the file is untrusted. Its size, rows, columns and values are
 * bounded (struct input_csv_limits) before anything is allocated for
 * them; every refusal names the file, the line and the column (1-based,
 * in bytes) of the offending field: "in.csv:3:7: 'u': '1e999' is not a
 * finite Float64". A column must name an input of the scenario that no
 * connection feeds. Memory: 8 bytes per value plus the file itself when
 * it has String columns (their values point into it).
 *
 * Threads: no global state; any thread may read a file for a loaded
 * scenario (which must outlive nothing: the table keeps indices only).
 */
#ifndef FMUD_ENGINE_INPUT_CSV_H
#define FMUD_ENGINE_INPUT_CSV_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/master/input_table.h"
#include "engine/scenario/scenario.h"

#define INPUT_CSV_MAX_BYTES     ((size_t)64 << 20)
#define INPUT_CSV_MAX_ROWS      ((size_t)10000000)
#define INPUT_CSV_MAX_COLUMNS   ((size_t)65536)
#define INPUT_CSV_MAX_VALUES    ((size_t)1 << 25)       /* rows * columns: 256 MiB of values */

struct input_csv_limits {
        size_t max_bytes;               /* the file */
        size_t max_rows;                /* data rows, the header not counted */
        size_t max_columns;             /* input columns, time not counted */
        size_t max_values;              /* rows * columns */
};

/* The defaults above. */
void input_csv_limits_default(struct input_csv_limits *l);

/*
 * Read the input file at path for scenario sc (lim NULL: the defaults).
 * Returns 0 and *ret (free with input_table_free()), or -errno with
 * *ret_message (caller frees; may stay NULL on -ENOMEM): -EINVAL the file
 * is refused ("path:line:column: why"), -EFBIG it is larger than
 * lim->max_bytes, -ENOENT/-EACCES/... it cannot be read, -ENOMEM.
 */
int input_csv_read(const char *path, const struct scenario *sc,
                   const struct input_csv_limits *lim, struct input_table **ret,
                   char **ret_message);

/*
 * The same from an open descriptor (read from its current offset), named
 * name in messages; with quote false, a refusal says where but quotes
 * nothing of the file (it is someone else's to read).
 */
int input_csv_read_fd(int fd, const char *name, bool quote, const struct scenario *sc,
                      const struct input_csv_limits *lim, struct input_table **ret,
                      char **ret_message);

/* The same for len bytes at data, named name in messages (data need not end in NUL). */
int input_csv_parse(const char *name, const char *data, size_t len, const struct scenario *sc,
                    const struct input_csv_limits *lim, struct input_table **ret,
                    char **ret_message);

#endif
