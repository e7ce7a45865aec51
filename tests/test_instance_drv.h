/*
 * Test helpers: one FMU instance driven either in-process (the staged
 * binary dlopen'ed with fmu_lib_open, FMI functions called directly) or
 * through a worker (engine/instance/instance.h), behind one interface, so a test
 * writes a call sequence once and compares the two runs bit for bit.
 *
 * Return values follow instance.h: the FMI status (>= 0) or -errno. The
 * in-process side never refuses anything itself: it is what the FMU does.
 *
 * Every instance test uses the same .timeout: Criterion 2.4's runner
 * leaks (and so fails under LeakSanitizer) when tests with different
 * timeouts run in parallel.
 */
#ifndef FMUD_TESTS_INSTANCE_DRV_H
#define FMUD_TESTS_INSTANCE_DRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/instance/instance.h"

struct drv;

/* An instance of FMUD_TEST_FMU_DIR/<fmu>, not yet instantiated. */
struct drv *drv_local(const char *fmu);
struct drv *drv_remote(const char *fmu);
void drv_free(struct drv *d);
/* The worker instance behind a remote driver; NULL for a local one. */
struct inst *drv_inst(struct drv *d);

/* Options and the worker's path for tests that start instances themselves. */
void drv_opts(struct inst_opts *o, const char *fmu);

int drv_instantiate(struct drv *d, bool event_mode, bool early_return);
/* FMI 3.0: enter Initialization Mode at start; FMI 2.0: setup experiment and enter. */
int drv_enter_init(struct drv *d, double start);
int drv_exit_init(struct drv *d);
int drv_get(struct drv *d, enum md_type t, const uint32_t *vrs, size_t n, void *v, size_t nv);
int drv_set(struct drv *d, enum md_type t, const uint32_t *vrs, size_t n, const void *v, size_t nv);
int drv_get_binary(struct drv *d, const uint32_t *vrs, size_t n, size_t *sizes,
                   const uint8_t **v, size_t nv);
int drv_set_binary(struct drv *d, const uint32_t *vrs, size_t n, const size_t *sizes,
                   const uint8_t *const *v, size_t nv);
/* Set the inputs, step, get the outputs (in-process: three kinds of calls). */
int drv_step(struct drv *d, double t, double h, const struct inst_in *in, size_t nin,
             const struct inst_out *out, size_t nout, struct inst_step_result *res);
int drv_enter_event(struct drv *d);
int drv_update_discrete(struct drv *d, struct inst_discrete *ret);
int drv_enter_step(struct drv *d);
int drv_enter_config(struct drv *d);
int drv_exit_config(struct drv *d);
int drv_terminate(struct drv *d);
int drv_reset(struct drv *d);
int drv_get_state(struct drv *d, uint64_t *h);
int drv_set_state(struct drv *d, uint64_t h);
int drv_free_state(struct drv *d, uint64_t *h);
/* Serialize into a malloc'ed buffer. */
int drv_serialize(struct drv *d, uint64_t h, uint8_t **ret, size_t *ret_size);
int drv_deserialize(struct drv *d, const uint8_t *buf, size_t size, uint64_t *ret);
int drv_output_derivatives(struct drv *d, const uint32_t *vrs, size_t n, const int32_t *orders,
                           double *v, size_t nv);

/* Open descriptors of this process, and live children: for hygiene checks. */
int drv_count_fds(void);
int drv_count_children(void);

#endif
