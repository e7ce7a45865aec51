/*
 * session_start: a session's workers start together. Every worker is
 * started before any is waited for, so their start-ups (exec, sandbox,
 * loading the FMU) overlap; a worker that cannot start fails the session
 * with its own component named, whichever of them it is, and the others,
 * ready or still starting (killed), are gone when session_new() returns;
 * one that never answers is killed after the start timeout, which its
 * message names.
 *
 * The workers are started through a shell wrapper of the test's own that
 * looks at the model in the worker's --fmu-dir: it makes one model's
 * worker exit at once, or one wait for another's wrapper to have run.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "test_master_sys.h"

#define PIDS_MAX 4

struct seen {
        pid_t pid[PIDS_MAX];
        size_t n;
};

static void on_worker(void *ctx, const struct session_worker_info *w)
{
        struct seen *s = ctx;

        if (w->ev == SESSION_WORKER_STARTED && s->n < PIDS_MAX)
                s->pid[s->n++] = w->pid;
}

static bool no_children(void)
{
        return waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD;
}

/*
 * A wrapper in x->dir: the worker of model `fail` exits 3; the worker of
 * model `waiter` waits (up to 20 s, else exits 4) until the wrapper of any
 * other model has run; every other worker is the real one.
 */
static void wrap(struct msys *x, const char *fail, const char *waiter)
{
        char path[4096];
        FILE *f;

        snprintf(path, sizeof(path), "%s/wrapper", x->dir);
        f = fopen(path, "w");
        cr_assert(f);
        fprintf(f, "#!/bin/sh\n"
                   "for a; do [ \"$prev\" = --fmu-dir ] && dir=$a; prev=$a; done\n"
                   "model() { /bin/grep -q \"modelName=\\\"$1\\\"\" \"$dir/modelDescription.xml\"; }\n"
                   "if model '%s'; then echo 'wrapper: this one does not start' >&2; exit 3; fi\n"
                   "if model '%s'; then\n"
                   "  i=0\n"
                   "  while [ ! -e '%s/other-ran' ]; do\n"
                   "    i=$((i + 1)); [ $i -gt 400 ] && exit 4; /bin/sleep 0.05\n"
                   "  done\n"
                   "else\n"
                   "  : > '%s/other-ran'\n"
                   "fi\n"
                   "exec '%s' \"$@\"\n", fail, waiter, x->dir, x->dir, FMUD_WORKER);
        cr_assert(fclose(f) == 0);
        cr_assert(chmod(path, 0755) == 0);
        x->so.worker_path = strdup(path);
        cr_assert(x->so.worker_path);
}

static const struct msys_spec pair = {
        .elements = MSYS_COMP("a", "LinearOde") MSYS_COMP("b", "Feedthrough"),
        .stop = 1.0,
        .attrs = "stepSize=\"0.1\"",
};

/*
 * session_new() on the pair through a wrapper (fail, waiter: wrap()), with
 * the start timeout when not 0 and the ready workers' pids into *seen;
 * its result, and its message into *ret_msg (caller frees).
 */
static int start_pair(const char *fail, const char *waiter, uint64_t start_timeout_ns,
                      struct seen *seen, char **ret_msg)
{
        struct msys x;
        int r;

        *ret_msg = NULL;
        msys_load(&x, &pair);
        wrap(&x, fail, waiter);
        x.so.start_timeout_ns = start_timeout_ns;
        x.so.worker = on_worker;
        x.so.worker_ctx = seen;
        r = msys_session_try(&x, ret_msg);
        free((char *)x.so.worker_path);
        msys_fini(&x);
        cr_assert(no_children());
        return r;
}

Test(session_start, the_workers_start_before_any_is_waited_for)
{
        struct seen seen = { .n = 0 };
        char *msg;
        /* a's worker starts only once b's has: one at a time, the session would fail. */
        int r = start_pair("none", "LinearOde", 0, &seen, &msg);

        cr_assert(r == 0, "session_new: %d: %s", r, msg ? msg : "");
        cr_assert_eq(seen.n, 2);
        free(msg);
}

/* The worker of model (component comp) fails; n_ready others were ready before it. */
static void one_fails(const char *model, const char *comp, size_t n_ready)
{
        struct seen seen = { .n = 0 };
        char *msg, want[64];
        int r = start_pair(model, "none", 0, &seen, &msg);

        cr_assert(r < 0, "session_new succeeded");
        snprintf(want, sizeof(want), "component '%s': cannot start its worker", comp);
        cr_assert(msg && strstr(msg, want) != NULL, "'%s' does not say \"%s\"", msg ? msg : "",
                  want);
        free(msg);
        /* One ready before is gone with the session; one not ready yet was killed (no children). */
        cr_assert_eq(seen.n, n_ready, "%zu workers were ready", seen.n);
        for (size_t i = 0; i < seen.n; i++)
                cr_assert(kill(seen.pid[i], 0) < 0 && errno == ESRCH, "worker %d is still there",
                          (int)seen.pid[i]);
}

Test(session_start, the_first_worker_failing_is_named_and_the_second_is_killed)
{
        one_fails("LinearOde", "a", 0);
}

Test(session_start, the_second_worker_failing_is_named_and_the_first_is_gone)
{
        one_fails("Feedthrough", "b", 1);
}

Test(session_start, a_worker_that_never_starts_is_killed_after_the_start_timeout_it_names)
{
        struct seen seen = { .n = 0 };
        char *msg;
        /* a waits for a wrapper that never runs: b's exits first. */
        int r = start_pair("Feedthrough", "LinearOde", 1000000000u, &seen, &msg);

        cr_assert(r == -ETIMEDOUT, "session_new: %d: %s", r, msg ? msg : "");
        cr_assert(msg && strstr(msg, "component 'a': cannot start its worker") != NULL &&
                  strstr(msg, "did not answer its start-up within 1 s; killed") != NULL,
                  "%s", msg ? msg : "");
        free(msg);
}
