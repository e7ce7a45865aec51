/*
 * row_rec: a master row's columns (doubles and blobs, master.h) as the
 * recorder's typed values (recorder.h), for whoever writes a session's
 * rows to a results file (run.c, the daemon's sessions).
 *
 * DESIGN: the master widens every numeric column to a double, which holds
 * every value of every FMI type exactly except Int64 and UInt64 beyond
 * 2^53 (rounded by the master already); converting back is exact
 * otherwise. Out-of-range values saturate rather than overflow.
 */
#ifndef FMUD_DAEMON_ROW_REC_H
#define FMUD_DAEMON_ROW_REC_H

#include "daemon/master.h"
#include "daemon/recorder.h"
#include "fmi/model_description.h"

/* The recorder type of a column of FMI type t (Enumeration as Int64, Clock as Boolean). */
enum rec_type row_rec_type(enum md_type t);
/* Column value d (or blob b for String and Binary) as a value of type t; b may be NULL. */
void row_rec_value(union rec_value *v, enum rec_type t, double d, const struct master_blob *b);

#endif
