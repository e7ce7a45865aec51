/*
 * sandbox_report: the sandbox layers a worker reports before HELLO
 * (CALL_EV_SANDBOX, worker/call.h), and its memory lock (CALL_EV_MLOCK,
 * when asked for), checked and kept with the instance.
 *
 * DESIGN: the report comes from the worker, which is about to run
 * untrusted code but has not yet: it is still checked like everything a
 * worker writes (lengths, counts, enum values, NUL-terminated strings
 * within bounds, the mode the daemon asked for), and a malformed report
 * is a protocol fault. The strings are copied out of shared memory.
 */
#include <errno.h>
#include <string.h>

#include "engine/instance/inst_int.h"

void sandbox_report_none(struct inst *inst)
{
        for (unsigned l = 0; l < SANDBOX_LAYER_COUNT; l++) {
                strcpy(inst->layer_text[l], "not reported");
                inst->layers[l] = (struct inst_layer){ SANDBOX_DISABLED, inst->layer_text[l] };
        }
}

int sandbox_report_take(struct inst *inst, const struct call_in *in)
{
        char copy[SANDBOX_LAYER_COUNT * (CALL_SANDBOX_DETAIL_MAX + 1)];
        struct call_sandbox cs;
        const void *p;
        uint64_t idx;
        const char *s;

        if (in->hdr.body_len != sizeof(cs))
                goto out_bad;
        memcpy(&cs, in->body, sizeof(cs));
        /* Empty details (p NULL) cannot hold one string per layer. */
        if (cs.mode != (uint32_t)inst->sandbox_mode || cs.n_layers != SANDBOX_LAYER_COUNT ||
            call_in_bytes(in, &cs.details, sizeof(copy), &p) < 0 || !p)
                goto out_bad;
        for (unsigned l = 0; l < CALL_SANDBOX_LAYERS_MAX; l++)
                if (l < SANDBOX_LAYER_COUNT ? cs.state[l] > SANDBOX_DISABLED : cs.state[l] != 0)
                        goto out_bad;
        /* One private copy, then check what was copied. */
        memcpy(copy, p, cs.details.len);
        if (call_check_strings(copy, cs.details.len, SANDBOX_LAYER_COUNT, CALL_SANDBOX_DETAIL_MAX,
                               &idx) < 0)
                goto out_bad;
        s = copy;
        for (unsigned l = 0; l < SANDBOX_LAYER_COUNT; l++) {
                size_t n = strlen(s);

                memcpy(inst->layer_text[l], s, n + 1);
                inst->layers[l] = (struct inst_layer){
                        (enum sandbox_layer_state)cs.state[l], inst->layer_text[l],
                };
                s += n + 1;
        }
        return 0;

out_bad:
        return inst_fault_set(inst, -EPROTO, "worker %d sent a malformed sandbox report",
                              (int)inst->pid);
}

int mlock_report_take(struct inst *inst, const struct call_in *in)
{
        struct call_mlock cm;

        if (in->hdr.body_len != sizeof(cm))
                goto out_bad;
        memcpy(&cm, in->body, sizeof(cm));
        if (cm.error > 0 || cm.error < -4095 || cm.reserved)
                goto out_bad;
        inst->mlock_error = cm.error;
        return 0;

out_bad:
        return inst_fault_set(inst, -EPROTO, "worker %d sent a malformed memory lock report",
                              (int)inst->pid);
}

int inst_mlock(const struct inst *inst)
{
        return inst->mlock_asked ? inst->mlock_error : 1;
}

const struct inst_layer *inst_sandbox(const struct inst *inst)
{
        return inst->layers;
}

const char *inst_scratch_dir(const struct inst *inst)
{
        return inst->scratch_dir;
}
