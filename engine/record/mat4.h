/*
 * mat4: results as a MAT v4 file in the Dymola/OpenModelica result layout
 * ("binTrans"), written row by row with bounded memory (mat4.c).
 *
 * File format (every matrix a MAT v4 header: type, rows, columns, imagf,
 * name length; its name; its data column after column):
 * - Aclass: text, 4 rows "Atrajectory", "1.1", "", "binTrans" (padded
 *   with blanks).
 * - name: text, one column per variable (time first), NUL-padded: the
 *   "binTrans" layout, each name contiguous.
 * - description: text, likewise: the variable's description, then its
 *   unit in brackets when it has one ("Position [m]", "[m]"), as Dymola
 *   writes them; time's is "Time in [s]".
 * - dataInfo: int32, 4 rows, one column per variable: {0, 1, 0, -1} for
 *   time; {1, k, 0, 0} for a parameter or constant, its value in column k
 *   of data_1; {2, k, 0, -1} for a time-varying variable, in column k of
 *   data_2 (k counts from 1; column 1 is time in both).
 * - data_1: double, (1 + parameters) rows, 2 columns: the first and last
 *   time, each with every parameter's value (from the first row).
 * - data_2: double, (1 + time-varying) rows, one column per row of the
 *   results: time, then the values. Streamed: each row is appended as it
 *   comes; the column count in data_2's header and the last time in
 *   data_1 are written at mat4_close() (pwrite).
 * Byte order: the machine's (the type's M digit says which).
 *
 * Threads: one writer at a time.
 */
#ifndef FMUD_ENGINE_MAT4_H
#define FMUD_ENGINE_MAT4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mat4_var {
        const char *name;               /* required, as the CSV column names it */
        const char *description;        /* NULL or "": none */
        const char *unit;               /* NULL or "": none */
        bool parameter;                 /* a parameter or constant: data_1 */
        bool text;                      /* String or Binary: not in the file (mat4_csv.h) */
};

struct mat4;

/*
 * Start a result file on fd, a regular file open for writing (written
 * from offset 0 with pwrite(); the caller truncates it first). vars: the n
 * variables after time, in the order mat4_row() gives their values.
 * Writes every matrix up to data_2's header. Does not take fd. 0 and
 * *ret, or -errno (-EINVAL: a NULL name or n too large; the write error).
 */
int mat4_open(int fd, const struct mat4_var *vars, size_t n, struct mat4 **ret);

/* One row: time and the n values in vars' order. 0 or -errno (the first error, kept). */
int mat4_row(struct mat4 *m, double time, const double *values);

/*
 * Write what is buffered, the column count and the last time, then free
 * m (not closing fd). Returns 0 or the first error as -errno; how many
 * rows went in: *ret_rows when not NULL. mat4_close(NULL) returns 0.
 */
int mat4_close(struct mat4 *m, uint64_t *ret_rows);

#endif
