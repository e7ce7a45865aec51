/*
 * fmuctl vars SESSION: every variable of a session, one line each: name,
 * type, causality, unit and current value (values as get prints them;
 * "-" for no unit, "?" for a value that cannot be read now). --json:
 * {"time", "vars": [{"name", "type", "causality", "variability", "unit",
 * "value"}, ...]}, unit and value null when there is none.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "commands.h"

/* s for a terminal: printable ASCII only (the daemon's text, from model descriptions). */
static void put(struct proto_str s, int width)
{
        cli_put_clean(stdout, s.ptr, s.len);
        for (int i = (int)s.len; i < width; i++)
                putchar(' ');
}

static void print_text(const struct fmud_var *v, size_t n)
{
        char small[256], *buf;
        size_t len;

        for (size_t i = 0; i < n; i++) {
                put(v[i].name, 32);
                putchar(' ');
                put(v[i].type, 8);
                putchar(' ');
                put(v[i].causality, 20);
                putchar(' ');
                if (v[i].unit.len)
                        put(v[i].unit, 8);
                else
                        put((struct proto_str){ "-", 1 }, 8);
                putchar(' ');
                if (!v[i].value) {
                        puts("?");
                        continue;
                }
                len = fmud_value_format(v[i].value, small, sizeof(small));
                buf = small;
                if (len >= sizeof(small)) {
                        buf = malloc(len + 1);
                        if (buf)
                                fmud_value_format(v[i].value, buf, len + 1);
                        else
                                buf = small;    /* truncated rather than nothing */
                }
                cli_put_clean(stdout, buf, len < sizeof(small) || buf != small ? len :
                              sizeof(small) - 1);
                putchar('\n');
                if (buf != small)
                        free(buf);
        }
}

static void print_json(const struct fmud_var *v, size_t n, double time)
{
        struct json_object *o = json_object_new_object(), *a = json_object_new_array();

        for (size_t i = 0; i < n; i++) {
                struct json_object *e = json_object_new_object();

                json_object_object_add(e, "name", cli_json_str(v[i].name));
                json_object_object_add(e, "type", cli_json_str(v[i].type));
                json_object_object_add(e, "causality", cli_json_str(v[i].causality));
                json_object_object_add(e, "variability", cli_json_str(v[i].variability));
                json_object_object_add(e, "unit", v[i].unit.len ? cli_json_str(v[i].unit) : NULL);
                json_object_object_add(e, "value", v[i].value ? cli_json_value(v[i].value) : NULL);
                json_object_array_add(a, e);
        }
        json_object_object_add(o, "time", cli_json_double(time));
        json_object_object_add(o, "vars", a);
        cli_json_print(o);
}

static const struct cli_cmd def = {
        .name = "vars",
        .usage = "SESSION [options]",
        .about = "Lists every variable of a session: name (as get and set take it),\n"
                 "type, causality, unit ('-': none) and current value ('?': not\n"
                 "readable now), one line each.",
        .shared = CLI_SHARED_ALL,
};

int cmd_vars(int argc, char **argv)
{
        struct cli a = { .def = &def };
        const struct fmud_var *v;
        struct proto_target t;
        double time;
        size_t n;
        int c, code;

        if (cli_getopt(&a, argc, argv) != 0)
                return FMUCTL_EXIT_USAGE;
        if (a.help)
                return cli_help(&a, stdout);
        if (optind != argc - 1)
                return cli_usage_error(&a, "expected SESSION");
        code = cli_target(&a, argv[optind], &t);
        if (code == 0)
                code = cli_open(&a);
        if (code)
                return code;
        c = fmud_vars(a.c, &t, &v, &n, &time);
        if (c < 0)
                code = cli_fail(&a, c, "list the variables of session %s", argv[optind]);
        else if (a.json)
                print_json(v, n, time);
        else
                print_text(v, n);
        cli_close(&a);
        return code;
}
