/*
 * ssp_archive: a .ssp file (a zip holding SystemStructure.ssd, resources/
 * with FMUs, parameter files) opened as hostile input.
 *
 * DESIGN: fmi/archive.h opens it as a container (no modelDescription.xml
 * of its own) and checks every entry as it does an FMU's (names that
 * escape, links, duplicates, sizes, compression ratio, encryption); every
 * read goes through it, never past an entry's checked size. Nothing is
 * ever unpacked as a tree; an FMU inside is copied, by content hash, to
 * "<cache_dir>/ssp/<sha256>.fmu" for fmu_open().
 */
#ifndef FMUD_ENGINE_SSP_ARCHIVE_H
#define FMUD_ENGINE_SSP_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>

#include "fmi/archive.h"
#include "fmi/diag.h"

struct ssp_archive;

/*
 * Open path and check it against lim (NULL: the defaults). Returns 0 with
 * *ret set (close with ssp_archive_close()); -EINVAL when the archive is
 * refused (fmi/archive.h's diagnostics passed through, naming path);
 * -errno when it cannot be read; -ENOMEM.
 */
int ssp_archive_open(const char *path, const struct fmu_limits *lim, struct diag_list *diags,
                     struct ssp_archive **ret);

/* The same on a file the caller opened (borrowed); path labels it. fd < 0: open path. */
int ssp_archive_open_fd(int fd, const char *path, const struct fmu_limits *lim,
                        struct diag_list *diags, struct ssp_archive **ret);

void ssp_archive_close(struct ssp_archive *a);

/* Whether a file entry of exactly that name (no leading '/', no '.') exists. */
bool ssp_archive_has(const struct ssp_archive *a, const char *name);

/*
 * Read one entry into a new NUL-terminated buffer (caller frees). Returns 0;
 * -ENOENT; -EFBIG when over max; -EBADMSG when its data is corrupt or not
 * its declared size; -ESTALE when the file changed since it was opened.
 */
int ssp_archive_read(const struct ssp_archive *a, const char *name, size_t max, char **ret_buf,
                     size_t *ret_len);

/*
 * Copy the entry (an FMU) to "<cache_dir>/ssp/<sha256>.fmu", creating the
 * folders, through a temporary file and a rename; an existing copy is
 * replaced by identical bytes. Returns 0 with *ret_path set (caller frees)
 * and *ret_sha256 filled, and (ret_fd not NULL) *ret_fd the copy's own
 * descriptor, read-write, at offset 0 (caller closes), so that nothing
 * renamed over the name afterwards is read; or -errno as
 * ssp_archive_read(); nothing is left behind on failure.
 */
int ssp_archive_extract(const struct ssp_archive *a, const char *name, const char *cache_dir,
                        char **ret_path, int *ret_fd, char ret_sha256[65]);

#endif
