/*
 * ops_live: the simulated time that get and set answer with.
 *
 * DESIGN: get answers {"time", "values"}: the values of the last
 * completed communication point and that point's time; set answers
 * {"time"}: the point at which its values were applied (all of them
 * together). Both were added to replies that had no time before, so a
 * decoder takes a reply without one (has_time false): a daemon that
 * predates them.
 */
#include "proto/proto_int.h"

#include <math.h>

void proto_get_result_begin_at(struct pw *w, uint32_t n, double time)
{
        pw_map(w, 2);
        pw_str(w, "time");
        pw_f64(w, time);
        pw_str(w, "values");
        pw_array(w, n);
}

void proto_set_result_encode(struct pw *w, double time)
{
        pw_map(w, 1);
        pw_str(w, "time");
        pw_f64(w, time);
}

int proto_result_time(const struct pv *v, double *ret_time, bool *ret_has, char *err,
                      size_t errlen)
{
        const struct pv *t = v && v->type == PV_MAP ? pv_get(v, "time") : NULL;

        *ret_has = false;
        *ret_time = NAN;
        if (!t)
                return 0;
        if (t->type != PV_FLOAT || pv_f64(t, ret_time) < 0 || !isfinite(*ret_time))
                return proto_fail(err, errlen, "result.time: expected a finite number");
        *ret_has = true;
        return 0;
}
