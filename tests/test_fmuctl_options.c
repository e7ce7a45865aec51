/*
 * fmuctl_options: the shared options (--endpoint, --server-key, --key,
 * --json, --help) before the command as after it, `fmuctl help COMMAND`,
 * help made from the option tables, and the bad forms of each, against a
 * real fmud whose sessions show that a refused command line sent nothing.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_fixture.h"
#include "support/run.h"

static struct fmud_daemon d;

static void setup(void)
{
        daemon_start(&d, NULL);
        /* Only the command line names the daemon here. */
        cr_assert(eq(int, unsetenv("FMUD_ENDPOINT"), 0));
}

static void teardown(void)
{
        daemon_stop(&d);
}

/* fmuctl ARGS... (NULL-terminated); the caller frees with run_result_fini(). */
static struct run_result fmuctl(const char *const args[])
{
        char *argv[32] = { (char *)FMUD_FMUCTL };
        struct run_result r = { 0 };
        size_t n = 1;

        for (; args[n - 1] && n < 31; n++)
                argv[n] = (char *)args[n - 1];
        argv[n] = NULL;
        cr_assert(eq(int, run_capture(argv, &r), 0));
        return r;
}

/* How many sessions the daemon holds, asked with the options after the command. */
static size_t sessions(void)
{
        struct run_result r = fmuctl((const char *[]){ "list", "--json", "--endpoint", d.endpoint,
                                                       NULL });
        struct json_object *o, *v = NULL;
        size_t n;

        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        o = json_tokener_parse(r.out);
        cr_assert(o != NULL && json_object_object_get_ex(o, "sessions", &v), "%s", r.out);
        n = json_object_array_length(v);
        json_object_put(o);
        run_result_fini(&r);
        return n;
}

/* A usage error: exit 2, nothing on stdout, exactly err on stderr. */
static void refused(const char *const args[], const char *err)
{
        struct run_result r = fmuctl(args);

        cr_assert(eq(int, r.exit_code, 2), "%s: %s", args[0], r.err);
        cr_assert(eq(str, r.out, ""));
        cr_assert(eq(str, r.err, (char *)err));
        run_result_fini(&r);
}

Test(fmuctl_options, shared_options_before_the_command, .init = setup, .fini = teardown)
{
        char *eq_form = NULL, *nobody = NULL;
        struct json_object *o, *v = NULL;
        struct run_result r;

        cr_assert(asprintf(&eq_form, "--endpoint=%s", d.endpoint) > 0);
        cr_assert(asprintf(&nobody, "ipc://%s/nobody.sock", d.dir) > 0);
        r = fmuctl((const char *[]){ "--endpoint", d.endpoint, "--json", "load",
                                     FMUD_EXAMPLES "/msd.ssp", NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        o = json_tokener_parse(r.out);
        cr_assert(o != NULL && json_object_object_get_ex(o, "session", &v), "%s", r.out);
        cr_assert(eq(i64, json_object_get_int64(v), 1));
        json_object_put(o);
        run_result_fini(&r);

        /* --endpoint=E, and options on both sides of the command. */
        r = fmuctl((const char *[]){ eq_form, "status", "1", "--json", NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(strstr(r.out, "\"state\"") != NULL, "%s", r.out);
        run_result_fini(&r);

        /* One after the command is given later, so it wins, as it would twice after it. */
        r = fmuctl((const char *[]){ "--endpoint", nobody, "list", "--endpoint", d.endpoint, NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(strstr(r.out, "msd") != NULL, "%s", r.out);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "--endpoint", d.endpoint, "list", "--endpoint", nobody, NULL });
        cr_assert(eq(int, r.exit_code, 3), "%s", r.err);
        cr_assert(strstr(r.err, "nobody.sock") != NULL, "%s", r.err);
        run_result_fini(&r);
        cr_assert(eq(sz, sessions(), 1));
        free(eq_form);
        free(nobody);
}

Test(fmuctl_options, help_forms_print_the_same_help, .init = setup, .fini = teardown)
{
        static const char *const forms[][4] = {
                { "step", "-h", NULL }, { "help", "step", NULL }, { "--help", "step", NULL },
                { "-h", "step", NULL }, { "--endpoint", "ipc:///nowhere", "step", "--help" },
        };
        struct run_result ref = fmuctl((const char *[]){ "step", "--help", NULL }), r;

        cr_assert(eq(int, ref.exit_code, 0));
        cr_assert(eq(int, strncmp(ref.out, "usage: fmuctl step SESSION [N] [options]\n", 41), 0),
                  "%s", ref.out);
        /* The command's own option and the shared ones, each from its table. */
        cr_assert(strstr(ref.out, "\n  --until T             run until simulated time T\n") != NULL,
                  "%s", ref.out);
        cr_assert(strstr(ref.out, "\n  --endpoint E          the daemon's control endpoint") != NULL,
                  "%s", ref.out);
        for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
                const char *args[5] = { forms[i][0], forms[i][1], forms[i][2], forms[i][3], NULL };

                r = fmuctl(args);
                cr_assert(eq(int, r.exit_code, 0), "form %zu: %s", i, r.err);
                cr_assert(eq(str, r.out, ref.out), "form %zu", i);
                run_result_fini(&r);
        }
        run_result_fini(&ref);

        /* The list of commands, with the shared options, on stdout. */
        ref = fmuctl((const char *[]){ "--help", NULL });
        cr_assert(eq(int, ref.exit_code, 0));
        cr_assert(strstr(ref.out, "\n  shutdown   ") != NULL, "%s", ref.out);
        cr_assert(strstr(ref.out, "\n  --server-key FILE     ") != NULL, "%s", ref.out);
        r = fmuctl((const char *[]){ "help", NULL });
        cr_assert(eq(int, r.exit_code, 0));
        cr_assert(eq(str, r.out, ref.out));
        run_result_fini(&r);
        run_result_fini(&ref);

        /* An alias (--stop for --stop-time) is named in its option's line, not apart. */
        r = fmuctl((const char *[]){ "help", "run", NULL });
        cr_assert(eq(int, r.exit_code, 0));
        cr_assert(strstr(r.out, "(also --stop T)") != NULL, "%s", r.out);
        cr_assert(strstr(r.out, "\n  --stop T") == NULL, "%s", r.out);
        cr_assert(strstr(r.out, "\n  -q, --quiet           no progress") != NULL, "%s", r.out);
        run_result_fini(&r);
}

Test(fmuctl_options, bad_forms_are_usage_errors_that_send_nothing, .init = setup,
     .fini = teardown)
{
        refused((const char *[]){ "--nosuch", "--endpoint", d.endpoint, "load",
                                  FMUD_EXAMPLES "/msd.ssp", NULL },
                "fmuctl: unknown option '--nosuch'\n(see 'fmuctl --help')\n");
        refused((const char *[]){ "-x", "list", NULL },
                "fmuctl: unknown option '-x'\n(see 'fmuctl --help')\n");
        /* Before the command, an option is written in full. */
        refused((const char *[]){ "--end", d.endpoint, "list", NULL },
                "fmuctl: unknown option '--end'\n(see 'fmuctl --help')\n");
        refused((const char *[]){ "--json=yes", "list", NULL },
                "fmuctl: option '--json=yes' takes no value\n(see 'fmuctl --help')\n");
        refused((const char *[]){ "--endpoint", NULL },
                "fmuctl: option '--endpoint' needs a value\n(see 'fmuctl --help')\n");
        refused((const char *[]){ "load", FMUD_EXAMPLES "/msd.ssp", "--endpoint", NULL },
                "fmuctl load: option '--endpoint' needs a value\n(see 'fmuctl load --help')\n");
        refused((const char *[]){ "--endpoint", d.endpoint, "load", FMUD_EXAMPLES "/msd.ssp",
                                  "--nosuch", NULL },
                "fmuctl load: unknown option '--nosuch'\n(see 'fmuctl load --help')\n");
        refused((const char *[]){ "--endpoint", d.endpoint, "step", "1", "-z", NULL },
                "fmuctl step: unknown option '-z'\n(see 'fmuctl step --help')\n");
        /* N must be at least 1, which fmuctl knows: not the daemon's refusal, named by its wire key. */
        refused((const char *[]){ "--endpoint", d.endpoint, "step", "1", "0", NULL },
                "fmuctl step: N must be at least 1, not '0'\n(see 'fmuctl step --help')\n");
        refused((const char *[]){ "--endpoint", d.endpoint, "step", "1", "--until", NULL },
                "fmuctl step: option '--until' needs a value\n(see 'fmuctl step --help')\n");
        refused((const char *[]){ "--endpoint", d.endpoint, "list", "--json=yes", NULL },
                "fmuctl list: option '--json' takes no value\n(see 'fmuctl list --help')\n");
        refused((const char *[]){ "run", FMUD_EXAMPLES "/msd.ssp", "--local", "-qz", NULL },
                "fmuctl run: unknown option '-z'\n(see 'fmuctl run --help')\n");
        refused((const char *[]){ "--endpoint", d.endpoint, "load", FMUD_EXAMPLES "/msd.ssp",
                                  "--overrun", "firm", NULL },
                "fmuctl load: --overrun needs none, soft or hard, not 'firm'\n"
                "(see 'fmuctl load --help')\n");
        refused((const char *[]){ "--endpoint", d.endpoint, "load", FMUD_EXAMPLES "/msd.ssp",
                                  "--spin-us", "lots", NULL },
                "fmuctl load: --spin-us needs a finite number, not 'lots'\n"
                "(see 'fmuctl load --help')\n");
        refused((const char *[]){ "help", "nosuch", NULL },
                "fmuctl: unknown command 'nosuch'\n(see 'fmuctl --help')\n");
        refused((const char *[]){ "help", "list", "status", NULL },
                "fmuctl: help takes one COMMAND\n(see 'fmuctl --help')\n");
        /* inspect talks to no daemon: the connection options are not its own. */
        refused((const char *[]){ "--endpoint", d.endpoint, "inspect", "x.fmu", NULL },
                "fmuctl inspect: unknown option '--endpoint'\n(see 'fmuctl inspect --help')\n");
        /* Nothing reached the daemon. */
        cr_assert(eq(sz, sessions(), 0));
}
