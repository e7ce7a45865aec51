/* worker_fixture: a worker in the test process (worker_fixture.h). */
#include "worker_fixture.h"

#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct md *parse(const char *dir)
{
        char path[1100], *buf;
        struct diag_list diags;
        struct md *md = NULL;
        long len;
        FILE *f;

        snprintf(path, sizeof(path), "%s/modelDescription.xml", dir);
        f = fopen(path, "rb");
        cr_assert(f != NULL);
        fseek(f, 0, SEEK_END);
        len = ftell(f);
        rewind(f);
        buf = malloc((size_t)len);
        cr_assert(eq(sz, fread(buf, 1, (size_t)len, f), (size_t)len));
        fclose(f);
        diag_list_init(&diags, 0);
        cr_assert(eq(int, md_parse(buf, (size_t)len, "modelDescription.xml", NULL, &diags, &md), 0));
        diag_list_fini(&diags);
        free(buf);
        return md;
}

void wfix_load(struct worker *w, const char *fmu)
{
        char dir[1024];
        struct diag_list diags;
        int n = snprintf(dir, sizeof(dir), "%s/%s", FMUD_TEST_FMU_DIR, fmu);

        cr_assert(n > 0 && n < (int)sizeof(dir), "the FMU's path is too long");
        memset(w, 0, sizeof(*w));
        w->md = parse(dir);
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
        chan_close(w->chan);
        chan_close(daemon_end);
}
