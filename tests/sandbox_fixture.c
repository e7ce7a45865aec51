/* Test helpers for the worker sandbox tests (sandbox_fixture.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "sandbox_fixture.h"

void sbx_on_log(void *ctx, struct inst *inst, int status, const char *category,
                const char *message)
{
        struct logbook *b = ctx;

        (void) inst;
        if (b->n >= LOG_MAX)
                return;
        b->status[b->n] = status;
        snprintf(b->category[b->n], sizeof(b->category[0]), "%s", category);
        snprintf(b->message[b->n], sizeof(b->message[0]), "%s", message);
        b->n++;
}

const char *sbx_logged(const struct logbook *b, const char *text)
{
        for (int i = 0; i < b->n; i++)
                if (!strcmp(b->category[i], "sandbox") && strstr(b->message[i], text))
                        return b->message[i];
        return NULL;
}

void sbx_opts_for(struct inst_opts *o, const char *fmu, enum sandbox_mode mode)
{
        static char dir[1024];

        snprintf(dir, sizeof(dir), "%s/%s", FMUD_TEST_FMU_DIR, fmu);
        inst_opts_default(o);
        o->worker_path = FMUD_WORKER;
        o->fmu_dir = dir;
        o->name = fmu;
        o->sandbox.mode = mode;
}

struct inst *sbx_start(const struct inst_opts *o)
{
        struct inst_instantiate a = { 0 };
        struct inst_experiment x = { 0 };
        struct inst *in = NULL;
        char *why = NULL;
        int r;

        r = inst_new(o, &in, &why);
        cr_assert(r == 0, "inst_new(%s, %s): %s (%s)", o->name, sandbox_mode_name(o->sandbox.mode),
                  strerror(-r), why ? why : "");
        free(why);
        cr_assert(inst_instantiate(in, &a) == INST_OK, "instantiate: %s", inst_message(in));
        cr_assert(inst_enter_initialization_mode(in, &x) == INST_OK, "%s", inst_message(in));
        cr_assert(inst_exit_initialization_mode(in) == INST_OK, "%s", inst_message(in));
        return in;
}

void sbx_esc_start(struct esc *e, enum sandbox_mode mode, bool kill_on_violation)
{
        struct inst_opts o;

        memset(e, 0, sizeof(*e));
        sbx_opts_for(&o, "Escape", mode);
        o.sandbox.kill_on_violation = kill_on_violation;
        o.log = sbx_on_log;
        o.log_ctx = &e->log;
        e->inst = sbx_start(&o);
}

int sbx_esc_try(struct esc *e, int attempt, int arg, const char *target)
{
        const uint32_t va = VR_ATTEMPT, vg = VR_ARG, vt = VR_TARGET, vr = VR_RESULT, vs = VR_STEPS;
        struct inst_step_result res;
        struct inst_step st = { .t = e->t, .h = 0.1 };
        int32_t result = -2, steps = -1;
        int r;

        cr_assert(inst_set(e->inst, MD_INT32, &va, 1, &attempt, 1) == INST_OK, "%s",
                  inst_message(e->inst));
        cr_assert(inst_set(e->inst, MD_INT32, &vg, 1, &arg, 1) == INST_OK);
        if (target)
                cr_assert(inst_set(e->inst, MD_STRING, &vt, 1, &target, 1) == INST_OK);
        r = inst_do_step(e->inst, &st, &res);
        cr_assert(r == INST_OK, "attempt %d: doStep returned %d: %s", attempt, r,
                  inst_message(e->inst));
        e->t += 0.1;
        e->steps++;
        cr_assert(inst_get(e->inst, MD_INT32, &vr, 1, &result, 1) == INST_OK);
        /* The instance is still usable and counted the step. */
        cr_assert(inst_get(e->inst, MD_INT32, &vs, 1, &steps, 1) == INST_OK);
        cr_assert(steps == e->steps, "steps %d, expected %d", steps, e->steps);
        cr_assert(inst_fault(e->inst) == 0);
        return result;
}

bool sbx_refused(int e)
{
        return e == EPERM || e == EACCES || e == EROFS;
}

char *sbx_slurp(const char *path, size_t *ret_len)
{
        static char buf[65536];
        ssize_t n;
        int fd;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        cr_assert(fd >= 0, "open(%s): %s", path, strerror(errno));
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        cr_assert(n >= 0);
        buf[n] = '\0';
        if (ret_len)
                *ret_len = (size_t)n;
        return buf;
}

void sbx_status_field(pid_t pid, const char *key, char *out, size_t size)
{
        char path[64], *p, *s;
        size_t n = strlen(key);

        snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
        s = sbx_slurp(path, NULL);
        for (p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                if (!strncmp(p, key, n) && p[n] == ':') {
                        p += n + 1;
                        while (*p == ' ' || *p == '\t')
                                p++;
                        snprintf(out, size, "%.*s", (int)strcspn(p, "\n"), p);
                        return;
                }
        cr_assert_fail("no %s in %s", key, path);
}

unsigned long long sbx_limit_of(pid_t pid, const char *name)
{
        char path[64], *p;

        snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
        p = strstr(sbx_slurp(path, NULL), name);
        cr_assert(p, "no '%s' in %s", name, path);
        p += strlen(name);
        while (*p == ' ')
                p++;
        if (!strncmp(p, "unlimited", 9))
                return ~0ull;
        return strtoull(p, NULL, 10);
}
