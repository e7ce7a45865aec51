/* fmuctl list: the daemon's sessions, one line each (--json: {"sessions": [...]}). */
#include <stdio.h>

#include "cli.h"
#include "commands.h"

static void print_text(const struct proto_list_result *l)
{
        printf("%8s %5s %-10s %14s %-10s  %s\n", "SESSION", "GEN", "STATE", "TIME", "LEASE",
               "NAME");
        for (uint32_t i = 0; i < l->n; i++) {
                const struct proto_session_brief *s = &l->sessions[i];
                const char *st = proto_state_name(s->state);

                printf("%8llu %5llu %-10s %14.9g %-10s  ", (unsigned long long)s->session,
                       (unsigned long long)s->generation, st ? st : "?", s->time,
                       s->transient ? "transient" : "-");
                cli_put_clean(stdout, s->name.ptr, s->name.len);
                /* An FMI-level instance (instantiate): no master, called with fmi. */
                if (s->kind.len) {
                        fputs("  {", stdout);
                        cli_put_clean(stdout, s->kind.ptr, s->kind.len);
                        putchar('}');
                }
                if (s->transient && s->owner.len) {
                        fputs("  (owner ", stdout);
                        cli_put_clean(stdout, s->owner.ptr, s->owner.len);
                        putchar(')');
                }
                if (s->user.len) {
                        fputs("  [user ", stdout);
                        cli_put_clean(stdout, s->user.ptr, s->user.len);
                        putchar(']');
                }
                putchar('\n');
        }
}

static void print_json(const struct proto_list_result *l)
{
        struct json_object *o = json_object_new_object(), *arr = json_object_new_array();

        for (uint32_t i = 0; i < l->n; i++) {
                const struct proto_session_brief *s = &l->sessions[i];
                struct json_object *e = json_object_new_object();
                const char *st = proto_state_name(s->state);

                json_object_object_add(e, "session", json_object_new_uint64(s->session));
                json_object_object_add(e, "generation", json_object_new_uint64(s->generation));
                json_object_object_add(e, "name", cli_json_str(s->name));
                json_object_object_add(e, "state", json_object_new_string(st ? st : "unknown"));
                json_object_object_add(e, "time", cli_json_double(s->time));
                json_object_object_add(e, "transient", json_object_new_boolean(s->transient));
                if (s->kind.len)
                        json_object_object_add(e, "kind", cli_json_str(s->kind));
                if (s->transient)
                        json_object_object_add(e, "owner", cli_json_str(s->owner));
                if (s->user.len)
                        json_object_object_add(e, "user", cli_json_str(s->user));
                json_object_array_add(arr, e);
        }
        json_object_object_add(o, "sessions", arr);
        cli_json_print(o);
}

static const struct cli_cmd def = {
        .name = "list",
        .usage = "[options]",
        .about = "Lists the daemon's sessions.",
        .shared = CLI_SHARED_ALL,
};

int cmd_list(int argc, char **argv)
{
        struct cli a = { .def = &def };
        struct proto_list_result l;
        int c, code;

        if (cli_getopt(&a, argc, argv) != 0)
                return FMUCTL_EXIT_USAGE;
        if (a.help)
                return cli_help(&a, stdout);
        if (optind != argc)
                return cli_usage_error(&a, "no arguments expected");
        code = cli_open(&a);
        if (code)
                return code;
        c = fmud_list(a.c, &l);
        if (c < 0)
                code = cli_fail(&a, c, "list the sessions");
        else if (a.json)
                print_json(&l);
        else
                print_text(&l);
        cli_close(&a);
        return code;
}
