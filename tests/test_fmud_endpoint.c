/*
 * The default endpoints (proto/endpoint.h): one rule for fmud and fmuctl.
 * The unprivileged branches run in a child that drops to nobody.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/endpoint.h"
#include "support/tmpdir.h"

/* A hang fails its test by name, well inside ctest's limit for the file. */
TestSuite(fmud_endpoint, .timeout = 120);

Test(fmud_endpoint, runtime_directory_comes_first)
{
        char buf[256];

        cr_assert(setenv("RUNTIME_DIRECTORY", "/run/x:/run/y", 1) == 0);
        cr_assert(fmud_default_endpoint(buf, sizeof(buf)) == 0);
        cr_assert_str_eq(buf, "ipc:///run/x/control.sock");
        cr_assert(fmud_default_pub_endpoint(buf, sizeof(buf)) == 0);
        cr_assert_str_eq(buf, "ipc:///run/x/events.sock");
        cr_assert(fmud_default_endpoint(buf, 10) == -ENAMETOOLONG);
        /* A relative directory from the environment is not taken. */
        cr_assert(setenv("RUNTIME_DIRECTORY", "run/x", 1) == 0);
        cr_assert(fmud_runtime_dir(buf, sizeof(buf)) == 0);
        cr_assert(buf[0] == '/');
}

Test(fmud_endpoint, root_uses_run_fmud_and_others_their_runtime_dir)
{
        char buf[256];
        pid_t pid;
        int status;

        unsetenv("RUNTIME_DIRECTORY");
        if (geteuid() != 0) {
                cr_assert(fmud_runtime_dir(buf, sizeof(buf)) == 0);
                cr_assert(strcmp(buf, "/run/fmud"));
                cr_log_warn("not root: /run/fmud and another user's endpoints are not checked");
                return;
        }
        cr_assert(fmud_runtime_dir(buf, sizeof(buf)) == 0);
        cr_assert_str_eq(buf, "/run/fmud");
        pid = fork();
        cr_assert(pid >= 0);
        if (pid == 0) {
                char want[64];

                if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(10);
                setenv("XDG_RUNTIME_DIR", "/run/user/65534", 1);
                if (fmud_default_endpoint(buf, sizeof(buf)) < 0 ||
                    strcmp(buf, "ipc:///run/user/65534/fmud/control.sock"))
                        _exit(11);
                unsetenv("XDG_RUNTIME_DIR");
                snprintf(want, sizeof(want), "ipc:///tmp/fmud-%u/events.sock", 65534u);
                if (fmud_default_pub_endpoint(buf, sizeof(buf)) < 0 || strcmp(buf, want))
                        _exit(12);
                _exit(0);
        }
        cr_assert(waitpid(pid, &status, 0) == pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
}

/* In a child as nobody: the user's own socket first, then the system's, else the user's own. */
Test(fmud_endpoint, a_user_finds_the_system_daemon_after_its_own)
{
        char *dir = tmpdir_new("fmud-ep");
        char own[256], sys[256], closed[256], path[300];
        pid_t pid;
        int status;

        if (geteuid() != 0)
                cr_skip_test("dropping to another user needs root");
        cr_assert(dir != NULL);
        cr_assert(chmod(dir, 0755) == 0);
        snprintf(own, sizeof(own), "%s/user", dir);
        snprintf(sys, sizeof(sys), "%s/sys", dir);
        snprintf(closed, sizeof(closed), "%s/closed", dir);
        cr_assert(mkdir(own, 0755) == 0 && mkdir(sys, 0755) == 0 && mkdir(closed, 0700) == 0);
        snprintf(path, sizeof(path), "%s/control.sock", sys);
        cr_assert(tmpdir_write(sys, "control.sock", "", 0) == 0);
        cr_assert(tmpdir_write(closed, "control.sock", "", 0) == 0);
        unsetenv("RUNTIME_DIRECTORY");
        setenv("XDG_RUNTIME_DIR", own, 1);
        pid = fork();
        cr_assert(pid >= 0);
        if (pid == 0) {
                char buf[512], want[512];

                if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(10);
                /* No socket of the user's own: the system's. */
                snprintf(want, sizeof(want), "ipc://%s/control.sock", sys);
                if (fmud_client_endpoint(sys, buf, sizeof(buf)) < 0 || strcmp(buf, want))
                        _exit(11);
                /* One the user may not even look at: still the system's, to be told why. */
                snprintf(want, sizeof(want), "ipc://%s/control.sock", closed);
                if (fmud_client_endpoint(closed, buf, sizeof(buf)) < 0 || strcmp(buf, want))
                        _exit(12);
                /* No system daemon either: the user's own. */
                snprintf(want, sizeof(want), "ipc://%s/fmud/control.sock", own);
                if (fmud_client_endpoint(own, buf, sizeof(buf)) < 0 || strcmp(buf, want))
                        _exit(13);
                _exit(0);
        }
        cr_assert(waitpid(pid, &status, 0) == pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
        /* The user's own socket (the directory and the socket the user's) comes first. */
        snprintf(path, sizeof(path), "%s/fmud", own);
        cr_assert(mkdir(path, 0755) == 0);
        cr_assert(tmpdir_write(path, "control.sock", "", 0) == 0);
        cr_assert(chown(path, 65534, 65534) == 0);
        snprintf(path, sizeof(path), "%s/fmud/control.sock", own);
        cr_assert(chown(path, 65534, 65534) == 0);
        pid = fork();
        cr_assert(pid >= 0);
        if (pid == 0) {
                char buf[512], want[512];

                if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(10);
                snprintf(want, sizeof(want), "ipc://%s/fmud/control.sock", own);
                if (fmud_client_endpoint(sys, buf, sizeof(buf)) < 0 || strcmp(buf, want))
                        _exit(14);
                _exit(0);
        }
        cr_assert(waitpid(pid, &status, 0) == pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
        tmpdir_free(dir);
}

/*
 * In a child as nobody: a user's directory that somebody else made (in
 * sticky /tmp, any local user can), or that others may write, is never
 * where the user's requests go, even when no system daemon answers.
 */
Test(fmud_endpoint, a_user_skips_an_own_directory_somebody_else_controls)
{
        char *dir = tmpdir_new("fmud-ep");
        char own[256], sys[256], none[256], path[300];
        pid_t pid;
        int status;

        if (geteuid() != 0)
                cr_skip_test("dropping to another user needs root");
        cr_assert(dir != NULL);
        cr_assert(chmod(dir, 0755) == 0);
        snprintf(own, sizeof(own), "%s/user", dir);
        snprintf(sys, sizeof(sys), "%s/sys", dir);
        snprintf(none, sizeof(none), "%s/none", dir);
        cr_assert(mkdir(own, 0755) == 0 && mkdir(sys, 0755) == 0 && mkdir(none, 0755) == 0);
        cr_assert(tmpdir_write(sys, "control.sock", "", 0) == 0);
        /* The user's own directory, made and owned by root (another user), with a socket. */
        snprintf(path, sizeof(path), "%s/fmud", own);
        cr_assert(mkdir(path, 0755) == 0);
        cr_assert(tmpdir_write(path, "control.sock", "", 0) == 0);
        unsetenv("RUNTIME_DIRECTORY");
        setenv("XDG_RUNTIME_DIR", own, 1);
        for (int round = 0; round < 2; round++) {
                pid = fork();
                cr_assert(pid >= 0);
                if (pid == 0) {
                        char buf[512], want[512];

                        if (setresgid(65534, 65534, 65534) < 0 ||
                            setresuid(65534, 65534, 65534) < 0)
                                _exit(10);
                        snprintf(want, sizeof(want), "ipc://%s/control.sock", sys);
                        if (fmud_client_endpoint(sys, buf, sizeof(buf)) < 0 || strcmp(buf, want))
                                _exit(11);
                        /* No system daemon: still not the other user's socket. */
                        snprintf(want, sizeof(want), "ipc://%s/control.sock", none);
                        if (fmud_client_endpoint(none, buf, sizeof(buf)) < 0 || strcmp(buf, want))
                                _exit(12);
                        _exit(0);
                }
                cr_assert(waitpid(pid, &status, 0) == pid);
                cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "round %d: status %d",
                          round, status);
                /* Then the user's own, but one that others may write to. */
                snprintf(path, sizeof(path), "%s/fmud", own);
                cr_assert(chown(path, 65534, 65534) == 0 && chmod(path, 0777) == 0);
                snprintf(path, sizeof(path), "%s/fmud/control.sock", own);
                cr_assert(chown(path, 65534, 65534) == 0);
        }
        tmpdir_free(dir);
}
