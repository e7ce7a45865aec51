/*
 * master_rig: the master's side of the rig channel (shm/rig.h): at the
 * start of each coupled step the rig's newest whole write for this point
 * (or an earlier one) goes into the input blocks; after each point the
 * rig outputs are published to it.
 *
 * DESIGN (DESIGN.md, "Rig ports"; master.h): rig inputs join the input
 * blocks as connected inputs and file-driven inputs do (master_plan.c),
 * so they reach the worker with the step: a value written once stays set
 * until the next write (zero-order hold), and a multirate instance takes
 * it at its next step. The master never waits for the rig: every write
 * pending at a point is taken, each is checked (rig_take()), and only the
 * newest is applied, whole; a write taken at a point after its own is
 * late, a point with no write while the rig is attached is missing, a
 * point the ring has no room for is dropped, a write that fails a check
 * is bad. All of these are counted, none stops the session. The
 * heartbeat is read once per point: a rig it says is gone triggers the
 * policy once; a rig that beats again is attached again. The pause
 * policy is the master's own pause (master_paused_itself()), and holds
 * while the rig is silent: the first point of a run after a pause
 * pauses again.
 *
 * Threads: the master's, except master_rig_fd() and master_rig_stats()
 * (atomics and the fd, which does not change until master_free()).
 */
#include "engine/master/master_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/master/master_value.h"

/* Whether v converts to an integer type of range [lo, hi] without undefined behaviour. */
static bool fits(double v, double lo, double hi)
{
        return v >= lo && v <= hi;      /* NaN fails both */
}

/*
 * Store v, already checked against the port's type (rig_value_ok()), as
 * type t. Checked again here: a value outside t's range is never
 * converted (the input keeps its value), whatever let it through.
 */
static void put(enum md_type t, void *vals, size_t off, double v)
{
        /* Both as long as the last integer type: the unsigned types' lows are 0. */
        static const double lo[MD_UINT64 + 1] = {
                [MD_INT8] = -128.0, [MD_INT16] = -32768.0, [MD_INT32] = -2147483648.0,
                [MD_INT64] = -9223372036854775808.0,
        };
        static const double hi[MD_UINT64 + 1] = {
                [MD_INT8] = 127.0, [MD_INT16] = 32767.0, [MD_INT32] = 2147483647.0,
                [MD_INT64] = 9223372036854774784.0, [MD_UINT8] = 255.0, [MD_UINT16] = 65535.0,
                [MD_UINT32] = 4294967295.0, [MD_UINT64] = 18446744073709549568.0,
        };
        unsigned char *p = (unsigned char *)vals + off * mv_size(t);

        if (t != MD_FLOAT32 && t != MD_FLOAT64 && t != MD_BOOLEAN &&
            ((size_t)t >= sizeof(hi) / sizeof(hi[0]) || !fits(v, lo[t], hi[t])))
                return;
        switch (t) {
        case MD_FLOAT32: *(float *)p = (float)v; break;
        case MD_FLOAT64: *(double *)p = v; break;
        case MD_INT8: *(int8_t *)p = (int8_t)v; break;
        case MD_UINT8: *(uint8_t *)p = (uint8_t)v; break;
        case MD_INT16: *(int16_t *)p = (int16_t)v; break;
        case MD_UINT16: *(uint16_t *)p = (uint16_t)v; break;
        case MD_INT32: *(int32_t *)p = (int32_t)v; break;
        case MD_UINT32: *(uint32_t *)p = (uint32_t)v; break;
        case MD_INT64: *(int64_t *)p = (int64_t)v; break;
        case MD_UINT64: *(uint64_t *)p = (uint64_t)v; break;
        case MD_BOOLEAN: *(bool *)p = v != 0; break;
        default: break;
        }
}

static int ports(const struct scenario_rig_port *sp, size_t n, struct rig_port **ret)
{
        struct rig_port *p = calloc(n ? n : 1, sizeof(*p));

        if (!p)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                snprintf(p[i].name, sizeof(p[i].name), "%s", sp[i].name);
                p[i].type = scenario_rig_type(sp[i].type);
                p[i].has_safe = sp[i].has_safe;
                p[i].safe = sp[i].safe;
        }
        *ret = p;
        return 0;
}

static int make_chan(struct master *m, struct mrig *rg)
{
        const struct scenario_rig *sr = &m->sc->rig;
        struct rig_port *in = NULL, *out = NULL;
        struct rig_params p = { .name = "fmud-rig", .n_in = (uint32_t)sr->n_in,
                                .n_out = (uint32_t)sr->n_out, .policy = sr->policy,
                                .timeout_ms = sr->timeout_ms };
        int r = ports(sr->in, sr->n_in, &in);

        if (r == 0)
                r = ports(sr->out, sr->n_out, &out);
        if (r == 0) {
                p.in = in;
                p.out = out;
                r = rig_create(&p, &rg->chan);
        }
        free(in);
        free(out);
        return r;
}

int mrig_plan(struct master *m)
{
        const struct scenario_rig *sr = &m->sc->rig;
        struct mrig *rg;
        int r;

        if (!sr->n_in && !sr->n_out)
                return 0;
        rg = m->rig = calloc(1, sizeof(*rg));
        if (!rg)
                return -ENOMEM;
        rg->n_in = sr->n_in;
        rg->n_out = sr->n_out;
        rg->policy = sr->policy;
        rg->timeout_ns = (uint64_t)sr->timeout_ms * 1000000u;
        rg->in = calloc(sr->n_in + 1, sizeof(*rg->in));
        rg->out = calloc(sr->n_out + 1, sizeof(*rg->out));
        rg->vals = calloc(sr->n_in + 1, sizeof(double));
        rg->take = calloc(sr->n_in + 1, sizeof(double));
        rg->outs = calloc(sr->n_out + 1, sizeof(double));
        if (!rg->in || !rg->out || !rg->vals || !rg->take || !rg->outs)
                return -ENOMEM;
        for (size_t i = 0; i < sr->n_in; i++) {
                struct mi *mi = &m->mi[sr->in[i].comp];
                const struct mslot *sl = mplan_find(mi->in_slots, mi->n_in_slots, sr->in[i].var);

                if (!sl)
                        return master_err(m, -EINVAL, "rig input '%s': not planned",
                                          sr->in[i].name);
                rg->in[i] = (struct mrig_in){ .dst = &mi->in[sl->block], .off = sl->off,
                                              .has_safe = sr->in[i].has_safe,
                                              .safe = sr->in[i].safe };
        }
        for (size_t i = 0; i < sr->n_out; i++)
                rg->out[i] = (struct mrig_out){ .comp = sr->out[i].comp, .var = sr->out[i].var };
        r = make_chan(m, rg);
        if (r < 0)
                return master_err(m, r, "rig channel: %s", strerror(-r));
        return 0;
}

/*
 * An attached rig of a stepping master waits for the next point by
 * yielding (shm/rig.c): counted (on), so that the worker it may share a
 * cpu with does not spin there for its next request while the rig needs
 * that cpu. Not while the master does not step: the rig then sleeps, and
 * the count would slow every other session's workers.
 */
static void count_waiter(struct mrig *rg, bool on)
{
        if (on == rg->counted)
                return;
        inst_count_waiter(on ? 1 : -1);
        rg->counted = on;
}

void mrig_idle(struct master *m)
{
        if (m->rig)
                count_waiter(m->rig, false);
}

void mrig_free(struct master *m)
{
        struct mrig *rg = m->rig;

        if (!rg)
                return;
        count_waiter(rg, false);
        rig_end(rg->chan);
        rig_close(rg->chan);
        free(rg->in);
        free(rg->out);
        free(rg->vals);
        free(rg->take);
        free(rg->outs);
        free(rg);
        m->rig = NULL;
}

static void count(_Atomic uint64_t *c)
{
        /* The master alone writes: a load and a store, no locked instruction. */
        atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                              memory_order_relaxed);
}

static void apply(struct mrig *rg, const double *v, bool safe_only)
{
        for (size_t i = 0; i < rg->n_in; i++) {
                if (safe_only && !rg->in[i].has_safe)
                        continue;
                put(rg->in[i].dst->type, rg->in[i].dst->vals, rg->in[i].off,
                    safe_only ? rg->in[i].safe : v[i]);
        }
}

/*
 * A heartbeat at beat is recent at now: within the rig's timeout either
 * way (0: never beat; a beat stored after now was read is recent).
 */
static bool fresh_at(const struct mrig *rg, uint64_t beat, uint64_t now)
{
        return beat && (beat >= now ? beat - now <= rg->timeout_ns : now - beat <= rg->timeout_ns);
}

/* The pause policy: the master pauses itself at the next point, saying why. */
static void pause_policy(struct master *m, struct mrig *rg, const char *what, uint64_t beat,
                         uint64_t now)
{
        /* How long it has been silent, where it ever beat: a point may come long after the timeout. */
        if (beat && beat < now)
                master_err(m, 0, "rig %s at t = %.17g (no heartbeat for %llu ms, over its "
                           "timeout of %llu ms): paused (rig policy pause)", what, m->t_cur,
                           (unsigned long long)((now - beat) / 1000000u),
                           (unsigned long long)(rg->timeout_ns / 1000000u));
        else
                master_err(m, 0, "rig %s at t = %.17g (no heartbeat within its timeout of "
                           "%llu ms): paused (rig policy pause)", what, m->t_cur,
                           (unsigned long long)(rg->timeout_ns / 1000000u));
        m->pause_self = true;
}

/* Attached, vanished, or back: once per point, from the heartbeat. */
static void liveness(struct master *m, struct mrig *rg)
{
        uint64_t beat = rig_heartbeat(rg->chan), now = pace_now_ns();
        bool fresh = fresh_at(rg, beat, now);
        bool recheck = rg->recheck;

        rg->recheck = false;
        count_waiter(rg, fresh);
        if (fresh == rg->attached) {
                /* Resumed with the rig still silent: the policy holds, paused again. */
                if (recheck && rg->vanished)
                        pause_policy(m, rg, "still silent", beat, now);
                return;
        }
        rg->attached = fresh;
        if (fresh) {
                /* The pause is over: the message says so, not "paused". */
                if (rg->vanished && rg->policy == RIG_PAUSE)
                        master_err(m, 0, "rig back at t = %.17g after vanishing at t = %.17g "
                                   "(rig policy pause)", m->t_cur, rg->vanished_t);
                rg->ever = true;
                rg->vanished = false;
                atomic_store_explicit(&rg->state, MASTER_RIG_ATTACHED, memory_order_relaxed);
                return;
        }
        rg->vanished = true;
        rg->vanished_t = m->t_cur;
        atomic_store_explicit(&rg->state, MASTER_RIG_VANISHED, memory_order_relaxed);
        if (rg->policy == RIG_SAFE)
                apply(rg, NULL, true);
        if (rg->policy == RIG_PAUSE)
                pause_policy(m, rg, "vanished", beat, now);
}

void mrig_start(struct master *m)
{
        const struct scenario_rig *sr = &m->sc->rig;
        struct mrig *rg = m->rig;

        if (!rg)
                return;
        /*
         * Until a rig writes, its inputs hold the values initialization
         * left them (their starts, a --start, a binding): the block the
         * master sets before every step starts from those, not from 0.
         */
        for (size_t i = 0; i < rg->n_in; i++) {
                const struct md_variable *v =
                        &m->sc->components[sr->in[i].comp].fmu->md->vars[sr->in[i].var];
                struct mblock *b = rg->in[i].dst;
                unsigned char *dst = b->vals + rg->in[i].off * mv_size(b->type);
                int r = inst_get(session_inst(m->s, sr->in[i].comp), b->type, &v->vr, 1, dst, 1);

                /* An FMU that will not tell: the description's start, else 0. */
                if (r != INST_OK && r != INST_WARNING && v->has_start)
                        (void) mv_from_md(b->type, &v->start, 1, dst, NULL);
        }
}

void mrig_resume(struct master *m)
{
        if (m->rig && m->rig->policy == RIG_PAUSE)
                m->rig->recheck = true;
}

bool master_paused_itself(const struct master *m)
{
        return master_state(m) == MASTER_PAUSED && m->paused_self;
}

/*
 * The next write for point pt or earlier into rg->take, with its point in
 * *ret_point: 1, or 0 when none is left (bad records are counted and
 * passed over; a ring opened again ends the taking: its next write, next
 * point). At most a ring's worth of records in one call of the caller's.
 */
static int take_next(struct mrig *rg, uint64_t pt, unsigned *spins, uint64_t *ret_point)
{
        uint64_t seq;

        while (*spins < 4 * RIG_RING_SLOTS) {
                int r = rig_take(rg->chan, pt, &seq, ret_point, rg->take);

                (*spins)++;
                if (r == 0)
                        return 1;
                if (r == -EAGAIN)
                        return 0;
                count(&rg->bad);
                if (r == -EPROTO)
                        return 0;
        }
        return 0;
}

void mrig_inputs(struct master *m)
{
        struct mrig *rg = m->rig;
        unsigned spins = 0;
        uint64_t point;
        bool have = false;

        if (!rg)
                return;
        liveness(m, rg);
        while (take_next(rg, m->pt, &spins, &point)) {
                /*
                 * Written before the rig went silent: its policy holds now
                 * (the safe values, the last ones), never what it queued
                 * before it vanished; discarded and counted late.
                 */
                if (rg->vanished || point < m->pt)
                        count(&rg->late);
                if (rg->vanished)
                        continue;
                memcpy(rg->vals, rg->take, rg->n_in * sizeof(double));
                have = true;
        }
        if (have) {
                apply(rg, rg->vals, false);
                count(&rg->applied);
        } else if (rg->attached) {
                count(&rg->missing);
        }
}

void mrig_restored(struct master *m)
{
        struct mrig *rg = m->rig;
        unsigned spins = 0;
        uint64_t point;

        if (!rg)
                return;
        /*
         * Every write still in the ring was for a point of the run the
         * restore left: none applies to the restored one, and one for a
         * later point would block the rig's new writes until its point came
         * round again. All taken and counted late.
         */
        while (take_next(rg, UINT64_MAX, &spins, &point))
                count(&rg->late);
}

void mrig_outputs(struct master *m)
{
        struct mrig *rg = m->rig;

        /* A rig with inputs only still learns each point: it writes for the next one. */
        if (!rg)
                return;
        for (size_t i = 0; i < rg->n_out; i++)
                (void) master_value(m, rg->out[i].comp, rg->out[i].var, 0, &rg->outs[i]);
        /* Only an attached rig's lag is a drop: nobody reads the ring otherwise. */
        if (rig_publish(rg->chan, m->pt, m->t_cur, rg->outs) < 0 && rg->attached)
                count(&rg->dropped);
}

void master_rig_restore(struct master *m)
{
        if (m->rig)
                rig_restore(m->rig->chan);
}

int master_rig_fd(const struct master *m)
{
        return m->rig ? rig_fd(m->rig->chan) : -ENOENT;
}

void master_rig_stats(const struct master *m, struct master_rig_stats *ret)
{
        const struct mrig *rg = m->rig;

        *ret = (struct master_rig_stats){ 0 };
        if (!rg)
                return;
        ret->ports = true;
        ret->policy = rg->policy;
        ret->state = (enum master_rig_state)atomic_load_explicit(&rg->state, memory_order_relaxed);
        /*
         * Between points (paused, or a long step) the master has not looked:
         * a rig silent past its timeout is vanished now, as the next point
         * will find it (the heartbeat is read on any thread, shm/rig.h).
         */
        ret->in_force = ret->state == MASTER_RIG_VANISHED;
        if (ret->state == MASTER_RIG_ATTACHED) {
                uint64_t beat = rig_heartbeat(rg->chan), now = pace_now_ns();

                if (!fresh_at(rg, beat, now))
                        ret->state = MASTER_RIG_VANISHED;
        }
        ret->applied = atomic_load_explicit(&rg->applied, memory_order_relaxed);
        ret->late = atomic_load_explicit(&rg->late, memory_order_relaxed);
        ret->missing = atomic_load_explicit(&rg->missing, memory_order_relaxed);
        ret->dropped = atomic_load_explicit(&rg->dropped, memory_order_relaxed);
        ret->bad = atomic_load_explicit(&rg->bad, memory_order_relaxed);
}

const char *master_rig_state_name(enum master_rig_state s)
{
        static const char *const names[] = { "none", "attached", "vanished" };

        return (unsigned)s < 3 ? names[s] : "?";
}
