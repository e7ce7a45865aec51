/*
 * The include rules of docs/ARCHITECTURE.md as scripts/check-layers checks
 * them: the tree itself keeps them, and a violation planted in a copy of
 * the layout is reported with its file, line and include, and fails.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "support/tmpdir.h"

#define CHECK_LAYERS FMUD_TEST_SRC_DIR "/../scripts/check-layers"

/* Run check-layers on root; its exit status, its output in out. */
static int check(const char *root, char *out, size_t size)
{
        char *cmd;
        FILE *p;
        size_t n;
        int st;
        bool exited;

        cr_assert(asprintf(&cmd, "'%s' '%s' 2>&1", CHECK_LAYERS, root) > 0);
        p = popen(cmd, "r");
        free(cmd);
        cr_assert(p != NULL);
        n = fread(out, 1, size - 1, p);
        out[n] = '\0';
        st = pclose(p);
        exited = WIFEXITED(st);
        cr_assert(exited, "check-layers did not exit: %d", st);
        return WEXITSTATUS(st);
}

/* Write root/rel holding a comment line and then line, making its folders. */
static void plant(const char *root, const char *rel, const char *line)
{
        char *text;

        cr_assert(asprintf(&text, "/* planted */\n%s\n", line) > 0);
        cr_assert(eq(int, tmpdir_write(root, rel, text, strlen(text)), 0), "%s", rel);
        free(text);
}

/* A layout with every folder and only allowed includes. */
static void clean_tree(const char *root)
{
        plant(root, "shm/ring.c", "#include \"shm/ring.h\"");
        plant(root, "fmi/fmu.c", "#include \"fmi/fmu.h\"");
        plant(root, "proto/proto.c", "#include \"proto/proto.h\"");
        plant(root, "worker/step.c", "#include \"worker/call.h\"\n#include \"shm/channel.h\"");
        plant(root, "engine/master/m.c", "#include \"engine/instance/instance.h\"\n"
                                         "#include \"worker/call.h\"");
        plant(root, "client/run.c", "#include \"engine/engine.h\"\n#include \"proto/proto.h\"");
        plant(root, "daemon/host.c", "#include \"engine/master/master.h\"\n"
                                     "#include \"proto/proto.h\"");
}

Test(layers, the_tree_keeps_the_rules)
{
        char out[8192];
        int rc = check(FMUD_TEST_SRC_DIR "/..", out, sizeof(out));

        cr_assert(eq(int, rc, 0), "check-layers on the tree:\n%s", out);
        cr_assert(eq(str, out, ""));
}

Test(layers, a_clean_layout_passes)
{
        char *root = tmpdir_new("layers"), out[4096];

        cr_assert(root != NULL);
        clean_tree(root);
        cr_assert(eq(int, check(root, out, sizeof(out)), 0), "%s", out);
        tmpdir_free(root);
}

struct planted {
        const char *file, *line, *needle;
};

Test(layers, each_planted_violation_fails_naming_file_and_include)
{
        static const struct planted cases[] = {
                { "shm/bad.c", "#include \"fmi/fmu.h\"", "shm/bad.c:2:" },
                { "fmi/bad.c", "#include \"shm/ring.h\"", "fmi/bad.c:2:" },
                { "proto/bad.h", "#include \"engine/engine.h\"", "proto/bad.h:2:" },
                { "worker/bad.c", "#include \"proto/proto.h\"", "worker/bad.c:2:" },
                { "engine/run/bad.c", "#include \"daemon/host.h\"", "engine/run/bad.c:2:" },
                { "engine/record/bad.c", "#  include \"proto/proto.h\"", "engine/record/bad.c:2:" },
                { "client/bad.c", "#include \"engine/run/run.h\"", "client/bad.c:2:" },
                { "client/bad2.c", "#include \"daemon/config.h\"", "client/bad2.c:2:" },
                { "daemon/bad.c", "#include \"client/paths.h\"", "daemon/bad.c:2:" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char *root = tmpdir_new("layers"), out[4096];
                int rc;

                cr_assert(root != NULL);
                clean_tree(root);
                plant(root, cases[i].file, cases[i].line);
                rc = check(root, out, sizeof(out));
                cr_assert(eq(int, rc, 1), "%s: %s", cases[i].file, out);
                cr_assert(strstr(out, cases[i].needle) != NULL, "%s: %s", cases[i].file, out);
                /* Only the planted line is reported. */
                cr_assert(strchr(out, '\n') == strrchr(out, '\n'), "%s: %s", cases[i].file, out);
                tmpdir_free(root);
        }
}
