/*
 * csv_fmt: the non-numeric CSV fields of the result files (RFC 4180).
 *
 * - Text (column names, String values): written as is, unless it contains
 *   a comma, a double quote, CR or LF; then it is enclosed in double quotes
 *   and each double quote inside is doubled. An empty string is an empty
 *   field. Bytes are copied unchanged (UTF-8 passes through).
 * - Binary values: two lowercase hex digits per byte, no prefix; an empty
 *   value is an empty field.
 *
 * Every function writes into dst (no NUL terminator) and returns the number
 * of bytes written; dst must hold the matching *_max() bytes. Pure and
 * thread-safe.
 */
#ifndef FMUD_ENGINE_CSV_FMT_H
#define FMUD_ENGINE_CSV_FMT_H

#include <stddef.h>
#include <stdint.h>

/* Worst case for text of len bytes: every byte a quote, plus the enclosing pair. */
static inline size_t csv_fmt_text_max(size_t len)
{
        return 2 * len + 2;
}

static inline size_t csv_fmt_hex_max(size_t size)
{
        return 2 * size;
}

size_t csv_fmt_text(char *dst, const char *s, size_t len);
size_t csv_fmt_hex(char *dst, const uint8_t *data, size_t size);

#endif
