/*
 * ops_snapio: snapshot-export and snapshot-import's arguments
 * (PROTOCOL.md "snapshot-export", "snapshot-import").
 *
 * DESIGN: a snapshot's file (daemon/snap_blob.h) can hold many FMU states
 * of up to 1 MiB each, more than one message carries, so it travels as
 * results' file does: export answers a piece by offset (at most
 * PROTO_RESULTS_CHUNK bytes, the same result and its decoder, format
 * "fmudsnap"), and import names a complete upload by its SHA-256, put as
 * any load's content is, so both directions resume and stay bounded with
 * no transport of their own.
 */
#include "proto/proto.h"
#include "proto/proto_int.h"

static const struct field export_fields[] = {
        FIELD("session", FT_U64, 0, struct proto_snapshot_export, t.session),
        FIELD("generation", FT_U64, 0, struct proto_snapshot_export, t.generation),
        FIELD("snapshot", FT_U64, FF_REQ, struct proto_snapshot_export, snapshot),
        FIELD("offset", FT_U64, FF_REQ, struct proto_snapshot_export, offset),
        FIELD_HAS("max", FT_U64, 0, struct proto_snapshot_export, max, has_max),
};

void proto_snapshot_export_encode(struct pw *w, uint64_t id, const struct proto_snapshot_export *a)
{
        req_encode(w, id, PROTO_OP_SNAPSHOT_EXPORT, export_fields, N_FIELDS(export_fields), a, 0);
}

int proto_snapshot_export_decode(const struct pv *args, struct proto_snapshot_export *ret,
                                 char *err, size_t errlen)
{
        struct proto_snapshot_export a = { 0 };
        int r;

        r = req_decode(args, export_fields, N_FIELDS(export_fields), &a, err, errlen);
        if (r < 0)
                return r;
        if (a.has_max && (a.max < 1 || a.max > PROTO_RESULTS_CHUNK))
                return proto_fail(err, errlen, "args.max: %llu is not 1 to %u bytes",
                                  (unsigned long long)a.max, PROTO_RESULTS_CHUNK);
        *ret = a;
        return 0;
}

static const struct field import_fields[] = {
        FIELD("session", FT_U64, 0, struct proto_snapshot_import, t.session),
        FIELD("generation", FT_U64, 0, struct proto_snapshot_import, t.generation),
        FIELD("content", FT_STR, FF_REQ | FF_NAME, struct proto_snapshot_import, content),
};

void proto_snapshot_import_encode(struct pw *w, uint64_t id, const struct proto_snapshot_import *a)
{
        req_encode(w, id, PROTO_OP_SNAPSHOT_IMPORT, import_fields, N_FIELDS(import_fields), a, 0);
}

int proto_snapshot_import_decode(const struct pv *args, struct proto_snapshot_import *ret,
                                 char *err, size_t errlen)
{
        struct proto_snapshot_import a = { 0 };
        int r;

        r = req_decode(args, import_fields, N_FIELDS(import_fields), &a, err, errlen);
        if (r < 0)
                return r;
        if (!proto_sha256_valid(a.content))
                return proto_fail(err, errlen, "args.content: expected a SHA-256, 64 lowercase "
                                  "hex digits");
        *ret = a;
        return 0;
}
