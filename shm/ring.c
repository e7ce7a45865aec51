/*
 * ring: SPSC ring of fixed-size slots carrying length-prefixed records.
 * The layout, the record format and the error contract are in ring.h.
 *
 * DESIGN: each side trusts only what it keeps in its private struct ring.
 * The peer's index is loaded (acquire), checked against the last value seen
 * and against this side's own index, and only then used; a record header is
 * loaded field by field, once, into locals that are checked before any
 * pointer is formed from them. Every slot address is (index & mask) times
 * the slot size with a slot count that has been checked against the end of
 * the slot array, so no value from shared memory can reach outside it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "shm/ring.h"

/* Lines of the next record fetched for writing after a commit, at most (next_lines()). */
#define NEXT_LINES_MAX  8u

static int is_pow2(uint32_t v)
{
        return v && !(v & (v - 1));
}

static int geometry_ok(uint32_t slot_size, uint32_t capacity)
{
        return is_pow2(slot_size) && slot_size >= RING_SLOT_MIN && slot_size <= RING_SLOT_MAX &&
               is_pow2(capacity) && capacity >= RING_CAP_MIN && capacity <= RING_CAP_MAX &&
               (uint64_t)slot_size * capacity <= RING_BYTES_MAX;
}

size_t ring_bytes(uint32_t slot_size, uint32_t capacity)
{
        if (!geometry_ok(slot_size, capacity))
                return 0;
        return sizeof(struct ring_hdr) + (size_t)slot_size * capacity;
}

/*
 * A salt for the stamps: random where the kernel has entropy to spare, else
 * the clock and an address, which still differ from anything a payload is
 * likely to hold by chance.
 */
static uint64_t new_salt(const void *mem)
{
        uint64_t s = 0;
        struct timespec ts;

        if (getrandom(&s, sizeof(s), GRND_NONBLOCK) != (ssize_t)sizeof(s)) {
                (void) clock_gettime(CLOCK_MONOTONIC, &ts);
                s = ((uint64_t)ts.tv_nsec << 32 ^ (uint64_t)ts.tv_sec ^ (uintptr_t)mem) *
                    0x9e3779b97f4a7c15u;
        }
        return s;
}

uint32_t ring_max_record_limit(uint32_t slot_size, uint32_t capacity)
{
        if (!geometry_ok(slot_size, capacity))
                return 0;
        return capacity / 2 * slot_size - (uint32_t)sizeof(struct ring_rec);
}

int ring_format(void *mem, size_t size, const struct ring_params *p)
{
        struct ring_hdr *h = mem;
        uint32_t max_record = p->max_record;

        if (!ring_bytes(p->slot_size, p->capacity) || size != ring_bytes(p->slot_size, p->capacity))
                return -EINVAL;
        if ((uintptr_t)mem % 64)
                return -EINVAL;
        if (!max_record)
                max_record = ring_max_record_limit(p->slot_size, p->capacity);
        if (max_record > ring_max_record_limit(p->slot_size, p->capacity))
                return -EINVAL;

        memset(h, 0, sizeof(*h));
        h->magic = RING_MAGIC;
        h->version = RING_VERSION;
        h->slot_size = p->slot_size;
        h->capacity = p->capacity;
        h->max_record = max_record;
        h->salt = new_salt(mem);
        atomic_init(&h->tail, 0);
        atomic_init(&h->head, 0);
        wait_word_init(&h->data);
        wait_word_init(&h->space);
        return 0;
}

void ring_restore(const struct ring *r)
{
        struct ring_hdr *h = r->hdr;

        h->magic = RING_MAGIC;
        h->version = RING_VERSION;
        h->slot_size = r->slot_size;
        h->capacity = r->capacity;
        h->max_record = r->max_record;
        h->reserved0 = 0;
        h->salt = r->salt;
        memset(h->reserved, 0, sizeof(h->reserved));
}

/* Whether this cpu has PREFETCHW (CPUID 0x80000001, ECX bit 8); asked once. */
static bool cpu_prefetchw(void)
{
#if defined(__x86_64__)
        static _Atomic int known = -1;
        int v = atomic_load_explicit(&known, memory_order_relaxed);
        unsigned a, b, c, d;

        if (v < 0) {
                v = __get_cpuid(0x80000001u, &a, &b, &c, &d) && (c & (1u << 8));
                atomic_store_explicit(&known, v, memory_order_relaxed);
        }
        return v;
#else
        return false;
#endif
}

int ring_init(struct ring *r, void *mem, size_t size, enum ring_role role)
{
        struct ring_hdr *h = mem;
        uint32_t magic, version, slot_size, capacity, max_record;
        uint64_t head, tail, salt;

        if ((uintptr_t)mem % 64 || size < sizeof(*h))
                return -ERANGE;
        if (role != RING_PRODUCER && role != RING_CONSUMER)
                return -EINVAL;
        /* Each field once, into a local: the checks below and the use agree. */
        magic = h->magic;
        version = h->version;
        slot_size = h->slot_size;
        capacity = h->capacity;
        max_record = h->max_record;
        salt = h->salt;
        if (magic != RING_MAGIC)
                return -EBADMSG;
        if (version != RING_VERSION)
                return -EPROTONOSUPPORT;
        if (!ring_bytes(slot_size, capacity) || ring_bytes(slot_size, capacity) != size ||
            max_record > ring_max_record_limit(slot_size, capacity))
                return -ERANGE;
        /* Pair with the peer's release (seq_cst) stores in wait_publish(). */
        tail = atomic_load_explicit(&h->tail, memory_order_acquire);
        head = atomic_load_explicit(&h->head, memory_order_acquire);
        if (tail - head > capacity)
                return -EPROTO;

        *r = (struct ring){
                .hdr = h,
                .slots = (unsigned char *)mem + sizeof(*h),
                .slot_size = slot_size,
                .slot_shift = (uint32_t)__builtin_ctz(slot_size),
                .capacity = capacity,
                .max_record = max_record,
                .salt = salt,
                .role = role,
                .mine = role == RING_PRODUCER ? tail : head,
                .peer = role == RING_PRODUCER ? head : tail,
                .published = tail,
                .prefetchw = role == RING_PRODUCER && cpu_prefetchw(),
        };
        return 0;
}

static uint64_t slots_for(const struct ring *r, uint64_t len)
{
        return (len + sizeof(struct ring_rec) + r->slot_size - 1) >> r->slot_shift;
}

static unsigned char *slot_at(const struct ring *r, uint64_t index)
{
        return r->slots + ((size_t)(index & (r->capacity - 1)) << r->slot_shift);
}

/*
 * What the producer writes into the header of a record that starts at slot
 * 'index': the salted index through a 64-bit mixer (splitmix64's), so that
 * the stamps of neighbouring indices differ in every byte. A plain salted
 * index would not do: a later record's payload that overwrites the low
 * bytes of a stamp left from two laps before can make it read as this
 * lap's stamp (the two-thread test in tests/test_ring.c met that about
 * once in 500 000 records). The top bit keeps every stamp nonzero, so a
 * zeroed slot never passes for a record.
 */
uint64_t ring_stamp(const struct ring *r, uint64_t index)
{
        uint64_t x = index ^ r->salt;

        x = (x ^ x >> 30) * 0xbf58476d1ce4e5b9u;
        x = (x ^ x >> 27) * 0x94d049bb133111ebu;
        return (x ^ x >> 31) | 1ull << 63;
}

static _Atomic uint64_t *stamp_at(const struct ring *r, uint64_t index)
{
        return &((struct ring_rec *)slot_at(r, index))->stamp;
}

static int broken(struct ring *r, int err)
{
        r->err = err;
        r->pend = 0;
        return err;
}

/*
 * Load the peer's index and accept it only if it did not move backwards
 * and stays within one capacity of ours, on the correct side. A consumer
 * that took records on their stamps may find tail behind its own index,
 * by as many commits as the producer holds (ring_commit_held()).
 */
static int refresh_peer(struct ring *r)
{
        uint64_t v, ahead;

        if (r->role == RING_PRODUCER) {
                /* Pairs with the consumer's seq_cst store of head in ring_release(). */
                v = atomic_load_explicit(&r->hdr->head, memory_order_acquire);
                ahead = r->mine - v;            /* slots in use; > capacity if head passed tail */
        } else {
                /* Pairs with the producer's seq_cst store of tail in publish(). */
                v = atomic_load_explicit(&r->hdr->tail, memory_order_acquire);
                ahead = v - r->mine;            /* slots published; > capacity if tail is wild */
                if ((int64_t)ahead < 0)
                        ahead = 0;              /* not yet past records taken on their stamps */
        }
        if ((int64_t)(v - r->peer) < 0 || ahead > r->capacity)
                return broken(r, -EPROTO);
        r->peer = v;
        return 0;
}

/* Consumer: slots published past 'mine' by the last tail read, 0 when none. */
static uint64_t published(const struct ring *r)
{
        return (int64_t)(r->peer - r->mine) > 0 ? r->peer - r->mine : 0;
}

/* Consumer: has the producer stamped a record at 'mine'? */
static int stamped(const struct ring *r)
{
        /* Pairs with the release store of the stamp in stamp_commit(). */
        return atomic_load_explicit(stamp_at(r, r->mine), memory_order_acquire) ==
               ring_stamp(r, r->mine);
}

int ring_reserve(struct ring *r, size_t len, void **ret_buf)
{
        uint64_t need, idx, pad;
        int err;

        if (r->err)
                return r->err;
        if (r->role != RING_PRODUCER)
                return -EINVAL;
        if (len > r->max_record)
                return -EMSGSIZE;
        need = slots_for(r, len);
        idx = r->mine & (r->capacity - 1);
        /* Never wrap a record: pad to the end of the array and start at slot 0. */
        pad = idx + need > r->capacity ? r->capacity - idx : 0;
        if (r->mine - r->peer + pad + need > r->capacity) {
                err = refresh_peer(r);
                if (err < 0)
                        return err;
                if (r->mine - r->peer + pad + need > r->capacity)
                        return -ENOSPC;
        }
        r->pend = 1;
        r->pend_pad = (uint32_t)pad;
        r->pend_start = r->mine + pad;
        r->pend_len = (uint32_t)len;
        *ret_buf = slot_at(r, r->pend_start) + sizeof(struct ring_rec);
        return 0;
}

/*
 * After a commit: fetch for writing the lines the next record takes if it
 * is as long as this one (the usual case: a channel's records have a few
 * shapes), up to NEXT_LINES_MAX. The consumer read those slots a lap ago,
 * so the producer's stores to them would each wait for the line; fetched
 * now, while the producer goes on to its next work, the stores of the next
 * record find them here, and its publish does not wait for them. Only
 * slots known to be free: the others the consumer may still be reading.
 * A hint: it changes nothing in memory.
 */
static void next_lines(const struct ring *r, uint64_t slots)
{
#if defined(__x86_64__)
        uint64_t at = r->mine & (r->capacity - 1);
        uintptr_t a, end;

        if (!r->prefetchw || r->mine + slots - r->peer > r->capacity)
                return;
        if (at + slots > r->capacity)
                slots = r->capacity - at;       /* it would start at slot 0: not guessed */
        a = (uintptr_t)slot_at(r, r->mine);
        end = a + (slots << r->slot_shift);
        if (end - a > (uintptr_t)NEXT_LINES_MAX * 64)
                end = a + (uintptr_t)NEXT_LINES_MAX * 64;
        for (; a < end; a += 64)
                __asm__ volatile("prefetchw (%0)" : : "r"(a) : "memory");
#else
        (void) r;
        (void) slots;
#endif
}

/*
 * Move the lines of [p, p + len) from this core's caches to the shared
 * one (CLDEMOTE), so that the consumer's reads of a record need not snoop
 * the producer's core. A hint: cpus without it execute it as a NOP. Only
 * while the consumer runs on another cpu (its cpu as of its last release
 * of head, a hint it writes): on this one the lines were closer as they
 * were.
 */
static void demote(const struct ring *r, uint32_t cpu, const void *p, size_t len)
{
        if (!wait_waker_elsewhere(&r->hdr->space, cpu))
                return;
#if defined(__x86_64__)
        uintptr_t end = (uintptr_t)p + len;

        for (uintptr_t a = (uintptr_t)p & ~(uintptr_t)63; a < end; a += 64)
                __asm__ volatile("cldemote (%0)" : : "r"(a) : "memory");
#else
        (void) p;
        (void) len;
#endif
}

/* Stamp the reserved record: its slots in *ret_slots, the cpu for the publish in *ret_cpu. */
static int stamp_commit(struct ring *r, size_t len, uint64_t *ret_slots, uint32_t *ret_cpu)
{
        struct ring_rec *rec;
        uint64_t slots;
        uint32_t cpu;

        if (r->err)
                return r->err;
        if (r->role != RING_PRODUCER || !r->pend || len > r->pend_len)
                return -EINVAL;
        /*
         * len and kind relaxed: ordered before the consumer's reads by the
         * stamp's release store (pairs with the acquire in stamped()) and
         * by the tail store below. The padding is stamped first, so the
         * consumer never meets the data's stamp before the padding's.
         */
        if (r->pend_pad) {
                rec = (struct ring_rec *)slot_at(r, r->mine);
                atomic_store_explicit(&rec->len, 0, memory_order_relaxed);
                atomic_store_explicit(&rec->kind, RING_REC_PAD, memory_order_relaxed);
                atomic_store_explicit(&rec->stamp, ring_stamp(r, r->mine), memory_order_release);
        }
        rec = (struct ring_rec *)slot_at(r, r->pend_start);
        atomic_store_explicit(&rec->len, (uint32_t)len, memory_order_relaxed);
        atomic_store_explicit(&rec->kind, RING_REC_DATA, memory_order_relaxed);
        atomic_store_explicit(&rec->stamp, ring_stamp(r, r->pend_start), memory_order_release);
        cpu = wait_cpu();       /* once, for both the push below and the publish */
        demote(r, cpu, rec, sizeof(*rec) + len);
        slots = slots_for(r, len);
        r->mine = r->pend_start + slots;
        r->pend = 0;
        *ret_slots = slots;
        *ret_cpu = cpu;
        return 0;
}

/* Publishes the slots; pairs with the acquire of tail in refresh_peer() and wait_until_ne(). */
static void publish(struct ring *r, uint32_t cpu)
{
        wait_publish_from(&r->hdr->tail, r->mine, &r->hdr->data, cpu);
        r->published = r->mine;
}

int ring_commit(struct ring *r, size_t len)
{
        uint64_t slots;
        uint32_t cpu;
        int err = stamp_commit(r, len, &slots, &cpu);

        if (err)
                return err;
        publish(r, cpu);
        next_lines(r, slots);
        return 0;
}

int ring_commit_held(struct ring *r, size_t len)
{
        uint64_t slots;
        uint32_t cpu;
        int err = stamp_commit(r, len, &slots, &cpu);

        if (err)
                return err;
        /*
         * A consumer asleep sees no stamp: publish for it. Relaxed, without
         * the fence this saves, so a consumer falling asleep just now may
         * be missed; it wakes at the flush, or at its deadline, and finds
         * the record on its stamp then (wait.c, sleep_on()).
         */
        if (atomic_load_explicit(&r->hdr->data.sleepers, memory_order_relaxed) != 0)
                publish(r, cpu);
        next_lines(r, slots);
        return 0;
}

void ring_flush(struct ring *r)
{
        if (!r->err && r->role == RING_PRODUCER && r->published != r->mine)
                publish(r, wait_cpu());
}

static int push(struct ring *r, const void *buf, size_t len, bool held)
{
        void *dst;
        int err;

        err = ring_reserve(r, len, &dst);
        if (err < 0)
                return err;
        if (len)
                memcpy(dst, buf, len);
        return held ? ring_commit_held(r, len) : ring_commit(r, len);
}

int ring_push(struct ring *r, const void *buf, size_t len)
{
        return push(r, buf, len, false);
}

int ring_push_held(struct ring *r, const void *buf, size_t len)
{
        return push(r, buf, len, true);
}

int ring_peek(struct ring *r, const void **ret_buf, size_t *ret_len)
{
        const struct ring_rec *rec;
        uint64_t avail, idx, n;
        uint32_t kind, len;
        bool on_stamp;
        int err;

        if (r->err)
                return r->err;
        if (r->role != RING_CONSUMER)
                return -EINVAL;
        for (;;) {
                if (r->pend) {
                        *ret_buf = slot_at(r, r->pend_start) + sizeof(struct ring_rec);
                        *ret_len = r->pend_len;
                        return 0;
                }
                /* Tail first when it is known to cover more; else the stamp, else tail again. */
                avail = published(r);
                if (!avail && !stamped(r)) {
                        err = refresh_peer(r);
                        if (err < 0)
                                return err;
                        avail = published(r);
                        if (!avail)
                                return -EAGAIN;
                }
                /* A stamped record proves only itself: bounded by the array below. */
                on_stamp = !avail;
                if (on_stamp)
                        avail = r->capacity;
                idx = r->mine & (r->capacity - 1);
                rec = (const struct ring_rec *)slot_at(r, r->mine);
                /* Once each, into locals: the peer may rewrite the header under us. */
                kind = atomic_load_explicit(&rec->kind, memory_order_relaxed);
                len = atomic_load_explicit(&rec->len, memory_order_relaxed);
                if (kind == RING_REC_PAD) {
                        /* Padding runs to the end of the array, and never from slot 0. */
                        n = r->capacity - idx;
                        if (idx == 0 || n > avail)
                                return broken(r, -EBADMSG);
                        r->mine += n;
                        /* Pairs with the producer's acquire of head in refresh_peer(). */
                        wait_publish(&r->hdr->head, r->mine, &r->hdr->space);
                        continue;
                }
                if (kind != RING_REC_DATA)
                        return broken(r, -EBADMSG);
                if (len > r->max_record)
                        return broken(r, -EMSGSIZE);
                n = slots_for(r, len);
                if (idx + n > r->capacity || n > avail)
                        return broken(r, -EBADMSG);
                r->pend = 1;
                r->pend_start = r->mine;
                r->pend_slots = (uint32_t)n;
                r->pend_len = len;
        }
}

int ring_release(struct ring *r)
{
        if (r->err)
                return r->err;
        if (r->role != RING_CONSUMER || !r->pend)
                return -EINVAL;
        r->mine = r->pend_start + r->pend_slots;
        r->pend = 0;
        /* Hands the slots back; pairs with the acquire of head in refresh_peer() and wait_until_ne(). */
        wait_publish(&r->hdr->head, r->mine, &r->hdr->space);
        return 0;
}

int ring_pop(struct ring *r, void *buf, size_t size)
{
        const void *src;
        size_t len;
        int err;

        err = ring_peek(r, &src, &len);
        if (err < 0)
                return err;
        if (len > size)
                return -ENOBUFS;
        if (len)
                memcpy(buf, src, len);
        err = ring_release(r);
        if (err < 0)
                return err;
        return (int)len;
}

int ring_wait_readable(struct ring *r, const struct wait_policy *p, const struct timespec *deadline)
{
        if (r->err)
                return r->err;
        if (r->role != RING_CONSUMER)
                return -EINVAL;
        if (r->pend || published(r))
                return 0;
        /*
         * Poll the stamp where the next record starts; tail, which the
         * producer stores next, is what a sleeper waits on: for a change
         * from the value last read, so that a tail held behind (a commit
         * between its stamp and its tail, or ring_commit_held()) still lets
         * the deadline pass.
         */
        return wait_until_stamp(&r->hdr->tail, r->peer, stamp_at(r, r->mine), ring_stamp(r, r->mine),
                                &r->hdr->data, p, deadline);
}

int ring_wait_writable(struct ring *r, const struct wait_policy *p, const struct timespec *deadline)
{
        if (r->err)
                return r->err;
        if (r->role != RING_PRODUCER)
                return -EINVAL;
        return wait_until_ne(&r->hdr->head, r->peer, &r->hdr->space, p, deadline);
}
