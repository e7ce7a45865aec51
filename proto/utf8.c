/*
 * utf8: well-formed UTF-8 and the code points not to show (utf8.h).
 */
#include "proto/utf8.h"

size_t utf8_decode(const char *str, size_t n, uint32_t *ret_cp)
{
        const unsigned char *s = (const unsigned char *)str;
        unsigned char c, lo = 0x80, hi = 0xbf;
        uint32_t cp;
        size_t len;

        if (!n)
                return 0;
        c = s[0];
        if (c >= 0xc2 && c <= 0xdf) {
                len = 2;
                cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
                len = 3;
                cp = c & 0x0f;
                /* Past E0 80..9F lie overlong forms; past ED A0..BF, surrogates. */
                lo = c == 0xe0 ? 0xa0 : 0x80;
                hi = c == 0xed ? 0x9f : 0xbf;
        } else if (c >= 0xf0 && c <= 0xf4) {
                len = 4;
                cp = c & 0x07;
                /* F0 80..8F: overlong; F4 90..BF: above U+10FFFF. */
                lo = c == 0xf0 ? 0x90 : 0x80;
                hi = c == 0xf4 ? 0x8f : 0xbf;
        } else {
                return 0;
        }
        if (len > n)
                return 0;
        for (size_t i = 1; i < len; i++) {
                if (s[i] < lo || s[i] > hi)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3f);
                lo = 0x80;
                hi = 0xbf;
        }
        *ret_cp = cp;
        return len;
}

bool utf8_is_control(uint32_t cp)
{
        return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
               (cp >= 0x2066 && cp <= 0x2069);
}
