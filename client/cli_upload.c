/*
 * cli_upload: a load that sends its files when the daemon cannot open them
 * (fmuctl load and fmuctl run; docs/fmuctl.md "Uploads").
 *
 * DESIGN: by path first, unless the endpoint is tcp (a remote daemon opens
 * nothing of ours) or --upload says so; a local daemon that answers denied
 * quoting one of our paths (not below its allowed directories, not there
 * for it) gets the files put into its upload store (fmud_put_file()) and
 * the load again, by content. For an .ssd (or a folder's
 * SystemStructure.ssd) the files it names by relative source URI go too,
 * found by the load's own SSD parser and URI rules (scenario_ssd_sources())
 * and named as the daemon will open them; an --input file as
 * inputContent. --no-upload never puts anything.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "engine/engine.h"

#define SSD_MAX_BYTES   (16u << 20)     /* an .ssd read for its sources */

/* What --upload prints: "uploading model.fmu (123 KiB)". */
static void note(const struct cli *a, const char *path, uint64_t size)
{
        const char *base = strrchr(path, '/');

        base = base ? base + 1 : path;
        if (size < 1024)
                fprintf(stderr, "fmuctl %s: uploading %s (%llu bytes)\n", a->cmd, base,
                        (unsigned long long)size);
        else if (size < (1u << 20))
                fprintf(stderr, "fmuctl %s: uploading %s (%llu KiB)\n", a->cmd, base,
                        (unsigned long long)((size + 1023) / 1024));
        else
                fprintf(stderr, "fmuctl %s: uploading %s (%.1f MiB)\n", a->cmd, base,
                        (double)size / (1u << 20));
}

static const char *kind_of(const char *path)
{
        const char *dot = strrchr(path, '.');

        if (dot && !strcasecmp(dot, ".ssp"))
                return "ssp";
        if (dot && !strcasecmp(dot, ".ssd"))
                return "ssd";
        if (dot && !strcasecmp(dot, ".csv"))
                return "csv";
        return "fmu";
}

/* Put path; sha: its SHA-256. 0, or an exit code after printing why. */
static int put(struct cli *a, const char *path, char sha[FMUD_SHA256_HEX + 1])
{
        struct stat st;
        int r;

        if (stat(path, &st) == 0)
                note(a, path, (uint64_t)st.st_size);
        r = fmud_put_file(a->c, path, kind_of(path), sha, NULL);
        return r < 0 ? cli_fail(a, r, "upload '%s'", path) : 0;
}

/* Read the .ssd (at most SSD_MAX_BYTES); NULL after printing why. */
static char *slurp(const struct cli *a, const char *ssd, size_t *ret_len)
{
        char *text = NULL;
        ssize_t n = -1;
        int fd, e = ENOMEM;

        fd = open(ssd, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                e = errno;
        text = fd >= 0 ? malloc(SSD_MAX_BYTES + 1) : NULL;
        if (text) {
                n = read(fd, text, SSD_MAX_BYTES + 1);
                e = n < 0 ? errno : EFBIG;
        }
        if (fd >= 0)
                close(fd);
        if (!text || n < 0 || n > (ssize_t)SSD_MAX_BYTES) {
                free(text);
                fprintf(stderr, "fmuctl %s: cannot read '%s': %s\n", a->cmd, ssd, strerror(e));
                return NULL;
        }
        *ret_len = (size_t)n;
        return text;
}

/*
 * The files the .ssd names by relative source (scenario_ssd_sources(): the
 * load's parser and URI rules, so exactly what the daemon will open below
 * the .ssd's folder), each that is a regular file put and added to
 * l->l.files under the path the daemon opens; 0 or an exit code. A document
 * the parser refuses names nothing here: the daemon's load says why.
 */
static int put_sources(struct cli *a, struct cli_load *l, const char *ssd, const char *dir)
{
        char *text, **names = NULL, path[4096];
        size_t len = 0, n = 0;
        int code = 0, r;

        text = slurp(a, ssd, &len);
        if (!text)
                return FMUCTL_EXIT_SYSTEM;
        r = scenario_ssd_sources(text, len, ssd, &names, &n);
        free(text);
        if (r == -ENOMEM) {
                fprintf(stderr, "fmuctl %s: out of memory\n", a->cmd);
                return FMUCTL_EXIT_SYSTEM;
        }
        for (size_t k = 0; code == 0 && k < n; k++) {
                struct stat st;
                bool seen = false;

                for (uint32_t i = 0; i < l->l.n_files; i++)
                        seen |= !strcmp(l->file_names[i], names[k]);
                if (seen || snprintf(path, sizeof(path), "%s/%s", dir, names[k]) >=
                                    (int)sizeof(path) ||
                    stat(path, &st) < 0 || !S_ISREG(st.st_mode))
                        continue;
                if (l->l.n_files == CLI_MAX_FILES) {
                        fprintf(stderr, "fmuctl %s: '%s' names more than %d files\n", a->cmd,
                                ssd, CLI_MAX_FILES);
                        code = FMUCTL_EXIT_INVALID;
                        break;
                }
                l->file_names[l->l.n_files] = names[k];
                names[k] = NULL;
                code = put(a, path, l->file_shas[l->l.n_files]);
                l->files[l->l.n_files] = (struct proto_assign){
                        .name = { l->file_names[l->l.n_files],
                                  (uint32_t)strlen(l->file_names[l->l.n_files]) },
                        .value = { l->file_shas[l->l.n_files], FMUD_SHA256_HEX } };
                l->l.n_files++;
        }
        l->l.files = l->files;
        for (size_t k = 0; k < n; k++)
                free(names[k]);
        free(names);
        return code;
}

/* Put the load's files and turn it into a load by content; 0 or an exit code. */
static int upload(struct cli *a, struct cli_load *l)
{
        char ssd[4096], dir[4096];
        struct stat st;
        const char *model = l->path_abs;
        int code;

        if (stat(model, &st) == 0 && S_ISDIR(st.st_mode)) {
                snprintf(ssd, sizeof(ssd), "%s/SystemStructure.ssd", model);
                model = ssd;
        }
        code = put(a, model, l->content_sha);
        if (code == 0 && !strcmp(kind_of(model), "ssd")) {
                snprintf(dir, sizeof(dir), "%s", model);
                *strrchr(dir, '/') = '\0';
                code = put_sources(a, l, model, dir[0] ? dir : "/");
        }
        if (code == 0 && l->input_abs)
                code = put(a, l->input_abs, l->input_sha);
        if (code)
                return code;
        l->l.path = (struct proto_str){ "", 0 };
        l->l.content = (struct proto_str){ l->content_sha, FMUD_SHA256_HEX };
        if (l->input_abs) {
                l->l.input = (struct proto_str){ "", 0 };
                l->l.input_content = (struct proto_str){ l->input_sha, FMUD_SHA256_HEX };
        }
        return 0;
}

/* A refusal of the daemon that cannot open one of our paths. */
static bool cannot_open(const struct cli *a, const struct cli_load *l)
{
        const char *m = fmud_errmsg(a->c);
        char q[4200];

        if (fmud_errcode(a->c) != PROTO_E_DENIED || !m)
                return false;
        snprintf(q, sizeof(q), "'%s", l->path_abs);
        if (strstr(m, q))
                return true;
        snprintf(q, sizeof(q), "'%s", l->input_abs ? l->input_abs : "");
        return l->input_abs && strstr(m, q);
}

/*
 * The load request, waited for as long as it takes: the daemon bounds a
 * load itself (its workers' start, each instance's Initialization Mode up
 * to its init_timeout), and a daemon that dies ends the wait at once.
 */
static int load(struct cli *a, struct cli_load *l, uint64_t *ret_session,
                uint64_t *ret_generation)
{
        int r;

        fmud_set_timeout(a->c, -1);
        r = fmud_load(a->c, &l->l, ret_session, ret_generation);
        fmud_set_timeout(a->c, a->timeout_ms);
        return r;
}

int cli_load_send(struct cli *a, struct cli_load *l, uint64_t *ret_session,
                  uint64_t *ret_generation, int *ret_code)
{
        char buf[1024];
        const char *ep = cli_endpoint(a, buf, sizeof(buf));
        bool first = l->upload == CLI_UPLOAD_FORCE ||
                     (l->upload == CLI_UPLOAD_AUTO && ep && !strncmp(ep, "tcp://", 6));
        int r;

        *ret_code = 0;
        if (first && (*ret_code = upload(a, l)))
                return -EINVAL;
        r = load(a, l, ret_session, ret_generation);
        if (r != FMUD_E_REFUSED || first || l->upload != CLI_UPLOAD_AUTO || !cannot_open(a, l))
                return r;
        if ((*ret_code = upload(a, l)))
                return -EINVAL;
        return load(a, l, ret_session, ret_generation);
}
