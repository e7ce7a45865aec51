/*
 * control_subs: a sample topic ends when its last subscriber on every
 * publishing socket has gone; other topics and malformed ones are not
 * followed; the table is bounded.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <string.h>

#include "daemon/control_subs.h"

static int note(struct ctl_subs *s, int sock, int on, const char *topic, uint64_t *session,
                char out[CTL_TOPIC_MAX])
{
        unsigned char m[128];
        size_t n = strlen(topic);

        m[0] = (unsigned char)on;
        memcpy(m + 1, topic, n);
        return ctl_subs_note(s, sock, m, n + 1, session, out);
}

TestSuite(control_subs, .timeout = 60);

/* Topics are predictable: a peer on the other socket leaving ends nothing. */
Test(control_subs, a_topic_ends_when_no_socket_has_a_subscriber_left)
{
        struct ctl_subs s = { 0 };
        char topic[CTL_TOPIC_MAX] = "";
        uint64_t session = 0;

        cr_assert(eq(int, note(&s, 0, 1, "s12.3", &session, topic), 0));
        cr_assert(eq(int, note(&s, 1, 1, "s12.3", &session, topic), 0));
        cr_assert(eq(int, note(&s, 1, 0, "s12.3", &session, topic), 0));
        cr_assert(eq(int, note(&s, 0, 0, "s12.3", &session, topic), 1));
        cr_assert(eq(u64, session, 12));
        cr_assert(eq(str, topic, "s12.3"));
        /* Gone is gone: a second unsubscribe, or one never subscribed, ends nothing. */
        cr_assert(eq(int, note(&s, 0, 0, "s12.3", &session, topic), 0));
        cr_assert(eq(int, note(&s, 0, 0, "s12.4", &session, topic), 0));
        ctl_subs_fini(&s);
}

Test(control_subs, only_sample_topics_are_followed)
{
        static const char *const other[] = {
                "s12.", "s.1", "s12", "s012.1", "s12.01", "x12.1", "s12.1x", "s-1.2", "events",
                "s1.2.3", "s99999999999999999999.1", "",
        };
        struct ctl_subs s = { 0 };
        char topic[CTL_TOPIC_MAX];
        uint64_t session;

        for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
                cr_assert(eq(int, note(&s, 0, 1, other[i], &session, topic), 0), "%s", other[i]);
                cr_assert(eq(int, note(&s, 0, 0, other[i], &session, topic), 0), "%s", other[i]);
        }
        cr_assert(eq(sz, s.n, 0));
        cr_assert(eq(int, ctl_subs_note(&s, 0, (const unsigned char *)"\x02s1.1", 5, &session,
                                        topic), 0));
        ctl_subs_fini(&s);
}

Test(control_subs, the_table_is_bounded)
{
        struct ctl_subs s = { 0 };
        char topic[CTL_TOPIC_MAX], name[32];
        uint64_t session;

        for (unsigned i = 1; i <= CTL_SUBS_MAX + 10; i++) {
                snprintf(name, sizeof(name), "s1.%u", i);
                cr_assert(eq(int, note(&s, 0, 1, name, &session, topic), 0));
        }
        cr_assert(eq(sz, s.n, CTL_SUBS_MAX));
        snprintf(name, sizeof(name), "s1.%u", CTL_SUBS_MAX + 5);
        cr_assert(eq(int, note(&s, 0, 0, name, &session, topic), 0));
        cr_assert(eq(int, note(&s, 0, 0, "s1.7", &session, topic), 1));
        cr_assert(eq(sz, s.n, CTL_SUBS_MAX - 1));
        ctl_subs_fini(&s);
}
