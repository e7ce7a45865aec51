/*
 * host_pace: a load's pacing settings (the overrun policy, its margin,
 * the spin before each deadline) over the scenario's, and the daemon's
 * [master] defaults under both (scenario.h, master_overrun.c).
 *
 * DESIGN: the load's text is checked here, where the message can name the
 * argument; the numbers are checked with the scenario's own (the same
 * rules whichever set them).
 */
#include "daemon/host_int.h"

#include <errno.h>
#include <stdio.h>

int hpace_overrides(const struct proto_load *a, struct scenario_overrides *o, char *msg,
                    size_t size)
{
        if (a->overrun.len) {
                if (scenario_overrun_parse(a->overrun.ptr, a->overrun.len, &o->overrun) < 0) {
                        snprintf(msg, size, "overrun: '%.*s' is not none, soft or hard",
                                 (int)(a->overrun.len > 64 ? 64 : a->overrun.len),
                                 a->overrun.ptr);
                        return -EINVAL;
                }
                o->has_overrun = true;
        }
        o->has_overrun_margin = a->has_overrun_margin;
        o->overrun_margin_us = a->overrun_margin_us;
        o->has_spin = a->has_spin;
        o->spin_us = a->spin_us;
        return 0;
}

void hpace_defaults(struct scenario_experiment *e, const struct host_opts *opts)
{
        if (!e->overrun_given)
                e->overrun = opts->overrun;
        if (!e->overrun_margin_given)
                e->overrun_margin_us = opts->overrun_margin_us;
        if (!e->spin_given)
                e->spin_us = opts->spin_us;
}
