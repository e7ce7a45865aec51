/*
 * proto_int: what the files of proto/ share and nobody else sees.
 *
 * DESIGN: an operation's plain keys are described once, in a table of
 * struct field (key, type, checks, where in the C struct), and one pair
 * of functions encodes and decodes every table, so the spelling, the
 * type and the default of a key cannot drift apart between the encoder
 * and the decoder. Keys that carry arrays or nested maps are FT_EXT: the
 * table only declares them (so the unknown-key check accepts them) and
 * the operation's own code handles them.
 */
#ifndef FMUD_PROTO_PROTO_INT_H
#define FMUD_PROTO_PROTO_INT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

enum ftype {
        FT_U64,         /* uint64_t */
        FT_U32,         /* uint32_t */
        FT_I64,         /* int64_t */
        FT_F64,         /* double; msgpack ints accepted when exact */
        FT_STR,         /* struct proto_str */
        FT_STATE,       /* enum proto_state, as its name */
        FT_LSTATE,      /* enum proto_layer_state, as its name */
        FT_BOOL,        /* bool; with FF_OMIT left out when false */
        FT_EXT,         /* declared only: handled by the operation */
};

#define FF_REQ          (1u << 0)       /* decode: must be present */
#define FF_NAME         (1u << 1)       /* string: no embedded NUL */
#define FF_PATH         (1u << 2)       /* string: no embedded NUL, absolute unless empty */
#define FF_NOTNAN       (1u << 3)       /* number: not NaN */
#define FF_FINITE       (1u << 4)       /* number: neither NaN nor infinite */
#define FF_NONNEG       (1u << 5)       /* number: >= 0 */
#define FF_OMIT         (1u << 6)       /* encode: left out when empty or its has_* is false */

#define NO_HAS          SIZE_MAX

struct field {
        const char *key;
        enum ftype type;
        unsigned flags;
        size_t off;             /* of the member in the operation's struct */
        size_t has;             /* of its bool has_*, or NO_HAS */
};

#define FIELD(k, t, fl, st, m)          { (k), (t), (fl), offsetof(st, m), NO_HAS }
#define FIELD_HAS(k, t, fl, st, m, h) \
        { (k), (t), (fl) | FF_OMIT, offsetof(st, m), offsetof(st, h) }
#define FIELD_EXT(k)                    { (k), FT_EXT, 0, 0, NO_HAS }
#define N_FIELDS(a)                     (sizeof(a) / sizeof((a)[0]))

/*
 * Status's lateness keys and instance keys (ops_status.c), shared with
 * telemetry (ops_telemetry.c), which sends the first
 * PROTO_N_LIVE_INST_FIELDS instance keys: those that change while a
 * session runs.
 */
#define PROTO_N_LATENESS_FIELDS         4
#define PROTO_N_INST_FIELDS             19
#define PROTO_N_LIVE_INST_FIELDS        5
extern const struct field status_lateness_fields[PROTO_N_LATENESS_FIELDS];
extern const struct field status_inst_fields[PROTO_N_INST_FIELDS];

/* Format into err (may be NULL) and return -EBADMSG. */
int proto_fail(char *err, size_t errlen, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* s[0..len) quoted for an error text: non-printable bytes as \xNN, cut after 64 bytes. */
void proto_quote(char *dst, size_t dstlen, const char *s, size_t len);

/*
 * Decode map's plain keys into base by the table. strict: a key the table
 * does not declare is refused (requests); otherwise ignored (results).
 * what prefixes the error text ("args", "result.instances[2]").
 * Missing optional keys leave base untouched (the caller's defaults);
 * missing strings read as empty. Returns 0 or -EBADMSG.
 */
int fields_decode(const struct pv *map, const char *what, const struct field *f, size_t n,
                  void *base, bool strict, char *err, size_t errlen);
/* A whole request: the envelope, then f's pairs; n_ext more pairs follow from the caller. */
void req_encode(struct pw *w, uint64_t id, enum proto_op op, const struct field *f, size_t n,
                const void *base, uint32_t n_ext);
/* fields_decode() of args, strict. */
int req_decode(const struct pv *args, const struct field *f, size_t n, void *base, char *err,
               size_t errlen);
/* A result map: f's pairs and n_ext more from the caller; its decoder ignores unknown keys. */
void res_encode(struct pw *w, const struct field *f, size_t n, const void *base, uint32_t n_ext);
int res_decode(const struct pv *v, const char *what, const struct field *f, size_t n, void *base,
               char *err, size_t errlen);

/* Pairs fields_encode() writes for base: the caller's map header counts them. */
uint32_t fields_count(const struct field *f, size_t n, const void *base);
void fields_encode(struct pw *w, const struct field *f, size_t n, const void *base);

/* A string as proto_str: NULL pointer never, "" when empty. */
struct proto_str proto_str_of(const struct pv *v);

/* Encode a proto_str (empty for a NULL pointer). */
void pw_pstr(struct pw *w, struct proto_str s);

/*
 * A key's array of strings: checks it is an array of at most max strings
 * (each without embedded NUL) and returns its count; -EBADMSG otherwise.
 * Absent: 0.
 */
int strs_check(const struct pv *v, const char *what, const char *key, uint32_t max, char *err,
               size_t errlen);
/* Fill out[0..n) from the array strs_check() accepted. */
void strs_fill(const struct pv *v, struct proto_str *out);
void strs_encode(struct pw *w, const char *key, const struct proto_str *s, uint32_t n);

/* Whether s spells lit exactly. */
bool pstr_is(struct proto_str s, const char *lit);

/* Whether s[0..len) has a NUL byte. */
bool has_nul(const char *s, uint32_t len);

#endif
