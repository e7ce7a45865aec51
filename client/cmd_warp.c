/* fmuctl warp SESSION W: pace the session at W times real time (0: as fast as possible). */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "commands.h"

int cmd_warp(int argc, char **argv)
{
        static const struct option opts[] = { CLI_CONN_OPTIONS, { 0 } };
        struct cli a = { .cmd = "warp" };
        struct proto_progress p;
        struct proto_target t;
        double w;
        int c, code;

        optind = 1;
        while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1)
                if (!cli_option(&a, c, optarg))
                        return cli_usage_error(&a, "unknown option");
        if (a.help) {
                printf("usage: fmuctl warp SESSION W [options]\n\n"
                       "Runs the session at W times real time from now on (0: as fast as\n"
                       "possible); simulated time does not jump.\n\n" CLI_CONN_HELP);
                return FMUCTL_EXIT_OK;
        }
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
