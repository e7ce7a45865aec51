/*
 * states: FMU states (FMI 3.0 section 2.2.7.4, FMI 2.0 section 2.1.8),
 * owned by the worker and named to the daemon by handle.
 *
 * DESIGN
 * - A handle is (generation << 32) | (slot + 1); freeing a slot bumps its
 *   generation, so a stale or made-up handle is refused, never used.
 * - Getting a state into a live handle passes the old state to the FMU to
 *   overwrite (the standard's reuse), so saving before every step holds
 *   one state, not one more per call. A failed call leaves the handle and
 *   its state as they were. Reset and terminate leave states valid;
 *   freeing the instance frees them all.
 * - The FMU state restores the FMU's whole state, its mode included
 *   ("continue the simulation from this state without additional calls"),
 *   so each handle also records the worker's state machine state and the
 *   structural parameter values at the time it was taken, and setting it
 *   restores both. A serialized state therefore carries a small header of
 *   its own before the FMU's bytes:
 *       0  char[8]  "FMUDFMS1"
 *       8  u32      FMI version (2 or 3)
 *      12  u32      enum call_state
 *      16  u32      number of structural parameters
 *      20  u32      zero
 *      24  u64[n]   their values
 *      ..           the FMU's serialized state
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/me.h"
#include "worker/worker.h"

static const char ser_magic[8] = { 'F', 'M', 'U', 'D', 'F', 'M', 'S', '1' };

struct ser_hdr {
        char magic[8];
        uint32_t fmi;
        uint32_t mode;
        uint32_t n_sp;
        uint32_t zero;
};
static_assert(sizeof(struct ser_hdr) == 24, "serialized state header");

static size_t hdr_size(const struct worker *w)
{
        return sizeof(struct ser_hdr) + w->n_sp * sizeof(uint64_t);
}

static uint64_t handle_of(const struct worker *w, size_t idx)
{
        return ((uint64_t)w->slots[idx].gen << 32) | (idx + 1);
}

static struct fmu_slot *slot_of(struct worker *w, uint64_t handle, const char *fn, struct reply *rp)
{
        uint64_t idx = (handle & 0xffffffffu) - 1;

        if (handle && (handle & 0xffffffffu) && idx < w->n_slots && w->slots[idx].state &&
            w->slots[idx].gen == (uint32_t)(handle >> 32))
                return &w->slots[idx];
        reply_refuse(rp, CALL_E_HANDLE, "%s: %#" PRIx64 " is not a live FMU state of this instance",
                     fn, handle);
        return NULL;
}

/* A free slot, growing the table; false after refusing. */
static bool slot_new(struct worker *w, size_t *ret, const char *fn, struct reply *rp)
{
        struct fmu_slot *s;
        size_t n;

        for (size_t i = 0; i < w->n_slots; i++)
                if (!w->slots[i].state) {
                        *ret = i;
                        return true;
                }
        if (w->n_slots >= CALL_STATES_MAX) {
                reply_refuse(rp, CALL_E_LIMIT, "%s: %u FMU states are live; free some first", fn,
                             CALL_STATES_MAX);
                return false;
        }
        n = w->n_slots ? w->n_slots * 2 : 8;
        if (n > CALL_STATES_MAX)
                n = CALL_STATES_MAX;
        s = realloc(w->slots, n * sizeof(*s));
        if (!s)
                goto oom;
        w->slots = s;
        for (size_t i = w->n_slots; i < n; i++) {
                s[i] = (struct fmu_slot){ .gen = 1 };
                if (w->n_sp && !(s[i].sp = calloc(w->n_sp, sizeof(uint64_t)))) {
                        w->n_slots = i;
                        goto oom;
                }
        }
        *ret = w->n_slots;
        w->n_slots = n;
        return true;
oom:
        reply_refuse(rp, CALL_E_NOMEM, "out of memory");
        return false;
}

static void slot_record(struct worker *w, struct fmu_slot *s, void *state)
{
        s->state = state;
        s->mode = w->state;
        for (size_t i = 0; i < w->n_sp; i++)
                s->sp[i] = w->sp[w->sp_index[i]];
}

static void slot_restore(struct worker *w, const struct fmu_slot *s)
{
        w->state = s->mode;
        w->set_since_step = false;
        me_inputs_forget(w);    /* the FMU holds the inputs of that state */
        for (size_t i = 0; i < w->n_sp; i++)
                w->sp[w->sp_index[i]] = s->sp[i];
}

static int fmu_get(struct worker *w, void **state)
{
        return w->fmi == MD_FMI3 ? w->lib->f3.fmi3GetFMUState(w->inst, state) :
                                   w->lib->f2.fmi2GetFMUstate(w->inst, state);
}

static int fmu_state_free(struct worker *w, void **state)
{
        return w->fmi == MD_FMI3 ? w->lib->f3.fmi3FreeFMUState(w->inst, state) :
                                   w->lib->f2.fmi2FreeFMUstate(w->inst, state);
}

static int fmu_size(struct worker *w, void *state, size_t *n)
{
        return w->fmi == MD_FMI3 ? w->lib->f3.fmi3SerializedFMUStateSize(w->inst, state, n) :
                                   w->lib->f2.fmi2SerializedFMUstateSize(w->inst, state, n);
}

static void get_state(struct worker *w, const struct call_fmu_state *f, const char *fn,
                      struct reply *rp, struct call_fmu_state *out)
{
        struct fmu_slot *s = NULL;
        void *state = NULL;
        size_t idx;
        int st;

        if (f->handle) {
                s = slot_of(w, f->handle, fn, rp);
                if (!s)
                        return;
                idx = (size_t)(s - w->slots);
                state = s->state;
        } else if (!slot_new(w, &idx, fn, rp)) {
                return;
        }
        st = status_norm(w, fmu_get(w, &state));
        reply_status(rp, st);
        if (st > fmi3Warning)
                return;         /* the handle keeps its state */
        if (!state) {
                snprintf(w->last_error, sizeof(w->last_error), "%s returned no state", fn);
                reply_status(rp, fmi3Error);
                return;
        }
        slot_record(w, &w->slots[idx], state);
        out->handle = handle_of(w, idx);
}

static void serialize(struct worker *w, struct fmu_slot *s, const struct call_fmu_state *f,
                      const char *fn, struct reply *rp, struct call_fmu_state *out)
{
        size_t n = 0, h = hdr_size(w);
        struct ser_hdr hdr = { .fmi = (uint32_t)w->fmi, .mode = s->mode, .n_sp = (uint32_t)w->n_sp };
        unsigned char *p;
        uint64_t off;
        int st;

        st = status_norm(w, fmu_size(w, s->state, &n));
        if (st > fmi3Warning) {
                reply_status(rp, st);
                return;
        }
        if (n > SIZE_MAX - h || f->size != n + h) {
                reply_refuse(rp, CALL_E_INVAL, "%s: size %" PRIu64 " is not the serialized size %zu",
                             fn, f->size, n + h);
                return;
        }
        call_out_expect(&rp->out, call_out_need(n + h, 1));
        if (call_out_alloc(&rp->out, n + h, &off) < 0) {
                reply_refuse(rp, CALL_E_MSGSIZE, "%s: %zu bytes do not fit the channel", fn, n + h);
                return;
        }
        p = call_out_ptr(&rp->out, off);
        memcpy(hdr.magic, ser_magic, sizeof(ser_magic));
        memcpy(p, &hdr, sizeof(hdr));
        if (w->n_sp)
                memcpy(p + sizeof(hdr), s->sp, w->n_sp * sizeof(uint64_t));
        if (w->fmi == MD_FMI3)
                st = w->lib->f3.fmi3SerializeFMUState(w->inst, s->state, p + h, n);
        else
                st = w->lib->f2.fmi2SerializeFMUstate(w->inst, s->state, (fmi2Byte *)(p + h), n);
        reply_status(rp, st);
        out->size = n + h;
        if (status_norm(w, st) <= fmi3Warning)
                out->data = (struct call_range){ off, n + h };
}

static void deserialize(struct worker *w, const struct call_in *in, const struct call_fmu_state *f,
                        const char *fn, struct reply *rp, struct call_fmu_state *out)
{
        size_t h = hdr_size(w), idx;
        struct ser_hdr hdr;
        const unsigned char *p;
        void *state = NULL;
        const void *data;
        int st;

        if (call_in_bytes(in, &f->data, UINT64_MAX, &data) < 0) {
                reply_refuse(rp, CALL_E_BADMSG, "%s: malformed arguments", fn);
                return;
        }
        p = data;
        if (f->data.len >= sizeof(hdr))
                memcpy(&hdr, p, sizeof(hdr));
        if (f->data.len < h || memcmp(hdr.magic, ser_magic, sizeof(ser_magic)) ||
            hdr.fmi != (uint32_t)w->fmi || hdr.mode >= CALL_ST_COUNT || !fsm_settable(hdr.mode) ||
            hdr.n_sp != w->n_sp || hdr.zero) {
                reply_refuse(rp, CALL_E_INVAL, "%s: not a serialized FMU state of this FMU "
                             "(header, FMI version or structural parameters differ)", fn);
                return;
        }
        if (!slot_new(w, &idx, fn, rp))
                return;
        if (w->fmi == MD_FMI3)
                st = w->lib->f3.fmi3DeserializeFMUState(w->inst, p + h, f->data.len - h, &state);
        else
                st = w->lib->f2.fmi2DeSerializeFMUstate(w->inst, (const fmi2Byte *)(p + h),
                                                        f->data.len - h, &state);
        st = status_norm(w, st);
        reply_status(rp, st);
        if (st > fmi3Warning)
                return;
        if (!state) {
                snprintf(w->last_error, sizeof(w->last_error), "%s returned no state", fn);
                reply_status(rp, fmi3Error);
                return;
        }
        w->slots[idx].state = state;
        w->slots[idx].mode = (enum call_state)hdr.mode;
        if (w->n_sp)
                memcpy(w->slots[idx].sp, p + sizeof(hdr), w->n_sp * sizeof(uint64_t));
        out->handle = handle_of(w, idx);
}

void h_fmu_state(struct worker *w, const struct call_in *in, struct reply *rp)
{
        enum call_op op = (enum call_op)in->hdr.op;
        const char *name = fsm_fmi_name(w, op, MD_TYPE_COUNT);
        struct call_fmu_state f, out = { 0 };
        struct fmu_slot *s;
        char fn[64];
        size_t n = 0;
        int st;

        snprintf(fn, sizeof(fn), "%s", name);
        memcpy(&f, in->body, sizeof(f));
        switch (op) {
        case CALL_OP_GET_FMU_STATE:
                get_state(w, &f, fn, rp, &out);
                break;
        case CALL_OP_DESERIALIZE:
                deserialize(w, in, &f, fn, rp, &out);
                break;
        default:
                s = slot_of(w, f.handle, fn, rp);
                if (!s)
                        return;
                out.handle = f.handle;
                if (op == CALL_OP_SET_FMU_STATE) {
                        st = w->fmi == MD_FMI3 ? w->lib->f3.fmi3SetFMUState(w->inst, s->state) :
                                                 w->lib->f2.fmi2SetFMUstate(w->inst, s->state);
                        reply_status(rp, st);
                        if (status_norm(w, st) <= fmi3Warning)
                                slot_restore(w, s);
                } else if (op == CALL_OP_FREE_FMU_STATE) {
                        void *state = s->state;

                        st = fmu_state_free(w, &state);
                        reply_status(rp, st);
                        if (status_norm(w, st) <= fmi3Warning) {
                                s->state = NULL;
                                s->gen++;
                                out.handle = 0;
                        }
                } else if (op == CALL_OP_SERIALIZED_SIZE) {
                        st = fmu_size(w, s->state, &n);
                        reply_status(rp, st);
                        out.size = n > SIZE_MAX - hdr_size(w) ? 0 : n + hdr_size(w);
                } else {
                        serialize(w, s, &f, fn, rp, &out);
                }
                break;
        }
        memcpy(rp->result, &out, sizeof(out));
}

void states_free_all(struct worker *w)
{
        for (size_t i = 0; i < w->n_slots; i++)
                if (w->slots[i].state) {
                        void *state = w->slots[i].state;

                        (void) fmu_state_free(w, &state);
                        w->slots[i].state = NULL;
                        w->slots[i].gen++;
                }
}
