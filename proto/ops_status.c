/*
 * ops_status: what list and status answer: the sessions in brief, one
 * session in full (with its instances and their sandbox layers), and the
 * daemon itself (status of session 0).
 *
 * DESIGN: a decoded status's instances and all their layers share one
 * allocation (*mem), sized after every count has been checked.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "proto/proto.h"
#include "proto/proto_int.h"

#define MAX_INSTANCES   PROTO_MAX_NAMES
#define MAX_LAYERS      64u             /* sandbox layers of one instance */
/* A session's real-time options, and worker-mlock once per instance. */
#define MAX_RT          (32u + MAX_INSTANCES)

/* ---- list ---- */

static const struct field brief_fields[] = {
        FIELD("session", FT_U64, FF_REQ, struct proto_session_brief, session),
        FIELD("generation", FT_U64, FF_REQ, struct proto_session_brief, generation),
        FIELD("name", FT_STR, 0, struct proto_session_brief, name),
        FIELD("state", FT_STATE, FF_REQ, struct proto_session_brief, state),
        FIELD("time", FT_F64, FF_REQ, struct proto_session_brief, time),
        FIELD("transient", FT_BOOL, FF_OMIT, struct proto_session_brief, transient),
        FIELD("owner", FT_STR, FF_OMIT, struct proto_session_brief, owner),
        FIELD("user", FT_STR, FF_OMIT, struct proto_session_brief, user),
        FIELD("kind", FT_STR, FF_OMIT, struct proto_session_brief, kind),
};

void proto_list_result_encode(struct pw *w, const struct proto_list_result *r)
{
        pw_map(w, 1);
        pw_str(w, "sessions");
        pw_array(w, r->n);
        for (uint32_t i = 0; i < r->n; i++)
                res_encode(w, brief_fields, N_FIELDS(brief_fields), &r->sessions[i], 0);
}

/* An array under key of at most max entries: its count, or -EBADMSG. */
static int array_check(const struct pv *v, const char *what, const char *key, uint32_t max,
                       bool required, char *err, size_t errlen)
{
        if (!v) {
                if (required)
                        return proto_fail(err, errlen, "%s.%s: missing", what, key);
                return 0;
        }
        if (v->type != PV_ARRAY)
                return proto_fail(err, errlen, "%s.%s: expected an array", what, key);
        if (v->a.n > max)
                return proto_fail(err, errlen, "%s.%s: more than %u entries", what, key, max);
        return (int)v->a.n;
}

int proto_list_result_decode(const struct pv *v, struct proto_list_result *ret, void **mem,
                             char *err, size_t errlen)
{
        struct proto_session_brief *s = NULL;
        const struct pv *a;
        char what[48];
        int n, r;

        *mem = NULL;
        if (!v || v->type != PV_MAP)
                return proto_fail(err, errlen, "result: expected a map");
        a = pv_get(v, "sessions");
        n = array_check(a, "result", "sessions", PROTO_MAX_ITEMS, true, err, errlen);
        if (n < 0)
                return n;
        if (n) {
                s = calloc((size_t)n, sizeof(*s));
                if (!s) {
                        proto_fail(err, errlen, "out of memory");
                        return -ENOMEM;
                }
        }
        for (int i = 0; i < n; i++) {
                snprintf(what, sizeof(what), "result.sessions[%d]", i);
                r = res_decode(&a->a.items[i], what, brief_fields, N_FIELDS(brief_fields), &s[i],
                               err, errlen);
                if (r < 0) {
                        free(s);
                        return r;
                }
        }
        *mem = s;
        *ret = (struct proto_list_result){ .n = (uint32_t)n, .sessions = s };
        return 0;
}

/* ---- one session ---- */

static const struct field status_fields[] = {
        FIELD("session", FT_U64, FF_REQ, struct proto_session_status, session),
        FIELD("generation", FT_U64, FF_REQ, struct proto_session_status, generation),
        FIELD("name", FT_STR, 0, struct proto_session_status, name),
        FIELD("state", FT_STATE, FF_REQ, struct proto_session_status, state),
        FIELD("time", FT_F64, FF_REQ, struct proto_session_status, time),
        FIELD("start", FT_F64, 0, struct proto_session_status, start),
        FIELD("stop", FT_F64, 0, struct proto_session_status, stop),
        FIELD("step", FT_F64, 0, struct proto_session_status, step),
        FIELD("budget", FT_F64, FF_NOTNAN, struct proto_session_status, budget),
        FIELD("points", FT_U64, FF_REQ, struct proto_session_status, points),
        FIELD("extraPoints", FT_U64, 0, struct proto_session_status, extra_points),
        FIELD("events", FT_U64, 0, struct proto_session_status, events),
        FIELD("chainedSteps", FT_U64, 0, struct proto_session_status, chained_steps),
        FIELD("workerMoves", FT_U64, 0, struct proto_session_status, worker_moves),
        FIELD("realTimeFactor", FT_F64, FF_REQ, struct proto_session_status, real_time_factor),
        FIELD("warp", FT_F64, 0, struct proto_session_status, warp),
        FIELD("lagS", FT_F64, 0, struct proto_session_status, lag_s),
        FIELD("lagMaxS", FT_F64, 0, struct proto_session_status, lag_max_s),
        FIELD("overruns", FT_U64, 0, struct proto_session_status, overruns),
        FIELD("overrun", FT_STR, 0, struct proto_session_status, overrun),
        FIELD("message", FT_STR, 0, struct proto_session_status, message),
        FIELD("recorder", FT_STR, 0, struct proto_session_status, recorder),
        FIELD("rowsRecorded", FT_U64, 0, struct proto_session_status, rows_recorded),
        FIELD("rowsDropped", FT_U64, 0, struct proto_session_status, rows_dropped),
        FIELD("samplesDropped", FT_U64, 0, struct proto_session_status, samples_dropped),
        FIELD("results", FT_STR, 0, struct proto_session_status, results),
        FIELD("out", FT_STR, FF_OMIT, struct proto_session_status, out),
        FIELD("sandbox", FT_STR, 0, struct proto_session_status, sandbox),
        FIELD("transient", FT_BOOL, FF_OMIT, struct proto_session_status, transient),
        FIELD("owner", FT_STR, FF_OMIT, struct proto_session_status, owner),
        FIELD("user", FT_STR, FF_OMIT, struct proto_session_status, user),
        FIELD_EXT("lateness"),
        FIELD_EXT("latenessWindow"),
        FIELD_EXT("rig"),
        FIELD_EXT("instances"),
        FIELD_EXT("realtime"),
};

static const struct field rig_fields[] = {
        FIELD("state", FT_STR, FF_REQ | FF_NAME, struct proto_rig_status, state),
        FIELD("policy", FT_STR, FF_REQ | FF_NAME, struct proto_rig_status, policy),
        FIELD("inForce", FT_BOOL, 0, struct proto_rig_status, in_force),
        FIELD("applied", FT_U64, 0, struct proto_rig_status, applied),
        FIELD("late", FT_U64, 0, struct proto_rig_status, late),
        FIELD("missing", FT_U64, 0, struct proto_rig_status, missing),
        FIELD("dropped", FT_U64, 0, struct proto_rig_status, dropped),
        FIELD("bad", FT_U64, 0, struct proto_rig_status, bad),
};

/* Telemetry's too (ops_telemetry.c). */
const struct field status_lateness_fields[PROTO_N_LATENESS_FIELDS] = {
        FIELD("p50Us", FT_F64, FF_FINITE | FF_NONNEG, struct proto_lateness, p50_us),
        FIELD("p99Us", FT_F64, FF_FINITE | FF_NONNEG, struct proto_lateness, p99_us),
        FIELD("p999Us", FT_F64, FF_FINITE | FF_NONNEG, struct proto_lateness, p999_us),
        FIELD("maxUs", FT_F64, FF_FINITE | FF_NONNEG, struct proto_lateness, max_us),
};

/* The first PROTO_N_LIVE_INST_FIELDS change while a session runs: telemetry's instance keys. */
const struct field status_inst_fields[PROTO_N_INST_FIELDS] = {
        FIELD("name", FT_STR, FF_REQ, struct proto_inst_status, name),
        FIELD("steps", FT_U64, 0, struct proto_inst_status, steps),
        FIELD("stepUsMean", FT_F64, 0, struct proto_inst_status, step_us_mean),
        FIELD("stepUsMax", FT_F64, 0, struct proto_inst_status, step_us_max),
        FIELD("serviceUsMean", FT_F64, 0, struct proto_inst_status, service_us_mean),
        FIELD("fmu", FT_STR, 0, struct proto_inst_status, fmu),
        FIELD("pid", FT_I64, 0, struct proto_inst_status, pid),
        FIELD("multirate", FT_U32, 0, struct proto_inst_status, multirate),
        FIELD("fault", FT_STR, 0, struct proto_inst_status, fault),
        FIELD_HAS("tolerance", FT_F64, FF_FINITE, struct proto_inst_status, tolerance,
                  has_tolerance),
        FIELD("integrator", FT_STR, FF_NAME | FF_OMIT, struct proto_inst_status, integrator),
        FIELD_HAS("integratorSteps", FT_U64, 0, struct proto_inst_status, me_steps, has_integrator),
        FIELD_HAS("rhsEvaluations", FT_U64, 0, struct proto_inst_status, me_rhs_evals,
                  has_integrator),
        FIELD_HAS("rootEvaluations", FT_U64, 0, struct proto_inst_status, me_root_evals,
                  has_integrator),
        FIELD_HAS("jacobianEvaluations", FT_U64, 0, struct proto_inst_status, me_jac_evals,
                  has_integrator),
        FIELD_HAS("integratorEvents", FT_U64, 0, struct proto_inst_status, me_events,
                  has_integrator),
        FIELD_HAS("eventIterations", FT_U64, 0, struct proto_inst_status, me_event_iterations,
                  has_integrator),
        FIELD("partitions", FT_STR, FF_OMIT, struct proto_inst_status, partitions),
        FIELD_EXT("sandbox"),
};

static const struct field rt_fields[] = {
        FIELD("option", FT_STR, FF_REQ | FF_NAME, struct proto_rt_option, name),
        FIELD("state", FT_STR, FF_REQ, struct proto_rt_option, state),
        FIELD("instance", FT_STR, FF_NAME | FF_OMIT, struct proto_rt_option, instance),
};

static const struct field layer_fields[] = {
        FIELD("layer", FT_STR, FF_REQ, struct proto_layer, name),
        FIELD("state", FT_LSTATE, FF_REQ, struct proto_layer, state),
        FIELD("detail", FT_STR, 0, struct proto_layer, detail),
};

void proto_session_status_encode(struct pw *w, const struct proto_session_status *r)
{
        res_encode(w, status_fields, N_FIELDS(status_fields), r, 4 + r->has_rig);
        if (r->has_rig) {
                pw_str(w, "rig");
                res_encode(w, rig_fields, N_FIELDS(rig_fields), &r->rig, 0);
        }
        pw_str(w, "lateness");
        res_encode(w, status_lateness_fields, PROTO_N_LATENESS_FIELDS, &r->lateness, 0);
        pw_str(w, "latenessWindow");
        res_encode(w, status_lateness_fields, PROTO_N_LATENESS_FIELDS, &r->lateness_window, 0);
        pw_str(w, "realtime");
        pw_array(w, r->n_realtime);
        for (uint32_t i = 0; i < r->n_realtime; i++)
                res_encode(w, rt_fields, N_FIELDS(rt_fields), &r->realtime[i], 0);
        pw_str(w, "instances");
        pw_array(w, r->n_insts);
        for (uint32_t i = 0; i < r->n_insts; i++) {
                const struct proto_inst_status *in = &r->insts[i];

                res_encode(w, status_inst_fields, PROTO_N_INST_FIELDS, in, 1);
                pw_str(w, "sandbox");
                pw_array(w, in->n_layers);
                for (uint32_t j = 0; j < in->n_layers; j++)
                        res_encode(w, layer_fields, N_FIELDS(layer_fields), &in->layers[j], 0);
        }
}

/* Check the instances' shape and count all their layers. */
static int insts_check(const struct pv *a, size_t *ret_layers, char *err, size_t errlen)
{
        size_t layers = 0;
        char what[48];
        int n;

        for (uint32_t i = 0; i < a->a.n; i++) {
                const struct pv *in = &a->a.items[i];

                snprintf(what, sizeof(what), "result.instances[%u]", i);
                if (in->type != PV_MAP)
                        return proto_fail(err, errlen, "%s: expected a map", what);
                n = array_check(pv_get(in, "sandbox"), what, "sandbox", MAX_LAYERS, false, err,
                                errlen);
                if (n < 0)
                        return n;
                layers += (size_t)n;
        }
        *ret_layers = layers;
        return 0;
}

static int inst_decode(const struct pv *in, uint32_t i, struct proto_inst_status *out,
                       struct proto_layer *layers, char *err, size_t errlen)
{
        const struct pv *sb = pv_get(in, "sandbox");
        char what[64];
        int r;

        snprintf(what, sizeof(what), "result.instances[%u]", i);
        r = res_decode(in, what, status_inst_fields, PROTO_N_INST_FIELDS, out, err, errlen);
        if (r < 0)
                return r;
        out->n_layers = sb ? sb->a.n : 0;
        out->layers = out->n_layers ? layers : NULL;
        for (uint32_t j = 0; j < out->n_layers; j++) {
                snprintf(what, sizeof(what), "result.instances[%u].sandbox[%u]", i, j);
                r = res_decode(&sb->a.items[j], what, layer_fields, N_FIELDS(layer_fields),
                               &layers[j], err, errlen);
                if (r < 0)
                        return r;
        }
        return 0;
}

int proto_session_status_decode(const struct pv *v, struct proto_session_status *ret, void **mem,
                                char *err, size_t errlen)
{
        struct proto_session_status s = { 0 };
        struct proto_inst_status *insts = NULL;
        struct proto_rt_option *rts;
        struct proto_layer *layers;
        size_t n_layers = 0;
        const struct pv *a, *rt = pv_get(v, "realtime");
        char what[48];
        int n, n_rt, r;

        *mem = NULL;
        r = res_decode(v, "result", status_fields, N_FIELDS(status_fields), &s, err, errlen);
        if (r < 0)
                return r;
        /* Both optional (an older daemon's status has neither); maps when there. */
        a = pv_get(v, "lateness");
        if (a && (r = res_decode(a, "result.lateness", status_lateness_fields,
                                 PROTO_N_LATENESS_FIELDS, &s.lateness, err, errlen)) < 0)
                return r;
        a = pv_get(v, "rig");
        if (a && (r = res_decode(a, "result.rig", rig_fields, N_FIELDS(rig_fields), &s.rig, err,
                                 errlen)) < 0)
                return r;
        s.has_rig = a != NULL;
        a = pv_get(v, "latenessWindow");
        if (a && (r = res_decode(a, "result.latenessWindow", status_lateness_fields,
                                 PROTO_N_LATENESS_FIELDS, &s.lateness_window, err, errlen)) < 0)
                return r;
        a = pv_get(v, "instances");
        n = array_check(a, "result", "instances", MAX_INSTANCES, false, err, errlen);
        if (n < 0)
                return n;
        n_rt = array_check(rt, "result", "realtime", MAX_RT, false, err, errlen);
        if (n_rt < 0)
                return n_rt;
        if (n) {
                r = insts_check(a, &n_layers, err, errlen);
                if (r < 0)
                        return r;
        }
        if (n + n_rt) {
                /* Every struct here holds pointers only: the layers and options follow the instances. */
                insts = calloc(1, (size_t)n * sizeof(*insts) + n_layers * sizeof(*layers) +
                                  (size_t)n_rt * sizeof(*rts));
                if (!insts) {
                        proto_fail(err, errlen, "out of memory");
                        return -ENOMEM;
                }
        }
        /* Only with a block: NULL + 0 is undefined behaviour. */
        layers = insts ? (struct proto_layer *)(void *)(insts + n) : NULL;
        rts = insts ? (struct proto_rt_option *)(void *)(layers + n_layers) : NULL;
        for (int i = 0; i < n; i++) {
                r = inst_decode(&a->a.items[i], (uint32_t)i, &insts[i], layers, err, errlen);
                if (r < 0) {
                        free(insts);
                        return r;
                }
                layers += insts[i].n_layers;
        }
        for (int i = 0; i < n_rt; i++) {
                snprintf(what, sizeof(what), "result.realtime[%d]", i);
                r = res_decode(&rt->a.items[i], what, rt_fields, N_FIELDS(rt_fields), &rts[i],
                               err, errlen);
                if (r < 0) {
                        free(insts);
                        return r;
                }
        }
        s.n_insts = (uint32_t)n;
        s.insts = n ? insts : NULL;
        s.n_realtime = (uint32_t)n_rt;
        s.realtime = n_rt ? rts : NULL;
        *mem = insts;
        *ret = s;
        return 0;
}

/* ---- the daemon ---- */

static const struct field daemon_fields[] = {
        FIELD("version", FT_U32, FF_REQ, struct proto_daemon_status, version),
        FIELD("server", FT_STR, 0, struct proto_daemon_status, server),
        FIELD("uptime", FT_F64, 0, struct proto_daemon_status, uptime_s),
        FIELD("sessions", FT_U32, 0, struct proto_daemon_status, sessions),
        FIELD("workers", FT_U32, 0, struct proto_daemon_status, workers),
        FIELD("sandbox", FT_STR, 0, struct proto_daemon_status, sandbox),
        FIELD("mlock", FT_STR, FF_OMIT, struct proto_daemon_status, mlock),
        FIELD("workerMlockBudget", FT_U64, 0, struct proto_daemon_status, mlock_budget),
        FIELD("workerMlockUsed", FT_U64, 0, struct proto_daemon_status, mlock_used),
};

void proto_daemon_status_encode(struct pw *w, const struct proto_daemon_status *r)
{
        res_encode(w, daemon_fields, N_FIELDS(daemon_fields), r, 0);
}

int proto_daemon_status_decode(const struct pv *v, struct proto_daemon_status *ret, char *err,
                               size_t errlen)
{
        struct proto_daemon_status a = { 0 };
        int r;

        r = res_decode(v, "result", daemon_fields, N_FIELDS(daemon_fields), &a, err, errlen);
        if (r < 0)
                return r;
        *ret = a;
        return 0;
}
