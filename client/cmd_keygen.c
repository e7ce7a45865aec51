/*
 * fmuctl keygen NAME: a CURVE key pair for tcp access, NAME.key (secret,
 * mode 0600) and NAME.pub (public). Never overwrites a key.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "fmud.h"

int cmd_keygen(int argc, char **argv)
{
        char err[512];
        int r;

        if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
                printf("usage: fmuctl keygen NAME\n\n"
                       "Writes a CURVE key pair: NAME.key, the secret key (mode 0600; give it\n"
                       "to fmuctl --key or keep it as the daemon's), and NAME.pub, the public\n"
                       "key (give it to the other side). Refuses to overwrite either file.\n");
                return FMUCTL_EXIT_OK;
        }
        if (argc != 2 || argv[1][0] == '-') {
                fprintf(stderr, "fmuctl keygen: expected one NAME\n(see 'fmuctl keygen --help')\n");
                return FMUCTL_EXIT_USAGE;
        }
        r = fmud_keygen(argv[1], err, sizeof(err));
        if (r < 0) {
                fprintf(stderr, "fmuctl: cannot create key pair '%s': %s\n", argv[1], err);
                return r == -EEXIST || r == -EINVAL ? FMUCTL_EXIT_INVALID : FMUCTL_EXIT_SYSTEM;
        }
        printf("%s.key (secret) and %s.pub (public) written\n", argv[1], argv[1]);
        return FMUCTL_EXIT_OK;
}
