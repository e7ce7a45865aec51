/*
 * worker_log: the worker's FMU logger (worker/log.c) on a real channel,
 * read back from the daemon's end: long messages and categories are cut
 * with a marker, at most CALL_LOGS_PER_CALL events go out per request and
 * the rest are counted, a full ring drops rather than blocks, and a
 * message from a thread the FMU started is never sent.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker/worker.h"

static struct chan *daemon_end;
static struct worker w;

static void setup(void)
{
        struct chan_params p = { .slot_size = 64, .req_slots = 64, .rep_slots = 256 };
        int fd, wfd;

        fd = chan_create(&p, &daemon_end);
        cr_assert(ge(int, fd, 0));
        wfd = dup(fd);
        memset(&w, 0, sizeof(w));
        cr_assert(eq(int, chan_attach(wfd, &w.chan), 0));
        w.tx = chan_tx(w.chan);
        w.main_thread = pthread_self();
        w.seq = 42;
}

static void teardown(void)
{
        chan_close(w.chan);
        chan_close(daemon_end);
}

/* The next LOG event: its body and NUL-terminated texts. */
static bool next_log(struct call_log *ret, char *category, char *message)
{
        const void *rec;
        struct call_in in;
        const void *p;
        size_t len;
        bool side;

        if (ring_peek(chan_rx(daemon_end), &rec, &len) < 0)
                return false;
        cr_assert(eq(int, call_parse(rec, len, &in, &side), 0));
        cr_assert(eq(int, in.hdr.op, CALL_EV_LOG));
        cr_assert(eq(u64, in.hdr.seq, 42));
        memcpy(ret, in.body, sizeof(*ret));
        cr_assert(eq(int, call_in_bytes(&in, &ret->category, CALL_CATEGORY_MAX, &p), 0));
        memcpy(category, p, ret->category.len);
        category[ret->category.len] = '\0';
        cr_assert(eq(int, call_in_bytes(&in, &ret->message, CALL_MSG_MAX, &p), 0));
        memcpy(message, p, ret->message.len);
        message[ret->message.len] = '\0';
        ring_release(chan_rx(daemon_end));
        return true;
}

Test(worker_log, long_messages_and_categories_are_cut_with_a_marker, .init = setup, .fini = teardown)
{
        char *msg = malloc(5000), cat[300], got_cat[CALL_CATEGORY_MAX + 1], got[CALL_MSG_MAX + 1];
        struct call_log ev;

        memset(msg, 'm', 4999);
        msg[4999] = '\0';
        memset(cat, 'c', 299);
        cat[299] = '\0';
        log_fmi3(&w, fmi3Warning, cat, msg);
        cr_assert(next_log(&ev, got_cat, got));
        cr_assert(eq(int, ev.status, fmi3Warning));
        cr_assert(eq(u32, ev.truncated, 1));
        cr_assert(eq(sz, strlen(got), CALL_MSG_MAX));
        cr_assert(eq(str, got + CALL_MSG_MAX - strlen(" [truncated]"), " [truncated]"));
        cr_assert(eq(sz, strlen(got_cat), CALL_CATEGORY_MAX));
        /* A message that fits arrives as it is; an FMI 2.0 one is formatted first. */
        log_fmi2(&w, "inst", fmi2Error, "logStatusError", "value %d of '%s'", 7, "x");
        cr_assert(next_log(&ev, got_cat, got));
        cr_assert(eq(str, got, "value 7 of 'x'"));
        cr_assert(eq(u32, ev.truncated, 0));
        cr_assert(eq(str, w.last_error, "value 7 of 'x'"), "kept for the reply");
        free(msg);
}

Test(worker_log, at_most_a_budget_per_call_and_never_blocking, .init = setup, .fini = teardown)
{
        struct call_log ev;
        char cat[CALL_CATEGORY_MAX + 1], msg[CALL_MSG_MAX + 1];
        int n = 0;

        for (int i = 0; i < 1000; i++)
                log_fmi3(&w, fmi3OK, "logEvents", "tick");
        while (next_log(&ev, cat, msg))
                n++;
        cr_assert(eq(int, n, (int)CALL_LOGS_PER_CALL));
        cr_assert(eq(u32, w.logs_dropped, 1000 - CALL_LOGS_PER_CALL));
        /* A ring with no room drops at once: fill it with long messages, nobody reads. */
        w.logs_sent = w.logs_dropped = 0;
        {
                char big[CALL_MSG_MAX];

                memset(big, 'b', sizeof(big) - 1);
                big[sizeof(big) - 1] = '\0';
                for (int i = 0; i < (int)CALL_LOGS_PER_CALL; i++)
                        log_fmi3(&w, fmi3OK, "logEvents", big);
        }
        cr_assert(gt(u32, w.logs_dropped, 0));
        cr_assert(eq(u32, w.logs_sent + w.logs_dropped, CALL_LOGS_PER_CALL));
}

static void *other_thread(void *arg)
{
        log_fmi3(arg, fmi3Error, "logStatusError", "from another thread");
        return NULL;
}

Test(worker_log, messages_from_other_threads_are_not_sent, .init = setup, .fini = teardown)
{
        char cat[CALL_CATEGORY_MAX + 1], msg[CALL_MSG_MAX + 1];
        struct call_log ev;
        pthread_t t;

        cr_assert(eq(int, pthread_create(&t, NULL, other_thread, &w), 0));
        cr_assert(eq(int, pthread_join(t, NULL), 0));
        cr_assert(not(next_log(&ev, cat, msg)));
        cr_assert(eq(str, w.last_error, ""));
}
