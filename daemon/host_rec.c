/*
 * host_rec: a session's results file between its rows: flushed on time
 * while the session runs, is paced, paused or loaded (rec_tick()), and
 * closed when the session ends; a write, sync or close that fails faults
 * the session with the file, the errno and the last row on disk, in its
 * status and in the daemon's log (host.h, "Results file").
 *
 * DESIGN: the master's sink (host_sub.c) and the master's pacing sleep
 * (master_idle_fn) only note a failure and ask the master to stop at its
 * next point; the session thread faults the session after the stepping
 * call, or between commands when the failure was found while idle. The
 * message is formatted once, when the file is closed, from what the
 * recorder says is on disk then.
 *
 * Threads: session thread only (the master runs on it).
 */
#include "daemon/host_int.h"
#include "engine/run/row_rec.h"

#include <stdio.h>
#include <syslog.h>
#include <unistd.h>

void hrec_failed(struct hsess *hs, int err)
{
        hs->rec_error = err;
        if (hs->m)
                master_request_stop(hs->m);
}

void hrec_idle(void *ctx)
{
        struct hsess *hs = ctx;
        struct rec_stats rs;
        int r;

        if (!hs->rec || hs->rec_error)
                return;
        r = rec_tick(hs->rec);
        if (r < 0) {
                hrec_failed(hs, r);
                return;
        }
        /* Rows written while paused or between points reach results without a status refresh. */
        rec_get_stats(hs->rec, &rs);
        if (rs.bytes_complete == hs->res_seen)
                return;
        hs->res_seen = rs.bytes_complete;
        pthread_mutex_lock(&hs->lock);
        hs->st.res_bytes = rs.bytes_complete;
        pthread_mutex_unlock(&hs->lock);
}

int hrec_close(struct hsess *hs)
{
        int r;

        if (!hs->rec)
                return 0;
        hs->rec_name = rec_backend_name(rec_backend(hs->rec));
        r = rec_close(hs->rec, &hs->rec_final);
        hs->rec = NULL;
        /* Closed (and cut back after a failed write): the whole file is what results serves. */
        pthread_mutex_lock(&hs->lock);
        hs->st.res_done = true;
        pthread_mutex_unlock(&hs->lock);
        if (r == 0 && hs->rec_error)
                r = hs->rec_error;
        if (r == 0 && hs->mat_fd >= 0) {
                char why[HOST_MSG_MAX - 64] = "";

                r = hmat_finish(hs, why, sizeof(why));
                if (r < 0) {
                        hs->rec_failed = true;
                        snprintf(hs->rec_msg, sizeof(hs->rec_msg), "writing '%s' failed: %s",
                                 hs->rec_path ? hs->rec_path : "?", why);
                        hlog_line(hs, LOG_ERR, "%s", hs->rec_msg);
                        return r;
                }
        }
        if (hs->mat_fd >= 0) {
                close(hs->mat_fd);
                hs->mat_fd = -1;
        }
        if (r == 0)
                return 0;
        hs->rec_failed = true;
        row_rec_failure(hs->rec_msg, sizeof(hs->rec_msg), hs->rec_path ? hs->rec_path : "?", r,
                        &hs->rec_final);
        hlog_line(hs, LOG_ERR, "%s", hs->rec_msg);
        return r;
}

void hrec_share(struct hsess *hs, int fd)
{
        int old;

        pthread_mutex_lock(&hs->lock);
        old = hs->res_fd;
        hs->res_fd = fd;
        pthread_mutex_unlock(&hs->lock);
        if (old >= 0)
                close(old);
}

void hrec_end(struct hsess *hs, enum proto_state st, const char *message)
{
        if (hrec_close(hs) < 0 && st != PROTO_STATE_FAULTED)
                hsess_set_state(hs, PROTO_STATE_FAULTED, hs->rec_msg);
        else
                hsess_set_state(hs, st, message);
}

void hrec_fault(struct hsess *hs)
{
        if (hs->state == PROTO_STATE_FINISHED || hs->state == PROTO_STATE_FAULTED ||
            hs->state == PROTO_STATE_STOPPED)
                return;
        (void) hrec_close(hs);          /* fails: hs->rec_error */
        hsess_set_state(hs, PROTO_STATE_FAULTED, hs->rec_msg);
}
