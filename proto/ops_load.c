/*
 * ops_load: load a scenario (or a lone FMU) into a new session, with the
 * overrides fmuctl takes on its command line.
 *
 * DESIGN: multirate and starts are maps of name to text and record an
 * array of names; the three decoded arrays share one allocation (*mem).
 * Overrides are checked for shape here (a finite start, a positive step,
 * a tolerance in (0, 1), a known algorithm); whether they make sense for the scenario is the
 * daemon's call ("invalid").
 */
#include <errno.h>
#include <stdlib.h>

#include "proto/proto.h"
#include "proto/proto_int.h"

static const struct field load_fields[] = {
        FIELD("path", FT_STR, FF_PATH | FF_OMIT, struct proto_load, path),
        FIELD("content", FT_STR, FF_NAME | FF_OMIT, struct proto_load, content),
        FIELD("inputContent", FT_STR, FF_NAME | FF_OMIT, struct proto_load, input_content),
        FIELD("out", FT_STR, FF_PATH | FF_OMIT, struct proto_load, out),
        FIELD("input", FT_STR, FF_PATH | FF_OMIT, struct proto_load, input),
        FIELD_HAS("start", FT_F64, FF_FINITE, struct proto_load, start, has_start),
        FIELD_HAS("stop", FT_F64, FF_FINITE, struct proto_load, stop, has_stop),
        FIELD_HAS("step", FT_F64, FF_FINITE, struct proto_load, step, has_step),
        FIELD_HAS("budget", FT_F64, FF_NOTNAN | FF_NONNEG, struct proto_load, budget, has_budget),
        FIELD_HAS("warp", FT_F64, FF_FINITE | FF_NONNEG, struct proto_load, warp, has_warp),
        FIELD_HAS("decimation", FT_U64, 0, struct proto_load, decimation, has_decimation),
        FIELD_HAS("tolerance", FT_F64, FF_FINITE, struct proto_load, tolerance, has_tolerance),
        FIELD("algorithm", FT_STR, FF_NAME | FF_OMIT, struct proto_load, algorithm),
        FIELD("interface", FT_STR, FF_NAME | FF_OMIT, struct proto_load, iface),
        FIELD("integrator", FT_STR, FF_NAME | FF_OMIT, struct proto_load, integrator),
        FIELD("sandbox", FT_STR, FF_NAME | FF_OMIT, struct proto_load, sandbox),
        FIELD("strict", FT_BOOL, FF_OMIT, struct proto_load, strict),
        FIELD("force", FT_BOOL, FF_OMIT, struct proto_load, force),
        FIELD("rollbackOnFault", FT_BOOL, FF_OMIT, struct proto_load, rollback_on_fault),
        FIELD("transient", FT_BOOL, FF_OMIT, struct proto_load, transient),
        FIELD_HAS("rtPriority", FT_U32, 0, struct proto_load, rt_priority, has_rt_priority),
        FIELD_HAS("rtWorkerPriority", FT_U32, 0, struct proto_load, rt_worker_priority,
                  has_rt_worker_priority),
        FIELD("rtCpus", FT_STR, FF_NAME | FF_OMIT, struct proto_load, rt_cpus),
        FIELD("rtWorkerCpus", FT_STR, FF_NAME | FF_OMIT, struct proto_load, rt_worker_cpus),
        FIELD("rtBestEffort", FT_BOOL, FF_OMIT, struct proto_load, rt_best_effort),
        FIELD("rtMlock", FT_BOOL, FF_OMIT, struct proto_load, rt_mlock),
        FIELD("overrun", FT_STR, FF_NAME | FF_OMIT, struct proto_load, overrun),
        FIELD_HAS("overrunMarginUs", FT_F64, FF_FINITE | FF_NONNEG, struct proto_load,
                  overrun_margin_us, has_overrun_margin),
        FIELD_HAS("spinUs", FT_F64, FF_FINITE | FF_NONNEG, struct proto_load, spin_us, has_spin),
        FIELD("rigPolicy", FT_STR, FF_NAME | FF_OMIT, struct proto_load, rig_policy),
        FIELD_HAS("rigTimeoutMs", FT_U32, 0, struct proto_load, rig_timeout_ms, has_rig_timeout),
        FIELD_EXT("multirate"),
        FIELD_EXT("starts"),
        FIELD_EXT("record"),
        FIELD_EXT("rigIn"),
        FIELD_EXT("rigOut"),
        FIELD_EXT("files"),
};

static void assigns_encode(struct pw *w, const char *key, const struct proto_assign *a, uint32_t n)
{
        pw_str(w, key);
        pw_map(w, n);
        for (uint32_t i = 0; i < n; i++) {
                pw_pstr(w, a[i].name);
                pw_pstr(w, a[i].value);
        }
}

void proto_load_encode(struct pw *w, uint64_t id, const struct proto_load *a)
{
        uint32_t n_ext = (a->n_multirate > 0) + (a->n_starts > 0) + (a->n_record > 0) +
                         (a->n_rig_in > 0) + (a->n_rig_out > 0) + (a->n_files > 0);

        req_encode(w, id, PROTO_OP_LOAD, load_fields, N_FIELDS(load_fields), a, n_ext);
        if (a->n_multirate)
                assigns_encode(w, "multirate", a->multirate, a->n_multirate);
        if (a->n_starts)
                assigns_encode(w, "starts", a->starts, a->n_starts);
        if (a->n_record)
                strs_encode(w, "record", a->record, a->n_record);
        if (a->n_rig_in)
                strs_encode(w, "rigIn", a->rig_in, a->n_rig_in);
        if (a->n_rig_out)
                strs_encode(w, "rigOut", a->rig_out, a->n_rig_out);
        if (a->n_files)
                assigns_encode(w, "files", a->files, a->n_files);
}

/* A map of name to text: its pair count, or -EBADMSG. Absent: 0. */
static int assigns_check(const struct pv *v, const char *key, char *err, size_t errlen)
{
        if (!v)
                return 0;
        if (v->type != PV_MAP)
                return proto_fail(err, errlen, "args.%s: expected a map of name to text", key);
        if (v->m.n > PROTO_MAX_NAMES)
                return proto_fail(err, errlen, "args.%s: more than %u entries", key,
                                  PROTO_MAX_NAMES);
        for (uint32_t i = 0; i < v->m.n; i++) {
                const struct pv *k = v->m.kv[i].key, *t = v->m.kv[i].val;

                if (k->type != PV_STR || t->type != PV_STR)
                        return proto_fail(err, errlen, "args.%s: expected a map of name to text",
                                          key);
                if (has_nul(k->s.ptr, k->s.len) || has_nul(t->s.ptr, t->s.len))
                        return proto_fail(err, errlen, "args.%s: embedded NUL", key);
        }
        return (int)v->m.n;
}

static void assigns_fill(const struct pv *v, struct proto_assign *out)
{
        for (uint32_t i = 0; v && i < v->m.n; i++)
                out[i] = (struct proto_assign){ proto_str_of(v->m.kv[i].key),
                                                proto_str_of(v->m.kv[i].val) };
}

/*
 * What the load reads: path or content (an upload's SHA-256), input or
 * inputContent, files only with content (the daemon checks each name).
 */
static int check_sources(const struct proto_load *a, const struct pv *files, char *err,
                         size_t errlen)
{
        if (!a->path.len && !a->content.len)
                return proto_fail(err, errlen, "args.path: missing");
        if (a->path.len && a->content.len)
                return proto_fail(err, errlen, "args.content: not with args.path");
        if (a->content.len && !proto_sha256_valid(a->content))
                return proto_fail(err, errlen, "args.content: expected a SHA-256, 64 lowercase "
                                  "hex digits");
        if (a->input.len && a->input_content.len)
                return proto_fail(err, errlen, "args.inputContent: not with args.input");
        if (a->input_content.len && !proto_sha256_valid(a->input_content))
                return proto_fail(err, errlen, "args.inputContent: expected a SHA-256, 64 "
                                  "lowercase hex digits");
        if (files && !a->content.len)
                return proto_fail(err, errlen, "args.files: only with args.content");
        for (uint32_t i = 0; files && i < files->m.n; i++)
                if (!proto_sha256_valid(proto_str_of(files->m.kv[i].val)))
                        return proto_fail(err, errlen, "args.files: expected a map of relative "
                                          "name to SHA-256");
        return 0;
}

static int check_overrides(const struct proto_load *a, char *err, size_t errlen)
{
        if (a->has_step && !(a->step > 0))
                return proto_fail(err, errlen, "args.step: must be positive");
        if (a->has_decimation && !a->decimation)
                return proto_fail(err, errlen, "args.decimation: must be at least 1");
        if (a->has_tolerance && !(a->tolerance > 0 && a->tolerance < 1))
                return proto_fail(err, errlen, "args.tolerance: must be above 0 and below 1");
        if (a->algorithm.len && !pstr_is(a->algorithm, "jacobi") &&
            !pstr_is(a->algorithm, "gauss-seidel"))
                return proto_fail(err, errlen,
                                  "args.algorithm: expected \"jacobi\" or \"gauss-seidel\"");
        if (a->iface.len && !pstr_is(a->iface, "cs") && !pstr_is(a->iface, "me") &&
            !pstr_is(a->iface, "se"))
                return proto_fail(err, errlen, "args.interface: expected \"cs\", \"me\" or \"se\"");
        if (a->integrator.len && !pstr_is(a->integrator, "bdf") && !pstr_is(a->integrator, "adams"))
                return proto_fail(err, errlen, "args.integrator: expected \"bdf\" or \"adams\"");
        if (a->sandbox.len && !pstr_is(a->sandbox, "strict") && !pstr_is(a->sandbox, "basic") &&
            !pstr_is(a->sandbox, "off"))
                return proto_fail(err, errlen,
                                  "args.sandbox: expected \"strict\", \"basic\" or \"off\"");
        if (a->has_rt_priority && a->rt_priority > 99)
                return proto_fail(err, errlen, "args.rtPriority: expected 0 (none) to 99");
        if (a->has_rt_worker_priority && a->rt_worker_priority > 99)
                return proto_fail(err, errlen, "args.rtWorkerPriority: expected 0 (none) to 99");
        if (a->rt_cpus.len > 255)
                return proto_fail(err, errlen, "args.rtCpus: longer than 255 characters");
        if (a->rt_worker_cpus.len > 255)
                return proto_fail(err, errlen, "args.rtWorkerCpus: longer than 255 characters");
        if (a->rig_policy.len && !pstr_is(a->rig_policy, "hold") &&
            !pstr_is(a->rig_policy, "safe") && !pstr_is(a->rig_policy, "pause"))
                return proto_fail(err, errlen,
                                  "args.rigPolicy: expected \"hold\", \"safe\" or \"pause\"");
        if (a->has_rig_timeout && (a->rig_timeout_ms < 1 || a->rig_timeout_ms > 60000))
                return proto_fail(err, errlen, "args.rigTimeoutMs: expected 1 to 60000");
        return 0;
}

int proto_load_decode(const struct pv *args, struct proto_load *ret, void **mem, char *err,
                      size_t errlen)
{
        const struct pv *mr = pv_get(args, "multirate"), *st = pv_get(args, "starts");
        const struct pv *rec = pv_get(args, "record");
        const struct pv *rin = pv_get(args, "rigIn"), *rout = pv_get(args, "rigOut");
        const struct pv *files = pv_get(args, "files");
        struct proto_load a = { 0 };
        int n_mr, n_st, n_rec, n_rin, n_rout, n_files, r;
        struct proto_str *strs;
        struct proto_assign *as;
        char *block = NULL;

        *mem = NULL;
        r = req_decode(args, load_fields, N_FIELDS(load_fields), &a, err, errlen);
        if (r < 0)
                return r;
        r = check_overrides(&a, err, errlen);
        if (r < 0)
                return r;
        /* A map of name to text first, so that check_sources() reads strings. */
        n_files = assigns_check(files, "files", err, errlen);
        if (n_files < 0)
                return n_files;
        r = check_sources(&a, files, err, errlen);
        if (r < 0)
                return r;
        n_mr = assigns_check(mr, "multirate", err, errlen);
        if (n_mr < 0)
                return n_mr;
        n_st = assigns_check(st, "starts", err, errlen);
        if (n_st < 0)
                return n_st;
        n_rec = strs_check(rec, "args", "record", PROTO_MAX_NAMES, err, errlen);
        if (n_rec < 0)
                return n_rec;
        /* The bound of rig ports (shm/rig.h); the daemon checks the names. */
        n_rin = strs_check(rin, "args", "rigIn", 256, err, errlen);
        if (n_rin < 0)
                return n_rin;
        n_rout = strs_check(rout, "args", "rigOut", 256, err, errlen);
        if (n_rout < 0)
                return n_rout;
        if (n_mr + n_st + n_rec + n_rin + n_rout + n_files) {
                /* proto_assign holds two proto_str: one alignment for the whole block. */
                block = malloc((size_t)(n_mr + n_st + n_files) * sizeof(struct proto_assign) +
                               (size_t)(n_rec + n_rin + n_rout) * sizeof(struct proto_str));
                if (!block) {
                        proto_fail(err, errlen, "out of memory");
                        return -ENOMEM;
                }
        }
        /* Only with a block: NULL + 0 is undefined behaviour. */
        if (block) {
                as = (struct proto_assign *)(void *)block;
                assigns_fill(mr, as);
                assigns_fill(st, as + n_mr);
                assigns_fill(files, as + n_mr + n_st);
                strs = (struct proto_str *)(void *)(as + n_mr + n_st + n_files);
                strs_fill(rec, strs);
                strs_fill(rin, strs + n_rec);
                strs_fill(rout, strs + n_rec + n_rin);
                a.multirate = n_mr ? as : NULL;
                a.starts = n_st ? as + n_mr : NULL;
                a.files = n_files ? as + n_mr + n_st : NULL;
                a.record = n_rec ? strs : NULL;
                a.rig_in = n_rin ? strs + n_rec : NULL;
                a.rig_out = n_rout ? strs + n_rec + n_rin : NULL;
        }
        a.n_multirate = (uint32_t)n_mr;
        a.n_starts = (uint32_t)n_st;
        a.n_record = (uint32_t)n_rec;
        a.n_rig_in = (uint32_t)n_rin;
        a.n_rig_out = (uint32_t)n_rout;
        a.n_files = (uint32_t)n_files;
        *mem = block;
        *ret = a;
        return 0;
}

static const struct field load_result_fields[] = {
        FIELD("session", FT_U64, FF_REQ, struct proto_load_result, session),
        FIELD("generation", FT_U64, FF_REQ, struct proto_load_result, generation),
        FIELD("out", FT_STR, FF_PATH | FF_OMIT, struct proto_load_result, out),
        FIELD_EXT("warnings"),
};

void proto_load_result_encode(struct pw *w, const struct proto_load_result *r)
{
        res_encode(w, load_result_fields, N_FIELDS(load_result_fields), r, r->n_warnings > 0);
        if (r->n_warnings)
                strs_encode(w, "warnings", r->warnings, r->n_warnings);
}

int proto_load_result_warnings(const struct pv *v, struct proto_str *out, uint32_t max, char *err,
                               size_t errlen)
{
        const struct pv *a = v && v->type == PV_MAP ? pv_get(v, "warnings") : NULL;
        int n = strs_check(a, "result", "warnings", PROTO_MAX_NAMES, err, errlen);

        if (n <= 0)
                return n;
        for (uint32_t i = 0; i < (uint32_t)n && i < max; i++)
                out[i] = proto_str_of(&a->a.items[i]);
        return n;
}

int proto_load_result_decode(const struct pv *v, struct proto_load_result *ret, char *err,
                             size_t errlen)
{
        struct proto_load_result a = { 0 };
        int r;

        r = res_decode(v, "result", load_result_fields, N_FIELDS(load_result_fields), &a, err,
                       errlen);
        if (r < 0)
                return r;
        *ret = a;
        return 0;
}
