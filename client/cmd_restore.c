/* fmuctl restore SESSION ID: return the session to a snapshot; prints its new generation. */
#include <stdio.h>

#include "cli.h"
#include "commands.h"

static const struct cli_cmd def = {
        .name = "restore",
        .usage = "SESSION ID [options]",
        .about = "Returns the session to snapshot ID (fmuctl snapshot). The session's\n"
                 "generation grows, so requests naming the old one are refused; the new\n"
                 "generation is printed.",
        .shared = CLI_SHARED_ALL,
};

int cmd_restore(int argc, char **argv)
{
        struct cli a = { .def = &def };
        struct proto_target t;
        uint64_t id, gen;
        int c, code;

        if (cli_getopt(&a, argc, argv) != 0)
                return FMUCTL_EXIT_USAGE;
        if (a.help)
                return cli_help(&a, stdout);
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
