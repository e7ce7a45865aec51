/* channel: memfd lifecycle, header validation against a hostile peer, and a two-process echo. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shm/channel.h"

/* The descriptor number a worker finds its channel on. */
#define WORKER_CHAN_FD  3

static const struct chan_params params = {
        .name = "test-chan",
        .slot_size = 64,
        .req_slots = 64,
        .rep_slots = 128,
        .side_size = 1 << 20,
};

/* The lowest free descriptor: unchanged across a failed call means nothing leaked. */
static int lowest_free_fd(void)
{
        int fd = dup(0);

        close(fd);
        return fd;
}

static void *map_all(int fd, size_t *ret_size)
{
        off_t size = lseek(fd, 0, SEEK_END);
        void *p;

        cr_assert(size > 0);
        p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        cr_assert(not(eq(ptr, p, MAP_FAILED)));
        *ret_size = (size_t)size;
        return p;
}

/* Attach a second view of c, as the worker would; returns the error, closes the fd on failure. */
static int attach_dup(struct chan *c, struct chan **ret)
{
        int fd = dup(chan_fd(c)), r;

        cr_assert(ge(int, fd, 0));
        r = chan_attach(fd, ret);
        if (r < 0)
                close(fd);
        return r;
}

/* A memfd holding 'len' bytes of 'src', 'size' long, sealed or not. */
static int forge(const void *src, size_t len, size_t size, int seal)
{
        int fd = memfd_create("forged", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        void *p;

        cr_assert(ge(int, fd, 0));
        cr_assert(eq(int, ftruncate(fd, (off_t)size), 0));
        p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        cr_assert(not(eq(ptr, p, MAP_FAILED)));
        memcpy(p, src, len < size ? len : size);
        munmap(p, size);
        if (seal)
                cr_assert(eq(int, fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0));
        return fd;
}

Test(channel, create_returns_a_sealed_memfd_that_attaches)
{
        struct chan *d, *w;
        uint64_t side_size;
        int fd;

        fd = chan_create(&params, &d);
        cr_assert(ge(int, fd, 0));
        cr_assert(eq(int, chan_fd(d), fd));
        cr_assert(eq(int, fcntl(fd, F_GET_SEALS), F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL));
        cr_assert(eq(int, fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC));
        cr_assert(eq(int, ftruncate(fd, 4096), -1));
        cr_assert(eq(int, errno, EPERM));
        cr_assert(eq(int, attach_dup(d, &w), 0));
        cr_assert(not(eq(ptr, chan_side(w, &side_size), NULL)));
        cr_assert(eq(u64, side_size, params.side_size));
        cr_assert(eq(u64, (uintptr_t)chan_side(w, NULL) % 4096, 0));
        chan_close(w);
        chan_close(d);
        chan_close(NULL);
}

Test(channel, rings_connect_daemon_tx_to_worker_rx_and_back)
{
        struct chan *d, *w;
        char b[64];

        cr_assert(ge(int, chan_create(&params, &d), 0));
        cr_assert(eq(int, attach_dup(d, &w), 0));
        cr_assert(eq(int, ring_push(chan_tx(d), "request", 7), 0));
        cr_assert(eq(int, ring_pop(chan_rx(w), b, sizeof(b)), 7));
        cr_assert(eq(int, memcmp(b, "request", 7), 0));
        cr_assert(eq(int, ring_push(chan_tx(w), "reply!", 6), 0));
        cr_assert(eq(int, ring_pop(chan_rx(d), b, sizeof(b)), 6));
        cr_assert(eq(int, memcmp(b, "reply!", 6), 0));
        cr_assert(eq(int, ring_pop(chan_rx(d), b, sizeof(b)), -EAGAIN));
        cr_assert(eq(u32, chan_rx(w)->capacity, params.req_slots));
        cr_assert(eq(u32, chan_tx(w)->capacity, params.rep_slots));
        chan_close(w);
        chan_close(d);
}

Test(channel, create_refuses_bad_parameters_and_leaves_nothing_behind)
{
        struct chan_params p = params;
        struct chan *c = NULL;
        int lowest = lowest_free_fd();

        p.slot_size = 24;
        cr_assert(eq(int, chan_create(&p, &c), -EINVAL));
        p = params;
        p.req_slots = 100;
        cr_assert(eq(int, chan_create(&p, &c), -EINVAL));
        p = params;
        p.side_size = CHAN_SIDE_MAX + 1;
        cr_assert(eq(int, chan_create(&p, &c), -EINVAL));
        p = params;
        p.max_record = 1u << 20;
        cr_assert(eq(int, chan_create(&p, &c), -EINVAL));
        cr_assert(eq(ptr, c, NULL));
        cr_assert(eq(int, lowest_free_fd(), lowest));
}

Test(channel, side_buffer_and_spin_hint)
{
        struct chan_params p = params;
        struct chan *d, *w;
        uint64_t size;
        void *v;

        cr_assert(ge(int, chan_create(&params, &d), 0));
        cr_assert(eq(int, attach_dup(d, &w), 0));
        cr_assert(eq(int, chan_side_ref(w, 0, params.side_size, &v), 0));
        cr_assert(eq(ptr, v, chan_side(w, &size)));
        cr_assert(eq(int, chan_side_ref(w, params.side_size, 0, &v), 0));
        cr_assert(eq(int, chan_side_ref(w, params.side_size, 1, &v), -ERANGE));
        cr_assert(eq(int, chan_side_ref(w, 1, params.side_size, &v), -ERANGE));
        cr_assert(eq(int, chan_side_ref(w, UINT64_MAX, 2, &v), -ERANGE));
        cr_assert(eq(u32, chan_active(w), 1));
        chan_set_active(d, 5);
        cr_assert(eq(u32, chan_active(w), 5));
        chan_set_active(d, 0);
        cr_assert(eq(u32, chan_active(w), 1));
        chan_close(w);
        chan_close(d);

        p.side_size = 0;
        cr_assert(ge(int, chan_create(&p, &d), 0));
        cr_assert(eq(ptr, chan_side(d, &size), NULL));
        cr_assert(eq(u64, size, 0));
        cr_assert(eq(int, chan_side_ref(d, 0, 1, &v), -ERANGE));
        chan_close(d);
}

/* --- a hostile or broken memfd handed to chan_attach() --- */

struct forged {
        struct chan *d;
        struct chan_hdr *h;     /* a writable view of the daemon's header */
        size_t size;
};

static void forged_open(struct forged *f)
{
        cr_assert(ge(int, chan_create(&params, &f->d), 0));
        f->h = map_all(chan_fd(f->d), &f->size);
}

static void forged_close(struct forged *f)
{
        munmap(f->h, f->size);
        chan_close(f->d);
}

static int forged_attach(struct forged *f)
{
        struct chan *w = NULL;
        int lowest = lowest_free_fd(), r;

        r = attach_dup(f->d, &w);
        if (r == 0)
                chan_close(w);
        cr_assert(eq(int, lowest_free_fd(), lowest));
        return r;
}

Test(channel, attach_refuses_wrong_magic_and_version)
{
        struct forged f;

        forged_open(&f);
        f.h->magic = 0x12345678;
        cr_assert(eq(int, forged_attach(&f), -EBADMSG));
        f.h->magic = CHAN_MAGIC;
        f.h->version = CHAN_VERSION + 1;
        cr_assert(eq(int, forged_attach(&f), -EPROTONOSUPPORT));
        f.h->version = CHAN_VERSION;
        cr_assert(eq(int, forged_attach(&f), 0));
        forged_close(&f);
}

Test(channel, attach_refuses_a_size_that_disagrees_with_fstat)
{
        struct forged f;

        forged_open(&f);
        f.h->total_size += 4096;
        cr_assert(eq(int, forged_attach(&f), -EMSGSIZE));
        f.h->total_size -= 8192;
        cr_assert(eq(int, forged_attach(&f), -EMSGSIZE));
        forged_close(&f);
}

Test(channel, attach_refuses_a_memfd_smaller_than_its_header_claims)
{
        struct forged f;
        struct chan *w;
        int fd;

        forged_open(&f);
        /* The real header, in a file one page long. */
        fd = forge(f.h, sizeof(struct chan_hdr), 4096, 1);
        cr_assert(eq(int, chan_attach(fd, &w), -EMSGSIZE));
        close(fd);
        /* A file shorter than the header itself. */
        fd = forge(f.h, 64, 64, 1);
        cr_assert(eq(int, chan_attach(fd, &w), -EMSGSIZE));
        close(fd);
        forged_close(&f);
}

Test(channel, attach_refuses_an_unsealed_memfd_and_a_pipe)
{
        struct forged f;
        struct chan *w;
        int fd, pfd[2];

        forged_open(&f);
        fd = forge(f.h, f.size, f.size, 0);
        cr_assert(eq(int, chan_attach(fd, &w), -EPERM));
        close(fd);
        /* The same bytes, sealed: accepted. */
        fd = forge(f.h, f.size, f.size, 1);
        cr_assert(eq(int, chan_attach(fd, &w), 0));
        chan_close(w);
        cr_assert(eq(int, pipe(pfd), 0));
        cr_assert(eq(int, chan_attach(pfd[0], &w), -EMSGSIZE));
        close(pfd[0]);
        close(pfd[1]);
        forged_close(&f);
}

Test(channel, attach_refuses_offsets_and_sizes_out_of_bounds)
{
        struct forged f;
        struct chan_hdr saved;

        forged_open(&f);
        memcpy(&saved, f.h, offsetof(struct chan_hdr, active));
#define RESET() memcpy(f.h, &saved, offsetof(struct chan_hdr, active))
        f.h->req_off = f.size;                          /* past the end */
        cr_assert(eq(int, forged_attach(&f), -ERANGE));
        RESET();
        f.h->req_off = 0;                               /* over the header */
        cr_assert(eq(int, forged_attach(&f), -ERANGE));
        RESET();
        f.h->req_off += 8;                              /* misaligned */
        cr_assert(eq(int, forged_attach(&f), -ERANGE));
        RESET();
        f.h->rep_off = f.h->req_off;                    /* overlapping */
        cr_assert(eq(int, forged_attach(&f), -ERANGE));
        RESET();
        f.h->side_size = UINT64_MAX - 4095;             /* wraps around */
        cr_assert(eq(int, forged_attach(&f), -ERANGE));
        RESET();
        f.h->side_size = f.size;                        /* runs past the end */
        cr_assert(eq(int, forged_attach(&f), -ERANGE));
        RESET();
        f.h->req_size -= 64;                            /* ring geometry disagrees */
        cr_assert(eq(int, forged_attach(&f), -ERANGE));
        RESET();
        ((struct ring_hdr *)((char *)f.h + f.h->rep_off))->magic = 0;
        cr_assert(eq(int, forged_attach(&f), -EBADMSG));
        ((struct ring_hdr *)((char *)f.h + f.h->rep_off))->magic = RING_MAGIC;
        ((struct ring_hdr *)((char *)f.h + f.h->req_off))->capacity = 128;
        cr_assert(eq(int, forged_attach(&f), -ERANGE));
        ((struct ring_hdr *)((char *)f.h + f.h->req_off))->capacity = 64;
        cr_assert(eq(int, forged_attach(&f), 0));
#undef RESET
        forged_close(&f);
}

Test(channel, daemon_faults_a_worker_that_writes_garbage_indices_or_lengths)
{
        struct forged f;
        struct ring_hdr *rep;
        const void *v;
        size_t n;

        forged_open(&f);
        rep = (struct ring_hdr *)((char *)f.h + f.h->rep_off);
        atomic_store(&rep->tail, 1000);
        cr_assert(eq(int, ring_peek(chan_rx(f.d), &v, &n), -EPROTO));
        forged_close(&f);

        forged_open(&f);
        rep = (struct ring_hdr *)((char *)f.h + f.h->rep_off);
        atomic_store(&((struct ring_rec *)(rep + 1))->kind, RING_REC_DATA);
        atomic_store(&((struct ring_rec *)(rep + 1))->len, 1u << 30);
        atomic_store(&rep->tail, 1);
        cr_assert(eq(int, ring_peek(chan_rx(f.d), &v, &n), -EMSGSIZE));
        /* The daemon never reads the header back: rewriting it changes nothing. */
        memset(f.h, 0xff, sizeof(struct chan_hdr));
        cr_assert(eq(int, ring_push(chan_tx(f.d), "x", 1), 0));
        forged_close(&f);
}

/* --- two processes: the worker attaches from descriptor 3 and echoes --- */

#define ECHO_N          20000u
#define ECHO_STOP       UINT64_MAX
#define ECHO_SIDE_EVERY 97u

struct echo_head {
        uint64_t seq;
        uint32_t side_off, side_len;    /* a range of the side buffer, or 0, 0 */
};

static unsigned char pat(uint64_t seq, size_t i)
{
        return (unsigned char)(seq * 2654435761u + i * 40503u);
}

/* The worker: echo every request; for a side range, check it and answer in place. */
static int echo_worker(void)
{
        struct wait_policy wp;
        struct timespec dl;
        struct chan *c;
        int r;

        if (chan_attach(WORKER_CHAN_FD, &c) < 0)
                return 10;
        wait_policy_init(&wp, WAIT_ADAPTIVE);
        for (;;) {
                struct echo_head h;
                unsigned char *side;
                const void *v;
                size_t len;
                void *out;

                wait_deadline_in(&dl, 20ull * 1000000000u);
                r = chan_wait_rx(c, &wp, &dl);
                if (r < 0)
                        return 11;
                r = ring_peek(chan_rx(c), &v, &len);
                if (r == -EAGAIN)
                        continue;
                if (r < 0 || len < sizeof(h))
                        return 12;
                memcpy(&h, v, sizeof(h));
                if (h.seq == ECHO_STOP)
                        break;
                if (h.side_len) {
                        if (chan_side_ref(c, h.side_off, h.side_len, (void **)&side) < 0)
                                return 13;
                        for (size_t i = 0; i < h.side_len; i++) {
                                if (side[i] != pat(h.seq, i))
                                        return 14;
                                side[i] = pat(h.seq + 1, i);
                        }
                }
                while ((r = ring_reserve(chan_tx(c), len, &out)) == -ENOSPC)
                        if (ring_wait_writable(chan_tx(c), &wp, &dl) < 0)
                                return 15;
                if (r < 0)
                        return 16;
                memcpy(out, v, len);
                if (ring_commit(chan_tx(c), len) < 0 || ring_release(chan_rx(c)) < 0)
                        return 17;
        }
        chan_close(c);
        return 0;
}

static pid_t spawn_worker(struct chan *d)
{
        pid_t pid = fork();

        cr_assert(ge(int, pid, 0));
        if (pid == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (dup2(chan_fd(d), WORKER_CHAN_FD) < 0)
                        _exit(9);
                _exit(echo_worker());
        }
        return pid;
}

static int echo_one(struct chan *d, uint64_t seq, size_t body)
{
        unsigned char req[512], rep[512];
        struct echo_head h = { .seq = seq };
        struct wait_policy wp;
        struct timespec dl;
        unsigned char *side = chan_side(d, NULL);
        int r;

        if (seq % ECHO_SIDE_EVERY == 0) {
                h.side_off = (uint32_t)(seq % 4096);
                h.side_len = (uint32_t)(seq % 65536) + 1;
                for (size_t i = 0; i < h.side_len; i++)
                        side[h.side_off + i] = pat(seq, i);
        }
        memcpy(req, &h, sizeof(h));
        for (size_t i = 0; i < body; i++)
                req[sizeof(h) + i] = pat(seq, i);
        wait_policy_init(&wp, WAIT_ADAPTIVE);
        wp.runnable = 2;
        r = ring_push(chan_tx(d), req, sizeof(h) + body);
        if (r < 0)
                return r;
        wait_deadline_in(&dl, 20ull * 1000000000u);
        while ((r = ring_pop(chan_rx(d), rep, sizeof(rep))) == -EAGAIN)
                if ((r = ring_wait_readable(chan_rx(d), &wp, &dl)) < 0)
                        return r;
        if (r != (int)(sizeof(h) + body) || memcmp(req, rep, (size_t)r) != 0)
                return -EBADMSG;
        for (size_t i = 0; i < h.side_len; i++)
                if (side[h.side_off + i] != pat(seq + 1, i))
                        return -EBADMSG;
        return 0;
}

Test(channel, worker_process_attaches_from_fd_3_and_echoes_every_request, .timeout = 120)
{
        struct echo_head stop = { .seq = ECHO_STOP };
        struct chan *d;
        pid_t pid;
        int status;

        cr_assert(ge(int, chan_create(&params, &d), 0));
        pid = spawn_worker(d);
        for (uint64_t seq = 0; seq < ECHO_N; seq++) {
                int r = echo_one(d, seq, (size_t)(seq % 400));

                if (r < 0)
                        kill(pid, SIGKILL);
                cr_assert(eq(int, r, 0), "request %llu", (unsigned long long)seq);
        }
        cr_assert(eq(int, ring_push(chan_tx(d), &stop, sizeof(stop)), 0));
        cr_assert(eq(int, waitpid(pid, &status, 0), pid));
        cr_assert(eq(int, WIFEXITED(status), 1));
        cr_assert(eq(int, WEXITSTATUS(status), 0));
        chan_close(d);
}

Test(channel, worker_wait_times_out_when_the_daemon_never_posts)
{
        struct wait_policy wp;
        struct timespec dl;
        struct chan *d, *w;

        cr_assert(ge(int, chan_create(&params, &d), 0));
        cr_assert(eq(int, attach_dup(d, &w), 0));
        wait_policy_init(&wp, WAIT_ADAPTIVE);
        wait_deadline_in(&dl, 1000000);
        cr_assert(eq(int, chan_wait_rx(w, &wp, &dl), -ETIMEDOUT));
        chan_close(w);
        chan_close(d);
}
