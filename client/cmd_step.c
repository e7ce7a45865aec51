/*
 * fmuctl step SESSION [N] [--until T]: advance a loaded or paused session
 * by N communication points (default 1), or to time T; the daemon replies
 * when the points are done. This is how a remote master drives time.
 */
#include <stdio.h>

#include "cli.h"
#include "commands.h"

enum { O_UNTIL = 1200 };

static const struct cli_opt opts[] = {
        { "until", O_UNTIL, "T", "run until simulated time T" },
        { 0 },
};

static const struct cli_cmd def = {
        .name = "step",
        .usage = "SESSION [N] [options]\nSESSION --until T [options]",
        .about = "Advances a loaded or paused session by N communication points (default\n"
                 "1), or to the last point at or before time T, and prints where it is.",
        .opts = { opts },
        .shared = CLI_SHARED_ALL,
};

int cmd_step(int argc, char **argv)
{
        struct cli a = { .def = &def };
        struct proto_progress p;
        struct proto_target t;
        uint64_t n = 1;
        double until = 0;
        bool has_until = false;
        int c, code = 0;

        while (code == 0 && (c = cli_getopt(&a, argc, argv)) > 0) {
                if (c == O_UNTIL) {
                        code = cli_number(&a, "--until", optarg, &until);
                        has_until = true;
                }
        }
        if (c < 0)
                return FMUCTL_EXIT_USAGE;
        if (code)
                return code;
        if (a.help)
                return cli_help(&a, stdout);
        if (optind == argc || optind < argc - 2 || (has_until && optind != argc - 1))
                return cli_usage_error(&a, "expected SESSION and N, or SESSION --until T");
        code = cli_target(&a, argv[optind], &t);
        if (code == 0 && optind == argc - 2)
                code = cli_count(&a, "N", argv[optind + 1], &n);
        if (code == 0 && n == 0)
                code = cli_usage_error(&a, "N must be at least 1, not '%s'", argv[optind + 1]);
        if (code == 0)
                code = cli_open(&a);
        if (code)
                return code;
        /* A long run-until may take a while: wait as long as it takes. */
        fmud_set_timeout(a.c, -1);
        if (has_until)
                c = fmud_run_until(a.c, &t, until, &p);
        else
                c = fmud_step(a.c, &t, n, &p);
        if (c < 0) {
                code = cli_fail(&a, c, "step session %s", argv[optind]);
        } else {
                if (a.json)
                        cli_json_print(cli_json_progress(&p));
                else
                        cli_print_progress(t.session, &p);
                code = p.state == PROTO_STATE_FAULTED ? FMUCTL_EXIT_FAULT : FMUCTL_EXIT_OK;
        }
        cli_close(&a);
        return code;
}
