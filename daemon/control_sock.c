/*
 * control_sock: the control thread's sockets, bound with their access
 * control: file modes for ipc, CURVE and ZAP for tcp (control.h).
 */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <zmq.h>

#include "control_int.h"
#include "control_log.h"

static int zerr(char *err, size_t errlen, const char *what, const char *ep)
{
        int r = -zmq_errno();

        snprintf(err, errlen, "%s('%s'): %s", what, ep, zmq_strerror(-r));
        return r;
}

static int lookup_group(const char *name, gid_t *ret)
{
        struct group *g = getgrnam(name);
        char *end;
        unsigned long v;

        if (g) {
                *ret = g->gr_gid;
                return 0;
        }
        errno = 0;
        v = strtoul(name, &end, 10);
        if (!errno && *name && !*end && v < (gid_t)-1) {
                *ret = (gid_t)v;
                return 0;
        }
        return -ENOENT;
}

static int remember(char **list, int *n, const char *path)
{
        if (*n >= CTL_MAX_PATHS)
                return -E2BIG;
        list[*n] = strdup(path);
        if (!list[*n])
                return -ENOMEM;
        (*n)++;
        return 0;
}

/* Is somebody serving on the socket file at path? libzmq would unlink it and steal it. */
static bool in_use(const char *path)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd, r;

        if (strlen(path) >= sizeof(sa.sun_path))
                return false;
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return false;
        r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
        close(fd);
        return r == 0;
}

/*
 * The run directory is ours even when the service manager made it
 * (RuntimeDirectory=, mode 0755 by default): give it the mode and group
 * the sockets need. Any other existing directory is left as it is.
 */
static int fix_run_dir(const char *dir, mode_t mode, bool grp, gid_t gid, char *err,
                       size_t errlen)
{
        struct stat st;
        int r = 0;

        if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
                return 0;
        if (grp && st.st_gid != gid && chown(dir, (uid_t)-1, gid) < 0)
                r = -errno;
        if (r == 0 && (st.st_mode & 07777) != mode && chmod(dir, mode) < 0)
                r = -errno;
        if (r < 0)
                snprintf(err, errlen, "run directory '%s': %s", dir, strerror(-r));
        return r;
}

static int ensure_dir(struct control *c, const char *sock_path, bool grp, gid_t gid, char *err,
                      size_t errlen)
{
        char *dir = strdup(sock_path), *slash;
        mode_t mode = grp ? 0750 : 0700;
        int r = 0;

        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        if (slash == dir) {
                free(dir);
                return 0;               /* "/x.sock": the root exists */
        }
        *slash = '\0';
        if (mkdir(dir, mode) == 0) {
                r = remember(c->made_dirs, &c->n_made_dirs, dir);
                /* mkdir's mode went through the umask: say exactly what we mean. */
                if (r == 0 && grp && chown(dir, (uid_t)-1, gid) < 0)
                        r = -errno;
                if (r == 0 && chmod(dir, mode) < 0)
                        r = -errno;
                if (r < 0)
                        snprintf(err, errlen, "run directory '%s': %s", dir, strerror(-r));
        } else if (errno != EEXIST) {
                r = -errno;
                snprintf(err, errlen, "mkdir('%s'): %s", dir, strerror(-r));
        } else if (c->cfg->run_dir && !strcmp(dir, c->cfg->run_dir)) {
                r = fix_run_dir(dir, mode, grp, gid, err, errlen);
        }
        free(dir);
        return r;
}

static int bind_ipc(struct control *c, void *s, const char *ep, char *err, size_t errlen)
{
        const char *path = ep + strlen("ipc://");
        bool grp = c->cfg->socket_group != NULL;
        mode_t want = grp ? 0660 : 0600, old;
        gid_t gid = 0;
        struct stat st;
        int r;

        if (path[0] != '/') {
                snprintf(err, errlen, "'%s': an ipc endpoint must be an absolute path (its file "
                                      "mode is the access control)", ep);
                return -EINVAL;
        }
        if (grp && lookup_group(c->cfg->socket_group, &gid) < 0) {
                snprintf(err, errlen, "socket_group '%s': no such group", c->cfg->socket_group);
                return -ENOENT;
        }
        c->has_socket_gid = grp;
        c->socket_gid = gid;
        r = ensure_dir(c, path, grp, gid, err, errlen);
        if (r < 0)
                return r;
        if (in_use(path)) {
                snprintf(err, errlen, "'%s' is in use: another fmud serves there", path);
                return -EADDRINUSE;
        }
        old = umask(grp ? 0007 : 0077);
        r = zmq_bind(s, ep);
        umask(old);
        if (r < 0)
                return zerr(err, errlen, "zmq_bind", ep);
        r = remember(c->sock_files, &c->n_sock_files, path);
        if (r < 0)
                return r;
        /*
         * bind() made the file 0777 & ~umask: no one else could reach it
         * meanwhile. Now the exact mode (no x bits) and the group.
         */
        if ((grp && chown(path, (uid_t)-1, gid) < 0) || chmod(path, want) < 0) {
                r = -errno;
                snprintf(err, errlen, "'%s': setting mode %03o%s%s: %s", path, (unsigned)want,
                         grp ? " and group " : "", grp ? c->cfg->socket_group : "", strerror(-r));
                return r;
        }
        if (stat(path, &st) < 0 || !S_ISSOCK(st.st_mode) || (st.st_mode & 0777) != want ||
            (grp && st.st_gid != gid)) {
                snprintf(err, errlen, "'%s': not a socket of mode %03o after bind", path,
                         (unsigned)want);
                return -EPERM;
        }
        return 0;
}

static int set_curve(struct control *c, void *s, const char *ep, char *err, size_t errlen)
{
        int r;

        err[0] = '\0';
        r = zap_curve_server(s, c->cfg->server_secret_key, err, errlen);
        if (r < 0 && !err[0])
                return zerr(err, errlen, "CURVE server options", ep);
        return r;
}

static void *new_socket(struct control *c, int type)
{
        int linger = CTL_LINGER_MS, hwm = CTL_PUB_HWM;
        int64_t max = (int64_t)c->cfg->max_message;
        void *s = zmq_socket(c->zctx, type);

        if (!s)
                return NULL;
        zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof(linger));
        if (type == ZMQ_ROUTER) {
                int mandatory = 0;

                zmq_setsockopt(s, ZMQ_MAXMSGSIZE, &max, sizeof(max));
                /* Off: a reply to a client that went away is dropped, never an error. */
                zmq_setsockopt(s, ZMQ_ROUTER_MANDATORY, &mandatory, sizeof(mandatory));
        } else {
                int nodrop = 1;
                int64_t submax = 1024;  /* a subscription's topic: ours are far shorter */

                zmq_setsockopt(s, ZMQ_MAXMSGSIZE, &submax, sizeof(submax));
                zmq_setsockopt(s, ZMQ_SNDHWM, &hwm, sizeof(hwm));
                /* A full subscriber refuses the send (control.c publish()), never silently. */
                zmq_setsockopt(s, ZMQ_XPUB_NODROP, &nodrop, sizeof(nodrop));
        }
        return s;
}

int ctl_bind_all(struct control *c, char *err, size_t errlen)
{
        const struct fmud_config *cfg = c->cfg;
        const char *eps[2][2] = { { cfg->endpoint, cfg->pub_endpoint },
                                  { cfg->tcp_endpoint, cfg->tcp_pub_endpoint } };
        int r;

        if (cfg->tcp_endpoint) {
                if (!zmq_has("curve")) {
                        snprintf(err, errlen, "tcp_endpoint: this libzmq has no CURVE");
                        return -ENOTSUP;
                }
                /* Before any tcp bind: without a handler libzmq admits every CURVE key. */
                r = zap_start(c->zctx, cfg->authorized_keys, &c->zap, err, errlen);
                if (r < 0)
                        return r;
                log_info("admitting %zu CURVE client keys from '%s'", zap_count(c->zap),
                         cfg->authorized_keys);
        }
        for (int i = 0; i < CTL_MAX_SOCKS; i++) {
                for (int k = 0; k < 2; k++) {
                        const char *ep = eps[i][k];
                        void *s;

                        if (!ep)
                                continue;
                        s = new_socket(c, k == 0 ? ZMQ_ROUTER : ZMQ_XPUB);
                        if (!s)
                                return zerr(err, errlen, "zmq_socket", ep);
                        if (k == 0)
                                c->router[i] = s;
                        else
                                c->pub[i] = s;
                        if (i == CTL_SOCK_IPC) {
                                r = bind_ipc(c, s, ep, err, errlen);
                        } else {
                                r = set_curve(c, s, ep, err, errlen);
                                if (r == 0 && zmq_bind(s, ep) < 0)
                                        r = zerr(err, errlen, "zmq_bind", ep);
                        }
                        if (r < 0)
                                return r;
                        /* "serving" waits for announce (control.c): the host is not up yet. */
                        log_debug("bound %s socket '%s'",
                                k == 0 ? "request" : "publishing", ep);
                }
        }
        return 0;
}

void ctl_remove_files(struct control *c)
{
        for (int i = 0; i < c->n_sock_files; i++) {
                (void)unlink(c->sock_files[i]);
                free(c->sock_files[i]);
        }
        c->n_sock_files = 0;
        /* Newest first; a directory someone else filled meanwhile stays. */
        for (int i = c->n_made_dirs - 1; i >= 0; i--) {
                (void)rmdir(c->made_dirs[i]);
                free(c->made_dirs[i]);
        }
        c->n_made_dirs = 0;
}
