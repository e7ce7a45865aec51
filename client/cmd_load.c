/*
 * fmuctl load PATH [options]: load a scenario into the daemon and print
 * the new session's id (--json: {"session": N, "generation": G}). The
 * session waits, loaded, for fmuctl start (or a remote master's step).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

static const struct cli_opt opts[] = {
        { "out", CLI_O_OUT, "FILE.csv", "results file, below an output directory of the daemon\n"
                                        "(default: a new one in the daemon's state directory,\n"
                                        "as --json and fmuctl status say)" },
        { 0 },
};

static const struct cli_cmd def = {
        .name = "load",
        .usage = "PATH [options]",
        .about = "Loads a scenario (.ssp, .ssd, a folder with SystemStructure.ssd, or one\n"
                 ".fmu) into the daemon: workers started, FMUs instantiated and\n"
                 "initialized. Prints the new session's id. Relative paths are made\n"
                 "absolute; the daemon only accepts paths below its allowed directories.",
        .opts = { opts, cli_load_opts },
        .shared = CLI_SHARED_ALL,
};

/* "warnings": the daemon's lines, when there are any. */
static void add_warnings(struct json_object *o, const char *w)
{
        struct json_object *arr;
        const char *nl;

        if (!w || !*w || !(arr = json_object_new_array()))
                return;
        for (; *w; w = nl ? nl + 1 : w + strlen(w)) {
                nl = strchr(w, '\n');
                json_object_array_add(arr, json_object_new_string_len(w, nl ? (int)(nl - w) :
                                                                          (int)strlen(w)));
        }
        json_object_object_add(o, "warnings", arr);
}

int cmd_load(int argc, char **argv)
{
        struct cli a = { .def = &def };
        struct cli_load l = { 0 };
        uint64_t session, gen;
        int c, r, code = 0;
        bool keep;

        while (code == 0 && (c = cli_getopt(&a, argc, argv)) > 0) {
                r = cli_load_option(&a, &l, c, optarg);
                if (r != 1)
                        code = r;
        }
        if (c < 0)
                return FMUCTL_EXIT_USAGE;
        if (code)
                return code;
        if (a.help)
                return cli_help(&a, stdout);
        if (optind != argc - 1)
                return cli_usage_error(&a, "expected exactly one PATH");
        code = cli_load_paths(&a, &l, argv[optind]);
        if (code == 0)
                code = cli_open(&a);
        if (code)
                goto out;
        /*
         * Leased to this connection until loaded, then detached: a load this
         * client gave up on (Ctrl-C, killed) is unloaded by the daemon
         * instead of staying loaded under a number nobody was told.
         */
        keep = !l.l.transient;
        l.l.transient = true;
        r = cli_load_send(&a, &l, &session, &gen, &code);
        if (r >= 0 && keep && (r = fmud_detach(a.c, session)) < 0) {
                code = cli_fail(&a, r, "load '%s': making session %llu permanent", argv[optind],
                                (unsigned long long)session);
                /* Still leased to this connection: gone now rather than after the grace. */
                if (fmud_unload(a.c, &(struct proto_target){ session, gen }) == 0)
                        fprintf(stderr, "fmuctl: session %llu unloaded\n",
                                (unsigned long long)session);
        }
        if (r >= 0)
                cli_print_load_warnings(&a);
        if (r < 0 && code) {
                /* An upload or the detach failed, said already. */
        } else if (r < 0) {
                code = cli_fail(&a, r, "load '%s'", argv[optind]);
        } else if (a.json) {
                struct json_object *o = json_object_new_object();

                json_object_object_add(o, "session", json_object_new_uint64(session));
                json_object_object_add(o, "generation", json_object_new_uint64(gen));
                if (fmud_load_out(a.c))
                        json_object_object_add(o, "out", json_object_new_string(fmud_load_out(a.c)));
                add_warnings(o, fmud_load_warnings(a.c));
                cli_json_print(o);
        } else {
                printf("%llu\n", (unsigned long long)session);
        }
        cli_close(&a);
out:
        cli_load_fini(&l);
        return code;
}
