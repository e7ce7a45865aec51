/*
 * session_int: the inside of struct session, shared by engine/master/session.c
 * and the initialization passes (engine/master/init*.c).
 *
 * Ownership: the session owns its instances, their required variable
 * lists and the message buffer; the scenario is borrowed.
 */
#ifndef FMUD_ENGINE_SESSION_INT_H
#define FMUD_ENGINE_SESSION_INT_H

#include "engine/master/session.h"

#define SESSION_MSG_MAX 2048

struct session_inst {
        struct session *s;              /* back pointer, for the callbacks */
        size_t comp;
        struct inst *inst;
        int fmi;                        /* 2 or 3 */
        bool event_mode;                /* eventModeUsed */
        bool early_return;              /* earlyReturnAllowed */
        bool iu;                        /* an intermediate update callback was given */
        uint32_t *required;             /* requiredIntermediateVariables, sorted */
        size_t n_required;
        bool instantiated;
        bool initialized;               /* left Initialization Mode */
        bool failed;                    /* Error/Fatal or a fault: no fmi3Terminate */
        bool terminated;                /* fmi3Terminate called (session_terminate()) */
        double next_event_time;         /* INFINITY: none */
        bool init_event;                /* in the Event Mode after initialization, left to the master */
        size_t n_clocks;
        struct session_clock *clocks;   /* time-based input Clocks (init_clocks.c) */
};

/*
 * A time-based input Clock's timing as initialization left it (FMI 3.0
 * section 2.2.8.2): interval and shift, as a fraction where the FMU or
 * its description gives one (ticks then land exactly on
 * t_start + (shift + k interval) / resolution), else as decimals.
 */
struct session_clock {
        uint32_t vr;
        size_t var;
        enum md_interval_variability iv;
        bool fraction;
        uint64_t interval_counter, shift_counter, resolution;
        double interval, shift;         /* decimal; interval <= 0 or NAN: not known */
};

struct session {
        const struct scenario *sc;
        struct session_opts opts;
        char *worker_path;
        size_t n;
        struct session_inst *insts;
        session_iu_fn *iu;
        void *iu_ctx;
        bool terminate_requested;
        size_t terminate_comp;
        char msg[SESSION_MSG_MAX];
};

/* Write the session's message (printf-style); returns err. */
int session_err(struct session *s, int err, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/*
 * Append the FMU's last log messages (those not already in the message)
 * to the session's message after a failed call of si; returns err, so
 * that it wraps session_err(): return session_logs(s, si, session_err(...)).
 */
int session_logs(struct session *s, const struct session_inst *si, int err);

/*
 * The -errno for an instance call's result r (an FMI status or -errno):
 * 0 for OK and Warning, -EIO for Discard, Error and Fatal, else r. A
 * Fatal or Error marks the instance failed.
 */
int session_call_result(struct session_inst *si, int r);

/* init_clocks.c */
/* At spawn: refuse input Clocks without Event Mode (FMI 3.0 section 2.2.8.2, Table 5). */
int init_clocks_check(struct session *s, struct session_inst *si);
/* In Initialization Mode: the timing of every time-based input Clock, into si->clocks. */
int init_clocks_read(struct session *s, struct session_inst *si);
/*
 * In the Event Mode after initialization, its iteration done: the first
 * interval of each countdown Clock that Initialization Mode said was not
 * known yet (FMI 3.0 section 2.2.8: known after fmi3UpdateDiscreteStates
 * at the latest). 0, or the failure.
 */
int init_clocks_after_event(struct session *s, struct session_inst *si);

/* "fmi3", "fmi2": the prefix of FMI function names in messages. */
const char *session_fmi_prefix(const struct session_inst *si);
/*
 * The deadline of si's calls: on, for instantiation and initialization
 * (every call up to the end of Initialization Mode: many exports solve
 * their initial equations in the first get), the session's call deadline
 * but at least INST_INIT_TIMEOUT_MIN; off, the session's call deadline.
 */
void session_init_deadline(const struct session *s, struct session_inst *si, bool on);

/* A status name: "OK", "Warning", "Discard", "Error", "Fatal", "Pending". */
const char *session_status_name(int status);
/* Why a call failed: r's status name (r >= 0), or the reason of an -errno. */
const char *session_call_why(const struct session_inst *si, int r);

#endif
