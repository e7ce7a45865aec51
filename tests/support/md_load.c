/* md_load: a model description from an unpacked FMU's folder (md_load.h). */
#include "md_load.h"

#include <stdio.h>
#include <stdlib.h>

struct md *md_load_dir(const char *dir)
{
        char path[1100], *buf;
        struct diag_list diags;
        struct md *md = NULL;
        long len;
        FILE *f;

        snprintf(path, sizeof(path), "%s/modelDescription.xml", dir);
        f = fopen(path, "rb");
        if (!f)
                return NULL;
        fseek(f, 0, SEEK_END);
        len = ftell(f);
        rewind(f);
        buf = len > 0 ? malloc((size_t)len) : NULL;
        if (buf && fread(buf, 1, (size_t)len, f) == (size_t)len) {
                diag_list_init(&diags, 0);
                if (md_parse(buf, (size_t)len, "modelDescription.xml", NULL, &diags, &md) < 0) {
                        md_free(md);
                        md = NULL;
                }
                diag_list_fini(&diags);
        }
        free(buf);
        fclose(f);
        return md;
}
