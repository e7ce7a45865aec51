/* worker_fixture: a worker in the test process (worker_fixture.h). */
#include "worker_fixture.h"
#include "support/md_load.h"

#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void wfix_load(struct worker *w, const char *fmu)
{
        char dir[1024];
        struct diag_list diags;
        int n = snprintf(dir, sizeof(dir), "%s/%s", FMUD_TEST_FMU_DIR, fmu);

        cr_assert(n > 0 && n < (int)sizeof(dir), "the FMU's path is too long");
        memset(w, 0, sizeof(*w));
        w->md = md_load_dir(dir);
        cr_assert(w->md != NULL, "%s", dir);
        diag_list_init(&diags, 0);
        cr_assert(eq(int, fmu_lib_open(dir, w->md, &diags, &w->lib), 0));
        diag_list_fini(&diags);
        w->fmi = w->md->fmi;
}

void wfix_unload(struct worker *w)
{
        fmu_lib_close(w->lib);
        md_free(w->md);
}

void wfix_channel(struct worker *w, struct chan **ret_daemon)
{
        struct chan_params p = { .slot_size = 64, .req_slots = 64, .rep_slots = 64 };
        int fd;

        fd = chan_create(&p, ret_daemon);
        cr_assert(fd >= 0, "chan_create: %d", fd);
        cr_assert(eq(int, chan_attach(dup(fd), &w->chan), 0));
        w->tx = chan_tx(w->chan);
        w->rx = chan_rx(w->chan);
        w->side = chan_side(w->chan, &w->side_size);
        w->max_record = w->tx->max_record;
        w->main_thread = pthread_self();
        w->ppid = getppid();
        wait_policy_init(&w->wait, WAIT_ADAPTIVE);
        for (unsigned d = 0; d < WORKER_DEPTHS; d++) {
                cr_assert(eq(int, wbuf_reserve(&w->scratch[d], w->max_record), 0));
                cr_assert(eq(int, wbuf_reserve(&w->req[d], w->max_record), 0));
        }
}

void wfix_channel_close(struct worker *w, struct chan *daemon_end)
{
        for (unsigned d = 0; d < WORKER_DEPTHS; d++) {
                wbuf_fini(&w->scratch[d]);
                wbuf_fini(&w->req[d]);
        }
        wbuf_fini(&w->tmp);
        wbuf_fini(&w->tmp2);
        wbuf_fini(&w->blocks);
        layout_free(w);
        chan_close(w->chan);
        chan_close(daemon_end);
}

void wfix_expect_one_refusal(struct chan *daemon_end, uint64_t seq, enum call_error e,
                             const char *text)
{
        struct call_reply rep;
        struct call_in in;
        const void *rec, *msg;
        char buf[CALL_MSG_MAX + 1];
        bool side = false;
        size_t len;

        cr_assert(eq(int, ring_peek(chan_rx(daemon_end), &rec, &len), 0), "no reply");
        cr_assert(eq(int, call_parse(rec, len, &in, &side), 0));
        cr_assert(eq(int, in.hdr.kind, CALL_REPLY));
        cr_assert(eq(u64, in.hdr.seq, seq));
        memcpy(&rep, in.body, sizeof(rep));
        cr_assert(eq(int, call_in_bytes(&in, &rep.msg, CALL_MSG_MAX, &msg), 0));
        memcpy(buf, msg, rep.msg.len);
        buf[rep.msg.len] = '\0';
        cr_assert(eq(int, rep.error, (int)e), "%s", buf);
        cr_assert(strstr(buf, text) != NULL, "%s", buf);
        cr_assert(eq(int, ring_release(chan_rx(daemon_end)), 0));
        cr_assert(eq(int, ring_peek(chan_rx(daemon_end), &rec, &len), -EAGAIN), "a second reply");
}
