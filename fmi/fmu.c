/*
 * fmu: the import facade. Archive, description and platform checks run in
 * that order, and each later check runs as far as the earlier ones allow, so
 * that a user sees every problem at once.
 */
#include "fmu.h"
#include "fmu_se.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MD_ENTRY "modelDescription.xml"

void fmu_opts_default(struct fmu_opts *opts)
{
        *opts = (struct fmu_opts){ 0 };
        fmu_limits_default(&opts->limits);
        md_limits_default(&opts->md_limits);
}

void fmu_free(struct fmu *fmu)
{
        if (!fmu)
                return;
        md_free(fmu->md);
        free(fmu->path);
        free(fmu->binary_entry);
        free(fmu->unpacked_dir);
        if (fmu->unpacked_hold >= 0)
                close(fmu->unpacked_hold);
        free(fmu->cannot_run);
        free(fmu);
}

/* "ModelExchange and ScheduledExecution" */
static void interfaces(const struct md *md, char *buf, size_t size)
{
        snprintf(buf, size, "%s%s%s", md->has_model_exchange ? "ModelExchange" : "",
                 md->has_model_exchange && md->has_scheduled_execution ? " and " : "",
                 md->has_scheduled_execution ? "ScheduledExecution" : "");
}

/* fmu->cannot_run = why; then 0 for describe, else an error in diags. */
static int cannot_run(struct fmu *fmu, const struct fmu_opts *opts, struct diag_list *diags,
                      const char *why)
{
        fmu->cannot_run = strdup(why);
        if (!fmu->cannot_run)
                return -ENOMEM;
        if (opts->describe)
                return 0;
        diag_add(diags, DIAG_ERROR, MD_ENTRY, 0, NULL, "%s", why);
        return -EINVAL;
}

/* ScheduledExecution: its partitions activated by the worker (fmu_se.h). */
static int choose_se(struct fmu *fmu, const struct fmu_opts *opts, struct diag_list *diags)
{
        struct md *md = fmu->md;
        char why[256];

        if (!md->has_scheduled_execution) {
                snprintf(why, sizeof(why), "ScheduledExecution asked for, but the FMU has no "
                         "ScheduledExecution interface (it has %s)",
                         md->cs.present && md->has_model_exchange ? "CoSimulation and ModelExchange"
                         : md->cs.present ? "CoSimulation" : "ModelExchange");
                return cannot_run(fmu, opts, diags, why);
        }
        if (fmu_se_check(md, why, sizeof(why)) < 0)
                return cannot_run(fmu, opts, diags, why);
        if (md_host_se(md) == -ENOMEM)
                return -ENOMEM;
        return md->hosted_se ? 1 : -EINVAL;     /* no modelIdentifier: reported already */
}

/*
 * The interface fmud hosts: CoSimulation, or ModelExchange integrated in
 * the worker, as opts->iface asks. 1 when it is settled, 0 or
 * < 0 from cannot_run() when not.
 */
static int choose_interface(struct fmu *fmu, const struct fmu_opts *opts, struct diag_list *diags)
{
        struct md *md = fmu->md;
        char ifaces[64], why[256];
        bool me = opts->iface == FMU_IFACE_ME ||
                  (opts->iface == FMU_IFACE_AUTO && !md->cs.present && md->has_model_exchange);

        if (opts->iface == FMU_IFACE_SE || (opts->iface == FMU_IFACE_AUTO && !md->cs.present &&
                                            !md->has_model_exchange && md->has_scheduled_execution))
                return choose_se(fmu, opts, diags);
        if (opts->iface == FMU_IFACE_CS && !md->cs.present) {
                interfaces(md, ifaces, sizeof(ifaces));
                snprintf(why, sizeof(why), "CoSimulation asked for, but the FMU has no "
                         "CoSimulation interface (it has %s)", ifaces[0] ? ifaces : "none");
                return cannot_run(fmu, opts, diags, why);
        }
        if (!me && md->cs.present)
                return 1;
        if (!md->has_model_exchange) {
                interfaces(md, ifaces, sizeof(ifaces));
                if (md->cs.present || opts->iface == FMU_IFACE_ME)
                        snprintf(why, sizeof(why), "ModelExchange asked for, but the FMU has no "
                                 "ModelExchange interface (it has %s only)",
                                 md->cs.present ? "CoSimulation" : "ScheduledExecution");
                else
                        snprintf(why, sizeof(why), "no CoSimulation, ModelExchange or "
                                 "ScheduledExecution interface (the FMU has %s only)",
                                 ifaces[0] ? ifaces : "none");
                return cannot_run(fmu, opts, diags, why);
        }
        /* FMI 2.0 states the sizes the worker allocates (FMI 2.0 sections 2.2.1, 2.2.8). */
        if (md->fmi == MD_FMI2 && (md->number_of_event_indicators > FMU_ME_INDICATORS_MAX ||
                                   md->structure.derivatives.n > FMU_ME_STATES_MAX)) {
                snprintf(why, sizeof(why), "ModelExchange with %zu continuous states and %" PRIu32
                         " event indicators (numberOfEventIndicators): fmud integrates at most %u "
                         "of each", md->structure.derivatives.n, md->number_of_event_indicators,
                         FMU_ME_STATES_MAX);
                return cannot_run(fmu, opts, diags, why);
        }
        if (md_host_me(md) == -ENOMEM)
                return -ENOMEM;
        return md->hosted_me ? 1 : -EINVAL;     /* no modelIdentifier: reported already */
}

/*
 * What fmud needs to run an FMU here: an interface it hosts (CoSimulation
 * or ModelExchange) and its binary for this platform. An FMU
 * without them may be valid (fmuctl inspect describes it); a load refuses
 * it. fmu->cannot_run says why.
 */
static int check_runnable(struct fmu *fmu, const struct fmu_archive *ar, const struct fmu_opts *opts,
                          struct diag_list *diags)
{
        const struct md *md = fmu->md;
        const char *id;
        int r;

        r = choose_interface(fmu, opts, diags);
        if (r <= 0)
                return r;
        id = md->cs.model_identifier;
        if (!id || !*id)
                return -EINVAL; /* the description's own check already reported it */
        if (asprintf(&fmu->binary_entry, "binaries/%s/%s.so", fmu_platform_dir(md->fmi), id) < 0) {
                fmu->binary_entry = NULL;
                return -ENOMEM;
        }
        fmu->has_binary = fmu_archive_has(ar, fmu->binary_entry);
        if (fmu->has_binary)
                return 0;
        /* FMI 2.0 puts the binaries directory in section 2.3, FMU Distribution. */
        r = asprintf(&fmu->cannot_run, "no binary for this platform (FMI %s): %s is not in the "
                     "archive", md->fmi == MD_FMI3 ? "3.0 section 2.5.1.4" : "2.0 section 2.3",
                     fmu->binary_entry);
        if (r < 0) {
                fmu->cannot_run = NULL;
                return -ENOMEM;
        }
        if (opts->describe)
                return 0;
        diag_add(diags, DIAG_ERROR, fmu->path, 0, fmu->binary_entry,
                 "no binary for this platform (FMI %s): the FMU cannot run on this machine",
                 md->fmi == MD_FMI3 ? "3.0 section 2.5.1.4" : "2.0 section 2.3");
        return -EINVAL;
}

static int read_description(struct fmu *fmu, const struct fmu_archive *ar,
                            const struct fmu_opts *opts, struct diag_list *diags)
{
        void *buf;
        size_t len;
        int r;

        r = fmu_archive_read(ar, MD_ENTRY, opts->md_limits.max_bytes, &buf, &len);
        if (r == -EFBIG) {
                diag_add(diags, DIAG_ERROR, fmu->path, 0, MD_ENTRY,
                         "larger than the limit of %zu bytes", opts->md_limits.max_bytes);
                return -EINVAL;
        }
        if (r < 0) {
                diag_add(diags, DIAG_ERROR, fmu->path, 0, MD_ENTRY, "cannot be read: %s", strerror(-r));
                return r == -ENOMEM ? r : -EINVAL;
        }
        r = md_parse(buf, len, MD_ENTRY, &opts->md_limits, diags, &fmu->md);
        free(buf);
        return r;
}

static int import(int fd, const char *path, const struct fmu_opts *opts,
                  struct diag_list *diags, struct fmu **ret_fmu)
{
        struct fmu_archive *ar = NULL;
        size_t from = diags->n;
        struct fmu *fmu;
        int r, bad = 0, sys = 0;

        *ret_fmu = NULL;
        if (fmi_cancelled(&opts->md_limits.cancel))
                return -ECANCELED;
        r = fd >= 0 ? fmu_archive_open_fd(fd, path, &opts->limits, diags, &ar)
                    : fmu_archive_open(path, &opts->limits, diags, &ar);
        if (r < 0) {
                if (opts->strict)
                        (void)diag_promote(diags, from, FMU_STRICT_NOTE);
                return r;
        }

        fmu = calloc(1, sizeof(*fmu));
        if (fmu)
                fmu->unpacked_hold = -1;
        if (!fmu || !(fmu->path = strdup(path))) {
                r = -ENOMEM;
                goto out_free;
        }
        memcpy(fmu->sha256, fmu_archive_sha256(ar), sizeof(fmu->sha256) - 1);
        fmu->integrator = opts->integrator;

        r = read_description(fmu, ar, opts, diags);
        if (r == -ENOMEM || r == -ECANCELED)
                goto out_free;
        bad |= r < 0;
        if (fmu->md) {
                r = check_runnable(fmu, ar, opts, diags);
                if (r == -ENOMEM)
                        goto out_free;
                bad |= r < 0;
        }
        if (opts->strict && diag_promote(diags, from, FMU_STRICT_NOTE))
                bad = 1;
        if (!bad && opts->cache_dir) {
                r = fmu_archive_unpack_held(ar, opts->cache_dir, diags, &opts->md_limits.cancel,
                                            &fmu->unpacked_dir, &fmu->unpacked_hold);
                if (r == -ECANCELED)
                        goto out_free;
                if (r < 0) {
                        diag_add(diags, DIAG_ERROR, path, 0, NULL, "cannot unpack into '%s': %s",
                                 opts->cache_dir, strerror(-r));
                        bad = 1;
                        /* The cache's file system (full, read-only), not the FMU: said so. */
                        if (r != -EINVAL && r != -EBADMSG)
                                sys = r;
                }
        }
        fmu_archive_close(ar);
        *ret_fmu = fmu;
        return sys ? sys : bad ? -EINVAL : 0;

out_free:
        fmu_archive_close(ar);
        fmu_free(fmu);
        return r;
}

int fmu_open(const char *path, const struct fmu_opts *opts, struct diag_list *diags,
             struct fmu **ret_fmu)
{
        return import(-1, path, opts, diags, ret_fmu);
}

int fmu_open_fd(int fd, const char *label, const struct fmu_opts *opts, struct diag_list *diags,
                struct fmu **ret_fmu)
{
        return import(fd, label, opts, diags, ret_fmu);
}
