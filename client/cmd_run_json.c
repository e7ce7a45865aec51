/*
 * cmd_run_json: fmuctl run --json, the summary as one JSON object on
 * stdout (cmd_run.h), with the same keys whether the run went through a
 * daemon (from its final status) or --local (from engine/run's report).
 *
 * DESIGN: the keys are status --json's where they mean the same
 * (camelCase; numbers that are not finite as strings, cli_json_double());
 * what only one way knows (the daemon's lateness) is left out rather than
 * given a made-up value, so a reader sees the same object both ways.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_run.h"
#include "commands.h"
#include "engine/engine.h"

static void add(struct json_object *o, const char *k, struct json_object *v)
{
        json_object_object_add(o, k, v);
}

static struct json_object *head(const char *scenario, const char *name, size_t name_len,
                                const char *state)
{
        struct json_object *o = json_object_new_object();

        add(o, "scenario", json_object_new_string(scenario));
        add(o, "name", json_object_new_string_len(name, (int)name_len));
        add(o, "state", json_object_new_string(state ? state : "unknown"));
        return o;
}

static struct json_object *inst(const char *name, size_t name_len, const char *fmu, size_t fmu_len,
                                uint32_t multirate, uint64_t steps, double mean, double max,
                                bool has_tol, double tol)
{
        struct json_object *o = json_object_new_object();

        add(o, "name", json_object_new_string_len(name, (int)name_len));
        add(o, "fmu", json_object_new_string_len(fmu, (int)fmu_len));
        add(o, "multirate", json_object_new_uint64(multirate));
        add(o, "steps", json_object_new_uint64(steps));
        add(o, "stepUsMean", cli_json_double(mean));
        add(o, "stepUsMax", cli_json_double(max));
        add(o, "tolerance", has_tol ? cli_json_double(tol) : NULL);
        return o;
}

void run_json_results(struct json_object *js, const char *out, uint64_t rows, size_t cols,
                      const char *backend, size_t backend_len, uint64_t dropped)
{
        struct json_object *o = json_object_new_object();

        add(o, "out", json_object_new_string(out));
        add(o, "rows", json_object_new_uint64(rows));
        add(o, "columns", json_object_new_uint64(cols));
        add(o, "recorder", json_object_new_string_len(backend, (int)backend_len));
        add(o, "rowsDropped", json_object_new_uint64(dropped));
        add(js, "results", o);
}

void run_json_finish(struct json_object *js, int code)
{
        add(js, "exitCode", json_object_new_int(code));
        cli_json_print(js);
}

struct json_object *run_json_local(const struct run_report *rep, const char *scenario,
                                  const char *out)
{
        struct json_object *o = head(scenario, rep->name ? rep->name : "",
                                     rep->name ? strlen(rep->name) : 0,
                                     master_state_name(rep->state));
        struct json_object *insts = json_object_new_array();

        add(o, "start", cli_json_double(rep->start));
        add(o, "stop", cli_json_double(rep->stop));
        add(o, "step", cli_json_double(rep->step));
        add(o, "time", cli_json_double(rep->time));
        add(o, "points", json_object_new_uint64(rep->points));
        add(o, "extraPoints", json_object_new_uint64(rep->extra_points));
        add(o, "events", json_object_new_uint64(rep->events));
        add(o, "wallS", cli_json_double(rep->wall_s));
        add(o, "realTimeFactor", cli_json_double(rep->rtf));
        add(o, "chainedSteps", json_object_new_uint64(rep->chained));
        add(o, "workerMoves", json_object_new_uint64(rep->moves));
        for (size_t i = 0; i < rep->n_insts; i++) {
                const struct run_inst_report *in = &rep->insts[i];

                json_object_array_add(insts, inst(in->name, strlen(in->name), in->fmu,
                                                  strlen(in->fmu), in->multirate, in->steps,
                                                  in->step_us_mean, in->step_us_max,
                                                  in->tolerance_defined, in->tolerance));
        }
        add(o, "instances", insts);
        if (rep->backend)
                run_json_results(o, out, rep->rec.rows_written, rep->n_columns, rep->backend,
                                 strlen(rep->backend), rep->rec.dropped);
        return o;
}

struct json_object *run_json_daemon(const struct proto_session_status *s, const char *scenario,
                                   double wall_s)
{
        struct json_object *o = head(scenario, s->name.ptr ? s->name.ptr : "", s->name.len,
                                     proto_state_name(s->state));
        struct json_object *insts = json_object_new_array();

        add(o, "start", cli_json_double(s->start));
        add(o, "stop", cli_json_double(s->stop));
        add(o, "step", cli_json_double(s->step));
        add(o, "time", cli_json_double(s->time));
        add(o, "points", json_object_new_uint64(s->points));
        add(o, "extraPoints", json_object_new_uint64(s->extra_points));
        add(o, "events", json_object_new_uint64(s->events));
        add(o, "wallS", cli_json_double(wall_s));
        add(o, "realTimeFactor", cli_json_double(wall_s > 0 ? (s->time - s->start) / wall_s : 0.0));
        add(o, "chainedSteps", json_object_new_uint64(s->chained_steps));
        add(o, "workerMoves", json_object_new_uint64(s->worker_moves));
        for (uint32_t i = 0; i < s->n_insts; i++) {
                const struct proto_inst_status *in = &s->insts[i];

                json_object_array_add(insts, inst(in->name.ptr ? in->name.ptr : "", in->name.len,
                                                  in->fmu.ptr ? in->fmu.ptr : "", in->fmu.len,
                                                  in->multirate, in->steps, in->step_us_mean,
                                                  in->step_us_max, in->has_tolerance,
                                                  in->tolerance));
        }
        add(o, "instances", insts);
        return o;
}
