/*
 * cli_opts: fmuctl's option parser and help, from tables (cli.h).
 *
 * DESIGN: an option is stated once, in a struct cli_opt: its name, its
 * value's name, its help. getopt_long()'s table and the help text are both
 * made from these tables, so they cannot disagree. The shared options
 * (--endpoint, --server-key, --key, --json, -h/--help) live here and are
 * taken into struct cli without the command seeing them; main.c accepts
 * them before the command's name too and hands them on after it.
 */
#include <assert.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

static const struct cli_opt conn_opts[] = {
        { "endpoint", CLI_O_ENDPOINT, "E", "the daemon's control endpoint (default: $FMUD_ENDPOINT,\n"
                                          "else the local daemon's ipc socket)" },
        { "server-key", CLI_O_SERVER_KEY, "FILE", "the daemon's public key, for tcp with CURVE\n"
                                                 "($FMUD_SERVER_KEY)" },
        { "key", CLI_O_KEY, "FILE", "this client's secret key (fmuctl keygen; $FMUD_KEY)" },
        { 0 },
};

static const struct cli_opt json_opts[] = {
        { "json", CLI_O_JSON, NULL, "print the result as JSON" },
        { 0 },
};

static const struct cli_opt help_opts[] = {
        { "help", CLI_O_HELP, NULL, "this help" },
        { 0 },
};

/* The tables d takes, its own first, NULL-ended. */
static size_t tables(const struct cli_cmd *d, const struct cli_opt *ret[static 6])
{
        size_t n = 0;

        for (size_t i = 0; i < 3 && d->opts[i]; i++)
                ret[n++] = d->opts[i];
        if (d->shared & CLI_SHARED_CONN)
                ret[n++] = conn_opts;
        if (d->shared & CLI_SHARED_JSON)
                ret[n++] = json_opts;
        ret[n++] = help_opts;
        ret[n] = NULL;
        return n;
}

const struct cli_opt *cli_shared_option(const char *name, size_t len)
{
        static const struct cli_opt *const shared[] = { conn_opts, json_opts, help_opts };

        if (len == 1 && name[0] == 'h')
                return help_opts;
        for (size_t i = 0; i < sizeof(shared) / sizeof(shared[0]); i++)
                for (const struct cli_opt *o = shared[i]; o->name; o++)
                        if (strlen(o->name) == len && !strncmp(o->name, name, len))
                                return o;
        return NULL;
}

/* A shared option into a; false when id is none of them. */
static bool shared(struct cli *a, int id, const char *arg)
{
        switch (id) {
        case CLI_O_ENDPOINT: a->endpoint = arg; return true;
        case CLI_O_SERVER_KEY: a->server_key_file = arg; return true;
        case CLI_O_KEY: a->key_file = arg; return true;
        case CLI_O_JSON: a->json = true; return true;
        case CLI_O_HELP: a->help = true; return true;
        default: return false;
        }
}

/* getopt_long()'s tables from d's. */
static void build(struct cli *a)
{
        const struct cli_opt *t[6];
        size_t n = 0, s = 0;

        tables(a->def, t);
        a->shorts[s++] = ':';   /* a missing value is ':', apart from an unknown option */
        a->shorts[s++] = 'h';
        for (size_t i = 0; t[i]; i++)
                for (const struct cli_opt *o = t[i]; o->name; o++) {
                        assert(n < CLI_MAX_OPTS);       /* raise CLI_MAX_OPTS */
                        a->longs[n++] = (struct option){ o->name, o->arg ? required_argument :
                                                         no_argument, NULL, o->id };
                        if (o->id > ' ' && o->id < 127 && s < sizeof(a->shorts) - 2) {
                                a->shorts[s++] = (char)o->id;
                                if (o->arg)
                                        a->shorts[s++] = ':';
                        }
                }
        a->longs[n] = (struct option){ 0 };
        a->shorts[s] = '\0';
}

/* The long option named by word ("--name" or "--name=value"), or NULL. */
static const struct option *long_named(const struct cli *a, const char *word)
{
        size_t len = strcspn(word + 2, "=");

        for (const struct option *o = a->longs; o->name; o++)
                if (strlen(o->name) == len && !strncmp(o->name, word + 2, len))
                        return o;
        return NULL;
}

/* Say what getopt_long() refused (c: '?' or ':'); returns -1. */
static int refuse(struct cli *a, int c, char **argv)
{
        const char *w = optind > 0 ? argv[optind - 1] : "";
        const struct option *o = strncmp(w, "--", 2) ? NULL : long_named(a, w);
        /* A short option's error may follow a long option in argv: "--local -z". */
        bool is_long = !strncmp(w, "--", 2) &&
                       (!optopt || optopt >= 127 || (o && o->val == optopt));
        int len = (int)strcspn(w, "=");

        if (!is_long)
                cli_usage_error(a, c == ':' ? "option '-%c' needs a value" : "unknown option '-%c'",
                                optopt);
        else if (c == ':')
                cli_usage_error(a, "option '%.*s' needs a value", len, w);
        else if (o && o->has_arg == no_argument && w[len] == '=')
                cli_usage_error(a, "option '%.*s' takes no value", len, w);
        else
                cli_usage_error(a, "unknown option '%s'", w);
        return -1;
}

int cli_getopt(struct cli *a, int argc, char **argv)
{
        int c;

        if (!a->built) {
                a->cmd = a->cmd ? a->cmd : a->def->name;
                build(a);
                a->built = true;
                optind = 1;
                opterr = 0;
        }
        for (;;) {
                optopt = 0;
                c = getopt_long(argc, argv, a->shorts, a->longs, NULL);
                if (c == -1)
                        return 0;
                if (c == '?' || c == ':')
                        return refuse(a, c, argv);
                if (c == 'h')
                        c = CLI_O_HELP;
                if (!shared(a, c, optarg))
                        return c;
        }
}

/* "  --name ARG", then the help, its lines under one another. */
static void put_opt(FILE *f, const struct cli_opt *o)
{
        char left[64];
        const char *h = o->help, *nl;

        if (o->id > ' ' && o->id < 127)
                snprintf(left, sizeof(left), "-%c, --%s%s%s", o->id, o->name, o->arg ? " " : "",
                         o->arg ? o->arg : "");
        else
                snprintf(left, sizeof(left), "--%s%s%s", o->name, o->arg ? " " : "",
                         o->arg ? o->arg : "");
        if (o == help_opts)
                snprintf(left, sizeof(left), "-h, --help");
        if (strlen(left) > 21)
                fprintf(f, "  %s\n%24s", left, "");
        else
                fprintf(f, "  %-22s", left);
        for (; *h; h = nl + 1) {
                nl = strchr(h, '\n');
                if (!nl) {
                        fprintf(f, "%s\n", h);
                        break;
                }
                fprintf(f, "%.*s\n%24s", (int)(nl - h), h, "");
        }
}

void cli_help_options(FILE *f, unsigned shared_only)
{
        struct cli_cmd d = { .shared = shared_only };
        const struct cli_opt *t[6];

        tables(&d, t);
        for (size_t i = 0; t[i]; i++)
                for (const struct cli_opt *o = t[i]; o->name; o++)
                        if (o->help)
                                put_opt(f, o);
}

int cli_help(const struct cli *a, FILE *f)
{
        const struct cli_cmd *d = a->def;
        const struct cli_opt *t[6];
        const char *u = d->usage, *nl;

        fprintf(f, "usage: ");
        for (;; u = nl + 1) {
                nl = strchr(u, '\n');
                fprintf(f, "fmuctl %s %.*s\n", d->name, nl ? (int)(nl - u) : (int)strlen(u), u);
                if (!nl)
                        break;
                fprintf(f, "       ");
        }
        if (d->about)
                fprintf(f, "\n%s\n", d->about);
        fprintf(f, "\n");
        tables(d, t);
        for (size_t i = 0; t[i]; i++)
                for (const struct cli_opt *o = t[i]; o->name; o++)
                        if (o->help)
                                put_opt(f, o);
        if (d->footer)
                fprintf(f, "\n%s\n", d->footer);
        return FMUCTL_EXIT_OK;
}
