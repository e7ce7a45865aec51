/*
 * fmuctl shutdown: ask the daemon to stop every session and exit, and
 * wait until it has (as pg_ctl stop does), unless --no-wait.
 *
 * DESIGN: before asking, the daemon's process is pinned with a pidfd:
 * its pid comes from the local control socket's peer credentials
 * (SO_PEERCRED on a plain connection to the socket file), so a pid
 * reused meanwhile cannot be mistaken for it. After the reply, the pidfd
 * becomes readable when the daemon has exited. A tcp endpoint has no
 * pid to wait for: there fmuctl returns after the reply, as --no-wait.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

/* Long enough for every session's workers to end (call_timeout, then 5 s each, in parallel). */
#define WAIT_EXIT_MS 120000

enum { O_NO_WAIT = 1 };

static const struct cli_opt opts[] = {
        { "no-wait", O_NO_WAIT, NULL, "return once the daemon has accepted, without waiting\n"
                                      "for it to exit" },
        { 0 },
};

static const struct cli_cmd def = {
        .name = "shutdown",
        .usage = "[options]",
        .about = "Asks the daemon to stop every session (results flushed) and exit, and waits\n"
                 "until it has exited (a local daemon; over tcp it returns after the reply).\n"
                 "The daemon exits with status 0: under systemd, Restart=on-failure leaves it\n"
                 "stopped.",
        .opts = { opts },
        .shared = CLI_SHARED_ALL,
        .footer = "exit status: 0 once the daemon has exited (or, with --no-wait or over tcp,\n"
                  "accepted); 3 when it had not exited after 120 s.",
};

/* A pidfd of the process serving the ipc endpoint ep; -errno when there is none to wait for. */
static int daemon_pidfd(const char *ep)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct ucred cred;
        socklen_t len = sizeof(cred);
        int fd, r;

        if (strncmp(ep, "ipc://", 6) || strlen(ep + 6) >= sizeof(sa.sun_path))
                return -ENOTSUP;
        strcpy(sa.sun_path, ep + 6);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
            getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        close(fd);
        r = (int)syscall(SYS_pidfd_open, cred.pid, 0);
        return r < 0 ? -errno : r;
}

/* Wait for the process behind pidfd to exit. 0, -ETIMEDOUT, -EINTR. */
static int wait_exit(int pidfd)
{
        struct pollfd p = { .fd = pidfd, .events = POLLIN };
        int r = poll(&p, 1, WAIT_EXIT_MS);

        if (r < 0)
                return -errno;
        return r == 0 ? -ETIMEDOUT : 0;
}

int cmd_shutdown(int argc, char **argv)
{
        struct cli a = { .def = &def };
        char buf[4096];
        bool wait = true;
        int c, code, pidfd = -1;
        const char *ep;

        while ((c = cli_getopt(&a, argc, argv)) > 0)
                if (c == O_NO_WAIT)
                        wait = false;
        if (c < 0)
                return FMUCTL_EXIT_USAGE;
        if (a.help)
                return cli_help(&a, stdout);
        if (optind != argc)
                return cli_usage_error(&a, "no arguments expected");
        code = cli_open(&a);
        if (code)
                return code;
        ep = cli_endpoint(&a, buf, sizeof(buf));
        if (wait && ep)
                pidfd = daemon_pidfd(ep);
        c = fmud_shutdown(a.c);
        if (c < 0) {
                code = cli_fail(&a, c, "shut the daemon down");
                goto out;
        }
        if (pidfd >= 0) {
                c = wait_exit(pidfd);
                if (c == -EINTR) {
                        code = FMUCTL_EXIT_INTERRUPTED;
                        goto out;
                }
                if (c < 0) {
                        fprintf(stderr, "fmuctl: the daemon at '%s' accepted the shutdown but had "
                                "not exited after %d s\n", ep, WAIT_EXIT_MS / 1000);
                        code = FMUCTL_EXIT_SYSTEM;
                        goto out;
                }
        }
        if (a.json)
                cli_json_print(json_object_new_object());
out:
        if (pidfd >= 0)
                close(pidfd);
        cli_close(&a);
        return code;
}
