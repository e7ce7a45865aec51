/*
 * host_load_check: a load request's paths and sandbox mode, checked on the
 * caller's thread against the allowed directories before a session exists
 * or any file is read, so that a refusal is answered at once.
 *
 * DESIGN: the check opens each path beneath its allowed directory
 * (host_beneath.c) as the load will (O_PATH, closed at once, with the
 * client's filesystem identity), only to
 * answer early; the load (host_load.c) opens them again, confined, and
 * reads only what it opened itself.
 */
#include "daemon/host_int.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const mode_names[] = {
        [HOST_SANDBOX_STRICT] = "strict",
        [HOST_SANDBOX_BASIC] = "basic",
        [HOST_SANDBOX_OFF] = "off",
};

/* A session may only tighten the daemon's sandbox: the modes go from strict to off. */
static int sandbox_of(const struct host *h, const struct proto_str *s, enum host_sandbox *ret,
                      char *msg, size_t size)
{
        *ret = h->opts.sandbox;
        if (!s->len)
                return -1;
        for (int m = HOST_SANDBOX_STRICT; m <= HOST_SANDBOX_OFF; m++) {
                if (strlen(mode_names[m]) != s->len || memcmp(mode_names[m], s->ptr, s->len))
                        continue;
                if ((enum host_sandbox)m > h->opts.sandbox) {
                        snprintf(msg, size, "sandbox '%s' is weaker than the daemon's '%s'",
                                 mode_names[m], mode_names[h->opts.sandbox]);
                        return PROTO_E_DENIED;
                }
                *ret = (enum host_sandbox)m;
                return -1;
        }
        snprintf(msg, size, "sandbox: expected strict, basic or off");
        return PROTO_E_BAD_REQUEST;
}

/* Whether path opens beneath its allowed directory (as the load will open it). */
static int check_in(struct host *h, const struct open_as *as, const char *path, char *msg,
                    size_t size)
{
        int fd = -1, code;

        code = hpath_open(as, h->allowed, h->n_allowed, path, O_PATH, 0, &fd, msg, size);
        if (fd >= 0)
                close(fd);
        return code;
}

int hload_check(struct host *h, const struct proto_load *a, const struct open_as *as,
                enum host_sandbox *ret_sandbox, char *msg, size_t size)
{
        char *path = hvalues_strdup(&a->path), *out = NULL;
        int code;

        if (!path || (!path[0] && !a->content.len)) {
                free(path);
                snprintf(msg, size, "path: not a file name");
                return PROTO_E_BAD_REQUEST;
        }
        /* By content: the uploads are the daemon's own; by path: beneath an allowed directory. */
        code = a->content.len ? -1 : check_in(h, as, path, msg, size);
        if (code < 0)
                code = hcontent_check(a, msg, size);
        if (code < 0)
                code = sandbox_of(h, &a->sandbox, ret_sandbox, msg, size);
        if (code < 0 && a->out.len) {
                out = hvalues_strdup(&a->out);
                code = out ? hpath_check_out(h->output, h->n_output, out, msg, size) :
                             PROTO_E_BAD_REQUEST;
                if (!out)
                        snprintf(msg, size, "out: not a file name");
        }
        if (code < 0 && a->input.len) {
                free(out);
                out = hvalues_strdup(&a->input);
                code = out ? check_in(h, as, out, msg, size) : PROTO_E_BAD_REQUEST;
                if (!out)
                        snprintf(msg, size, "input: not a file name");
        }
        free(out);
        free(path);
        return code;
}
