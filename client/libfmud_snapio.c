/*
 * libfmud_snapio: a snapshot exported to a file and imported from one
 * (fmud.h, PROTOCOL.md "snapshot-export" and "snapshot-import").
 *
 * DESIGN: export reads the snapshot's file a piece at a time, as
 * fmud_results_read() reads results, into a new file that replaces path
 * only once it is whole (a temporary file beside it, renamed), so a broken
 * export leaves no partial snapshot behind. Import puts the file into the
 * daemon's upload store (fmud_put_file()) and names it by its SHA-256.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libfmud_int.h"

#define ERRLEN 160

int fmud_snapshot_export_read(struct fmud *c, const struct proto_target *t, uint64_t snapshot,
                              uint64_t offset, void *buf, size_t max, struct fmud_results *ret)
{
        struct proto_snapshot_export a = { .snapshot = snapshot, .offset = offset,
                                           .has_max = true };
        struct proto_results_result res;
        const struct pv *v;
        char err[ERRLEN];
        uint64_t id;
        int r;

        if (!t || !buf || !ret)
                return fmud_missing(c, "snapshot-export", !t ? "the target" : !buf ?
                                    "the buffer" : "the result's place");
        if (!c)
                return -EINVAL;
        if (max > PROTO_RESULTS_CHUNK)
                return fmud_fail(c, -EINVAL, "snapshot-export: more than a chunk asked for");
        a.t = *t;
        a.max = max ? max : PROTO_RESULTS_CHUNK;
        id = fmud_begin(c);
        proto_snapshot_export_encode(&c->w, id, &a);
        r = fmud_call(c, id, "snapshot-export", &v);
        if (r < 0)
                return r;
        if (proto_results_result_decode(v, a.max, &res, err, sizeof(err)) < 0)
                return fmud_bad_result(c, "snapshot-export", err);
        if (res.offset != offset)
                return fmud_bad_result(c, "snapshot-export", "the data is not at the offset asked");
        if (res.len)
                memcpy(buf, res.data, res.len);
        *ret = (struct fmud_results){ .len = res.len, .offset = res.offset, .size = res.size,
                                      .done = res.done };
        snprintf(ret->format, sizeof(ret->format), "%.*s", (int)res.format.len, res.format.ptr);
        return 0;
}

static int write_all(int fd, const void *p, size_t n)
{
        const char *q = p;

        while (n) {
                ssize_t w = write(fd, q, n);

                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0)
                        return -errno;
                q += w;
                n -= (size_t)w;
        }
        return 0;
}

int fmud_snapshot_export(struct fmud *c, const struct proto_target *t, uint64_t snapshot,
                         const char *path)
{
        struct fmud_results res = { 0 };
        char *tmp = NULL;
        void *buf = NULL;
        uint64_t off = 0;
        int fd = -1, r = 0;

        if (!c || !t || !path)
                return fmud_missing(c, "snapshot-export", !t ? "the target" : "the path");
        buf = malloc(PROTO_RESULTS_CHUNK);
        if (!buf || asprintf(&tmp, "%s.XXXXXX", path) < 0) {
                free(buf);
                return fmud_fail(c, -ENOMEM, "snapshot-export: out of memory");
        }
        fd = mkstemp(tmp);
        if (fd < 0)
                r = fmud_fail(c, -errno, "snapshot-export: cannot create a file beside '%s': %s",
                              path, strerror(errno));
        while (r == 0 && !res.done) {
                r = fmud_snapshot_export_read(c, t, snapshot, off, buf, PROTO_RESULTS_CHUNK,
                                              &res);
                if (r == 0 && !res.done && !res.len)
                        r = fmud_fail(c, -EPROTO, "snapshot-export: an empty piece before the "
                                      "end");
                if (r == 0 && (r = write_all(fd, buf, res.len)) < 0)
                        fmud_fail(c, r, "snapshot-export: cannot write '%s': %s", tmp,
                                  strerror(-r));
                off += res.len;
        }
        if (fd >= 0 && close(fd) < 0 && r == 0)
                r = fmud_fail(c, -errno, "snapshot-export: cannot write '%s': %s", tmp,
                              strerror(errno));
        if (r == 0 && rename(tmp, path) < 0)
                r = fmud_fail(c, -errno, "snapshot-export: cannot rename '%s' to '%s': %s", tmp,
                              path, strerror(errno));
        if (r < 0 && fd >= 0)
                unlink(tmp);
        free(tmp);
        free(buf);
        return r;
}

int fmud_snapshot_import(struct fmud *c, const struct proto_target *t, const char *path,
                         uint64_t *ret_snapshot, double *ret_time)
{
        char sha[FMUD_SHA256_HEX + 1];
        struct proto_snapshot_result res;
        const struct pv *v;
        char err[ERRLEN];
        uint64_t id;
        int r;

        if (!c || !t || !path)
                return fmud_missing(c, "snapshot-import", !t ? "the target" : "the path");
        r = fmud_put_file(c, path, NULL, sha, NULL);
        if (r < 0)
                return r;
        id = fmud_begin(c);
        proto_snapshot_import_encode(&c->w, id, &(struct proto_snapshot_import){
                .t = *t, .content = { sha, FMUD_SHA256_HEX } });
        r = fmud_call(c, id, "snapshot-import", &v);
        if (r < 0)
                return r;
        if (proto_snapshot_result_decode(v, &res, err, sizeof(err)) < 0)
                return fmud_bad_result(c, "snapshot-import", err);
        if (ret_snapshot)
                *ret_snapshot = res.snapshot;
        if (ret_time)
                *ret_time = res.time;
        return 0;
}
