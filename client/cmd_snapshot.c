/* fmuctl snapshot SESSION: save every instance's FMU state; prints the snapshot's id. */
#include <stdio.h>

#include "cli.h"
#include "commands.h"

static const struct cli_cmd def = {
        .name = "snapshot",
        .usage = "SESSION [options]",
        .about = "Saves every instance's FMU state at the session's current point and\n"
                 "prints the snapshot's id (for fmuctl restore). Refused when an FMU\n"
                 "cannot save its state.",
        .shared = CLI_SHARED_ALL,
};

int cmd_snapshot(int argc, char **argv)
{
        struct cli a = { .def = &def };
        struct proto_target t;
        uint64_t id;
        double time;
        int c, code;

        if (cli_getopt(&a, argc, argv) != 0)
                return FMUCTL_EXIT_USAGE;
        if (a.help)
                return cli_help(&a, stdout);
        code = cli_open_session(&a, argc, argv, &t);
        if (code)
                return code;
        c = fmud_snapshot(a.c, &t, &id, &time);
        if (c < 0) {
                code = cli_fail(&a, c, "snapshot session %s", argv[optind]);
        } else if (a.json) {
                struct json_object *o = json_object_new_object();

                json_object_object_add(o, "snapshot", json_object_new_uint64(id));
                json_object_object_add(o, "time", cli_json_double(time));
                cli_json_print(o);
        } else {
                printf("%llu\n", (unsigned long long)id);
        }
        cli_close(&a);
        return code;
}
