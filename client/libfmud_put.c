/*
 * libfmud_put: fmud_put_file() (fmud.h), a file into the daemon's upload
 * store through put requests (PROTOCOL.md, put).
 *
 * DESIGN: the file is opened once and only that descriptor is read: hashed
 * first (the name of the upload), then a probe (a put without data) asks
 * what the daemon has, so an upload that broke off resumes where the
 * daemon's partial file ends and content the daemon has is not sent again;
 * then chunks of PROTO_PUT_CHUNK bytes from there. A file that changes
 * meanwhile ends in the daemon's SHA-256 refusal, never in a wrong upload.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmi/sha256.h"
#include "libfmud_int.h"

#define ERRLEN 160

static int put_one(struct fmud *c, const struct proto_put *a, struct proto_put_result *ret)
{
        const struct pv *v;
        char err[ERRLEN];
        uint64_t id = fmud_begin(c);
        int r;

        proto_put_encode(&c->w, id, a);
        r = fmud_call(c, id, "put", &v);
        if (r < 0)
                return r;
        if (proto_put_result_decode(v, ret, err, sizeof(err)) < 0)
                return fmud_bad_result(c, "put", err);
        if (ret->offset > a->size)
                return fmud_bad_result(c, "put", "result.offset: past the file's size");
        return 0;
}

int fmud_put_file(struct fmud *c, const char *path, const char *kind,
                  char ret_sha256[FMUD_SHA256_HEX + 1], uint64_t *ret_sent)
{
        char hex[SHA256_HEX_LEN + 1];
        struct proto_put_result res;
        struct proto_put a = { 0 };
        unsigned char *buf = NULL;
        uint64_t sent = 0;
        struct stat st;
        ssize_t n;
        int fd, r;

        if (!path)
                return fmud_missing(c, "put", "the path");
        if (!c)
                return -EINVAL;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return fmud_fail(c, -errno, "put '%s': %s", path, strerror(errno));
        if (fstat(fd, &st) < 0) {
                r = fmud_fail(c, -errno, "put '%s': %s", path, strerror(errno));
                goto out_close;
        }
        if (!S_ISREG(st.st_mode)) {
                r = fmud_fail(c, -EINVAL, "put '%s': not a regular file", path);
                goto out_close;
        }
        r = sha256_fd(fd, hex);
        if (r < 0) {
                r = fmud_fail(c, r, "put '%s': %s", path, strerror(-r));
                goto out_close;
        }
        buf = malloc(PROTO_PUT_CHUNK);
        if (!buf) {
                r = fmud_fail(c, -ENOMEM, "put: out of memory");
                goto out_close;
        }
        a.sha256 = (struct proto_str){ hex, SHA256_HEX_LEN };
        a.size = (uint64_t)st.st_size;
        a.kind = (struct proto_str){ kind ? kind : "", kind ? (uint32_t)strlen(kind) : 0 };
        r = put_one(c, &a, &res);
        while (r == 0 && !res.have) {
                n = pread(fd, buf, PROTO_PUT_CHUNK, (off_t)res.offset);
                if (n < 0 || (n == 0 && res.offset < a.size)) {
                        r = fmud_fail(c, n < 0 ? -errno : -EIO, "put '%s': %s", path,
                                      n < 0 ? strerror(errno) : "the file got shorter");
                        break;
                }
                if ((uint64_t)n > a.size - res.offset)
                        n = (ssize_t)(a.size - res.offset);
                a.offset = res.offset;
                a.data = buf;
                a.len = (uint32_t)n;
                r = put_one(c, &a, &res);
                if (r == 0)
                        sent += (uint64_t)n;
                /* No progress: the daemon answers the same offset for ever. */
                if (r == 0 && !res.have && res.offset <= a.offset)
                        r = fmud_fail(c, -EPROTO, "put '%s': the daemon took nothing at %llu",
                                      path, (unsigned long long)a.offset);
        }
        if (r == 0) {
                if (ret_sha256)
                        memcpy(ret_sha256, hex, SHA256_HEX_LEN + 1);
                if (ret_sent)
                        *ret_sent = sent;
        }
        free(buf);
out_close:
        close(fd);
        return r;
}
