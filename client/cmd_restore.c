/* fmuctl restore SESSION ID: return the session to a snapshot; prints its new generation. */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "commands.h"

int cmd_restore(int argc, char **argv)
{
        static const struct option opts[] = { CLI_CONN_OPTIONS, { 0 } };
        struct cli a = { .cmd = "restore" };
        struct proto_target t;
        uint64_t id, gen;
        int c, code;

        optind = 1;
        while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1)
                if (!cli_option(&a, c, optarg))
                        return cli_usage_error(&a, "unknown option");
        if (a.help) {
                printf("usage: fmuctl restore SESSION ID [options]\n\n"
                       "Returns the session to snapshot ID (fmuctl snapshot). The session's\n"
                       "generation grows, so requests naming the old one are refused; the new\n"
                       "generation is printed.\n\n" CLI_CONN_HELP);
                return FMUCTL_EXIT_OK;
        }
        if (optind != argc - 2)
                return cli_usage_error(&a, "expected SESSION and ID");
        code = cli_target(&a, argv[optind], &t);
        if (code == 0)
                code = cli_count(&a, "ID", argv[optind + 1], &id);
        if (code == 0)
                code = cli_open(&a);
        if (code)
                return code;
        c = fmud_restore(a.c, &t, id, &gen);
        if (c < 0) {
                code = cli_fail(&a, c, "restore session %s to snapshot %s", argv[optind],
                                argv[optind + 1]);
        } else if (a.json) {
                struct json_object *o = json_object_new_object();

                json_object_object_add(o, "session", json_object_new_uint64(t.session));
                json_object_object_add(o, "generation", json_object_new_uint64(gen));
                cli_json_print(o);
        } else {
                printf("%llu\n", (unsigned long long)gen);
        }
        cli_close(&a);
        return code;
}
