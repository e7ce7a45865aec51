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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "engine/instance/instance.h"
#include "support/run.h"
#include "support/tmpdir.h"
#include "sandbox_fixture.h"

/*
 * A directory outside /tmp where there is one (/dev/shm), since a strict
 * worker's /tmp is its own and would hide it anyway; else one in /tmp.
 */
static char *dir_outside_tmp(const char *prefix)
{
        const char *old = getenv("TMPDIR");
        char *keep = old ? strdup(old) : NULL, *dir;
        struct stat st;

        if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0)
                cr_assert(setenv("TMPDIR", "/dev/shm", 1) == 0);
        dir = tmpdir_new(prefix);
        cr_assert(keep ? setenv("TMPDIR", keep, 1) == 0 : unsetenv("TMPDIR") == 0);
        free(keep);
        return dir;
}

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

/* Machine facts, not another process's or user's: readable in every mode. */
static const char *const machine_files[] = {
        "/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/sys/devices/system/cpu/online",
};

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
        /* Outside /tmp, which a strict worker's own /tmp would hide anyway. */
        char *outside = dir_outside_tmp("fmud-sandbox-outside");
        char secret[1100], name[64];
        const struct inst_layer *l;
        struct esc e;
        pid_t victim;
        bool ns;
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
        /*
         * posix_spawn(), system(), popen(): glibc blocks every signal before
         * its clone, so a trap would kill the worker; an EPERM instead (not
         * logged: no trap), and system() answers as for a shell that could
         * not run (127).
         */
        cr_assert(sbx_esc_try(&e, 17, 0, NULL) == EPERM, "posix_spawn");
        cr_assert(sbx_esc_try(&e, 17, 1, NULL) == 127, "system()");
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

        /*
         * Files outside: Landlock (EACCES) or the read-only mounts (EROFS);
         * below /tmp, in strict mode, not there at all: its /tmp is its own.
         */
        ns = l[SANDBOX_NAMESPACES].state == SANDBOX_ACTIVE;
        r = sbx_esc_try(&e, 3, 0, outside);
        if (l[SANDBOX_LANDLOCK].state == SANDBOX_ACTIVE || ns) {
                cr_assert(sbx_refused(r) || (ns && r == ENOENT), "write outside: errno %d (%s)", r,
                          strerror(r));
                snprintf(name, sizeof(name), "escape-%d.txt", (int)inst_pid(e.inst));
                snprintf(secret, sizeof(secret), "%s/%s", outside, name);
                cr_assert(access(secret, F_OK) < 0, "the FMU wrote '%s'", secret);
        } else {
                cr_log_warn("no Landlock and no mount namespace: writing outside is not confined");
        }
        snprintf(secret, sizeof(secret), "%s/secret.txt", outside);
        r = sbx_esc_try(&e, 4, 0, secret);
        if (l[SANDBOX_LANDLOCK].state == SANDBOX_ACTIVE)
                cr_assert(r == EACCES || (ns && r == ENOENT), "read outside: errno %d (%s)", r,
                          strerror(r));
        else
                cr_log_warn("no Landlock: reading outside is not confined (errno %d)", r);

        /* What it may do. */
        cr_assert(sbx_esc_try(&e, 8, 0, NULL) == 0, "writing in TMPDIR");
        snprintf(name, sizeof(name), "%s/escape-%d.txt", inst_scratch_dir(e.inst),
                 (int)inst_pid(e.inst));
        cr_assert(access(name, F_OK) == 0, "no '%s'", name);
        cr_assert(sbx_esc_try(&e, 9, 0, NULL) == 0, "reading its own resources");
        /* What the runtimes FMUs carry read to size themselves (OpenMP, BLAS, a JVM). */
        for (size_t i = 0; i < sizeof(machine_files) / sizeof(*machine_files); i++) {
                r = sbx_esc_try(&e, 4, 0, machine_files[i]);
                cr_assert(r == 0, "reading %s: errno %d (%s)", machine_files[i], r, strerror(r));
        }
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

/*
 * Strict: each worker writes in a /tmp of its own (glibc's tmpfile()
 * uses /tmp whatever TMPDIR says), which neither the machine nor another
 * worker sees, and the scratch and FMU directories below the machine's
 * /tmp are still where they were (the FMU here is a copy below /tmp).
 */
Test(sandbox, strict_gives_each_worker_a_tmp_of_its_own)
{
        char *copy = tmpdir_new("fmud-sandbox-fmu"), src[1100], dst[1100], path[1100];
        struct run_result cp = { 0 };
        struct inst_opts o;
        struct esc a, b;

        cr_assert(copy);
        /* The workers' user must get through to the FMU. */
        cr_assert(chmod(copy, 0755) == 0);
        snprintf(src, sizeof(src), "%s/Escape", FMUD_TEST_FMU_DIR);
        snprintf(dst, sizeof(dst), "%s/Escape", copy);
        cr_assert(run_capture((char *[]){ (char *)"/bin/cp", (char *)"-a", src, dst, NULL }, &cp) == 0);
        cr_assert(cp.exit_code == 0, "%s", cp.err);
        run_result_fini(&cp);
        for (struct esc *e = &a; e; e = e == &a ? &b : NULL) {
                memset(e, 0, sizeof(*e));
                sbx_opts_for(&o, "Escape", SANDBOX_STRICT);
                o.fmu_dir = dst;
                o.log = sbx_on_log;
                o.log_ctx = &e->log;
                e->inst = sbx_start(&o);
        }
        if (inst_sandbox(a.inst)[SANDBOX_NAMESPACES].state != SANDBOX_ACTIVE) {
                cr_log_warn("no mount namespace: no private /tmp");
        } else {
                cr_assert(strstr(inst_sandbox(a.inst)[SANDBOX_NAMESPACES].detail, "private /tmp"),
                          "%s", inst_sandbox(a.inst)[SANDBOX_NAMESPACES].detail);
                cr_assert(sbx_esc_try(&a, 16, 0, NULL) == 0, "tmpfile()");
                cr_assert(sbx_esc_try(&a, 3, 0, "/tmp") == 0, "a file in /tmp");
                snprintf(path, sizeof(path), "/tmp/escape-%d.txt", (int)inst_pid(a.inst));
                cr_assert(sbx_esc_try(&a, 4, 0, path) == 0, "reading it back");
                cr_assert(access(path, F_OK) < 0, "'%s' is on the machine's /tmp", path);
                cr_assert(sbx_esc_try(&b, 4, 0, path) == ENOENT, "another worker sees '%s'", path);
                /* What was there before is where it was. */
                cr_assert(sbx_esc_try(&a, 8, 0, NULL) == 0, "writing in TMPDIR");
                snprintf(path, sizeof(path), "%s/escape-%d.txt", inst_scratch_dir(a.inst),
                         (int)inst_pid(a.inst));
                cr_assert(access(path, F_OK) == 0, "no '%s'", path);
                cr_assert(sbx_esc_try(&a, 9, 0, NULL) == 0, "reading its own resources");
        }
        cr_assert(inst_free(a.inst) == 0);
        cr_assert(inst_free(b.inst) == 0);
        tmpdir_free(copy);
}

/*
 * TMPDIR through a symbolic link below /tmp (/tmp/x -> /tmp/y): a strict
 * worker's scratch directory is bound back under its private /tmp by its
 * canonical path, so the worker starts and writes there; it failed to
 * start, the link's path not being there.
 */
Test(sandbox, strict_starts_with_tmpdir_through_a_link)
{
        char *real = tmpdir_new("fmud-sandbox-real"), link[512], path[1100];
        const char *old = getenv("TMPDIR");
        char *keep = old ? strdup(old) : NULL;
        struct inst_opts o;
        struct esc e = { 0 };

        cr_assert(real);
        cr_assert(chmod(real, 0755) == 0);
        snprintf(link, sizeof(link), "%s-link", real);
        cr_assert(symlink(real, link) == 0, "%s", strerror(errno));
        cr_assert(setenv("TMPDIR", link, 1) == 0);
        sbx_opts_for(&o, "Escape", SANDBOX_STRICT);
        o.log = sbx_on_log;
        o.log_ctx = &e.log;
        e.inst = sbx_start(&o);
        cr_assert(keep ? setenv("TMPDIR", keep, 1) == 0 : unsetenv("TMPDIR") == 0);
        cr_assert(sbx_esc_try(&e, 8, 0, NULL) == 0, "writing in TMPDIR");
        snprintf(path, sizeof(path), "%s/escape-%d.txt", inst_scratch_dir(e.inst),
                 (int)inst_pid(e.inst));
        cr_assert(access(path, F_OK) == 0, "no '%s'", path);
        cr_assert(inst_free(e.inst) == 0);
        cr_assert(unlink(link) == 0);
        free(keep);
        tmpdir_free(real);
}

Test(sandbox, strict_instances_cannot_see_each_others_scratch)
{
        neighbours(SANDBOX_STRICT);
}

Test(sandbox, basic_instances_cannot_read_each_others_scratch)
{
        neighbours(SANDBOX_BASIC);
}

/* A listening AF_UNIX socket at dir/name that anybody may connect to; its descriptor. */
static int listener(const char *dir, const char *name, char *path, size_t size)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        cr_assert(fd >= 0);
        cr_assert((size_t)snprintf(path, size, "%s/%s", dir, name) < size);
        cr_assert(strlen(path) < sizeof(sa.sun_path));
        memcpy(sa.sun_path, path, strlen(path) + 1);
        cr_assert(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "bind: %s", strerror(errno));
        cr_assert(listen(fd, 4) == 0);
        cr_assert(chmod(path, 0777) == 0);
        return fd;
}

/* Escape in strict mode with 'hide' and the scratch directories below 'scratch_root'. */
static void start_hiding(struct esc *e, const char *hide, const char *scratch_root)
{
        struct inst_opts o;

        memset(e, 0, sizeof(*e));
        sbx_opts_for(&o, "Escape", SANDBOX_STRICT);
        o.sandbox.hide = hide;
        o.sandbox.scratch_root = scratch_root;
        o.log = sbx_on_log;
        o.log_ctx = &e->log;
        e->inst = sbx_start(&o);
}

Test(sandbox, strict_hides_the_daemons_socket_directory)
{
        char *run = dir_outside_tmp("fmud-sandbox-run");
        char sock[512], scratch[512];
        const struct inst_layer *l;
        struct esc e;
        int lfd, r;

        cr_assert(run);
        /* Open to all, as a daemon run by the FMU's own user would be: only the sandbox stops it. */
        cr_assert(chmod(run, 0777) == 0);
        lfd = listener(run, "fmud.sock", sock, sizeof(sock));
        snprintf(scratch, sizeof(scratch), "%s/scratch", run);
        cr_assert(mkdir(scratch, 0777) == 0);

        /* The control: without hiding, the socket is there. */
        start_hiding(&e, NULL, scratch);
        l = inst_sandbox(e.inst);
        if (l[SANDBOX_NAMESPACES].state != SANDBOX_ACTIVE) {
                cr_log_warn("no mount namespace (%s): the run directory cannot be hidden",
                            l[SANDBOX_NAMESPACES].detail);
                cr_assert(inst_free(e.inst) == 0);
                close(lfd);
                tmpdir_free(run);
                return;
        }
        /*
         * Seen (a socket cannot be opened as a file, and Landlock refuses
         * reading outside), though seccomp refuses any socket().
         */
        r = sbx_esc_try(&e, 4, 0, sock);
        cr_assert(r == ENXIO || r == EACCES, "open without hiding: errno %d (%s)", r, strerror(r));
        r = sbx_esc_try(&e, 12, 0, sock);
        cr_assert(r == EPERM, "connect without hiding: errno %d (%s)", r, strerror(r));
        cr_assert(inst_free(e.inst) == 0);

        /* Hidden: the socket is not there, and the scratch directory below still works. */
        start_hiding(&e, run, scratch);
        l = inst_sandbox(e.inst);
        cr_assert(strstr(l[SANDBOX_NAMESPACES].detail, "the daemon's run directory hidden") != NULL,
                  "%s", l[SANDBOX_NAMESPACES].detail);
        r = sbx_esc_try(&e, 4, 0, sock);
        cr_assert(r == ENOENT, "open while hidden: errno %d (%s)", r, strerror(r));
        cr_assert(sbx_esc_try(&e, 8, 0, NULL) == 0, "writing in TMPDIR");
        snprintf(sock, sizeof(sock), "%s/escape-%d.txt", inst_scratch_dir(e.inst),
                 (int)inst_pid(e.inst));
        cr_assert(access(sock, F_OK) == 0, "no '%s'", sock);
        cr_assert(sbx_esc_try(&e, 9, 0, NULL) == 0, "reading its own resources");
        cr_assert(inst_free(e.inst) == 0);
        close(lfd);
        cr_assert(rmdir(scratch) == 0, "rmdir('%s'): %s", scratch, strerror(errno));
        tmpdir_free(run);
}
