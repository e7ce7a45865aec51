/* numfmt_ref: the previous Float64/Float32 formatter, as a test reference (numfmt_ref.c). */
#ifndef FMUD_TESTS_NUMFMT_REF_H
#define FMUD_TESTS_NUMFMT_REF_H

#include <stddef.h>

size_t numfmt_ref_f64(char *dst, double v);
size_t numfmt_ref_f32(char *dst, float v);

#endif
