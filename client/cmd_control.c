/*
 * fmuctl start|pause|resume|stop|unload SESSION: the session verbs that
 * take nothing but the session, and print its state afterwards.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

/*
 * A stop is answered once the FMUs' Terminate returned, which may take as
 * long as an initialization (600 s, fmud.conf call_timeout): waited for
 * that long, and a little more, not the usual reply timeout.
 */
#define STOP_TIMEOUT_MS (660 * 1000)

typedef int verb_fn(struct fmud *c, const struct proto_target *t, struct proto_progress *ret);

static int do_unload(struct fmud *c, const struct proto_target *t, struct proto_progress *ret)
{
        (void)ret;
        return fmud_unload(c, t);
}

static const struct verb {
        const char *name;
        verb_fn *fn;
        const char *help;
} verbs[] = {
        { "start", fmud_start, "Start a loaded session: it runs to its stop time at its warp." },
        { "pause", fmud_pause, "Pause a running session at its next communication point." },
        { "resume", fmud_resume, "Resume a paused session from the point where it paused." },
        { "stop", fmud_stop, "Stop a session for good (its results are flushed)." },
        { "unload", do_unload, "Unload a session: stop it, end its workers, forget it." },
};

static int verb(int argc, char **argv, const struct verb *v)
{
        char about[256];
        struct cli_cmd def = {
                .name = v->name, .usage = "SESSION [options]", .about = about,
                .shared = CLI_SHARED_ALL,
        };
        struct cli a = { .def = &def };
        struct proto_progress p = { 0 };
        struct proto_target t;
        int c, code;

        snprintf(about, sizeof(about), "%s\nSESSION is N, or N@GENERATION to refuse a session "
                 "replaced since.", v->help);
        if (cli_getopt(&a, argc, argv) != 0)
                return FMUCTL_EXIT_USAGE;
        if (a.help)
                return cli_help(&a, stdout);
        code = cli_open_session(&a, argc, argv, &t);
        if (code)
                return code;
        if (v->fn == fmud_stop)
                fmud_set_timeout(a.c, STOP_TIMEOUT_MS);
        c = v->fn(a.c, &t, &p);
        if (c < 0) {
                code = cli_fail(&a, c, "%s session %s", v->name, argv[optind]);
        } else if (v->fn == do_unload) {
                if (a.json) {
                        struct json_object *o = json_object_new_object();

                        json_object_object_add(o, "session", json_object_new_uint64(t.session));
                        cli_json_print(o);
                }
        } else {
                if (a.json)
                        cli_json_print(cli_json_progress(&p));
                else
                        cli_print_progress(t.session, &p);
                code = p.state == PROTO_STATE_FAULTED ? FMUCTL_EXIT_FAULT : FMUCTL_EXIT_OK;
        }
        cli_close(&a);
        return code;
}

int cmd_start(int argc, char **argv)
{
        return verb(argc, argv, &verbs[0]);
}

int cmd_pause(int argc, char **argv)
{
        return verb(argc, argv, &verbs[1]);
}

int cmd_resume(int argc, char **argv)
{
        return verb(argc, argv, &verbs[2]);
}

int cmd_stop(int argc, char **argv)
{
        return verb(argc, argv, &verbs[3]);
}

int cmd_unload(int argc, char **argv)
{
        return verb(argc, argv, &verbs[4]);
}
