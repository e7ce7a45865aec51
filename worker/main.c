/*
 * fmud-worker: hosts one FMU instance for the daemon.
 *
 *     fmud-worker --channel-fd N --fmu-dir DIR
 *
 * N is the channel memfd the daemon passed (usually 3), DIR the unpacked
 * FMU. The worker serves the daemon's requests until FREE, then exits 0;
 * 1 when it could not start (the reason went out in the HELLO event), 2
 * when the daemon went away or broke the protocol, 64 for bad arguments.
 * It prints nothing: everything it has to say goes through the channel.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "worker/worker.h"

static int arg_fd = -1;
static const char *arg_dir;

static int parse_args(int argc, char *argv[])
{
        static const struct option opts[] = {
                { "channel-fd", required_argument, NULL, 'c' },
                { "fmu-dir", required_argument, NULL, 'd' },
                { 0 },
        };
        int c;

        while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                char *end;
                long v;

                switch (c) {
                case 'c':
                        errno = 0;
                        v = strtol(optarg, &end, 10);
                        if (errno || *end || v < 0 || v > 65535)
                                return -EINVAL;
                        arg_fd = (int)v;
                        break;
                case 'd':
                        arg_dir = optarg;
                        break;
                default:
                        return -EINVAL;
                }
        }
        return optind == argc && arg_fd >= 0 && arg_dir ? 0 : -EINVAL;
}

int main(int argc, char *argv[])
{
        struct worker *w;
        int code;

        if (parse_args(argc, argv) < 0)
                return 64;
        /* A worker outlives no daemon: the spawner sets this too, before exec. */
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (worker_open(arg_fd, arg_dir, &w) < 0)
                return 1;
        code = worker_run(w);
        worker_close(w);
        return code;
}
