/*
 * fmuctl keygen NAME: a CURVE key pair for tcp access, NAME.key (secret,
 * mode 0600) and NAME.pub (public). Never overwrites a key.
 */
#include <errno.h>
#include <stdio.h>

#include "cli.h"
#include "commands.h"
#include "fmud.h"

static const struct cli_cmd def = {
        .name = "keygen",
        .usage = "NAME",
        .about = "Writes a CURVE key pair: NAME.key, the secret key (mode 0600; give it\n"
                 "to fmuctl --key or keep it as the daemon's), and NAME.pub, the public\n"
                 "key (give it to the other side). Refuses to overwrite either file.",
};

int cmd_keygen(int argc, char **argv)
{
        struct cli a = { .def = &def };
        const char *name;
        char err[512];
        int r;

        if (cli_getopt(&a, argc, argv) != 0)
                return FMUCTL_EXIT_USAGE;
        if (a.help)
                return cli_help(&a, stdout);
        if (optind != argc - 1)
                return cli_usage_error(&a, "expected one NAME");
        name = argv[optind];
        r = fmud_keygen(name, err, sizeof(err));
        if (r < 0) {
                fprintf(stderr, "fmuctl: cannot create key pair '%s': %s\n", name, err);
                return r == -EEXIST || r == -EINVAL ? FMUCTL_EXIT_INVALID : FMUCTL_EXIT_SYSTEM;
        }
        printf("%s.key (secret) and %s.pub (public) written\n", name, name);
        return FMUCTL_EXIT_OK;
}
