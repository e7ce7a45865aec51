/*
 * ring: a single-producer/single-consumer lock-free ring of fixed-size slots
 * in shared memory, carrying length-prefixed records.
 *
 * DESIGN
 * - The region is a struct ring_hdr followed by 'capacity' slots of
 *   'slot_size' bytes (both powers of two). Head and tail are free-running
 *   64-bit slot counters on their own cache lines; a slot is (index & mask).
 * - A record starts at a slot boundary with a struct ring_rec (length, kind,
 *   stamp) and its payload follows in the same and the next slots: a record
 *   takes ceil((16 + len) / slot_size) consecutive slots. A record never wraps:
 *   when it does not fit before the end of the slot array, the producer
 *   fills the rest with one PAD record and starts at slot 0, so every payload
 *   is contiguous and peek/reserve are zero-copy.
 * - A record's payload is at most max_record bytes, and max_record is at
 *   most half the slot array (less the record header), so a record always
 *   fits in an empty ring whatever the padding. Larger payloads go through
 *   the channel's side buffer (see channel.h).
 * - Two ways to learn that a record is there. The producer stamps each
 *   record's header with its slot index (hashed with a random salt), after
 *   the payload, and then publishes tail. The consumer polls the stamp where
 *   the next record will start: a waiting consumer then sees a record after
 *   one cache line comes over (the slot's), not two in a row (tail's, then
 *   the slot's), and the producer's tail line stays in its own cache. When
 *   the stamp is not there yet the consumer reads tail, as before. The
 *   producer stores a commit's stamps before the tail that covers them, so
 *   a tail the consumer reads may be behind its index: by one commit (a
 *   padding and a record), or by as many as a producer holds
 *   (ring_commit_held()); a tail that moves back is -EPROTO. A
 *   stamped record is checked like any other (kind, length, the end of the
 *   slot array), except against tail, which may not cover it yet. Without
 *   the salt and the hash, a payload of an earlier lap that happened to
 *   hold the next index where a stamp goes, or a stamp of an earlier lap
 *   with some of its bytes overwritten, would pass for a record.
 * - Each side keeps its own index in its private struct ring and only ever
 *   writes it to shared memory; it reads the peer's index, validates it
 *   against what it knows, and never reads its own index back. The geometry
 *   (slot size, capacity, max_record) is read from shared memory once, at
 *   ring_init(), into the private struct.
 * - Everything the peer writes is validated before use, and each length is
 *   read once into a local. A violation makes the ring broken for good: that
 *   call and every later one on this struct ring return the same error:
 *      -EPROTO    the peer's index moved backwards or too far ahead
 *      -EMSGSIZE  a record length over max_record
 *      -EBADMSG   a record (or padding) that runs past the published data
 *                 or past the end of the slot array, or of an unknown kind
 * - Full ring: push/reserve return -ENOSPC (the record may fit later, after
 *   the consumer releases). Empty ring: pop/peek return -EAGAIN.
 *
 * - Indexes are published with a seq_cst store (wait_publish()). A release
 *   store would drop the worker's costliest instruction (the xchg waits
 *   for the record's stores to drain: 14 to 18% of its samples in a
 *   1,000,000-point CSV run), but without a store-load fence the sleeper
 *   protocol of wait.c can lose a wake-up, and the fence that would fix it
 *   (membarrier before every sleep) costs microseconds on each sleep.
 *   Measured and not kept either: publishing the consumer's index once per
 *   quarter ring, and prefetching the next reply while one is worked on.
 *
 * Threads: one producer thread and one consumer thread (in one process or
 * two) per ring; each struct ring is used by one thread.
 */
#ifndef FMUD_SHM_RING_H
#define FMUD_SHM_RING_H

#include <assert.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "shm/wait.h"

#define RING_MAGIC      0x474e4952u     /* "RING" little-endian */
#define RING_VERSION    2u
#define RING_SLOT_MIN   16u             /* one record header */
#define RING_SLOT_MAX   65536u
#define RING_CAP_MIN    2u
#define RING_CAP_MAX    (1u << 24)
#define RING_BYTES_MAX  (1u << 30)      /* slot array; keeps every length in an int */

/*
 * Shared: daemon <-> one worker, both map it MAP_SHARED.
 * Lock-free SPSC. Producer: writes slots, then tail (and wakes 'data').
 * Consumer: reads slots, then head (and wakes 'space').
 * The first line is written once by the creator before the mapping is
 * shared and read once by ring_init(). No pointers: the slots follow the
 * header at offset sizeof(struct ring_hdr).
 * This layout is ABI: bump RING_VERSION when it changes.
 */
struct ring_hdr {
        uint32_t magic;
        uint32_t version;
        uint32_t slot_size;     /* power of two, RING_SLOT_MIN..RING_SLOT_MAX */
        uint32_t capacity;      /* slots, power of two, RING_CAP_MIN..RING_CAP_MAX */
        uint32_t max_record;    /* payload bytes, <= ring_max_record_limit() */
        uint32_t reserved0;
        uint64_t salt;          /* mixed into every stamp (ring_stamp()) */
        uint32_t reserved[8];
        /*
         * owner: producer. Release (seq_cst) store in wait_publish() after
         * the slots are written and stamped; pairs with the consumer's
         * acquire load in refresh_peer() and wait_until_ne().
         */
        alignas(64) _Atomic uint64_t tail;
        /*
         * owner: consumer. Release (seq_cst) store in wait_publish() after
         * the slots are read; pairs with the producer's acquire load in
         * ring_reserve() and wait_until_ne().
         */
        alignas(64) _Atomic uint64_t head;
        alignas(64) struct wait_word data;      /* consumer sleeps here for tail */
        alignas(64) struct wait_word space;     /* producer sleeps here for head */
};
static_assert(sizeof(struct ring_hdr) == 320, "ring_hdr is shared ABI");
static_assert(offsetof(struct ring_hdr, tail) == 64, "ring_hdr is shared ABI");
static_assert(offsetof(struct ring_hdr, head) == 128, "ring_hdr is shared ABI");
static_assert(offsetof(struct ring_hdr, data) == 192, "ring_hdr is shared ABI");
static_assert(offsetof(struct ring_hdr, space) == 256, "ring_hdr is shared ABI");

/*
 * Shared: at the start of each record's first slot. Written by the producer
 * before it publishes tail, read once by the consumer after its acquire load
 * of the stamp or of tail. Atomics (relaxed but for the stamp) only so that
 * each field is loaded exactly once: a hostile peer may rewrite them at any
 * time.
 */
struct ring_rec {
        _Atomic uint32_t len;   /* payload bytes (DATA); ignored for PAD */
        _Atomic uint32_t kind;  /* enum ring_rec_kind */
        /*
         * ring_stamp() of the record's first slot index. Release store
         * in ring_commit() after the payload, len and kind, and before tail;
         * pairs with the consumer's acquire loads in ring_peek() and
         * wait_until_stamp().
         */
        _Atomic uint64_t stamp;
};
static_assert(sizeof(struct ring_rec) == 16, "ring_rec is shared ABI");

enum ring_rec_kind {
        RING_REC_DATA = 0x44415441u,    /* "DATA" */
        RING_REC_PAD = 0x50414450u,     /* "PADP": skip to the end of the slot array */
};

enum ring_role {
        RING_PRODUCER,
        RING_CONSUMER,
};

/* The creator's choice of geometry. */
struct ring_params {
        uint32_t slot_size;     /* power of two, RING_SLOT_MIN..RING_SLOT_MAX */
        uint32_t capacity;      /* power of two, RING_CAP_MIN..RING_CAP_MAX */
        uint32_t max_record;    /* 0: ring_max_record_limit() */
};

/* Local to one side: its view of the ring. Caller storage; nothing to free. */
struct ring {
        struct ring_hdr *hdr;
        unsigned char *slots;
        uint32_t slot_size, slot_shift, capacity, max_record;
        uint64_t salt;
        enum ring_role role;
        int err;                /* sticky: the first protocol violation seen */
        uint64_t mine;          /* my index: tail (producer) or head (consumer) */
        /*
         * The peer's index as last validated. A consumer that takes
         * records on their stamps may be ahead of it by any amount: a
         * producer may hold its tail over several commits
         * (ring_commit_held()).
         */
        uint64_t peer;
        uint64_t published;     /* producer: the tail last stored */
        /* producer: the open reservation; consumer: the record peeked */
        uint64_t pend_start;    /* first slot of the record (after any padding) */
        uint32_t pend_pad;      /* slots of padding before it */
        uint32_t pend_len;      /* reserved bytes (producer) */
        uint32_t pend_slots;    /* slots of the peeked record, 0: none (consumer) */
        int pend;               /* a reservation or a peek is open */
        bool prefetchw;         /* producer: this cpu fetches lines for writing (ring.c) */
};

/* The stamp of a record that starts at slot 'index' (see ring_rec.stamp). Either side. */
uint64_t ring_stamp(const struct ring *r, uint64_t index);

/* Bytes a ring of this geometry occupies, or 0 when the geometry is invalid. */
size_t ring_bytes(uint32_t slot_size, uint32_t capacity);
/* The largest max_record a geometry allows (half the slots, less one header). */
uint32_t ring_max_record_limit(uint32_t slot_size, uint32_t capacity);

/*
 * Format 'size' bytes at 'mem' (64-byte aligned, exactly ring_bytes()) as an
 * empty ring. Only the creator, before the mapping is shared.
 * Returns 0 or -EINVAL for a bad geometry, size or alignment.
 */
int ring_format(void *mem, size_t size, const struct ring_params *p);

/*
 * Open the ring at 'mem' (size bytes) as producer or consumer: checks the
 * header (-EBADMSG wrong magic, -EPROTONOSUPPORT wrong version, -ERANGE a
 * geometry that is invalid or does not match 'size', -EPROTO indices that
 * are inconsistent) and copies the geometry into *r. r is written only on
 * success. The struct borrows the mapping: keep it mapped while r is used.
 */
int ring_init(struct ring *r, void *mem, size_t size, enum ring_role role);
/*
 * Write the ring's geometry (magic, version, slot size, capacity, largest
 * record, salt) back into its header from r, as ring_init() took it: a
 * peer that scribbled over them no longer keeps the next peer out. The
 * positions are left alone (they are the two sides' own). Any thread: the
 * values written are the ones already there unless overwritten.
 */
void ring_restore(const struct ring *r);

/*
 * Producer: reserve room for a record of up to len bytes and point *ret_buf
 * at its payload (contiguous, 8-byte aligned, private to the producer until
 * ring_commit()). Returns 0, -ENOSPC (full for now), -EMSGSIZE (len over
 * max_record: not sticky, nothing is broken), -EPROTO (broken). A second
 * reserve replaces an uncommitted one.
 */
int ring_reserve(struct ring *r, size_t len, void **ret_buf);
/*
 * Producer: publish the reserved record with its final length (<= the
 * reserved length) and wake the consumer if it sleeps. Returns 0, or -EINVAL
 * without an open reservation or for a longer len.
 */
int ring_commit(struct ring *r, size_t len);
/*
 * Producer: as ring_commit(), but the record is only stamped: tail is
 * stored (over every held record) by the next ring_commit(), ring_push()
 * or ring_flush(), or at once when the consumer's sleepers count shows it
 * asleep. A consumer that polls takes the record on its stamp at once; the
 * producer saves the full fence of the tail store (the cost of a commit
 * when the consumer polls the tail's line). The sleepers count is read
 * without that fence, so a consumer falling asleep at the same instant may
 * be missed: it sleeps until the next store of tail or its deadline, then
 * finds the record on its stamp. For a run of records with more to follow
 * at once, by a producer that flushes before it waits; a consumer that
 * waits for one should wake now and then to look at the stamp.
 */
int ring_commit_held(struct ring *r, size_t len);
/* Producer: store tail over the held commits and wake the consumer if it sleeps. */
void ring_flush(struct ring *r);
/* Producer: copy len bytes in as one record. 0, -ENOSPC, -EMSGSIZE, -EPROTO. */
int ring_push(struct ring *r, const void *buf, size_t len);
/* Producer: the same, committed with ring_commit_held(). */
int ring_push_held(struct ring *r, const void *buf, size_t len);

/*
 * Consumer: point *ret_buf and *ret_len at the next record without copying.
 * The length is validated; the payload is the peer's memory and may change
 * under the reader: copy what must be validated. Peeking again before
 * ring_release() returns the same record. Returns 0, -EAGAIN (empty),
 * -EPROTO, -EMSGSIZE, -EBADMSG (broken, see above).
 */
int ring_peek(struct ring *r, const void **ret_buf, size_t *ret_len);
/* Consumer: drop the peeked record and wake the producer if it waits. 0 or -EINVAL. */
int ring_release(struct ring *r);
/*
 * Consumer: copy the next record into buf and drop it. Returns its length,
 * -EAGAIN (empty), -ENOBUFS (size too small: the record stays), or a broken
 * ring's error.
 */
int ring_pop(struct ring *r, void *buf, size_t size);

/*
 * Consumer: wait until the producer has published something past what this
 * side has consumed. Producer: wait until the consumer has released
 * something since the last -ENOSPC (or since the last validated head).
 * Returns 0 (look again: a wake-up is a hint, not a promise), -ETIMEDOUT at
 * the absolute CLOCK_MONOTONIC deadline, or the ring's sticky error.
 */
int ring_wait_readable(struct ring *r, const struct wait_policy *p, const struct timespec *deadline);
int ring_wait_writable(struct ring *r, const struct wait_policy *p, const struct timespec *deadline);

#endif
