/*
 * fmuctl set SESSION NAME=VALUE...: write variables, all in one request
 * (applied together). VALUE: true/false, an integer, a number, "a
 * string", hex:0aff10 (Binary), [an, array], or other text as a string
 * (fmud_value_parse()).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "fmt.h"

struct assigns {
        size_t n;
        struct proto_named_value *nv;
        struct pv **values;
};

static void assigns_fini(struct assigns *s)
{
        for (size_t i = 0; i < s->n; i++)
                fmud_value_free(s->values[i]);
        free(s->values);
        free(s->nv);
}

static int parse(const struct cli *a, char **args, size_t n, struct assigns *s)
{
        char err[256];

        s->nv = calloc(n, sizeof(*s->nv));
        s->values = calloc(n, sizeof(*s->values));
        if (!s->nv || !s->values) {
                fprintf(stderr, "fmuctl set: out of memory\n");
                return FMUCTL_EXIT_SYSTEM;
        }
        for (size_t i = 0; i < n; i++) {
                char *eq = strchr(args[i], '=');

                if (!eq || eq == args[i])
                        return cli_usage_error(a, "expected NAME=VALUE, not '%s'", args[i]);
                if (fmud_value_parse(eq + 1, &s->values[i], err, sizeof(err)) < 0)
                        return cli_usage_error(a, "'%s': %s", args[i], err);
                s->n = i + 1;
                s->nv[i] = (struct proto_named_value){
                        .name = { args[i], (uint32_t)(eq - args[i]) },
                        .value = s->values[i],
                };
        }
        return 0;
}

static const struct cli_cmd def = {
        .name = "set",
        .usage = "SESSION NAME=VALUE... [options]",
        .about = "Writes variables, all in one request. VALUE is true or false, an\n"
                 "integer (42, -3, 0x1f), a number (1.5, 2e-3, inf), \"a string\" (escapes\n"
                 "\\\" \\\\ \\n \\t), binary bytes in hex (hex:0aff10), an array [1, 2, 3],\n"
                 "or any other text, taken as a string.",
        .shared = CLI_SHARED_ALL,
};

int cmd_set(int argc, char **argv)
{
        struct cli a = { .def = &def };
        struct assigns s = { 0 };
        struct proto_target t;
        double time = NAN;
        int c, code;

        if (cli_getopt(&a, argc, argv) != 0)
                return FMUCTL_EXIT_USAGE;
        if (a.help)
                return cli_help(&a, stdout);
        if (optind > argc - 2)
                return cli_usage_error(&a, "expected SESSION and at least one NAME=VALUE");
        code = cli_target(&a, argv[optind], &t);
        if (code == 0)
                code = parse(&a, argv + optind + 1, (size_t)(argc - optind - 1), &s);
        if (code == 0)
                code = cli_open(&a);
        if (code)
                goto out;
        c = fmud_set_at(a.c, &t, s.nv, s.n, &time);
        if (c < 0) {
                code = cli_fail(&a, c, "set in session %s", argv[optind]);
        } else if (a.json) {
                struct json_object *o = json_object_new_object();

                if (o && !isnan(time))
                        json_object_object_add(o, "time", cli_json_double(time));
                cli_json_print(o);
        } else if (!isnan(time)) {
                char buf[FMT_NUM_MAX];

                printf("applied at t = %s\n", fmt_double(buf, time));
        }
        cli_close(&a);
out:
        assigns_fini(&s);
        return code;
}
