/*
 * Test helpers for the worker sandbox tests (test_sandbox*.c): an Escape
 * instance driven to Step Mode, one attempt per step, the sandbox log
 * messages it caused, and the worker's /proc files read from outside.
 */
#ifndef FMUD_TESTS_SANDBOX_FIXTURE_H
#define FMUD_TESTS_SANDBOX_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "engine/instance/instance.h"


#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif

/* Escape's value references (tests/fmus/Escape/model.c). */
enum { VR_ATTEMPT = 1, VR_ARG = 2, VR_TARGET = 3, VR_RESULT = 4, VR_STEPS = 5 };

#define LOG_MAX 64

struct logbook {
        int n;
        int status[LOG_MAX];
        char category[LOG_MAX][64];
        char message[LOG_MAX][256];
};

struct esc {
        struct inst *inst;
        struct logbook log;
        double t;
        int steps;
};

void sbx_on_log(void *ctx, struct inst *inst, int status, const char *category,
                const char *message);
/* The sandbox log message that contains text, or NULL. */
const char *sbx_logged(const struct logbook *b, const char *text);
/* Options for FMUD_TEST_FMU_DIR/<fmu> in mode. */
void sbx_opts_for(struct inst_opts *o, const char *fmu, enum sandbox_mode mode);
/* Start, instantiate, initialize: an instance in Step Mode (asserts). */
struct inst *sbx_start(const struct inst_opts *o);
/* An Escape instance in Step Mode, logging into e->log. */
void sbx_esc_start(struct esc *e, enum sandbox_mode mode, bool kill_on_violation);
/* Set the attempt, step, return the FMU's result (the errno it saw); asserts the instance lives on. */
int sbx_esc_try(struct esc *e, int attempt, int arg, const char *target);
/* EPERM, EACCES or EROFS. */
bool sbx_refused(int e);
/* A file's contents (static buffer, NUL-terminated). */
char *sbx_slurp(const char *path, size_t *ret_len);
/* The value after "key:" in /proc/PID/status. */
void sbx_status_field(pid_t pid, const char *key, char *out, size_t size);
/* The soft limit in /proc/PID/limits of the line starting with name; ~0: unlimited. */
unsigned long long sbx_limit_of(pid_t pid, const char *name);

#endif
