/*
 * libfmud_rig_int: a rig handle, shared by libfmud_rig.c (the local
 * channel, and what both transports have in common) and
 * libfmud_rig_remote.c (a remote rig through the daemon's bridge).
 */
#ifndef FMUD_CLIENT_LIBFMUD_RIG_INT_H
#define FMUD_CLIENT_LIBFMUD_RIG_INT_H

#include "libfmud_int.h"

struct rig;
struct rig_remote;

struct fmud_rig {
        struct rig *r;                  /* local: the mapped channel; NULL when remote */
        struct rig_remote *remote;      /* remote: the connection to the bridge */
        struct fmud_rig_port *ports[2];
        uint32_t n[2];
        double *vals;                   /* the outputs of the last point waited for */
        bool have;
        struct fmud_rig_point last;
        uint64_t next;                  /* the point writes are for */
};

/*
 * Remote: connect to the bridge the rig request's result v names (its
 * port, on the host of c's endpoint, with c's CURVE keys), present the
 * token and take the ports into g (ports, n, vals). 0, or an error in c.
 */
int rig_remote_open(struct fmud *c, const struct pv *v, struct fmud_rig *g);
int rig_remote_write(struct fmud_rig *g, const double *in);
/* The newest point: *ret_point, *ret_time, g->vals, *ret_skipped. As fmud_rig_wait(). */
int rig_remote_wait(struct fmud_rig *g, int timeout_ms, uint64_t *ret_point, double *ret_time,
                    uint64_t *ret_skipped);
/* Say bye and close; frees what rig_remote_open() added to g. */
void rig_remote_close(struct fmud_rig *g);

#endif
