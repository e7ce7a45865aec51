/*
 * access_cache: local users' roles (access_local()) kept for a few seconds,
 * so a flood of requests does not ask NSS (getpwuid_r, getgrouplist,
 * getgrnam_r: perhaps LDAP) for each.
 *
 * DESIGN: the control thread asks for every request; a user's role is
 * looked up once per ACCESS_CACHE_TTL_S per (uid, gid) and kept in a
 * table of ACCESS_CACHE_MAX entries (the oldest replaced when full), which
 * a reload of the rules (SIGHUP) clears. The lookup is a function pointer
 * so that a test can count the calls.
 *
 * Threads: one thread per cache (the control thread's).
 */
#ifndef FMUD_DAEMON_ACCESS_CACHE_H
#define FMUD_DAEMON_ACCESS_CACHE_H

#include <stdint.h>

#include "daemon/access.h"

#define ACCESS_CACHE_MAX        256
#define ACCESS_CACHE_TTL_S      5
#define ACCESS_CACHE_WHO        80

typedef enum access_role access_lookup_fn(const struct access_rules *r, uid_t uid, gid_t gid,
                                          char *who, size_t wholen);

struct access_cache {
        access_lookup_fn *lookup;       /* access_local, or a test's */
        size_t n;
        struct access_cache_entry {
                uid_t uid;
                gid_t gid;
                enum access_role role;
                uint64_t at_ns;         /* CLOCK_MONOTONIC when looked up */
                char who[ACCESS_CACHE_WHO];
        } e[ACCESS_CACHE_MAX];
};

/* An empty cache asking lookup (NULL: access_local()). */
void access_cache_init(struct access_cache *c, access_lookup_fn *lookup);
/* Forget every entry: the rules changed. */
void access_cache_clear(struct access_cache *c);
/* access_local(r, uid, gid, who, wholen), from the cache when it has a fresh entry. */
enum access_role access_cached(struct access_cache *c, const struct access_rules *r, uid_t uid,
                               gid_t gid, char *who, size_t wholen);

#endif
