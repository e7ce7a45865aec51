/*
 * channel: create (daemon) or attach (worker) the memfd that one worker
 * shares with the daemon, and lay out its rings and side buffer.
 *
 * DESIGN: memfd layout, offsets from 0:
 *      0                 struct chan_hdr (128 bytes)
 *      req_off  (64-al.) request ring: struct ring_hdr + slots
 *      rep_off  (64-al.) reply/event ring: struct ring_hdr + slots
 *      side_off (page)   side buffer
 *      total_size        rounded up to a page
 * The daemon keeps only what it computed itself; the worker re-derives
 * nothing from trust: it checks each offset and size once, from a local
 * copy of the header.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shm/channel.h"

#define PAGE    4096u

/* Sizes are uint64_t in shared memory and size_t in mmap(): one and the same here. */
static_assert(sizeof(size_t) == sizeof(uint64_t), "channels need a 64-bit address space");

enum chan_side {
        CHAN_DAEMON,
        CHAN_WORKER,
};

struct chan {
        int fd;
        enum chan_side side;
        void *base;             /* MAP_FAILED when not mapped */
        size_t size;
        struct chan_hdr *hdr;
        struct ring tx, rx;
        unsigned char *side_buf;
        uint64_t side_size;
};

struct layout {
        uint64_t total;
        uint64_t req_off, req_size;
        uint64_t rep_off, rep_size;
        uint64_t side_off, side_size;
};

static uint64_t align_up(uint64_t v, uint64_t a)
{
        return (v + a - 1) & ~(a - 1);
}

static int plan(const struct chan_params *p, struct layout *ret)
{
        struct layout l;
        uint32_t max_record = p->max_record;

        l.req_size = ring_bytes(p->slot_size, p->req_slots);
        l.rep_size = ring_bytes(p->slot_size, p->rep_slots);
        if (!l.req_size || !l.rep_size || p->side_size > CHAN_SIDE_MAX)
                return -EINVAL;
        if (max_record && (max_record > ring_max_record_limit(p->slot_size, p->req_slots) ||
                           max_record > ring_max_record_limit(p->slot_size, p->rep_slots)))
                return -EINVAL;
        l.req_off = align_up(sizeof(struct chan_hdr), 64);
        l.rep_off = align_up(l.req_off + l.req_size, 64);
        l.side_off = align_up(l.rep_off + l.rep_size, PAGE);
        l.side_size = p->side_size;
        l.total = align_up(l.side_off + l.side_size, PAGE);
        *ret = l;
        return 0;
}

/* [off, off + size) inside [0, total), 'align'-aligned, starting at or after 'after'. */
static int region_ok(uint64_t off, uint64_t size, uint64_t align, uint64_t after, uint64_t total)
{
        return off % align == 0 && off >= after && off <= total && size <= total - off;
}

static int check_layout(const struct layout *l)
{
        if (!region_ok(l->req_off, l->req_size, 64, sizeof(struct chan_hdr), l->total) ||
            !region_ok(l->rep_off, l->rep_size, 64, l->req_off + l->req_size, l->total) ||
            !region_ok(l->side_off, l->side_size, PAGE, l->rep_off + l->rep_size, l->total) ||
            l->side_size > CHAN_SIDE_MAX)
                return -ERANGE;
        return 0;
}

static struct chan *chan_alloc(int fd, enum chan_side side)
{
        struct chan *c = calloc(1, sizeof(*c));

        if (!c)
                return NULL;
        c->fd = fd;
        c->side = side;
        c->base = MAP_FAILED;
        return c;
}

/* Point the struct at its parts and open both rings from this side's point of view. */
static int bind_parts(struct chan *c, const struct layout *l)
{
        unsigned char *b = c->base;
        enum ring_role req_role = c->side == CHAN_DAEMON ? RING_PRODUCER : RING_CONSUMER;
        enum ring_role rep_role = c->side == CHAN_DAEMON ? RING_CONSUMER : RING_PRODUCER;
        struct ring req, rep;
        int r;

        r = ring_init(&req, b + l->req_off, l->req_size, req_role);
        if (r < 0)
                return r;
        r = ring_init(&rep, b + l->rep_off, l->rep_size, rep_role);
        if (r < 0)
                return r;
        c->hdr = (struct chan_hdr *)b;
        c->tx = c->side == CHAN_DAEMON ? req : rep;
        c->rx = c->side == CHAN_DAEMON ? rep : req;
        c->side_buf = l->side_size ? b + l->side_off : NULL;
        c->side_size = l->side_size;
        return 0;
}

static int format(struct chan *c, const struct chan_params *p, const struct layout *l)
{
        unsigned char *b = c->base;
        struct chan_hdr *h = c->base;
        struct ring_params rp = { .slot_size = p->slot_size, .max_record = p->max_record };
        int r;

        memset(h, 0, sizeof(*h));
        h->magic = CHAN_MAGIC;
        h->version = CHAN_VERSION;
        h->total_size = l->total;
        h->req_off = l->req_off;
        h->req_size = l->req_size;
        h->rep_off = l->rep_off;
        h->rep_size = l->rep_size;
        h->side_off = l->side_off;
        h->side_size = l->side_size;
        atomic_init(&h->active, 1);
        rp.capacity = p->req_slots;
        r = ring_format(b + l->req_off, l->req_size, &rp);
        if (r < 0)
                return r;
        rp.capacity = p->rep_slots;
        return ring_format(b + l->rep_off, l->rep_size, &rp);
}

int chan_create(const struct chan_params *p, struct chan **ret)
{
        struct layout l;
        struct chan *c;
        int fd, r;

        r = plan(p, &l);
        if (r < 0)
                return r;
        fd = memfd_create(p->name ? p->name : "fmud-chan", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return -errno;
        c = chan_alloc(fd, CHAN_DAEMON);
        if (!c) {
                r = -ENOMEM;
                goto out_close;
        }
        if (ftruncate(fd, (off_t)l.total) < 0) {
                r = -errno;
                goto out_free;
        }
        /* Sealed before the worker ever sees it: it cannot shrink the pages under our mapping. */
        if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
                r = -errno;
                goto out_free;
        }
        c->size = (size_t)l.total;
        c->base = mmap(NULL, c->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (c->base == MAP_FAILED) {
                r = -errno;
                goto out_free;
        }
        r = format(c, p, &l);
        if (r < 0)
                goto out_unmap;
        r = bind_parts(c, &l);
        if (r < 0)
                goto out_unmap;
        *ret = c;
        return fd;

out_unmap:
        (void) munmap(c->base, c->size);
out_free:
        free(c);
out_close:
        close(fd);
        return r;
}

/* Size and seals of the file behind fd, before mapping anything. */
static int check_file(int fd, uint64_t *ret_size)
{
        struct stat st;
        int seals;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(struct chan_hdr) ||
            (uint64_t)st.st_size > CHAN_SIZE_MAX)
                return -EMSGSIZE;
        seals = fcntl(fd, F_GET_SEALS);
        if (seals < 0)
                return errno == EINVAL ? -EPERM : -errno;
        if ((seals & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW))
                return -EPERM;
        *ret_size = (uint64_t)st.st_size;
        return 0;
}

int chan_attach(int fd, struct chan **ret)
{
        struct chan_hdr h;
        struct layout l;
        struct chan *c;
        uint64_t size = 0;
        int r;

        r = check_file(fd, &size);
        if (r < 0)
                return r;
        c = chan_alloc(fd, CHAN_WORKER);
        if (!c)
                return -ENOMEM;
        c->size = (size_t)size;
        c->base = mmap(NULL, c->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (c->base == MAP_FAILED) {
                r = -errno;
                goto out_free;
        }
        /* One copy of the first line: every check and every use below reads the copy. */
        memcpy(&h, c->base, offsetof(struct chan_hdr, active));
        if (h.magic != CHAN_MAGIC) {
                r = -EBADMSG;
                goto out_unmap;
        }
        if (h.version != CHAN_VERSION) {
                r = -EPROTONOSUPPORT;
                goto out_unmap;
        }
        if (h.total_size != size) {
                r = -EMSGSIZE;
                goto out_unmap;
        }
        l = (struct layout){
                .total = h.total_size,
                .req_off = h.req_off, .req_size = h.req_size,
                .rep_off = h.rep_off, .rep_size = h.rep_size,
                .side_off = h.side_off, .side_size = h.side_size,
        };
        r = check_layout(&l);
        if (r < 0)
                goto out_unmap;
        r = bind_parts(c, &l);
        if (r < 0)
                goto out_unmap;
        *ret = c;
        return 0;

out_unmap:
        (void) munmap(c->base, c->size);
out_free:
        /* The fd stays the caller's on failure. */
        free(c);
        return r;
}

void chan_close(struct chan *c)
{
        if (!c)
                return;
        if (c->base != MAP_FAILED)
                (void) munmap(c->base, c->size);
        c->base = MAP_FAILED;
        if (c->fd >= 0)
                (void) close(c->fd);
        c->fd = -1;
        free(c);
}

int chan_fd(const struct chan *c)
{
        return c->fd;
}

struct ring *chan_tx(struct chan *c)
{
        return &c->tx;
}

struct ring *chan_rx(struct chan *c)
{
        return &c->rx;
}

void *chan_side(const struct chan *c, uint64_t *ret_size)
{
        if (ret_size)
                *ret_size = c->side_size;
        return c->side_buf;
}

int chan_side_ref(const struct chan *c, uint64_t off, uint64_t len, void **ret)
{
        if (off > c->side_size || len > c->side_size - off)
                return -ERANGE;
        *ret = c->side_buf ? c->side_buf + off : NULL;
        return 0;
}

void chan_set_active(struct chan *c, uint32_t n)
{
        /* Relaxed: a hint; pairs with the relaxed load in chan_active(). */
        atomic_store_explicit(&c->hdr->active, n, memory_order_relaxed);
}

uint32_t chan_active(const struct chan *c)
{
        uint32_t n = atomic_load_explicit(&c->hdr->active, memory_order_relaxed);

        return n < 1 ? 1 : n > 65536 ? 65536 : n;
}

int chan_wait_rx(struct chan *c, const struct wait_policy *p, const struct timespec *deadline)
{
        struct wait_policy q = *p;

        if (!q.runnable)
                q.runnable = chan_active(c);
        return ring_wait_readable(&c->rx, &q, deadline);
}
