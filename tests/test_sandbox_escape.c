/*
 * The worker sandbox against the Escape test FMU: every way out is
 * refused and logged in basic and strict mode while the instance goes on
 * working, and works in mode off (the control). Where the kernel lacks
 * Landlock or namespaces the report says so, and the file checks that
 * depend on them are logged instead of asserted.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "daemon/instance.h"
#include "support/tmpdir.h"
#include "sandbox_fixture.h"

/* A process to aim kill() at. */
static pid_t bystander(void)
{
        pid_t pid = fork();

        cr_assert(pid >= 0);
        if (pid == 0) {
                for (;;)
                        pause();
        }
        return pid;
}

static void expect_refused_call(struct esc *e, int attempt, int arg, const char *target,
                                const char *call)
{
        int r = sbx_esc_try(e, attempt, arg, target);

        cr_assert(r == EPERM, "attempt %d: errno %d (%s), expected EPERM", attempt, r, strerror(r));
        cr_assert(sbx_logged(&e->log, call), "attempt %d: no log message naming '%s' (%d messages)",
                  attempt, call, e->log.n);
}

static void attempts_refused(enum sandbox_mode mode)
{
        char *outside = tmpdir_new("fmud-sandbox-outside");
        char secret[1100], name[64];
        const struct inst_layer *l;
        struct esc e;
        pid_t victim;
        int r, st;

        cr_assert(outside);
        /* World-writable and readable: only the sandbox stands in the way. */
        cr_assert(chmod(outside, 0777) == 0);
        cr_assert(tmpdir_write(outside, "secret.txt", "secret\n", 7) == 0);
        snprintf(secret, sizeof(secret), "%s/secret.txt", outside);
        cr_assert(chmod(secret, 0644) == 0);

        sbx_esc_start(&e, mode, false);
        l = inst_sandbox(e.inst);
        expect_refused_call(&e, 1, 0, NULL, "refused system call socket (AF_INET)");
        expect_refused_call(&e, 2, 9, NULL, "socket (AF_INET)");
        expect_refused_call(&e, 5, 0, NULL, "refused system call clone");
        expect_refused_call(&e, 6, 0, NULL, "refused system call execve");
        expect_refused_call(&e, 10, 0, NULL, "refused system call rt_sigaction");
        /* A thread may be started (clone with CLONE_THREAD); its refusals are logged too. */
        e.log.n = 0;
        expect_refused_call(&e, 11, 0, NULL, "refused system call socket (AF_INET)");
        victim = bystander();
        snprintf(name, sizeof(name), "kill (pid %d)", (int)victim);
        expect_refused_call(&e, 7, (int)victim, NULL, name);
        cr_assert(waitpid(victim, &st, WNOHANG) == 0, "the bystander was hurt");
        (void) kill(victim, SIGKILL);
        (void) waitpid(victim, NULL, 0);

        /* Files outside: Landlock (EACCES) or the read-only mounts (EROFS). */
        r = sbx_esc_try(&e, 3, 0, outside);
        if (l[SANDBOX_LANDLOCK].state == SANDBOX_ACTIVE || l[SANDBOX_NAMESPACES].state == SANDBOX_ACTIVE) {
                cr_assert(sbx_refused(r), "write outside: errno %d (%s)", r, strerror(r));
                snprintf(name, sizeof(name), "escape-%d.txt", (int)inst_pid(e.inst));
                snprintf(secret, sizeof(secret), "%s/%s", outside, name);
                cr_assert(access(secret, F_OK) < 0, "the FMU wrote '%s'", secret);
        } else {
                cr_log_warn("no Landlock and no mount namespace: writing outside is not confined");
        }
        snprintf(secret, sizeof(secret), "%s/secret.txt", outside);
        r = sbx_esc_try(&e, 4, 0, secret);
        if (l[SANDBOX_LANDLOCK].state == SANDBOX_ACTIVE)
                cr_assert(r == EACCES, "read outside: errno %d (%s)", r, strerror(r));
        else
                cr_log_warn("no Landlock: reading outside is not confined (errno %d)", r);

        /* What it may do. */
        cr_assert(sbx_esc_try(&e, 8, 0, NULL) == 0, "writing in TMPDIR");
        snprintf(name, sizeof(name), "%s/escape-%d.txt", inst_scratch_dir(e.inst),
                 (int)inst_pid(e.inst));
        cr_assert(access(name, F_OK) == 0, "no '%s'", name);
        cr_assert(sbx_esc_try(&e, 9, 0, NULL) == 0, "reading its own resources");
        cr_assert(sbx_esc_try(&e, 0, 0, NULL) == 0);
        cr_assert(inst_free(e.inst) == 0);
        tmpdir_free(outside);
}

Test(sandbox, strict_refuses_every_attempt_and_logs_it)
{
        attempts_refused(SANDBOX_STRICT);
}

Test(sandbox, basic_refuses_every_attempt_and_logs_it)
{
        attempts_refused(SANDBOX_BASIC);
}

Test(sandbox, off_lets_every_attempt_through)
{
        char *outside = tmpdir_new("fmud-sandbox-off");
        struct sockaddr_in sa = { .sin_family = AF_INET };
        socklen_t sl = sizeof(sa);
        char path[1100];
        struct esc e;
        pid_t victim;
        int lfd, st;

        cr_assert(outside);
        cr_assert(tmpdir_write(outside, "secret.txt", "secret\n", 7) == 0);
        lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        cr_assert(lfd >= 0 && bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(lfd, 4) == 0);
        cr_assert(getsockname(lfd, (struct sockaddr *)&sa, &sl) == 0);

        sbx_esc_start(&e, SANDBOX_OFF, false);
        cr_assert(sbx_esc_try(&e, 1, 0, NULL) == 0);
        cr_assert(sbx_esc_try(&e, 2, ntohs(sa.sin_port), NULL) == 0);
        cr_assert(sbx_esc_try(&e, 3, 0, outside) == 0);
        snprintf(path, sizeof(path), "%s/escape-%d.txt", outside, (int)inst_pid(e.inst));
        cr_assert(access(path, F_OK) == 0);
        snprintf(path, sizeof(path), "%s/secret.txt", outside);
        cr_assert(sbx_esc_try(&e, 4, 0, path) == 0);
        cr_assert(sbx_esc_try(&e, 5, 0, NULL) == 0);
        cr_assert(sbx_esc_try(&e, 6, 1, NULL) == 0);
        victim = bystander();
        cr_assert(sbx_esc_try(&e, 7, (int)victim, NULL) == 0);
        cr_assert(waitpid(victim, &st, 0) == victim && WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
        cr_assert(sbx_esc_try(&e, 8, 0, NULL) == 0);
        cr_assert(sbx_esc_try(&e, 9, 0, NULL) == 0);
        cr_assert(sbx_esc_try(&e, 11, 0, NULL) == 0);
        cr_assert(sbx_logged(&e.log, "refused") == NULL, "off refused something");
        cr_assert(inst_free(e.inst) == 0);
        close(lfd);
        tmpdir_free(outside);
}

/* Two instances under one scratch root: b tries to read what a wrote in its scratch dir. */
static void neighbours(enum sandbox_mode mode)
{
        char *root = tmpdir_new("fmud-sandbox-root");
        struct inst_opts o;
        struct esc a, b;
        char path[1100];
        const struct inst_layer *l;
        int r;

        cr_assert(root);
        /* The workers' user must get through to its own directory. */
        cr_assert(chmod(root, 0711) == 0);
        for (struct esc *e = &a; e; e = e == &a ? &b : NULL) {
                memset(e, 0, sizeof(*e));
                sbx_opts_for(&o, "Escape", mode);
                o.sandbox.scratch_root = root;
                o.log = sbx_on_log;
                o.log_ctx = &e->log;
                e->inst = sbx_start(&o);
                cr_assert(!strncmp(inst_scratch_dir(e->inst), root, strlen(root)), "%s",
                          inst_scratch_dir(e->inst));
        }
        cr_assert(sbx_esc_try(&a, 8, 0, NULL) == 0);
        snprintf(path, sizeof(path), "%s/escape-%d.txt", inst_scratch_dir(a.inst), (int)inst_pid(a.inst));
        cr_assert(access(path, R_OK) == 0);
        r = sbx_esc_try(&b, 4, 0, path);
        l = inst_sandbox(b.inst);
        if (l[SANDBOX_NAMESPACES].state == SANDBOX_ACTIVE)
                /* Its mount namespace shows it only its own scratch dir. */
                cr_assert(r == ENOENT, "errno %d (%s)", r, strerror(r));
        else if (l[SANDBOX_LANDLOCK].state == SANDBOX_ACTIVE)
                cr_assert(r == EACCES, "errno %d (%s)", r, strerror(r));
        else
                cr_log_warn("neither Landlock nor namespaces: scratch dirs are not private");
        /* Its own still works. */
        cr_assert(sbx_esc_try(&b, 8, 0, NULL) == 0);
        cr_assert(inst_free(a.inst) == 0);
        cr_assert(inst_free(b.inst) == 0);
        /* Both scratch dirs are gone, the root stays. */
        cr_assert(rmdir(root) == 0, "rmdir('%s'): %s", root, strerror(errno));
        free(root);
}

Test(sandbox, strict_instances_cannot_see_each_others_scratch)
{
        neighbours(SANDBOX_STRICT);
}

Test(sandbox, basic_instances_cannot_read_each_others_scratch)
{
        neighbours(SANDBOX_BASIC);
}
