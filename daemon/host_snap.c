/*
 * host_snap: snapshot and restore of a loaded or paused session: every
 * instance's FMU state (kept in its worker, named by a handle) and the
 * master's own state (master_save()), taken at the same point. Restore
 * sets both back and bumps the generation; the run then continues exactly
 * as an uninterrupted run from that point would (bit-identical rows).
 *
 * DESIGN: the reply to restore is {session, generation} (the load result's
 * shape): a client needs the new generation for its next request. The
 * results file is not rewound: rows computed after a restore are appended,
 * so the file holds the rows in the order they were computed. Snapshots
 * live until snapshot-delete frees them (the workers' FMU states and the
 * slot) or the session is unloaded; at most HOST_MAX_SNAPSHOTS at once.
 * Ids are never reused within a session, so a deleted id stays unknown.
 * A snapshot imported from a file (host_snap_io.c) is one like any other:
 * its handles are the states the workers deserialized.
 *
 * Threads: session thread only.
 */
#include "daemon/host_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double hsnap_wall_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void hsnap_free(struct hsess *hs, struct hsnapshot *sn, bool release)
{
        if (!sn)
                return;
        for (size_t i = 0; release && sn->handles && i < hs->sc->n_components; i++)
                if (sn->handles[i])
                        (void) inst_free_fmu_state(session_inst(hs->s, i), &sn->handles[i]);
        free(sn->handles);
        free(sn->blob);
        master_saved_free(sn->saved);
        free(sn);
}

void hsnap_free_all(struct hsess *hs)
{
        /* The workers free their states with the instances: only our side here. */
        for (size_t i = 0; i < HOST_MAX_SNAPSHOTS; i++) {
                hsnap_free(hs, hs->snaps[i], false);
                hs->snaps[i] = NULL;
        }
}

/* Take every state; -1 or the reply code with msg. */
static int take(struct hsess *hs, struct hsnapshot *sn, char *msg, size_t size)
{
        const struct scenario *sc = hs->sc;
        int r;

        for (size_t i = 0; i < sc->n_components; i++)
                if (!sc->components[i].can_get_set_state) {
                        snprintf(msg, size, "instance '%s' cannot save its state (its FMU does "
                                 "not declare canGetAndSetFMUState)", sc->components[i].name);
                        return PROTO_E_UNSUPPORTED;
                }
        sn->handles = calloc(sc->n_components ? sc->n_components : 1, sizeof(*sn->handles));
        if (!sn->handles) {
                snprintf(msg, size, "out of memory");
                return PROTO_E_INTERNAL;
        }
        for (size_t i = 0; i < sc->n_components; i++) {
                struct inst *inst = session_inst(hs->s, i);

                r = inst_get_fmu_state(inst, &sn->handles[i]);
                if (r != INST_OK && r != INST_WARNING) {
                        snprintf(msg, size, "instance '%s': GetFMUState failed: %s",
                                 sc->components[i].name,
                                 inst_message(inst)[0] ? inst_message(inst) :
                                 r < 0 ? strerror(-r) : "status Error");
                        return r == -ENOSPC ? PROTO_E_LIMIT : PROTO_E_FAULT;
                }
        }
        r = master_save(hs->m, &sn->saved);
        if (r < 0) {
                snprintf(msg, size, "%s", r == -ENOMEM ? "out of memory" : master_message(hs->m));
                return r == -EOPNOTSUPP ? PROTO_E_UNSUPPORTED : PROTO_E_INTERNAL;
        }
        return -1;
}

void hsnap_snapshot(struct hsess *hs, const struct hcmd *c)
{
        struct hsnapshot *sn = NULL;
        char msg[HOST_MSG_MAX];
        size_t slot = hsnap_free_slot(hs);
        int code;
        struct pw w;

        sn = slot < HOST_MAX_SNAPSHOTS ? calloc(1, sizeof(*sn)) : NULL;
        if (!sn) {
                code = slot < HOST_MAX_SNAPSHOTS ? PROTO_E_INTERNAL : PROTO_E_LIMIT;
                snprintf(msg, sizeof(msg), slot < HOST_MAX_SNAPSHOTS ? "out of memory" :
                         "%d snapshots already (the limit)", HOST_MAX_SNAPSHOTS);
        } else {
                code = take(hs, sn, msg, sizeof(msg));
        }
        if (code >= 0) {
                hsnap_free(hs, sn, true);
                host_reply_error(hs->h, c->token, c->id, (enum proto_err)code, "%s", msg);
                return;
        }
        sn->id = ++hs->next_snap;
        sn->time = master_time(hs->m);
        sn->state = hs->state;
        sn->generation = hs->generation;
        sn->taken = hsnap_wall_now();
        hs->snaps[slot] = sn;
        if (pw_init(&w) < 0)
                return;
        proto_reply_ok_begin(&w, c->id);
        proto_snapshot_result_encode(&w, &(struct proto_snapshot_result){
                .snapshot = sn->id, .time = sn->time });
        host_reply_take(hs->h, c->token, c->id, &w);
        pw_fini(&w);
}

size_t hsnap_free_slot(const struct hsess *hs)
{
        for (size_t i = 0; i < HOST_MAX_SNAPSHOTS; i++)
                if (!hs->snaps[i])
                        return i;
        return HOST_MAX_SNAPSHOTS;
}

size_t hsnap_find(const struct hsess *hs, uint64_t id)
{
        for (size_t i = 0; i < HOST_MAX_SNAPSHOTS; i++)
                if (hs->snaps[i] && hs->snaps[i]->id == id)
                        return i;
        return HOST_MAX_SNAPSHOTS;
}

void hsnap_restore(struct hsess *hs, const struct hcmd *c, const struct pv *args)
{
        struct proto_restore a;
        struct hsnapshot *sn = NULL;
        size_t slot;
        char err[256], msg[HOST_MSG_MAX];
        struct master_stats st;
        struct pw w;
        int r;

        if (proto_restore_decode(args, &a, err, sizeof(err)) < 0) {
                host_reply_error(hs->h, c->token, c->id, PROTO_E_BAD_REQUEST, "%s", err);
                return;
        }
        slot = hsnap_find(hs, a.snapshot);
        sn = slot < HOST_MAX_SNAPSHOTS ? hs->snaps[slot] : NULL;
        if (!sn) {
                host_reply_error(hs->h, c->token, c->id, PROTO_E_INVALID,
                                 "no snapshot %llu in session %llu",
                                 (unsigned long long)a.snapshot, (unsigned long long)hs->id);
                return;
        }
        for (size_t i = 0; i < hs->sc->n_components; i++) {
                struct inst *inst = session_inst(hs->s, i);

                r = inst_set_fmu_state(inst, sn->handles[i]);
                if (r == INST_OK || r == INST_WARNING)
                        continue;
                /* Some instances may be back, others not: the session cannot go on. */
                snprintf(msg, sizeof(msg), "restore: instance '%s': SetFMUState failed: %s",
                         hs->sc->components[i].name,
                         inst_message(inst)[0] ? inst_message(inst) :
                         r < 0 ? strerror(-r) : "status Error");
                master_request_stop(hs->m);
                hsess_set_state(hs, PROTO_STATE_FAULTED, msg);
                host_reply_error(hs->h, c->token, c->id, PROTO_E_FAULT, "%s", msg);
                return;
        }
        hreconf_refresh(hs);    /* the instances hold the structural parameters saved */
        r = master_restore(hs->m, sn->saved);
        if (r < 0) {
                host_reply_error(hs->h, c->token, c->id, PROTO_E_INTERNAL, "restore: %s",
                                 strerror(-r));
                return;
        }
        hvalues_forget(hs);
        hsub_restored(hs);
        hs->generation++;
        hs->state = PROTO_STATE_COUNT;  /* so that the event goes out with the new generation */
        hsess_set_state(hs, sn->state, "");
        if (pw_init(&w) < 0)
                return;
        /* Progress, as every operation that moves time, and the new generation with it. */
        master_get_stats(hs->m, &st);
        proto_reply_ok_begin(&w, c->id);
        proto_restore_result_encode(&w, &(struct proto_restore_result){
                .p = { .state = hs->state, .time = master_time(hs->m), .points = st.points,
                       .message = { "", 0 } },
                .session = hs->id, .generation = hs->generation });
        host_reply_take(hs->h, c->token, c->id, &w);
        pw_fini(&w);
}

void hsnap_list(struct hsess *hs, const struct hcmd *c)
{
        struct proto_snapshot_info info[HOST_MAX_SNAPSHOTS];
        uint32_t n = 0;
        struct pw w;

        /* Oldest first: ids grow, slots are reused. */
        for (size_t i = 0; i < HOST_MAX_SNAPSHOTS; i++) {
                const struct hsnapshot *sn = hs->snaps[i];
                uint32_t k = n;

                if (!sn)
                        continue;
                n++;
                for (; k > 0 && info[k - 1].snapshot > sn->id; k--)
                        info[k] = info[k - 1];
                info[k] = (struct proto_snapshot_info){ .snapshot = sn->id, .time = sn->time,
                                                        .taken = sn->taken,
                                                        .generation = sn->generation };
        }
        if (pw_init(&w) < 0) {
                host_reply_error(hs->h, c->token, c->id, PROTO_E_INTERNAL, "out of memory");
                return;
        }
        proto_reply_ok_begin(&w, c->id);
        proto_snapshots_result_encode(&w, &(struct proto_snapshots_result){ .n = n,
                                                                            .snapshots = info });
        host_reply_take(hs->h, c->token, c->id, &w);
        pw_fini(&w);
}

void hsnap_delete(struct hsess *hs, const struct hcmd *c, const struct pv *args)
{
        struct proto_restore a;
        char err[256];
        size_t slot;
        struct pw w;

        if (proto_restore_decode(args, &a, err, sizeof(err)) < 0) {
                host_reply_error(hs->h, c->token, c->id, PROTO_E_BAD_REQUEST, "%s", err);
                return;
        }
        slot = hsnap_find(hs, a.snapshot);
        if (slot == HOST_MAX_SNAPSHOTS) {
                host_reply_error(hs->h, c->token, c->id, PROTO_E_INVALID,
                                 "no snapshot %llu in session %llu",
                                 (unsigned long long)a.snapshot, (unsigned long long)hs->id);
                return;
        }
        /* The workers free their states now: a long session can go on taking snapshots. */
        hsnap_free(hs, hs->snaps[slot], true);
        hs->snaps[slot] = NULL;
        if (pw_init(&w) < 0) {
                host_reply_error(hs->h, c->token, c->id, PROTO_E_INTERNAL, "out of memory");
                return;
        }
        proto_reply_ok_begin(&w, c->id);
        pw_nil(&w);
        host_reply_take(hs->h, c->token, c->id, &w);
        pw_fini(&w);
}
