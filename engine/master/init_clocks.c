/*
 * init_clocks: the time-based input Clocks of an instance at
 * initialization (FMI 3.0 section 2.2.8.2, Table 5): an FMU with input
 * Clocks is refused without Event Mode (fmi3SetClock is an Event Mode
 * call), and the interval and shift of every time-based input Clock are
 * taken from the description where it gives them (constant, fixed and
 * tunable Clocks with intervalDecimal) or got from the FMU in
 * Initialization Mode (fixed and tunable Clocks without intervalDecimal,
 * changing and countdown Clocks: their first interval).
 *
 * DESIGN: a fraction (counters and resolution) is kept where one is
 * given (supportsFraction, or the description's counters), so that the
 * master lands ticks exactly on t_start + counter / resolution rather
 * than on an accumulated sum of decimals. Triggered input Clocks have no
 * timing: the master ticks them from connections.
 */
#include "engine/master/session_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* fmi3IntervalQualifier (FMI 3.0 section 2.2.8.4). */
#define QUAL_NOT_YET_KNOWN 0

static const char *cname(const struct session *s, const struct session_inst *si)
{
        return s->sc->components[si->comp].name;
}

static bool time_based(const struct md_variable *v)
{
        enum md_interval_variability iv = v->attrs.clock.interval_variability;

        return v->type == MD_CLOCK && v->causality == MD_CAUSALITY_INPUT &&
               iv != MD_INTERVAL_TRIGGERED && iv != MD_INTERVAL_NONE;
}

int init_clocks_check(struct session *s, struct session_inst *si)
{
        const struct md *md = s->sc->components[si->comp].fmu->md;

        if (si->event_mode)
                return 0;
        for (size_t i = 0; i < md->n_vars; i++) {
                const struct md_variable *v = &md->vars[i];

                if (v->type != MD_CLOCK || v->causality != MD_CAUSALITY_INPUT)
                        continue;
                return session_err(s, -EINVAL, "component '%s': '%s' is an input Clock, which "
                                   "is ticked with fmi3SetClock in Event Mode only (FMI 3.0 "
                                   "section 2.2.8.2, Table 5), and %s", cname(s, si), v->name,
                                   md->cs.has_event_mode ? "Event Mode is turned off for this "
                                   "session" : "the FMU does not declare hasEventMode");
        }
        return 0;
}

/* From the description: intervalDecimal (and counters), shiftDecimal (default 0). */
static void from_description(const struct md_variable *v, struct session_clock *c)
{
        const struct md_clock_attrs *a = &v->attrs.clock;

        c->interval = a->interval_decimal;
        c->shift = a->has_shift_decimal ? a->shift_decimal : 0.0;
        /* The counters only where supportsFraction allows them (FMI 3.0 section 2.4.4). */
        if (a->supports_fraction && a->has_interval_counter && a->has_resolution &&
            a->resolution > 0) {
                c->fraction = true;
                c->resolution = a->resolution;
                c->interval_counter = a->interval_counter;
                c->shift_counter = a->has_shift_counter ? a->shift_counter : 0;
        }
}

static int failed(struct session *s, struct session_inst *si, int r, const char *fn,
                  const struct md_variable *v)
{
        return session_logs(s, si, session_err(s, session_call_result(si, r),
                            "component '%s': %s of Clock '%s' in %s returned %s: %s",
                            cname(s, si), fn, v->name, si->initialized ? "the Event Mode after "
                            "initialization" : "Initialization Mode",
                            r >= 0 ? session_status_name(r) : strerror(-r),
                            inst_message(si->inst)));
}

static int zero_resolution(struct session *s, struct session_inst *si, const char *what,
                           const char *fn, const struct md_variable *v)
{
        return session_err(s, -EINVAL, "component '%s': Clock '%s' has %s resolution 0 (%s in "
                           "Initialization Mode): a resolution must be > 0 (FMI 3.0 section "
                           "2.2.8.4)", cname(s, si), v->name, what, fn);
}

static bool ok(int r)
{
        return r == INST_OK || r == INST_WARNING;
}

/* From the FMU: the interval (the first one of an aperiodic Clock) and, periodic, the shift. */
static int from_fmu(struct session *s, struct session_inst *si, const struct md_variable *v,
                    struct session_clock *c)
{
        bool periodic = c->iv != MD_INTERVAL_CHANGING && c->iv != MD_INTERVAL_COUNTDOWN;
        int q = 0, r;

        if (v->attrs.clock.supports_fraction) {
                uint64_t res = 0, sres = 0;

                r = inst_get_interval_fraction(si->inst, &v->vr, 1, &c->interval_counter, &res,
                                               &q);
                if (!ok(r))
                        return failed(s, si, r, "fmi3GetIntervalFraction", v);
                if (periodic) {
                        r = inst_get_shift_fraction(si->inst, &v->vr, 1, &c->shift_counter, &sres);
                        if (!ok(r))
                                return failed(s, si, r, "fmi3GetShiftFraction", v);
                }
                /* A fraction is counter / resolution (FMI 3.0 section 2.2.8.4): 0 is no number. */
                if (res == 0 && q != QUAL_NOT_YET_KNOWN)
                        return zero_resolution(s, si, "interval", "fmi3GetIntervalFraction", v);
                if (periodic && sres == 0)
                        return zero_resolution(s, si, "shift", "fmi3GetShiftFraction", v);
                if (res > 0 && (!periodic || sres == res)) {
                        c->fraction = true;
                        c->resolution = res;
                }
                c->interval = res ? (double)c->interval_counter / (double)res : NAN;
                c->shift = sres ? (double)c->shift_counter / (double)sres : 0.0;
        } else {
                r = inst_get_interval_decimal(si->inst, &v->vr, 1, &c->interval, &q);
                if (!ok(r))
                        return failed(s, si, r, "fmi3GetIntervalDecimal", v);
                if (periodic) {
                        r = inst_get_shift_decimal(si->inst, &v->vr, 1, &c->shift);
                        if (!ok(r))
                                return failed(s, si, r, "fmi3GetShiftDecimal", v);
                }
        }
        /* A countdown Clock whose first interval is not known yet does not tick until it is. */
        if (c->iv == MD_INTERVAL_COUNTDOWN && q == QUAL_NOT_YET_KNOWN)
                c->interval = NAN;
        return 0;
}

int init_clocks_after_event(struct session *s, struct session_inst *si)
{
        const struct md *md = s->sc->components[si->comp].fmu->md;

        for (size_t i = 0; i < si->n_clocks; i++) {
                struct session_clock *c = &si->clocks[i];
                int r;

                if (c->iv != MD_INTERVAL_COUNTDOWN || !isnan(c->interval))
                        continue;
                r = from_fmu(s, si, &md->vars[c->var], c);
                if (r < 0)
                        return r;
        }
        return 0;
}

int init_clocks_read(struct session *s, struct session_inst *si)
{
        const struct md *md = s->sc->components[si->comp].fmu->md;
        size_t n = 0;
        int r;

        for (size_t i = 0; i < md->n_vars; i++)
                n += time_based(&md->vars[i]);
        if (n == 0)
                return 0;
        si->clocks = calloc(n, sizeof(*si->clocks));
        if (!si->clocks)
                return session_err(s, -ENOMEM, "out of memory");
        for (size_t i = 0; i < md->n_vars; i++) {
                const struct md_variable *v = &md->vars[i];
                struct session_clock *c = &si->clocks[si->n_clocks];

                if (!time_based(v))
                        continue;
                *c = (struct session_clock){ .vr = v->vr, .var = i,
                                             .iv = v->attrs.clock.interval_variability };
                si->n_clocks++;
                if (v->attrs.clock.has_interval_decimal && (c->iv == MD_INTERVAL_CONSTANT ||
                    c->iv == MD_INTERVAL_FIXED || c->iv == MD_INTERVAL_TUNABLE)) {
                        from_description(v, c);
                        continue;
                }
                r = from_fmu(s, si, v, c);
                if (r < 0)
                        return r;
        }
        return 0;
}
