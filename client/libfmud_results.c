/*
 * libfmud_results: a session's results file read through the daemon, a
 * piece at a time (fmud.h fmud_results_read(), PROTOCOL.md "results").
 *
 * DESIGN: the piece is copied out of the reply into the caller's buffer,
 * so that a caller (fmuctl, the Python client) streams a file of any size
 * through one fixed buffer and keeps nothing of the reply slot. The
 * decoder has already checked the piece against what was asked.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "libfmud_int.h"

int fmud_results_read(struct fmud *c, const struct proto_target *t, uint64_t offset, void *buf,
                      size_t max, struct fmud_results *ret)
{
        struct proto_results a = { .offset = offset, .has_max = true };
        struct proto_results_result res;
        const struct pv *v;
        char err[160];
        uint64_t id;
        int r;

        if (!t)
                return fmud_missing(c, "results", "the target");
        if (!buf)
                return fmud_missing(c, "results", "the buffer");
        if (!ret)
                return fmud_missing(c, "results", "the result's place");
        if (!c)
                return -EINVAL;
        if (max > PROTO_RESULTS_CHUNK)
                return fmud_fail(c, -EINVAL, "results: more than a chunk asked for");
        a.t = *t;
        a.max = max ? max : PROTO_RESULTS_CHUNK;
        id = fmud_begin(c);
        proto_results_encode(&c->w, id, &a);
        r = fmud_call(c, id, "results", &v);
        if (r < 0)
                return r;
        if (proto_results_result_decode(v, a.max, &res, err, sizeof(err)) < 0)
                return fmud_bad_result(c, "results", err);
        if (res.offset != offset)
                return fmud_bad_result(c, "results", "the data is not at the offset asked");
        if (res.len)
                memcpy(buf, res.data, res.len);
        *ret = (struct fmud_results){ .len = res.len, .offset = res.offset, .size = res.size,
                                      .done = res.done };
        snprintf(ret->format, sizeof(ret->format), "%.*s", (int)res.format.len, res.format.ptr);
        return 0;
}
