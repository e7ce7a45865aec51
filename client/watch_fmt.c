/*
 * watch_fmt: a sample's stamps and flags and a session's telemetry for
 * `fmuctl watch` (watch_fmt.h), in text and as JSON lines. Names and
 * strings from the daemon are printed through cli_put_clean() in text and
 * escaped by json-c in JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "watch_fmt.h"

static const struct {
        uint32_t bit;
        const char *name;
} flag_names[] = {
        { PROTO_SAMPLE_FIRST, "first" },
        { PROTO_SAMPLE_DROPPED, "dropped" },
        { PROTO_SAMPLE_RESTORED, "restored" },
        { PROTO_SAMPLE_EXTRA, "extra" },
        { PROTO_SAMPLE_EVENT_LEFT, "eventLeft" },
        { PROTO_SAMPLE_UNRECORDED, "unrecorded" },
};

#define N_FLAGS (sizeof(flag_names) / sizeof(flag_names[0]))

const char *watch_flags(uint32_t flags, char *buf, size_t len)
{
        size_t at = 0;

        if (!len)
                return buf;
        buf[0] = '\0';
        for (size_t i = 0; i < N_FLAGS; i++) {
                int n;

                if (!(flags & flag_names[i].bit))
                        continue;
                n = snprintf(buf + at, len - at, "%s%s", at ? "," : "", flag_names[i].name);
                if (n < 0 || (size_t)n >= len - at)
                        break;
                at += (size_t)n;
        }
        if (!at)
                snprintf(buf, len, "-");
        return buf;
}

static void put_line(struct json_object *o)
{
        puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                               JSON_C_TO_STRING_NOSLASHESCAPE));
        fflush(stdout);
        json_object_put(o);
}

void watch_json_sample(const struct proto_sample *s)
{
        struct json_object *o = json_object_new_object(), *f = json_object_new_array();
        struct json_object *v = json_object_new_object();
        char key[32];

        json_object_object_add(o, "session", json_object_new_uint64(s->session));
        json_object_object_add(o, "generation", json_object_new_uint64(s->generation));
        json_object_object_add(o, "time", cli_json_double(s->time));
        json_object_object_add(o, "point", json_object_new_uint64(s->point));
        json_object_object_add(o, "monoNs", json_object_new_uint64(s->mono_ns));
        json_object_object_add(o, "realNs", json_object_new_uint64(s->real_ns));
        for (size_t i = 0; i < N_FLAGS; i++)
                if (s->flags & flag_names[i].bit)
                        json_object_array_add(f, json_object_new_string(flag_names[i].name));
        json_object_object_add(o, "flags", f);
        for (uint32_t i = 0; i < s->n; i++) {
                struct json_object *x = cli_json_value(&s->values->a.items[i]);
                /* A name may hold anything: json-c escapes it. */
                char *name = s->names ? strndup(s->names[i].ptr, s->names[i].len) : NULL;

                if (!name)
                        snprintf(key, sizeof(key), "#%u", i);
                json_object_object_add(v, name ? name : key, x);
                free(name);
        }
        json_object_object_add(o, "values", v);
        put_line(o);
}

static struct json_object *lateness_json(const struct proto_lateness *l)
{
        struct json_object *o = json_object_new_object();

        json_object_object_add(o, "p50Us", cli_json_double(l->p50_us));
        json_object_object_add(o, "p99Us", cli_json_double(l->p99_us));
        json_object_object_add(o, "p999Us", cli_json_double(l->p999_us));
        json_object_object_add(o, "maxUs", cli_json_double(l->max_us));
        return o;
}

void watch_json_telemetry(const struct proto_telemetry *t)
{
        struct json_object *o = json_object_new_object(), *a = json_object_new_array();

        json_object_object_add(o, "session", json_object_new_uint64(t->session));
        json_object_object_add(o, "generation", json_object_new_uint64(t->generation));
        json_object_object_add(o, "time", cli_json_double(t->time));
        json_object_object_add(o, "points", json_object_new_uint64(t->points));
        json_object_object_add(o, "realTimeFactor", cli_json_double(t->real_time_factor));
        json_object_object_add(o, "warp", cli_json_double(t->warp));
        json_object_object_add(o, "overruns", json_object_new_uint64(t->overruns));
        json_object_object_add(o, "dropped", json_object_new_uint64(t->dropped));
        json_object_object_add(o, "lateness", lateness_json(&t->lateness));
        json_object_object_add(o, "latenessWindow", lateness_json(&t->lateness_window));
        for (uint32_t i = 0; i < t->n_insts; i++) {
                const struct proto_inst_status *in = &t->insts[i];
                struct json_object *x = json_object_new_object();

                json_object_object_add(x, "name", cli_json_str(in->name));
                json_object_object_add(x, "steps", json_object_new_uint64(in->steps));
                json_object_object_add(x, "stepUsMean", cli_json_double(in->step_us_mean));
                json_object_object_add(x, "stepUsMax", cli_json_double(in->step_us_max));
                json_object_object_add(x, "serviceUsMean", cli_json_double(in->service_us_mean));
                json_object_array_add(a, x);
        }
        json_object_object_add(o, "instances", a);
        put_line(o);
}

void watch_text_telemetry(const struct proto_telemetry *t)
{
        printf("t = %.9g points %llu rtf %.3g lateness p50/p99/p999/max %.0f/%.0f/%.0f/%.0f us "
               "(window %.0f/%.0f/%.0f/%.0f) overruns %llu", t->time,
               (unsigned long long)t->points, t->real_time_factor, t->lateness.p50_us,
               t->lateness.p99_us, t->lateness.p999_us, t->lateness.max_us,
               t->lateness_window.p50_us, t->lateness_window.p99_us, t->lateness_window.p999_us,
               t->lateness_window.max_us, (unsigned long long)t->overruns);
        for (uint32_t i = 0; i < t->n_insts; i++) {
                putchar(' ');
                cli_put_clean(stdout, t->insts[i].name.ptr, t->insts[i].name.len);
                printf("=%.1fus", t->insts[i].service_us_mean);
        }
        if (t->dropped)
                printf(" (%llu telemetry messages lost)", (unsigned long long)t->dropped);
        putchar('\n');
        fflush(stdout);
}
