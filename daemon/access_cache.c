/* access_cache: local users' roles kept for a few seconds (access_cache.h). */
#include "daemon/access_cache.h"

#include <stdio.h>
#include <time.h>

static uint64_t mono_ns(void)
{
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void access_cache_init(struct access_cache *c, access_lookup_fn *lookup)
{
        c->lookup = lookup ? lookup : access_local;
        c->n = 0;
}

void access_cache_clear(struct access_cache *c)
{
        c->n = 0;
}

enum access_role access_cached(struct access_cache *c, const struct access_rules *r, uid_t uid,
                               gid_t gid, char *who, size_t wholen)
{
        const uint64_t ttl = (uint64_t)ACCESS_CACHE_TTL_S * 1000000000u;
        uint64_t now = mono_ns();
        struct access_cache_entry *e = NULL;
        size_t oldest = 0;

        for (size_t i = 0; i < c->n; i++) {
                if (c->e[i].uid == uid && c->e[i].gid == gid) {
                        e = &c->e[i];
                        break;
                }
                if (c->e[i].at_ns < c->e[oldest].at_ns)
                        oldest = i;
        }
        if (e && now - e->at_ns < ttl)
                goto out;
        if (!e)
                e = c->n < ACCESS_CACHE_MAX ? &c->e[c->n++] : &c->e[oldest];
        e->uid = uid;
        e->gid = gid;
        e->role = c->lookup(r, uid, gid, e->who, sizeof(e->who));
        e->at_ns = now;
out:
        if (who)
                snprintf(who, wholen, "%s", e->who);
        return e->role;
}
