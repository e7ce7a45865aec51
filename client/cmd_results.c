/*
 * fmuctl results SESSION [--out FILE] [--no-wait]: the session's results
 * file, fetched through the daemon (PROTOCOL.md "results"), so that a
 * client on another machine gets them; written to FILE (.mat: converted
 * to MAT v4 here) or standard output.
 *
 * DESIGN: the rows are fetched while the session records, a piece as soon
 * as it is complete on the daemon's side, polling every POLL_MS when none
 * is; the command ends once the daemon says the file is done (the session
 * ended), or at once with --no-wait after what is complete now.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "commands.h"
#include "results_fetch.h"

#define POLL_MS 200

enum { O_OUT = 'o', O_NO_WAIT = 1500 };

static const struct cli_opt opts[] = {
        { "out", O_OUT, "FILE", "write the results to FILE (.mat: MAT v4, Dymola's\n"
                                "layout); absent or -: CSV on standard output" },
        { "no-wait", O_NO_WAIT, NULL, "stop after the rows complete now, even while\n"
                                      "the session still records" },
        { 0 },
};

static const struct cli_cmd def = {
        .name = "results",
        .usage = "SESSION [options]",
        .about = "Fetches the session's results file through the daemon, as it is\n"
                 "recorded: on another machine too. Waits for the rows still to come\n"
                 "until the session ends (finished, stopped or faulted), unless\n"
                 "--no-wait. Only the session's owner or an admin may fetch them;\n"
                 "they are there until the session is unloaded.",
        .opts = { opts },
        .shared = CLI_SHARED_CONN,
};

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
        (void)sig;
        interrupted = 1;
}

int cmd_results(int argc, char **argv)
{
        struct cli a = { .def = &def };
        struct sigaction sa = { .sa_handler = on_sigint }, old;
        struct results_fetch f;
        struct proto_target t;
        const char *out = NULL;
        bool wait = true;
        char err[1024];
        int c, code, r = 0;

        while ((c = cli_getopt(&a, argc, argv)) > 0) {
                if (c == O_OUT)
                        out = optarg;
                else if (c == O_NO_WAIT)
                        wait = false;
        }
        if (c < 0)
                return FMUCTL_EXIT_USAGE;
        if (a.help)
                return cli_help(&a, stdout);
        code = cli_open_session(&a, argc, argv, &t);
        if (code)
                return code;
        /* A session that cannot be read is said before --out is created or truncated. */
        {
                struct fmud_results probe;
                char byte;

                r = fmud_results_read(a.c, &t, 0, &byte, sizeof(byte), &probe);
                if (r < 0) {
                        code = cli_fail(&a, r, "fetch the results of session %s", argv[optind]);
                        cli_close(&a);
                        return code;
                }
        }
        if (results_fetch_open(&f, out, err, sizeof(err)) < 0) {
                fprintf(stderr, "fmuctl results: %s\n", err);
                cli_close(&a);
                return FMUCTL_EXIT_SYSTEM;
        }
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old);
        while (!interrupted) {
                r = results_fetch_pump(&f, a.c, &t, err, sizeof(err));
                if (r != 0 || !wait)
                        break;
                nanosleep(&(struct timespec){ 0, POLL_MS * 1000000L }, NULL);
        }
        sigaction(SIGINT, &old, NULL);
        if (r < 0 && f.daemon_err) {
                code = cli_fail(&a, r, "fetch the results of session %s", argv[optind]);
        } else if (r < 0) {
                fprintf(stderr, "fmuctl results: %s\n", err);
                code = FMUCTL_EXIT_SYSTEM;
        }
        if (results_fetch_close(&f, err, sizeof(err)) < 0 && !code) {
                fprintf(stderr, "fmuctl results: %s\n", err);
                code = FMUCTL_EXIT_SYSTEM;
        }
        if (interrupted && !code) {
                fprintf(stderr, "fmuctl results: interrupted\n");
                code = FMUCTL_EXIT_INTERRUPTED;
        }
        cli_close(&a);
        return code;
}
