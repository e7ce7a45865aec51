/*
 * The manual pages (man/): every subcommand and option fmuctl's help
 * lists is in fmuctl(1), every option of fmud --help in fmud(8), every
 * key of the daemon's config table under its section in fmud.conf(5),
 * so that the pages cannot silently fall behind the programs; and each
 * page renders without a warning (groff -ww, man -l) where those exist.
 * The pages checked are the configured ones the build installs.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/config.h"
#include "support/run.h"

static char *page(const char *name)
{
        char path[512], *buf;
        FILE *f;
        long n;

        snprintf(path, sizeof(path), "%s/%s", FMUD_MAN_DIR, name);
        f = fopen(path, "re");
        cr_assert(f != NULL, "no page '%s'", path);
        cr_assert(eq(int, fseek(f, 0, SEEK_END), 0));
        n = ftell(f);
        rewind(f);
        buf = malloc((size_t)n + 1);
        cr_assert(buf != NULL);
        cr_assert(eq(sz, fread(buf, 1, (size_t)n, f), (size_t)n));
        buf[n] = '\0';
        fclose(f);
        return buf;
}

/* What argv prints on stdout (exit 0 asserted); caller frees. */
static char *output(char *const argv[])
{
        struct run_result r = { 0 };
        char *out;

        cr_assert(eq(int, run_capture(argv, &r), 0));
        cr_assert(eq(int, r.exit_code, 0), "%s: %s", argv[0], r.err);
        out = r.out;
        r.out = NULL;
        run_result_fini(&r);
        return out;
}

/* An option as roff source writes it: every '-' as "\-". */
static void roff_option(const char *opt, size_t len, char *buf, size_t size)
{
        size_t n = 0;

        for (size_t i = 0; i < len && n + 3 < size; i++) {
                if (opt[i] == '-')
                        buf[n++] = '\\';
                buf[n++] = opt[i];
        }
        buf[n] = '\0';
}

/*
 * Every option word ("--name", "-x") at the start of an option line of a
 * help text (lines "  -x, --name ARG  help") appears in src. Returns how
 * many were checked.
 */
static int options_in(const char *help, const char *src, const char *what)
{
        int n = 0;

        for (const char *line = help; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
                const char *p = line;

                while (*p == ' ')
                        p++;
                if (p - line != 2 || *p != '-')
                        continue;
                /* "-q, --quiet ARG": the words before the first one not starting with '-'. */
                while (*p == '-') {
                        size_t len = strspn(p, "-abcdefghijklmnopqrstuvwxyz0123456789");
                        char want[128];

                        roff_option(p, len, want, sizeof(want));
                        cr_assert(strstr(src, want) != NULL, "%s: option '%.*s' is not in the page",
                                  what, (int)len, p);
                        n++;
                        p += len;
                        if (*p != ',')
                                break;
                        p += strspn(p, ", ");
                }
        }
        return n;
}

Test(man, fmuctl_page_names_every_subcommand_and_option)
{
        char *src = page("fmuctl.1"), *help = output((char *[]){ FMUD_FMUCTL, "--help", NULL });
        const char *p = strstr(help, "commands:\n");
        int commands = 0;

        cr_assert(p != NULL, "%s", help);
        for (p = strchr(p, '\n') + 1; p[0] == ' ' && p[1] == ' ' && islower((unsigned char)p[2]);
             p = strchr(p, '\n') + 1) {
                size_t len = strspn(p + 2, "abcdefghijklmnopqrstuvwxyz");
                char cmd[32], *sub;
                bool found = false;

                snprintf(cmd, sizeof(cmd), "%.*s", (int)len, p + 2);
                /* Its own section: ".SS cmd" or one of a list ".SS start, pause, ...". */
                for (const char *ss = strstr(src, "\n.SS "); ss; ss = strstr(ss + 1, "\n.SS ")) {
                        const char *eol = strchr(ss + 1, '\n');
                        const char *w = ss + 5;

                        for (; w < eol; w += strspn(w, ", ")) {
                                size_t wl = strcspn(w, ", \n");

                                found |= wl == len && !strncmp(w, cmd, len);
                                w += wl;
                        }
                }
                cr_assert(found, "fmuctl(1) has no section for '%s'", cmd);
                sub = output((char *[]){ FMUD_FMUCTL, cmd, "--help", NULL });
                cr_assert(options_in(sub, src, cmd) > 0, "no options read from '%s --help'", cmd);
                free(sub);
                commands++;
        }
        cr_assert(commands >= 19, "only %d commands read from fmuctl --help", commands);
        free(help);
        free(src);
}

Test(man, fmud_page_names_every_option)
{
        char *src = page("fmud.8"), *help = output((char *[]){ FMUD_BINARY, "--help", NULL });
        int n = 0;

        for (const char *p = strstr(help, "--"); p; p = strstr(p, "--")) {
                size_t len = strspn(p, "-abcdefghijklmnopqrstuvwxyz");
                char want[128];

                roff_option(p, len, want, sizeof(want));
                cr_assert(strstr(src, want) != NULL, "fmud(8) lacks option '%.*s'", (int)len, p);
                n++;
                p += len;
        }
        cr_assert(n >= 14, "only %d options read from fmud --help", n);
        free(help);
        free(src);
}

Test(man, fmud_conf_page_names_every_key_under_its_section)
{
        char *src = page("fmud.conf.5");
        const char *section, *name;
        size_t i;

        for (i = 0; config_key_at(i, &section, &name); i++) {
                char head[64], key[96];
                const char *s, *end;

                snprintf(head, sizeof(head), "\n.SS [%s]\n", section);
                s = strstr(src, head);
                cr_assert(s != NULL, "fmud.conf(5) has no section [%s]", section);
                s += strlen(head);
                end = strstr(s, "\n.S");        /* the next .SS or .SH */
                snprintf(key, sizeof(key), "\n.B %s\n", name);
                const char *at = strstr(s - 1, key);

                cr_assert(at != NULL && (!end || at < end), "fmud.conf(5) lacks [%s] %s", section,
                          name);
        }
        cr_assert(i >= 30, "only %zu keys in the config table", i);
        free(src);
}

static bool have(const char *prog)
{
        char path[256];

        snprintf(path, sizeof(path), "/usr/bin/%s", prog);
        return access(path, X_OK) == 0;
}

Test(man, every_page_renders_without_warnings)
{
        static const char *const pages[] = { "fmud.8", "fmuctl.1", "fmud.conf.5" };

        if (!have("groff") && !have("man"))
                cr_skip_test("neither groff nor man is installed");
        setenv("MANWIDTH", "80", 1);
        for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
                char path[512];
                struct run_result r = { 0 };

                snprintf(path, sizeof(path), "%s/%s", FMUD_MAN_DIR, pages[i]);
                if (have("groff")) {
                        cr_assert(eq(int, run_capture((char *[]){ "/usr/bin/groff", "-man",
                                                                  "-Tutf8", "-ww", path, NULL },
                                                      &r), 0));
                        cr_assert(eq(int, r.exit_code, 0), "groff %s: %s", pages[i], r.err);
                        cr_assert(eq(str, r.err, ""), "groff %s", pages[i]);
                        cr_assert(strlen(r.out) > 1000, "%s renders to almost nothing", pages[i]);
                        run_result_fini(&r);
                }
                if (have("man")) {
                        cr_assert(eq(int, run_capture((char *[]){ "/usr/bin/man", "--warnings=w",
                                                                  "-l", path, NULL }, &r), 0));
                        cr_assert(eq(int, r.exit_code, 0), "man -l %s: %s", pages[i], r.err);
                        cr_assert(eq(str, r.err, ""), "man -l %s", pages[i]);
                        run_result_fini(&r);
                }
        }
}
