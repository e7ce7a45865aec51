/*
 * control_queue: a mutex-protected list and an eventfd (control_queue.h).
 *
 * Data: replies, pubs and dropped, all under lock; efd is written by
 * producers (a counter, never blocks: it saturates far beyond our use)
 * and read by the consumer.
 */
#include "control_queue.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "control_log.h"
#include "pub_drops.h"

static void list_init(struct cq_list *l)
{
        l->head = NULL;
        l->tail = &l->head;
        l->n = 0;
}

static void list_free(struct cq_item *it)
{
        while (it) {
                struct cq_item *next = it->next;

                cq_item_free(it);
                it = next;
        }
}

int cq_init(struct ctl_queue *q, size_t max_pubs)
{
        memset(q, 0, sizeof(*q));
        q->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (q->efd < 0)
                return -errno;
        pthread_mutex_init(&q->lock, NULL);
        list_init(&q->replies);
        list_init(&q->pubs);
        q->max_pubs = max_pubs;
        return 0;
}

void cq_fini(struct ctl_queue *q)
{
        if (q->efd < 0)
                return;
        list_free(q->replies.head);
        list_free(q->pubs.head);
        pthread_mutex_destroy(&q->lock);
        close(q->efd);
        q->efd = -1;
}

void cq_item_free(struct cq_item *it)
{
        if (!it)
                return;
        if (it->has_fd)
                close(it->fd);
        pub_drops_unref(it->drops);
        free(it->topic);
        free(it->buf);
        free(it);
}

static void wake(struct ctl_queue *q)
{
        uint64_t one = 1;

        /* Non-blocking; EAGAIN only when the counter is near 2^64, and then it is readable anyway. */
        (void)!write(q->efd, &one, sizeof(one));
}

/* Append it to the replies, in order (never dropped), and wake the loop. */
static void push_reply(struct ctl_queue *q, struct cq_item *it)
{
        pthread_mutex_lock(&q->lock);
        *q->replies.tail = it;
        q->replies.tail = &it->next;
        q->replies.n++;
        pthread_mutex_unlock(&q->lock);
        wake(q);
}

void cq_push_reply(struct ctl_queue *q, uint64_t token, void *buf, size_t len)
{
        struct cq_item *it = calloc(1, sizeof(*it));

        if (!it) {
                log_err("out of memory queueing the reply to request %llu, dropped",
                        (unsigned long long)token);
                free(buf);
                return;
        }
        it->token = token;
        it->buf = buf;
        it->len = len;
        push_reply(q, it);
}

void cq_push_rig(struct ctl_queue *q, uint64_t token, uint64_t id, uint64_t session, int fd)
{
        struct cq_item *it = calloc(1, sizeof(*it));

        if (!it) {
                log_err("out of memory queueing the rig channel of request %llu, dropped",
                        (unsigned long long)token);
                close(fd);
                return;
        }
        it->token = token;
        it->has_fd = true;
        it->fd = fd;
        it->id = id;
        it->session = session;
        push_reply(q, it);
}

void cq_push_gone(struct ctl_queue *q, uint64_t session)
{
        struct cq_item *it = calloc(1, sizeof(*it));

        if (!it) {
                log_err("out of memory queueing the end of session %llu: a remote rig's "
                        "bridge may outlive it until its rig falls silent",
                        (unsigned long long)session);
                return;
        }
        it->gone = true;
        it->session = session;
        push_reply(q, it);
}

void cq_push_pub(struct ctl_queue *q, const char *topic, void *body, size_t len,
                 struct pub_drops *drops)
{
        struct cq_item *it = NULL;
        bool full;

        pthread_mutex_lock(&q->lock);
        full = q->pubs.n >= q->max_pubs;
        if (full)
                q->dropped++;
        pthread_mutex_unlock(&q->lock);
        if (!full) {
                it = calloc(1, sizeof(*it));
                if (it)
                        it->topic = strdup(topic ? topic : "");
        }
        if (!it || !it->topic) {
                if (it)
                        free(it);
                if (!full) {
                        pthread_mutex_lock(&q->lock);
                        q->dropped++;
                        pthread_mutex_unlock(&q->lock);
                }
                pub_drops_add(drops);
                pub_drops_unref(drops);
                free(body);
                return;
        }
        /* Producers race between the check and the append: max_pubs is a soft bound. */
        it->drops = drops;
        it->buf = body;
        it->len = len;
        pthread_mutex_lock(&q->lock);
        *q->pubs.tail = it;
        q->pubs.tail = &it->next;
        q->pubs.n++;
        pthread_mutex_unlock(&q->lock);
        wake(q);
}

uint64_t cq_take(struct ctl_queue *q, struct cq_item **ret_replies, struct cq_item **ret_pubs)
{
        uint64_t v, dropped;

        (void)!read(q->efd, &v, sizeof(v));
        pthread_mutex_lock(&q->lock);
        *ret_replies = q->replies.head;
        *ret_pubs = q->pubs.head;
        list_init(&q->replies);
        list_init(&q->pubs);
        dropped = q->dropped;
        pthread_mutex_unlock(&q->lock);
        return dropped;
}
