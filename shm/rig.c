/*
 * rig: the rig channel's memfd, its header and port table, and the
 * records of its two rings (see rig.h).
 *
 * DESIGN: the layout is the worker channel's (channel.c) with a port
 * table in place of the side buffer: a 192-byte header, the ports, then
 * the two rings, each 64-byte aligned. A ring's slot holds one whole
 * record (RIG_RING_SLOTS of them), so a ring never pads between records
 * of one size. The engine keeps its own copy of the geometry; the rig
 * validates the header once in rig_attach() and copies the ports out.
 * The engine, too, keeps a private copy of the ports it formatted: the
 * table in the mapping is the rig's to rewrite, so rig_take() checks
 * values against the copy and never reads the table back.
 *
 * A write's sequence number is reported, not enforced: a rig that attaches
 * again starts from 1, and a rig cannot shut the channel by writing a huge
 * one. A write for a point more than RIG_RING_SLOTS ahead is bad (it would
 * otherwise sit at the head of the ring and block every later write).
 * A point ring whose head the rig broke is opened again from the engine's
 * own tail at the next publish, so one bad rig does not stop the points for
 * the session (the rig that attaches next reads from there).
 *
 * rig_wait() yields, then sleeps on the futex (WAIT_ADAPTIVE without its
 * pure spin, shm/wait.h). The point a rig waits for is the end of a chain
 * (the master takes the write, steps its workers, publishes), and the
 * waker_cpu hint names only the last link, the master: a rig that spins
 * because the master runs elsewhere holds its cpu from a worker of that
 * very point when the two share one (docs/BENCHMARKS.md "Rig port",
 * `bench/rig_rtt -n 5000 -r 3`, row unpaced / point: 5.98 µs median with
 * the rig beside the worker, about 30 µs while it spun). sched_yield() gives the cpu
 * to whoever is runnable there and returns at once otherwise, so a rig
 * with a cpu to itself still polls, a system call apart.
 *
 * The rings' wake words (sleepers, waker_cpu) are in the mapping: a rig can
 * set them so that each rig_publish() ends in a FUTEX_WAKE. That costs the
 * master at most one system call per point (ring_commit() wakes once), which
 * a rig could as well cause honestly by sleeping; it is bounded, not refused.
 */
#include "shm/rig.h"

#include <errno.h>
#include <float.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shm/rig_int.h"
#include "shm/wait.h"

#define BEAT_SLICE_NS   10000000ull     /* rig_wait() beats at least this often (rig_beat_slice_ns()) */

static const char *const type_names[RIG_TYPE_END] = {
        [RIG_FLOAT64] = "Float64", [RIG_FLOAT32] = "Float32", [RIG_INT8] = "Int8",
        [RIG_INT16] = "Int16", [RIG_INT32] = "Int32", [RIG_INT64] = "Int64",
        [RIG_UINT8] = "UInt8", [RIG_UINT16] = "UInt16", [RIG_UINT32] = "UInt32",
        [RIG_UINT64] = "UInt64", [RIG_BOOLEAN] = "Boolean",
};

const char *rig_type_name(enum rig_type t)
{
        return t > 0 && t < RIG_TYPE_END ? type_names[t] : NULL;
}

bool rig_value_ok(enum rig_type t, double v)
{
        static const double lo[RIG_TYPE_END] = {
                [RIG_INT8] = -128.0, [RIG_INT16] = -32768.0, [RIG_INT32] = -2147483648.0,
                [RIG_INT64] = -9223372036854775808.0,
        };
        static const double hi[RIG_TYPE_END] = {
                [RIG_INT8] = 127.0, [RIG_INT16] = 32767.0, [RIG_INT32] = 2147483647.0,
                [RIG_INT64] = 9223372036854774784.0, [RIG_UINT8] = 255.0,
                [RIG_UINT16] = 65535.0, [RIG_UINT32] = 4294967295.0,
                [RIG_UINT64] = 18446744073709549568.0, [RIG_BOOLEAN] = 1.0,
        };

        /*
         * As any value a user gives (docs/scenarios.md "Numbers"): never
         * NaN; infinities pass; a Float32 neither beyond its range nor so
         * small that it would become 0.
         */
        if (t == RIG_FLOAT64)
                return !isnan(v);
        if (t == RIG_FLOAT32)
                return !isnan(v) && (isinf(v) || (fabs(v) <= FLT_MAX &&
                                                  (v == 0 || (float)v != 0.0f)));
        if (t <= 0 || t >= RIG_TYPE_END)
                return false;
        /* NaN fails every comparison, so it is refused here too. */
        return v >= lo[t] && v <= hi[t] && v == trunc(v);
}

static const char *const policy_names[] = { "hold", "safe", "pause" };

const char *rig_policy_name(enum rig_policy p)
{
        return (unsigned)p < 3 ? policy_names[p] : "?";
}

int rig_policy_parse(const char *s, size_t len, enum rig_policy *ret)
{
        for (unsigned i = 0; i < 3; i++)
                if (strlen(policy_names[i]) == len && !memcmp(s, policy_names[i], len)) {
                        *ret = (enum rig_policy)i;
                        return 0;
                }
        return -EINVAL;
}

uint64_t rig_now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
        return (v + a - 1) & ~(a - 1);
}

/* One record per slot: the smallest power of two that holds a ring_rec and the record. */
static uint32_t slot_for(size_t rec)
{
        uint32_t s = RING_SLOT_MIN;

        while (s < sizeof(struct ring_rec) + rec)
                s <<= 1;
        return s;
}

struct layout {
        uint64_t ports_off, in_off, in_size, out_off, out_size, total;
        uint32_t in_slot, out_slot;
};

static void plan(uint32_t n_in, uint32_t n_out, struct layout *l)
{
        l->in_slot = slot_for(sizeof(struct rig_in_rec) + n_in * sizeof(double));
        l->out_slot = slot_for(sizeof(struct rig_out_rec) + n_out * sizeof(double));
        l->ports_off = sizeof(struct rig_hdr);
        l->in_off = align_up(l->ports_off + (uint64_t)(n_in + n_out) * sizeof(struct rig_port), 64);
        /* Twice the records: a record may take at most half of a ring (ring.h). */
        l->in_size = ring_bytes(l->in_slot, 2 * RIG_RING_SLOTS);
        l->out_off = align_up(l->in_off + l->in_size, 64);
        l->out_size = ring_bytes(l->out_slot, 2 * RIG_RING_SLOTS);
        l->total = align_up(l->out_off + l->out_size, 4096);
}

static struct rig *alloc(int fd, bool engine, uint32_t n_in, uint32_t n_out)
{
        struct rig *r = calloc(1, sizeof(*r));
        size_t in_rec = sizeof(struct rig_in_rec) + n_in * sizeof(double);
        size_t out_rec = sizeof(struct rig_out_rec) + n_out * sizeof(double);

        if (!r)
                return NULL;
        r->buf = malloc(in_rec > out_rec ? in_rec : out_rec);
        if (!r->buf) {
                free(r);
                return NULL;
        }
        r->fd = fd;
        r->peer_fd = -1;
        r->engine = engine;
        r->base = MAP_FAILED;
        r->n_in = n_in;
        r->n_out = n_out;
        r->in_rec = in_rec;
        r->out_rec = out_rec;
        wait_policy_init(&r->wait, WAIT_ADAPTIVE);
        /* The rig yields, then sleeps, and never spins: see the file header. */
        r->wait.spin_ns = 0;
        return r;
}

static bool port_ok(const struct rig_port *p)
{
        return memchr(p->name, '\0', RIG_NAME_MAX) && p->name[0] && rig_type_name(p->type) &&
               p->has_safe <= 1 && (!p->has_safe || rig_value_ok(p->type, p->safe));
}

/* The header's fixed part: what format() wrote and check() reads. */
static void put_layout(struct rig *r, const struct layout *l)
{
        struct rig_hdr *h = (struct rig_hdr *)r->base;

        h->magic = RIG_MAGIC;
        h->version = RIG_VERSION;
        h->total_size = l->total;
        h->n_in = r->n_in;
        h->n_out = r->n_out;
        h->ports_off = l->ports_off;
        h->in_off = l->in_off;
        h->in_size = l->in_size;
        h->out_off = l->out_off;
        h->out_size = l->out_size;
        h->policy = r->policy;
        h->timeout_ms = r->timeout_ms;
}

static int format(struct rig *r, const struct rig_params *p, const struct layout *l)
{
        struct rig_hdr *h = (struct rig_hdr *)r->base;
        struct ring_params in = { .slot_size = l->in_slot, .capacity = 2 * RIG_RING_SLOTS };
        struct ring_params out = { .slot_size = l->out_slot, .capacity = 2 * RIG_RING_SLOTS };
        int e;

        *h = (struct rig_hdr){ 0 };
        put_layout(r, l);
        /* A side without ports may come as NULL, which memcpy may not take even for 0 bytes. */
        if (p->n_in)
                memcpy(r->ports, p->in, p->n_in * sizeof(*p->in));
        if (p->n_out)
                memcpy(r->ports + p->n_in, p->out, p->n_out * sizeof(*p->out));
        memcpy(r->base + l->ports_off, r->ports, (p->n_in + p->n_out) * sizeof(*r->ports));
        if ((e = ring_format(r->base + l->in_off, l->in_size, &in)) < 0 ||
            (e = ring_format(r->base + l->out_off, l->out_size, &out)) < 0)
                return e;
        if ((e = ring_init(&r->in, r->base + l->in_off, l->in_size, RING_CONSUMER)) < 0)
                return e;
        return ring_init(&r->out, r->base + l->out_off, l->out_size, RING_PRODUCER);
}

void rig_restore(struct rig *r)
{
        struct layout l;

        if (!r || !r->engine)
                return;
        plan(r->n_in, r->n_out, &l);
        put_layout(r, &l);
        /*
         * The claim and heartbeat are the rigs' own: a time that is not
         * recent reads as no rig (rig_claim.c), so garbage keeps nobody out.
         */
        atomic_store_explicit(&rig_hdr_of(r)->ended, atomic_load(&r->ended) ? 1 : 0,
                              memory_order_release);
        memcpy(r->base + l.ports_off, r->ports, (r->n_in + r->n_out) * sizeof(*r->ports));
        ring_restore(&r->in);
        ring_restore(&r->out);
}

int rig_create(const struct rig_params *p, struct rig **ret)
{
        struct layout l;
        struct rig *r;
        int fd, e;

        if (p->n_in > RIG_PORTS_MAX || p->n_out > RIG_PORTS_MAX || (!p->n_in && !p->n_out) ||
            (p->n_in && !p->in) || (p->n_out && !p->out) || (unsigned)p->policy > RIG_PAUSE)
                return -EINVAL;
        for (uint32_t i = 0; i < p->n_in + p->n_out; i++)
                if (!port_ok(i < p->n_in ? &p->in[i] : &p->out[i - p->n_in]))
                        return -EINVAL;
        plan(p->n_in, p->n_out, &l);
        fd = memfd_create(p->name ? p->name : "fmud-rig", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return -errno;
        r = alloc(fd, true, p->n_in, p->n_out);
        if (!r) {
                e = -ENOMEM;
                goto out_close;
        }
        r->policy = (uint32_t)p->policy;
        r->timeout_ms = p->timeout_ms;
        r->ports = malloc((p->n_in + p->n_out) * sizeof(*r->ports));
        if (!r->ports) {
                e = -ENOMEM;
                goto out_free;
        }
        if (ftruncate(fd, (off_t)l.total) < 0 ||
            /* Sealed before a rig sees it: it cannot pull pages from under the master. */
            fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
                e = -errno;
                goto out_free;
        }
        r->size = (size_t)l.total;
        r->base = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (r->base == MAP_FAILED) {
                e = -errno;
                goto out_free;
        }
        e = format(r, p, &l);
        if (e < 0)
                goto out_unmap;
        *ret = r;
        return 0;

out_unmap:
        (void) munmap(r->base, r->size);
out_free:
        free(r->ports);
        free(r->buf);
        free(r);
out_close:
        close(fd);
        return e;
}

/* The rig's checks of the header, each field read once. */
static int check(const struct rig_hdr *h, size_t size, struct layout *l, uint32_t *n_in,
                 uint32_t *n_out)
{
        if (h->magic != RIG_MAGIC)
                return -EBADMSG;
        if (h->version != RIG_VERSION)
                return -EPROTONOSUPPORT;
        *n_in = h->n_in;
        *n_out = h->n_out;
        if (*n_in > RIG_PORTS_MAX || *n_out > RIG_PORTS_MAX || (!*n_in && !*n_out))
                return -ERANGE;
        plan(*n_in, *n_out, l);
        /* The layout is a function of the port counts: anything else is refused. */
        if (h->total_size != size || l->total != size || h->ports_off != l->ports_off ||
            h->in_off != l->in_off || h->in_size != l->in_size || h->out_off != l->out_off ||
            h->out_size != l->out_size)
                return -ERANGE;
        return 0;
}

/*
 * A ring whose positions are broken, opened again by one side at the
 * other's: a consumer moves its head to the producer's tail (what was
 * unread is lost), a producer its tail to the consumer's head (what was
 * unread is dropped). Each moves its own position only.
 */
static int reopen_at_peer(struct ring *ring, struct ring_hdr *h, size_t size,
                          enum ring_role role)
{
        if (role == RING_CONSUMER)
                wait_publish(&h->head, atomic_load_explicit(&h->tail, memory_order_acquire),
                             &h->space);
        else
                wait_publish(&h->tail, atomic_load_explicit(&h->head, memory_order_acquire),
                             &h->data);
        return ring_init(ring, h, size, role);
}

/* ring_init(), or where only the positions are broken, reopen_at_peer(). */
static int open_side(struct ring *ring, size_t size, enum ring_role role)
{
        struct ring_hdr *h = (struct ring_hdr *)ring->hdr;
        int e = ring_init(ring, h, size, role);

        return e == -EPROTO ? reopen_at_peer(ring, h, size, role) : e;
}

int rig_open_rings(struct rig *r)
{
        int e = open_side(&r->in, r->in_size, RING_PRODUCER);

        return e < 0 ? e : open_side(&r->out, r->out_size, RING_CONSUMER);
}

int rig_attach(int fd, struct rig **ret)
{
        struct layout l;
        struct stat st;
        struct rig *r;
        uint32_t n_in, n_out;
        int seals, e;
        void *base;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (st.st_size < (off_t)sizeof(struct rig_hdr) || st.st_size > (off_t)(64u << 20))
                return -EMSGSIZE;
        seals = fcntl(fd, F_GET_SEALS);
        if (seals < 0)
                return -errno;
        if ((seals & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW))
                return -EPERM;
        base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (base == MAP_FAILED)
                return -errno;
        e = check(base, (size_t)st.st_size, &l, &n_in, &n_out);
        if (e < 0)
                goto out_unmap;
        r = alloc(fd, false, n_in, n_out);
        if (!r) {
                e = -ENOMEM;
                goto out_unmap;
        }
        r->base = base;
        r->size = (size_t)st.st_size;
        r->ports = malloc((n_in + n_out) * sizeof(*r->ports));
        e = -ENOMEM;
        if (!r->ports)
                goto out_free;
        memcpy(r->ports, (unsigned char *)base + l.ports_off, (n_in + n_out) * sizeof(*r->ports));
        e = -ERANGE;
        for (uint32_t i = 0; i < n_in + n_out; i++)
                if (!port_ok(&r->ports[i]))
                        goto out_free;
        r->in_size = l.in_size;
        r->out_size = l.out_size;
        r->in.hdr = (struct ring_hdr *)(r->base + l.in_off);
        r->out.hdr = (struct ring_hdr *)(r->base + l.out_off);
        if ((e = rig_open_rings(r)) < 0)
                goto out_free;
        if (r->in.max_record < r->in_rec || r->out.max_record < r->out_rec) {
                e = -ERANGE;
                goto out_free;
        }
        *ret = r;
        return 0;

out_free:
        free(r->ports);
        free(r->buf);
        free(r);
out_unmap:
        (void) munmap(base, (size_t)st.st_size);
        return e;
}

void rig_close(struct rig *r)
{
        if (!r)
                return;
        if (r->base != MAP_FAILED) {
                rig_claim_release(r);
                (void) munmap(r->base, r->size);
        }
        free(r->ports);
        if (r->fd >= 0)
                close(r->fd);
        if (r->peer_fd >= 0)
                close(r->peer_fd);
        free(r->buf);
        free(r);
}

int rig_fd(const struct rig *r)
{
        return r->fd;
}

const struct rig_port *rig_ports(const struct rig *r, bool out, uint32_t *ret_n)
{
        *ret_n = out ? r->n_out : r->n_in;
        return out ? r->ports + r->n_in : r->ports;
}

static _Atomic uint64_t *heartbeat(const struct rig *r)
{
        return &((struct rig_hdr *)r->base)->heartbeat;
}

static bool ended(const struct rig *r)
{
        return atomic_load_explicit(&rig_hdr_of(r)->ended, memory_order_acquire) != 0 ||
               atomic_load_explicit(&r->peer_gone, memory_order_acquire);
}

void rig_watch_peer(struct rig *r, int pidfd)
{
        if (r->peer_fd >= 0)
                close(r->peer_fd);
        r->peer_fd = pidfd;
}

/*
 * Whether the daemon that handed the channel over has ended (killed: it
 * could not set ended): its pidfd is readable then. A system call, so only
 * where the rig waits anyway, between two slices.
 */
static bool peer_ended(struct rig *r)
{
        struct pollfd p = { .fd = r->peer_fd, .events = POLLIN };
        bool gone;

        if (r->peer_fd < 0 || atomic_load_explicit(&r->peer_gone, memory_order_acquire))
                return atomic_load_explicit(&r->peer_gone, memory_order_acquire);
        gone = poll(&p, 1, 0) == 1 && (p.revents & (POLLIN | POLLHUP | POLLERR));
        if (gone)
                atomic_store_explicit(&r->peer_gone, true, memory_order_release);
        return gone;
}

void rig_end(struct rig *r)
{
        if (r && r->engine) {
                atomic_store(&r->ended, true);
                atomic_store_explicit(&rig_hdr_of(r)->ended, 1, memory_order_release);
        }
}

uint64_t rig_heartbeat(const struct rig *r)
{
        return atomic_load_explicit(heartbeat(r), memory_order_relaxed);
}

/*
 * The ring broke (the rig wrote garbage): everything it published is
 * dropped, head moved to its tail (head is ours to write), and the ring
 * opened again there, so the rig's next write is read whatever came before.
 */
static int reopen_in(struct rig *r)
{
        struct layout l;

        plan(r->n_in, r->n_out, &l);
        (void) reopen_at_peer(&r->in, (struct ring_hdr *)(r->base + l.in_off), l.in_size,
                              RING_CONSUMER);
        return -EPROTO;
}

int rig_take(struct rig *r, uint64_t point, uint64_t *ret_seq, uint64_t *ret_point, double *vals)
{
        const struct rig_in_rec *rec;
        const void *p;
        size_t len;
        int e = ring_peek(&r->in, &p, &len);

        if (e == -EAGAIN)
                return e;
        if (e < 0)
                return reopen_in(r);
        if (len != r->in_rec) {
                (void) ring_release(&r->in);
                return -EBADMSG;
        }
        /* The rig may rewrite the record while it is read: copy once, check the copy. */
        memcpy(r->buf, p, len);
        rec = (const struct rig_in_rec *)r->buf;
        if (rec->point > point && rec->point - point <= RIG_RING_SLOTS)
                return -EAGAIN;         /* for a later point: it stays in the ring */
        (void) ring_release(&r->in);
        if (rec->point > point)
                return -EBADMSG;        /* beyond the horizon: it would block the ring */
        memcpy(vals, r->buf + sizeof(*rec), r->n_in * sizeof(double));
        for (uint32_t i = 0; i < r->n_in; i++)
                if (!rig_value_ok(r->ports[i].type, vals[i]))
                        return -EBADMSG;
        r->seq = rec->seq;
        *ret_seq = rec->seq;
        *ret_point = rec->point;
        return 0;
}

/*
 * The rig broke the point ring (its head is the rig's to write): it is
 * opened again from the engine's own tail, with nothing unread, so the
 * next point goes out and a rig that attaches again reads it.
 */
static int reopen_out(struct rig *r)
{
        struct ring_hdr *h;
        struct layout l;
        uint64_t tail = r->out.mine;

        plan(r->n_in, r->n_out, &l);
        h = (struct ring_hdr *)(r->base + l.out_off);
        wait_publish(&h->tail, tail, &h->data);
        wait_publish(&h->head, tail, &h->space);
        return ring_init(&r->out, h, l.out_size, RING_PRODUCER);
}

int rig_publish(struct rig *r, uint64_t point, double time, const double *vals)
{
        struct rig_out_rec *rec;
        void *p;
        int e = ring_reserve(&r->out, r->out_rec, &p);

        if (e < 0 && e != -ENOSPC && reopen_out(r) == 0)
                e = ring_reserve(&r->out, r->out_rec, &p);
        if (e < 0)
                return e;
        rec = p;
        rec->point = point;
        rec->time = time;
        memcpy((unsigned char *)p + sizeof(*rec), vals, r->n_out * sizeof(double));
        return ring_commit(&r->out, r->out_rec);
}

void rig_beat(struct rig *r)
{
        if (!r->beat_by_caller)
                atomic_store_explicit(heartbeat(r), rig_now_ns(), memory_order_relaxed);
}

uint32_t rig_timeout_ms(const struct rig *r)
{
        /* One read: the mapping is shared, the value is checked as it was read. */
        const struct rig_hdr *h = (const struct rig_hdr *)r->base;
        uint32_t t = atomic_load_explicit((const _Atomic uint32_t *)&h->timeout_ms,
                                          memory_order_relaxed);

        return t >= 1 && t <= RIG_TIMEOUT_MAX_MS ? t : RIG_TIMEOUT_MAX_MS;
}

void rig_beat_by_caller(struct rig *r)
{
        r->beat_by_caller = true;
}

void rig_beat_at(struct rig *r, uint64_t ns)
{
        atomic_store_explicit(heartbeat(r), ns, memory_order_relaxed);
}

int rig_write(struct rig *r, uint64_t point, const double *vals)
{
        struct rig_in_rec *rec;
        void *p;
        int e;

        if (rig_claim_lost(r))
                return -EOWNERDEAD;
        if (ended(r))
                return -EPIPE;
        rig_beat(r);
        e = ring_reserve(&r->in, r->in_rec, &p);
        if (e < 0)
                return e;
        rec = p;
        rec->seq = ++r->seq;
        rec->point = point;
        memcpy((unsigned char *)p + sizeof(*rec), vals, r->n_in * sizeof(double));
        return ring_commit(&r->in, r->in_rec);
}

uint64_t rig_beat_slice_ns(const struct rig *r)
{
        uint64_t quarter = (uint64_t)rig_timeout_ms(r) * 1000000ull / 4;

        return quarter < BEAT_SLICE_NS ? quarter : BEAT_SLICE_NS;
}

int rig_wait(struct rig *r, const struct timespec *deadline)
{
        for (;;) {
                const void *p;
                size_t len;
                struct timespec slice;
                int e;

                if (rig_claim_lost(r))
                        return -EOWNERDEAD;
                rig_beat(r);
                e = ring_peek(&r->out, &p, &len);
                if (e != -EAGAIN)
                        return e;
                /* Ended after a last point (rig_read()): that point is still to be read. */
                if (ended(r)) {
                        e = ring_peek(&r->out, &p, &len);
                        return e == -EAGAIN ? -EPIPE : e;
                }
                /* Never sleep past a heartbeat's slice: the master must see the rig alive. */
                wait_deadline_in(&slice, rig_beat_slice_ns(r));
                if (deadline && (deadline->tv_sec < slice.tv_sec ||
                                 (deadline->tv_sec == slice.tv_sec &&
                                  deadline->tv_nsec < slice.tv_nsec)))
                        slice = *deadline;
                e = ring_wait_readable(&r->out, &r->wait, &slice);
                if (e == -ETIMEDOUT && peer_ended(r))
                        continue;       /* ended: the last points, then -EPIPE */
                if (e == -ETIMEDOUT && (!deadline || slice.tv_sec != deadline->tv_sec ||
                                        slice.tv_nsec != deadline->tv_nsec))
                        continue;
                if (e < 0) {
                        if (rig_claim_lost(r))
                                return -EOWNERDEAD;
                        rig_beat(r);
                        return e;
                }
        }
}

int rig_read(struct rig *r, uint64_t *ret_point, double *ret_time, double *vals,
             uint64_t *ret_skipped)
{
        uint64_t skipped = 0;
        bool have = false;
        const void *p;
        size_t len;
        int e;

        if (rig_claim_lost(r))
                return -EOWNERDEAD;
        /*
         * Ended is stored after the last point (release): seen ended with
         * nothing read, the ring is looked at once more, so that a point
         * published just before the end is read, not lost to the -EPIPE.
         */
        for (bool end = false;; end = true) {
                while ((e = ring_peek(&r->out, &p, &len)) == 0) {
                        if (len != r->out_rec)
                                return -EBADMSG;
                        if (have)
                                skipped++;
                        memcpy(r->buf, p, len);
                        (void) ring_release(&r->out);
                        have = true;
                }
                if (e == -EPROTO && !have) {
                        /*
                         * Its positions broken (a rig before this one wrote
                         * over them, rig_restore()): read on from the
                         * engine's tail, what was in flight lost.
                         */
                        e = reopen_at_peer(&r->out, (struct ring_hdr *)r->out.hdr, r->out_size,
                                           RING_CONSUMER);
                        return e < 0 ? e : -EAGAIN;
                }
                if (e != -EAGAIN)
                        return e;
                if (have)
                        break;
                if (end)
                        return -EPIPE;
                if (!ended(r))
                        return -EAGAIN;
        }
        *ret_point = ((const struct rig_out_rec *)r->buf)->point;
        *ret_time = ((const struct rig_out_rec *)r->buf)->time;
        memcpy(vals, r->buf + sizeof(struct rig_out_rec), r->n_out * sizeof(double));
        *ret_skipped = skipped;
        return 0;
}
