/* control_peers: request tokens to ROUTER peers (control_peers.h). */
#include "control_peers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void peers_init(struct ctl_peers *p)
{
        *p = (struct ctl_peers){ .next_token = 1 };
}

void peers_fini(struct ctl_peers *p)
{
        free(p->v);
        p->v = NULL;
        p->n = p->cap = p->live = 0;
}

static void compact(struct ctl_peers *p)
{
        size_t j = 0;

        for (size_t i = 0; i < p->n; i++)
                if (p->v[i].token)
                        p->v[j++] = p->v[i];
        p->n = j;
}

uint64_t peers_add(struct ctl_peers *p, const struct ctl_peer *peer)
{
        struct ctl_peer *e;

        if (p->live >= CTL_MAX_PENDING)
                return 0;
        if (p->n == p->cap) {
                if (p->live < p->n / 2 + 1 && p->n) {
                        compact(p);
                } else {
                        size_t cap = p->cap ? p->cap * 2 : 64;
                        struct ctl_peer *v = realloc(p->v, cap * sizeof(*v));

                        if (!v)
                                return 0;
                        p->v = v;
                        p->cap = cap;
                }
        }
        e = &p->v[p->n++];
        *e = *peer;
        e->token = p->next_token++;
        p->live++;
        return e->token;
}

int peers_take(struct ctl_peers *p, uint64_t token, struct ctl_peer *ret)
{
        size_t lo = 0, hi = p->n;

        /* Entries are in token order; finished ones keep their place (token 0) until compacted. */
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2, k = mid;

                /* A finished entry: look for the nearest live one to compare with. */
                while (k < hi && !p->v[k].token)
                        k++;
                if (k == hi) {
                        hi = mid;
                        continue;
                }
                if (p->v[k].token == token) {
                        *ret = p->v[k];
                        p->v[k].token = 0;
                        p->live--;
                        if (p->live == 0)
                                p->n = 0;
                        else if (p->n - p->live > 64 && p->n - p->live > p->live)
                                compact(p);     /* keeps the skips above short */
                        return 0;
                }
                if (p->v[k].token < token)
                        lo = k + 1;
                else
                        hi = mid;
        }
        return -ENOENT;
}

size_t peers_live(const struct ctl_peers *p)
{
        return p->live;
}
