/*
 * master: advances a session from communication point to communication
 * point: routes outputs to inputs (zero-order hold), steps every due
 * instance in parallel, checks the step budget, publishes the results and
 * hands sample rows to a sink.
 *
 * DESIGN (docs: DESIGN.md, "Master algorithm"):
 * - Time. Grid points t_n = start + n * h, always computed from the
 *   integer n; the last point is the stop time exactly. An instance with
 *   multirate factor m is due at every m-th point and steps m * h (its
 *   outputs are held in between). Extra points appear only where an
 *   instance returns early (below).
 * - One coupled step. Inputs of every due instance are built from the
 *   published outputs of their producers, through the connection's
 *   transformation; every due instance's DoStep is posted at once (its
 *   own process steps in parallel), then every reply is collected in
 *   index order. Gauss-Seidel connections (scenario 'sequential') put the
 *   consumer in a later stage than its producer: it is posted after the
 *   producer's reply and takes its new outputs. Results never depend on
 *   the order in which workers finish: bit-identical run to run.
 * - Step budget. Each coupled step's DoSteps must all answer within the
 *   experiment's budget (from the start of the step). A missed budget, an
 *   Error/Fatal/Discard status, a dead worker or a broken reply faults
 *   the step: the session holds at the last good point (state
 *   MASTER_FAULTED), published values are those of that point, and the
 *   message names the instance, the FMI call, the time and the reason.
 *   Instances that completed the failed step are restored to the last
 *   good point when their state was saved (opts.rollback_on_fault, or in
 *   sessions where instances may return early).
 * - Early return (FMI 3.0 section 4.1.3). When an instance returns early
 *   at t_e < t_{n+1}, every other due instance meets it there: its FMU
 *   state, saved before the step (only in sessions with an instance that
 *   may return early, and only for instances that might have to meet
 *   another's), is restored and its step repeated to t_e. Instances that
 *   asked for event handling then run Event Mode. t_e is an extra point
 *   in the results; the grid continues at t_{n+1}. An instance that
 *   cannot restore its state makes such a meeting impossible: the step
 *   faults and says so. A slow (multirate) instance that returns early at
 *   or after t_{n+1} continues alone to its own next point with its held
 *   inputs, since nobody exchanges values with it before then.
 * - Intermediate update (FMI 3.0 section 4.2.2). Intermediate inputs get
 *   the producer's output at the last point, extrapolated with its output
 *   derivatives where it declares maxOutputDerivativeOrder > 0
 *   (extrapolate.h), through the connection's transformation.
 * - Rows. After every point, a row (time and one value per recorded
 *   column) goes to the sink: every decimation-th grid point, the last
 *   point, and every extra point. Where Event Mode ran at a point, the
 *   values before it come first in a row flagged MASTER_ROW_EVENT_LEFT.
 *   Decimation is the master's (it knows which points are on the grid),
 *   so a recorder given these rows must not decimate again.
 *   On request (master_set_rows()) every other point's row goes to the
 *   sink as well, flagged MASTER_ROW_UNRECORDED (for live subscribers),
 *   and rows carry the wall clock when their point was done.
 *   When every column is numeric, a grid row reaches the sink after the
 *   next step's DoSteps are posted, so its formatting overlaps the
 *   workers' step; every stepping call hands over its last row before it
 *   returns, and a paced run before it sleeps.
 * - Chaining. A session of one instance that nothing drives and nothing
 *   can cut short (no connection, input file, Event Mode, early return or
 *   intermediate update) posts the steps to t_{n+2}, t_{n+3}, ... (up to
 *   MCHAIN_REPEAT in one request) behind the one to t_{n+1} before
 *   reading its reply, and the next request while the last still has
 *   steps to take; the worker runs each only after a plain step, so
 *   results are those of one round trip per point, and a pause lands
 *   once the steps chained by then are taken (master_chain.c). The next
 *   request goes out while MCHAIN_LOW steps are still to be taken, so the
 *   worker never idles between requests (1,000,000 points to CSV: 1.125x
 *   the in-process importer's time before, 1.02x after; longer requests,
 *   16 steps, gained less).
 * - Placement. Every 64 points, a worker whose doStep takes 20 µs or more
 *   and shares a cpu with another such worker while an allowed cpu runs
 *   none is moved there once (master_spread.c, spread.h): workers that
 *   wait by yielding are never re-placed by the kernel.
 * - Pacing. With warp w > 0, the point at simulation time t is not passed
 *   before wall time t_wall0 + (t - t_0) / w (CLOCK_MONOTONIC,
 *   clock_nanosleep TIMER_ABSTIME, the scenario's spinUs before it spun
 *   on the clock); a change of w, a pause and a resume re-base (t_wall0,
 *   t_0) to the present, so nothing jumps or bursts (master_pace.h). A
 *   point done after its deadline plus the scenario's overrun margin is an
 *   overrun: counted, and per the scenario's overrun policy nothing more,
 *   or noted with the pace re-based forward (soft), or a fault (hard)
 *   (master_overrun.c). Every paced point's lateness goes into
 *   fixed-memory histograms (master_lateness.h), reported by master_stats.
 *
 * Threads: the stepping functions (master_step(), master_run_until(),
 * master_run()) and everything not marked otherwise run on one thread,
 * the master's, which is the only one that touches the session and its
 * instances. master_request_pause(), master_request_stop(),
 * master_set_warp() and master_state() may be called from any thread:
 * they only touch atomics (see master_int.h).
 */
#ifndef FMUD_ENGINE_MASTER_H
#define FMUD_ENGINE_MASTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/master/master_lateness.h"
#include "engine/master/session.h"

struct master;
struct input_table;

enum master_state {
        MASTER_LOADED,          /* initialized, no step yet */
        MASTER_RUNNING,         /* stepping, or between two stepping calls */
        MASTER_PAUSED,          /* stopped at a point on request; resumable */
        MASTER_FINISHED,        /* stop time reached, or terminateSimulation */
        MASTER_FAULTED,         /* a coupled step failed: held at the last good point */
        MASTER_STOPPED,         /* stopped on request; not resumable */
};

/* Row flags. */
#define MASTER_ROW_EXTRA        (1u << 0)       /* an extra point (early return), not on the grid */
#define MASTER_ROW_EVENT_LEFT   (1u << 1)       /* values before Event Mode at this time */
#define MASTER_ROW_INTERMEDIATE (1u << 2)       /* an intermediate update of row->comp */
/* A point that is not recorded, handed over only for master_set_rows()'s every_point. */
#define MASTER_ROW_UNRECORDED   (1u << 3)

/* A String (NUL-terminated, len without it) or Binary column value. */
struct master_blob {
        const void *data;
        size_t len;
};

struct master_row {
        double time;
        uint64_t point;                 /* grid index n (extra points: the grid point before) */
        unsigned flags;                 /* MASTER_ROW_* */
        size_t comp;                    /* MASTER_ROW_INTERMEDIATE: the component */
        size_t n_columns;               /* the scenario's columns, in order */
        /* Numeric and Boolean columns as doubles (Int64 beyond 2^53 rounds); NaN otherwise. */
        const double *values;
        /*
         * Int64, Enumeration and UInt64 columns exactly: the value's 64 bits
         * (Int64 two's complement); 0 for the other columns.
         */
        const uint64_t *bits;
        /* String and Binary columns ({NULL, 0} for the others). */
        const struct master_blob *blobs;
        /*
         * With master_set_rows()'s stamped: the wall clock when the point
         * was done (its values published, Event Mode run), CLOCK_MONOTONIC
         * and CLOCK_REALTIME in ns; 0 otherwise (and in intermediate rows).
         */
        uint64_t mono_ns, real_ns;
};

/* A sample row; everything it points to is valid during the call only. Master thread. */
typedef void master_sink_fn(void *ctx, const struct master_row *row);

/*
 * Asked at every intermediate update where the instance can return
 * early: return true to ask comp to return early at *time (preset to the
 * update's time; it may be moved later, up to the end of the step).
 */
typedef bool master_iu_hook_fn(void *ctx, size_t comp, double *time);

/*
 * Something a user should know that is not a fault (e.g. an instance
 * whose lastSuccessfulTime deviates from the point without an early
 * return); each kind is said once per instance. Master thread; message
 * valid during the call.
 */
typedef void master_note_fn(void *ctx, size_t comp, const char *message);
#define MASTER_NOTE_MAX 1024    /* a note's length, NUL included, at most */

/*
 * Called on the master's thread while a paced run waits for wall time,
 * at least every 50 ms of the wait (e.g. to flush a results file). It
 * must not block.
 */
typedef void master_idle_fn(void *ctx);

struct master_opts {
        master_sink_fn *sink;           /* NULL: no rows */
        void *sink_ctx;
        /* Save every instance's state before each step, so a fault holds exactly. */
        bool rollback_on_fault;
        /* Ask instances in an intermediate update to return early on pause or stop. */
        bool early_return_on_request;
        master_iu_hook_fn *iu_hook;
        void *iu_hook_ctx;
        master_note_fn *note;           /* NULL: notes are dropped */
        void *note_ctx;
        master_idle_fn *idle;           /* NULL: none */
        void *idle_ctx;
        uint32_t max_event_iterations;  /* per Event Mode; 0: 1000 */
        /*
         * Extra points (early returns, time events) in a row between two
         * grid points before the step faults (-ELOOP): an FMU announcing
         * its next event ever closer would otherwise stall the session in
         * ever smaller steps. 0: MASTER_EXTRA_RUN_MAX.
         */
        uint64_t max_extra_points;
        /*
         * Unconnected inputs driven from a file (input_table.h; NULL:
         * none): set with the other inputs of every step, sampled at the
         * step's start. Borrowed; must outlive the master.
         */
        const struct input_table *inputs;
        /*
         * Never post a step before the reply of the one before it (see
         * master_chain.c): only to compare against chaining.
         */
        bool no_chain;
};

#define MASTER_EXTRA_RUN_MAX    1000000u


struct master_inst_stats {
        uint64_t steps;                 /* DoSteps */
        uint64_t ns_total;              /* round trips, post to reply collected */
        uint64_t ns_max;
        uint64_t ns_service;            /* of ns_total: inside the FMU's doStep, as the worker measured */
};

struct master_stats {
        uint64_t points;                /* points done (grid and extra) */
        uint64_t extra_points;          /* of which extra (early return) */
        uint64_t events;                /* Event Modes run */
        uint64_t restores;              /* FMU states restored to meet an early return */
        uint64_t chained;               /* steps posted before the reply of the one before */
        uint64_t moves;                 /* heavy workers moved off a shared cpu */
        double sim_time;                /* the current point's time */
        double wall_s;                  /* wall time of the run: stepping calls and between them */
        double rtf;                     /* simulated / wall seconds while running; 0 before any step */
        /*
         * Paced runs (warp > 0): how late the last point was done against
         * its due wall time (0 when on time or unpaced), and the worst so far.
         */
        double lag_s, lag_max_s;
        /*
         * Paced runs: every point's lateness (completion after its
         * deadline, 0 when on time) over the whole run and over the last
         * LAT_WINDOW_S seconds, and the points later than the margin.
         */
        struct lat_summary lateness, lateness_window;
        /*
         * Paced runs: for every point done before its deadline, how late
         * the master woke after that deadline (the wait's own cost, to
         * compare with a bare clock_nanosleep loop); the whole run.
         */
        struct lat_summary wakeup;
        uint64_t overruns;
        size_t n_insts;
        const struct master_inst_stats *insts;  /* borrowed; valid until the next step */
};

void master_opts_default(struct master_opts *o);

/*
 * A master for session s (which must outlive it): routing tables, value
 * buffers and stages are built here, once; the outputs at the start time
 * are read and published, and the first row goes to the sink. Returns 0
 * and *ret, or -errno: -EINVAL (a connection or column the master cannot
 * route, e.g. a transformation on a non-float connection; see
 * *ret_message), -ENOMEM, or an instance call's error.
 */
int master_new(struct session *s, const struct master_opts *opts, struct master **ret,
               char **ret_message);
void master_free(struct master *m);

/*
 * Advance n grid points (extra points on the way are not counted), or
 * less when the stop time, a terminateSimulation, a pause or stop
 * request or a fault comes first. Returns the state after (>= 0:
 * enum master_state), or -errno when a step faulted (state
 * MASTER_FAULTED, master_message() says why) or the state allows no step
 * (-EPERM: finished, faulted or stopped). Master thread.
 */
int master_step(struct master *m, uint64_t n);
/*
 * The end of a run that finished or was stopped: fmi3Terminate on every
 * healthy instance (session_terminate(); FMI 3.0 section 2.3.8), so that
 * its terminal computations and their messages come while the run's
 * owner still listens. An instance whose Terminate fails (a terminal
 * assertion) faults the session there (MASTER_FAULTED, master_message()
 * naming it); its rows so far are complete. Returns 0 or that -errno;
 * once only, later calls return the first one's result. Master thread.
 */
int master_terminate(struct master *m);
/*
 * Between points (master thread), around a set of discrete inputs or
 * tunable parameters of instance comp: where it uses Event Mode, they may
 * change only there (FMI 3.0 sections 2.4.7.4 and 4.3.1). begin enters
 * it: 1, or 0 where the instance has no Event Mode (set in Step Mode, no
 * end). end, after the sets, iterates its discrete states and returns it
 * to Step Mode: 0, or 1 where it asked to terminate (MASTER_FINISHED).
 * A failure of either faults the session (MASTER_FAULTED, -errno,
 * master_message() naming the call).
 */
int master_set_event_begin(struct master *m, size_t comp);
int master_set_event_end(struct master *m, size_t comp);
/* Advance to the last grid point at or before t (the stop time at most). As master_step(). */
int master_run_until(struct master *m, double t);
/* Advance to the stop time. As master_step(). */
int master_run(struct master *m);

/* Any thread: stop at the next point, keeping everything; master_run() etc. resume. */
void master_request_pause(struct master *m);
/*
 * Master thread: the master is paused and paused itself, not on a
 * request: a rig gone silent under the pause policy (master_message()
 * says why). False after any other pause and once a stepping call runs.
 */
bool master_paused_itself(const struct master *m);
/* Any thread: stop at the next point for good (MASTER_STOPPED). */
void master_request_stop(struct master *m);
/*
 * Any thread: stop, and a step in flight is not waited for
 * (inst_abandon()), its worker killed within a wait slice; why (a string
 * that outlives the master; NULL: the session was abandoned) ends its
 * message.
 */
void master_request_abandon(struct master *m, const char *why);
/*
 * Any thread: the owner has a request to serve between points (a get, a
 * set): the stepping call in progress returns at the next point, or at
 * once from a paced run's wait for wall time, with the state unchanged
 * (MASTER_RUNNING). The wait it cut short is taken by the next stepping
 * call before its first step, so pacing is unaffected (master_live.c).
 */
void master_request_serve(struct master *m);
/* Any thread: run at w times real time (0: as fast as possible). -EINVAL when w < 0 or NaN. */
int master_set_warp(struct master *m, double w);
/* Any thread. */
enum master_state master_state(const struct master *m);
/*
 * Any thread: the point the master is at and the points done, as of the
 * last point completed; while a step hangs, the point it started from.
 */
void master_live(const struct master *m, double *time, uint64_t *points);
const char *master_state_name(enum master_state s);

/* Master thread (or no stepping call running). */
/*
 * Which rows the sink gets from the next point on. every_point: a row at
 * every point, those the decimation leaves out flagged
 * MASTER_ROW_UNRECORDED (a recorder skips them); stamped: rows carry
 * mono_ns and real_ns. Both off by default, and off they cost nothing
 * per point (a point the decimation leaves out is not even filled).
 */
void master_set_rows(struct master *m, bool every_point, bool stamped);
/*
 * The run is held between stepping calls (a step's goal reached, a pause
 * of the caller's): the time until the next call is not the run's, and
 * pacing is re-based then, so neither the real-time factor nor the lag
 * counts it.
 */
void master_hold(struct master *m);
const char *master_message(const struct master *m);     /* the fault, or who terminated */
double master_time(const struct master *m);             /* the current point */
uint64_t master_point(const struct master *m);          /* its grid index */
void master_get_stats(const struct master *m, struct master_stats *ret);
/*
 * The published value of one element of a variable the master routes or
 * records (as a double, as in rows). Returns 0, or -ENOENT when it does
 * not track that variable.
 */
int master_value(const struct master *m, size_t comp, size_t var, uint64_t element, double *ret);

/*
 * The published values of a variable the master routes or records: the
 * values of the point the session is at, as its consumers see them (a
 * multirate instance's held outputs between its points; after a fault,
 * those of the point the session holds at, even where the instance went
 * on). vals holds n values of the call type 'type' from element 'off'
 * (String: const char *, Binary: const uint8_t * with sizes); borrowed
 * until the next stepping call.
 */
struct master_pub {
        enum md_type type;
        const void *vals;
        const size_t *sizes;
        size_t off, n;
        double time;
};
int master_published(const struct master *m, size_t comp, size_t var, struct master_pub *ret);

/*
 * The master's own state at the current point (master_save.c): time and
 * grid index, each instance's position, pending and published outputs,
 * time events, output derivatives, statistics and state. Together with
 * every instance's FMU state saved at the same point (inst_get_fmu_state()),
 * master_restore() makes the run continue exactly as an uninterrupted run
 * from that point would (bit-identical rows). Call on the master's thread
 * (or with no stepping call running), at a point: after master_new() or a
 * stepping call. master_save() returns 0 and *ret (free with
 * master_saved_free()), -ENOMEM, or -EOPNOTSUPP (master_message() says
 * why: a multirate instance holding String or Binary outputs between its
 * points). master_restore() sets the state saved (also the master state),
 * clears pending requests and re-bases pacing; -EINVAL when s was saved
 * from another master. The saved state is independent of the master's
 * lifetime but only meaningful for the master it came from.
 */
/*
 * Rig ports (shm/rig.h, scenario.h's struct scenario_rig): the master
 * makes the rig channel in master_new() when the scenario declares rig
 * ports. At the start of every coupled step it applies the newest whole
 * write for that point or an earlier one (a write for a later point waits
 * for it), and after every point it publishes the rig outputs without
 * waiting (a full ring counts a drop). A rig whose heartbeat is older
 * than the timeout has vanished: its policy applies (hold, safe values,
 * or a pause with the reason as the master's message) until a rig beats
 * again. The pause is the master's own (master_paused_itself()), and a
 * stepping call after a pause, the rig still silent, pauses again after
 * its first point.
 */
enum master_rig_state {
        MASTER_RIG_NONE,                /* no rig has attached yet */
        MASTER_RIG_ATTACHED,
        MASTER_RIG_VANISHED,            /* the policy is in force */
};
struct master_rig_stats {
        bool ports;                     /* the session has rig ports */
        /* As the heartbeat reads now: vanished before the next point acts on it. */
        enum master_rig_state state;
        bool in_force;                  /* the master acted on its vanishing: the policy applies */
        enum rig_policy policy;
        uint64_t applied, late, missing, dropped, bad;
};
/* The rig channel's memfd (borrowed: valid until master_free()), or -ENOENT. Any thread. */
int master_rig_fd(const struct master *m);
/*
 * The rig channel's fixed parts (layout, ports, rings' geometry) written
 * back before it is handed to a new rig, whatever an earlier rig wrote
 * over them (shm/rig.h rig_restore()). Any thread.
 */
void master_rig_restore(struct master *m);
/* Any thread. */
void master_rig_stats(const struct master *m, struct master_rig_stats *ret);
const char *master_rig_state_name(enum master_rig_state s);

struct master_saved;
int master_save(struct master *m, struct master_saved **ret);
int master_restore(struct master *m, const struct master_saved *s);
void master_saved_free(struct master_saved *s);
/* The time of the point saved. */
double master_saved_time(const struct master_saved *s);
/*
 * A saved state as bytes (master_save_io.c), for a snapshot exported from
 * the daemon and imported into a session of the same scenario:
 * master_saved_encode() writes s (saved from m) to *ret (malloc'ed,
 * *ret_len bytes): 0, -EINVAL (s is not m's) or -ENOMEM.
 * master_saved_decode() reads len bytes at p into *ret for m, checking
 * every count and length against m (instances, output blocks and their
 * types and sizes, derivatives, Clocks): 0, -EBADMSG with msg saying
 * what differs, or -ENOMEM.
 */
int master_saved_encode(const struct master *m, const struct master_saved *s, uint8_t **ret,
                        size_t *ret_len);
int master_saved_decode(struct master *m, const uint8_t *p, size_t len, struct master_saved **ret,
                        char *msg, size_t size);

/*
 * Ticks of Clock vr of component comp so far: of an input Clock the
 * master ticked, or of an output Clock it polled (master_clock.c); 0 for
 * any other. The master's thread, or while it is not stepping.
 */
uint64_t master_clock_ticks(const struct master *m, size_t comp, uint32_t vr);

#endif
