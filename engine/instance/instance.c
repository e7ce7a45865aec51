/*
 * instance: start and stop a worker for one FMU instance, and the
 * instance's properties. The FMI life cycle calls are in inst_life.c.
 *
 * DESIGN: inst_new() lays out the channel (two rings of 64-byte slots and
 * a side buffer), starts the worker (spawn.c) and waits for its HELLO,
 * which says which FMI version it serves or why it cannot. inst_free()
 * asks the worker to free the FMU instance and exit, and kills it when it
 * does not (or cannot: after a fault) answer in time, or at once when it
 * is stopped (it could not answer); either way the worker is reaped and
 * every descriptor and mapping released.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "engine/instance/inst_int.h"
#include "engine/instance/leftovers.h"
#include "engine/instance/supervisor.h"

#define SLOT_SIZE       64u
#define RING_SLOTS      1024u
#define EXIT_GRACE_NS   (5ull * 1000000000u)

void inst_opts_default(struct inst_opts *o)
{
        *o = (struct inst_opts){ 0 };
        wait_policy_init(&o->wait, WAIT_ADAPTIVE);
}

/* The next record of the worker's start, parsed; the caller releases it. */
static int next_start_record(struct inst *inst, struct timespec *deadline, struct call_in *in)
{
        const void *rec;
        size_t len;
        bool side;
        int r;

        r = call_next(inst, deadline, &rec, &len);
        if (r < 0)
                return r;
        if (call_parse(rec, len, in, &side) < 0 || side || in->hdr.kind != CALL_EVENT ||
            in->hdr.seq != 0) {
                ring_release(inst->rx);
                return inst_fault_set(inst, -EPROTO, "worker %d did not start with HELLO",
                                      (int)inst->pid);
        }
        return 0;
}

static int wait_hello(struct inst *inst, uint64_t timeout_ns)
{
        char text[CALL_MSG_MAX + 1];
        struct timespec deadline;
        struct call_hello h;
        struct call_in in;
        unsigned logs = 0;
        const void *p;
        int r;

        inst->next_timeout_ns = timeout_ns;
        call_deadline(inst, 0, 0, &deadline);
        inst->cur_timeout_ns = timeout_ns;      /* what a time-out says */
        r = next_start_record(inst, &deadline, &in);
        if (r < 0)
                return r;
        /* The sandbox report comes first; a sandboxed worker must send it. */
        if (in.hdr.op == CALL_EV_SANDBOX) {
                r = sandbox_report_take(inst, &in);
                ring_release(inst->rx);
                if (r < 0)
                        return r;
                r = next_start_record(inst, &deadline, &in);
                if (r < 0)
                        return r;
        } else if (inst->sandbox_mode != SANDBOX_OFF && in.hdr.op == CALL_EV_HELLO) {
                ring_release(inst->rx);
                return inst_fault_set(inst, -EPROTO, "worker %d did not report its sandbox",
                                      (int)inst->pid);
        }
        /* Then the memory lock, when it was asked for: the worker must report it. */
        if (inst->mlock_asked) {
                if (in.hdr.op != CALL_EV_MLOCK) {
                        ring_release(inst->rx);
                        return inst_fault_set(inst, -EPROTO, "worker %d did not report its "
                                              "memory lock", (int)inst->pid);
                }
                r = mlock_report_take(inst, &in);
                ring_release(inst->rx);
                if (r < 0)
                        return r;
                r = next_start_record(inst, &deadline, &in);
                if (r < 0)
                        return r;
        }
        /*
         * Then what the FMU's constructors logged or were refused while its
         * library loaded: as many as a call may send, and the count of the
         * ones that were not.
         */
        while (in.hdr.op == CALL_EV_LOG) {
                if (++logs > CALL_LOGS_PER_CALL + 1) {
                        ring_release(inst->rx);
                        return inst_fault_set(inst, -EPROTO, "worker %d sent more than %u log "
                                              "messages before HELLO", (int)inst->pid,
                                              CALL_LOGS_PER_CALL + 1);
                }
                r = call_on_log(inst, &in, &deadline);
                if (r < 0)
                        return r;
                r = next_start_record(inst, &deadline, &in);
                if (r < 0)
                        return r;
        }
        if (in.hdr.op != CALL_EV_HELLO || in.hdr.body_len != sizeof(h)) {
                ring_release(inst->rx);
                return inst_fault_set(inst, -EPROTO, "worker %d did not start with HELLO",
                                      (int)inst->pid);
        }
        memcpy(&h, in.body, sizeof(h));
        if (h.version != CALL_VERSION || h.error > 0 || (!h.error && h.fmi != 2 && h.fmi != 3) ||
            call_in_bytes(&in, &h.msg, CALL_MSG_MAX, &p) < 0) {
                ring_release(inst->rx);
                return inst_fault_set(inst, -EPROTO, "worker %d sent a HELLO of another version or "
                                      "malformed", (int)inst->pid);
        }
        if (h.msg.len)
                memcpy(text, p, h.msg.len);
        text[h.msg.len] = '\0';
        ring_release(inst->rx);
        if (h.error) {
                /* The worker's reason, as given; it exits now. */
                r = h.error < -4095 ? -EPROTO : h.error;
                return inst_fault_set(inst, r, "%s", text);
        }
        inst->fmi = (int)h.fmi;
        inst->caps = h.caps;
        return 0;
}

static void release(struct inst *inst)
{
        supervisor_unwatch(inst->watch);
        /* The worker is reaped (or never ran): nothing can write there any more. */
        scratch_remove(inst);
        leftovers_forget(inst->rec_path);
        chan_close(inst->chan);
        arena_reset(inst);
        kept_free(inst);
        free(inst->scratch);
        free(inst->name);
        free(inst);
}

int inst_spawn(const struct inst_opts *o, struct inst **ret, char **ret_message)
{
        struct chan_params p = { .slot_size = SLOT_SIZE };
        struct spawn_req sr = { 0 };
        struct inst *inst;
        int fd, r;

        if (ret_message)
                *ret_message = NULL;
        if (!o || !o->worker_path || !o->fmu_dir || (o->ring_slots & (o->ring_slots - 1)) ||
            (unsigned)o->sandbox.mode > SANDBOX_STRICT)
                return -EINVAL;
        inst = calloc(1, sizeof(*inst));
        if (!inst)
                return -ENOMEM;
        inst->pid = -1;
        inst->name = strdup(o->name ? o->name : "fmud-instance");
        if (!inst->name) {
                free(inst);
                return -ENOMEM;
        }
        inst->wait = o->wait;
        inst->timeout_ns = o->timeout_ns ? o->timeout_ns : INST_TIMEOUT_DEFAULT;
        inst->start_timeout_ns = o->start_timeout_ns ? o->start_timeout_ns : INST_TIMEOUT_DEFAULT;
        inst->log = o->log;
        inst->log_ctx = o->log_ctx;
        inst->iu = o->iu;
        inst->iu_ctx = o->iu_ctx;
        inst->max_string = CALL_STRING_MAX_DEFAULT;
        inst->max_binary = CALL_BINARY_MAX_DEFAULT;
        inst->sandbox_mode = o->sandbox.mode;
        inst->mlock_asked = o->mlock;
        inst->cancel = o->cancel;
        sandbox_report_none(inst);
        p.name = inst->name;
        p.req_slots = p.rep_slots = o->ring_slots ? o->ring_slots : RING_SLOTS;
        p.side_size = o->side_size ? o->side_size : INST_SIDE_DEFAULT;
        fd = chan_create(&p, &inst->chan);
        if (fd < 0) {
                r = fd;
                inst->chan = NULL;
                goto out_release;
        }
        inst->tx = chan_tx(inst->chan);
        inst->rx = chan_rx(inst->chan);
        inst->side = chan_side(inst->chan, &inst->side_size);
        inst->max_record = inst->tx->max_record;
        inst->scratch = malloc(inst->max_record);
        if (!inst->scratch) {
                r = -ENOMEM;
                goto out_release;
        }
        sr = (struct spawn_req){
                .path = o->worker_path, .fmu_dir = o->fmu_dir, .envp = o->envp, .chan_fd = fd,
                .sandbox = &o->sandbox, .mlock = o->mlock,
                .mlock_limit = o->mlock_limit, .model_exchange = o->model_exchange,
                .scheduled_execution = o->scheduled_execution,
                .integrator = o->integrator,
        };
        if (o->sandbox.mode != SANDBOX_OFF) {
                r = sandbox_user(&o->sandbox, &sr.uid, &sr.gid);
                if (r == 0)
                        r = scratch_make(inst, &o->sandbox, sr.uid, sr.gid);
                if (r < 0) {
                        snprintf(inst->msg, sizeof(inst->msg), "sandbox %s: %s",
                                 r == -ENOENT ? "user" : "scratch directory", strerror(-r));
                        goto out_release;
                }
                sr.scratch = inst->scratch_dir;
        }
        r = spawn_worker(&sr, &inst->pid);
        if (r < 0) {
                snprintf(inst->msg, sizeof(inst->msg), "starting '%s': %s", o->worker_path,
                         strerror(-r));
                goto out_release;
        }
        /* So that the next daemon finds it if this one dies (leftovers.h); best effort. */
        if (o->sandbox.scratch_root)
                (void) leftovers_record(o->sandbox.scratch_root, inst->pid, inst->scratch_dir,
                                        &inst->rec_path);
        /* Without a supervisor (no pidfd), deaths are still found by the calls. */
        (void) supervisor_watch(inst->pid, &inst->watch);
        *ret = inst;
        return 0;

out_release:
        if (ret_message && inst->msg[0])
                *ret_message = strdup(inst->msg);
        release(inst);
        return r;
}

int inst_ready(struct inst *inst, char **ret_message)
{
        int r;

        if (ret_message)
                *ret_message = NULL;
        r = wait_hello(inst, inst->start_timeout_ns);
        if (r == 0)
                return 0;
        /* A worker that said why it cannot start exits by itself; others are killed. */
        spawn_reap(inst, r == -ETIMEDOUT || r == -EPROTO ? 0 : EXIT_GRACE_NS);
        if (ret_message && inst->msg[0])
                *ret_message = strdup(inst->msg);
        release(inst);
        return r;
}

void inst_abort(struct inst *inst)
{
        fault_kill(inst);
        release(inst);
}

int inst_new(const struct inst_opts *o, struct inst **ret, char **ret_message)
{
        struct inst *inst;
        int r = inst_spawn(o, &inst, ret_message);

        if (r < 0)
                return r;
        r = inst_ready(inst, ret_message);
        if (r == 0)
                *ret = inst;
        return r;
}

int inst_free(struct inst *inst)
{
        return inst_free_status(inst, NULL);
}

int inst_free_status(struct inst *inst, int *ret_wstatus)
{
        struct inst_step_result res;
        struct rep rp;
        int r = 0;

        if (ret_wstatus)
                *ret_wstatus = -1;
        if (!inst)
                return 0;
        (void) inst_kill_stopped(inst);
        if (!inst->reaped && !inst->fault) {
                while (inst->n_posted && !inst->fault)
                        (void) inst_wait_step(inst, &res);
                inst->depth = 0;
                r = call_simple(inst, CALL_OP_FREE, NULL, 0, &rp);
                call_end(inst, &rp);
        }
        spawn_reap(inst, inst->fault || r < 0 ? 0 : EXIT_GRACE_NS);
        if (inst->fault)
                r = inst->fault;
        else if (r >= 0)
                r = WIFEXITED(inst->wstatus) && WEXITSTATUS(inst->wstatus) == 0 ? 0 : -ECHILD;
        if (ret_wstatus && inst->reaped)
                *ret_wstatus = inst->wstatus;
        release(inst);
        return r;
}

pid_t inst_pid(const struct inst *inst)
{
        return inst->pid;
}

int inst_worker_cpu(const struct inst *inst)
{
        /* The reply ring's waker is the worker: where it last published, + 1. */
        uint32_t c = atomic_load_explicit(&inst->rx->hdr->data.waker_cpu, memory_order_relaxed);

        return c == 0 || c > INT32_MAX ? -1 : (int)(c - 1);
}

uint64_t inst_last_service_ns(const struct inst *inst)
{
        return inst->svc_last_ns;
}

int inst_fmi_version(const struct inst *inst)
{
        return inst->fmi;
}

uint64_t inst_caps(const struct inst *inst)
{
        return inst->caps;
}

const char *inst_message(const struct inst *inst)
{
        return inst->msg;
}

int inst_state(const struct inst *inst)
{
        return inst->state;
}

int inst_fault(const struct inst *inst)
{
        return inst->fault;
}

int inst_exit_status(const struct inst *inst, int *ret)
{
        if (!inst->reaped)
                return -EAGAIN;
        *ret = inst->wstatus;
        return 0;
}

uint64_t inst_logs_dropped(const struct inst *inst)
{
        return inst->logs_dropped;
}

void inst_set_timeout(struct inst *inst, uint64_t ns)
{
        inst->timeout_ns = ns ? ns : INST_TIMEOUT_DEFAULT;
}

void inst_set_wait(struct inst *inst, const struct wait_policy *p)
{
        inst->wait = *p;
}

const struct wait_policy *inst_wait(const struct inst *inst)
{
        return &inst->wait;
}

void inst_next_timeout(struct inst *inst, uint64_t ns)
{
        inst->next_timeout_ns = ns;
}

void inst_set_log(struct inst *inst, inst_log_fn *fn, void *ctx)
{
        inst->log = fn;
        inst->log_ctx = ctx;
}

void inst_set_iu(struct inst *inst, inst_iu_fn *fn, void *ctx)
{
        inst->iu = fn;
        inst->iu_ctx = ctx;
}
