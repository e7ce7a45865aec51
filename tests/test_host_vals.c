/* Get, set and step by name on a host session, replies asserted (test_host_vals.h). */
#include "test_host_vals.h"

#include <criterion/criterion.h>

struct proto_str hv_str(const char *s)
{
        return (struct proto_str){ s, (uint32_t)strlen(s) };
}

void hv_get(struct hdrv *d, uint64_t s, const char *const *names, uint32_t n, struct hrep *rep,
            struct proto_get_result *v, void **mem)
{
        struct proto_str ps[16];
        char err[256];
        struct pw w;

        for (uint32_t i = 0; i < n; i++)
                ps[i] = hv_str(names[i]);
        cr_assert(pw_init(&w) == 0);
        proto_get_encode(&w, hdrv_id(d), &(struct proto_get){ .t = { s, 0 }, .n = n, .names = ps });
        hdrv_wait(d, hdrv_send(d, &w), rep);
        pw_fini(&w);
        if (!v)
                return;
        cr_assert(rep->r.ok, "get: %.*s", (int)rep->r.message_len, rep->r.message);
        cr_assert(proto_get_result_decode(rep->r.result, v, mem, err, sizeof(err)) == 0, "%s", err);
        cr_assert(v->n == n);
}

void hv_set(struct hdrv *d, uint64_t s, const struct proto_named_value *nv, uint32_t n,
            struct hrep *rep)
{
        struct pw w;

        cr_assert(pw_init(&w) == 0);
        proto_set_encode(&w, hdrv_id(d), &(struct proto_set){ .t = { s, 0 }, .n = n,
                                                              .values = nv });
        hdrv_wait(d, hdrv_send(d, &w), rep);
        pw_fini(&w);
}

void hv_set1(struct hdrv *d, uint64_t s, const char *name, const struct pv *value,
             struct hrep *rep)
{
        struct proto_named_value nv = { hv_str(name), value };

        hv_set(d, s, &nv, 1, rep);
}

void hv_set_ok(struct hdrv *d, uint64_t s, const char *name, struct pv value)
{
        struct hrep rep;

        hv_set1(d, s, name, &value, &rep);
        cr_assert(rep.r.ok, "set %s: %.*s", name, (int)rep.r.message_len, rep.r.message);
        hrep_fini(&rep);
}

const char *hv_set_err(struct hdrv *d, uint64_t s, const char *name, struct pv value,
                       enum proto_err code)
{
        struct hrep rep;
        const char *msg;

        hv_set1(d, s, name, &value, &rep);
        msg = hrep_err(&rep, code);
        hrep_fini(&rep);
        return msg;
}

void hv_step(struct hdrv *d, uint64_t s, uint64_t n)
{
        struct hrep rep;
        struct pw w;

        cr_assert(pw_init(&w) == 0);
        proto_step_encode(&w, hdrv_id(d), &(struct proto_step){ .t = { s, 0 }, .n = n });
        hdrv_wait(d, hdrv_send(d, &w), &rep);
        pw_fini(&w);
        cr_assert(rep.r.ok, "%.*s", (int)rep.r.message_len, rep.r.message);
        hrep_fini(&rep);
}
