/* fmuctl warp SESSION W: pace the session at W times real time (0: as fast as possible). */
#include <stdio.h>

#include "cli.h"
#include "commands.h"

static const struct cli_cmd def = {
        .name = "warp",
        .usage = "SESSION W [options]",
        .about = "Runs the session at W times real time from now on (0: as fast as\n"
                 "possible); simulated time does not jump.",
        .shared = CLI_SHARED_ALL,
};

int cmd_warp(int argc, char **argv)
{
        struct cli a = { .def = &def };
        struct proto_progress p;
        struct proto_target t;
        double w;
        int c, code;

        if (cli_getopt(&a, argc, argv) != 0)
                return FMUCTL_EXIT_USAGE;
        if (a.help)
                return cli_help(&a, stdout);
        if (optind != argc - 2)
                return cli_usage_error(&a, "expected SESSION and W");
        code = cli_target(&a, argv[optind], &t);
        if (code == 0)
                code = cli_number(&a, "W", argv[optind + 1], &w);
        if (code == 0 && w < 0)
                code = cli_usage_error(&a, "W must not be negative");
        if (code == 0)
                code = cli_open(&a);
        if (code)
                return code;
        c = fmud_warp(a.c, &t, w, &p);
        if (c < 0)
                code = cli_fail(&a, c, "warp session %s", argv[optind]);
        else if (a.json)
                cli_json_print(cli_json_progress(&p));
        else
                cli_print_progress(t.session, &p);
        cli_close(&a);
        return code;
}
