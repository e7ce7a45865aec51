/*
 * snapshot.c: FMU state snapshots of a test FMU instance (FMI 3.0 section
 * 2.2.7.4; FMI 2.0 section 2.1.8), in memory and serialized.
 *
 * DESIGN: a snapshot is struct sim plus a byte copy of the model data (see
 * model.h: the model data is plain old data). The serialized form is a
 * fixed header followed by the same bytes, in native byte order: a state
 * moves between processes of one machine, not across platforms.
 *
 *   0  char[8]  magic "FMUDSTAT"
 *   8  u32      format version (1)
 *  12  u32      state (enum inst_state)
 *  16  u64      FNV-1a hash of the instantiation token
 *  24  u64      size of the model data
 *  32  u64      FNV-1a hash of bytes 40..end
 *  40  f64 x 3  time, start time, stop time
 *  64  u32      flags (bit 0 stop time defined, bit 1 dirty)
 *  68  u32      zero
 *  72           model data
 *
 * Deserialization refuses a buffer of the wrong size, magic, version,
 * model or checksum, so a state of another FMU or a damaged one is never
 * loaded.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define SNAPSHOT_TAG 0x534e4150u       /* "SNAP", marks a live snapshot */
#define WIRE_VERSION 1u
#define WIRE_HEADER 72u

static const char wire_magic[8] = { 'F', 'M', 'U', 'D', 'S', 'T', 'A', 'T' };

struct snapshot {
        uint32_t tag;
        const struct model *model;
        struct sim sim;
        max_align_t data[];
};

static uint64_t fnv1a(const void *p, size_t n, uint64_t h)
{
        const uint8_t *b = p;

        for (size_t i = 0; i < n; i++) {
                h ^= b[i];
                h *= 0x100000001b3ull;
        }
        return h;
}

#define FNV_OFFSET 0xcbf29ce484222325ull

static bool is_ours(const struct inst *inst, const struct snapshot *snap)
{
        return snap && snap->tag == SNAPSHOT_TAG && snap->model == inst->model;
}

static struct snapshot *snapshot_alloc(const struct inst *inst)
{
        struct snapshot *snap;

        snap = calloc(1, sizeof(*snap) + inst->model->data_size);
        if (!snap)
                return NULL;
        snap->tag = SNAPSHOT_TAG;
        snap->model = inst->model;
        return snap;
}

int snapshot_get(struct inst *inst, struct snapshot **snap)
{
        struct snapshot *s = *snap;

        if (s && !is_ours(inst, s))
                return -EINVAL;
        if (!s) {
                s = snapshot_alloc(inst);
                if (!s)
                        return -ENOMEM;
        }
        s->sim = inst->sim;
        memcpy(s->data, inst->data, inst->model->data_size);
        *snap = s;
        return 0;
}

int snapshot_set(struct inst *inst, const struct snapshot *snap)
{
        if (!is_ours(inst, snap))
                return -EINVAL;
        inst->sim = snap->sim;
        memcpy(inst->data, snap->data, inst->model->data_size);
        return 0;
}

int snapshot_free(struct inst *inst, struct snapshot *snap)
{
        if (!snap)
                return 0;
        if (!is_ours(inst, snap))
                return -EINVAL;
        snap->tag = 0;          /* a second free is caught, not undefined */
        free(snap);
        return 0;
}

static size_t wire_size(const struct inst *inst)
{
        return WIRE_HEADER + inst->model->data_size;
}

int snapshot_serialized_size(const struct inst *inst, const struct snapshot *snap,
                             size_t *ret_size)
{
        if (!is_ours(inst, snap))
                return -EINVAL;
        *ret_size = wire_size(inst);
        return 0;
}

static void put_u32(uint8_t *p, uint32_t v)
{
        memcpy(p, &v, sizeof(v));
}

static void put_u64(uint8_t *p, uint64_t v)
{
        memcpy(p, &v, sizeof(v));
}

static void put_f64(uint8_t *p, double v)
{
        memcpy(p, &v, sizeof(v));
}

static uint32_t get_u32(const uint8_t *p)
{
        uint32_t v;

        memcpy(&v, p, sizeof(v));
        return v;
}

static uint64_t get_u64(const uint8_t *p)
{
        uint64_t v;

        memcpy(&v, p, sizeof(v));
        return v;
}

static double get_f64(const uint8_t *p)
{
        double v;

        memcpy(&v, p, sizeof(v));
        return v;
}

static uint64_t token_hash(const struct inst *inst)
{
        return fnv1a(inst->model->token, strlen(inst->model->token), FNV_OFFSET);
}

int snapshot_serialize(struct inst *inst, const struct snapshot *snap,
                       uint8_t *buf, size_t size)
{
        size_t data_size = inst->model->data_size;
        uint32_t flags;

        if (!is_ours(inst, snap) || !buf || size != wire_size(inst))
                return -EINVAL;

        flags = (snap->sim.stop_time_defined ? 1u : 0u) | (snap->sim.dirty ? 2u : 0u);
        memcpy(buf, wire_magic, sizeof(wire_magic));
        put_u32(buf + 8, WIRE_VERSION);
        put_u32(buf + 12, (uint32_t)snap->sim.state);
        put_u64(buf + 16, token_hash(inst));
        put_u64(buf + 24, data_size);
        put_f64(buf + 40, snap->sim.time);
        put_f64(buf + 48, snap->sim.start_time);
        put_f64(buf + 56, snap->sim.stop_time);
        put_u32(buf + 64, flags);
        put_u32(buf + 68, 0);
        memcpy(buf + WIRE_HEADER, snap->data, data_size);
        put_u64(buf + 32, fnv1a(buf + 40, size - 40, FNV_OFFSET));
        return 0;
}

int snapshot_deserialize(struct inst *inst, const uint8_t *buf, size_t size,
                         struct snapshot **ret_snap)
{
        size_t data_size = inst->model->data_size;
        struct snapshot *snap;
        uint32_t state, flags;

        if (!buf || size != wire_size(inst))
                return -EINVAL;
        if (memcmp(buf, wire_magic, sizeof(wire_magic)) != 0 ||
            get_u32(buf + 8) != WIRE_VERSION ||
            get_u64(buf + 16) != token_hash(inst) ||
            get_u64(buf + 24) != data_size ||
            get_u64(buf + 32) != fnv1a(buf + 40, size - 40, FNV_OFFSET))
                return -EINVAL;
        state = get_u32(buf + 12);
        flags = get_u32(buf + 64);
        /* No snapshot is ever taken inside Intermediate Update Mode. */
        if (state >= ST_N_STATES || state == ST_INTERMEDIATE_UPDATE || (flags & ~3u))
                return -EINVAL;

        snap = snapshot_alloc(inst);
        if (!snap)
                return -ENOMEM;
        snap->sim = (struct sim){
                .state = (enum inst_state)state,
                .time = get_f64(buf + 40),
                .start_time = get_f64(buf + 48),
                .stop_time = get_f64(buf + 56),
                .stop_time_defined = flags & 1u,
                .dirty = flags & 2u,
        };
        memcpy(snap->data, buf + WIRE_HEADER, data_size);
        *ret_snap = snap;
        return 0;
}
