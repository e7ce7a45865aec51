/*
 * host_content: put (the upload store, upload.h) and a load by content:
 * the uploads a load names by SHA-256 gathered, as hard links, in a
 * private directory of the session's, which the load then reads as it
 * reads a path.
 *
 * DESIGN: the load directory holds "model.<kind>" (the content), the
 * .ssd's files under their relative names (each a plain relative path,
 * upload_name_check()) and "input.csv" (inputContent). It is the only
 * directory the scenario is opened beneath, confined as any other
 * (host_load.c), so the archive checks, the links refused and the limits
 * are those of a path, on the same descriptors. Its files are the
 * daemon's own: they are opened with the daemon's identity, not the
 * client's, who sent their bytes. The directory is made and linked when
 * the load is taken (hcontent_link(), on the thread that puts), so no put
 * evicts an upload the load names before it is read; the content's kind
 * is read from its bytes there after (hcontent_prepare()), never from a
 * put. The directory goes with the session (hload_free()); while it is
 * there, its links keep the store from evicting the uploads it uses.
 */
#include "daemon/host_int.h"
#include "daemon/upload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>

/* The content's name in its load directory until its kind is known (then model.<kind>). */
#define MODEL "model"

void hcontent_put(struct host *h, uint64_t token, const struct proto_req *req,
                  const struct host_peer *peer)
{
        struct proto_put_result res;
        struct proto_put a;
        char msg[512];
        struct pw w;
        int code;

        if (proto_put_decode(req->args, &a, msg, sizeof(msg)) < 0) {
                host_reply_error(h, token, req->id, PROTO_E_BAD_REQUEST, "%s", msg);
                return;
        }
        code = upload_put(h->upload, peer && peer->user ? peer->user : "", &a, &res, msg,
                          sizeof(msg));
        if (code >= 0) {
                host_reply_error(h, token, req->id, (enum proto_err)code, "%s", msg);
                return;
        }
        if (pw_init(&w) < 0) {
                host_reply_error(h, token, req->id, PROTO_E_INTERNAL, "out of memory");
                return;
        }
        proto_reply_ok_begin(&w, req->id);
        proto_put_result_encode(&w, &res);
        host_reply_take(h, token, req->id, &w);
        pw_fini(&w);
}

static void sha_of(const struct proto_str *s, char *buf)
{
        snprintf(buf, 65, "%.*s", (int)(s->len > 64 ? 64 : s->len), s->ptr);
}

int hcontent_check(const struct proto_load *a, char *msg, size_t size)
{
        char name[4096];
        unsigned parts;

        if (a->n_files > UPLOAD_MAX_FILES) {
                snprintf(msg, size, "files: %u names, over the limit of %u", a->n_files,
                         UPLOAD_MAX_FILES);
                return PROTO_E_INVALID;
        }
        /* The names only: whether the store has each upload is linking's (hcontent_link()). */
        for (uint32_t i = 0; i < a->n_files; i++) {
                const struct proto_str *n = &a->files[i].name;

                snprintf(name, sizeof(name), "%.*s", (int)n->len, n->ptr);
                switch (n->len > UPLOAD_NAME_MAX ? UPLOAD_NAME_LONG :
                        upload_name_check(name, &parts)) {
                case UPLOAD_NAME_OK:
                        break;
                case UPLOAD_NAME_LONG:
                        snprintf(msg, size, "files: '%.40s...' is %u bytes long, over the limit "
                                 "of %u", name, n->len, UPLOAD_NAME_MAX);
                        return PROTO_E_INVALID;
                case UPLOAD_NAME_DEEP:
                        snprintf(msg, size, "files: '%s' has %u parts, over the limit of %u",
                                 name, parts, UPLOAD_NAME_PARTS);
                        return PROTO_E_INVALID;
                case UPLOAD_NAME_NOT_PLAIN:
                        snprintf(msg, size, "files: '%.200s' is not a plain relative path (none "
                                 "starts with '/'; no empty, '.' or '..' part)", name);
                        return PROTO_E_INVALID;
                }
        }
        return -1;
}

int hcontent_link(struct hsess *hs, const struct proto_load *a, char *msg, size_t size)
{
        struct upload *u = hs->h->upload;
        char sha[65], name[4096];
        int dfd, code = -1, r;

        r = upload_dir_new(u, &hs->content_dir, &dfd);
        if (r < 0) {
                snprintf(msg, size, "cannot make a load directory: %s", strerror(-r));
                return PROTO_E_INTERNAL;
        }
        if (a->content.len) {
                sha_of(&a->content, sha);
                code = upload_link(u, dfd, sha, MODEL, "content", msg, size);
        }
        for (uint32_t i = 0; code < 0 && i < a->n_files; i++) {
                const struct proto_str *n = &a->files[i].name;

                snprintf(name, sizeof(name), "%.*s", (int)n->len, n->ptr);
                sha_of(&a->files[i].value, sha);
                code = upload_link(u, dfd, sha, name, name, msg, size);
        }
        if (code < 0 && a->input_content.len) {
                sha_of(&a->input_content, sha);
                code = upload_link(u, dfd, sha, "input.csv", "inputContent", msg, size);
        }
        close(dfd);
        return code;
}

/* Whether the zip archive fd (borrowed) holds a SystemStructure.ssd at its root (SSP 1.0, 7). */
static bool has_ssd(int fd)
{
        int c = dup(fd), err = 0;
        zip_t *z = c >= 0 ? zip_fdopen(c, ZIP_RDONLY, &err) : NULL;
        bool has;

        if (!z) {
                if (c >= 0)
                        close(c);
                return false;
        }
        has = zip_name_locate(z, "SystemStructure.ssd", 0) >= 0;
        zip_discard(z);
        return has;
}

/*
 * What the content is, from its bytes: a zip archive is an .ssp when it
 * holds a SystemStructure.ssd, else an .fmu (the load checks it as one);
 * XML is an .ssd. NULL: neither.
 */
static const char *sniff(int fd)
{
        unsigned char head[64];
        ssize_t n = pread(fd, head, sizeof(head), 0);
        ssize_t i = 0;

        if (n >= 4 && !memcmp(head, "PK\3\4", 4))
                return has_ssd(fd) ? "ssp" : "fmu";
        if (n >= 3 && !memcmp(head, "\xef\xbb\xbf", 3))
                i = 3;
        while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n'))
                i++;
        return i < n && head[i] == '<' ? "ssd" : NULL;
}

/* The content linked as MODEL in dir renamed model.<kind> (into name); -1 or a refusal. */
static int name_model(const char *dir, const char *sha, char *name, size_t nsize, char *msg,
                      size_t size)
{
        int dfd, fd = -1, code = PROTO_E_INTERNAL;
        const char *kind;

        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd >= 0)
                fd = openat(dfd, MODEL, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                snprintf(msg, size, "content: cannot open upload %s: %s", sha, strerror(errno));
                goto out;
        }
        kind = sniff(fd);
        close(fd);
        code = PROTO_E_INVALID;
        if (!kind) {
                snprintf(msg, size, "content: upload %s is neither a zip archive (.fmu, .ssp) "
                         "nor XML (.ssd)", sha);
                goto out;
        }
        snprintf(name, nsize, "model.%s", kind);
        if (renameat2(dfd, MODEL, dfd, name, RENAME_NOREPLACE) < 0) {
                if (errno == EEXIST) {
                        snprintf(msg, size, "files: '%s' is the content's own name in the load",
                                 name);
                } else {
                        snprintf(msg, size, "content: %s", strerror(errno));
                        code = PROTO_E_INTERNAL;
                }
                goto out;
        }
        code = -1;
out:
        if (dfd >= 0)
                close(dfd);
        return code;
}

int hcontent_prepare(struct hsess *hs, const struct proto_load *a, char **ret_path,
                     char **ret_input, char *msg, size_t size)
{
        char sha[65], name[16];
        int code;

        *ret_path = *ret_input = NULL;
        if (!hs->content_dir) {
                snprintf(msg, size, "no load directory");
                return PROTO_E_INTERNAL;
        }
        if (a->content.len) {
                sha_of(&a->content, sha);
                code = name_model(hs->content_dir, sha, name, sizeof(name), msg, size);
                if (code >= 0)
                        return code;
        }
        if ((a->content.len && asprintf(ret_path, "%s/%s", hs->content_dir, name) < 0) ||
            (a->input_content.len &&
             asprintf(ret_input, "%s/input.csv", hs->content_dir) < 0)) {
                snprintf(msg, size, "out of memory");
                return PROTO_E_INTERNAL;
        }
        return -1;
}

const struct open_as *hcontent_dirs(struct hsess *hs, bool uploaded, char *const **ret_dirs,
                                    size_t *ret_n)
{
        if (uploaded) {
                *ret_dirs = &hs->content_dir;
                *ret_n = 1;
                return NULL;
        }
        *ret_dirs = hs->allowed;
        *ret_n = hs->n_allowed;
        return &hs->as;
}

void hcontent_unprefix(struct hsess *hs, char *msg)
{
        size_t n = strlen(hs->content_dir);
        char *p;

        while ((p = strstr(msg, hs->content_dir)) && p[n] == '/')
                memmove(p, p + n + 1, strlen(p + n + 1) + 1);
}

void hcontent_release(struct hsess *hs)
{
        upload_dir_remove(hs->h->upload, hs->content_dir);
        free(hs->content_dir);
        hs->content_dir = NULL;
}
