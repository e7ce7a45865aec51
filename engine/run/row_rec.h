/*
 * row_rec: a master row's columns (doubles and blobs, master.h) as the
 * recorder's typed values (recorder.h), for whoever writes a session's
 * rows to a results file (run.c, the daemon's sessions).
 *
 * DESIGN: the master widens every numeric column to a double, which holds
 * every value of every FMI type exactly except Int64 and UInt64 beyond
 * 2^53; those come from the row's 64-bit copy instead, so every value
 * is written exactly.
 */
#ifndef FMUD_ENGINE_ROW_REC_H
#define FMUD_ENGINE_ROW_REC_H

#include "engine/master/master.h"
#include "engine/record/recorder.h"
#include "fmi/model_description.h"

/* The recorder type of a column of FMI type t (Enumeration as Int64, Clock as Boolean). */
enum rec_type row_rec_type(enum md_type t);
/*
 * Column col of row as a value of type t: Int64 and UInt64 exactly (the
 * row's bits), the others from its double (a NaN integer as 0), String
 * and Binary from its blob.
 */
void row_rec_cell(union rec_value *v, enum rec_type t, const struct master_row *row, size_t col);
/*
 * Hand row to rec: all Float64 (the usual case) straight from the row's
 * doubles, else cell by cell through vals (one per column, of the types
 * in types). Returns what rec_sample() returns.
 */
int row_rec_sample(struct rec *rec, const enum rec_type *types, union rec_value *vals,
                   const struct master_row *row);
/*
 * What a results file that could not be finished says, into buf:
 * "writing 'PATH' failed: REASON (ENAME); the file holds N rows, the last
 * at t = T" (or "no rows"), from the recorder's error err and its stats.
 */
void row_rec_failure(char *buf, size_t size, const char *path, int err, const struct rec_stats *st);

#endif
