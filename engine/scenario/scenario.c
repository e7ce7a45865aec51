/*
 * scenario: load a scenario (a .fmu, .ssp, .ssd, or a folder holding a
 * SystemStructure.ssd) and run the passes of scenario_int.h over it.
 *
 * DESIGN: the passes report every problem they can and the load goes on
 * as far as the earlier passes allow: connections and bindings are still
 * checked when one FMU failed to import (those that touch it are
 * skipped), but the experiment and the columns need every FMU. A refused
 * scenario is freed whole; the only trace it leaves is in the cache.
 */
#include "engine/scenario/scenario_int.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/scenario/beneath.h"
#include "fmi/md_values.h"
#include "engine/scenario/ssp_xml.h"

/* O_NONBLOCK: a FIFO planted under the name must not hang the load in open(). */
#define OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

#define SSD_ENTRY "SystemStructure.ssd"

void scenario_opts_default(struct scenario_opts *opts)
{
        *opts = (struct scenario_opts){
                .max_xml_bytes = 16u << 20,
                .max_xml_depth = 64,
                .max_xml_attributes = 256,
                .max_xml_elements = 1000000,
                .max_components = 4096,
                .max_connections = 65536,
                .max_columns = 1000000,
        };
        fmu_opts_default(&opts->fmu);
        fmu_limits_default(&opts->ssp_limits);
}

int sc_err(struct sc_load *l, const char *file, int line, const char *subject,
           const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        diag_addv(l->diags, DIAG_ERROR, file, line, subject, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

void sc_warn(struct sc_load *l, const char *file, int line, const char *subject,
             const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        diag_addv(l->diags, DIAG_WARNING, file, line, subject, fmt, ap);
        va_end(ap);
}

char *sc_origin(const char *file, int line)
{
        char *s;

        if (line <= 0)
                return strdup(file);
        return asprintf(&s, "%s:%d", file, line) < 0 ? NULL : s;
}

int scenario_find_component(const struct scenario *s, const char *name)
{
        for (size_t i = 0; i < s->n_components; i++)
                if (strcmp(s->components[i].name, name) == 0)
                        return (int)i;
        return -ENOENT;
}

int scenario_assign_split(char *arg, struct scenario_assign *ret)
{
        char *eq = strchr(arg, '=');

        if (!eq || eq == arg)
                return -EINVAL;
        *eq = '\0';
        *ret = (struct scenario_assign){ .name = arg, .value = eq + 1 };
        return 0;
}

static void free_component(struct scenario_component *c)
{
        for (size_t i = 0; i < c->n_starts; i++) {
                mv_free(c->starts[i].type, &c->starts[i].value);
                free(c->starts[i].origin);
        }
        free(c->starts);
        free(c->sp_now);
        fmu_free(c->fmu);
        free(c->name);
        free(c->source);
}

void scenario_free(struct scenario *s)
{
        if (!s)
                return;
        for (size_t i = 0; i < s->n_components; i++)
                free_component(&s->components[i]);
        free(s->components);
        for (size_t i = 0; i < s->n_connections; i++)
                free(s->connections[i].origin);
        free(s->connections);
        for (size_t i = 0; i < s->n_columns; i++)
                free(s->columns[i].name);
        free(s->columns);
        free(s->empty_recorded);
        for (size_t i = 0; i < s->rig.n_in; i++)
                free(s->rig.in[i].name);
        for (size_t i = 0; i < s->rig.n_out; i++)
                free(s->rig.out[i].name);
        free(s->rig.in);
        free(s->rig.out);
        free(s->experiment.order);
        free(s->name);
        free(s->path);
        free(s);
}

struct mx sc_mx(struct sc_load *l, const char *file)
{
        return (struct mx){ .diags = l->diags, .file = file,
                            .max_depth = l->opts->max_xml_depth,
                            .max_attributes = l->opts->max_xml_attributes,
                            .max_elements = l->opts->max_xml_elements,
                            .cancel = &l->opts->cancel };
}

static bool ends_with(const char *s, const char *suffix)
{
        size_t n = strlen(s), k = strlen(suffix);

        return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

static int read_error(struct sc_load *l, const char *what, int r)
{
        if (r == -ENOMEM)
                return r;
        if (r == -EFBIG)
                return sc_err(l, what, 0, NULL, "larger than the limit of %zu bytes",
                              l->opts->max_xml_bytes);
        sc_err(l, what, 0, NULL, "cannot be read: %s", strerror(-r));
        return r == -EINVAL || r == -EBADMSG ? -EINVAL : r;
}

/*
 * Open a file of the scenario's own (path as given): confined, beneath the
 * allowed directory it lies in (beneath.h); else as the user would.
 * Returns the descriptor or -errno (-EPERM: below no allowed directory).
 */
static int open_own(struct sc_load *l, const char *path, int flags)
{
        int fd;

        if (l->opts->confined)
                return beneath_open_as(l->opts->open_as, l->opts->allowed_dirs,
                                       l->opts->n_allowed_dirs, path, flags, 0);
        fd = open(path, flags | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

/* What a file of the scenario's own that could not be opened gets: a diagnostic. */
static int open_error(struct sc_load *l, const char *what, int r)
{
        if (r == -ENOMEM)
                return r;
        if (r == -EPERM && l->opts->confined)
                sc_err(l, what, 0, NULL, "not below a directory the daemon loads from");
        else if (r == -ELOOP)
                sc_err(l, what, 0, NULL, "a symbolic link on the way (links are not followed "
                       "where the daemon loads)");
        else if (r == -EXDEV)
                sc_err(l, what, 0, NULL, "leaves the directory it is loaded from");
        else
                return read_error(l, what, r);
        return r;
}

void sc_note_private(struct sc_load *l, int fd)
{
        struct stat st;

        if (l->opts->confined && (fstat(fd, &st) < 0 || !(st.st_mode & S_IROTH)))
                l->private = true;
}

/* A single FMU: one component named after the model, every output recorded. */
static int load_fmu(struct sc_load *l, int fd)
{
        struct scenario *s = l->s;
        struct scenario_component *c;
        char *base;
        int r;

        s->single_fmu = true;
        s->components = calloc(1, sizeof(*s->components));
        l->label = strdup(l->path);
        if (!s->components || !l->label)
                return -ENOMEM;
        c = &s->components[0];
        base = strrchr(l->path, '/');
        c->name = strdup(base ? base + 1 : l->path);
        c->source = strdup(l->path);
        c->multirate = 1;
        s->n_components = 1;
        if (!c->name || !c->source)
                return -ENOMEM;
        r = sc_import(l, c, fd, l->path, l->path);
        if (r < 0)
                return r;
        free(c->name);
        c->name = strdup(c->fmu->md->model_name ? c->fmu->md->model_name : "model");
        s->name = strdup(c->name ? c->name : "");
        l->flattened = true;
        return c->name && s->name ? 0 : -ENOMEM;
}

static int parse_ssd(struct sc_load *l, char *buf, size_t len)
{
        int r;

        l->doc.x = sc_mx(l, l->label);
        l->has_doc = true;
        r = ssd_read(&l->doc, buf, len);
        free(buf);
        if (r == 0 && !(l->s->name = strdup(l->doc.name)))
                r = -ENOMEM;
        return r;
}

/*
 * The SSD named ssd, in the folder open on dir_fd (dir: its name, kept:
 * relative sources are opened beneath it); name: the SSD's name there.
 */
static int load_ssd_in(struct sc_load *l, const char *ssd, int dir_fd, char *dir,
                       const char *name)
{
        char *buf;
        size_t len;
        int fd, r;

        l->dir_fd = dir_fd;
        l->dir = dir;
        l->label = strdup(ssd);
        if (!l->label)
                return -ENOMEM;
        if (l->opts->confined)
                fd = beneath_openat_as(l->opts->open_as, dir_fd, name, OPEN_FLAGS, 0);
        else if ((fd = openat(dir_fd, name, OPEN_FLAGS)) < 0)
                fd = -errno;
        if (fd < 0)
                return open_error(l, ssd, fd);
        sc_note_private(l, fd);
        r = ssp_read_fd(fd, l->opts->max_xml_bytes, &buf, &len);
        close(fd);
        if (r < 0)
                return read_error(l, ssd, r);
        return parse_ssd(l, buf, len);
}

/* A folder holding SystemStructure.ssd, open on fd (taken). */
static int load_folder(struct sc_load *l, int fd)
{
        char *ssd, *dir;
        int r;

        dir = l->opts->confined ? strdup(l->path) : realpath(l->path, NULL);
        if (!dir || asprintf(&ssd, "%s/%s", l->path, SSD_ENTRY) < 0) {
                r = dir || errno == ENOMEM ? -ENOMEM : read_error(l, l->path, -errno);
                free(dir);
                close(fd);
                return r;
        }
        r = load_ssd_in(l, ssd, fd, dir, SSD_ENTRY);
        free(ssd);
        return r;
}

/* An .ssd file: its folder opened first (relative sources are opened beneath it). */
static int load_ssd_file(struct sc_load *l)
{
        char *copy = strdup(l->path), *dir;
        const char *name;
        int fd;

        if (!copy)
                return -ENOMEM;
        name = strrchr(l->path, '/') ? strrchr(l->path, '/') + 1 : l->path;
        dir = dirname(copy);
        fd = open_own(l, dir, O_PATH | O_DIRECTORY);
        if (fd >= 0 && !(dir = l->opts->confined ? strdup(dir) : realpath(dir, NULL))) {
                close(fd);
                fd = -errno;
        }
        free(copy);
        if (fd < 0)
                return open_error(l, l->path, fd);
        return load_ssd_in(l, l->path, fd, dir, name);
}

static int load_ssp(struct sc_load *l, int fd)
{
        char *buf;
        size_t len;
        int r;

        if (asprintf(&l->label, "%s:%s", l->path, SSD_ENTRY) < 0) {
                l->label = NULL;
                return -ENOMEM;
        }
        r = ssp_archive_open_fd(fd, l->path, &l->opts->ssp_limits, l->diags, &l->ar);
        if (r < 0)
                return r == -EINVAL || r == -ENOMEM ? r : read_error(l, l->path, r);
        r = ssp_archive_read(l->ar, SSD_ENTRY, l->opts->max_xml_bytes, &buf, &len);
        if (r == -ENOENT)
                return sc_err(l, l->path, 0, SSD_ENTRY, "the archive holds no SystemStructure.ssd "
                              "(SSP 1.0 section 7)");
        if (r < 0)
                return read_error(l, l->label, r);
        return parse_ssd(l, buf, len);
}

/* The scenario's own file, opened once; everything after reads its descriptor. */
static int load_source(struct sc_load *l)
{
        struct stat st;
        int fd, r;

        if (ends_with(l->path, ".ssd"))
                return load_ssd_file(l);
        fd = open_own(l, l->path, OPEN_FLAGS);
        if (fd < 0)
                return open_error(l, l->path, fd);
        if (fstat(fd, &st) < 0) {
                r = read_error(l, l->path, -errno);
                close(fd);
                return r;
        }
        if (S_ISDIR(st.st_mode))
                return load_folder(l, fd);
        sc_note_private(l, fd);
        if (ends_with(l->path, ".fmu"))
                r = load_fmu(l, fd);
        else if (ends_with(l->path, ".ssp"))
                r = load_ssp(l, fd);
        else
                r = sc_err(l, l->path, 0, NULL, "not a scenario: expected a .fmu, .ssp or .ssd "
                           "file, or a folder holding a SystemStructure.ssd");
        close(fd);
        return r;
}

/* Whether every component's FMU imported. */
static bool all_imported(const struct scenario *s)
{
        for (size_t i = 0; i < s->n_components; i++)
                if (!s->components[i].fmu)
                        return false;
        return true;
}

/*
 * The passes that need every FMU; each still runs when an earlier one
 * reported, but for the columns when the sizes set were refused.
 */
static int late_passes(struct sc_load *l)
{
        struct sc_settings st = { 0 };
        bool unsized = false;
        int r, bad;

        r = sc_parameters(l);
        bad = r < 0;
        if (r == 0) {
                r = sc_structural(l);
                unsized = r < 0;        /* the columns' sizes are unknown: not checked */
        }
        bad |= r < 0;
        if (r != -ENOMEM) {
                r = sc_settings(l, &st);
                bad |= r < 0;
        }
        if (r != -ENOMEM) {
                r = sc_experiment(l, &st);
                bad |= r < 0;
        }
        if (r != -ENOMEM && !unsized) {
                r = sc_columns(l, st.n_record, st.record, (const char *const *)st.record_origins);
                bad |= r < 0;
        }
        if (r != -ENOMEM) {
                r = sc_rig(l, &st);
                bad |= r < 0;
        }
        sc_settings_fini(&st);
        return r == -ENOMEM ? r : bad ? -EINVAL : 0;
}

/* The passes after the source is read; each runs as far as the earlier ones allow. */
static int passes(struct sc_load *l)
{
        int r = 0, bad = 0;

        if (l->has_doc) {
                r = sc_components(l);
                bad = r < 0;
        }
        if (r == -ENOMEM || !l->flattened)
                return r == -ENOMEM ? r : -EINVAL;
        if (l->has_doc) {
                r = sc_connections(l);
                if (r == -ENOMEM)
                        return r;
                bad |= r < 0;
        }
        if (!all_imported(l->s))
                return -EINVAL;
        r = late_passes(l);
        return r == -ENOMEM ? r : bad || r < 0 ? -EINVAL : 0;
}

static void summarise(struct scenario *s)
{
        s->all_can_get_set_state = true;
        for (size_t i = 0; i < s->n_components; i++) {
                s->any_might_return_early |= s->components[i].might_return_early;
                s->all_can_get_set_state &= s->components[i].can_get_set_state;
        }
}

/*
 * A private file was read (sc_note_private()): every message of this load
 * may quote it, so they all give way to one that quotes nothing.
 */
static void withhold(struct sc_load *l, size_t from, int r)
{
        size_t errors = 0, warnings = 0;

        for (size_t i = from; i < l->diags->n; i++) {
                struct diag *d = &l->diags->v[i];

                errors += d->severity == DIAG_ERROR;
                warnings += d->severity != DIAG_ERROR;
                free(d->file);
                free(d->subject);
                free(d->message);
        }
        l->diags->n = from;
        if (r < 0 && r != -ECANCELED && r != -ENOMEM)
                diag_add(l->diags, DIAG_ERROR, l->path, 0, NULL, "refused (%zu errors); the "
                         "scenario holds files others may not read, so no detail is given",
                         errors ? errors : 1);
        else if (warnings)
                diag_add(l->diags, DIAG_WARNING, l->path, 0, NULL, "%zu warnings withheld: the "
                         "scenario holds files others may not read", warnings);
}

int scenario_load(const char *path, const struct scenario_opts *opts,
                  const struct scenario_overrides *overrides, struct diag_list *diags,
                  struct scenario **ret)
{
        struct sc_load l = { .path = path, .opts = opts, .ov = overrides, .diags = diags,
                             .dir_fd = -1, .iface = opts->fmu.iface };
        size_t from = diags->n;
        int r;

        *ret = NULL;
        if (!opts->cache_dir) {
                diag_add(diags, DIAG_ERROR, path, 0, NULL, "no cache directory to unpack FMUs into");
                return -EINVAL;
        }
        l.s = calloc(1, sizeof(*l.s));
        if (!l.s || !(l.s->path = strdup(path))) {
                free(l.s);
                return -ENOMEM;
        }
        r = load_source(&l);
        if (r == 0)
                r = passes(&l);
        /* Not the scenario's fault: the cache's, whatever else was found. */
        if (r == -EINVAL && l.sys_error)
                r = l.sys_error;
        /* Once cancelled, whatever failed after it failed for that reason. */
        if (fmi_cancelled(&opts->cancel))
                r = -ECANCELED;
        /* Strict: the scenario's own warnings (an .ssp's identical duplicates) refuse it too. */
        if (r == 0 && opts->fmu.strict && diag_promote(diags, from, FMU_STRICT_NOTE))
                r = -EINVAL;
        if (l.private)
                withhold(&l, from, r);
        if (l.has_doc)
                ssd_doc_fini(&l.doc);
        if (l.dir_fd >= 0)
                close(l.dir_fd);
        ssp_archive_close(l.ar);
        free(l.elems);
        free(l.systems);
        free(l.dir);
        free(l.label);
        if (r < 0) {
                scenario_free(l.s);
                return r;
        }
        summarise(l.s);
        *ret = l.s;
        return 0;
}
