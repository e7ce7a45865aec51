/*
 * cli_follow: the loop of fmuctl's following commands (logs --follow,
 * watch): every PUB message of a session to the command until the
 * session ends, Ctrl-C, or an error.
 *
 * DESIGN: PUB is lossy, so the end is learned from the session's event
 * or, whichever comes first, from asking its status about once a second;
 * the message is the command's before the end is looked at, so that it
 * can finish what it was showing. Where the status says it ended, what is
 * still queued for the command (a consumer slower than the session) is
 * read first: until the session's end event, which the daemon publishes
 * after everything else of the session, or until nothing of the session
 * came for a while (the event was lost), and at most DRAIN_MAX_MS.
 */
#include <errno.h>
#include <time.h>

#include "cli.h"

/* Draining after the end: nothing of the session for this long and the event was lost. */
#define DRAIN_QUIET_MS  500
/* ...and never longer than this, whatever else a busy daemon publishes. */
#define DRAIN_MAX_MS    60000

bool cli_ended(enum proto_state s)
{
        return s == PROTO_STATE_FINISHED || s == PROTO_STATE_FAULTED || s == PROTO_STATE_STOPPED;
}

double cli_since(const struct timespec *t)
{
        struct timespec now;

        clock_gettime(CLOCK_MONOTONIC, &now);
        return (double)(now.tv_sec - t->tv_sec) + (double)(now.tv_nsec - t->tv_nsec) * 1e-9;
}

static bool is_end(const struct proto_target *t, int r, const struct fmud_msg *m)
{
        return r == 0 && m->kind == FMUD_MSG_EVENT && m->event.session == t->session &&
               cli_ended(m->event.state);
}

/* The session a message is of; 0: none (another's event topic is everyone's). */
static uint64_t session_of(const struct fmud_msg *m)
{
        switch (m->kind) {
        case FMUD_MSG_SAMPLE:
                return m->sample.session;
        case FMUD_MSG_EVENT:
                return m->event.session;
        case FMUD_MSG_LOG:
                return m->log.session;
        case FMUD_MSG_TELEMETRY:
                return m->telemetry.session;
        default:
                return 0;
        }
}

/* The messages still queued after the status said the session ended; 1, or the command's. */
static int drain(struct cli *a, const struct proto_target *t, struct cli_follow *f)
{
        struct timespec began, quiet;
        struct fmud_msg m;
        int r, own;

        clock_gettime(CLOCK_MONOTONIC, &began);
        quiet = began;
        while (!*f->stop && cli_since(&began) * 1000 < DRAIN_MAX_MS &&
               cli_since(&quiet) * 1000 < DRAIN_QUIET_MS) {
                r = fmud_next(a->c, DRAIN_QUIET_MS / 5, &m);
                if (r == -EINTR || *f->stop)
                        break;
                if (r == -EAGAIN)
                        continue;
                own = f->on_msg(f->ctx, r, &m);
                if (own)
                        return own;
                if (is_end(t, r, &m) || (r < 0 && r != -EPROTO))
                        break;
                if (r == 0 && session_of(&m) == t->session)
                        clock_gettime(CLOCK_MONOTONIC, &quiet);
        }
        return 1;
}

int cli_follow(struct cli *a, const struct proto_target *t, struct cli_follow *f)
{
        struct proto_session_status st;
        struct timespec polled;
        struct fmud_msg m;
        int r, own;

        clock_gettime(CLOCK_MONOTONIC, &polled);
        while (!*f->stop) {
                r = fmud_next(a->c, f->wait_ms, &m);
                if (r == -EINTR || *f->stop)
                        break;
                own = f->on_msg(f->ctx, r, &m);
                if (own)
                        return own;
                if (is_end(t, r, &m)) {
                        f->state = m.event.state;
                        f->time = m.event.time;
                        return 1;
                }
                if (r < 0 && r != -EAGAIN && r != -EPROTO)
                        return r;
                if (cli_since(&polled) < 1.0)
                        continue;
                r = fmud_status(a->c, t->session, &st);
                if (r == -EINTR)
                        break;
                if (r < 0)
                        return r;
                if (cli_ended(st.state)) {
                        f->state = st.state;
                        f->time = st.time;
                        return drain(a, t, f);
                }
                clock_gettime(CLOCK_MONOTONIC, &polled);
        }
        return 0;
}
