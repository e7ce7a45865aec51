/*
 * libfmud_ops: the daemon's operations, one request each (fmud.h). Each
 * encodes through proto, calls fmud_call() and decodes the result through
 * proto; results stay in the reply slot (borrowed until the next request).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libfmud_int.h"

#define ERRLEN 160

static int target_op(struct fmud *c, enum proto_op op, const struct proto_target *t,
                     const struct pv **ret)
{
        uint64_t id;

        if (!c || !t)
                return fmud_missing(c, proto_op_name(op), "the target");
        id = fmud_begin(c);
        proto_target_encode(&c->w, id, op, t);
        return fmud_call(c, id, proto_op_name(op), ret);
}

static int progress(struct fmud *c, const char *what, const struct pv *v, struct proto_progress *ret)
{
        struct proto_progress p;
        char err[ERRLEN];

        if (!ret)
                return 0;
        if (proto_progress_decode(v, &p, err, sizeof(err)) < 0)
                return fmud_bad_result(c, what, err);
        *ret = p;
        return 0;
}

static int progress_op(struct fmud *c, enum proto_op op, const struct proto_target *t,
                       struct proto_progress *ret)
{
        const struct pv *v;
        int r = target_op(c, op, t, &v);

        return r < 0 ? r : progress(c, proto_op_name(op), v, ret);
}

#define MAX_LOAD_WARNINGS 64

/* The load result's warnings, joined by newlines, into c->load_warnings. */
static int keep_warnings(struct fmud *c, const struct pv *v, char *err, size_t errlen)
{
        struct proto_str w[MAX_LOAD_WARNINGS];
        int n = proto_load_result_warnings(v, w, MAX_LOAD_WARNINGS, err, errlen);
        size_t len = 0, o = 0;

        free(c->load_warnings);
        c->load_warnings = NULL;
        if (n <= 0)
                return n;
        if (n > MAX_LOAD_WARNINGS)
                n = MAX_LOAD_WARNINGS;
        for (int i = 0; i < n; i++)
                len += w[i].len + 1;
        c->load_warnings = malloc(len + 1);
        if (!c->load_warnings)
                return -ENOMEM;
        for (int i = 0; i < n; i++) {
                memcpy(c->load_warnings + o, w[i].ptr, w[i].len);
                o += w[i].len;
                c->load_warnings[o++] = '\n';
        }
        c->load_warnings[o ? o - 1 : 0] = '\0';
        return 0;
}

const char *fmud_load_warnings(const struct fmud *c)
{
        return c ? c->load_warnings : NULL;
}

const char *fmud_load_out(const struct fmud *c)
{
        return c ? c->load_out : NULL;
}

int fmud_load(struct fmud *c, const struct proto_load *args, uint64_t *ret_session,
              uint64_t *ret_generation)
{
        struct proto_load_result res;
        const struct pv *v;
        char err[ERRLEN];
        uint64_t id;
        int r;

        if (!c || !args)
                return fmud_missing(c, "load", "args");
        id = fmud_begin(c);
        proto_load_encode(&c->w, id, args);
        r = fmud_call(c, id, "load", &v);
        if (r < 0)
                return r;
        if (proto_load_result_decode(v, &res, err, sizeof(err)) < 0)
                return fmud_bad_result(c, "load", err);
        r = keep_warnings(c, v, err, sizeof(err));
        free(c->load_out);
        c->load_out = NULL;
        if (r == 0 && res.out.len && !(c->load_out = strndup(res.out.ptr, res.out.len)))
                r = -ENOMEM;
        if (r == -EBADMSG)
                return fmud_bad_result(c, "load", err);
        if (r < 0)
                return fmud_fail(c, r, "load: out of memory");
        if (ret_session)
                *ret_session = res.session;
        if (ret_generation)
                *ret_generation = res.generation;
        return 0;
}

int fmud_unload(struct fmud *c, const struct proto_target *t)
{
        const struct pv *v;

        return target_op(c, PROTO_OP_UNLOAD, t, &v);
}

int fmud_start(struct fmud *c, const struct proto_target *t, struct proto_progress *ret)
{
        return progress_op(c, PROTO_OP_START, t, ret);
}

int fmud_pause(struct fmud *c, const struct proto_target *t, struct proto_progress *ret)
{
        return progress_op(c, PROTO_OP_PAUSE, t, ret);
}

int fmud_resume(struct fmud *c, const struct proto_target *t, struct proto_progress *ret)
{
        return progress_op(c, PROTO_OP_RESUME, t, ret);
}

int fmud_stop(struct fmud *c, const struct proto_target *t, struct proto_progress *ret)
{
        return progress_op(c, PROTO_OP_STOP, t, ret);
}

int fmud_warp(struct fmud *c, const struct proto_target *t, double w, struct proto_progress *ret)
{
        struct proto_warp a;
        const struct pv *v;
        uint64_t id;
        int r;

        if (!c || !t)
                return fmud_missing(c, "warp", "the target");
        a = (struct proto_warp){ .t = *t, .factor = w };
        id = fmud_begin(c);
        proto_warp_encode(&c->w, id, &a);
        r = fmud_call(c, id, "warp", &v);
        return r < 0 ? r : progress(c, "warp", v, ret);
}

int fmud_step(struct fmud *c, const struct proto_target *t, uint64_t n, struct proto_progress *ret)
{
        struct proto_step a;
        const struct pv *v;
        uint64_t id;
        int r;

        if (!c || !t)
                return fmud_missing(c, "step", "the target");
        a = (struct proto_step){ .t = *t, .n = n };
        id = fmud_begin(c);
        proto_step_encode(&c->w, id, &a);
        r = fmud_call(c, id, "step", &v);
        return r < 0 ? r : progress(c, "step", v, ret);
}

int fmud_run_until(struct fmud *c, const struct proto_target *t, double time,
                   struct proto_progress *ret)
{
        struct proto_run_until a;
        const struct pv *v;
        uint64_t id;
        int r;

        if (!c || !t)
                return fmud_missing(c, "run-until", "the target");
        a = (struct proto_run_until){ .t = *t, .time = time };
        id = fmud_begin(c);
        proto_run_until_encode(&c->w, id, &a);
        r = fmud_call(c, id, "run-until", &v);
        return r < 0 ? r : progress(c, "run-until", v, ret);
}

int fmud_status(struct fmud *c, uint64_t session, struct proto_session_status *ret)
{
        struct proto_target t = { .session = session };
        struct proto_session_status st;
        const struct pv *v;
        char err[ERRLEN];
        int r;

        if (!c || !ret)
                return fmud_missing(c, "status", "the result's place");
        if (session == 0)
                return fmud_fail(c, -EINVAL, "status: session 0 is the daemon's (fmud_status_daemon)");
        r = target_op(c, PROTO_OP_STATUS, &t, &v);
        if (r < 0)
                return r;
        if (proto_session_status_decode(v, &st, &c->reply_mem, err, sizeof(err)) < 0)
                return fmud_bad_result(c, "status", err);
        *ret = st;
        return 0;
}

int fmud_status_daemon(struct fmud *c, struct proto_daemon_status *ret)
{
        struct proto_target t = { 0 };
        struct proto_daemon_status st;
        const struct pv *v;
        char err[ERRLEN];
        int r;

        if (!c || !ret)
                return fmud_missing(c, "status", "the result's place");
        r = target_op(c, PROTO_OP_STATUS, &t, &v);
        if (r < 0)
                return r;
        if (proto_daemon_status_decode(v, &st, err, sizeof(err)) < 0)
                return fmud_bad_result(c, "status", err);
        *ret = st;
        return 0;
}

int fmud_list(struct fmud *c, struct proto_list_result *ret)
{
        struct proto_list_result l;
        const struct pv *v;
        char err[ERRLEN];
        uint64_t id;
        int r;

        if (!c || !ret)
                return fmud_missing(c, "list", "the result");
        id = fmud_begin(c);
        proto_req_begin(&c->w, id, PROTO_OP_LIST, 0);
        r = fmud_call(c, id, "list", &v);
        if (r < 0)
                return r;
        if (proto_list_result_decode(v, &l, &c->reply_mem, err, sizeof(err)) < 0)
                return fmud_bad_result(c, "list", err);
        *ret = l;
        return 0;
}

int fmud_logs(struct fmud *c, const struct proto_target *t, struct proto_logs_result *ret)
{
        struct proto_logs_result l;
        const struct pv *v;
        char err[ERRLEN];
        int r;

        if (!c || !ret)
                return fmud_missing(c, "logs", "the result's place");
        r = target_op(c, PROTO_OP_LOGS, t, &v);
        if (r < 0)
                return r;
        if (proto_logs_result_decode(v, &l, &c->reply_mem, err, sizeof(err)) < 0)
                return fmud_bad_result(c, "logs", err);
        *ret = l;
        return 0;
}

int fmud_names(struct fmud *c, const char *const names[], size_t n, struct proto_str **ret)
{
        struct proto_str *s;

        if (!c || (n && !names))
                return fmud_missing(c, "names", "the list");
        if (n > PROTO_MAX_ITEMS)
                return fmud_fail(c, -E2BIG, "at most %u names", PROTO_MAX_ITEMS);
        s = calloc(n ? n : 1, sizeof(*s));
        if (!s)
                return fmud_fail(c, -ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
                size_t len = names[i] ? strlen(names[i]) : 0;

                if (!len || len > PROTO_MAX_STR) {
                        free(s);
                        return fmud_fail(c, -EINVAL, "invalid variable name");
                }
                s[i] = (struct proto_str){ names[i], (uint32_t)len };
        }
        *ret = s;
        return 0;
}

int fmud_get_at(struct fmud *c, const struct proto_target *t, const char *const names[],
                size_t n, const struct pv *const **ret_values, double *ret_time)
{
        struct proto_get a;
        struct proto_get_result res;
        struct proto_str *s;
        const struct pv *v;
        char err[ERRLEN];
        double time;
        bool has;
        uint64_t id;
        int r;

        if (!c || !t || !ret_values)
                return fmud_missing(c, "get", !t ? "the target" : "the values' place");
        a = (struct proto_get){ .t = *t };
        id = fmud_begin(c);
        r = fmud_names(c, names, n, &s);
        if (r < 0)
                return r;
        a.n = (uint32_t)n;
        a.names = s;
        proto_get_encode(&c->w, id, &a);
        free(s);
        r = fmud_call(c, id, "get", &v);
        if (r < 0)
                return r;
        if (proto_get_result_decode(v, &res, &c->reply_mem, err, sizeof(err)) < 0)
                return fmud_bad_result(c, "get", err);
        if (res.n != n)
                return fmud_fail(c, -EPROTO, "get: %u values for %zu names", res.n, n);
        if (proto_result_time(v, &time, &has, err, sizeof(err)) < 0)
                return fmud_bad_result(c, "get", err);
        *ret_values = res.values;
        if (ret_time)
                *ret_time = time;
        return 0;
}

int fmud_get(struct fmud *c, const struct proto_target *t, const char *const names[], size_t n,
             const struct pv *const **ret_values)
{
        return fmud_get_at(c, t, names, n, ret_values, NULL);
}

int fmud_set_at(struct fmud *c, const struct proto_target *t, const struct proto_named_value *v,
                size_t n, double *ret_time)
{
        struct proto_set a;
        const struct pv *res;
        uint64_t id;
        char err[ERRLEN];
        double time;
        bool has;
        int r;

        if (!c || !t || (n && !v))
                return fmud_missing(c, "set", !t ? "the target" : "the values");
        if (n > PROTO_MAX_ITEMS)
                return fmud_fail(c, -E2BIG, "at most %u values", PROTO_MAX_ITEMS);
        for (size_t i = 0; i < n; i++)
                if (!v[i].value || (!v[i].name.ptr && v[i].name.len))
                        return fmud_missing(c, "set", !v[i].value ? "a value" : "a name");
        a = (struct proto_set){ .t = *t, .n = (uint32_t)n, .values = v };
        id = fmud_begin(c);
        proto_set_encode(&c->w, id, &a);
        r = fmud_call(c, id, "set", &res);
        if (r < 0)
                return r;
        if (proto_result_time(res, &time, &has, err, sizeof(err)) < 0)
                return fmud_bad_result(c, "set", err);
        if (ret_time)
                *ret_time = time;
        return 0;
}

int fmud_set(struct fmud *c, const struct proto_target *t, const struct proto_named_value *v,
             size_t n)
{
        return fmud_set_at(c, t, v, n, NULL);
}

int fmud_get_f64(struct fmud *c, const struct proto_target *t, const char *const names[], size_t n,
                 double out[])
{
        const struct pv *const *v;
        double *tmp;
        int r;

        if (!c || (n && !out))
                return fmud_missing(c, "get", "the values' place");
        r = fmud_get(c, t, names, n, &v);
        if (r < 0)
                return r;
        tmp = calloc(n ? n : 1, sizeof(*tmp));
        if (!tmp)
                return fmud_fail(c, -ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
                bool b;

                if (pv_f64(v[i], &tmp[i]) == 0)
                        continue;
                if (pv_bool(v[i], &b) == 0) {
                        tmp[i] = b;
                        continue;
                }
                free(tmp);
                return fmud_fail(c, -EPROTOTYPE, "get: '%s' is not a number", names[i]);
        }
        memcpy(out, tmp, n * sizeof(*out));
        free(tmp);
        return 0;
}

int fmud_set_f64(struct fmud *c, const struct proto_target *t, const char *const names[],
                 const double v[], size_t n)
{
        struct proto_named_value *nv;
        struct proto_str *s;
        struct pv *pv;
        int r;

        if (!c || (n && !v))
                return fmud_missing(c, "set", "the values");
        r = fmud_names(c, names, n, &s);
        if (r < 0)
                return r;
        nv = calloc(n ? n : 1, sizeof(*nv));
        pv = calloc(n ? n : 1, sizeof(*pv));
        if (!nv || !pv) {
                r = fmud_fail(c, -ENOMEM, "out of memory");
                goto out;
        }
        for (size_t i = 0; i < n; i++) {
                pv[i] = (struct pv){ .type = PV_FLOAT, .f = v[i] };
                nv[i] = (struct proto_named_value){ .name = s[i], .value = &pv[i] };
        }
        r = fmud_set(c, t, nv, n);
out:
        free(pv);
        free(nv);
        free(s);
        return r;
}

int fmud_snapshot(struct fmud *c, const struct proto_target *t, uint64_t *ret_snapshot,
                  double *ret_time)
{
        struct proto_snapshot_result res;
        const struct pv *v;
        char err[ERRLEN];
        int r;

        r = target_op(c, PROTO_OP_SNAPSHOT, t, &v);
        if (r < 0)
                return r;
        if (proto_snapshot_result_decode(v, &res, err, sizeof(err)) < 0)
                return fmud_bad_result(c, "snapshot", err);
        if (ret_snapshot)
                *ret_snapshot = res.snapshot;
        if (ret_time)
                *ret_time = res.time;
        return 0;
}

int fmud_restore(struct fmud *c, const struct proto_target *t, uint64_t snapshot,
                 uint64_t *ret_generation)
{
        struct proto_restore a;
        const struct pv *v, *g;
        uint64_t gen = 0;
        uint64_t id;
        int r;

        if (!c || !t)
                return fmud_missing(c, "restore", "the target");
        a = (struct proto_restore){ .t = *t, .snapshot = snapshot };
        id = fmud_begin(c);
        proto_restore_encode(&c->w, id, &a);
        r = fmud_call(c, id, "restore", &v);
        if (r < 0)
                return r;
        /* The result carries the new generation (a load result's shape). */
        g = pv_get(v, "generation");
        if (ret_generation) {
                if (!g || pv_u64(g, &gen) < 0)
                        return fmud_bad_result(c, "restore", "no generation");
                *ret_generation = gen;
        }
        return 0;
}

int fmud_shutdown(struct fmud *c)
{
        const struct pv *v;
        uint64_t id;

        if (!c)
                return fmud_missing(c, "shutdown", "the handle");
        id = fmud_begin(c);
        proto_req_begin(&c->w, id, PROTO_OP_SHUTDOWN, 0);
        return fmud_call(c, id, "shutdown", &v);
}
