/*
 * host_content: put (the upload store, upload.h) and a load by content:
 * the uploads a load names by SHA-256 gathered, as hard links, in a
 * private directory of the session's, which the load then reads as it
 * reads a path.
 *
 * DESIGN: the load directory holds "model.<kind>" (the content), the
 * .ssd's files under their relative names (each a plain relative path,
 * upload_name_valid()) and "input.csv" (inputContent). It is the only
 * directory the scenario is opened beneath, confined as any other
 * (host_load.c), so the archive checks, the links refused and the limits
 * are those of a path, on the same descriptors. Its files are the
 * daemon's own: they are opened with the daemon's identity, not the
 * client's, who sent their bytes. The directory goes with the session
 * (hload_free()); while it is there, its links keep the store from
 * evicting the uploads it uses.
 */
#include "daemon/host_int.h"
#include "daemon/upload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Whether the store has upload sha (for what): -1, or PROTO_E_INVALID with msg. */
static int have(struct host *h, const char *what, const struct proto_str *s, char *msg,
                size_t size)
{
        char sha[65];

        sha_of(s, sha);
        if (upload_kind(h->upload, sha))
                return -1;
        snprintf(msg, size, "%s: no upload %s in the store (put it first)", what, sha);
        return PROTO_E_INVALID;
}

int hcontent_check(struct host *h, const struct proto_load *a, char *msg, size_t size)
{
        char name[4096];
        int code = -1;

        if (a->content.len)
                code = have(h, "content", &a->content, msg, size);
        if (code < 0 && a->input_content.len)
                code = have(h, "inputContent", &a->input_content, msg, size);
        for (uint32_t i = 0; code < 0 && i < a->n_files; i++) {
                const struct proto_str *n = &a->files[i].name;

                snprintf(name, sizeof(name), "%.*s", (int)n->len, n->ptr);
                if (n->len >= sizeof(name) || !upload_name_valid(name)) {
                        snprintf(msg, size, "files: '%.200s' is not a plain relative path (none "
                                 "starts with '/'; no empty, '.' or '..' part)", name);
                        return PROTO_E_INVALID;
                }
                code = have(h, name, &a->files[i].value, msg, size);
        }
        return code;
}

int hcontent_prepare(struct hsess *hs, const struct proto_load *a, char **ret_path,
                     char **ret_input, char *msg, size_t size)
{
        struct upload *u = hs->h->upload;
        char sha[65], name[4096];
        const char *kind = NULL;
        int code = -1, r;

        *ret_path = *ret_input = NULL;
        if (a->content.len) {
                sha_of(&a->content, sha);
                kind = upload_kind(u, sha);
                if (!kind) {
                        snprintf(msg, size, "content: no upload %s in the store (put it first)",
                                 sha);
                        return PROTO_E_INVALID;
                }
                if (!strcmp(kind, "csv")) {
                        snprintf(msg, size, "content: upload %s is a CSV file, not a model",
                                 sha);
                        return PROTO_E_INVALID;
                }
        }
        r = upload_dir_new(u, &hs->content_dir);
        if (r < 0) {
                snprintf(msg, size, "cannot make a load directory: %s", strerror(-r));
                return PROTO_E_INTERNAL;
        }
        if (kind) {
                snprintf(name, sizeof(name), "model.%s", kind);
                code = upload_link(u, hs->content_dir, sha, name, msg, size);
        }
        for (uint32_t i = 0; code < 0 && i < a->n_files; i++) {
                const struct proto_str *n = &a->files[i].name;

                snprintf(name, sizeof(name), "%.*s", (int)n->len, n->ptr);
                sha_of(&a->files[i].value, sha);
                code = upload_link(u, hs->content_dir, sha, name, msg, size);
        }
        if (code < 0 && a->input_content.len) {
                sha_of(&a->input_content, sha);
                code = upload_link(u, hs->content_dir, sha, "input.csv", msg, size);
        }
        if (code >= 0)
                return code;
        if ((kind && asprintf(ret_path, "%s/model.%s", hs->content_dir, kind) < 0) ||
            (a->input_content.len &&
             asprintf(ret_input, "%s/input.csv", hs->content_dir) < 0)) {
                snprintf(msg, size, "out of memory");
                return PROTO_E_INTERNAL;
        }
        return -1;
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
