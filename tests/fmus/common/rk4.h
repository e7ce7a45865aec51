/*
 * rk4.h: classical fourth-order Runge-Kutta for the test FMUs' mass
 * models, x'' = accel(x, x'), with the model's other quantities held.
 */
#ifndef FMUD_TEST_FMU_RK4_H
#define FMUD_TEST_FMU_RK4_H

#include <stdint.h>

/* The acceleration at position x and velocity v; ctx is the model's data. */
typedef double rk4_accel_fn(const void *ctx, double x, double v);

/* Advance (*x, *v) by n steps of dt. */
static inline void rk4_steps(double *x, double *v, double dt, int32_t n, rk4_accel_fn *accel,
                             const void *ctx)
{
        for (int32_t i = 0; i < n; i++) {
                double x0 = *x, v0 = *v;
                double k1x = v0, k1v = accel(ctx, x0, v0);
                double k2x = v0 + 0.5 * dt * k1v, k2v = accel(ctx, x0 + 0.5 * dt * k1x, k2x);
                double k3x = v0 + 0.5 * dt * k2v, k3v = accel(ctx, x0 + 0.5 * dt * k2x, k3x);
                double k4x = v0 + dt * k3v, k4v = accel(ctx, x0 + dt * k3x, k4x);

                *x = x0 + dt / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x);
                *v = v0 + dt / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
        }
}

#endif
