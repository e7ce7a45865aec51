/*
 * ClockKinds: one input Clock of each time-based kind, a triggered input
 * Clock and an output Clock, as an FMI 3.0 Co-Simulation FMU with Event
 * Mode, each counting its ticks (FMI 3.0 section 2.2.8.2):
 *
 *   cst  constant periodic, interval 1/4 from the description
 *   fix  fixed periodic without intervalDecimal: interval fix_interval
 *        and shift fix_shift, got in Initialization Mode
 *   chg  changing: first interval chg_step, after its k-th tick
 *        chg_step (k + 1); with chg_step 0.1 it ticks at 0.1, 0.3, 0.6, 1.0
 *   cd   countdown: fmi3IntervalNotYetKnown until chg ticks, then 0.05
 *        (fmi3IntervalChanged once, fmi3IntervalUnchanged after) until
 *        it has ticked, so it ticks 0.05 after each tick of chg
 *   trg  triggered: ty = tu + the tu of every earlier tick (tu and ty
 *        are clocked by trg)
 *   out  output Clock: ticks at every other tick of cst (the first,
 *        third, ...), with oy = the ticks of cst before it (clocked by out)
 *   tun  tunable periodic without intervalDecimal: interval the tunable
 *        parameter tun_interval, got in Initialization and Event Mode
 *        (fmi3IntervalChanged once after each change), shift 0
 *   frc  fixed periodic with supportsFraction, without intervalDecimal:
 *        interval 1/1 and shift 1000/1 as fractions, got in
 *        Initialization Mode, so that it never ticks in a run of a test
 *
 * n_cst .. n_tun count the ticks (unclocked discrete outputs). Clocks
 * and counts change in fmi3UpdateDiscreteStates, which deactivates the
 * Clocks (section 2.2.7.2); clocked outputs are computed by a get while
 * their Clock ticks (section 2.2.8.3).
 *
 * Value references: time 0, cst 1, fix 2, fix_interval 3, fix_shift 4,
 * chg 5, cd 6, trg 7, tu 8, ty 9, out 10, oy 11, n_cst 12, n_fix 13,
 * n_chg 14, n_cd 15, n_trg 16, tun 17, tun_interval 18, n_tun 19,
 * chg_step 20, chg_nan 21, frc 22, frc_zero 23, cd_at_start 24, out_late 25,
 * stop_trg 26 (> 0: terminateSimulation once trg ticked that often),
 * out_at_start 27.
 *
 * out_late 1: out ticks not in the instant of cst's tick but in the next
 * super-dense instant of the same Event Mode: the update at cst's tick
 * asks for another (discreteStatesNeedUpdate, FMI 3.0 section 2.3.5) and
 * activates out for it, as a Clock that ticks because a variable changed
 * does (section 2.2.8).
 *
 * cd_at_start 1: cd's first countdown (0.05) is known only in the Event
 * Mode after initialization (fmi3IntervalNotYetKnown in Initialization
 * Mode, fmi3IntervalChanged after the first fmi3UpdateDiscreteStates),
 * which FMI 3.0 section 2.2.8 allows: intervals are computed in
 * fmi3UpdateDiscreteStates at the latest. ClockKindsLate (CLOCK_KINDS_LATE):
 * tun shifted by 0.01 and cst by 1/4, so that no Clock ticks at the start.
 *
 * out_at_start 1: out ticks in the Event Mode after initialization, with
 * oy = -1, as an FMU whose output Clock ticks on a condition its initial
 * values already meet does (with eventModeUsed, fmi3ExitInitializationMode
 * leaves the FMU in Event Mode, FMI 3.0 section 2.3.3, where output Clocks
 * may tick as in any Event Mode).
 *
 * chg_nan != 0 makes chg report the interval NaN (fmi3IntervalChanged)
 * after its first tick, chg_nan 2 from the start, as a broken export does.
 * frc_zero 1 makes frc report its shift with resolution 0, frc_zero 2 its
 * interval, as a broken export does.
 */
#include <errno.h>
#include <math.h>

#include "model.h"

enum {
        VR_CST = 1, VR_FIX, VR_FIX_INTERVAL, VR_FIX_SHIFT, VR_CHG, VR_CD, VR_TRG, VR_TU, VR_TY,
        VR_OUT, VR_OY, VR_N_CST, VR_N_FIX, VR_N_CHG, VR_N_CD, VR_N_TRG, VR_TUN, VR_TUN_INTERVAL,
        VR_N_TUN, VR_CHG_STEP, VR_CHG_NAN, VR_FRC, VR_FRC_ZERO, VR_CD_AT_START, VR_OUT_LATE, VR_STOP_TRG,
        VR_OUT_AT_START,
};

#define QUAL_NOT_YET_KNOWN 0
#define QUAL_UNCHANGED 1
#define QUAL_CHANGED 2
#define COUNTDOWN 0.05

struct model_data {
        bool cst, fix, chg, cd, trg, out, tun, frc;
        double tun_interval, tun_reported, n_tun;
        double fix_interval, fix_shift;
        double tu, ty, ty_sum, oy;
        double n_cst, n_fix, n_chg, n_cd, n_trg;
        double chg_interval, chg_step, chg_nan;
        double frc_zero;
        double cd_at_start;
        double out_late;
        double stop_trg;
        double out_at_start;
        bool late_pending;      /* out_late: out ticks in the next instant */
        bool updated;           /* fmi3UpdateDiscreteStates called since initialization */
        bool chg_changed;
        bool cd_known, cd_changed;
};

static const struct var vars[] = {
        VAR_TIME(0),
        VAR_SCALAR(VR_CST, "cst", VAR_CLOCK, VAR_INPUT, VAR_DISCRETE, VAR_EXACT, cst),
        VAR_SCALAR(VR_FIX, "fix", VAR_CLOCK, VAR_INPUT, VAR_DISCRETE, VAR_EXACT, fix),
        VAR_SCALAR(VR_FIX_INTERVAL, "fix_interval", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED,
                   VAR_EXACT, fix_interval),
        VAR_SCALAR(VR_FIX_SHIFT, "fix_shift", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT,
                   fix_shift),
        VAR_SCALAR(VR_CHG, "chg", VAR_CLOCK, VAR_INPUT, VAR_DISCRETE, VAR_EXACT, chg),
        VAR_SCALAR(VR_CD, "cd", VAR_CLOCK, VAR_INPUT, VAR_DISCRETE, VAR_EXACT, cd),
        VAR_SCALAR(VR_TRG, "trg", VAR_CLOCK, VAR_INPUT, VAR_DISCRETE, VAR_EXACT, trg),
        VAR_SCALAR(VR_TU, "tu", VAR_FLOAT64, VAR_INPUT, VAR_DISCRETE, VAR_EXACT, tu),
        VAR_SCALAR(VR_TY, "ty", VAR_FLOAT64, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, ty),
        VAR_SCALAR(VR_OUT, "out", VAR_CLOCK, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, out),
        VAR_SCALAR(VR_OY, "oy", VAR_FLOAT64, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, oy),
        VAR_SCALAR(VR_N_CST, "n_cst", VAR_FLOAT64, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, n_cst),
        VAR_SCALAR(VR_N_FIX, "n_fix", VAR_FLOAT64, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, n_fix),
        VAR_SCALAR(VR_N_CHG, "n_chg", VAR_FLOAT64, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, n_chg),
        VAR_SCALAR(VR_N_CD, "n_cd", VAR_FLOAT64, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, n_cd),
        VAR_SCALAR(VR_N_TRG, "n_trg", VAR_FLOAT64, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, n_trg),
        VAR_SCALAR(VR_TUN, "tun", VAR_CLOCK, VAR_INPUT, VAR_DISCRETE, VAR_EXACT, tun),
        VAR_SCALAR(VR_TUN_INTERVAL, "tun_interval", VAR_FLOAT64, VAR_PARAMETER, VAR_TUNABLE,
                   VAR_EXACT, tun_interval),
        VAR_SCALAR(VR_N_TUN, "n_tun", VAR_FLOAT64, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, n_tun),
        VAR_SCALAR(VR_CHG_STEP, "chg_step", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT,
                   chg_step),
        VAR_SCALAR(VR_CHG_NAN, "chg_nan", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT,
                   chg_nan),
        VAR_SCALAR(VR_FRC, "frc", VAR_CLOCK, VAR_INPUT, VAR_DISCRETE, VAR_EXACT, frc),
        VAR_SCALAR(VR_FRC_ZERO, "frc_zero", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT,
                   frc_zero),
        VAR_SCALAR(VR_CD_AT_START, "cd_at_start", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT,
                   cd_at_start),
        VAR_SCALAR(VR_OUT_LATE, "out_late", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT,
                   out_late),
        VAR_SCALAR(VR_STOP_TRG, "stop_trg", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT,
                   stop_trg),
        VAR_SCALAR(VR_OUT_AT_START, "out_at_start", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED,
                   VAR_EXACT, out_at_start),
};

static void start(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        d->fix_interval = 0.2;
        d->fix_shift = 0.1;
        d->chg_step = 0.1;
        d->chg_interval = 0.1;
        d->chg_changed = true;
        d->tun_interval = 0.2;
        d->tun_reported = -1.0;
}

static int calculate(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        if (d->trg)
                d->ty = d->ty_sum + d->tu;
        /* Computed with f_init: the Event Mode after it has nothing to compute. */
        if (d->out_at_start != 0.0 && !d->updated) {
                d->out = true;
                d->oy = -1.0;
                return 0;
        }
        if (d->out_late != 0.0)
                return 0;       /* out is the updates' (update_discrete()) */
        d->out = d->cst && (long long)d->n_cst % 2 == 0;
        if (d->out)
                d->oy = d->n_cst;
        return 0;
}

static int do_step(struct inst *inst, struct step *step)
{
        (void) inst;
        (void) step;
        return 0;
}

static int update_discrete(struct inst *inst, struct discrete *ret)
{
        struct model_data *d = inst_data(inst);

        (void) inst;
        ret->need_update = false;
        double cst_before = d->n_cst;
        bool late_now = false;

        if (!d->updated && d->cd_at_start != 0.0)
                d->cd_known = d->cd_changed = true;
        d->updated = true;
        if (d->out_late != 0.0 && d->late_pending) {
                d->late_pending = false;        /* the instant out ticked in ends */
        } else if (d->out_late != 0.0 && d->cst && (long long)d->n_cst % 2 == 0) {
                d->late_pending = late_now = true;
                ret->need_update = true;
        }
        if (d->trg) {
                d->ty_sum += d->tu;
                d->n_trg++;
        }
        d->n_cst += d->cst;
        d->n_fix += d->fix;
        d->n_tun += d->tun;
        if (d->chg) {
                d->n_chg++;
                d->chg_interval = d->chg_nan != 0.0 ? NAN : d->chg_step * (d->n_chg + 1);
                d->chg_changed = true;
                d->cd_known = d->cd_changed = true;
        }
        if (d->cd) {
                d->n_cd++;
                d->cd_known = d->cd_changed = false;
        }
        d->cst = d->fix = d->chg = d->cd = d->trg = d->out = d->tun = d->frc = false;
        if (late_now) {
                d->out = true;
                d->oy = cst_before;
        }
        ret->terminate = d->stop_trg > 0 && d->n_trg >= d->stop_trg;
        return 0;
}

static int clock_timing(struct inst *inst, const struct var *clock, enum clock_quantity what,
                        bool set, struct clock_time *t)
{
        struct model_data *d = inst_data(inst);

        bool timed = clock->vr == VR_FIX || clock->vr == VR_CHG || clock->vr == VR_CD ||
                     clock->vr == VR_TUN || clock->vr == VR_FRC;
        bool shifted = clock->vr == VR_FIX || clock->vr == VR_TUN || clock->vr == VR_FRC;
        bool fixed = clock->vr == VR_FIX || clock->vr == VR_FRC;

        if (set || !timed || (what == CLOCK_SHIFT && !shifted) ||
            ((fixed || what == CLOCK_SHIFT) && !inst_initializing(inst))) {
                inst_log(inst, FMU_ERROR, "Clock '%s': the %s cannot be %s here", clock->name,
                         what == CLOCK_SHIFT ? "shift" : "interval", set ? "set" : "got");
                return -EPERM;
        }
        t->counter = 0;
        t->resolution = 1;
        t->qualifier = QUAL_UNCHANGED;
        if (clock->vr == VR_TUN) {
#ifdef CLOCK_KINDS_LATE
                t->decimal = what == CLOCK_SHIFT ? 0.01 : d->tun_interval;
#else
                t->decimal = what == CLOCK_SHIFT ? 0.0 : d->tun_interval;
#endif
                if (what == CLOCK_INTERVAL) {
                        t->qualifier = d->tun_interval != d->tun_reported ? QUAL_CHANGED
                                                                          : QUAL_UNCHANGED;
                        d->tun_reported = d->tun_interval;
                }
        } else if (clock->vr == VR_FRC) {
                t->counter = what == CLOCK_SHIFT ? 1000 : 1;
                t->resolution = d->frc_zero == (what == CLOCK_SHIFT ? 1.0 : 2.0) ? 0 : 1;
                t->decimal = (double)t->counter;
                t->qualifier = QUAL_CHANGED;
        } else if (clock->vr == VR_FIX) {
                t->decimal = what == CLOCK_SHIFT ? d->fix_shift : d->fix_interval;
                t->qualifier = QUAL_CHANGED;
        } else if (clock->vr == VR_CHG) {
                /* The first interval is chg_step as the parameter stands. */
                t->decimal = !inst_initializing(inst) ? d->chg_interval :
                             d->chg_nan == 2.0 ? NAN : d->chg_step;
                t->qualifier = d->chg_changed ? QUAL_CHANGED : QUAL_UNCHANGED;
                d->chg_changed = false;
        } else {
                t->decimal = d->cd_known ? COUNTDOWN : 0.0;
                t->qualifier = !d->cd_known ? QUAL_NOT_YET_KNOWN :
                               d->cd_changed ? QUAL_CHANGED : QUAL_UNCHANGED;
                d->cd_changed = false;
        }
        return 0;
}

const struct model model = {
        .token = "{c4a1d2e7-5b3f-4a90-8e6d-2f7b9c0a1d35}",
        .data_size = sizeof(struct model_data),
        .vars = vars,
        .n_vars = sizeof(vars) / sizeof(vars[0]),
        .caps = MODEL_HAS_EVENT_MODE | MODEL_CAN_GET_SET_STATE | MODEL_CAN_SERIALIZE_STATE,
        .start = start,
        .calculate = calculate,
        .do_step = do_step,
        .update_discrete = update_discrete,
        .clock_timing = clock_timing,
};
