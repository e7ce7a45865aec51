/*
 * mat4_csv: a results CSV (recorder.h's format) turned into a MAT v4 file
 * (mat4.h) as its bytes come, in pieces cut anywhere (mat4_csv.c).
 */
#ifndef FMUD_ENGINE_MAT4_CSV_H
#define FMUD_ENGINE_MAT4_CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine/record/mat4.h"

struct mat4_csv;

/* Whether path names a .mat file (a results file's format is chosen by its extension). */
bool mat4_wanted(const char *path);

/*
 * Convert to fd, a file open for writing, which is truncated and written
 * (mat4_open()) only once a header is read that gives it something to
 * hold: a CSV refused at its header leaves fd's file as it was. meta: n_meta variables whose unit,
 * description and parameter flag the columns of the same name take, an
 * array's element columns ("x[2]", "x[1,3]") those of the array ("x")
 * where no column of their own name is listed (NULL: none, every column
 * time-varying without a description). A column whose variable is text
 * (String or Binary) is left out of the file: a .mat file holds numbers
 * only. The array is copied, not its strings: they must stay valid until
 * mat4_csv_finish(). 0 and *ret, or -errno.
 */
int mat4_csv_new(int fd, const struct mat4_var *meta, size_t n_meta, struct mat4_csv **ret);

/* What a .mat file of text columns only is told. */
#define MAT4_ALL_TEXT   "nothing to write: every recorded column is a String or Binary, " \
                        "which a .mat file cannot hold (a .csv file can); record numbers " \
                        "with --record NAME"

/*
 * The next len bytes of the CSV. 0, or -errno with why in err: -EBADMSG
 * for text that is not the recorder's CSV or a value that is not a number
 * (a .mat file holds numbers only), -ENODATA for a header whose columns
 * are all text (MAT4_ALL_TEXT), -E2BIG for a line over 64 MiB, the write
 * error. After an error, every call returns it.
 */
int mat4_csv_feed(struct mat4_csv *c, const void *data, size_t len, char *err, size_t errlen);

/* A list of names the size of a line of a warning, and what cuts it short. */
#define MAT4_LIST_MAX   320
/*
 * Append name to the ", "-joined list in buf (size bytes, NUL-terminated)
 * while it fits with room for ", ..." after it; else end the list with
 * "..." once. cut: the list was cut before (nothing is added). Returns
 * whether it is cut now.
 */
bool mat4_list_add(char *buf, size_t size, bool cut, const char *name);

/*
 * The columns left out as text, once the header is read: how many, and
 * their names in buf as mat4_list_add() joins them in MAT4_LIST_MAX bytes
 * (buf of that size holds them all; buf may be NULL when size is 0).
 */
size_t mat4_csv_left_out(const struct mat4_csv *c, char *buf, size_t size);

/*
 * The end of the CSV: the file is finished (mat4_close()) and c freed,
 * whatever happens. 0 and *ret_rows (may be NULL), or -errno with why in
 * err (a last line without its newline is taken; no header at all is
 * -EBADMSG). mat4_csv_finish(NULL, ...) returns 0.
 */
int mat4_csv_finish(struct mat4_csv *c, uint64_t *ret_rows, char *err, size_t errlen);

/*
 * The whole CSV in in_fd, read from offset from on (pread(): in_fd's own
 * offset is left alone), converted to out_fd as above, in bounded memory.
 * out_fd stays open. 0, or -errno with why in err.
 */
int mat4_csv_convert_fd(int in_fd, off_t from, int out_fd, const struct mat4_var *meta,
                        size_t n_meta, char *err, size_t errlen);

#endif
