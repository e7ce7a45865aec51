/*
 * libfmud_snaps: a session's snapshots listed and deleted (fmud.h,
 * PROTOCOL.md "snapshots" and "snapshot-delete"), one request each, as
 * libfmud_ops.c's operations: the list stays in the reply slot (borrowed
 * until the next request).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "libfmud_int.h"

#define ERRLEN 160

int fmud_snapshots(struct fmud *c, const struct proto_target *t,
                   struct proto_snapshots_result *ret)
{
        struct proto_snapshots_result l;
        const struct pv *v;
        char err[ERRLEN];
        uint64_t id;
        int r;

        if (!c || !t || !ret)
                return fmud_missing(c, "snapshots", !t ? "the target" : "the result");
        id = fmud_begin(c);
        proto_target_encode(&c->w, id, PROTO_OP_SNAPSHOTS, t);
        r = fmud_call(c, id, "snapshots", &v);
        if (r < 0)
                return r;
        if (proto_snapshots_result_decode(v, &l, &c->reply_mem, err, sizeof(err)) < 0)
                return fmud_bad_result(c, "snapshots", err);
        *ret = l;
        return 0;
}

int fmud_snapshot_delete(struct fmud *c, const struct proto_target *t, uint64_t snapshot)
{
        const struct pv *v;
        uint64_t id;

        if (!c || !t)
                return fmud_missing(c, "snapshot-delete", "the target");
        id = fmud_begin(c);
        proto_snapshot_delete_encode(&c->w, id, &(struct proto_restore){ .t = *t,
                                                                          .snapshot = snapshot });
        return fmud_call(c, id, "snapshot-delete", &v);
}
