/*
 * fmuctl get SESSION NAME...: read variables ("instance.variable"), one
 * "NAME = VALUE" line each, values as fmuctl set reads them back
 * (--json: {"NAME": value, ...}).
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "commands.h"

static void print_text(const char *const names[], const struct pv *const *v, size_t n)
{
        char small[256], *buf;
        size_t len;

        for (size_t i = 0; i < n; i++) {
                len = fmud_value_format(v[i], small, sizeof(small));
                buf = small;
                if (len >= sizeof(small)) {
                        buf = malloc(len + 1);
                        if (buf)
                                fmud_value_format(v[i], buf, len + 1);
                        else
                                buf = small;    /* truncated rather than nothing */
                }
                printf("%s = %s\n", names[i], buf);
                if (buf != small)
                        free(buf);
        }
}

static const struct cli_cmd def = {
        .name = "get",
        .usage = "SESSION NAME... [options]",
        .about = "Prints the current values of variables (instance.variable; the bare\n"
                 "name in a one-FMU session), one 'NAME = VALUE' line each.",
        .shared = CLI_SHARED_ALL,
};

int cmd_get(int argc, char **argv)
{
        struct cli a = { .def = &def };
        const struct pv *const *v;
        const char *const *names;
        struct proto_target t;
        size_t n;
        int c, code;

        if (cli_getopt(&a, argc, argv) != 0)
                return FMUCTL_EXIT_USAGE;
        if (a.help)
                return cli_help(&a, stdout);
        if (optind > argc - 2)
                return cli_usage_error(&a, "expected SESSION and at least one NAME");
        code = cli_target(&a, argv[optind], &t);
        if (code == 0)
                code = cli_open(&a);
        if (code)
                return code;
        names = (const char *const *)argv + optind + 1;
        n = (size_t)(argc - optind - 1);
        c = fmud_get(a.c, &t, names, n, &v);
        if (c < 0) {
                code = cli_fail(&a, c, "get from session %s", argv[optind]);
        } else if (a.json) {
                struct json_object *o = json_object_new_object();

                for (size_t i = 0; i < n; i++)
                        json_object_object_add(o, names[i], cli_json_value(v[i]));
                cli_json_print(o);
        } else {
                print_text(names, v, n);
        }
        cli_close(&a);
        return code;
}
