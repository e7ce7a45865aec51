/*
 * host_log: what a session puts in the daemon's log, and its FMUs' log
 * messages on their way to the log, to subscribers and to logs.
 *
 * DESIGN: every line about a session starts "session N (USER)", USER the
 * peer that loaded it ("uid 1000", "key <Z85>"; "local" for an
 * in-process caller), and a line about an instance adds "instance 'NAME'"
 * and its worker's pid, so one grep follows a session or a worker. The
 * session's life (loaded, started, paused (with why when a rig's pause
 * policy paused it), resumed, finished with its points, wall time and
 * real-time factor, faulted with the whole message, stopped, unloaded) comes from hsess_set_state() and the load and
 * unload; the workers' (started with their pid, sandbox layers missing,
 * ended with their exit status or signal) from the session's worker
 * callback (session.h).
 *
 * An FMU's message is untrusted: its texts are cut to PROTO_LOG_*_MAX and
 * stripped of control characters (C0, DEL and C1, raw or UTF-8 encoded)
 * and of bidirectional overrides, invalid UTF-8 made '?', before anything
 * sees them, so a message can neither forge a log line, nor drive a
 * terminal, nor reorder what a reader sees, nor turn the line into a blob.
 * Each instance has a token bucket (HLOG_BURST at once, HLOG_RATE per
 * second after), and another for the lines it prints (categories stdout
 * and stderr, status OK: worker/output.c), so that chatter never crowds
 * out its Warnings and Errors: what one drops is counted and said in one
 * summary line (status Warning, category "fmud") before its next message
 * passes or when the session changes state. A message that passes goes to the
 * log at the priority of its status (OK info, Discard notice, Warning
 * warning, Error and Fatal err: an FMU never pages an operator at crit
 * or above), to PUB topic "l<session>" and to the
 * session's last HLOG_KEEP messages, which logs returns.
 *
 * Threads: the session thread logs and publishes; the control thread
 * reads the kept messages (hlog_encode()); both under hs->log.lock.
 */
#include "daemon/host_int.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>

#include "proto/utf8.h"

void hlog_init(struct hsess *hs)
{
        pthread_mutex_init(&hs->log.lock, NULL);
}

void hlog_fini(struct hsess *hs)
{
        free(hs->log.kept);
        free(hs->log.rates);
        free(hs->log.out_rates);
        pthread_mutex_destroy(&hs->log.lock);
}

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

size_t hlog_clean(char *dst, size_t size, const char *src)
{
        const unsigned char *s = (const unsigned char *)src, *end = s + strlen(src);
        size_t n = 0, len;
        bool cut = false;
        uint32_t cp;

        while (*s) {
                unsigned char c = *s;
                const char *put = (const char *)s;

                len = 1;
                if (c < 0x20 || c == 0x7f) {
                        /* Line breaks and tabs read as a space; other controls go. */
                        s++;
                        if (c != '\n' && c != '\r' && c != '\t')
                                continue;
                        put = " ";
                } else if (c >= 0x80) {
                        len = utf8_decode((const char *)s, (size_t)(end - s), &cp);
                        if (len == 0) {
                                /* Not UTF-8 (journald would keep the line as a blob). */
                                s++;
                                put = "?";
                                len = 1;
                        } else {
                                s += len;
                                if (utf8_is_control(cp))
                                        continue;
                                /* The line and paragraph separators read as a space too. */
                                if (cp == 0x2028 || cp == 0x2029) {
                                        put = " ";
                                        len = 1;
                                }
                        }
                } else {
                        s++;
                }
                if (n + len >= size) {
                        cut = true;
                        break;
                }
                memcpy(dst + n, put, len);
                n += len;
        }
        if (cut && size > 4) {
                size_t w = n;

                n = size - 4 < w ? size - 4 : w;
                /* Not in the middle of a UTF-8 sequence (all of those written are whole). */
                while (n > 0 && n < w && ((unsigned char)dst[n] & 0xc0) == 0x80)
                        n--;
                memcpy(dst + n, "...", 3);
                n += 3;
        }
        dst[n] = '\0';
        return n;
}

static const char *user_of(const struct hsess *hs)
{
        return hs->user[0] ? hs->user : "local";
}

static void emit(struct hsess *hs, int level, const char *line)
{
        const struct host_opts *o = &hs->h->opts;

        if (o->log)
                o->log(o->log_ctx, level, line);
}

void hlog_line(struct hsess *hs, int level, const char *fmt, ...)
{
        char line[2048], clean[2048];
        va_list ap;
        int n;

        if (!hs->h->opts.log)
                return;
        n = snprintf(line, sizeof(line), "session %llu (%s): ", (unsigned long long)hs->id,
                     user_of(hs));
        va_start(ap, fmt);
        if (n > 0 && (size_t)n < sizeof(line))
                vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
        va_end(ap);
        /* Paths, names and messages in it may be anyone's: one line, no controls. */
        hlog_clean(clean, sizeof(clean), line);
        emit(hs, level, clean);
}

static double session_time(const struct hsess *hs)
{
        if (hs->m)
                return master_time(hs->m);
        return hs->sc ? hs->sc->experiment.start : 0;
}

/* " by USER" when someone other than the session's user asked, else "". */
static const char *by(const struct hsess *hs, char *buf, size_t size)
{
        if (!hs->actor[0] || !strcmp(hs->actor, hs->user))
                return "";
        snprintf(buf, size, " by %s", hs->actor);
        return buf;
}

/* The instances a fault left faulted, each with its worker and how it failed. */
static void faulted_instances(struct hsess *hs)
{
        size_t n = hs->s ? session_count(hs->s) : 0;

        for (size_t i = 0; i < n; i++) {
                struct inst *in = session_inst(hs->s, i);

                /* The message names the worker and how it failed (signal, address, deadline). */
                if (in && inst_fault(in))
                        hlog_line(hs, LOG_ERR, "instance '%s': %s", session_name(hs->s, i),
                                  inst_message(in));
        }
}

void hlog_state(struct hsess *hs, enum proto_state from, enum proto_state to,
                const char *message)
{
        struct master_stats st = { 0 };
        char b[HOST_PEER_LABEL_MAX + 8];
        const char *m = message && message[0] ? message : NULL;

        if (from == to || to == PROTO_STATE_LOADED)
                return;
        hlog_flush(hs);
        if (hs->m)
                master_get_stats(hs->m, &st);
        switch (to) {
        case PROTO_STATE_RUNNING:
                hlog_line(hs, LOG_NOTICE, "%s%s at t=%g", from == PROTO_STATE_PAUSED ?
                          "resumed" : "started", by(hs, b, sizeof(b)), session_time(hs));
                break;
        case PROTO_STATE_PAUSED:
                hlog_line(hs, LOG_NOTICE, "paused%s at t=%g after %llu points%s%s",
                          m ? "" : by(hs, b, sizeof(b)), session_time(hs),
                          (unsigned long long)st.points, m ? ": " : "", m ? m : "");
                break;
        case PROTO_STATE_FINISHED:
                hlog_line(hs, LOG_NOTICE, "finished at t=%g: %llu points, wall time %.3f s, "
                          "real-time factor %.3g%s%s", session_time(hs),
                          (unsigned long long)st.points, st.wall_s, st.rtf, m ? "; " : "",
                          m ? m : "");
                break;
        case PROTO_STATE_FAULTED:
                hlog_line(hs, LOG_ERR, "faulted at t=%g after %llu points: %s", session_time(hs),
                          (unsigned long long)st.points, m ? m : "no message");
                faulted_instances(hs);
                break;
        case PROTO_STATE_STOPPED:
                hlog_line(hs, LOG_NOTICE, "stopped%s at t=%g after %llu points",
                          by(hs, b, sizeof(b)), session_time(hs),
                          (unsigned long long)st.points);
                break;
        default:
                break;
        }
}

int hlog_start(struct hsess *hs)
{
        size_t n = hs->sc->n_components;
        struct hlog_rate *r = calloc(n ? n : 1, sizeof(*r)), *o = calloc(n ? n : 1, sizeof(*o));
        uint64_t t = now_ns();

        if (!r || !o) {
                free(r);
                free(o);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++)
                r[i] = o[i] = (struct hlog_rate){ .tokens = HLOG_BURST, .last_ns = t };
        pthread_mutex_lock(&hs->log.lock);
        free(hs->log.rates);
        free(hs->log.out_rates);
        hs->log.rates = r;
        hs->log.out_rates = o;
        hs->log.n_rates = n;
        pthread_mutex_unlock(&hs->log.lock);
        return 0;
}

static int level_of(int status)
{
        switch (status) {
        case 0: return LOG_INFO;
        case 1: return LOG_WARNING;
        case 2: return LOG_NOTICE;
        default: return LOG_ERR;       /* Error, Fatal: an FMU's, never crit */
        }
}

/* Keep, log and publish one clean message (under hs->log.lock). */
static void deliver(struct hsess *hs, const char *instance, int status, const char *category,
                    const char *message)
{
        struct hlog *l = &hs->log;
        struct hlog_kept *k;
        struct proto_log pl;
        char line[PROTO_LOG_MESSAGE_MAX + PROTO_LOG_CATEGORY_MAX + PROTO_LOG_INSTANCE_MAX + 64];
        char topic[32];
        struct pw w;
        void *buf;
        size_t len;

        if (!l->kept)
                l->kept = calloc(HLOG_KEEP, sizeof(*l->kept));
        if (!l->kept)
                return;
        k = &l->kept[(l->head + l->n) % HLOG_KEEP];
        if (l->n == HLOG_KEEP)
                l->head = (l->head + 1) % HLOG_KEEP;
        else
                l->n++;
        *k = (struct hlog_kept){ .seq = ++l->seq, .time = session_time(hs),
                                 .status = (uint32_t)status };
        snprintf(k->instance, sizeof(k->instance), "%s", instance);
        snprintf(k->category, sizeof(k->category), "%s", category);
        snprintf(k->message, sizeof(k->message), "%s", message);

        snprintf(line, sizeof(line), "instance '%s' [%s] %s: %s", k->instance, k->category,
                 proto_log_status_name(k->status), k->message);
        hlog_line(hs, level_of(status), "%s", line);

        if (!hs->h->opts.publish || pw_init(&w) < 0)
                return;
        pl = (struct proto_log){
                .session = hs->id, .seq = k->seq, .time = k->time, .status = k->status,
                .instance = { k->instance, (uint32_t)strlen(k->instance) },
                .category = { k->category, (uint32_t)strlen(k->category) },
                .message = { k->message, (uint32_t)strlen(k->message) },
        };
        proto_log_encode(&w, &pl);
        buf = pw_take(&w, &len);
        pw_fini(&w);
        snprintf(topic, sizeof(topic), PROTO_LOG_TOPIC_PREFIX "%llu", (unsigned long long)hs->id);
        if (buf)
                hs->h->opts.publish(hs->h->opts.publish_ctx, topic, buf, len, NULL);
}

/* The summary of what instance comp's limits dropped (under hs->log.lock). */
static void summary(struct hsess *hs, size_t comp, const char *name)
{
        for (int k = 0; k < 2; k++) {
                struct hlog_rate *r = k ? &hs->log.out_rates[comp] : &hs->log.rates[comp];
                char msg[112];

                if (!r->dropped)
                        continue;
                snprintf(msg, sizeof(msg), "%llu %s dropped by the rate limit (%d at once, %d per "
                         "second)", (unsigned long long)r->dropped,
                         k ? "printed lines" : "log messages", HLOG_BURST, HLOG_RATE);
                r->dropped = 0;
                deliver(hs, name, 1, "fmud", msg);
        }
}

/* A line the FMU printed (worker/output.c), limited apart from its log messages. */
static bool printed(int status, const char *category)
{
        return status == 0 && category &&
               (!strcmp(category, "stdout") || !strcmp(category, "stderr"));
}

void hlog_fmu(void *ctx, size_t comp, const char *comp_name, int status, const char *category,
              const char *message)
{
        struct hsess *hs = ctx;
        char name[PROTO_LOG_INSTANCE_MAX + 1], cat[PROTO_LOG_CATEGORY_MAX + 1];
        char msg[PROTO_LOG_MESSAGE_MAX + 1];
        struct hlog_rate *r;
        uint64_t t;

        if (status < 0 || status > 4)
                status = 4;
        pthread_mutex_lock(&hs->log.lock);
        if (comp >= hs->log.n_rates) {
                pthread_mutex_unlock(&hs->log.lock);
                return;
        }
        r = printed(status, category) ? &hs->log.out_rates[comp] : &hs->log.rates[comp];
        t = now_ns();
        r->tokens += (double)(t - r->last_ns) * 1e-9 * HLOG_RATE;
        if (r->tokens > HLOG_BURST)
                r->tokens = HLOG_BURST;
        r->last_ns = t;
        if (r->tokens < 1) {
                r->dropped++;
                pthread_mutex_unlock(&hs->log.lock);
                return;
        }
        r->tokens -= 1;
        hlog_clean(name, sizeof(name), comp_name ? comp_name : "");
        hlog_clean(cat, sizeof(cat), category ? category : "");
        hlog_clean(msg, sizeof(msg), message ? message : "");
        summary(hs, comp, name);
        deliver(hs, name, status, cat, msg);
        pthread_mutex_unlock(&hs->log.lock);
}

void hlog_flush(struct hsess *hs)
{
        char name[PROTO_LOG_INSTANCE_MAX + 1];

        pthread_mutex_lock(&hs->log.lock);
        for (size_t i = 0; i < hs->log.n_rates; i++)
                if ((hs->log.rates[i].dropped || hs->log.out_rates[i].dropped) && hs->sc) {
                        hlog_clean(name, sizeof(name), hs->sc->components[i].name);
                        summary(hs, i, name);
                }
        pthread_mutex_unlock(&hs->log.lock);
}

/* "SIGSEGV (segmentation fault, signal 11)" */
static void signal_text(int sig, char *buf, size_t size)
{
        const char *abbrev = sigabbrev_np(sig), *descr = sigdescr_np(sig);

        if (abbrev)
                snprintf(buf, size, "SIG%s (%s, signal %d)", abbrev, descr ? descr : "?", sig);
        else
                snprintf(buf, size, "signal %d", sig);
}

static bool crash_signal(int sig)
{
        return sig == SIGSEGV || sig == SIGBUS || sig == SIGABRT || sig == SIGFPE ||
               sig == SIGILL || sig == SIGSYS;
}

static void worker_started(struct hsess *hs, const struct session_worker_info *w, const char *name)
{
        hlog_line(hs, LOG_INFO, "instance '%s': worker %d started (sandbox %s)", name,
                  (int)w->pid, hs->sandbox == HOST_SANDBOX_STRICT ? "strict" :
                  hs->sandbox == HOST_SANDBOX_BASIC ? "basic" : "off");
        for (unsigned l = 0; w->layers && l < SANDBOX_LAYER_COUNT; l++)
                if (w->layers[l].state == SANDBOX_UNAVAILABLE)
                        hlog_line(hs, LOG_WARNING, "instance '%s': worker %d runs without the "
                                  "sandbox layer %s: %s", name, (int)w->pid,
                                  sandbox_layer_name((enum sandbox_layer)l),
                                  w->layers[l].detail ? w->layers[l].detail : "");
}

void hlog_worker(void *ctx, const struct session_worker_info *w)
{
        struct hsess *hs = ctx;
        char name[PROTO_LOG_INSTANCE_MAX + 1], sig[96];
        const char *f = w->fault && w->fault[0] ? w->fault : NULL;
        int st = w->wstatus;

        hlog_clean(name, sizeof(name), w->name ? w->name : "");
        if (w->ev == SESSION_WORKER_STARTED) {
                worker_started(hs, w, name);
                return;
        }
        if (st < 0) {
                hlog_line(hs, LOG_WARNING, "instance '%s': worker %d was not reaped%s%s", name,
                          (int)w->pid, f ? ": " : "", f ? f : "");
        } else if (WIFSIGNALED(st)) {
                /* How it failed was logged when it did (faulted_instances()). */
                signal_text(WTERMSIG(st), sig, sizeof(sig));
                hlog_line(hs, crash_signal(WTERMSIG(st)) ? LOG_ERR : LOG_WARNING,
                          "instance '%s': worker %d ended, killed by %s", name, (int)w->pid, sig);
        } else if (WIFEXITED(st)) {
                hlog_line(hs, WEXITSTATUS(st) || f ? LOG_WARNING : LOG_INFO,
                          "instance '%s': worker %d ended, exited with status %d", name,
                          (int)w->pid, WEXITSTATUS(st));
        }
}

void hlog_encode(struct hsess *hs, struct pw *w)
{
        struct hlog *l = &hs->log;
        struct proto_log *v;
        uint32_t n;

        pthread_mutex_lock(&l->lock);
        n = l->kept ? l->n : 0;
        v = calloc(n ? n : 1, sizeof(*v));
        if (!v)
                n = 0;
        for (uint32_t i = 0; i < n; i++) {
                const struct hlog_kept *k = &l->kept[(l->head + i) % HLOG_KEEP];

                v[i] = (struct proto_log){
                        .session = hs->id, .seq = k->seq, .time = k->time, .status = k->status,
                        .instance = { k->instance, (uint32_t)strlen(k->instance) },
                        .category = { k->category, (uint32_t)strlen(k->category) },
                        .message = { k->message, (uint32_t)strlen(k->message) },
                };
        }
        proto_logs_result_encode(w, v, n);
        pthread_mutex_unlock(&l->lock);
        free(v);
}
