/*
 * log: the FMU's logger callbacks (FMI 3.0 fmi3LogMessageCallback, FMI
 * 2.0 fmi2CallbackLogger) forwarded to the daemon as LOG events.
 *
 * DESIGN: a flooding FMU never blocks or overflows anything. A message is
 * cut to CALL_MSG_MAX bytes with a marker, a category to
 * CALL_CATEGORY_MAX; at most CALL_LOGS_PER_CALL events go out per
 * request, and an event that finds the ring full is dropped rather than
 * waited for; both are counted and the count goes out with the reply.
 * Only the worker's own thread sends, since the ring has one producer: a
 * message from a thread the FMU started (a solver's, joined within the
 * call, or a background one) is queued, up to FOREIGN_MAX, and the
 * worker's thread sends it when the call returns (log_drain_foreign()),
 * so an Error logged there still says why the call failed; past that it
 * is counted and dropped, and the count goes out with the next reply.
 * The last Error or Fatal message of a call also becomes the reply's
 * message, so a failed call says why. The drop count saturates: a flood
 * of billions of messages is reported as UINT32_MAX, never as a small
 * number.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "worker/crash.h"
#include "worker/worker.h"

#define TRUNCATED_MARK " [truncated]"

#define FOREIGN_MAX     16u     /* messages of the FMU's own threads queued at most */

/* Messages from threads other than the worker's: queued for its thread, else counted. */
static _Atomic uint64_t foreign_drops;
static pthread_mutex_t foreign_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic unsigned foreign_n;     /* written under the lock; read without to skip it */
static struct foreign {
        int status;
        char category[CALL_CATEGORY_MAX + 1];
        char message[CALL_MSG_MAX + 2];         /* one byte more: forward() sees it is too long */
} foreign[FOREIGN_MAX];

static void queue_foreign(int status, const char *category, const char *message)
{
        struct foreign *f;
        unsigned n;

        pthread_mutex_lock(&foreign_lock);
        n = atomic_load_explicit(&foreign_n, memory_order_relaxed);
        if (n == FOREIGN_MAX) {
                pthread_mutex_unlock(&foreign_lock);
                atomic_fetch_add_explicit(&foreign_drops, 1, memory_order_relaxed);
                return;
        }
        f = &foreign[n];
        f->status = status;
        snprintf(f->category, sizeof(f->category), "%s", category ? category : "");
        snprintf(f->message, sizeof(f->message), "%s", message ? message : "");
        atomic_store_explicit(&foreign_n, n + 1, memory_order_relaxed);
        pthread_mutex_unlock(&foreign_lock);
}

void log_add_dropped(struct worker *w, uint64_t n)
{
        w->logs_dropped = n > (uint64_t)(UINT32_MAX - w->logs_dropped) ? UINT32_MAX :
                          w->logs_dropped + (uint32_t)n;
}

void log_count_foreign(struct worker *w)
{
        log_add_dropped(w, atomic_exchange_explicit(&foreign_drops, 0, memory_order_relaxed));
}

_Thread_local bool worker_speaking;

/*
 * As forward(), on the thread that may use the channel now. budget: the
 * count of this call's events of its kind (w->logs_sent, or output.c's
 * w->out_sent), at most CALL_LOGS_PER_CALL.
 */
static void send_counted(struct worker *w, int status, const char *category, const char *message,
                         bool queued, uint32_t *budget, uint32_t *drops)
{
        unsigned char payload[CALL_CATEGORY_MAX + 8 + CALL_MSG_MAX];
        struct call_log ev = { 0 };
        size_t clen, mlen, moff;

        if (!category)
                category = "";
        if (!message)
                message = "";
        if (status < fmi3OK || status > fmi3Fatal)
                status = fmi3Error;
        /* The worker's thread's own Error stays the call's reason: order is known there only. */
        if (status >= fmi3Error && !(queued && w->last_error[0])) {
                size_t n = strnlen(message, sizeof(w->last_error) - 1);

                memcpy(w->last_error, message, n);
                w->last_error[n] = '\0';
        }
        if (*budget >= CALL_LOGS_PER_CALL) {
                if (*drops < UINT32_MAX)
                        (*drops)++;
                return;
        }
        clen = strnlen(category, CALL_CATEGORY_MAX);
        mlen = strnlen(message, CALL_MSG_MAX + 1);
        moff = (clen + 7) & ~(size_t)7;
        memcpy(payload, category, clen);
        memset(payload + clen, 0, moff - clen);
        if (mlen > CALL_MSG_MAX) {
                mlen = CALL_MSG_MAX - (sizeof(TRUNCATED_MARK) - 1);
                memcpy(payload + moff, message, mlen);
                memcpy(payload + moff + mlen, TRUNCATED_MARK, sizeof(TRUNCATED_MARK) - 1);
                mlen = CALL_MSG_MAX;
                ev.truncated = 1;
        } else {
                memcpy(payload + moff, message, mlen);
        }
        ev.status = status;
        ev.category = (struct call_range){ 0, clen };
        ev.message = (struct call_range){ moff, mlen };
        if (send_event(w, CALL_EV_LOG, &ev, sizeof(ev), payload, moff + mlen, true) < 0) {
                if (*drops < UINT32_MAX)
                        (*drops)++;
        } else {
                (*budget)++;
        }
}

static void send_log(struct worker *w, int status, const char *category, const char *message,
                     bool queued)
{
        send_counted(w, status, category, message, queued, &w->logs_sent, &w->logs_dropped);
}

/*
 * queued: a message of a thread of the FMU's, sent after the call. Only
 * one thread uses the channel: the one in an intermediate update
 * (worker_speaking, holding w->iu_lock), else the worker's own; a
 * message of any other thread, or of ours while another is in an
 * update, is queued.
 */
static void forward(struct worker *w, int status, const char *category, const char *message,
                    bool queued)
{
        bool locked = false;

        /* Every category on for want of a status one: only the reasons are wanted. */
        if (w->quiet_ok && status == fmi3OK)
                return;
        if (!worker_speaking) {
                if (!pthread_equal(pthread_self(), w->main_thread)) {
                        queue_foreign(status, category, message);
                        return;
                }
                /*
                 * Outside our fmi3DoStep no update runs: another thread
                 * holds the lock only to see that, so wait for it; inside,
                 * one may be under way on another thread: queue then.
                 */
                if (w->iu_on && !w->stepping) {
                        pthread_mutex_lock(&w->iu_lock);
                } else if (w->iu_on && pthread_mutex_trylock(&w->iu_lock) != 0) {
                        queue_foreign(status, category, message);
                        return;
                }
                locked = w->iu_on;
        }
        send_log(w, status, category, message, queued);
        if (locked)
                pthread_mutex_unlock(&w->iu_lock);
}

void log_drain_foreign(struct worker *w)
{
        static struct foreign taken[FOREIGN_MAX];
        unsigned n;

        if (!atomic_load_explicit(&foreign_n, memory_order_relaxed))
                return;
        /* Copied out first: forward() must not run under the lock a thread of the FMU takes. */
        pthread_mutex_lock(&foreign_lock);
        n = atomic_load_explicit(&foreign_n, memory_order_relaxed);
        memcpy(taken, foreign, n * sizeof(*taken));
        atomic_store_explicit(&foreign_n, 0, memory_order_relaxed);
        pthread_mutex_unlock(&foreign_lock);
        for (unsigned i = 0; i < n; i++)
                forward(w, taken[i].status, taken[i].category, taken[i].message, true);
}

void log_output(struct worker *w, const char *category, const char *line)
{
        /*
         * Not a message of the FMU's logger: shown whatever its categories
         * are, and counted apart (output_drain() says what it dropped).
         */
        send_counted(w, fmi3OK, category, line, true, &w->out_sent, &w->out_dropped);
}

void log_output_note(struct worker *w, const char *line)
{
        uint32_t once = 0, lost = 0;

        /* Past the lines' budget (it says what that budget dropped), never counted. */
        send_counted(w, fmi3OK, "stdout", line, true, &once, &lost);
}

void log_fmi3(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category,
              fmi3String message)
{
        struct worker *w = worker_of(env);

        if (w)
                forward(w, (int)status, category, message, false);
}

void log_fmi2(fmi2ComponentEnvironment env, fmi2String name, fmi2Status status,
              fmi2String category, fmi2String message, ...)
{
        struct worker *w = worker_of(env);
        char buf[CALL_MSG_MAX + 2];
        va_list ap;

        (void) name;
        if (!w || !message)
                return;
        va_start(ap, message);
        /* One byte more than a message may have: forward() sees it is too long. */
        (void) vsnprintf(buf, sizeof(buf), message, ap);
        va_end(ap);
        forward(w, (int)status, category, buf, false);
}

void log_worker(struct worker *w, int status, const char *fmt, ...)
{
        char buf[CALL_MSG_MAX + 2];
        va_list ap;

        va_start(ap, fmt);
        (void) vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        forward(w, status, "fmud", buf, false);
}

void log_last_words(struct worker *w, const char *message, size_t len)
{
        /* The category padded to 8 bytes, then the message: as forward() lays them out. */
        unsigned char payload[16 + CALL_MSG_MAX];
        static const char cat[] = CRASH_CATEGORY;
        size_t clen = sizeof(cat) - 1, moff = (clen + 7) & ~(size_t)7;
        struct call_log ev = { .status = fmi3Fatal };

        if (len > CALL_MSG_MAX)
                len = CALL_MSG_MAX;
        memset(payload, 0, moff);
        memcpy(payload, cat, clen);
        memcpy(payload + moff, message, len);
        ev.category = (struct call_range){ 0, clen };
        ev.message = (struct call_range){ moff, len };
        (void) send_event(w, CALL_EV_LOG, &ev, sizeof(ev), payload, moff + len, true);
}
