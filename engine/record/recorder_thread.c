/*
 * recorder_thread: the backend used where io_uring is not available: one
 * writer thread per recorder doing write(2)/pwrite(2) (rec_write_all()).
 *
 * Threads and the data they touch:
 * - The recording thread (the master) submits buffers and reaps them.
 * - The writer thread, started by thread_start() and joined by
 *   thread_stop(), with every signal blocked (signals stay with the
 *   daemon's own handling, e.g. its signalfd).
 * - struct thread_be's queue, done stack, ndone and stop: protected by
 *   'lock', held only to move pointers, never across a write. 'work' wakes
 *   the writer (queue not empty, or stop); 'back' wakes a master waiting
 *   for a buffer (done not empty).
 * - A submitted struct rec_buf (data, len, off read; done, err,
 *   short_writes written): owned by the writer from the moment it takes
 *   it off the queue until it pushes it on the done stack; ownership moves
 *   under the lock, which orders the accesses. The master touches a
 *   buffer again only after reaping it.
 * - fd and 'failed': read-only for, respectively private to, the writer.
 * Nothing else of struct rec is touched by the writer.
 *
 * DESIGN: the master's submit and reap each take the lock once; it waits
 * on 'back' only when the pool is exhausted in an as-fast-as-possible run.
 * The queue is FIFO, so a stream is written in order. After a failed write
 * the writer returns the later buffers unwritten.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include "engine/record/recorder_int.h"

struct thread_be {
        pthread_t tid;
        pthread_mutex_t lock;
        pthread_cond_t work;            /* writer waits: queue empty and not stop */
        pthread_cond_t back;            /* master waits: done empty */
        struct rec_buf **queue;         /* FIFO of nbufs entries; free-running indices */
        unsigned head, tail;
        struct rec_buf **done;          /* stack of written buffers */
        unsigned ndone, nbufs;
        bool stop;
        int fd;                         /* writer: read-only */
        bool failed;                    /* writer only */
};

static void *writer(void *arg)
{
        struct thread_be *t = arg;
        struct rec_buf *b;

        pthread_mutex_lock(&t->lock);
        for (;;) {
                while (t->head == t->tail && !t->stop)
                        pthread_cond_wait(&t->work, &t->lock);
                if (t->head == t->tail)
                        break;
                b = t->queue[t->head++ % t->nbufs];
                pthread_mutex_unlock(&t->lock);

                if (!t->failed) {
                        rec_write_all(t->fd, b);
                        t->failed = b->err != 0;
                }

                pthread_mutex_lock(&t->lock);
                t->done[t->ndone++] = b;
                pthread_cond_signal(&t->back);
        }
        pthread_mutex_unlock(&t->lock);
        return NULL;
}

static void thread_free(struct thread_be *t)
{
        pthread_cond_destroy(&t->back);
        pthread_cond_destroy(&t->work);
        pthread_mutex_destroy(&t->lock);
        free(t->done);
        free(t->queue);
        free(t);
}

static int thread_start(struct rec *r)
{
        struct thread_be *t;
        sigset_t all, old;
        int e;

        t = calloc(1, sizeof *t);
        if (!t)
                return -ENOMEM;
        t->nbufs = r->nbufs;
        t->fd = r->fd;
        t->queue = calloc(r->nbufs, sizeof *t->queue);
        t->done = calloc(r->nbufs, sizeof *t->done);
        pthread_mutex_init(&t->lock, NULL);
        pthread_cond_init(&t->work, NULL);
        pthread_cond_init(&t->back, NULL);
        if (!t->queue || !t->done) {
                thread_free(t);
                return -ENOMEM;
        }
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        e = pthread_create(&t->tid, NULL, writer, t);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (e) {
                thread_free(t);
                return -e;
        }
        r->be = t;
        return 0;
}

static int thread_submit(struct rec *r, struct rec_buf *b)
{
        struct thread_be *t = r->be;

        pthread_mutex_lock(&t->lock);
        t->queue[t->tail++ % t->nbufs] = b;
        pthread_cond_signal(&t->work);
        pthread_mutex_unlock(&t->lock);
        return 0;
}

static int thread_reap(struct rec *r, bool wait)
{
        struct thread_be *t = r->be;

        pthread_mutex_lock(&t->lock);
        while (wait && !t->ndone && r->inflight)
                pthread_cond_wait(&t->back, &t->lock);
        /* rec_pool_done() only touches the master's side of struct rec. */
        while (t->ndone)
                rec_pool_done(r, t->done[--t->ndone]);
        pthread_mutex_unlock(&t->lock);
        return 0;
}

static void thread_stop(struct rec *r)
{
        struct thread_be *t = r->be;

        if (!t)
                return;
        pthread_mutex_lock(&t->lock);
        t->stop = true;
        pthread_cond_signal(&t->work);
        pthread_mutex_unlock(&t->lock);
        pthread_join(t->tid, NULL);
        thread_free(t);
        r->be = NULL;
}

const struct rec_ops rec_thread_ops = {
        .kind = REC_BACKEND_THREAD,
        .start = thread_start,
        .submit = thread_submit,
        .reap = thread_reap,
        .stop = thread_stop,
};
