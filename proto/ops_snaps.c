/*
 * ops_snaps: what snapshots answers, the session's snapshots in brief
 * (PROTOCOL.md, "snapshots").
 *
 * DESIGN: the entries are fields of a plain table (fields.c), as list's
 * sessions are; a decoded result's entries are one allocation (*mem),
 * sized after the array's count has been checked against PROTO_MAX_ITEMS.
 * When one was taken is seconds since the epoch: finite, not negative.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "proto/proto.h"
#include "proto/proto_int.h"

static const struct field info_fields[] = {
        FIELD("snapshot", FT_U64, FF_REQ, struct proto_snapshot_info, snapshot),
        FIELD("time", FT_F64, FF_REQ, struct proto_snapshot_info, time),
        FIELD("taken", FT_F64, FF_REQ | FF_FINITE | FF_NONNEG, struct proto_snapshot_info,
              taken),
        FIELD("generation", FT_U64, FF_REQ, struct proto_snapshot_info, generation),
};

void proto_snapshots_result_encode(struct pw *w, const struct proto_snapshots_result *r)
{
        pw_map(w, 1);
        pw_str(w, "snapshots");
        pw_array(w, r->n);
        for (uint32_t i = 0; i < r->n; i++)
                res_encode(w, info_fields, N_FIELDS(info_fields), &r->snapshots[i], 0);
}

int proto_snapshots_result_decode(const struct pv *v, struct proto_snapshots_result *ret,
                                  void **mem, char *err, size_t errlen)
{
        struct proto_snapshot_info *s = NULL;
        const struct pv *a;
        char what[48];
        uint32_t n;

        *mem = NULL;
        if (!v || v->type != PV_MAP)
                return proto_fail(err, errlen, "result: expected a map");
        a = pv_get(v, "snapshots");
        if (!a)
                return proto_fail(err, errlen, "result.snapshots: missing");
        if (a->type != PV_ARRAY)
                return proto_fail(err, errlen, "result.snapshots: expected an array");
        if (a->a.n > PROTO_MAX_ITEMS)
                return proto_fail(err, errlen, "result.snapshots: more than %u entries",
                                  PROTO_MAX_ITEMS);
        n = a->a.n;
        if (n) {
                s = calloc(n, sizeof(*s));
                if (!s) {
                        proto_fail(err, errlen, "out of memory");
                        return -ENOMEM;
                }
        }
        for (uint32_t i = 0; i < n; i++) {
                int r;

                snprintf(what, sizeof(what), "result.snapshots[%u]", i);
                r = res_decode(&a->a.items[i], what, info_fields, N_FIELDS(info_fields), &s[i],
                               err, errlen);
                if (r < 0) {
                        free(s);
                        return r;
                }
        }
        *mem = s;
        *ret = (struct proto_snapshots_result){ .n = n, .snapshots = s };
        return 0;
}
