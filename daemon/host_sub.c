/*
 * host_sub: where a session's rows go: the results file (recorder.h) and
 * the subscriptions, published as samples on topic "s<session>.<n>"; and
 * the session's state changes, published as events on topic "events".
 *
 * DESIGN: the master's sink runs on the session thread; subscriptions are
 * created and removed by commands on that same thread, so the sink reads
 * them without a lock. A subscription names recorded columns (by their
 * column name, "<instance>.<variable>" or with "[i,j]" for an array
 * element) or variables the master routes (read with master_value(), an
 * array as a msgpack array); none names every recorded column. Samples
 * are the communication points' rows (intermediate update rows are not
 * published), every decimation-th of them: the recorded points' rows, or
 * with everyPoint every point's (the master hands those over only while
 * such a subscription exists: master_set_rows(), so a session without one
 * pays nothing per point; they are flagged and never recorded). Every row
 * handed over while any subscription exists carries the wall clock of its
 * point (monoNs, realNs). The first sample of a subscription carries the
 * names and PROTO_SAMPLE_FIRST, as does the first after a loss (the
 * first may have been lost); the first after a restore carries
 * PROTO_SAMPLE_RESTORED. opts.publish is non-blocking by
 * contract, so the master never waits on a subscriber. A sample lost
 * on the way (the control thread's queue full, a subscriber that does
 * not keep up) is counted in its subscription's drops (pub_drops.h),
 * which every sample handed over holds a reference to; the next sample
 * built after the count grew carries PROTO_SAMPLE_DROPPED.
 *
 * A subscription records who made it (hcmd.user): topics are predictable,
 * so only that user, the session's user or an admin removes it, and one
 * user holds at most HOST_MAX_SUBS_USER of a session's HOST_MAX_SUBS. One
 * whose subscribers have all gone is removed too (host_sub_gone(): an
 * unsubscribe with token 0, which nobody asked: its answer is dropped,
 * host.c complete()).
 *
 * Threads: session thread only.
 */
#include "daemon/host_int.h"
#include "daemon/pub_drops.h"
#include "engine/run/row_rec.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

static void record(struct hsess *hs, const struct master_row *row)
{
        int r;

        if (!hs->rec || hs->rec_error)
                return;
        r = row_rec_sample(hs->rec, hs->col_types, hs->rec_vals, row);
        if (r < 0 && r != -ENOBUFS)
                hrec_failed(hs, r);
}

/* One number of type t (a column's or a variable's) as msgpack. */
static void put_num(struct pw *w, enum md_type t, double d)
{
        if (md_type_is_float(t)) {
                pw_f64(w, d);
                return;
        }
        if (isnan(d))
                d = 0;
        if (t == MD_BOOLEAN)
                pw_bool(w, d != 0);
        else if (md_type_is_unsigned(t))
                pw_u64(w, d >= 0x1p64 ? UINT64_MAX : d < 0 ? 0 : (uint64_t)d);
        else
                pw_i64(w, d >= 0x1p63 ? INT64_MAX : d < -0x1p63 ? INT64_MIN : (int64_t)d);
}

static void put_item(struct hsess *hs, struct pw *w, const struct hsub_item *it,
                     const struct master_row *row)
{
        if (it->col != SIZE_MAX) {
                const struct master_blob *b = row->blobs ? &row->blobs[it->col] : NULL;

                if (it->type == MD_STRING)
                        pw_strn(w, b && b->data ? b->data : "", b ? b->len : 0);
                else if (it->type == MD_BINARY)
                        pw_bin(w, b ? b->data : NULL, b ? b->len : 0);
                else if ((it->type == MD_INT64 || it->type == MD_ENUMERATION) && row->bits)
                        pw_i64(w, (int64_t)row->bits[it->col]);
                else if (it->type == MD_UINT64 && row->bits)
                        pw_u64(w, row->bits[it->col]);
                else
                        put_num(w, it->type, row->values ? row->values[it->col] : NAN);
                return;
        }
        if (it->array)
                pw_array(w, (uint32_t)it->elements);
        for (uint64_t e = 0; e < it->elements; e++) {
                double d = NAN;

                (void) master_value(hs->m, it->comp, it->var, e, &d);
                put_num(w, it->type, d);
        }
}

/* The row's flags as a sample's (MASTER_ROW_* are the master's, not the wire's). */
static uint32_t row_flags(unsigned f)
{
        return (f & MASTER_ROW_EXTRA ? PROTO_SAMPLE_EXTRA : 0) |
               (f & MASTER_ROW_EVENT_LEFT ? PROTO_SAMPLE_EVENT_LEFT : 0) |
               (f & MASTER_ROW_UNRECORDED ? PROTO_SAMPLE_UNRECORDED : 0);
}

static void publish(struct hsess *hs, struct hsub *sub, const struct master_row *row)
{
        struct proto_str *names = NULL;
        struct proto_sample s = {
                .session = hs->id, .generation = hs->generation, .time = row->time,
                .point = row->point, .flags = row_flags(row->flags), .n = (uint32_t)sub->n_items,
                .mono_ns = row->mono_ns, .real_ns = row->real_ns,
        };
        uint64_t lost = pub_drops_get(sub->drops);
        struct pw w;
        void *buf;
        size_t len;

        if (lost > sub->drops_seen)
                s.flags |= PROTO_SAMPLE_DROPPED;
        if (!sub->named)
                s.flags |= PROTO_SAMPLE_FIRST;
        if (sub->restored)
                s.flags |= PROTO_SAMPLE_RESTORED;
        if (s.flags & (PROTO_SAMPLE_FIRST | PROTO_SAMPLE_DROPPED)) {
                names = calloc(sub->n_items ? sub->n_items : 1, sizeof(*names));
                if (!names) {
                        pub_drops_add(sub->drops);
                        return;
                }
                for (size_t i = 0; i < sub->n_items; i++)
                        names[i] = (struct proto_str){ sub->items[i].name,
                                                       (uint32_t)strlen(sub->items[i].name) };
                s.names = names;
        }
        if (pw_init(&w) < 0) {
                pub_drops_add(sub->drops);
                free(names);
                return;
        }
        proto_sample_begin(&w, &s);
        pw_array(&w, (uint32_t)sub->n_items);
        for (size_t i = 0; i < sub->n_items; i++)
                put_item(hs, &w, &sub->items[i], row);
        buf = pw_take(&w, &len);
        pw_fini(&w);
        free(names);
        if (!buf) {
                pub_drops_add(sub->drops);
                return;
        }
        sub->named = true;
        sub->restored = false;
        sub->drops_seen = lost;
        hs->h->opts.publish(hs->h->opts.publish_ctx, sub->topic, buf, len,
                            pub_drops_ref(sub->drops));
}

void hsub_sink(void *ctx, const struct master_row *row)
{
        struct hsess *hs = ctx;
        bool unrecorded = row->flags & MASTER_ROW_UNRECORDED;

        /* Intermediate updates are not communication points: not in the file, not published. */
        if (row->flags & MASTER_ROW_INTERMEDIATE)
                return;
        if (!unrecorded)
                record(hs, row);
        if (!hs->h->opts.publish)
                return;
        for (size_t i = 0; i < HOST_MAX_SUBS; i++) {
                struct hsub *sub = hs->subs[i];

                if (sub && (!unrecorded || sub->every_point) && sub->seen++ % sub->decimation == 0)
                        publish(hs, sub, row);
        }
}

/* The rows the master hands over: every point's while an everyPoint subscription exists. */
static void rows(struct hsess *hs)
{
        bool any = false, every = false;

        for (size_t i = 0; i < HOST_MAX_SUBS; i++) {
                any |= hs->subs[i] != NULL;
                every |= hs->subs[i] && hs->subs[i]->every_point;
        }
        if (hs->m)
                master_set_rows(hs->m, every, any);
}

void hsub_restored(struct hsess *hs)
{
        for (size_t i = 0; i < HOST_MAX_SUBS; i++)
                if (hs->subs[i])
                        hs->subs[i]->restored = true;
}

static void sub_free(struct hsub *sub)
{
        if (!sub)
                return;
        for (size_t i = 0; i < sub->n_items; i++)
                free(sub->items[i].name);
        free(sub->items);
        pub_drops_unref(sub->drops);
        free(sub);
}

uint64_t hsub_dropped(const struct hsess *hs)
{
        uint64_t n = hs->samples_dropped;

        for (size_t i = 0; i < HOST_MAX_SUBS; i++)
                if (hs->subs[i])
                        n += pub_drops_get(hs->subs[i]->drops);
        return n;
}

/* subs[slot]'s topic number as host_sub_live() sees it: n, or 0 for none. */
static void set_live(struct hsess *hs, size_t slot, uint64_t n)
{
        pthread_mutex_lock(&hs->lock);
        hs->sub_live[slot] = n;
        pthread_mutex_unlock(&hs->lock);
}

void hsub_free_all(struct hsess *hs)
{
        for (size_t i = 0; i < HOST_MAX_SUBS; i++) {
                sub_free(hs->subs[i]);
                hs->subs[i] = NULL;
                set_live(hs, i, 0);
        }
        rows(hs);
}

static enum md_type col_type(const struct scenario *sc, size_t col)
{
        const struct scenario_column *c = &sc->columns[col];

        return sc->components[c->comp].fmu->md->vars[c->var].type;
}

/* Resolve name into it; -1 or the reply code with msg. */
static int item(struct hsess *hs, struct hsub_item *it, const char *name, char *msg, size_t size)
{
        const struct scenario *sc = hs->sc;
        const struct md_variable *v;
        double d;

        it->col = SIZE_MAX;
        for (size_t i = 0; i < sc->n_columns; i++)
                if (!strcmp(sc->columns[i].name, name)) {
                        it->col = i;
                        it->type = col_type(sc, i);
                        return -1;
                }
        if (scenario_find_variable(sc, name, &it->comp, &it->var) < 0) {
                snprintf(msg, size, "no variable '%s' in session %llu", name,
                         (unsigned long long)hs->id);
                return PROTO_E_NO_VARIABLE;
        }
        v = &sc->components[it->comp].fmu->md->vars[it->var];
        it->type = v->type;
        it->elements = scenario_var_elements(sc, it->comp, v);
        it->array = v->n_dims > 0;
        /* Defensive: the sizes of a loaded scenario resolve (scenario_dims.c checks them). */
        if (it->elements == SCENARIO_NO_SIZE) {
                snprintf(msg, size, "'%s': its dimensions cannot be resolved", name);
                return PROTO_E_INVALID;
        }
        if (it->elements == 0) {
                snprintf(msg, size, "'%s' has no elements (its structural parameters size it "
                         "0): nothing to sample", name);
                return PROTO_E_NO_VARIABLE;
        }
        if (master_value(hs->m, it->comp, it->var, 0, &d) < 0 || it->elements > UINT32_MAX) {
                snprintf(msg, size, "'%s' is neither recorded nor connected: only those are "
                         "sampled", name);
                return PROTO_E_NO_VARIABLE;
        }
        if (v->type == MD_STRING || v->type == MD_BINARY) {
                snprintf(msg, size, "'%s' is a %s: record it to sample it", name,
                         md_type_name(v->type));
                return PROTO_E_TYPE;
        }
        return -1;
}

/*
 * A sample with its names (the first one, and one after a drop) must fit
 * in one message a subscriber takes: a larger one is dropped by its SUB
 * socket with the connection, and the subscriber waits for ever. Bounded
 * from below (names, 9 bytes a number; a String or Binary value counted
 * as empty): refused now rather than never delivered.
 */
static int fits(const struct hsess *hs, const struct hsub *sub, char *msg, size_t size)
{
        size_t limit = hs->h->opts.max_reply < PROTO_MAX_MSG ? hs->h->opts.max_reply :
                       PROTO_MAX_MSG;
        uint64_t need = 256;

        for (size_t i = 0; i < sub->n_items; i++) {
                const struct hsub_item *it = &sub->items[i];

                need += strlen(it->name) + 5 + (it->col != SIZE_MAX ? 1 : it->elements) * 9 + 5;
        }
        if (need <= limit)
                return -1;
        snprintf(msg, size, "a sample of these %zu columns with their names is at least %llu "
                 "bytes, more than the %zu a message may be: subscribe to fewer", sub->n_items,
                 (unsigned long long)need, limit);
        return PROTO_E_TOO_LARGE;
}

static int build(struct hsess *hs, struct hsub *sub, const struct proto_subscribe *a, char *msg,
                 size_t size)
{
        const struct scenario *sc = hs->sc;
        size_t n = a->n ? a->n : sc->n_columns;
        int code = -1;

        sub->items = calloc(n ? n : 1, sizeof(*sub->items));
        if (!sub->items) {
                snprintf(msg, size, "out of memory");
                return PROTO_E_INTERNAL;
        }
        for (size_t i = 0; i < n && code < 0; i++, sub->n_items++) {
                struct hsub_item *it = &sub->items[i];

                it->name = a->n ? hvalues_strdup(&a->names[i]) : strdup(sc->columns[i].name);
                if (!it->name) {
                        snprintf(msg, size, "names: not a variable name");
                        return PROTO_E_BAD_REQUEST;
                }
                if (!a->n) {
                        /* Every column: each is itself, with no search among the others. */
                        it->col = i;
                        it->type = col_type(sc, i);
                        continue;
                }
                code = item(hs, it, it->name, msg, size);
        }
        return code >= 0 ? code : fits(hs, sub, msg, size);
}

void hsub_subscribe(struct hsess *hs, const struct hcmd *c, const struct pv *args)
{
        struct proto_subscribe a;
        struct hsub *sub = NULL;
        char msg[HOST_MSG_MAX], err[256];
        void *mem = NULL;
        size_t slot = HOST_MAX_SUBS, mine = 0;
        int code;
        struct pw w;

        if (proto_subscribe_decode(args, &a, &mem, err, sizeof(err)) < 0) {
                free(mem);
                host_reply_error(hs->h, c->token, c->id, PROTO_E_BAD_REQUEST, "%s", err);
                return;
        }
        for (size_t i = 0; i < HOST_MAX_SUBS; i++) {
                if (!hs->subs[i] && slot == HOST_MAX_SUBS)
                        slot = i;
                else if (hs->subs[i] && c->user[0] && !strcmp(hs->subs[i]->user, c->user))
                        mine++;
        }
        sub = slot < HOST_MAX_SUBS && mine < HOST_MAX_SUBS_USER ? calloc(1, sizeof(*sub)) : NULL;
        if (sub && !(sub->drops = pub_drops_new())) {
                free(sub);
                sub = NULL;
        }
        if (!sub) {
                code = slot < HOST_MAX_SUBS && mine < HOST_MAX_SUBS_USER ? PROTO_E_INTERNAL :
                                                                           PROTO_E_LIMIT;
                if (code == PROTO_E_INTERNAL)
                        snprintf(msg, sizeof(msg), "out of memory");
                else if (slot == HOST_MAX_SUBS)
                        snprintf(msg, sizeof(msg), "%d subscriptions already (the limit)",
                                 HOST_MAX_SUBS);
                else
                        snprintf(msg, sizeof(msg), "%d subscriptions of %s in session %llu "
                                 "already (the limit for one subscriber)", HOST_MAX_SUBS_USER,
                                 c->user, (unsigned long long)hs->id);
        } else {
                code = build(hs, sub, &a, msg, sizeof(msg));
        }
        free(mem);
        if (code >= 0) {
                sub_free(sub);
                host_reply_error(hs->h, c->token, c->id, (enum proto_err)code, "%s", msg);
                return;
        }
        snprintf(sub->user, sizeof(sub->user), "%s", c->user);
        sub->n = ++hs->next_sub;
        sub->decimation = a.decimation ? a.decimation : 1;
        sub->every_point = a.every_point;
        snprintf(sub->topic, sizeof(sub->topic), "s%llu.%llu", (unsigned long long)hs->id,
                 (unsigned long long)sub->n);
        hs->subs[slot] = sub;
        set_live(hs, slot, sub->n);
        rows(hs);
        if (pw_init(&w) < 0)
                return;
        proto_reply_ok_begin(&w, c->id);
        proto_subscribe_result_encode(&w, &(struct proto_subscribe_result){
                .topic = { sub->topic, (uint32_t)strlen(sub->topic) } });
        host_reply_take(hs->h, c->token, c->id, &w);
        pw_fini(&w);
}

void hsub_unsubscribe(struct hsess *hs, const struct hcmd *c, const struct pv *args)
{
        struct proto_unsubscribe a;
        char err[256];
        struct pw w;

        if (proto_unsubscribe_decode(args, &a, err, sizeof(err)) < 0) {
                host_reply_error(hs->h, c->token, c->id, PROTO_E_BAD_REQUEST, "%s", err);
                return;
        }
        for (size_t i = 0; i < HOST_MAX_SUBS; i++) {
                struct hsub *sub = hs->subs[i];

                if (!sub || strlen(sub->topic) != a.topic.len ||
                    memcmp(sub->topic, a.topic.ptr, a.topic.len))
                        continue;
                if (!c->admin && strcmp(sub->user, c->user) &&
                    !(hs->user[0] && !strcmp(hs->user, c->user))) {
                        host_reply_error(hs->h, c->token, c->id, PROTO_E_DENIED,
                                         "unsubscribe of '%s' needs its subscriber (%s), the "
                                         "owner of session %llu (%s) or the admin role; you "
                                         "are %s", sub->topic, sub->user[0] ? sub->user : "?",
                                         (unsigned long long)hs->id,
                                         hs->user[0] ? hs->user : "?", c->user);
                        return;
                }
                if (!c->token)
                        hlog_line(hs, LOG_NOTICE, "subscription %s of %s removed: its "
                                  "subscribers have all gone", sub->topic,
                                  sub->user[0] ? sub->user : "?");
                hs->samples_dropped += pub_drops_get(sub->drops);
                sub_free(sub);
                hs->subs[i] = NULL;
                set_live(hs, i, 0);
                rows(hs);
                if (pw_init(&w) < 0)
                        return;
                proto_reply_ok_begin(&w, c->id);
                pw_nil(&w);
                host_reply_take(hs->h, c->token, c->id, &w);
                pw_fini(&w);
                return;
        }
        host_reply_error(hs->h, c->token, c->id, PROTO_E_INVALID,
                         "no subscription '%.*s' in session %llu",
                         (int)(a.topic.len > 64 ? 64 : a.topic.len), a.topic.ptr,
                         (unsigned long long)hs->id);
}

void hsub_event(struct hsess *hs, const char *message)
{
        struct proto_event e = {
                .session = hs->id, .generation = hs->generation, .state = hs->state,
                .time = hs->m ? master_time(hs->m) : 0,
                .message = { message ? message : "", message ? (uint32_t)strlen(message) : 0 },
        };
        struct master_stats ms;
        struct pw w;
        void *buf;
        size_t len;

        if (!hs->h->opts.publish || pw_init(&w) < 0)
                return;
        if (hs->m) {
                master_get_stats(hs->m, &ms);
                e.overruns = ms.overruns;
                e.lateness_p99_us = (double)ms.lateness.p99_us;
                e.lateness_max_us = (double)ms.lateness.max_us;
        }
        proto_event_encode(&w, &e);
        buf = pw_take(&w, &len);
        pw_fini(&w);
        if (buf)
                hs->h->opts.publish(hs->h->opts.publish_ctx, "events", buf, len, NULL);
}
