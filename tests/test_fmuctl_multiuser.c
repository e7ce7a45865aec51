/*
 * fmuctl among several users: shutdown waits for the daemon to exit (or
 * not, --no-wait), a user who may not open the socket is told so at once
 * with the group to ask for, and `fmuctl run`'s private daemon never reads
 * the system's configuration.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon_fixture.h"
#include "support/private_env.h"
#include "support/run.h"
#include "support/tmpdir.h"

static struct fmud_daemon d;

static struct run_result fmuctl(const char *const args[])
{
        char *argv[16] = { (char *)FMUD_FMUCTL };
        struct run_result r = { 0 };
        size_t n = 1;

        for (; args[n - 1] && n < 15; n++)
                argv[n] = (char *)args[n - 1];
        argv[n] = NULL;
        cr_assert(eq(int, run_capture(argv, &r), 0));
        return r;
}

/* Whether process pid has exited (a zombie not yet reaped counts), without reaping it. */
static bool exited(pid_t pid)
{
        siginfo_t si = { 0 };

        cr_assert(eq(int, waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT), 0));
        return si.si_pid == pid;
}

Test(fmuctl_multiuser, shutdown_returns_once_the_daemon_has_exited)
{
        struct run_result r;

        daemon_start(&d, NULL);
        /* Sessions with workers to end: the daemon's exit takes a while after its reply. */
        for (int i = 0; i < 4; i++) {
                r = fmuctl((const char *[]){ "load", FMUD_EXAMPLES "/msd.ssp", "--warp", "1",
                                             "--endpoint", d.endpoint, NULL });
                cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
                run_result_fini(&r);
        }
        r = fmuctl((const char *[]){ "start", "1", "--endpoint", d.endpoint, NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "shutdown", "--endpoint", d.endpoint, NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(exited(d.pid), "fmuctl shutdown returned before the daemon exited");
        run_result_fini(&r);
        /* Exit status 0: systemd's Restart=on-failure leaves it stopped. */
        daemon_join(&d);
}

Test(fmuctl_multiuser, shutdown_no_wait_returns_after_the_reply)
{
        struct run_result r;

        daemon_start(&d, NULL);
        r = fmuctl((const char *[]){ "shutdown", "--no-wait", "--endpoint", d.endpoint, NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(eq(str, r.err, ""));
        run_result_fini(&r);
        daemon_join(&d);
}

Test(fmuctl_multiuser, a_user_who_may_not_open_the_socket_is_told_the_group_at_once)
{
        static const char conf[] = "[control]\nsocket_group = 1\n";
        char *conf_path, *errf, *text, want[512];
        struct group *g = getgrgid(1);
        struct run_result r;
        int status, fd;
        pid_t pid;

        if (geteuid() != 0)
                cr_skip_test("another user's view needs root");
        cr_assert(g != NULL, "no group 1 on this system");
        {
                char *dir = tmpdir_new("fmud-mu");

                cr_assert(dir != NULL);
                cr_assert(eq(int, tmpdir_write(dir, "fmud.conf", conf, strlen(conf)), 0));
                cr_assert(asprintf(&conf_path, "%s/fmud.conf", dir) > 0);
                daemon_start(&d, (const char *[]){ "--config", conf_path, NULL });
                free(dir);      /* the file stays until the test's end; so does the folder */
        }
        /* The user may walk to the socket, which is 0660 root:1, not its group. */
        cr_assert(eq(int, chmod(d.dir, 0755), 0));
        errf = daemon_path(&d, "fmuctl.err");
        fd = open(errf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        cr_assert(fd >= 0);
        pid = fork();
        cr_assert(pid >= 0);
        if (pid == 0) {
                if (dup2(fd, 2) < 0 || setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                    setresuid(65534, 65534, 65534) < 0)
                        _exit(100);
                execl(FMUD_FMUCTL, FMUD_FMUCTL, "status", "--endpoint", d.endpoint, (char *)NULL);
                _exit(101);
        }
        close(fd);
        cr_assert(eq(int, waitpid(pid, &status, 0), pid));
        text = daemon_slurp(errf, NULL);
        snprintf(want, sizeof(want), "fmuctl: permission denied: %s (ask to be added to group "
                 "%s)\n", d.control_sock, g->gr_name);
        cr_assert(eq(str, text, want));
        cr_assert(eq(int, WIFEXITED(status) ? WEXITSTATUS(status) : -1, 1));
        /* Nothing else harmed: the daemon serves its own users. */
        r = fmuctl((const char *[]){ "status", "--endpoint", d.endpoint, NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        run_result_fini(&r);
        free(text);
        free(errf);
        daemon_stop(&d);
        unlink(conf_path);
        free(conf_path);
}

Test(fmuctl_multiuser, run_private_daemon_never_reads_the_system_config)
{
        static const char conf[] = "[control]\nsocket_group = fmud-test-no-such-group\n";
        char *dir = tmpdir_new("fmud-mu"), *ep = NULL, *out = NULL, *conf_path = NULL;
        char *ep2 = NULL, *cache = NULL, *scratch = NULL, *state = NULL;
        struct run_result r;

        cr_assert(dir != NULL);
        cr_assert(eq(int, private_env(dir), 0));
        cr_assert(eq(int, chmod(dir, 0755), 0));
        cr_assert(asprintf(&ep, "ipc://%s/control.sock", dir) > 0);
        cr_assert(asprintf(&out, "%s/msd.csv", dir) > 0);
        cr_assert(asprintf(&conf_path, "%s/fmud.conf", dir) > 0);
        cr_assert(eq(int, tmpdir_write(dir, "fmud.conf", conf, strlen(conf)), 0));
        cr_assert(eq(int, setenv("FMUD_CONFIG", conf_path, 1), 0));
        cr_assert(eq(int, setenv("FMUD_ENDPOINT", ep, 1), 0));
        cr_assert(eq(int, setenv("FMUD_CACHE_DIR", dir, 1), 0));
        cr_assert(eq(int, prctl(PR_SET_CHILD_SUBREAPER, 1), 0));
        /* That file is the default one now: a daemon that reads it does not start. */
        cr_assert(asprintf(&ep2, "ipc://%s/d/control.sock", dir) > 0);
        cr_assert(asprintf(&cache, "%s/cache", dir) > 0);
        cr_assert(asprintf(&scratch, "%s/scratch", dir) > 0);
        cr_assert(asprintf(&state, "%s/state", dir) > 0);
        {
                char *argv[] = { (char *)FMUD_BINARY, "--endpoint", ep2, "--cache-dir", cache,
                                 "--scratch-dir", scratch, "--state-dir", state, NULL };

                cr_assert(eq(int, run_capture(argv, &r), 0));
                cr_assert(eq(int, r.exit_code, 1), "%s", r.err);
                cr_assert(strstr(r.err, "socket_group 'fmud-test-no-such-group': no such group") !=
                          NULL, "%s", r.err);
                run_result_fini(&r);
        }
        r = fmuctl((const char *[]){ "run", FMUD_EXAMPLES "/msd.ssp", "--out", out, NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(strstr(r.out, "finished") != NULL, "%s", r.out);
        run_result_fini(&r);
        tmpdir_free(dir);
        free(ep);
        free(ep2);
        free(out);
        free(conf_path);
        free(cache);
        free(scratch);
        free(state);
}
