/*
 * host: the list of a session's snapshots and their deletion. A deleted
 * snapshot frees its slot and the workers' FMU states, so a session can
 * take snapshots without end as long as it deletes them; the others stay
 * usable.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_host_vals.h"

#define MSD HDRV_EXAMPLE("msd.ssp")

static uint64_t snapshot(struct hdrv *d, uint64_t s)
{
        struct proto_snapshot_result sr;
        struct hrep rep;
        char err[256];

        hdrv_target(d, PROTO_OP_SNAPSHOT, s, 0, &rep);
        cr_assert(rep.r.ok, "%.*s", (int)rep.r.message_len, rep.r.message);
        cr_assert(proto_snapshot_result_decode(rep.r.result, &sr, err, sizeof(err)) == 0, "%s", err);
        hrep_fini(&rep);
        return sr.snapshot;
}

static void restore(struct hdrv *d, uint64_t s, uint64_t id, struct hrep *rep)
{
        struct pw w;

        cr_assert(pw_init(&w) == 0);
        proto_restore_encode(&w, hdrv_id(d), &(struct proto_restore){ .t = { s, 0 }, .snapshot = id });
        hdrv_wait(d, hdrv_send(d, &w), rep);
        pw_fini(&w);
}

static void snapshots(struct hdrv *d, uint64_t s, struct proto_snapshots_result *ret, void **mem)
{
        struct hrep rep;
        char err[256];

        hdrv_target(d, PROTO_OP_SNAPSHOTS, s, 0, &rep);
        cr_assert(rep.r.ok, "%.*s", (int)rep.r.message_len, rep.r.message);
        cr_assert(proto_snapshots_result_decode(rep.r.result, ret, mem, err, sizeof(err)) == 0,
                  "%s", err);
        hrep_fini(&rep);
}

static void delete(struct hdrv *d, uint64_t s, uint64_t id, struct hrep *rep)
{
        struct pw w;

        cr_assert(pw_init(&w) == 0);
        proto_snapshot_delete_encode(&w, hdrv_id(d), &(struct proto_restore){ .t = { s, 0 },
                                                                               .snapshot = id });
        hdrv_wait(d, hdrv_send(d, &w), rep);
        pw_fini(&w);
}

static void delete_ok(struct hdrv *d, uint64_t s, uint64_t id)
{
        struct hrep rep;

        delete(d, s, id, &rep);
        cr_assert(rep.r.ok, "%.*s", (int)rep.r.message_len, rep.r.message);
        hrep_fini(&rep);
}

Test(host_snap, list_and_delete)
{
        struct proto_snapshots_result l;
        struct hdrv d;
        struct hrep rep;
        const char *msg;
        char want[128];
        void *mem;
        uint64_t s, a, b, c;

        hdrv_init(&d, NULL);
        s = hdrv_load(&d, MSD, NULL, NULL);
        snapshots(&d, s, &l, &mem);
        cr_assert(eq(u32, l.n, 0));
        free(mem);
        a = snapshot(&d, s);
        hv_step(&d, s, 10);
        b = snapshot(&d, s);
        restore(&d, s, a, &rep);
        cr_assert(rep.r.ok);
        hrep_fini(&rep);
        hv_step(&d, s, 20);
        c = snapshot(&d, s);
        snapshots(&d, s, &l, &mem);
        cr_assert(eq(u32, l.n, 3));
        cr_assert(eq(u64, l.snapshots[0].snapshot, a));
        cr_assert(eq(u64, l.snapshots[1].snapshot, b));
        cr_assert(eq(u64, l.snapshots[2].snapshot, c));
        cr_assert(eq(dbl, l.snapshots[0].time, 0));
        cr_assert(l.snapshots[1].time > 0);
        cr_assert(l.snapshots[2].time > l.snapshots[1].time);
        cr_assert(eq(u64, l.snapshots[0].generation, 1));
        cr_assert(eq(u64, l.snapshots[1].generation, 1));
        cr_assert(eq(u64, l.snapshots[2].generation, 2));
        cr_assert(l.snapshots[0].taken > 1.5e9 && l.snapshots[2].taken >= l.snapshots[0].taken);
        free(mem);

        /* Deleted: gone from the list, unknown to restore and to a second delete. */
        delete_ok(&d, s, b);
        snapshots(&d, s, &l, &mem);
        cr_assert(eq(u32, l.n, 2));
        cr_assert(eq(u64, l.snapshots[0].snapshot, a));
        cr_assert(eq(u64, l.snapshots[1].snapshot, c));
        free(mem);
        restore(&d, s, b, &rep);
        msg = hrep_err(&rep, PROTO_E_INVALID);
        cr_assert(strstr(msg, "no snapshot") != NULL, "%s", msg);
        hrep_fini(&rep);
        delete(&d, s, b, &rep);
        msg = hrep_err(&rep, PROTO_E_INVALID);
        snprintf(want, sizeof(want), "no snapshot %llu in session %llu", (unsigned long long)b,
                 (unsigned long long)s);
        cr_assert(eq(str, (char *)msg, want));
        hrep_fini(&rep);
        /* The others are untouched: a restore to c still works, and the session runs on. */
        restore(&d, s, c, &rep);
        cr_assert(rep.r.ok, "%.*s", (int)rep.r.message_len, rep.r.message);
        hrep_fini(&rep);
        hv_step(&d, s, 5);

        /* Finished: the list is still answered, a delete is refused. */
        hdrv_target(&d, PROTO_OP_RESUME, s, 0, &rep);
        cr_assert(rep.r.ok);
        hrep_fini(&rep);
        hdrv_wait_state(&d, s, PROTO_STATE_FINISHED);
        snapshots(&d, s, &l, &mem);
        cr_assert(eq(u32, l.n, 2));
        free(mem);
        delete(&d, s, a, &rep);
        (void) hrep_err(&rep, PROTO_E_STATE);
        hrep_fini(&rep);
        hdrv_fini(&d);
}

/*
 * The host holds HOST_MAX_SNAPSHOTS (64) at once and each worker 4096 FMU
 * states: many more snapshots than either, each deleted after the next is
 * taken, all succeed only when a delete frees the workers' states too.
 */
Test(host_snap, delete_frees_the_slot_and_the_workers_states)
{
        struct hdrv d;
        struct hrep rep;
        uint64_t s, prev, id;

        hdrv_init(&d, NULL);
        s = hdrv_load(&d, MSD, NULL, NULL);
        for (int i = 0; i < 63; i++)
                (void) snapshot(&d, s);
        prev = snapshot(&d, s);
        hdrv_target(&d, PROTO_OP_SNAPSHOT, s, 0, &rep);
        cr_assert(eq(str, (char *)hrep_err(&rep, PROTO_E_LIMIT), "64 snapshots already (the limit)"));
        hrep_fini(&rep);
        for (int i = 0; i < 4200; i++) {
                delete_ok(&d, s, prev);
                id = snapshot(&d, s);
                cr_assert(eq(u64, id, prev + 1));
                prev = id;
        }
        hdrv_fini(&d);
}

/* A deleted snapshot's slot goes to the next one, which the list still puts last. */
Test(host_snap, the_list_is_oldest_first_when_a_slot_is_reused)
{
        struct proto_snapshots_result l;
        struct hdrv d;
        void *mem;
        uint64_t s, a, b, c, e;

        hdrv_init(&d, NULL);
        s = hdrv_load(&d, MSD, NULL, NULL);
        a = snapshot(&d, s);
        b = snapshot(&d, s);
        c = snapshot(&d, s);
        delete_ok(&d, s, a);
        e = snapshot(&d, s);
        snapshots(&d, s, &l, &mem);
        cr_assert(eq(u32, l.n, 3));
        cr_assert(eq(u64, l.snapshots[0].snapshot, b));
        cr_assert(eq(u64, l.snapshots[1].snapshot, c));
        cr_assert(eq(u64, l.snapshots[2].snapshot, e));
        free(mem);
        hdrv_fini(&d);
}
