/*
 * fmuctl inspect FILE.fmu [--json] [--strict]: validate an FMU exactly as a
 * load does (fmu_open) and describe it, also when fmud cannot run it (Model
 * Exchange or Scheduled Execution only, no binary for this platform): that
 * is said, and is not a refusal. Needs no daemon and runs no FMU code.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli.h"
#include "commands.h"
#include "inspect.h"

static bool ends_with(const char *s, const char *suffix)
{
        size_t n = strlen(s), k = strlen(suffix);

        return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

/* A system: an .ssp, an .ssd, or a folder (holding a SystemStructure.ssd). */
static bool is_system(const char *path)
{
        struct stat st;

        return ends_with(path, ".ssp") || ends_with(path, ".ssd") ||
               (stat(path, &st) == 0 && S_ISDIR(st.st_mode));
}

static const struct cli_opt opts[] = {
        { "json", 'j', NULL, "one JSON object on stdout (see docs/inspect-json.md)" },
        { "strict", 's', NULL, "warnings are errors too, as for run and load --strict" },
        { 0 },
};

static const struct cli_cmd def = {
        .name = "inspect",
        .usage = "FILE.fmu|SYSTEM.ssp|SYSTEM.ssd|FOLDER [--json] [--strict]",
        .about = "Checks the archive, its modelDescription.xml and the binary for this\n"
                 "platform, then prints the model, its interfaces and whether fmud runs\n"
                 "it here, its Co-Simulation capabilities, the default experiment and its\n"
                 "variables. Errors and warnings are listed apart; the exit code is 1\n"
                 "when there is an error, 0 for a valid FMU (also one fmud cannot run).\n"
                 "\n"
                 "A system (.ssp, .ssd, or a folder with SystemStructure.ssd) is loaded\n"
                 "as the daemon loads it (its FMUs unpacked into the cache run --local\n"
                 "uses): its components, connections, parameters and communication grid\n"
                 "are printed, with every problem that would refuse it.",
        .opts = { opts },
};

int cmd_inspect(int argc, char **argv)
{
        struct cli a = { .def = &def };
        struct fmu_opts fopts;
        struct diag_list diags;
        struct fmu *fmu = NULL;
        bool arg_json = false, arg_strict = false;
        const char *path;
        int c, r, code;

        while ((c = cli_getopt(&a, argc, argv)) > 0) {
                if (c == 'j')
                        arg_json = true;
                else if (c == 's')
                        arg_strict = true;
        }
        if (c < 0)
                return FMUCTL_EXIT_USAGE;
        if (a.help)
                return cli_help(&a, stdout);
        if (optind != argc - 1) {
                fprintf(stderr, "fmuctl inspect: expected exactly one FMU file\n");
                cli_help(&a, stderr);
                return FMUCTL_EXIT_USAGE;
        }
        path = argv[optind];
        if (is_system(path))
                return inspect_system(path, arg_json, arg_strict);

        fmu_opts_default(&fopts);
        fopts.describe = true;
        fopts.strict = arg_strict;
        diag_list_init(&diags, 0);
        r = fmu_open(path, &fopts, &diags, &fmu);
        if (r == -ENOMEM) {
                fprintf(stderr, "fmuctl inspect: out of memory\n");
                code = FMUCTL_EXIT_SYSTEM;
                goto out;
        }
        if (r < 0 && r != -EINVAL && !diags.n)
                diag_add(&diags, DIAG_ERROR, path, 0, NULL, "cannot be read: %s", strerror(-r));

        if (arg_json) {
                if (inspect_print_json(stdout, path, fmu, &diags, arg_strict) < 0) {
                        fprintf(stderr, "fmuctl inspect: out of memory\n");
                        code = FMUCTL_EXIT_SYSTEM;
                        goto out;
                }
        } else {
                inspect_print_text(stdout, stderr, path, fmu, &diags);
        }
        if (r == 0)
                code = FMUCTL_EXIT_OK;
        else if (r == -EINVAL || r == -EBADMSG)
                code = FMUCTL_EXIT_INVALID;
        else
                code = FMUCTL_EXIT_SYSTEM;
out:
        fmu_free(fmu);
        diag_list_fini(&diags);
        return code;
}
