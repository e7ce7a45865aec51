/* control_subs: subscribers of sample topics (control_subs.h). */
#include "control_subs.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void ctl_subs_fini(struct ctl_subs *s)
{
        free(s->v);
        *s = (struct ctl_subs){ 0 };
}

/* "s<digits>.<digits>", without leading zeros or 0: *ret_session and *ret_n. */
static bool sample_topic(const unsigned char *t, size_t len, uint64_t *ret_session,
                         uint64_t *ret_n)
{
        uint64_t v[2] = { 0, 0 };
        size_t i = 1;

        if (len < 4 || len >= CTL_TOPIC_MAX || t[0] != 's')
                return false;
        for (int k = 0; k < 2; k++) {
                size_t from = i;

                for (; i < len && t[i] >= '0' && t[i] <= '9'; i++) {
                        if (v[k] > (UINT64_MAX - 9) / 10)
                                return false;
                        v[k] = v[k] * 10 + (uint64_t)(t[i] - '0');
                }
                if (i == from || t[from] == '0' || (k == 0 && (i >= len || t[i++] != '.')))
                        return false;
        }
        if (i != len)
                return false;
        *ret_session = v[0];
        *ret_n = v[1];
        return true;
}

static size_t find(const struct ctl_subs *s, const unsigned char *t, size_t len)
{
        for (size_t i = 0; i < s->n; i++)
                if (!strncmp(s->v[i].topic, (const char *)t, len) && s->v[i].topic[len] == '\0')
                        return i;
        return SIZE_MAX;
}

void ctl_subs_note(struct ctl_subs *s, int sock, const unsigned char *m, size_t len,
                   int64_t now_ms, bool (*live)(void *ctx, uint64_t session, uint64_t n),
                   void *ctx)
{
        uint64_t session, n;
        unsigned bit;
        size_t i;

        if (len < 1 || m[0] > 1 || sock < 0 || sock >= 8 ||
            !sample_topic(m + 1, len - 1, &session, &n))
                return;
        bit = 1u << sock;
        i = find(s, m + 1, len - 1);
        /*
         * The last subscriber of a topic followed from its first, or of one
         * whose subscription's own subscribe was never handed up (another
         * peer subscribed to it first, which an XPUB does not repeat): gone
         * from this socket, unless it comes back within the grace.
         */
        if (m[0] == 1 || i == SIZE_MAX) {
                if (i == SIZE_MAX) {
                        if (s->n == CTL_SUBS_MAX || !live(ctx, session, n))
                                return;
                        if (s->n == s->cap) {
                                size_t cap = s->cap ? 2 * s->cap : 16;
                                struct ctl_sub_topic *v = realloc(s->v, cap * sizeof(*v));

                                if (!v)
                                        return;
                                s->v = v;
                                s->cap = cap;
                        }
                        i = s->n++;
                        memcpy(s->v[i].topic, m + 1, len - 1);
                        s->v[i].topic[len - 1] = '\0';
                        s->v[i].session = session;
                        s->v[i].n = n;
                        s->v[i].socks = 0;
                }
                if (m[0] == 1) {
                        s->v[i].socks |= bit;
                        s->v[i].gone_ms = 0;
                        return;
                }
                s->v[i].socks |= bit;   /* unfollowed until now: gone from here below */
        }
        if (!(s->v[i].socks & bit))
                return;
        s->v[i].socks &= ~bit;
        if (!s->v[i].socks)
                s->v[i].gone_ms = now_ms > 0 ? now_ms : 1;
}

long ctl_subs_expire(struct ctl_subs *s, int64_t now_ms, int64_t grace_ms,
                     void (*gone)(void *ctx, uint64_t session, uint64_t n), void *ctx)
{
        long next = -1;

        for (size_t i = 0; i < s->n;) {
                struct ctl_sub_topic *t = &s->v[i];
                int64_t left;

                if (!t->gone_ms) {
                        i++;
                        continue;
                }
                left = t->gone_ms + grace_ms - now_ms;
                if (left > 0) {
                        if (next < 0 || left < next)
                                next = (long)left;
                        i++;
                        continue;
                }
                gone(ctx, t->session, t->n);
                s->v[i] = s->v[--s->n];
        }
        return next;
}
