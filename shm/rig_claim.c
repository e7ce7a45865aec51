/*
 * rig_claim: one rig at a time on a rig channel (rig.h, rig_claim()).
 *
 * DESIGN: the header's claim word holds the claiming rig's CLOCK_MONOTONIC
 * milliseconds << CLAIM_TAG_BITS | a random nonzero tag, so that a claim
 * and its time change in one compare-and-swap. A rig claims from 0 or from
 * a vanished rig's word; every call of the rig side then compares the
 * word's tag with its own and stays off the rings once they differ. The
 * rings' positions are read again after the claim: a handle attached
 * while another rig wrote must not write from that rig's old tail.
 *
 * Everything in the word and the heartbeat may have been written by a
 * rig that is gone or hostile: times ahead of now count as vanished, not
 * as alive for ever, and no arithmetic on them can wrap.
 *
 * The claim is cooperative: the engine never reads it, and a rig that
 * does not claim is not checked; what it guards against is two honest
 * rigs writing one single-producer ring.
 */
#include "shm/rig_int.h"

#include <errno.h>
#include <sys/random.h>
#include <unistd.h>

#define CLAIM_TAG_BITS  20
#define CLAIM_TAG(w)    ((w) & ((UINT64_C(1) << CLAIM_TAG_BITS) - 1))
#define CLAIM_RELAY     (UINT64_C(1) << (CLAIM_TAG_BITS - 1))   /* of the tag: a relay's */
#define NS_PER_MS       1000000u

static _Atomic uint64_t *claim_word(const struct rig *r)
{
        return &rig_hdr_of(r)->claim;
}

/* A random tag with the relay bit as asked, never avoid's (nor 0: the bit or the rest is set). */
static uint64_t new_tag(uint64_t avoid, uint64_t now, bool relay)
{
        uint64_t tag = 0;

        for (int i = 0; i < 8; i++) {
                if (getrandom(&tag, sizeof(tag), GRND_NONBLOCK) != (ssize_t)sizeof(tag))
                        tag = now ^ (uint64_t)getpid() ^ ((uint64_t)getpid() << 11) ^ (uint64_t)i;
                tag = CLAIM_TAG(tag) & ~CLAIM_RELAY;
                tag |= relay ? CLAIM_RELAY : 0;
                if (tag && tag != CLAIM_TAG(avoid))
                        return tag;
                now = now * 6364136223846793005u + 1442695040888963407u;
        }
        return (relay ? CLAIM_RELAY : 0) | (CLAIM_TAG(avoid) == 1 ? 2 : 1);
}

/* t (a time another process wrote) was within window of now, and not after it by more. */
static bool recent(uint64_t t, uint64_t now, uint64_t window)
{
        return t <= now ? now - t <= window : t - now <= window;
}

int rig_claim(struct rig *r, bool relay, struct rig_holder *ret_holder)
{
        uint64_t now = rig_now_ns(), now_ms = now / NS_PER_MS;
        uint64_t timeout = (uint64_t)rig_timeout_ms(r) * NS_PER_MS;
        uint64_t cur = atomic_load(claim_word(r)), mine;
        int e;

        do {
                if (cur) {
                        uint64_t hb = rig_heartbeat(r), at_ms = cur >> CLAIM_TAG_BITS;

                        /* Alive: beat within the timeout, or claimed within the grace. */
                        if ((hb && recent(hb, now, timeout)) ||
                            recent(at_ms, now_ms, RIG_CLAIM_GRACE_MS)) {
                                if (ret_holder) {
                                        uint64_t hb_ms = hb / NS_PER_MS;
                                        uint64_t last = hb_ms > at_ms ? hb_ms : at_ms;

                                        ret_holder->relay = (cur & CLAIM_RELAY) != 0;
                                        ret_holder->quiet_ms = last < now_ms ? now_ms - last : 0;
                                }
                                return -EBUSY;
                        }
                }
                mine = now_ms << CLAIM_TAG_BITS | new_tag(cur, now, relay);
                /* seq_cst: pairs with the previous holder's release in rig_claim_release(). */
        } while (!atomic_compare_exchange_weak(claim_word(r), &cur, mine));
        atomic_store(&r->claim, mine);
        /* From where the previous rig left the rings. */
        e = rig_open_rings(r);
        /* The geometry as rig_attach() took it: a ring rewritten since is broken. */
        if (e == 0 && (r->in.max_record < r->in_rec || r->out.max_record < r->out_rec))
                e = -ERANGE;
        if (e < 0) {
                rig_claim_release(r);
                return e;
        }
        return 0;
}

int rig_claim_renew(struct rig *r)
{
        uint64_t cur = atomic_load(&r->claim);
        uint64_t mine = (rig_now_ns() / NS_PER_MS) << CLAIM_TAG_BITS | CLAIM_TAG(cur);

        /* Only from the word this handle stored: a rig that took it keeps it. */
        if (!cur || !atomic_compare_exchange_strong(claim_word(r), &cur, mine))
                return -EOWNERDEAD;
        atomic_store(&r->claim, mine);
        return 0;
}

/* Held: the channel's claim has this handle's tag (a renewal changes only its time). */
bool rig_claim_held(const struct rig *r)
{
        uint64_t mine = atomic_load_explicit(&r->claim, memory_order_relaxed);
        uint64_t cur = atomic_load_explicit(claim_word(r), memory_order_relaxed);

        return mine && cur && CLAIM_TAG(cur) == CLAIM_TAG(mine);
}

bool rig_claim_lost(const struct rig *r)
{
        return atomic_load_explicit(&r->claim, memory_order_relaxed) && !rig_claim_held(r);
}

void rig_claim_release(struct rig *r)
{
        uint64_t mine = atomic_load(&r->claim);

        /* seq_cst, as the claim: the next rig that claims sees this rig's last tail. */
        if (mine)
                (void) atomic_compare_exchange_strong(claim_word(r), &mine, 0);
        atomic_store(&r->claim, 0);
}
