/*
 * extrapolate: the polynomial a master evaluates for an intermediate
 * input between communication points (FMI 3.0 sections 4.1.2 and 4.2.2),
 * from a producer's output y and its time derivatives at the point t_p:
 *
 *   u(t) = y + y' (t - t_p) + y'' (t - t_p)^2 / 2
 *
 * truncated to the order the producer provides (0: the held value).
 *
 * DESIGN: the evaluation order is part of the contract, so a test (or a
 * remote master) can reproduce the values bit for bit: with dt = t - t_p,
 *   order 0:  y
 *   order 1:  y + d1 * dt
 *   order 2:  y + d1 * dt + d2 * dt * dt / 2
 * each operation rounded in double, left to right (C11 without
 * contraction: no fused multiply-add). Pure; any thread.
 */
#ifndef FMUD_ENGINE_EXTRAPOLATE_H
#define FMUD_ENGINE_EXTRAPOLATE_H

#define EXTRAPOLATE_MAX_ORDER 2

/* d[0] = y', d[1] = y'' (only the first 'order' are read). */
double extrapolate(double y, const double *d, unsigned order, double dt);

#endif
