/*
 * decode_int: the decoder's state and its header reader (decode.c), shared
 * with the raw peek at a request's id (req_id.c) and nobody else.
 */
#ifndef FMUD_PROTO_DECODE_INT_H
#define FMUD_PROTO_DECODE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

struct head {
        enum pv_type type;
        size_t size;            /* bytes of the header (the whole value for scalars) */
        uint64_t n;             /* str/bin bytes, array items, map pairs */
        union {
                bool b;
                int64_t i;
                uint64_t u;
                double f;
        };
};

struct dec {
        const uint8_t *buf;
        size_t len;
        size_t max_nodes;
        unsigned max_depth;
        uint32_t max_str, max_items;
        size_t nodes, pairs;            /* pass 1: counted */
        uint64_t max_pairs;             /* the largest map */
        struct pv *pool;                /* pass 2: nodes handed out so far ... */
        size_t pool_used;
        struct pv_kv *kv;               /* ... and map pairs */
        size_t kv_used;
        const struct pv_kv **scratch;   /* the duplicate check of large maps */
        char *err;
        size_t errlen;
};

/* The big-endian unsigned integer of bytes bytes at p. */
uint64_t dec_be(const uint8_t *p, unsigned bytes);
/* Decode the header at pos: everything but a string's bytes and a container's elements. */
int dec_read_head(struct dec *d, size_t pos, struct head *h);

#endif
