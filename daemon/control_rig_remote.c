/*
 * control_rig_remote: a rig request over tcp answered with a bridge
 * (rig_bridge.h) rather than a memfd (control.h, proto/PROTOCOL.md "rig"
 * and "Remote rigs").
 *
 * DESIGN: the request reaches the session's thread as a local one does
 * (the same role and owner rules), which dups the channel's memfd; here
 * the control thread starts a bridge on it, bound to the asker's CURVE
 * key and a one-time token, and answers {token, endpoint, port,
 * expiresMs}. One bridge per session at a time: a second rig request is
 * refused "state" while the first bridge lives. A bridge ends by itself
 * (its remote rig said bye or went silent, or nobody presented the
 * token) and is reaped here, by the control loop's next turn (which
 * comes within RIG_REAP_MS while a bridge lives, idle or not); its
 * session's end, however it comes (an unload, the lease of a transient
 * session running out, the host telling through opts.gone, queued like a
 * reply so this thread never waits on a session), or the daemon's exit,
 * stops it.
 *
 * Threads: the control thread only.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "control_int.h"
#include "control_log.h"
#include "daemon/rig_bridge.h"
#include "proto/rig_wire.h"

static void refuse(struct control *c, const struct ctl_peer *p, uint64_t id, enum proto_err code,
                   const char *msg)
{
        log_notice("rig request %llu from a tcp peer refused: %s", (unsigned long long)id, msg);
        ctl_rig_refuse(c, p, id, code, msg);
}

void ctl_rig_remote_reap(struct control *c, long *timeout)
{
        bool live = false;

        for (int i = 0; i < RIG_MAX_BRIDGES; i++) {
                if (c->rig.bridge[i] && rig_bridge_done(c->rig.bridge[i])) {
                        rig_bridge_stop(c->rig.bridge[i]);
                        c->rig.bridge[i] = NULL;
                }
                live |= c->rig.bridge[i] != NULL;
        }
        if (live && timeout && (*timeout < 0 || *timeout > RIG_REAP_MS))
                *timeout = RIG_REAP_MS;
}

void ctl_rig_remote_fini(struct control *c)
{
        for (int i = 0; i < RIG_MAX_BRIDGES; i++) {
                rig_bridge_stop(c->rig.bridge[i]);
                c->rig.bridge[i] = NULL;
        }
}

void ctl_rig_remote_grant(struct control *c, const struct ctl_peer *p, struct cq_item *it)
{
        struct rig_bridge **slot = NULL;
        char token[RIGW_TOKEN_LEN], ep[256], err[320], msg[160];
        unsigned port = 0;
        struct pw w;
        int r;

        ctl_rig_remote_reap(c, NULL);
        if (!p->key[0]) {
                refuse(c, p, it->id, PROTO_E_INTERNAL, "rig: the asker's key is unknown");
                return;
        }
        for (int i = 0; i < RIG_MAX_BRIDGES; i++) {
                /*
                 * The session's bridge whose rig has left is let go now, not
                 * at the next reap: a rig that said bye and asks again gets in.
                 */
                if (c->rig.bridge[i] && rig_bridge_session(c->rig.bridge[i]) == it->session &&
                    rig_bridge_leaving(c->rig.bridge[i])) {
                        rig_bridge_stop(c->rig.bridge[i]);
                        c->rig.bridge[i] = NULL;
                }
                if (c->rig.bridge[i] && rig_bridge_session(c->rig.bridge[i]) == it->session) {
                        snprintf(msg, sizeof(msg), "rig: session %llu already has a remote "
                                 "rig", (unsigned long long)it->session);
                        refuse(c, p, it->id, PROTO_E_STATE, msg);
                        return;
                }
                if (!c->rig.bridge[i] && !slot)
                        slot = &c->rig.bridge[i];
        }
        if (!slot) {
                refuse(c, p, it->id, PROTO_E_LIMIT, "rig: too many remote rigs");
                return;
        }
        if (ctl_rig_new_token(token) < 0) {
                refuse(c, p, it->id, PROTO_E_INTERNAL, "rig: no random token");
                return;
        }
        r = rig_bridge_start(&(struct rig_bridge_params){
                                     .zctx = c->zctx, .endpoint = c->cfg->rig_remote_endpoint,
                                     .secret_key_file = c->cfg->server_secret_key,
                                     .fd = it->fd, .session = it->session, .key = p->key,
                                     .token = token, .token_ms = RIG_TOKEN_MS },
                             slot, ep, sizeof(ep), &port, err, sizeof(err));
        it->has_fd = false;             /* the bridge took it, or closed it */
        if (r == -EBUSY || r == -EADDRINUSE) {
                /* A local rig holds the channel; every port of the range is taken. */
                explicit_bzero(token, sizeof(token));
                if (r == -EADDRINUSE)
                        log_notice("%s", err);
                refuse(c, p, it->id, r == -EBUSY ? PROTO_E_STATE : PROTO_E_LIMIT, err);
                return;
        }
        if (r < 0) {
                log_err("%s", err);
                explicit_bzero(token, sizeof(token));
                refuse(c, p, it->id, PROTO_E_INTERNAL, "rig: the remote rig's bridge did not "
                       "start (the daemon's log says why)");
                return;
        }
        if (pw_init(&w) == 0) {
                proto_reply_ok_begin(&w, it->id);
                pw_map(&w, 4);
                pw_str(&w, "token");
                pw_strn(&w, token, RIGW_TOKEN_LEN);
                pw_str(&w, "endpoint");
                pw_str(&w, ep);
                pw_str(&w, "port");
                pw_u64(&w, port);
                pw_str(&w, "expiresMs");
                pw_u64(&w, RIG_TOKEN_MS);
                if (!w.error) {
                        ctl_log_outcome(p, pw_data(&w), pw_size(&w));
                        ctl_send(c, p, pw_data(&w), pw_size(&w));
                }
                pw_fini(&w);
        }
        explicit_bzero(token, sizeof(token));
        log_info("rig bridge of session %llu on %s for key %s", (unsigned long long)it->session,
                 ep, p->key);
}

void ctl_rig_remote_gone(struct control *c, uint64_t session)
{
        for (int i = 0; i < RIG_MAX_BRIDGES; i++)
                if (c->rig.bridge[i] && rig_bridge_session(c->rig.bridge[i]) == session) {
                        log_info("session %llu is gone: its remote rig's bridge ends",
                                 (unsigned long long)session);
                        rig_bridge_stop(c->rig.bridge[i]);
                        c->rig.bridge[i] = NULL;
                }
}
