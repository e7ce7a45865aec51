/*
 * fmuctl snapshot SESSION: save every instance's FMU state; prints the
 * snapshot's id. fmuctl snapshot list SESSION: the session's snapshots;
 * fmuctl snapshot delete SESSION ID: free one; fmuctl snapshot export
 * SESSION ID -o FILE: write one to a file; fmuctl snapshot import SESSION
 * FILE: make a new snapshot of such a file, printing its id.
 *
 * DESIGN: list, delete, export and import are words before SESSION, not
 * options: a session is named by its number, so no word can be one.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "commands.h"

enum { O_OUT = 'o' };

static const struct cli_opt opts[] = {
        { "out", O_OUT, "FILE", "export: the file to write the snapshot to" },
        { 0 },
};

static const struct cli_cmd def = {
        .name = "snapshot",
        .usage = "SESSION [options]\nlist SESSION [options]\ndelete SESSION ID [options]\n"
                 "export SESSION ID -o FILE [options]\nimport SESSION FILE [options]",
        .about = "Saves every instance's FMU state at the session's current point and\n"
                 "prints the snapshot's id (for fmuctl restore). Refused when an FMU\n"
                 "cannot save its state. 'list' prints the session's snapshots, oldest\n"
                 "first: id, simulated time, generation and when it was taken (UTC).\n"
                 "'delete' frees a snapshot and the FMU states it holds in the workers.\n"
                 "'export' writes a snapshot to FILE: every instance's serialized FMU\n"
                 "state and the master's state (refused when an FMU cannot serialize\n"
                 "its state). 'import' sends such a file to a session of the same\n"
                 "scenario, in this daemon or another, and prints the new snapshot's\n"
                 "id (for fmuctl restore).",
        .opts = { opts },
        .shared = CLI_SHARED_ALL,
};

#define TAKEN_MAX       253402300800.0  /* 10000-01-01T00:00:00Z */

static void print_list(const struct proto_snapshots_result *l, bool json)
{
        struct json_object *o, *arr;
        char when[32];

        if (!json) {
                printf("%-10s %-14s %-10s %s\n", "ID", "TIME", "GEN", "TAKEN");
                for (uint32_t i = 0; i < l->n; i++) {
                        const struct proto_snapshot_info *s = &l->snapshots[i];
                        /* Decoded finite and not negative; past year 9999 it is no date. */
                        time_t secs = s->taken < TAKEN_MAX ? (time_t)s->taken : 0;
                        struct tm tm;

                        if (!(s->taken < TAKEN_MAX) || !gmtime_r(&secs, &tm) ||
                            !strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm))
                                snprintf(when, sizeof(when), "?");
                        printf("%-10llu %-14.9g %-10llu %s\n", (unsigned long long)s->snapshot,
                               s->time, (unsigned long long)s->generation, when);
                }
                return;
        }
        o = json_object_new_object();
        arr = json_object_new_array();
        for (uint32_t i = 0; i < l->n; i++) {
                const struct proto_snapshot_info *s = &l->snapshots[i];
                struct json_object *e = json_object_new_object();

                json_object_object_add(e, "snapshot", json_object_new_uint64(s->snapshot));
                json_object_object_add(e, "time", cli_json_double(s->time));
                json_object_object_add(e, "generation", json_object_new_uint64(s->generation));
                json_object_object_add(e, "taken", cli_json_double(s->taken));
                json_object_array_add(arr, e);
        }
        json_object_object_add(o, "snapshots", arr);
        cli_json_print(o);
}

static int list_or_delete(struct cli *a, int argc, char **argv, bool del)
{
        struct proto_snapshots_result l;
        struct proto_target t;
        uint64_t id = 0;
        int c, code;

        if (optind + (del ? 2 : 1) != argc)
                return cli_usage_error(a, del ? "expected delete SESSION ID" :
                                       "expected list SESSION");
        code = cli_target(a, argv[optind], &t);
        if (code == 0 && del)
                code = cli_count(a, "ID", argv[optind + 1], &id);
        if (code == 0)
                code = cli_open(a);
        if (code)
                return code;
        if (del) {
                c = fmud_snapshot_delete(a->c, &t, id);
                if (c < 0)
                        code = cli_fail(a, c, "delete snapshot %s of session %s", argv[optind + 1],
                                        argv[optind]);
        } else {
                c = fmud_snapshots(a->c, &t, &l);
                if (c < 0)
                        code = cli_fail(a, c, "list the snapshots of session %s", argv[optind]);
                else
                        print_list(&l, a->json);
        }
        cli_close(a);
        return code;
}

static int export_or_import(struct cli *a, int argc, char **argv, bool exp, const char *out)
{
        struct proto_target t;
        uint64_t id = 0;
        double time = 0;
        int c, code;

        if (optind + 2 != argc)
                return cli_usage_error(a, exp ? "expected export SESSION ID -o FILE" :
                                       "expected import SESSION FILE");
        if (exp && !out)
                return cli_usage_error(a, "export needs -o FILE");
        code = cli_target(a, argv[optind], &t);
        if (code == 0 && exp)
                code = cli_count(a, "ID", argv[optind + 1], &id);
        if (code == 0)
                code = cli_open(a);
        if (code)
                return code;
        if (exp) {
                c = fmud_snapshot_export(a->c, &t, id, out);
                if (c < 0)
                        code = cli_fail(a, c, "export snapshot %s of session %s",
                                        argv[optind + 1], argv[optind]);
        } else {
                c = fmud_snapshot_import(a->c, &t, argv[optind + 1], &id, &time);
                if (c < 0) {
                        code = cli_fail(a, c, "import '%s' into session %s", argv[optind + 1],
                                        argv[optind]);
                } else if (a->json) {
                        struct json_object *o = json_object_new_object();

                        json_object_object_add(o, "snapshot", json_object_new_uint64(id));
                        json_object_object_add(o, "time", cli_json_double(time));
                        cli_json_print(o);
                } else {
                        printf("%llu\n", (unsigned long long)id);
                }
        }
        cli_close(a);
        return code;
}

int cmd_snapshot(int argc, char **argv)
{
        struct cli a = { .def = &def };
        struct proto_target t;
        const char *out = NULL;
        bool list, del, exp, imp;
        uint64_t id;
        double time;
        int c, code;

        while ((c = cli_getopt(&a, argc, argv)) > 0)
                if (c == O_OUT)
                        out = optarg;
        if (c < 0)
                return FMUCTL_EXIT_USAGE;
        if (a.help)
                return cli_help(&a, stdout);
        list = optind < argc && !strcmp(argv[optind], "list");
        del = optind < argc && !strcmp(argv[optind], "delete");
        exp = optind < argc && !strcmp(argv[optind], "export");
        imp = optind < argc && !strcmp(argv[optind], "import");
        if (out && !exp)
                return cli_usage_error(&a, "-o FILE is for export only");
        if (exp || imp) {
                optind++;
                return export_or_import(&a, argc, argv, exp, out);
        }
        if (list || del) {
                optind++;
                return list_or_delete(&a, argc, argv, del);
        }
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
