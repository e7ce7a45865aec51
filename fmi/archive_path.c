/*
 * archive_path: entry-name rules and normalisation. Pure functions on bytes,
 * so the unit tests and the fuzzer reach every branch directly.
 */
#include "archive_path.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ESCAPE_MAX 256

const char *arpath_rule(unsigned bit)
{
        switch (bit) {
        case ARPATH_EMPTY:
                return "empty entry name";
        case ARPATH_ABSOLUTE:
                return "absolute entry name (leading '/' or '\\'): names are relative to the archive root (FMI 3.0 section 2.5)";
        case ARPATH_DRIVE:
                return "absolute entry name (drive letter): names are relative to the archive root (FMI 3.0 section 2.5)";
        case ARPATH_BACKSLASH:
                return "backslash in entry name: only '/' separates components (FMI 3.0 section 2.5)";
        case ARPATH_DOTDOT:
                return "'..' component in entry name";
        case ARPATH_ESCAPES:
                return "entry name escapes the archive root after normalisation";
        case ARPATH_DOT:
                return "'.' component in entry name";
        case ARPATH_EMPTY_COMPONENT:
                return "empty component in entry name";
        case ARPATH_ROOT:
                return "entry name refers to the archive root itself after normalisation";
        case ARPATH_NUL:
                return "NUL byte in entry name";
        case ARPATH_CONTROL:
                return "control character in entry name";
        case ARPATH_TOO_LONG:
                return "entry name longer than the limit";
        case ARPATH_COMPONENT_LONG:
                return "entry name component longer than 255 bytes";
        }
        return "unknown entry name rule";
}

static unsigned check_bytes(const char *raw, size_t len)
{
        unsigned bad = 0;

        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)raw[i];

                if (c == '\0')
                        bad |= ARPATH_NUL;
                else if (c < 0x20 || c == 0x7f)
                        bad |= ARPATH_CONTROL;
                else if (c == '\\')
                        bad |= ARPATH_BACKSLASH;
        }
        if (raw[0] == '/' || raw[0] == '\\')
                bad |= ARPATH_ABSOLUTE;
        /* Any letter-colon start: "C:x" is drive-relative, "C:\x" absolute. */
        if (len >= 2 && raw[1] == ':' &&
            ((raw[0] >= 'A' && raw[0] <= 'Z') || (raw[0] >= 'a' && raw[0] <= 'z')))
                bad |= ARPATH_DRIVE;
        return bad;
}

/*
 * Walk the '/'-separated components into norm (capacity len + 1), resolving
 * "." and ".." the way a file system would, and record what was seen. Each
 * component's start in norm is kept on a stack so ".." can pop it.
 */
static unsigned normalise(const char *raw, size_t len, bool is_dir, char *norm, size_t *starts)
{
        size_t end = is_dir ? len - 1 : len, depth = 0, out = 0, i = 0;
        unsigned bad = 0;

        if (raw[0] == '/')
                i = 1;  /* already reported as absolute; normalise the rest */
        while (i <= end) {
                const char *c = raw + i;
                const char *slash = memchr(c, '/', end - i);
                size_t n = slash ? (size_t)(slash - c) : end - i;

                if (n == 0) {
                        if (end > 0)
                                bad |= ARPATH_EMPTY_COMPONENT;
                } else if (n == 1 && c[0] == '.') {
                        bad |= ARPATH_DOT;
                } else if (n == 2 && c[0] == '.' && c[1] == '.') {
                        bad |= ARPATH_DOTDOT;
                        if (depth == 0)
                                bad |= ARPATH_ESCAPES;
                        else
                                out = starts[--depth];
                } else {
                        if (n > NAME_MAX)
                                bad |= ARPATH_COMPONENT_LONG;
                        starts[depth++] = out;
                        if (out > 0)
                                norm[out++] = '/';
                        memcpy(norm + out, c, n);
                        out += n;
                }
                i += n + 1;
        }
        norm[out] = '\0';
        if (out == 0)
                bad |= ARPATH_ROOT;
        return bad;
}

int arpath_check(const char *raw, size_t len, size_t max_len, bool *ret_is_dir, char **ret_norm)
{
        bool is_dir;
        size_t *starts;
        char *norm;
        unsigned bad;

        *ret_is_dir = false;
        if (len == 0)
                return ARPATH_EMPTY;
        is_dir = raw[len - 1] == '/';
        *ret_is_dir = is_dir;
        bad = check_bytes(raw, len);
        if (len > max_len)
                bad |= ARPATH_TOO_LONG;

        norm = malloc(len + 1);
        /* At most one component per two bytes ("a/b/c"), plus one. */
        starts = malloc((len / 2 + 2) * sizeof(*starts));
        if (!norm || !starts) {
                free(norm);
                free(starts);
                return -ENOMEM;
        }
        bad |= normalise(raw, len, is_dir, norm, starts);
        free(starts);
        if (bad || !ret_norm)
                free(norm);
        else
                *ret_norm = norm;
        return (int)bad;
}

char *arpath_escape(const char *raw, size_t len)
{
        size_t n = len > ESCAPE_MAX ? ESCAPE_MAX : len, o = 0;
        char *s = malloc(4 * n + sizeof("..."));

        if (!s)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)raw[i];

                if (c == '\\' || c == '\'') {
                        s[o++] = '\\';
                        s[o++] = (char)c;
                } else if (c >= 0x20 && c < 0x7f) {
                        s[o++] = (char)c;
                } else {
                        o += (size_t)sprintf(s + o, "\\x%02x", c);
                }
        }
        if (n < len) {
                memcpy(s + o, "...", 3);
                o += 3;
        }
        s[o] = '\0';
        return s;
}
