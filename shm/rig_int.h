/*
 * rig_int: a rig channel's handle, shared by the files of the channel
 * (rig.c: layout, rings, values; rig_claim.c: one rig at a time). Private
 * to shm/.
 */
#ifndef FMUD_SHM_RIG_INT_H
#define FMUD_SHM_RIG_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shm/rig.h"
#include "shm/ring.h"
#include "shm/wait.h"

struct rig {
        int fd;
        bool engine;
        unsigned char *base;
        size_t size;
        uint32_t n_in, n_out;
        uint32_t policy, timeout_ms;    /* engine: as created, for rig_restore() */
        _Atomic bool ended;             /* engine: rig_end() was called */
        struct rig_port *ports;         /* a private copy, either side: never the mapping */
        struct ring in, out;            /* engine: consumes in, produces out; rig: the reverse */
        size_t in_size, out_size;       /* the rings' bytes, as validated */
        size_t in_rec, out_rec;         /* record bytes */
        uint64_t seq;                   /* rig: last written; engine: last taken */
        struct wait_policy wait;
        unsigned char *buf;             /* in_rec or out_rec bytes of scratch */
        bool beat_by_caller;            /* rig: only rig_beat_at() stores the heartbeat */
        int peer_fd;                    /* rig: a pidfd of the daemon (rig_watch_peer()); -1 */
        /*
         * rig: that process has ended. Set by the thread in rig_wait(), read
         * by another's rig_write() (a relay): release there, acquire here.
         */
        _Atomic bool peer_gone;
        /*
         * rig: the claim word this handle stored last (its tag is the
         * handle's); 0: none. Written by the thread that claims or renews,
         * read by the others of a relay (relaxed: only its tag is compared,
         * and the tag never changes once claimed).
         */
        _Atomic uint64_t claim;
};

static inline struct rig_hdr *rig_hdr_of(const struct rig *r)
{
        return (struct rig_hdr *)r->base;
}

/*
 * Rig: open both rings where they stand (in: producer, out: consumer). A
 * ring whose positions a rig before it broke is taken over at the
 * position the other side published: the rig's own one is moved there
 * (in: its tail to the engine's head; out: its head to the engine's
 * tail), losing only what was in flight. 0 or -errno.
 */
int rig_open_rings(struct rig *r);

/* rig_claim.c */
/* The handle claimed the channel and another rig has taken it since. */
bool rig_claim_lost(const struct rig *r);

#endif
