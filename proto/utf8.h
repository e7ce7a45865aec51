/*
 * utf8: the checks that text from elsewhere (an FMU's log message, a
 * daemon's reply) is well-formed UTF-8 and safe to show, shared by the
 * daemon, which cleans an FMU's messages, and the clients, which clean
 * what a daemon sends before printing it.
 */
#ifndef FMUD_PROTO_UTF8_H
#define FMUD_PROTO_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The length of the well-formed UTF-8 sequence at s, of which n bytes may
 * be read (RFC 3629: no overlong forms, no surrogates, nothing above
 * U+10FFFF), and its code point in *ret_cp; 0 when it is not one (ASCII
 * included: a caller handles those bytes itself). Any thread.
 */
size_t utf8_decode(const char *s, size_t n, uint32_t *ret_cp);

/*
 * Code points a line of text shown to a person must not carry: the C1
 * controls (U+0080..U+009F, which some terminals obey as escapes) and the
 * bidirectional embeddings, overrides and isolates (which reorder what a
 * reader sees).
 */
bool utf8_is_control(uint32_t cp);

#endif
