/*
 * master_save_int: what master_save() keeps of the master's state, shared
 * by master_save.c (taken and set back in memory) and master_save_io.c
 * (its byte encoding for a snapshot's export and import).
 *
 * DESIGN: a numeric block's values are kept as bytes (n from the master's
 * block, not stored here); a String or Binary block's elements as owned
 * copies with their sizes. A block neither saved nor needed (a 'next'
 * block of String or Binary while nothing is pending) is all zeros.
 */
#ifndef FMUD_ENGINE_MASTER_SAVE_INT_H
#define FMUD_ENGINE_MASTER_SAVE_INT_H

#include "engine/master/master_int.h"

/* A block's values: numbers as bytes; String/Binary elements as owned copies. */
struct saved_block {
        unsigned char *vals;            /* numeric: n * mv_size() bytes */
        unsigned char **blobs;          /* String/Binary: n copies */
        size_t *sizes;
        size_t n;
};

struct saved_inst {
        double t, reached, from, aim, goal, next_event, t_pub, t_der;
        uint64_t k;
        bool pending, event, terminate;
        struct master_inst_stats stats;
        size_t n_out;
        struct saved_block *next, *pub;
        double *der_vals;
        /* Clocks (master_clock.c): the next ticks and the counts. */
        struct mclock *clocks;
        uint64_t *oclock_ticks;
        double clock_next;
        /* Recorded Clocks that ticked ahead of the session (mi->ticked_ahead). */
        bool *ticked_ahead;
        bool any_ahead;
};

struct master_saved {
        const struct master *m;         /* the master it belongs to (compared, never followed) */
        int state;
        uint64_t pt;
        double t_cur, t_next;
        bool at_grid;
        uint32_t zero_meets;
        uint64_t extra_run;
        uint64_t points, extra_points, events, restores, wall_ns;
        char msg[MASTER_MSG_MAX];
        size_t n;
        struct saved_inst *insts;
};

#endif
