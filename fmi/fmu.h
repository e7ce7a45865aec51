/*
 * fmu: one FMU import, start to finish: the archive checked entry by entry,
 * its modelDescription.xml parsed and validated, the binary for this
 * platform found, and (on request) the archive unpacked into the cache.
 *
 * DESIGN: this is the one place that decides whether an FMU can run here;
 * `fmuctl inspect` and the daemon's load both call fmu_open(), so inspect
 * validates exactly as a load does. No FMU code runs here: loading the
 * binary is loader.h's job, in a worker.
 */
#ifndef FMUD_FMI_FMU_H
#define FMUD_FMI_FMU_H

#include "archive.h"
#include "diag.h"
#include "model_description.h"

/* Which of an FMU's interfaces fmud hosts. */
enum fmu_interface {
        FMU_IFACE_AUTO,         /* CoSimulation, else ModelExchange, else ScheduledExecution */
        FMU_IFACE_CS,
        FMU_IFACE_ME,           /* integrated in the worker (FMI 3.0 and 2.0 section 3) */
        FMU_IFACE_SE,           /* partitions activated by the worker (FMI 3.0 section 5) */
};

/* How a worker integrates a Model Exchange FMU (worker/me.h). */
enum fmu_integrator {
        FMU_INTEGRATOR_BDF,     /* CVODE BDF, Newton iteration: stiff models; the default */
        FMU_INTEGRATOR_ADAMS,   /* CVODE Adams-Moulton, fixed-point iteration: non-stiff */
};
/*
 * The most continuous states and event indicators a worker integrates: an
 * FMI 2.0 description states both (numberOfEventIndicators, the
 * Derivatives of ModelStructure), and more is refused at load.
 */
#define FMU_ME_STATES_MAX       (1u << 20)
#define FMU_ME_INDICATORS_MAX   (1u << 20)
/* "bdf", "adams" */
const char *fmu_integrator_name(enum fmu_integrator i);
/* "bdf"/"adams" (len bytes) to *ret; -EINVAL otherwise. */
int fmu_integrator_parse(const char *s, size_t len, enum fmu_integrator *ret);
/* "cs"/"me"/"se" (len bytes) to *ret; -EINVAL otherwise. */
int fmu_interface_parse(const char *s, size_t len, enum fmu_interface *ret);

/* What fmu_open() appends to a warning that opts->strict makes an error. */
#define FMU_STRICT_NOTE "refused under strict validation"

struct fmu_opts {
        struct fmu_limits limits;       /* archive limits */
        /*
         * modelDescription limits; its cancel is polled by the whole
         * import (parsing, unpacking), which then returns -ECANCELED
         */
        struct md_limits md_limits;
        const char *cache_dir;          /* NULL: do not unpack */
        /*
         * Warnings refuse the FMU too: each becomes an error (its message
         * ends "refused under strict validation").
         */
        bool strict;
        /*
         * Describe rather than load (fmuctl inspect): a valid FMU that fmud
         * cannot run here (no CoSimulation interface, no binary for this
         * platform) is not refused; fmu->cannot_run says why.
         */
        bool describe;
        /*
         * The interface to host; with ME, fmu->md->cs is md_host_me()'s
         * view, with SE md_host_se()'s.
         */
        enum fmu_interface iface;
        enum fmu_integrator integrator; /* kept in fmu->integrator for the worker */
};

/* Fill opts with the default limits and no unpacking. */
void fmu_opts_default(struct fmu_opts *opts);

struct fmu {
        char *path;                     /* the archive, as given */
        char sha256[65];
        struct md *md;                  /* NULL when the description could not be read */
        char *binary_entry;             /* "binaries/<platform>/<id>.so", NULL when unknown */
        bool has_binary;                /* binary_entry is in the archive */
        char *unpacked_dir;             /* set when opts->cache_dir was given and it unpacked */
        int unpacked_hold;              /* holds unpacked_dir in use (fmi/cache_check.h); -1 */
        char *cannot_run;               /* why fmud cannot run it here; NULL when it can */
        enum fmu_integrator integrator; /* md->hosted_me: how its worker integrates it */
};

/*
 * Import the FMU at 'path'. Every problem found is appended to diags.
 *
 * Returns 0 when the FMU can run here as a Co-Simulation FMU (with
 * opts->describe: when it is valid, runnable or not); -EINVAL when any
 * problem was found (see diags; warnings alone do not refuse it unless
 * opts->strict); -ECANCELED when opts->md_limits.cancel answered true
 * (nothing set, nothing left in the cache); -ENOENT/-EACCES/... when the file
 * cannot be read; the cache's own error (-ENOSPC, -EROFS, -EDQUOT, -EIO ...,
 * with a diagnostic) when a valid FMU cannot be unpacked into it; -ENOMEM.
 * *ret_fmu is set whenever anything could be read (also on -EINVAL and a
 * cache error, so callers can show the parsed part) and NULL otherwise;
 * free it with fmu_free().
 */
int fmu_open(const char *path, const struct fmu_opts *opts, struct diag_list *diags,
             struct fmu **ret_fmu);

/*
 * The same on a file the caller opened (borrowed; only the descriptor is
 * read, never a path): label stands for the path in fmu->path and in
 * diagnostics.
 */
int fmu_open_fd(int fd, const char *label, const struct fmu_opts *opts, struct diag_list *diags,
                struct fmu **ret_fmu);

void fmu_free(struct fmu *fmu);

/* The binaries/ folder name of this machine for an FMI version, e.g. "x86_64-linux". */
const char *fmu_platform_dir(enum md_fmi_version fmi);

#endif
