/*
 * proto_fixture: what the proto tests share: an allocation tracker (the
 * test binary links with --wrap=malloc,calloc,realloc, so every allocation
 * proto/ makes passes through here), fault injection, and shortcuts to
 * encode a message and decode it again.
 */
#ifndef FMUD_TESTS_PROTO_FIXTURE_H
#define FMUD_TESTS_PROTO_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

/* Largest single allocation since the last alloc_reset(), and how many were made. */
extern size_t alloc_largest;
extern size_t alloc_count;
/* Allocations left before every further one fails (SIZE_MAX: never fail). */
extern size_t alloc_fail_after;
void alloc_reset(void);

/* A message under test: the bytes (owned) and their decoded doc. */
struct msg {
        void *buf;
        size_t len;
        struct pv_doc doc;
        char err[256];
};

/* Take w's bytes into m (asserting the writer had no error) and decode them with default limits. */
int msg_take(struct msg *m, struct pw *w);
/* Decode len bytes (copied) with lim (NULL: defaults). */
int msg_decode(struct msg *m, const void *bytes, size_t len, const struct proto_limits *lim);
void msg_fini(struct msg *m);

/* Decode a request message and its envelope; asserts both succeed. Returns the args. */
const struct pv *msg_req(struct msg *m, struct pw *w, enum proto_op op, uint64_t id);
/* Decode a reply message carrying one result; asserts success. Returns the result. */
const struct pv *msg_result(struct msg *m, struct pw *w);

/* Whether s[0..len) equals the C string lit. */
int str_eq(struct proto_str s, const char *lit);

#endif
