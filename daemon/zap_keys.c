/* zap_keys: key files, read with bounds and checked (zap.h). */
#include "zap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "access.h"

#define KEYS_MAX_FILE   (4u << 20)      /* bytes of authorized_keys */

/* The whole small file at path, NUL-terminated, at most max bytes. */
static int slurp(const char *path, size_t max, char **ret, size_t *ret_len, struct stat *ret_st)
{
        struct stat st;
        size_t len = 0;
        char *buf;
        ssize_t n;
        int fd, r;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0) {
                r = -errno;
                goto out_close;
        }
        if (!S_ISREG(st.st_mode)) {
                r = -EINVAL;
                goto out_close;
        }
        if ((uint64_t)st.st_size > max) {
                r = -EFBIG;
                goto out_close;
        }
        buf = malloc(max + 1);
        if (!buf) {
                r = -ENOMEM;
                goto out_close;
        }
        while (len < max && (n = read(fd, buf + len, max - len)) != 0) {
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        r = -errno;
                        free(buf);
                        goto out_close;
                }
                len += (size_t)n;
        }
        close(fd);
        buf[len] = '\0';
        *ret = buf;
        *ret_len = len;
        if (ret_st)
                *ret_st = st;
        return 0;
out_close:
        close(fd);
        return r;
}

static bool is_z85_key(const char *s, size_t n)
{
        uint8_t raw[32];
        char tmp[ZAP_KEY_Z85_LEN + 1];

        if (n != ZAP_KEY_Z85_LEN)
                return false;
        memcpy(tmp, s, n);
        tmp[n] = '\0';
        return zmq_z85_decode(raw, tmp) != NULL;
}

int zap_read_keys(const char *path, uint8_t (**ret)[32], size_t *ret_n, char *err, size_t errlen)
{
        uint8_t *roles = NULL;
        int r = zap_read_keys_roles(path, ret, &roles, ret_n, err, errlen);

        free(roles);
        return r;
}

int zap_read_keys_roles(const char *path, uint8_t (**ret)[32], uint8_t **ret_roles, size_t *ret_n,
                        char *err, size_t errlen)
{
        uint8_t (*keys)[32] = NULL;
        uint8_t *roles = NULL;
        size_t len, n = 0, cap = 0;
        char *buf, *line, *next;
        unsigned lineno = 0;
        int r;

        r = slurp(path, KEYS_MAX_FILE, &buf, &len, NULL);
        if (r < 0) {
                snprintf(err, errlen, "%s: %s", path, strerror(-r));
                return r;
        }
        if (memchr(buf, '\0', len)) {
                snprintf(err, errlen, "%s: a NUL byte in a text file", path);
                r = -EINVAL;
                goto out_free;
        }
        for (line = buf; line && *line; line = next) {
                char *p = line, *e;
                char key[ZAP_KEY_Z85_LEN + 1], word[16];
                const char *rest;
                int role = ACCESS_OPERATOR;
                size_t wl;

                lineno++;
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                p += strspn(p, " \t\r");
                if (*p == '\0')
                        continue;
                /*
                 * '#' is a Z85 digit: a line is a key when its first 40
                 * characters decode and only blanks (then perhaps a
                 * comment) follow; otherwise a '#' starts a comment.
                 */
                e = p + strcspn(p, " \t\r");
                rest = e + strspn(e, " \t\r");
                /* A role may follow the key (access.h); none: operator. */
                wl = strcspn(rest, " \t\r#");
                if (is_z85_key(p, (size_t)(e - p)) && wl > 0) {
                        snprintf(word, sizeof(word), "%.*s", (int)(wl < 15 ? wl : 15), rest);
                        role = wl < 15 ? access_role_parse(word) : -EINVAL;
                        if (role < 0) {
                                snprintf(err, errlen, "%s:%u: '%.*s' is not a role (observer, "
                                         "operator or admin)", path, lineno, (int)(wl < 32 ? wl : 32),
                                         rest);
                                r = -EINVAL;
                                goto out_free;
                        }
                        rest += wl;
                        rest += strspn(rest, " \t\r");
                }
                if (!is_z85_key(p, (size_t)(e - p)) || (*rest != '\0' && *rest != '#')) {
                        if (*p == '#')
                                continue;
                        snprintf(err, errlen, "%s:%u: not a 40-character Z85 public key", path,
                                 lineno);
                        r = -EINVAL;
                        goto out_free;
                }
                if (n == ZAP_MAX_KEYS) {
                        snprintf(err, errlen, "%s:%u: more than %u keys", path, lineno,
                                 ZAP_MAX_KEYS);
                        r = -E2BIG;
                        goto out_free;
                }
                if (n == cap) {
                        uint8_t (*k)[32];

                        cap = cap ? cap * 2 : 16;
                        uint8_t *ro;

                        k = realloc(keys, cap * sizeof(*keys));
                        if (k)
                                keys = k;
                        ro = k ? realloc(roles, cap) : NULL;
                        if (ro)
                                roles = ro;
                        if (!k || !ro) {
                                snprintf(err, errlen, "out of memory");
                                r = -ENOMEM;
                                goto out_free;
                        }
                }
                memcpy(key, p, ZAP_KEY_Z85_LEN);
                roles[n] = (uint8_t)role;
                key[ZAP_KEY_Z85_LEN] = '\0';
                zmq_z85_decode(keys[n++], key);
        }
        free(buf);
        *ret = keys;
        *ret_roles = roles;
        *ret_n = n;
        return 0;
out_free:
        free(roles);
        free(keys);
        free(buf);
        return r;
}

int zap_read_secret(const char *path, char ret[ZAP_KEY_Z85_LEN + 1], char *err, size_t errlen)
{
        struct stat st;
        size_t len, n;
        char *buf, *p;
        int r;

        r = slurp(path, 4096, &buf, &len, &st);
        if (r < 0) {
                snprintf(err, errlen, "%s: %s", path, strerror(-r));
                return r;
        }
        if (st.st_mode & (S_IRGRP | S_IROTH | S_IWGRP | S_IWOTH)) {
                snprintf(err, errlen, "%s: a secret key must not be accessible to group or "
                                      "others (mode %03o; chmod 600)", path,
                         (unsigned)(st.st_mode & 0777));
                r = -EPERM;
                goto out_free;
        }
        p = buf + strspn(buf, " \t\r\n");
        n = strcspn(p, " \t\r\n");
        if (!is_z85_key(p, n) || p[n + strspn(p + n, " \t\r\n")] != '\0' ||
            memchr(buf, '\0', len)) {
                snprintf(err, errlen, "%s: not a 40-character Z85 secret key", path);
                r = -EINVAL;
                goto out_free;
        }
        memcpy(ret, p, ZAP_KEY_Z85_LEN);
        ret[ZAP_KEY_Z85_LEN] = '\0';
        r = 0;
out_free:
        /* The buffer held a secret. */
        explicit_bzero(buf, len);
        free(buf);
        return r;
}
