/*
 * scenario_source: where a component's (or a parameter binding's) source
 * URI points, under fmud's rules:
 *
 *   - a relative URI (RFC 3986 relative reference, percent-encoding
 *     decoded) is resolved against the SSD's folder, or the archive root
 *     of a .ssp, and must stay inside it: "../x.fmu" that leaves the
 *     folder is refused, and so is a symbolic link that leads out of it;
 *   - an absolute path (or a file: URI) is accepted only below one of the
 *     directories the caller allows (scenario_opts.allowed_dirs);
 *   - any other scheme, a query, a fragment, a backslash or an encoded
 *     '/' or NUL is refused.
 *
 * DESIGN: SSP 1.0 (Component source) requires only relative URIs inside
 * the SSD's base and lets implementations refuse ones that go "up"; a
 * daemon loading scenarios for several users must, or any scenario could
 * name any FMU on the machine. A confined load (scenario_opts.confined,
 * the daemon's) opens each file once, beneath a descriptor (beneath.h):
 * a relative source beneath the SSD's folder, an absolute one beneath
 * the allowed directory it lies in; a ".." component, a symbolic link
 * anywhere on the way or a magic link is refused, and only the
 * descriptor is read from then on, so nothing swapped into the path
 * meanwhile is ever read. An unconfined load (fmuctl run --local, inspect:
 * the user's own files) follows links as the user's own tools would and
 * judges them by where they lead (realpath()), then opens that path.
 */
#include "engine/scenario/scenario_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "engine/scenario/beneath.h"
#include "engine/scenario/ssp_xml.h"

/* O_NONBLOCK: a FIFO planted under the name must not hang the load in open(). */
#define SOURCE_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

static int hexval(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* Percent-decode s into a new string; *why on refusal. */
static char *decode(const char *s, const char **why)
{
        char *out = malloc(strlen(s) + 1), *o = out;

        if (!out)
                return NULL;
        for (; *s; s++) {
                int hi, lo;

                if (*s != '%') {
                        *o++ = *s;
                        continue;
                }
                hi = hexval(s[1]);
                lo = hi < 0 ? -1 : hexval(s[2]);
                if (lo < 0 || (hi == 0 && lo == 0) || (hi == 2 && (lo == 0xf))) {
                        *why = lo < 0 ? "a malformed percent-encoding"
                                      : "an encoded NUL or '/'";
                        free(out);
                        return NULL;
                }
                *o++ = (char)(hi << 4 | lo);
                s += 2;
        }
        *o = '\0';
        return out;
}

/* The length of a URI scheme ("file" in "file:..."), 0 when there is none. */
static size_t scheme_len(const char *s)
{
        size_t i = 0;

        if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
                return 0;
        while (s[i] && (s[i] == '+' || s[i] == '-' || s[i] == '.' ||
                        (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') ||
                        (s[i] >= 'A' && s[i] <= 'Z')))
                i++;
        return s[i] == ':' ? i : 0;
}

/* The URI as a path: relative, or absolute (*ret_abs). NULL with *why, or on OOM. */
static char *uri_path(const char *uri, bool *ret_abs, const char **why)
{
        size_t k = scheme_len(uri);
        const char *p = uri;

        *why = NULL;
        if (!*uri) {
                *why = "an empty URI";
                return NULL;
        }
        for (const char *c = uri; *c; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == '\\' || *c == '?' || *c == '#') {
                        *why = *c == '#' ? "a fragment (#...)" : *c == '?' ? "a query (?...)"
                             : *c == '\\' ? "a backslash" : "a control character";
                        return NULL;
                }
        if (k) {
                if (k != 4 || strncasecmp(uri, "file", 4) != 0) {
                        *why = "a URI scheme other than file:";
                        return NULL;
                }
                p = uri + 5;
                if (strncmp(p, "//", 2) == 0) {
                        p += 2;
                        if (strncmp(p, "localhost/", 10) == 0)
                                p += 9;
                        if (*p != '/') {
                                *why = "a file: URI naming another host";
                                return NULL;
                        }
                } else if (*p != '/') {
                        *why = "a relative file: URI";
                        return NULL;
                }
        }
        *ret_abs = *p == '/';
        return decode(p, why);
}

/* Lexically normalised archive entry name; NULL with *why when it leaves the root. */
static char *normalise(const char *rel, const char **why)
{
        char *out = malloc(strlen(rel) + 1);
        size_t n = 0;

        if (!out)
                return NULL;
        while (*rel) {
                size_t len = strcspn(rel, "/");

                if (len == 2 && rel[0] == '.' && rel[1] == '.') {
                        if (n == 0) {
                                *why = "a path that leaves the archive";
                                free(out);
                                return NULL;
                        }
                        while (n > 0 && out[--n] != '/')
                                ;
                } else if (len > 0 && !(len == 1 && rel[0] == '.')) {
                        if (n > 0)
                                out[n++] = '/';
                        memcpy(out + n, rel, len);
                        n += len;
                }
                rel += len;
                if (*rel == '/')
                        rel++;
        }
        out[n] = '\0';
        if (n == 0) {
                *why = "a path naming no file";
                free(out);
                return NULL;
        }
        return out;
}

static bool under(const char *path, const char *dir)
{
        size_t n = strlen(dir);

        while (n > 0 && dir[n - 1] == '/')
                n--;
        return strncmp(path, dir, n) == 0 && path[n] == '/';
}

static bool allowed(const struct scenario_opts *o, const char *real)
{
        for (size_t i = 0; i < o->n_allowed_dirs; i++) {
                char *d = realpath(o->allowed_dirs[i], NULL);
                bool ok = d && under(real, d);

                free(d);
                if (ok)
                        return true;
        }
        return false;
}

char *sc_source_relative(const char *uri, bool *ret_nomem)
{
        const char *why = NULL;
        bool abs = false;
        char *path = uri_path(uri, &abs, &why), *name = NULL;
        size_t n = 0;

        *ret_nomem = !path && !why;
        if (!path || abs) {
                free(path);
                return NULL;
        }
        name = malloc(strlen(path) + 1);
        if (!name) {
                *ret_nomem = true;
                free(path);
                return NULL;
        }
        /* As beneath.h opens it: '.' and empty parts add nothing, '..' is refused. */
        for (const char *p = path; *p;) {
                size_t len = strcspn(p, "/");

                if (len == 2 && p[0] == '.' && p[1] == '.') {
                        n = 0;
                        break;
                }
                if (len > 0 && !(len == 1 && p[0] == '.')) {
                        if (n > 0)
                                name[n++] = '/';
                        memcpy(name + n, p, len);
                        n += len;
                }
                p += len;
                if (*p == '/')
                        p++;
        }
        free(path);
        if (n == 0) {
                free(name);
                return NULL;
        }
        name[n] = '\0';
        return name;
}

/* A path on disk, resolved and checked; NULL when refused (reported) or OOM (*ret_r). */
static char *disk_path(struct sc_load *l, const char *uri, const char *path, bool abs, int line,
                       const char *subject, int *ret_r)
{
        char *joined = NULL, *real;

        *ret_r = -ENOMEM;
        if (!abs && asprintf(&joined, "%s/%s", l->dir, path) < 0)
                return NULL;
        real = realpath(abs ? path : joined, NULL);
        free(joined);
        if (!real && errno == ENOMEM)
                return NULL;
        *ret_r = -EINVAL;
        if (!real) {
                sc_err(l, l->label, line, subject, "source '%s' cannot be opened: %s", uri,
                       strerror(errno));
                return NULL;
        }
        if (abs && !allowed(l->opts, real)) {
                sc_err(l, l->label, line, subject, "source '%s' is an absolute path outside the "
                       "directories allowed for FMUs", uri);
        } else if (!abs && !under(real, l->dir)) {
                sc_err(l, l->label, line, subject, "source '%s' leads outside the scenario's "
                       "folder '%s'", uri, l->dir);
        } else {
                *ret_r = 0;
                return real;
        }
        free(real);
        return NULL;
}

static bool has_dotdot(const char *path)
{
        for (const char *c = path; *c; c += strcspn(c, "/"), c += *c == '/') {
                size_t len = strcspn(c, "/");

                if (len == 2 && c[0] == '.' && c[1] == '.')
                        return true;
        }
        return false;
}

/* Open a path on disk beneath its folder's (or allowed directory's) descriptor; reported. */
static int disk_open_confined(struct sc_load *l, const char *uri, const char *path, bool abs,
                              int line, const char *subject, char **ret_label)
{
        int fd;

        if (!abs && has_dotdot(path))
                return sc_err(l, l->label, line, subject, "source '%s' is refused: a '..' "
                              "component (a source is opened beneath the scenario's folder)",
                              uri);
        if (abs)
                fd = beneath_open_as(l->opts->open_as, l->opts->allowed_dirs,
                                     l->opts->n_allowed_dirs, path, SOURCE_FLAGS, 0);
        else if (l->dir_fd < 0)
                fd = -EBADF;
        else
                fd = beneath_openat_as(l->opts->open_as, l->dir_fd, path, SOURCE_FLAGS, 0);
        if (fd == -ENOMEM)
                return fd;
        if (fd == -EPERM && abs)
                return sc_err(l, l->label, line, subject, "source '%s' is an absolute path "
                              "outside the directories allowed for FMUs", uri);
        if (fd == -ELOOP)
                return sc_err(l, l->label, line, subject, "source '%s' is refused: a symbolic "
                              "link on the way (links are not followed where the daemon loads)",
                              uri);
        if (fd == -EXDEV)
                return sc_err(l, l->label, line, subject, "source '%s' leads outside the "
                              "scenario's folder '%s'", uri, l->dir);
        if (fd < 0)
                return sc_err(l, l->label, line, subject, "source '%s' cannot be opened: %s",
                              uri, strerror(-fd));
        sc_note_private(l, fd);
        if (abs ? !(*ret_label = strdup(path)) : asprintf(ret_label, "%s/%s", l->dir, path) < 0) {
                *ret_label = NULL;
                close(fd);
                return -ENOMEM;
        }
        return fd;
}

/* A path on disk, opened; its descriptor, or -EINVAL (reported), -ENOMEM. */
static int disk_open(struct sc_load *l, const char *uri, const char *path, bool abs, int line,
                     const char *subject, char **ret_label)
{
        char *real;
        int fd, r;

        if (l->opts->confined)
                return disk_open_confined(l, uri, path, abs, line, subject, ret_label);
        real = disk_path(l, uri, path, abs, line, subject, &r);
        if (!real)
                return r;
        fd = open(real, SOURCE_FLAGS);
        if (fd < 0) {
                r = sc_err(l, l->label, line, subject, "source '%s' cannot be opened: %s", uri,
                           strerror(errno));
                free(real);
                return r;
        }
        *ret_label = real;
        return fd;
}

/*
 * Resolve uri: on disk (*ret_fd opened, *ret_label naming it) or an
 * archive entry (*ret_entry set). Returns 0, -EINVAL (reported), -ENOMEM.
 */
static int resolve(struct sc_load *l, const char *uri, int line, const char *subject,
                   int *ret_fd, char **ret_label, char **ret_entry)
{
        const char *why = NULL;
        bool abs = false;
        char *path;
        int r = 0;

        *ret_fd = -1;
        *ret_label = *ret_entry = NULL;
        path = uri_path(uri, &abs, &why);
        if (!path && !why)
                return -ENOMEM;
        if (path && l->ar && !abs) {
                *ret_entry = normalise(path, &why);
                r = *ret_entry ? 0 : why ? -EINVAL : -ENOMEM;
        } else if (path) {
                r = disk_open(l, uri, path, abs, line, subject, ret_label);
                if (r >= 0) {
                        *ret_fd = r;
                        r = 0;
                }
        }
        free(path);
        if (why)
                return sc_err(l, l->label, line, subject, "source '%s' is refused: %s", uri, why);
        return r;
}

int sc_source_fmu(struct sc_load *l, const char *uri, int line, const char *subject,
                  int *ret_fd, char **ret_path, char **ret_label)
{
        char *entry, sha[65];
        int r;

        r = resolve(l, uri, line, subject, ret_fd, ret_label, &entry);
        if (r < 0)
                return r;
        if (*ret_fd >= 0) {
                *ret_path = strdup(*ret_label);
                if (!*ret_path) {
                        close(*ret_fd);
                        free(*ret_label);
                        return -ENOMEM;
                }
                return 0;
        }
        r = ssp_archive_extract(l->ar, entry, l->opts->cache_dir, ret_path, ret_fd, sha);
        if (r == 0 && asprintf(ret_label, "%s:%s", l->path, entry) < 0) {
                free(*ret_path);
                close(*ret_fd);
                r = -ENOMEM;
        }
        if (r < 0 && r != -ENOMEM)
                r = sc_err(l, l->label, line, subject,
                           "source '%s' cannot be taken from the archive: %s", uri,
                           r == -ENOENT ? "no such entry" : strerror(-r));
        free(entry);
        return r;
}

int sc_source_read(struct sc_load *l, const char *uri, int line, const char *subject,
                   char **ret_buf, size_t *ret_len, char **ret_label)
{
        size_t max = l->opts->max_xml_bytes;
        char *entry;
        int fd, r;

        r = resolve(l, uri, line, subject, &fd, ret_label, &entry);
        if (r < 0)
                return r;
        if (fd >= 0) {
                r = ssp_read_fd(fd, max, ret_buf, ret_len);
                close(fd);
        } else {
                r = ssp_archive_read(l->ar, entry, max, ret_buf, ret_len);
                if (r == 0 && asprintf(ret_label, "%s:%s", l->path, entry) < 0) {
                        *ret_label = NULL;
                        free(*ret_buf);
                        r = -ENOMEM;
                }
        }
        if (r == -EFBIG)
                r = sc_err(l, l->label, line, subject,
                           "source '%s' is larger than the limit of %zu bytes", uri, max);
        else if (r < 0 && r != -ENOMEM)
                r = sc_err(l, l->label, line, subject, "source '%s' cannot be read: %s", uri,
                           r == -ENOENT ? "no such entry" : strerror(-r));
        if (r < 0) {
                free(*ret_label);
                *ret_label = NULL;
        }
        free(entry);
        return r;
}
