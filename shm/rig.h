/*
 * rig: the shared-memory channel between a session's master and a rig
 * (a real controller's I/O process, a test bench) that exchanges the
 * session's rig ports at every communication point.
 *
 * DESIGN (DESIGN.md, "Rig ports"): one memfd per session, created, sized
 * and sealed by the engine (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
 * handed to a rig over a Unix socket with SCM_RIGHTS and mapped MAP_SHARED
 * by both. It holds, at offsets recorded in its header:
 *   - the port table: n_in inputs then n_out outputs (name, type, safe
 *     value), written once by the engine;
 *   - the write ring, rig -> master: one record per write,
 *     {sequence, point, n_in values};
 *   - the point ring, master -> rig: one record per point,
 *     {point, time, n_out values}.
 * Both rings are shm/ring.h's SPSC rings of whole records, so a write
 * is taken whole or not at all. Every value travels as a double; an
 * integer port's value must be a whole number in its type's range, a
 * Boolean's 0 or 1 (Int64 and UInt64 beyond 2^53 cannot be carried).
 *
 * The rig stores CLOCK_MONOTONIC nanoseconds into 'heartbeat' on every
 * write and wait (rig_beat()); the master reads it at each point to tell
 * an attached rig from one that vanished.
 *
 * Everything the rig writes is untrusted: the engine never reads the
 * header or the port table back after rig_create() (it checks values
 * against its own copy of the port types); a record of the wrong length,
 * a point more than RIG_RING_SLOTS past the current one, a NaN or
 * out-of-range value for an integer or Boolean port make rig_take()
 * return -EBADMSG for that record alone; a broken write ring is opened
 * again at its published indices. The sequence number is reported, not
 * enforced: a rig that attaches again starts it from 1.
 *
 * Threads: the engine side (rig_take(), rig_publish()) runs on the
 * master's thread; the rig side (rig_claim(), rig_write(), rig_wait(),
 * rig_read()) on one thread of the rig, or, for a relay, rig_write() and
 * rig_claim_renew() on one thread and rig_wait() and rig_read() on
 * another; rig_heartbeat(), rig_beat_at() and rig_claim_held() on any.
 */
#ifndef FMUD_SHM_RIG_H
#define FMUD_SHM_RIG_H

#include <assert.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "shm/ring.h"

#define RIG_MAGIC       0x30474952u     /* "RIG0" little-endian */
#define RIG_VERSION     3u
#define RIG_PORTS_MAX   256u            /* inputs, and outputs, each at most */
#define RIG_NAME_MAX    128u            /* a port's name, NUL included */
#define RIG_RING_SLOTS  64u             /* records each ring holds */

/* A port's type: what the value travels as and what it must be. */
enum rig_type {
        RIG_FLOAT64 = 1,
        RIG_FLOAT32,
        RIG_INT8,
        RIG_INT16,
        RIG_INT32,
        RIG_INT64,
        RIG_UINT8,
        RIG_UINT16,
        RIG_UINT32,
        RIG_UINT64,
        RIG_BOOLEAN,
        RIG_TYPE_END,
};

/* "Float64", ...; NULL for an unknown type. */
const char *rig_type_name(enum rig_type t);
/* Whether v is a value of type t (integers: whole and in range; Boolean: 0 or 1). */
bool rig_value_ok(enum rig_type t, double v);

/* Shared: written once by the engine before the fd is passed on. */
struct rig_port {
        char name[RIG_NAME_MAX];        /* NUL-terminated */
        uint32_t type;                  /* enum rig_type */
        uint32_t has_safe;              /* inputs: a safe value is declared */
        double safe;
};
static_assert(sizeof(struct rig_port) == RIG_NAME_MAX + 16, "rig_port is shared ABI");

/*
 * Shared: engine <-> one rig, at offset 0 of the memfd. The first line is
 * written once by the engine and read once by rig_attach(). Offsets are
 * from the start of the memfd; no pointers.
 * This layout is ABI: bump RIG_VERSION when it changes.
 */
struct rig_hdr {
        uint32_t magic;
        uint32_t version;
        uint64_t total_size;
        uint32_t n_in, n_out;
        uint64_t ports_off;             /* n_in + n_out struct rig_port */
        uint64_t in_off, in_size;       /* write ring, rig -> master, 64-aligned */
        uint64_t out_off, out_size;     /* point ring, master -> rig, 64-aligned */
        uint32_t policy;                /* enum rig_policy, for the rig to know */
        uint32_t timeout_ms;
        /*
         * owner: rig. CLOCK_MONOTONIC ns of its last write or wait; 0: no
         * rig yet. Relaxed both ways: the master only compares its age
         * with the timeout, any value is safe.
         */
        alignas(64) _Atomic uint64_t heartbeat;
        /*
         * owner: the rig that claimed the channel (rig_claim()): its
         * CLOCK_MONOTONIC ms at the claim << 20 | a random nonzero 20-bit
         * tag, one word so that a claim and its time change together; 0:
         * none. The rings have one producer and one consumer each, so one
         * rig at a time. Cooperative: the engine never reads it.
         */
        _Atomic uint64_t claim;
        /*
         * owner: engine. 1 once the session is gone (rig_end()): nothing
         * more is published or taken. The rig never writes it back in any
         * way the engine reads.
         */
        _Atomic uint32_t ended;
};
static_assert(sizeof(struct rig_hdr) == 192, "rig_hdr is shared ABI");
static_assert(offsetof(struct rig_hdr, heartbeat) == 128, "rig_hdr is shared ABI");
static_assert(offsetof(struct rig_hdr, claim) == 136, "rig_hdr is shared ABI");
static_assert(offsetof(struct rig_hdr, ended) == 144, "rig_hdr is shared ABI");

/* What a session does when its rig vanishes. */
enum rig_policy {
        RIG_HOLD,       /* inputs keep the last values written */
        RIG_SAFE,       /* inputs take their declared safe values (the others hold) */
        RIG_PAUSE,      /* the session pauses */
};
const char *rig_policy_name(enum rig_policy p);
/* "hold", "safe", "pause" (len bytes) to *ret; -EINVAL otherwise. */
int rig_policy_parse(const char *s, size_t len, enum rig_policy *ret);

/* Shared: a write, rig -> master; followed by n_in doubles. */
struct rig_in_rec {
        uint64_t seq;                   /* grows with every write; reported, not enforced */
        uint64_t point;                 /* the grid point the rig computed it for */
};
/* Shared: a point, master -> rig; followed by n_out doubles. */
struct rig_out_rec {
        uint64_t point;
        double time;
};

/* A session's rig timeout at most (the scenario's rigTimeoutMs). */
#define RIG_TIMEOUT_MAX_MS      60000u

struct rig_params {
        const char *name;               /* memfd name; NULL: "fmud-rig" */
        uint32_t n_in, n_out;           /* at most RIG_PORTS_MAX each, not both 0 */
        const struct rig_port *in, *out;
        enum rig_policy policy;
        uint32_t timeout_ms;
};

struct rig;

/*
 * Engine: create, seal, map and format a rig channel. Returns 0 and *ret,
 * -EINVAL for bad parameters, or the -errno of memfd_create, ftruncate,
 * fcntl or mmap, with nothing left behind. The channel owns its memfd
 * (close-on-exec); rig_close() closes it.
 */
int rig_create(const struct rig_params *p, struct rig **ret);

/*
 * Rig: map and validate the channel on fd (size against fstat, seals,
 * magic, version, every offset, port names and types). Returns 0 and
 * *ret (owning fd), or -EMSGSIZE, -EBADMSG, -EPROTONOSUPPORT, -ERANGE,
 * -EPERM (not sealed), -EPROTO, or fstat/fcntl/mmap's -errno; on failure
 * the caller still owns fd.
 */
int rig_attach(int fd, struct rig **ret);

/*
 * Rig: pidfd (owned from now on) is the process that serves the channel;
 * once it has ended, as when killed before it could end the channel,
 * rig_wait() and rig_read() give the last points and then -EPIPE, and
 * rig_write() -EPIPE. Checked each time rig_wait() would sleep on.
 */
void rig_watch_peer(struct rig *r, int pidfd);

/* Unmap, close the fd and free. NULL is a no-op. Either side. */
void rig_close(struct rig *r);
/* The memfd; borrowed. */
int rig_fd(const struct rig *r);
/*
 * Engine: write the header's layout, the port table and the rings'
 * geometry back from the engine's own copies, before a new rig is given
 * the channel: a rig that scribbled over them (they are in its mapping)
 * no longer keeps every later rig out. The rings' positions are the two
 * sides' own: a broken one is opened again where it is read (rig_take(),
 * rig_publish(), and a rig's attach). Any thread: the engine never reads
 * these back.
 */
void rig_restore(struct rig *r);

/* The ports (borrowed, valid until rig_close()): private copies on both sides, validated on the rig's. */
const struct rig_port *rig_ports(const struct rig *r, bool out, uint32_t *ret_n);

/*
 * Either side: the session's rig timeout from the mapped header, bounded
 * to 1..RIG_TIMEOUT_MAX_MS (the header is in a mapping the other side can
 * write: a value out of range reads as RIG_TIMEOUT_MAX_MS).
 */
uint32_t rig_timeout_ms(const struct rig *r);
/*
 * Rig: how long rig_wait() sleeps at most between two heartbeats: 10 ms,
 * or a quarter of the session's timeout where that is shorter, so that a
 * rig waiting for its point is never seen as vanished.
 */
uint64_t rig_beat_slice_ns(const struct rig *r);
/* Engine: the rig's last heartbeat (CLOCK_MONOTONIC ns, 0: never). Any thread. */
uint64_t rig_heartbeat(const struct rig *r);
/* CLOCK_MONOTONIC now, in ns. */
uint64_t rig_now_ns(void);

/*
 * Engine: take the next write not meant for a point after 'point' into
 * *ret_seq, *ret_point and vals (n_in doubles). Returns 0; -EAGAIN when
 * there is none (or the next is for a later point, at most RIG_RING_SLOTS
 * ahead: it stays); -EBADMSG for a bad write (wrong length, a value not of
 * its port's type, a point beyond that horizon), dropped (call again for
 * the next); -EPROTO when the ring was
 * broken and has been opened again at its indices (call again later).
 */
int rig_take(struct rig *r, uint64_t point, uint64_t *ret_seq, uint64_t *ret_point, double *vals);

/* Engine: publish a point's outputs (n_out doubles). 0, or -ENOSPC when the rig is behind. */
int rig_publish(struct rig *r, uint64_t point, double time, const double *vals);
/*
 * Engine: the session is gone (unloaded, or the daemon stops): the rig's
 * writes and waits end with -EPIPE from now on, a wait already asleep
 * within a heartbeat's slice (rig_beat_slice_ns()); the points published
 * before stay readable. Call before rig_close().
 */
void rig_end(struct rig *r);

/*
 * Rig: claim the channel, after rig_attach() and before any write or wait:
 * a session has one rig at a time. Taken when no rig holds it, or when the
 * one that does has vanished: its last heartbeat older than the session's
 * timeout and its claim older than RIG_CLAIM_GRACE_MS (the time a rig
 * has between its claim and its first beat). relay: the claimant is a
 * relay (the daemon's bridge to a remote rig), which the word says. 0;
 * -EBUSY when another rig holds it, *ret_holder (may be NULL) who and how
 * long since it last beat or claimed. A handle that claimed and lost the
 * channel to another rig (after a silence longer than the timeout) gets
 * -EOWNERDEAD from rig_write(), rig_wait() and rig_read(), and never
 * touches the rings or the heartbeat again, but for a call it was inside
 * of (stopped there, by a debugger or SIGSTOP, longer than the timeout):
 * the claim keeps honest rigs apart, it cannot fence a rig off. rig_close()
 * gives a held claim back. A handle that never claims (an observer) is not
 * checked.
 */
#define RIG_CLAIM_GRACE_MS      1000u
struct rig_holder {
        bool relay;                     /* the daemon's bridge to a remote rig */
        uint64_t quiet_ms;              /* since its last beat or claim (a relay renews it) */
};
int rig_claim(struct rig *r, bool relay, struct rig_holder *ret_holder);
/* Rig: this handle claimed the channel and holds it still. */
bool rig_claim_held(const struct rig *r);
/*
 * Rig: renew a held claim's time, for a holder that does not beat (the
 * bridge before its remote rig's hello): at least every
 * RIG_CLAIM_GRACE_MS keeps it. 0, or -EOWNERDEAD (lost).
 */
int rig_claim_renew(struct rig *r);
/*
 * Rig: give a held claim back (0) unless another rig has taken it, once
 * nothing of this handle touches the rings any more; rig_close() does it
 * too. The handle is then neither a holder nor checked.
 */
void rig_claim_release(struct rig *r);

/* Rig: store the heartbeat now (unless rig_beat_by_caller() was called). */
void rig_beat(struct rig *r);
/*
 * Rig: from now on rig_write(), rig_wait() and rig_beat() leave the
 * heartbeat alone; the caller stores it with rig_beat_at(). For a relay
 * (the daemon's bridge to a remote rig) whose own waiting says nothing of
 * whether the rig it relays is alive. Call before any other thread uses r.
 */
void rig_beat_by_caller(struct rig *r);
/* Rig: store ns (CLOCK_MONOTONIC) as the heartbeat. Any thread. */
void rig_beat_at(struct rig *r, uint64_t ns);
/*
 * Rig: write n_in values for grid point 'point', with the next sequence
 * number. 0, -ENOSPC (the master is behind: nothing written), -EPROTO,
 * -EOWNERDEAD (rig_claim()), -EPIPE (the session is gone: rig_end()).
 */
int rig_write(struct rig *r, uint64_t point, const double *vals);
/*
 * Rig: wait until a point is published or the absolute CLOCK_MONOTONIC
 * deadline passes (NULL: a heartbeat's slice at a time, for ever). 0,
 * -ETIMEDOUT, -EOWNERDEAD (rig_claim()), -EPIPE (the session is gone and
 * every point it published has been read), or the ring's error. Beats
 * before and after.
 */
int rig_wait(struct rig *r, const struct timespec *deadline);
/*
 * Rig: the newest point published, older ones skipped: *ret_point,
 * *ret_time, vals (n_out doubles), *ret_skipped (points dropped before
 * it). 0, -EAGAIN (none; also once where the ring's positions were
 * broken by an earlier rig: reading goes on from the engine's tail),
 * -EOWNERDEAD (rig_claim()), -EPIPE (none, and the session is gone), or a
 * broken ring's error.
 */
int rig_read(struct rig *r, uint64_t *ret_point, double *ret_time, double *vals,
             uint64_t *ret_skipped);

#endif
