/*
 * control_subs: a sample topic is gone once no socket has had a
 * subscriber for the grace; one that comes back within it keeps it;
 * other topics and malformed ones are not followed; the table is bounded.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <string.h>

#include "daemon/control_subs.h"

#define GRACE 1000

struct gone {
        unsigned n;
        uint64_t session, sub;
};

static void on_gone(void *ctx, uint64_t session, uint64_t n)
{
        struct gone *g = ctx;

        g->n++;
        g->session = session;
        g->sub = n;
}

/* The subscriptions that exist: every one, or none of session 66 (a made-up topic's). */
static bool live(void *ctx, uint64_t session, uint64_t n)
{
        (void)ctx;
        (void)n;
        return session != 66;
}

static void note(struct ctl_subs *s, int sock, int on, const char *topic, int64_t now)
{
        unsigned char m[128];
        size_t n = strlen(topic);

        m[0] = (unsigned char)on;
        memcpy(m + 1, topic, n);
        ctl_subs_note(s, sock, m, n + 1, now, live, NULL);
}

TestSuite(control_subs, .timeout = 60);

/* Topics are predictable: a peer on the other socket leaving ends nothing. */
Test(control_subs, a_topic_is_gone_when_no_socket_had_a_subscriber_for_the_grace)
{
        struct ctl_subs s = { 0 };
        struct gone g = { 0 };

        note(&s, 0, 1, "s12.3", 10);
        note(&s, 1, 1, "s12.3", 10);
        note(&s, 1, 0, "s12.3", 20);
        cr_assert(eq(long, ctl_subs_expire(&s, 100000, GRACE, on_gone, &g), -1));
        note(&s, 0, 0, "s12.3", 30);
        cr_assert(eq(long, ctl_subs_expire(&s, 30 + GRACE - 1, GRACE, on_gone, &g), 1));
        cr_assert(eq(u32, g.n, 0));
        cr_assert(eq(long, ctl_subs_expire(&s, 30 + GRACE, GRACE, on_gone, &g), -1));
        cr_assert(eq(u32, g.n, 1));
        cr_assert(eq(u64, g.session, 12));
        cr_assert(eq(u64, g.sub, 3));
        cr_assert(eq(sz, s.n, 0));
        /* A second unsubscribe, or one of a topic of no subscription, is nothing. */
        note(&s, 0, 0, "s66.3", 40);
        cr_assert(eq(long, ctl_subs_expire(&s, 100000, GRACE, on_gone, &g), -1));
        cr_assert(eq(u32, g.n, 1));
        ctl_subs_fini(&s);
}

/*
 * A peer that subscribed to a topic before its subscription existed hides
 * the subscriber's own subscribe (an XPUB hands up only a topic's first):
 * once the last of them leaves, the topic is gone all the same. It was
 * never followed, and the subscription stayed for the session's life.
 */
Test(control_subs, a_topic_whose_first_subscribe_was_not_seen_goes_when_its_last_leaves)
{
        struct ctl_subs s = { 0 };
        struct gone g = { 0 };

        note(&s, 0, 0, "s9.4", 50);
        cr_assert(eq(long, ctl_subs_expire(&s, 50 + GRACE - 10, GRACE, on_gone, &g), 10));
        note(&s, 0, 1, "s9.4", 60);     /* back within the grace */
        cr_assert(eq(long, ctl_subs_expire(&s, 100000, GRACE, on_gone, &g), -1));
        cr_assert(eq(u32, g.n, 0));
        note(&s, 0, 0, "s9.4", 70);
        cr_assert(eq(long, ctl_subs_expire(&s, 70 + GRACE, GRACE, on_gone, &g), -1));
        cr_assert(eq(u32, g.n, 1));
        cr_assert(eq(u64, g.sub, 4));
        ctl_subs_fini(&s);
}

/* A SUB socket that reconnects after a network blip subscribes again: the topic stays. */
Test(control_subs, a_subscriber_back_within_the_grace_keeps_the_topic)
{
        struct ctl_subs s = { 0 };
        struct gone g = { 0 };

        note(&s, 1, 1, "s7.1", 10);
        note(&s, 1, 0, "s7.1", 20);
        note(&s, 1, 1, "s7.1", 20 + GRACE / 2);
        cr_assert(eq(long, ctl_subs_expire(&s, 20 + 5 * GRACE, GRACE, on_gone, &g), -1));
        cr_assert(eq(u32, g.n, 0));
        cr_assert(eq(sz, s.n, 1));
        ctl_subs_fini(&s);
}

Test(control_subs, only_sample_topics_are_followed)
{
        static const char *const other[] = {
                "s12.", "s.1", "s12", "s012.1", "s12.01", "x12.1", "s12.1x", "s-1.2", "events",
                "s1.2.3", "s99999999999999999999.1", "", "s0.1", "s1.0",
                "s66.1",        /* well formed, but no such subscription */
        };
        struct ctl_subs s = { 0 };

        for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
                note(&s, 0, 1, other[i], 10);
                note(&s, 0, 0, other[i], 20);
        }
        cr_assert(eq(sz, s.n, 0));
        ctl_subs_note(&s, 0, (const unsigned char *)"\x02s1.1", 5, 10, live, NULL);
        ctl_subs_note(&s, 9, (const unsigned char *)"\x01s1.1", 5, 10, live, NULL);
        cr_assert(eq(sz, s.n, 0));
        ctl_subs_fini(&s);
}

Test(control_subs, the_table_is_bounded)
{
        struct ctl_subs s = { 0 };
        struct gone g = { 0 };
        char name[32];

        for (unsigned i = 1; i <= CTL_SUBS_MAX + 10; i++) {
                snprintf(name, sizeof(name), "s1.%u", i);
                note(&s, 0, 1, name, 10);
        }
        cr_assert(eq(sz, s.n, CTL_SUBS_MAX));
        snprintf(name, sizeof(name), "s1.%u", CTL_SUBS_MAX + 5);
        note(&s, 0, 0, name, 20);
        note(&s, 0, 0, "s1.7", 20);
        cr_assert(eq(long, ctl_subs_expire(&s, 20 + GRACE, GRACE, on_gone, &g), -1));
        cr_assert(eq(u32, g.n, 1));
        cr_assert(eq(sz, s.n, CTL_SUBS_MAX - 1));
        ctl_subs_fini(&s);
}
