/*
 * extrapolate: the intermediate input polynomial (see extrapolate.h).
 */
#include "engine/master/extrapolate.h"

/*
 * No fused multiply-add: ISO C mode (-std=c11, no GNU extensions) makes
 * GCC default to -ffp-contract=off, and x86-64's baseline has no FMA.
 */

double extrapolate(double y, const double *d, unsigned order, double dt)
{
        if (order == 0)
                return y;
        if (order == 1)
                return y + d[0] * dt;
        return y + d[0] * dt + d[1] * dt * dt / 2.0;
}
