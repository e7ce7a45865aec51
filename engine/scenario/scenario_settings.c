/*
 * scenario_settings: fmud's own settings, from the org.fmud.settings
 * annotation and then from the caller's overrides (docs/scenarios.md):
 *
 *   <ssc:Annotation type="org.fmud.settings">
 *     <fmud:Settings stepSize="0.001" stepBudget="10" warp="1" decimation="10"
 *                    algorithm="gauss-seidel" order="mass1 mass2" tolerance="1e-6"
 *                    rollbackOnFault="true" rtPriority="50" rtWorkerPriority="49"
 *                    rtCpus="1" rtWorkerCpus="2-3" rtBestEffort="false" rtMlock="true"
 *                    overrun="soft" overrunMarginUs="500" spinUs="100"
 *                    rigInputs="ctrl.u=0 ctrl.mode" rigOutputs="plant.y"
 *                    rigPolicy="safe" rigTimeoutMs="50">
 *       <fmud:Component name="mass2" multirate="2"/>
 *       <fmud:GaussSeidel input="mass2.x1"/>
 *       <fmud:Record variable="mass1.x1"/>
 *     </fmud:Settings>
 *   </ssc:Annotation>
 *
 * DESIGN: an attribute or element fmud does not know is refused, not
 * skipped: a misspelt "stepsize" must not silently run with the default.
 * Values stay unchecked here apart from parsing; scenario_experiment.c
 * checks them after the overrides, so both are held to the same rules.
 */
#include "engine/scenario/scenario_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi/md_values.h"

static const char *const settings_attrs[] = {
        "version", "stepSize", "stepBudget", "warp", "decimation", "algorithm", "order", "tolerance",
        "rollbackOnFault", "rtPriority", "rtWorkerPriority", "rtCpus", "rtWorkerCpus",
        "rtBestEffort", "rtMlock", "overrun", "overrunMarginUs", "spinUs", "rigInputs", "rigOutputs",
        "rigPolicy", "rigTimeoutMs", NULL,
};

static bool known(const char *const *list, const char *name)
{
        for (; *list; list++)
                if (strcmp(*list, name) == 0)
                        return true;
        return false;
}

static int check_attrs(struct sc_load *l, const xmlNode *n, const char *const *allowed)
{
        int bad = 0;

        for (const xmlAttr *a = n->properties; a; a = a->next)
                if (!a->ns && !known(allowed, (const char *)a->name))
                        bad |= sc_err(l, l->label, mx_line(n), NULL, "<%s> has no attribute '%s' "
                                      "(docs/scenarios.md)", mx_name(n), (const char *)a->name) < 0;
        return bad ? -EINVAL : 0;
}

static int parse_algorithm(struct sc_load *l, const char *s, int line,
                           enum scenario_algorithm *ret)
{
        if (strcmp(s, "jacobi") == 0)
                *ret = SCENARIO_JACOBI;
        else if (strcmp(s, "gauss-seidel") == 0)
                *ret = SCENARIO_GAUSS_SEIDEL;
        else
                return sc_err(l, l->label, line, NULL,
                              "algorithm \"%s\": not jacobi or gauss-seidel", s);
        return 0;
}

/* A positive integer that fits in 32 bits, as multirate and decimation must be. */
static int parse_count(struct sc_load *l, const char *file, int line, const char *subject,
                       const char *what, const char *s, uint64_t *ret)
{
        if (mv_uint(s, UINT32_MAX, ret) < 0 || *ret == 0)
                return sc_err(l, file, line, subject, "%s \"%s\" is not a positive integer "
                              "(1 to 4294967295)", what, s);
        return 0;
}

static int set_multirate(struct sc_load *l, const char *file, int line, const char *comp,
                         const char *factor)
{
        uint64_t m;
        int i = scenario_find_component(l->s, comp);

        if (i < 0)
                return sc_err(l, file, line, comp, "unknown component (multirate)");
        if (parse_count(l, file, line, comp, "multirate factor", factor, &m) < 0)
                return -EINVAL;
        l->s->components[i].multirate = (uint32_t)m;
        return 0;
}

static int push(const char ***v, size_t *n, const char *s)
{
        const char **p = realloc(*v, (*n + 1) * sizeof(**v));

        if (!p)
                return -ENOMEM;
        p[(*n)++] = s;
        *v = p;
        return 0;
}

static int add_record(struct sc_settings *st, const char *name, char *origin)
{
        char **o = realloc(st->record_origins, (st->n_record + 1) * sizeof(*o));

        if (!o || !origin) {
                free(origin);
                if (o)
                        st->record_origins = o;
                return -ENOMEM;
        }
        st->record_origins = o;
        o[st->n_record] = origin;
        if (push(&st->record, &st->n_record, name) < 0) {
                free(origin);
                return -ENOMEM;
        }
        return 0;
}

static int child(struct sc_load *l, struct sc_settings *st, const xmlNode *c)
{
        static const char *const comp_attrs[] = { "name", "multirate", NULL };
        static const char *const gs_attrs[] = { "input", NULL };
        static const char *const rec_attrs[] = { "variable", NULL };
        struct mx *x = &l->doc.x;
        int line = mx_line(c);
        const char *a, *b;
        int *lines;

        if (mx_is(c, "Component")) {
                a = mx_attr(x, c, "name");
                b = mx_attr(x, c, "multirate");
                if (check_attrs(l, c, comp_attrs) < 0 || !a || !b)
                        return !a || !b ? ssd_missing(x, c, a ? "multirate" : "name") : -EINVAL;
                return set_multirate(l, l->label, line, a, b);
        }
        if (mx_is(c, "GaussSeidel")) {
                a = mx_attr(x, c, "input");
                if (check_attrs(l, c, gs_attrs) < 0 || !a)
                        return a ? -EINVAL : ssd_missing(x, c, "input");
                lines = realloc(st->sequential_lines, (st->n_sequential + 1) * sizeof(*lines));
                if (!lines)
                        return -ENOMEM;
                st->sequential_lines = lines;
                lines[st->n_sequential] = line;
                return push(&st->sequential, &st->n_sequential, a);
        }
        if (mx_is(c, "Record")) {
                a = mx_attr(x, c, "variable");
                if (check_attrs(l, c, rec_attrs) < 0 || !a)
                        return a ? -EINVAL : ssd_missing(x, c, "variable");
                return add_record(st, a, sc_origin(l->label, line));
        }
        return sc_err(l, l->label, line, NULL, "<%s> is not an fmud setting (docs/scenarios.md)",
                      mx_name(c));
}

static int double_attr(struct sc_load *l, const xmlNode *n, const char *name, bool *has,
                       double *v)
{
        int r = ssd_attr_double(&l->doc.x, n, name, v);

        if (r == 0)
                *has = true;
        return r < 0 ? r : 0;
}

/* rtPriority, rtWorkerPriority: a SCHED_FIFO priority, 0 (none) to 99. */
static int rt_priority(struct sc_load *l, const xmlNode *n, const char *name, bool *has,
                       uint32_t *v)
{
        const char *s = mx_attr(&l->doc.x, n, name);
        uint64_t u;

        if (!s)
                return 0;
        if (mv_uint(s, 99, &u) < 0)
                return sc_err(l, l->label, mx_line(n), NULL, "%s \"%s\": expected a SCHED_FIFO "
                              "priority, 0 (none) to 99", name, s);
        *has = true;
        *v = (uint32_t)u;
        return 0;
}

/* rtCpus, rtWorkerCpus: digits, ',' and '-' (the daemon checks the list when it applies it). */
static int rt_cpus(struct sc_load *l, const xmlNode *n, const char *name, char *dst, size_t size)
{
        const char *s = mx_attr(&l->doc.x, n, name);

        if (!s)
                return 0;
        if (!*s || strlen(s) >= size || strspn(s, "0123456789,-") != strlen(s))
                return sc_err(l, l->label, mx_line(n), NULL, "%s \"%.64s\": expected a cpu "
                              "list such as 0-1,3", name, s);
        snprintf(dst, size, "%s", s);
        return 0;
}

static int realtime(struct sc_load *l, const xmlNode *n)
{
        struct scenario_realtime *rt = &l->s->experiment.realtime;
        const char *s = mx_attr(&l->doc.x, n, "rtBestEffort");
        int bad = 0;

        bad |= rt_priority(l, n, "rtPriority", &rt->has_priority, &rt->priority) < 0;
        bad |= rt_priority(l, n, "rtWorkerPriority", &rt->has_worker_priority,
                           &rt->worker_priority) < 0;
        bad |= rt_cpus(l, n, "rtCpus", rt->cpus, sizeof(rt->cpus)) < 0;
        bad |= rt_cpus(l, n, "rtWorkerCpus", rt->worker_cpus, sizeof(rt->worker_cpus)) < 0;
        if (s && !strcmp(s, "true"))
                rt->best_effort = true;
        else if (s && strcmp(s, "false"))
                bad |= sc_err(l, l->label, mx_line(n), NULL, "rtBestEffort \"%s\": expected "
                              "true or false", s) < 0;
        s = mx_attr(&l->doc.x, n, "rtMlock");
        if (s && (!strcmp(s, "true") || !strcmp(s, "false"))) {
                rt->has_mlock = true;
                rt->mlock = !strcmp(s, "true");
        } else if (s) {
                bad |= sc_err(l, l->label, mx_line(n), NULL, "rtMlock \"%s\": expected true or "
                              "false", s) < 0;
        }
        return bad ? -EINVAL : 0;
}

static int annotation(struct sc_load *l, struct sc_settings *st, const xmlNode *n)
{
        struct mx *x = &l->doc.x;
        const char *s;
        int bad = 0, r;

        bad |= check_attrs(l, n, settings_attrs) < 0;
        s = mx_attr(x, n, "version");
        if (s && strcmp(s, "1") != 0)
                bad |= sc_err(l, l->label, mx_line(n), NULL, "fmud settings version \"%s\": this "
                              "fmud reads version 1", s) < 0;
        bad |= double_attr(l, n, "stepSize", &st->has_step, &st->step) < 0;
        bad |= double_attr(l, n, "stepBudget", &st->has_budget, &st->budget) < 0;
        bad |= double_attr(l, n, "warp", &st->has_warp, &st->warp) < 0;
        bad |= double_attr(l, n, "tolerance", &st->has_tolerance, &st->tolerance) < 0;
        s = mx_attr(x, n, "decimation");
        if (s)
                bad |= parse_count(l, l->label, mx_line(n), NULL, "decimation", s,
                                   &st->decimation) < 0;
        s = mx_attr(x, n, "rollbackOnFault");
        if (s && !strcmp(s, "true"))
                st->rollback_on_fault = true;
        else if (s && strcmp(s, "false"))
                bad |= sc_err(l, l->label, mx_line(n), NULL, "rollbackOnFault \"%s\": expected "
                              "true or false", s) < 0;
        s = mx_attr(x, n, "overrun");
        if (s && scenario_overrun_parse(s, strlen(s), &st->overrun) < 0)
                bad |= sc_err(l, l->label, mx_line(n), NULL, "overrun \"%s\": expected none, "
                              "soft or hard", s) < 0;
        st->has_overrun = s != NULL;
        bad |= double_attr(l, n, "overrunMarginUs", &st->has_overrun_margin,
                           &st->overrun_margin_us) < 0;
        bad |= double_attr(l, n, "spinUs", &st->has_spin, &st->spin_us) < 0;
        s = mx_attr(x, n, "algorithm");
        if (s) {
                bad |= parse_algorithm(l, s, mx_line(n), &st->algorithm) < 0;
                st->has_algorithm = true;
        }
        bad |= realtime(l, n) < 0;
        st->rig_in = mx_attr(x, n, "rigInputs");
        st->rig_out = mx_attr(x, n, "rigOutputs");
        st->rig_line = mx_line(n);
        s = mx_attr(x, n, "rigPolicy");
        if (s && rig_policy_parse(s, strlen(s), &st->rig_policy) < 0)
                bad |= sc_err(l, l->label, mx_line(n), NULL, "rigPolicy \"%s\": expected hold, "
                              "safe or pause", s) < 0;
        st->has_rig_policy = s != NULL;
        bad |= double_attr(l, n, "rigTimeoutMs", &st->has_rig_timeout, &st->rig_timeout_ms) < 0;
        st->order = mx_attr(x, n, "order");
        st->order_origin = "order";
        for (const xmlNode *c = mx_first(n); c; c = mx_next(c)) {
                r = child(l, st, c);
                if (r == -ENOMEM)
                        return r;
                bad |= r < 0;
        }
        return bad ? -EINVAL : 0;
}

static void take(bool has, double v, const char *flag, bool *st_has, double *st_v,
                 const char **st_from)
{
        if (has) {
                *st_has = true;
                *st_v = v;
                *st_from = flag;
        }
}

static int apply_overrides(struct sc_load *l, struct sc_settings *st)
{
        const struct scenario_overrides *ov = l->ov;
        int bad = 0, r;

        take(ov->has_start, ov->start, "--start-time", &st->has_start, &st->start, &st->start_from);
        take(ov->has_stop, ov->stop, "--stop-time", &st->has_stop, &st->stop, &st->stop_from);
        take(ov->has_step, ov->step, "--step", &st->has_step, &st->step, &st->step_from);
        take(ov->has_budget, ov->budget, "--step-budget", &st->has_budget, &st->budget,
             &st->budget_from);
        take(ov->has_warp, ov->warp, "--warp", &st->has_warp, &st->warp, &st->warp_from);
        take(ov->has_tolerance, ov->tolerance, "--tolerance", &st->has_tolerance, &st->tolerance,
             &st->tolerance_from);
        take(ov->has_overrun_margin, ov->overrun_margin_us, "--overrun-margin-us",
             &st->has_overrun_margin, &st->overrun_margin_us, &st->overrun_margin_from);
        take(ov->has_spin, ov->spin_us, "--spin-us", &st->has_spin, &st->spin_us, &st->spin_from);
        if (ov->has_overrun) {
                st->has_overrun = true;
                st->overrun = ov->overrun;
        }
        if (ov->has_decimation && (ov->decimation == 0 || ov->decimation > UINT32_MAX))
                bad |= sc_err(l, "--decimation", 0, NULL, "%llu is not a positive integer "
                              "(1 to 4294967295)", (unsigned long long)ov->decimation) < 0;
        else if (ov->has_decimation)
                st->decimation = ov->decimation;
        st->rollback_on_fault |= ov->rollback_on_fault;
        if (ov->has_algorithm) {
                st->has_algorithm = true;
                st->algorithm = ov->algorithm;
        }
        if (ov->order) {
                st->order = ov->order;
                st->order_origin = "--order";
        }
        for (size_t i = 0; i < ov->n_multirate; i++)
                bad |= set_multirate(l, "--multirate", 0, ov->multirate[i].name,
                                     ov->multirate[i].value) < 0;
        if (ov->n_record == 0)
                return bad ? -EINVAL : 0;
        for (size_t i = 0; i < st->n_record; i++)
                free(st->record_origins[i]);
        st->n_record = 0;
        for (size_t i = 0; i < ov->n_record; i++) {
                r = add_record(st, ov->record[i], strdup("--record"));
                if (r < 0)
                        return r;
        }
        return bad ? -EINVAL : 0;
}

int sc_settings(struct sc_load *l, struct sc_settings *st)
{
        int r = 0, bad = 0;

        if (l->has_doc && l->doc.settings) {
                r = annotation(l, st, l->doc.settings);
                if (r == -ENOMEM)
                        return r;
                bad |= r < 0;
        }
        if (l->ov) {
                r = apply_overrides(l, st);
                if (r == -ENOMEM)
                        return r;
                bad |= r < 0;
        }
        return bad ? -EINVAL : 0;
}

void sc_settings_fini(struct sc_settings *st)
{
        for (size_t i = 0; i < st->n_record; i++)
                free(st->record_origins[i]);
        free(st->record_origins);
        free(st->record);
        free(st->sequential);
        free(st->sequential_lines);
}
