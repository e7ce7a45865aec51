/*
 * archive_path: the rules for one zip entry name, and its normal form.
 *
 * DESIGN: a name is taken as raw bytes (it may hold NULs, which libzip hides)
 * and checked strictly: an FMU's names are canonical relative paths with '/'
 * separators (FMI 3.0 section 2.5, ZIP APPNOTE 4.4.17), so anything else is
 * refused rather than repaired. The normal form (no '.', no empty
 * components, '..' resolved, no trailing '/') is what duplicates are
 * compared on and what the unpacker creates.
 */
#ifndef FMUD_FMI_ARCHIVE_PATH_H
#define FMUD_FMI_ARCHIVE_PATH_H

#include <stdbool.h>
#include <stddef.h>

/* One bit per broken rule. */
enum {
        ARPATH_EMPTY            = 1u << 0,      /* "" */
        ARPATH_ABSOLUTE         = 1u << 1,      /* leading '/' or '\' */
        ARPATH_DRIVE            = 1u << 2,      /* "C:..." */
        ARPATH_BACKSLASH        = 1u << 3,      /* any '\' */
        ARPATH_DOTDOT           = 1u << 4,      /* a ".." component */
        ARPATH_ESCAPES          = 1u << 5,      /* ".." climbs above the root */
        ARPATH_DOT              = 1u << 6,      /* a "." component */
        ARPATH_EMPTY_COMPONENT  = 1u << 7,      /* "a//b", "a//" */
        ARPATH_ROOT             = 1u << 8,      /* normalises to the root: "./", "a/.." */
        ARPATH_NUL              = 1u << 9,      /* a NUL byte */
        ARPATH_CONTROL          = 1u << 10,     /* 0x01-0x1f or 0x7f */
        ARPATH_TOO_LONG         = 1u << 11,     /* longer than the limit */
        ARPATH_COMPONENT_LONG   = 1u << 12,     /* one component over NAME_MAX */
        ARPATH_NRULES           = 13,
};

/*
 * Check the raw name (len bytes, NULs allowed) against every rule and return
 * the set of broken rules (0: acceptable). max_len is the longest allowed
 * name. *ret_is_dir is always set: whether the name ends in '/'. When the result is
 * 0 and ret_norm is not NULL, *ret_norm is the normal form (caller frees);
 * it is never set otherwise. Returns -ENOMEM when it cannot allocate.
 */
int arpath_check(const char *raw, size_t len, size_t max_len, bool *ret_is_dir, char **ret_norm);

/* The rule behind one ARPATH_* bit, as a sentence for a diagnostic. */
const char *arpath_rule(unsigned bit);

/*
 * A printable copy of raw for messages: printable ASCII stays, '\\' and '\''
 * are escaped with a backslash, every other byte becomes \xNN; names over
 * 256 bytes are cut and end in "...". Returns NULL only for OOM.
 */
char *arpath_escape(const char *raw, size_t len);

#endif
