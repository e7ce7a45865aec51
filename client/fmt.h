/*
 * fmt: numbers and values of an FMU as text, the same way in every output
 * (tables and JSON): floats as the shortest decimal that reads back to the
 * same value, in the C locale.
 */
#ifndef FMUD_CLIENT_FMT_H
#define FMUD_CLIENT_FMT_H

#include <stddef.h>

#include "fmi/model_description.h"

#define FMT_NUM_MAX 48

/* Shortest round-trip text of d ("INF", "-INF", "NaN" for non-finite). */
const char *fmt_double(char buf[FMT_NUM_MAX], double d);
/* Same for a value that the FMU holds as a float. */
const char *fmt_float(char buf[FMT_NUM_MAX], float f);

/*
 * Element i of a value list of type t as text (Binary as hex). Returns buf,
 * or a borrowed pointer to the string itself for MD_STRING.
 */
const char *fmt_value(char *buf, size_t size, enum md_type t, const struct md_values *v, size_t i);

#endif
