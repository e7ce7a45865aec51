/* proto_fixture: allocation tracking and message shortcuts for the proto tests. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "proto_fixture.h"

size_t alloc_largest;
size_t alloc_count;
size_t alloc_fail_after = SIZE_MAX;

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);

static int track(size_t size)
{
        alloc_count++;
        if (size > alloc_largest)
                alloc_largest = size;
        if (alloc_fail_after == SIZE_MAX)
                return 0;
        if (!alloc_fail_after)
                return -1;
        alloc_fail_after--;
        return 0;
}

void *__wrap_malloc(size_t size)
{
        return track(size) ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
        return track(n * size) ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
        return track(size) ? NULL : __real_realloc(p, size);
}

void alloc_reset(void)
{
        alloc_largest = 0;
        alloc_count = 0;
        alloc_fail_after = SIZE_MAX;
}

int msg_decode(struct msg *m, const void *bytes, size_t len, const struct proto_limits *lim)
{
        memset(m, 0, sizeof(*m));
        m->buf = __real_malloc(len ? len : 1);
        cr_assert(m->buf != NULL);
        if (len)
                memcpy(m->buf, bytes, len);
        m->len = len;
        return pv_decode(m->buf, len, lim, &m->doc, m->err, sizeof(m->err));
}

int msg_take(struct msg *m, struct pw *w)
{
        size_t len = 0;
        void *buf;
        int r;

        cr_assert(w->error == 0, "writer error %d", w->error);
        buf = pw_take(w, &len);
        cr_assert(buf != NULL);
        r = msg_decode(m, buf, len, NULL);
        free(buf);
        return r;
}

void msg_fini(struct msg *m)
{
        pv_doc_fini(&m->doc);
        free(m->buf);
        m->buf = NULL;
}

const struct pv *msg_req(struct msg *m, struct pw *w, enum proto_op op, uint64_t id)
{
        struct proto_req req;
        char err[256] = "";
        int r;

        r = msg_take(m, w);
        cr_assert(r == 0, "pv_decode: %d %s", r, m->err);
        r = proto_req_decode(m->doc.root, &req, err, sizeof(err));
        cr_assert(r == 0, "proto_req_decode: %d %s", r, err);
        cr_assert(req.op == op, "op %d, expected %d", req.op, op);
        cr_assert(req.id == id);
        return req.args;
}

const struct pv *msg_result(struct msg *m, struct pw *w)
{
        struct proto_reply rep;
        char err[256] = "";
        int r;

        r = msg_take(m, w);
        cr_assert(r == 0, "pv_decode: %d %s", r, m->err);
        r = proto_reply_decode(m->doc.root, &rep, err, sizeof(err));
        cr_assert(r == 0, "proto_reply_decode: %d %s", r, err);
        cr_assert(rep.ok);
        return rep.result;
}

int str_eq(struct proto_str s, const char *lit)
{
        size_t len = strlen(lit);

        return s.ptr && s.len == len && !memcmp(s.ptr, lit, len);
}
