/*
 * ops_telemetry: the telemetry a paced session publishes on topic
 * "t<session>" (PROTOCOL.md section 7): its pacing figures under the keys
 * status uses for them, so a client reads either with the same code.
 * Subscribers decode it like a result: unknown keys are ignored, and
 * everything but the session, generation and time is optional.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "proto/proto.h"
#include "proto/proto_int.h"

static const struct field telemetry_fields[] = {
        FIELD("session", FT_U64, FF_REQ, struct proto_telemetry, session),
        FIELD("generation", FT_U64, FF_REQ, struct proto_telemetry, generation),
        FIELD("time", FT_F64, FF_REQ, struct proto_telemetry, time),
        FIELD("points", FT_U64, 0, struct proto_telemetry, points),
        FIELD("realTimeFactor", FT_F64, 0, struct proto_telemetry, real_time_factor),
        FIELD("warp", FT_F64, 0, struct proto_telemetry, warp),
        FIELD("overruns", FT_U64, 0, struct proto_telemetry, overruns),
        FIELD("dropped", FT_U64, 0, struct proto_telemetry, dropped),
        FIELD_EXT("lateness"),
        FIELD_EXT("latenessWindow"),
        FIELD_EXT("instances"),
};

/*
 * Status's tables (ops_status.c): its lateness keys, and of its instance
 * keys the first PROTO_N_LIVE_INST_FIELDS, those that change while a
 * session runs.
 */

void proto_telemetry_encode(struct pw *w, const struct proto_telemetry *t)
{
        res_encode(w, telemetry_fields, N_FIELDS(telemetry_fields), t, 3);
        pw_str(w, "lateness");
        res_encode(w, status_lateness_fields, PROTO_N_LATENESS_FIELDS, &t->lateness, 0);
        pw_str(w, "latenessWindow");
        res_encode(w, status_lateness_fields, PROTO_N_LATENESS_FIELDS, &t->lateness_window, 0);
        pw_str(w, "instances");
        pw_array(w, t->n_insts);
        for (uint32_t i = 0; i < t->n_insts; i++)
                res_encode(w, status_inst_fields, PROTO_N_LIVE_INST_FIELDS, &t->insts[i], 0);
}

static int lateness_decode(const struct pv *v, const char *key, struct proto_lateness *ret,
                           char *err, size_t errlen)
{
        const struct pv *a = pv_get(v, key);
        char what[32];

        if (!a)
                return 0;
        snprintf(what, sizeof(what), "telemetry.%s", key);
        return res_decode(a, what, status_lateness_fields, PROTO_N_LATENESS_FIELDS, ret, err,
                          errlen);
}

int proto_telemetry_decode(const struct pv *v, struct proto_telemetry *ret, void **mem, char *err,
                           size_t errlen)
{
        struct proto_telemetry t = { 0 };
        struct proto_inst_status *insts = NULL;
        const struct pv *a;
        char what[48];
        int r;

        *mem = NULL;
        r = res_decode(v, "telemetry", telemetry_fields, N_FIELDS(telemetry_fields), &t, err,
                       errlen);
        if (r == 0)
                r = lateness_decode(v, "lateness", &t.lateness, err, errlen);
        if (r == 0)
                r = lateness_decode(v, "latenessWindow", &t.lateness_window, err, errlen);
        if (r < 0)
                return r;
        a = pv_get(v, "instances");
        if (a && a->type != PV_ARRAY)
                return proto_fail(err, errlen, "telemetry.instances: expected an array");
        if (a && a->a.n > PROTO_MAX_NAMES)
                return proto_fail(err, errlen, "telemetry.instances: more than %u entries",
                                  (unsigned)PROTO_MAX_NAMES);
        if (a && a->a.n) {
                insts = calloc(a->a.n, sizeof(*insts));
                if (!insts) {
                        proto_fail(err, errlen, "out of memory");
                        return -ENOMEM;
                }
                for (uint32_t i = 0; i < a->a.n; i++) {
                        snprintf(what, sizeof(what), "telemetry.instances[%u]", i);
                        r = res_decode(&a->a.items[i], what, status_inst_fields,
                                       PROTO_N_LIVE_INST_FIELDS, &insts[i], err, errlen);
                        if (r < 0) {
                                free(insts);
                                return r;
                        }
                }
                t.n_insts = a->a.n;
        }
        t.insts = insts;
        *mem = insts;
        *ret = t;
        return 0;
}
