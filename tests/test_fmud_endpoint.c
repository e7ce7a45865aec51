/*
 * The default endpoints (proto/endpoint.h): one rule for fmud and fmuctl.
 * The unprivileged branches run in a child that drops to nobody.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/endpoint.h"

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
