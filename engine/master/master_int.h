/*
 * master_int: the inside of struct master, shared by engine/master/master*.c.
 *
 *   master.c          the public API: new/free, the stepping loops,
 *                     requests, pacing, statistics
 *   master_plan.c     everything precomputed once: value blocks, stages,
 *                     columns (master_plan_route.c: routes, intermediate
 *                     routes, output derivatives)
 *   master_point.c    one coupled step, start to finish, and the move to
 *                     the new point (publish, events, rows, terminate)
 *   master_step.c     due instances, posts and waits by stage, faults
 *   master_meet.c     early return: meeting at t_e, continuing alone
 *   master_event.c    Event Mode at a point
 *   master_clock_plan.c  Clocks planned once: timing, output Clocks,
 *                     recorded Clocks, Clock connections
 *   master_clock.c    Clocks at a tick: input Clocks set, output Clocks
 *                     polled, clocked values, the next ticks
 *   master_iu.c       intermediate updates and output derivatives
 *   master_route.c    the per-point data movement: inputs from published
 *                     outputs, publishing, rows
 *   master_value.c, master_pace.c, extrapolate.c: pure helpers
 *
 * Concurrency: one master thread owns everything here, except the
 * atomics at the top of struct master, which other threads write through
 * master_request_pause()/master_request_stop()/master_request_serve()/
 * master_set_warp() and read through master_state()/master_live(), and
 * the wake lock and condition (master_live.c), with which
 * master_request_serve() wakes a paced wait. The master thread reads 'requests' and
 * 'warp_bits' between points (relaxed loads are enough: a request is
 * honoured at the next point after it becomes visible; nothing else is
 * published through them), and is the only writer of 'state' (release
 * store; master_state() loads with acquire, so a caller that sees
 * MASTER_PAUSED also sees the master's writes before it, e.g. its
 * message and statistics).
 */
#ifndef FMUD_ENGINE_MASTER_INT_H
#define FMUD_ENGINE_MASTER_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "engine/master/master.h"
#include "engine/master/spread.h"
#include "engine/master/master_pace.h"
#include "engine/master/session_int.h"
#include "shm/rig.h"

#define MASTER_REQ_PAUSE        (1u << 0)
#define MASTER_REQ_STOP         (1u << 1)
#define MASTER_REQ_SERVE        (1u << 2)       /* return at the point reached (master_live.c) */
#define MASTER_MSG_MAX          2048

/* One block of values of one call type: what one inst_in or inst_out names. */
struct mblock {
        enum md_type type;              /* call type (Enumeration: Int64 or Int32) */
        size_t n_vars;
        uint32_t *vrs;
        size_t n;                       /* values: the elements of all its variables */
        unsigned char *vals;            /* n * mv_size(type) bytes */
        size_t *sizes;                  /* Binary: n sizes */
        unsigned char **own;            /* published String/Binary: owned copies */
        size_t *own_cap;
        /*
         * Its variables are clocked: set and got only in Event Mode while
         * one of their Clocks ticks (master_clock.c), never with a step.
         * Clocked blocks come after the others.
         */
        bool clocked;
};

/* Where a variable's values live in an instance's blocks. */
struct mslot {
        size_t var;
        size_t block;
        size_t off;                     /* first value in the block */
        size_t n;                       /* elements */
};

/* One connection as routed at each point: n values, producer block -> consumer block. */
struct mroute {
        size_t prod;                    /* producer instance */
        const struct mblock *src_pub, *src_next;
        size_t src_off;
        struct mblock *dst;
        size_t dst_off;
        size_t n;
        bool identity, sequential;
        double factor, offset;
};

/* An intermediate input: the producer's published value, extrapolated (extrapolate.h). */
struct miu {
        size_t prod;
        const struct mblock *src;       /* the producer's published block */
        size_t src_off;
        struct mblock *dst;             /* the consumer's intermediate input block */
        size_t dst_off;
        size_t n;
        unsigned order;                 /* derivative orders the producer provides (0..2) */
        size_t der_off;                 /* its order-1 values in the producer's der_vals */
        bool identity;
        double factor, offset;
};

/* A recorded intermediate output: a column refreshed in the instance's intermediate rows. */
struct miu_col {
        size_t col;
        const struct mblock *block;
        size_t off;
};

/* An input driven from a file: table column col -> element off of an input block (input_feed.c). */
struct mfeed {
        size_t col;
        struct mblock *dst;
        size_t off;
};

/*
 * The rig channel (master_rig.c): where each rig input goes, where each
 * output comes from, and the counters status reports.
 */
struct mrig {
        struct rig *chan;
        size_t n_in, n_out;
        struct mrig_in {
                struct mblock *dst;
                size_t off;
                bool has_safe;
                double safe;
        } *in;
        struct mrig_out {
                size_t comp, var;
        } *out;
        double *vals, *take, *outs;     /* n_in, n_in, n_out */
        uint64_t timeout_ns;
        enum rig_policy policy;
        bool attached;                  /* the heartbeat is fresh */
        bool counted;                   /* in inst_count_waiter(): attached, and the master steps */
        bool ever;                      /* a rig has attached since the load */
        bool vanished;                  /* it was attached and is no more: the policy holds */
        double vanished_t;              /* the point where it was found vanished */
        bool recheck;                   /* a run after a pause: a pause policy applies again */
        /* Master writes, any thread reads (master_rig_stats()). */
        _Atomic uint64_t applied, late, missing, dropped, bad;
        _Atomic int state;              /* enum master_rig_state */
};

/* Steps chained in one request at most (master_chain.c), at most INST_REPEAT_MAX. */
#define MCHAIN_REPEAT   8u
/* The next request is chained once no more than this many steps are left to take. */
#define MCHAIN_LOW      (MCHAIN_REPEAT / 2)
/* Requests a chain is made of: one being taken, one behind it, one whose last step is in flight. */
#define MCHAIN_BUFS     3u

/*
 * A time-based input Clock as the master ticks it (master_clock.c): its
 * next tick is t0 + num / res (a fraction) or base + k interval.
 */
struct mclock {
        uint32_t vr;
        size_t var;
        enum md_interval_variability iv;
        bool fraction, supports_fraction;
        uint64_t num, res, step;
        double base, interval;
        uint64_t k;
        double next;                    /* INFINITY: none */
        uint64_t ticks;
        bool due;                       /* ticks in the Event Mode under way */
        bool pending;                   /* triggered: a connected output Clock ticked */
};

/* A Clock connection: output Clock oclock of prod ticks input Clock clock of cons. */
struct mclink {
        size_t prod, oclock;
        size_t cons, clock;
};

/* A discrete input the master sets with each step (master_input_event.c). */
struct mdisc {
        size_t block;                   /* its step block */
        size_t off, len;                /* its bytes in the block's values */
        size_t at;                      /* where disc_last keeps them */
        uint32_t vr;
        size_t n;                       /* elements */
        /* String and Binary: a block of n values holding copies (disc_last holds none). */
        struct mblock *last;
};

/* The master's view of one instance. */
struct mi {
        struct inst *inst;
        const char *name;
        size_t idx;
        int fmi;
        uint32_t rate;                  /* multirate factor */
        bool event_mode, can_state, save_state, iu;
        /* canHandleVariableCommunicationStepSize is false: every step is rate * h exactly. */
        bool rigid;
        double fixed_step;              /* fixedInternalStepSize; 0: none given */
        bool noted_lst;                 /* a lastSuccessfulTime deviation was noted */
        bool noted_kept;                /* a kept Gauss-Seidel step was noted (master_meet.c) */
        bool noted_nan;                 /* a NaN output to a consumer was noted */
        unsigned stage;

        /* Values set with each step, and where they come from. */
        size_t n_in;
        size_t n_in_step;               /* the first blocks, unclocked: set with a step */
        struct mblock *in;
        struct inst_in *inst_in;
        size_t n_routes;
        struct mroute *routes;
        size_t n_in_slots;
        struct mslot *in_slots;
        size_t n_feeds;                 /* inputs driven from a file, set after the routes */
        struct mfeed *feeds;
        /* With Event Mode: its discrete inputs and the values the FMU last took. */
        size_t n_disc;
        struct mdisc *disc;
        unsigned char *disc_last;
        bool disc_valid;                /* else read them back from the FMU first */

        /* Values got with each step (next) and published at a point (pub). */
        size_t n_out;
        size_t n_out_step;              /* the first blocks, unclocked: got with a step */
        struct mblock *next, *pub;
        struct inst_out *inst_out;
        size_t n_slots;
        struct mslot *slots;            /* sorted by var */
        double t_pub;                   /* time of the published values */

        /* Output derivatives this instance provides to intermediate inputs. */
        size_t n_der;
        uint32_t *der_vrs;
        int32_t *der_orders;
        size_t *der_elems;              /* values of each entry */
        size_t n_der_vals;
        double *der_vals;
        double t_der;                   /* NAN: none valid */

        /* Intermediate inputs set in its intermediate updates, recorded outputs read there. */
        size_t n_iu;
        struct miu *iu_routes;
        size_t n_iu_in;
        struct mblock *iu_in;
        size_t n_iu_out;
        struct mblock *iu_out;
        size_t n_iu_cols;
        struct miu_col *iu_cols;

        /* The current coupled step (master_step.c, master_meet.c). */
        double t;                       /* the time the FMU is at */
        uint64_t k;                     /* grid index of its next own point */
        double goal;                    /* where this coupled step takes it */
        double aim;                     /* where the last post asked it to go */
        double cut;                     /* > from: its step ends here, before aim: a time
                                         * event an Event Mode before it gave (NAN: none;
                                         * 0 is a time like any other) */
        double reached;                 /* lastSuccessfulTime of the last step */
        double next_event;              /* nextEventTime; INFINITY: none */
        double from;                    /* where the last post started */
        uint64_t state;                 /* saved FMU state handle, 0: none */
        bool due;                       /* at the current point: steps in this coupled step */
        bool todo;                      /* to be posted by mstep_run() */
        bool redo;                      /* must step again to meet an early return */
        bool posted;                    /* awaits inst_wait_step() */
        bool stepped;                   /* next holds this coupled step's outputs (at 'aim') */
        bool pending;                   /* next holds outputs not yet published (at 't') */
        bool saved;                     /* 'state' holds the FMU at the current point */
        bool event;                     /* eventHandlingNeeded, not yet handled */
        bool terminate;                 /* terminateSimulation, not yet acted on */
        struct inst_step step;
        struct inst_step_result res;
        uint64_t post_ns;

        /*
         * The next points' steps, chained behind the current one
         * (master_chain.c): requests of one step or a repeat, taken in
         * turn. Up to two are not taken yet, and the last step of the one
         * before them may still be in flight, so three buffers.
         */
        struct inst_step chain[MCHAIN_BUFS];
        double chain_times[MCHAIN_BUFS][MCHAIN_REPEAT + 1];     /* step j: [j] to [j + 1] */
        unsigned chain_len[MCHAIN_BUFS];        /* steps of each request */
        unsigned chain_first;           /* the request being taken */
        unsigned chain_reqs;            /* requests with steps not taken yet: 0 to 2 */
        unsigned chain_head;            /* of chain[chain_first]: the next step to take */
        unsigned chained;               /* steps not taken yet, in all */
        uint64_t chain_end;             /* the grid point the last chained step ends at */
        bool plain;                     /* the last step collected completed plainly */
        bool took_chain;                /* the step in flight was chained */

        /* Clocks (master_clock.c). */
        size_t n_clocks;
        struct mclock *clocks;          /* time-based input Clocks */
        size_t n_oclocks;
        uint32_t *oclock_vrs;           /* output Clocks, polled in Event Mode */
        uint64_t *oclock_ticks;
        bool *oclock_on;                /* ticking in the Event Mode under way */
        uint32_t *clock_vrs;            /* scratch: the input Clocks set at a tick */
        bool *clock_buf;                /* scratch: Clock values */
        double clock_next;              /* the earliest tick; INFINITY: none */
        bool trig;                      /* a triggered input Clock is pending */
        bool init_event;                /* still in the Event Mode after initialization */
        struct mblock ticked;           /* recorded Clocks: ticked at this point (MD_CLOCK) */
        /*
         * Recorded Clocks that ticked ahead of the session (a multirate
         * instance between its points): flagged once its outputs are
         * published (mclock_publish()), one per ticked.vrs.
         */
        bool *ticked_ahead;
        bool any_ahead;
};

struct master {
        _Atomic unsigned requests;      /* MASTER_REQ_*: any thread sets, master clears */
        _Atomic uint64_t warp_bits;     /* the warp as double bits: any thread */
        _Atomic int state;              /* enum master_state: master writes, any thread reads */
        /* t_cur (as double bits) and points: master writes at every point, any thread reads. */
        _Atomic uint64_t live_t_bits, live_points;
        /* master_live.c: a paced wait woken by master_request_serve(). */
        pthread_mutex_t wake_lock;
        pthread_cond_t wake_cond;
        bool wake_ok;                   /* both made */
        bool pace_owed;                 /* a paced wait was cut short: the next call takes it */

        struct session *s;
        const struct scenario *sc;
        struct master_opts opts;
        size_t n;
        struct mi *mi;
        struct master_inst_stats *ist;

        /* Stages: instances in stage order, then index order. */
        unsigned n_stages;
        size_t *by_stage;
        size_t *stage_start;            /* n_stages + 1 */
        bool any_early;                 /* some instance may return early */

        /* Time. */
        double t0, h, t_stop;
        uint64_t n_end;                 /* index of the last grid point (t_stop) */
        uint64_t pt;                    /* the grid point at or before the current time */
        double t_cur;
        double t_next;                  /* the grid point after it */
        bool at_grid;
        uint32_t zero_meets;            /* consecutive meetings that did not advance */
        uint64_t extra_run;             /* extra points since the last grid point */
        double budget_s;                /* INFINITY: none */
        uint64_t step_deadline_ns;      /* this coupled step's, 0: none */
        uint64_t point_ns;              /* the clock when this coupled step began */
        uint64_t target;                /* the grid point the stepping call goes to */
        bool chain_ok;                  /* steps may be chained (master_chain.c) */
        bool pause_self;                /* the master's own pause (rig policy), between points */
        bool paused_self;               /* the last pause was the master's own */

        /* Heavy workers kept apart (master_spread.c). */
        bool spread_ok;
        unsigned ncpu;                  /* cpus numbered below this may be allowed */
        bool cpu_allowed[SPREAD_CPUS_MAX];

        /* Clock connections (master_clock.c). */
        size_t n_clinks;
        struct mclink *clinks;
        bool flagged;                   /* a recorded Clock ticked since the last recorded row */

        /* Rows. */
        size_t n_cols;
        const struct mblock **col_block;
        size_t *col_off;
        double *row_vals;
        uint64_t *row_bits;             /* master_row.bits */
        struct master_blob *row_blobs;
        /*
         * A grid row is handed to the sink after the next step's DoSteps
         * are posted, so that its formatting overlaps the workers' step
         * (mroute_flush()). Only numeric rows are held: a String or Binary
         * cell borrows from buffers the next step's replies replace.
         */
        bool row_defer;
        bool row_held;
        double held_t;
        uint64_t held_pt;
        unsigned held_flags;
        uint64_t held_mono_ns, held_real_ns;
        bool rows_every, rows_stamped;  /* master_set_rows() */
        double *held_vals;
        uint64_t *held_bits;
        uint32_t decimation;

        /* Pacing. */
        struct pace pace;
        double warp;                    /* the warp pace was based on */
        bool pace_valid;

        /* Statistics. */
        uint64_t points, extra_points, events, restores, chained, moves;
        uint64_t wall_ns;               /* running: in stepping calls and between them */
        uint64_t call_end_ns;           /* when the last stepping call returned; 0: none */
        uint64_t lag_ns, lag_max_ns;    /* how late the last paced point was, and the worst */
        struct lateness lat;            /* every paced point's lateness (master_overrun.c) */
        struct lat_hist wake;           /* how late each paced wait woke (master_overrun.c) */
        uint64_t overruns;              /* paced points later than the margin */
        uint64_t overrun_note_ns;       /* when soft overruns were last noted */
        uint64_t overruns_unsaid;       /* soft overruns since, not noted yet */
        size_t slow_comp;               /* the instance whose step took longest this point */
        uint64_t slow_ns;               /* and how long; 0: none stepped */

        struct mrig *rig;               /* NULL: no rig ports */

        char msg[MASTER_MSG_MAX];
        char iu_msg[256];               /* a failure inside an intermediate update */
        int fault;
        bool terminated;                /* master_terminate() ran; its result: */
        int terminate_r;
};

/*
 * master_overrun.c: a paced point is done: measure its lateness, apply
 * the overrun policy (a hard overrun faults: -ETIME), sleep to its
 * deadline (master_live.c: cut short by a request to serve).
 */
int mpace_point(struct master *m, uint64_t warp_bits);

/* Time helpers (master.c). */
double master_grid(const struct master *m, uint64_t k);
double master_tol(const struct master *m, double t);
/* Write the message (printf-style); returns err. */
int master_err(struct master *m, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Tell opts.note about instance comp (printf-style). */
void master_note(struct master *m, size_t comp, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void master_set_state(struct master *m, enum master_state st);

/* master_plan.c */
int mplan_build(struct master *m);
void mplan_free(struct master *m);
/* The slot of var in instance mi's published outputs, or NULL. */
const struct mslot *mplan_slot(const struct mi *mi, size_t var);
/* Whether connection c moves values at each point: not a parameter binding, a Clock, or arrays of no elements. */
bool mplan_routed(const struct scenario_connection *c);
/* The slot of var in slots[0..n) (sorted by var), or NULL. */
const struct mslot *mplan_find(const struct mslot *slots, size_t n, size_t var);
/* Sort and remove duplicates; returns the new count. */
size_t mplan_uniq(size_t *v, size_t n);
/*
 * Blocks for the variables vars[0..nv) (sorted, unique) of instance mi:
 * one block per call type in type order, and (ret_slots not NULL) a slot
 * per variable, sorted by var. 0 or -errno (m->msg).
 */
int mplan_blocks(struct master *m, struct mi *mi, const size_t *vars, size_t nv,
                 struct mblock **ret_blocks, size_t *ret_n, struct mslot **ret_slots);
void mplan_free_blocks(struct mblock *b, size_t n, bool vrs);

/* master_plan_route.c */
/* Routes, intermediate routes and output derivatives of every instance. */
int mplan_routes(struct master *m);
/* Recorded intermediate outputs (when the session asked for them). */
int mplan_iu_outputs(struct master *m, struct mi *mi);
void mplan_free_routes(struct mi *mi);

/* master_nan.c */
/* A NaN in mi's output block 'block' (next) that a consumer takes: a note, once per instance. */
void mnan_check(struct master *m, struct mi *mi, size_t block);

/* master_input_event.c */
/* mstep_run(): an instance ended the run from the Event Mode of its input change. */
#define MINPUT_TERMINATE        1
/* After plan_inputs(): mi's discrete inputs, where it uses Event Mode. 0 or -ENOMEM. */
int minput_plan(struct master *m, struct mi *mi);
void minput_free(struct mi *mi);
/* After initialization: the values the FMUs hold. 0 or the fault. */
int minput_start(struct master *m);
/* mi's inputs (mroute_inputs()) were set: they are what the FMU holds now. */
void minput_remember(struct mi *mi);
/* mi's FMU state was restored: its next step has the Event Mode whatever changed. */
void minput_forget(struct mi *mi);
/*
 * Before mi's step from t, its inputs routed: an Event Mode for them where a
 * discrete one changes. 0, MINPUT_TERMINATE (master_message() says who
 * asked), or the fault.
 */
int minput_event(struct master *m, struct mi *mi, double t);
/*
 * At the start of a point, before its steps are planned: minput_event()
 * for every first-stage instance at the point. MINPUT_TERMINATE: one asked
 * to terminate there, its row written, MASTER_FINISHED.
 */
int minput_point(struct master *m);

/* master_route.c */
void mroute_inputs(struct master *m, struct mi *mi);
/* Publish the step's outputs of mi (next -> pub, String/Binary copied). 0 or -ENOMEM. */
int mroute_publish(struct master *m, struct mi *mi);
/* Hand a row of the published values to the sink (flags MASTER_ROW_*). */
void mroute_row(struct master *m, double t, unsigned flags);
/* The same in parts: fill every cell from the published values, override one, emit. */
void mroute_fill(struct master *m);
void mroute_cell(struct master *m, size_t col, const struct mblock *b, size_t off);
void mroute_emit(struct master *m, double t, unsigned flags, size_t comp);
/* Hand a held row to the sink now (after the next posts, before returning to the caller). */
void mroute_flush(struct master *m);
/* Get every unclocked output block of mi into next (outside a step, e.g. after Event Mode). */
int mroute_get_outputs(struct master *m, struct mi *mi);
/* The String or Binary values b points to copied into its own slots, which b then points to. */
int mroute_hold(struct mblock *b);
/* Set every unclocked input block of mi (outside a step; clocked ones: master_clock.c). */
int mroute_set_inputs(struct master *m, struct mi *mi);

/* input_feed.c */
/* The variables of mi the input table drives (with repeats) into vars (NULL: count only). */
/* master_rig.c: the rig channel; plan, each point's inputs and outputs. */
int mrig_plan(struct master *m);
void mrig_free(struct master *m);
void mrig_inputs(struct master *m);
void mrig_outputs(struct master *m);
void mrig_resume(struct master *m);
/* After master_restore(): writes pending for the timeline left behind are discarded. */
void mrig_restored(struct master *m);
/* After initialization: the rig inputs' values in the master's blocks are the instances'. */
void mrig_start(struct master *m);
/* The master stops stepping (a stepping call returns): its rig counts no more as a waiter. */
void mrig_idle(struct master *m);

size_t mfeed_vars(const struct master *m, const struct mi *mi, size_t *vars);
/* The feeds of mi, once its input blocks are planned. 0 or -errno (m->msg). */
int mfeed_plan(struct master *m, struct mi *mi);
/* Fill mi's driven inputs with the table at the current point. */
void mfeed_inputs(struct master *m, struct mi *mi);

/* master_point.c */
/* One coupled step from the current point to the next (grid or extra). 0 or the fault. */
int mstep_point(struct master *m);

/* master_step.c */
/* Mark the due instances and their goals for the coupled step from the current point. */
void mstep_plan(struct master *m);
/* Save the FMU state of every due instance that may have to meet another's early return. */
int mstep_save(struct master *m);
/* After a fault: restore every due instance whose state was saved. */
void mstep_roll_back(struct master *m);
/* Post and collect the steps of every instance with 'todo' set, stage by stage. */
int mstep_run(struct master *m);
/* Post mi's step from mi->from to mi->aim (routing its inputs first when asked), wait. */
int mstep_one(struct master *m, struct mi *mi, bool route);
/* Fault instance mi's call 'fn' with r (a status or -errno); returns the -errno. */
int mstep_fault(struct master *m, struct mi *mi, int r, const char *fn);

/* master_chain.c */
/* Whether this session's steps may be chained: m->chain_ok. */
void mchain_plan(struct master *m);
/*
 * At the current point, before mi's step is posted: when the step chained
 * at the last point is this one, it becomes mi->step and *ret_taken says
 * it is in flight already; when it is not (the last step was not plain),
 * the skipped step is collected. 0 or the fault.
 */
int mchain_take(struct master *m, struct mi *mi, bool *ret_taken);
/*
 * After mi's step is posted (at 'now'): when no more than MCHAIN_LOW
 * steps are left chained, chain the next points' steps behind them where
 * allowed.
 */
void mchain_post(struct master *m, struct mi *mi, uint64_t now);
/*
 * After mi's step was collected with r at 'now': note whether it completed
 * plainly; a chained step that came after the coupled step's deadline
 * faults it. Returns r or that fault.
 */
int mchain_collected(struct master *m, struct mi *mi, int r, uint64_t now);
/* Whether a step is chained to the next point. */
bool mchain_live(const struct master *m);
/* At the end of a stepping call: collect what is still chained. 0 or the fault. */
int mchain_drain(struct master *m);

/* master_spread.c */
/* Whether and where workers may be moved: the master's own allowed cpus. */
void mspread_init(struct master *m);
/* After a coupled step: move a heavy worker off a crowded cpu, now and then. */
void mspread_check(struct master *m);

/* master_meet.c */
/*
 * After mstep_run(): every due instance meets the earliest early return
 * before the next grid point (restore, repeat the step to it); a slow
 * instance that returned early at or after it continues alone. 0 or the
 * fault.
 */
int mmeet_resolve(struct master *m);

/* What sets the step budget, said where a step missed it. */
#define MASTER_BUDGET_HINT "(a longer one: the scenario's budget or fmuctl's --budget S; none: inf)"

/* master_event.c */
/* Event Mode for the instances that need it at the current point; rows around it. */
/*
 * Event Mode for mi with the inputs already in its buffers: enter, set
 * them, iterate to Step Mode (or to a terminate request, *ret_term).
 * Returns 0, or the fault.
 */
int mevent_iterate(struct master *m, struct mi *mi, double t, bool *ret_term);
/* After mi's Event Mode: read its outputs and publish them. 0 or the fault. */
int mevent_publish(struct master *m, struct mi *mi);
/*
 * Event Mode at the point for the instances whose triggered input Clocks
 * an Event Mode before the step ticked (an input's change, a set):
 * their Clocks tick where the producer's did. 1 when one of them asked
 * to terminate the simulation there (said; the caller ends the run), 0,
 * or the fault.
 */
int mevent_triggered(struct master *m);
/* At the start time: Event Mode for the instances whose Clocks tick there; the first row. */
int mevent_start(struct master *m);
int mevent_point(struct master *m, bool record);

/* master_clock_plan.c */
/* mi's Clocks from the session's timing and its description. 0 or -errno (m->msg). */
int mclock_plan(struct master *m, struct mi *mi);
void mclock_free(struct mi *mi);
/* The Clock connections, once every instance's Clocks are planned. 0 or -errno (m->msg). */
int mclock_links(struct master *m);
/* Where the column of mi's recorded Clock vr reads its flag; false when it is none. */
bool mclock_column(const struct mi *mi, uint32_t vr, const struct mblock **ret_block,
                   size_t *ret_off);

/* master_clock.c */
/* The description of mi's variable var. */
const struct md_variable *mclock_var(const struct master *m, const struct mi *mi, size_t var);
/* Constant, fixed and tunable Clocks: periodic (section 2.2.8.2). */
bool mclock_periodic(enum md_interval_variability iv);
/* The time of c's next tick (from its fraction or decimals); INFINITY: none. */
double mclock_tick_time(const struct master *m, const struct mclock *c);
/* mi->clock_next: the earliest next tick of its Clocks. */
void mclock_note_next(struct mi *mi);
/* From t on, tick every 'interval' (decimal); none when it is not finite and >= 0. */
void mclock_from_here(struct mclock *c, double t, double interval);
/* A row with the flags is recorded (mroute_row()): no recorded Clock has ticked since. */
void mclock_unflag(struct master *m);
/* mi's outputs are published at the current point: so are the ticks it had ahead of it. */
void mclock_publish(struct master *m, struct mi *mi);
/* Whether one of mi's input Clocks ticks at t. */
bool mclock_due(const struct master *m, const struct mi *mi, double t);
/*
 * In Event Mode at t, inputs set: fmi3SetClock of the Clocks that tick,
 * then (with Clocks ticking or output Clocks) the outputs got, which
 * computes the clocked partitions, and the output Clocks polled. 0 or the fault.
 */
int mclock_enter(struct master *m, struct mi *mi, double t);
/* In Event Mode at t, after the updates: the next ticks. 0 or the fault. */
int mclock_leave(struct master *m, struct mi *mi, double t);
/*
 * In Event Mode, a super-dense time instant after the first (an update
 * asked for another, FMI 3.0 section 2.3.5), or the first instant of an
 * Event Mode for a set (no input Clock ticks there): the output Clocks
 * polled again, those ticking now counted and passed on to their
 * consumers, their clocked outputs got. 0 or the fault.
 */
int mclock_instant(struct master *m, struct mi *mi, double t);
/* The event iteration of mi with mclock_instant() between its instants: as session_event_update(). */
int mclock_update(struct master *m, struct mi *mi, double t, bool *ret_term, double *ret_next);
/* The instance's next time event: nextEventTime or a Clock's tick. */
static inline double mi_next_time(const struct mi *mi)
{
        return mi->clock_next < mi->next_event ? mi->clock_next : mi->next_event;
}

/* master_iu.c */
void miu_callback(void *ctx, size_t comp, struct inst *inst, const struct inst_iu *iu,
                  bool *ret_early_return, double *ret_time);
/* Get the output derivatives of every instance that provides them and was stepped. */
int miu_refresh_derivatives(struct master *m);

/* master.c: publish t_cur and points for master_live() (after every change to them). */
void master_note_point(struct master *m);

/* ---- master_live.c ---- */
int mlive_init(struct master *m);
void mlive_fini(struct master *m);
/* Take MASTER_REQ_SERVE: whether it was set. */
bool mlive_serve_pending(struct master *m);
/*
 * Wait until due_ns (CLOCK_MONOTONIC), calling opts.idle at least every
 * 50 ms; false as soon as a request is pending or the warp is no longer
 * warp_bits. True when due_ns was reached.
 */
bool mlive_sleep(struct master *m, uint64_t due_ns, uint64_t warp_bits);

#endif
