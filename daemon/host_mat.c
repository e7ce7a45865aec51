/*
 * host_mat: a results file named .mat (load's out): MAT v4 in the
 * Dymola/OpenModelica layout (engine/record/mat4.h), written by the daemon.
 *
 * DESIGN: the recorder writes CSV, never waiting on the disk while the
 * master runs; for a .mat file it writes that CSV to an unnamed file of
 * the daemon's state directory (O_TMPFILE: nothing to clean up, whatever
 * happens), which is also what results serves while the session runs.
 * When recording ends (hrec_close()), the CSV is converted into the named
 * file, opened at load as any results file (host_out.c), in bounded
 * memory (mat4_csv.h), with each column's description, unit and
 * variability from its model description (run_mat4_meta()); String and
 * Binary columns are left out, as the load's warning said. A conversion that fails fails
 * the results file as a failed write does.
 *
 * Threads: the session thread.
 */
#include "daemon/host_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/record/mat4_csv.h"
#include "engine/run/run.h"

int hmat_csv_open(struct hsess *hs, int *ret_fd, char *msg, size_t size)
{
        const char *state = hs->h->state_dir;
        int fd;

        if (!state) {
                snprintf(msg, size, "a .mat results file needs the daemon's state directory, "
                         "where its rows wait as CSV; this daemon has none");
                return PROTO_E_INVALID;
        }
        fd = open(state, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd < 0) {
                snprintf(msg, size, "a .mat results file needs an unnamed file in the state "
                         "directory '%s': %s", state, strerror(errno));
                return PROTO_E_INTERNAL;
        }
        *ret_fd = fd;
        return -1;
}

int hmat_finish(struct hsess *hs, char *msg, size_t size)
{
        /* Each session's own: sessions end on their own threads, at the same time too. */
        struct mat4_var *meta = run_mat4_meta(hs->sc);
        int r;

        if (!meta) {
                r = -ENOMEM;
                snprintf(msg, size, "%s", strerror(-r));
        } else {
                /* The CSV the recorder wrote, read through the descriptor results reads it with. */
                r = mat4_csv_convert_fd(hs->res_fd, 0, hs->mat_fd, meta, hs->sc->n_columns,
                                        msg, size);
        }
        if (r == 0 && fsync(hs->mat_fd) < 0) {
                r = -errno;
                snprintf(msg, size, "%s", strerror(-r));
        }
        if (close(hs->mat_fd) < 0 && r == 0 && errno != EINTR) {
                r = -errno;
                snprintf(msg, size, "%s", strerror(-r));
        }
        hs->mat_fd = -1;
        free(meta);
        return r;
}
