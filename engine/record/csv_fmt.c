/* csv_fmt: RFC 4180 text fields and hex Binary fields (contract in csv_fmt.h). */
#include "engine/record/csv_fmt.h"

#include <stdbool.h>
#include <string.h>

static bool needs_quotes(const char *s, size_t len)
{
        for (size_t i = 0; i < len; i++)
                switch (s[i]) {
                case ',':
                case '"':
                case '\r':
                case '\n':
                        return true;
                default:
                        break;
                }
        return false;
}

size_t csv_fmt_text(char *dst, const char *s, size_t len)
{
        char *p = dst;

        if (!needs_quotes(s, len)) {
                memcpy(dst, s, len);
                return len;
        }
        *p++ = '"';
        for (size_t i = 0; i < len; i++) {
                if (s[i] == '"')
                        *p++ = '"';
                *p++ = s[i];
        }
        *p++ = '"';
        return (size_t)(p - dst);
}

size_t csv_fmt_hex(char *dst, const uint8_t *data, size_t size)
{
        static const char hex[] = "0123456789abcdef";

        for (size_t i = 0; i < size; i++) {
                dst[2 * i] = hex[data[i] >> 4];
                dst[2 * i + 1] = hex[data[i] & 15];
        }
        return 2 * size;
}
