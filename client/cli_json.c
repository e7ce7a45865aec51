/*
 * cli_json: the daemon's results as JSON (json-c) and as one-line text
 * (cli.h). Keys are camelCase, as in `fmuctl inspect --json`.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "proto/utf8.h"

void cli_json_print(struct json_object *obj)
{
        puts(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY |
                                                 JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(obj);
}

struct json_object *cli_json_str(struct proto_str s)
{
        return json_object_new_string_len(s.ptr ? s.ptr : "", (int)s.len);
}

/*
 * Numbers in the shortest form that reads back exactly (0.2, not
 * 0.20000000000000001). JSON has no inf or nan: they become strings.
 */
struct json_object *cli_json_double(double d)
{
        struct pv v = { .type = PV_FLOAT, .f = d };
        char buf[64];

        if (isnan(d))
                return json_object_new_string("nan");
        if (isinf(d))
                return json_object_new_string(d < 0 ? "-inf" : "inf");
        fmud_value_format(&v, buf, sizeof(buf));
        return json_object_new_double_s(d, buf);
}

/* Binary: lowercase hex without a prefix, as the results CSV writes it. */
static struct json_object *json_hex(const struct pv *v)
{
        static const char digits[] = "0123456789abcdef";
        struct json_object *o;
        char *hex = malloc(2 * (size_t)v->s.len + 1);

        if (!hex)
                return NULL;
        for (uint32_t i = 0; i < v->s.len; i++) {
                hex[2 * i] = digits[(unsigned char)v->s.ptr[i] >> 4];
                hex[2 * i + 1] = digits[(unsigned char)v->s.ptr[i] & 15];
        }
        o = json_object_new_string_len(hex, (int)(2 * v->s.len));
        free(hex);
        return o;
}

struct json_object *cli_json_value(const struct pv *v)
{
        struct json_object *o;

        switch (v->type) {
        case PV_BOOL: return json_object_new_boolean(v->b);
        case PV_INT: return json_object_new_int64(v->i);
        case PV_UINT: return json_object_new_uint64(v->u);
        case PV_FLOAT: return cli_json_double(v->f);
        case PV_STR: return json_object_new_string_len(v->s.ptr, (int)v->s.len);
        case PV_ARRAY:
                o = json_object_new_array_ext((int)v->a.n);
                for (uint32_t i = 0; i < v->a.n; i++)
                        json_object_array_add(o, cli_json_value(&v->a.items[i]));
                return o;
        case PV_MAP:
                o = json_object_new_object();
                for (uint32_t i = 0; i < v->m.n; i++) {
                        const struct pv *k = v->m.kv[i].key;
                        char key[256];

                        if (k->type != PV_STR)
                                continue;
                        fmud_str((struct proto_str){ k->s.ptr, k->s.len }, key, sizeof(key));
                        json_object_object_add(o, key, cli_json_value(v->m.kv[i].val));
                }
                return o;
        case PV_BIN: return json_hex(v);
        case PV_NIL:
        default:
                return NULL;
        }
}

static const char *state_name(enum proto_state s)
{
        const char *n = proto_state_name(s);

        return n ? n : "unknown";
}

struct json_object *cli_json_progress(const struct proto_progress *p)
{
        struct json_object *o = json_object_new_object();

        json_object_object_add(o, "state", json_object_new_string(state_name(p->state)));
        json_object_object_add(o, "time", cli_json_double(p->time));
        json_object_object_add(o, "points", json_object_new_uint64(p->points));
        json_object_object_add(o, "message", cli_json_str(p->message));
        return o;
}

static const char *layer_state(enum proto_layer_state s)
{
        const char *n = proto_layer_state_name(s);

        return n ? n : "unknown";
}

static struct json_object *inst_json(const struct proto_inst_status *in)
{
        struct json_object *o = json_object_new_object(), *layers;

        json_object_object_add(o, "name", cli_json_str(in->name));
        json_object_object_add(o, "fmu", cli_json_str(in->fmu));
        json_object_object_add(o, "pid", json_object_new_int64(in->pid));
        json_object_object_add(o, "multirate", json_object_new_uint64(in->multirate));
        json_object_object_add(o, "steps", json_object_new_uint64(in->steps));
        json_object_object_add(o, "stepUsMean", cli_json_double(in->step_us_mean));
        json_object_object_add(o, "stepUsMax", cli_json_double(in->step_us_max));
        json_object_object_add(o, "serviceUsMean", cli_json_double(in->service_us_mean));
        json_object_object_add(o, "fault", cli_json_str(in->fault));
        /* null: the FMU was given no tolerance (toleranceDefined = false) */
        json_object_object_add(o, "tolerance", in->has_tolerance ? cli_json_double(in->tolerance)
                                                                 : NULL);
        if (in->partitions.len)
                json_object_object_add(o, "partitions", cli_json_str(in->partitions));
        /* A Model Exchange FMU integrated in its worker: the integrator and its counts. */
        if (in->has_integrator) {
                json_object_object_add(o, "integrator", cli_json_str(in->integrator));
                json_object_object_add(o, "integratorSteps", json_object_new_uint64(in->me_steps));
                json_object_object_add(o, "rhsEvaluations", json_object_new_uint64(in->me_rhs_evals));
                json_object_object_add(o, "rootEvaluations",
                                       json_object_new_uint64(in->me_root_evals));
                json_object_object_add(o, "jacobianEvaluations",
                                       json_object_new_uint64(in->me_jac_evals));
                json_object_object_add(o, "integratorEvents", json_object_new_uint64(in->me_events));
                json_object_object_add(o, "eventIterations",
                                       json_object_new_uint64(in->me_event_iterations));
        }
        layers = json_object_new_array_ext((int)in->n_layers);
        for (uint32_t i = 0; i < in->n_layers; i++) {
                const struct proto_layer *l = &in->layers[i];
                struct json_object *lo = json_object_new_object();

                json_object_object_add(lo, "name", cli_json_str(l->name));
                json_object_object_add(lo, "state", json_object_new_string(layer_state(l->state)));
                json_object_object_add(lo, "detail", cli_json_str(l->detail));
                json_object_array_add(layers, lo);
        }
        json_object_object_add(o, "sandbox", layers);
        return o;
}

static struct json_object *lateness(const struct proto_lateness *l)
{
        struct json_object *o = json_object_new_object();

        json_object_object_add(o, "p50Us", cli_json_double(l->p50_us));
        json_object_object_add(o, "p99Us", cli_json_double(l->p99_us));
        json_object_object_add(o, "p999Us", cli_json_double(l->p999_us));
        json_object_object_add(o, "maxUs", cli_json_double(l->max_us));
        return o;
}

struct json_object *cli_json_session_status(const struct proto_session_status *s)
{
        struct json_object *o = json_object_new_object(), *insts, *rt;

        json_object_object_add(o, "session", json_object_new_uint64(s->session));
        json_object_object_add(o, "generation", json_object_new_uint64(s->generation));
        json_object_object_add(o, "name", cli_json_str(s->name));
        json_object_object_add(o, "state", json_object_new_string(state_name(s->state)));
        json_object_object_add(o, "time", cli_json_double(s->time));
        json_object_object_add(o, "start", cli_json_double(s->start));
        json_object_object_add(o, "stop", cli_json_double(s->stop));
        json_object_object_add(o, "step", cli_json_double(s->step));
        json_object_object_add(o, "budget", cli_json_double(s->budget));
        json_object_object_add(o, "points", json_object_new_uint64(s->points));
        json_object_object_add(o, "extraPoints", json_object_new_uint64(s->extra_points));
        json_object_object_add(o, "events", json_object_new_uint64(s->events));
        json_object_object_add(o, "chainedSteps", json_object_new_uint64(s->chained_steps));
        json_object_object_add(o, "workerMoves", json_object_new_uint64(s->worker_moves));
        json_object_object_add(o, "realTimeFactor", cli_json_double(s->real_time_factor));
        json_object_object_add(o, "warp", cli_json_double(s->warp));
        json_object_object_add(o, "lagS", cli_json_double(s->lag_s));
        json_object_object_add(o, "lagMaxS", cli_json_double(s->lag_max_s));
        json_object_object_add(o, "lateness", lateness(&s->lateness));
        json_object_object_add(o, "latenessWindow", lateness(&s->lateness_window));
        json_object_object_add(o, "overruns", json_object_new_uint64(s->overruns));
        json_object_object_add(o, "overrun", cli_json_str(s->overrun));
        json_object_object_add(o, "message", cli_json_str(s->message));
        json_object_object_add(o, "recorder", cli_json_str(s->recorder));
        json_object_object_add(o, "rowsRecorded", json_object_new_uint64(s->rows_recorded));
        json_object_object_add(o, "rowsDropped", json_object_new_uint64(s->rows_dropped));
        json_object_object_add(o, "samplesDropped", json_object_new_uint64(s->samples_dropped));
        json_object_object_add(o, "results", cli_json_str(s->results));
        if (s->out.len)
                json_object_object_add(o, "out", cli_json_str(s->out));
        json_object_object_add(o, "sandbox", cli_json_str(s->sandbox));
        json_object_object_add(o, "transient", json_object_new_boolean(s->transient));
        if (s->transient)
                json_object_object_add(o, "owner", cli_json_str(s->owner));
        if (s->user.len)
                json_object_object_add(o, "user", cli_json_str(s->user));
        insts = json_object_new_array_ext((int)s->n_insts);
        for (uint32_t i = 0; i < s->n_insts; i++)
                json_object_array_add(insts, inst_json(&s->insts[i]));
        json_object_object_add(o, "instances", insts);
        rt = json_object_new_array_ext((int)s->n_realtime);
        for (uint32_t i = 0; i < s->n_realtime; i++) {
                struct json_object *e = json_object_new_object();

                json_object_object_add(e, "option", cli_json_str(s->realtime[i].name));
                json_object_object_add(e, "state", cli_json_str(s->realtime[i].state));
                if (s->realtime[i].instance.len)
                        json_object_object_add(e, "instance",
                                               cli_json_str(s->realtime[i].instance));
                json_object_array_add(rt, e);
        }
        json_object_object_add(o, "realtime", rt);
        if (s->has_rig) {
                struct json_object *g = json_object_new_object();

                json_object_object_add(g, "state", cli_json_str(s->rig.state));
                json_object_object_add(g, "policy", cli_json_str(s->rig.policy));
                json_object_object_add(g, "inForce", json_object_new_boolean(s->rig.in_force));
                json_object_object_add(g, "applied", json_object_new_uint64(s->rig.applied));
                json_object_object_add(g, "late", json_object_new_uint64(s->rig.late));
                json_object_object_add(g, "missing", json_object_new_uint64(s->rig.missing));
                json_object_object_add(g, "dropped", json_object_new_uint64(s->rig.dropped));
                json_object_object_add(g, "bad", json_object_new_uint64(s->rig.bad));
                json_object_object_add(o, "rig", g);
        }
        return o;
}

struct json_object *cli_json_daemon_status(const struct proto_daemon_status *s)
{
        struct json_object *o = json_object_new_object();

        json_object_object_add(o, "version", json_object_new_uint64(s->version));
        json_object_object_add(o, "server", cli_json_str(s->server));
        json_object_object_add(o, "uptime", cli_json_double(s->uptime_s));
        json_object_object_add(o, "sessions", json_object_new_uint64(s->sessions));
        json_object_object_add(o, "workers", json_object_new_uint64(s->workers));
        json_object_object_add(o, "workerMlockBudget", json_object_new_uint64(s->mlock_budget));
        json_object_object_add(o, "workerMlockUsed", json_object_new_uint64(s->mlock_used));
        json_object_object_add(o, "sandbox", cli_json_str(s->sandbox));
        if (s->mlock.len)
                json_object_object_add(o, "mlock", cli_json_str(s->mlock));
        return o;
}

void cli_put_clean(FILE *f, const char *s, size_t len)
{
        uint32_t cp;
        size_t k;

        for (size_t i = 0; i < len; i += k) {
                k = utf8_decode(s + i, len - i, &cp);
                if (k && !utf8_is_control(cp)) {
                        fwrite(s + i, 1, k, f);
                        continue;
                }
                /* A C1 control is one '?' for its two bytes; an invalid byte, one each. */
                k = k ? k : 1;
                fputc(s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?', f);
        }
}

void cli_print_progress(uint64_t session, const struct proto_progress *p)
{
        printf("session %llu: %s, t = %.9g, %llu points", (unsigned long long)session,
               state_name(p->state), p->time, (unsigned long long)p->points);
        if (p->message.len) {
                fputs(" (", stdout);
                cli_put_clean(stdout, p->message.ptr, p->message.len);
                fputc(')', stdout);
        }
        putchar('\n');
}

bool cli_log_shown(int status, const char *category, size_t len)
{
        if (status > 0 && status < 5)
                return true;
        return status == 0 && category && len == 6 &&
               (!memcmp(category, "stdout", 6) || !memcmp(category, "stderr", 6));
}

void cli_print_log(FILE *f, const struct proto_log *l)
{
        static const char *const level[] = { "info", "warning", "discard", "error", "fatal" };

        cli_put_clean(f, l->instance.ptr, l->instance.len);
        fprintf(f, ": %s [", l->status < 5 ? level[l->status] : "?");
        cli_put_clean(f, l->category.ptr, l->category.len);
        fputs("]: ", f);
        cli_put_clean(f, l->message.ptr, l->message.len);
        fputc('\n', f);
}
