/*
 * channel: the one shared-memory region between the daemon and one worker.
 *
 * DESIGN: one memfd per worker, created, sized and sealed by the daemon
 * (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL: the worker can neither pull
 * pages out from under the daemon's mapping, which would be SIGBUS, nor
 * resize it), passed to the worker (inherited, usually as descriptor 3) and
 * mapped MAP_SHARED by both. It holds, at offsets recorded in its header:
 *   - a request ring, daemon -> worker;
 *   - a reply/event ring, worker -> daemon (replies, intermediate updates,
 *     log records, sample batches);
 *   - a side buffer for payloads larger than a ring's max_record (arrays,
 *     strings, binaries, FMU state); a ring message names a range of it.
 * The side buffer is not a ring: it belongs to whichever side holds the
 * turn. The daemon owns it until it posts a request that refers to it; the
 * worker then owns it until it posts the reply to that request. Events the
 * worker sends while it holds the turn may use it too; the daemon's answer
 * to an event hands it back. Every range read from a message is checked
 * with chan_side_ref() before use.
 *
 * The worker validates the whole header (size against fstat, magic,
 * version, every offset and size) in chan_attach(); the daemon never reads
 * the header back after chan_create(), so a worker that rewrites it only
 * hurts itself.
 */
#ifndef FMUD_SHM_CHANNEL_H
#define FMUD_SHM_CHANNEL_H

#include <assert.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "shm/ring.h"
#include "shm/wait.h"

#define CHAN_MAGIC      0x4e414843u     /* "CHAN" little-endian */
#define CHAN_VERSION    1u
#define CHAN_SIDE_MAX   (1ull << 32)    /* 4 GiB of side buffer */
#define CHAN_SIZE_MAX   (CHAN_SIDE_MAX + 2ull * (RING_BYTES_MAX + 4096))

/*
 * Shared: daemon <-> one worker, both map it MAP_SHARED, at offset 0 of the
 * memfd. The first line is written once by the daemon before the fd is
 * passed on and read once by chan_attach(). Offsets are from the start of
 * the memfd; no pointers.
 * This layout is ABI: bump CHAN_VERSION when it changes.
 */
struct chan_hdr {
        uint32_t magic;
        uint32_t version;
        uint64_t total_size;    /* bytes of the memfd, equal to its fstat size */
        uint64_t req_off, req_size;     /* request ring (daemon -> worker), 64-aligned */
        uint64_t rep_off, rep_size;     /* reply/event ring (worker -> daemon), 64-aligned */
        uint64_t side_off, side_size;   /* side buffer, page-aligned */
        /*
         * owner: daemon. Workers it has posted to and that have not replied,
         * plus itself, plus the waiters beside them it knows of (an
         * attached rig): a spin hint for the worker's wait policy, nothing
         * more. Relaxed both ways: any value is safe, a stale one only costs
         * time.
         */
        alignas(64) _Atomic uint32_t active;
};
static_assert(sizeof(struct chan_hdr) == 128, "chan_hdr is shared ABI");
static_assert(offsetof(struct chan_hdr, active) == 64, "chan_hdr is shared ABI");

struct chan_params {
        const char *name;       /* memfd name, shown in /proc/<pid>/fd; NULL: "fmud-chan" */
        uint32_t slot_size;     /* both rings */
        uint32_t req_slots;     /* request ring capacity, power of two */
        uint32_t rep_slots;     /* reply/event ring capacity, power of two */
        uint32_t max_record;    /* both rings; 0: the largest each geometry allows */
        uint64_t side_size;     /* side buffer bytes, up to CHAN_SIDE_MAX; may be 0 */
};

struct chan;

/*
 * Daemon: create, seal, map and format a channel. Returns the memfd (>= 0)
 * to hand to the worker (it has FD_CLOEXEC: dup2() it to the worker's fixed
 * descriptor between fork and exec) and sets *ret; or -EINVAL for bad
 * parameters, or the -errno of memfd_create/ftruncate/fcntl/mmap, with
 * nothing left behind. The channel owns the fd: chan_close() closes it.
 */
int chan_create(const struct chan_params *p, struct chan **ret);

/*
 * Worker: map and validate the channel on fd. Returns 0 and sets *ret, or:
 *   -EMSGSIZE          size from fstat too small, too large, or not total_size
 *   -EBADMSG           wrong channel or ring magic
 *   -EPROTONOSUPPORT   wrong channel or ring layout version
 *   -ERANGE            an offset or size out of bounds, misaligned or
 *                      overlapping; a ring geometry that does not fit
 *   -EPROTO            ring indices that are inconsistent
 *   -EPERM             the memfd is not sealed against shrinking and growing
 *   or the -errno of fstat/fcntl/mmap.
 * On success the channel owns fd (chan_close() closes it); on failure the
 * caller still does.
 */
int chan_attach(int fd, struct chan **ret);

/* Unmap, close the fd and free. NULL is a no-op. Either side. */
void chan_close(struct chan *c);

/* The memfd. Borrowed: valid until chan_close(). */
int chan_fd(const struct chan *c);

/*
 * This side's rings: tx is the one it produces into (daemon: requests,
 * worker: replies), rx the one it consumes. Borrowed pointers, valid until
 * chan_close(); each is used by one thread at a time.
 */
struct ring *chan_tx(struct chan *c);
struct ring *chan_rx(struct chan *c);

/* The side buffer and its size (NULL, 0 when it has none). Valid until chan_close(). */
void *chan_side(const struct chan *c, uint64_t *ret_size);

/*
 * Check that [off, off + len) lies inside the side buffer and point *ret at
 * it. 0 or -ERANGE. Use it on every range that came from the peer.
 */
int chan_side_ref(const struct chan *c, uint64_t off, uint64_t len, void **ret);

/* Daemon: publish the spin hint (see chan_hdr.active). */
void chan_set_active(struct chan *c, uint32_t n);
/* Worker: read the spin hint, clamped to 1..65536. */
uint32_t chan_active(const struct chan *c);

/*
 * Wait until rx has something to read (ring_wait_readable()). When
 * p->runnable is 0 the channel's spin hint stands in for it.
 */
int chan_wait_rx(struct chan *c, const struct wait_policy *p, const struct timespec *deadline);

#endif
