/*
 * req_id: proto_req_id_raw() (proto.h), the id of a request that did not
 * decode, read straight from its bytes so that the error reply can carry it.
 *
 * DESIGN: the message is walked with the decoder's header reader
 * (decode_int.h) but nothing is built: values are skipped, checked only
 * against the bytes left, so any message, however hostile, is read
 * within its length.
 */
#include <errno.h>
#include <string.h>

#include "proto/proto.h"
#include "proto/decode_int.h"

/* Bytes of the extension value at pos (which dec_read_head() refuses), or 0: not one, or truncated. */
static size_t ext_size(const struct dec *d, size_t pos)
{
        static const uint8_t fixed[] = { 1, 2, 4, 8, 16 };
        size_t left = d->len - pos;
        uint8_t c = d->buf[pos];
        unsigned fb;
        uint64_t n;

        if (c >= 0xd4 && c <= 0xd8)
                n = 2 + (uint64_t)fixed[c - 0xd4];
        else if (c >= 0xc7 && c <= 0xc9) {
                fb = 1u << (c - 0xc7);
                if (left < 2 + fb)
                        return 0;
                n = 2 + fb + dec_be(d->buf + pos + 1, fb);
        } else
                return 0;
        return n <= left ? (size_t)n : 0;
}

/*
 * Skip the value at *pos without building it: headers are checked against
 * the bytes left, nothing else (extension types are skipped too). Each
 * round reads at least one byte, so this ends within len rounds whatever
 * the counts claim.
 */
static int skip(struct dec *d, size_t *pos)
{
        uint64_t left = 1;
        struct head h;

        while (left) {
                size_t ext = *pos < d->len ? ext_size(d, *pos) : 0;

                if (ext) {
                        *pos += ext;
                        left--;
                        continue;
                }
                if (dec_read_head(d, *pos, &h) < 0)
                        return -EBADMSG;
                left--;
                *pos += h.size;
                if (h.type == PV_STR || h.type == PV_BIN) {
                        if (h.n > d->len - *pos)
                                return -EBADMSG;
                        *pos += h.n;
                } else if (h.type == PV_ARRAY || h.type == PV_MAP) {
                        uint64_t k = h.type == PV_MAP ? 2 * h.n : h.n;

                        if (k > d->len - *pos)
                                return -EBADMSG;
                        left += k;
                }
        }
        return 0;
}

uint64_t proto_req_id_raw(const void *buf, size_t len)
{
        struct dec d = { .buf = buf, .len = len };
        uint64_t id = 0;
        bool seen = false;
        size_t pos;
        struct head h;

        if (!buf || dec_read_head(&d, 0, &h) < 0 || h.type != PV_MAP)
                return 0;
        pos = h.size;
        for (uint64_t i = 0; i < h.n; i++) {
                struct head k, v;
                bool is_id;

                if (dec_read_head(&d, pos, &k) < 0)
                        break;
                is_id = k.type == PV_STR && k.n == 2 && len - pos - k.size >= 2 &&
                        !memcmp(d.buf + pos + k.size, "id", 2);
                if (skip(&d, &pos) < 0)
                        break;
                if (is_id) {
                        if (dec_read_head(&d, pos, &v) < 0 || v.type != PV_UINT ||
                            (seen && v.u != id))
                                return 0;
                        id = v.u;
                        seen = true;
                }
                if (skip(&d, &pos) < 0)
                        break;
        }
        return id;
}
