/*
 * libfmud_key: CURVE key files (fmud.h): NAME.key holds the secret key,
 * NAME.pub the public key, each one Z85 line. The secret file is created
 * 0600 with O_EXCL, so it is never readable by others, not even briefly,
 * and an existing key is never overwritten.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "fmud.h"

#define KEY_FILE_MAX 256

static int kerr(char *err, size_t errlen, int r, const char *fmt, const char *arg)
{
        if (err && errlen) {
                int n = snprintf(err, errlen, fmt, arg);

                if (n >= 0 && (size_t)n < errlen)
                        snprintf(err + n, errlen - (size_t)n, ": %s", strerror(-r));
        }
        return r;
}

static int write_line(const char *path, const char *key, mode_t mode)
{
        char line[FMUD_KEY_Z85_LEN + 2];
        size_t len;
        int fd, r = 0;

        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
        if (fd < 0)
                return -errno;
        len = (size_t)snprintf(line, sizeof(line), "%s\n", key);
        if (write(fd, line, len) != (ssize_t)len || fsync(fd) < 0)
                r = errno ? -errno : -EIO;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r < 0)
                (void)unlink(path);
        return r;
}

int fmud_keygen(const char *name, char *err, size_t errlen)
{
        char pub[FMUD_KEY_Z85_LEN + 1], sec[FMUD_KEY_Z85_LEN + 1];
        char *key_path = NULL, *pub_path = NULL;
        struct stat st;
        int r;

        if (!name || !*name)
                return kerr(err, errlen, -EINVAL, "%s", "empty key name");
        if (asprintf(&key_path, "%s.key", name) < 0) {
                key_path = NULL;
                r = kerr(err, errlen, -ENOMEM, "%s", "key file name");
                goto out;
        }
        if (asprintf(&pub_path, "%s.pub", name) < 0) {
                pub_path = NULL;
                r = kerr(err, errlen, -ENOMEM, "%s", "key file name");
                goto out;
        }
        /* Check both first so a refusal leaves nothing behind. */
        if (lstat(pub_path, &st) == 0) {
                r = kerr(err, errlen, -EEXIST, "'%s' exists, not overwriting", pub_path);
                goto out;
        }
        if (zmq_curve_keypair(pub, sec) < 0) {
                r = kerr(err, errlen, errno == ENOTSUP ? -ENOTSUP : -EIO, "%s",
                         "zmq_curve_keypair (libzmq without CURVE?)");
                goto out;
        }
        r = write_line(key_path, sec, 0600);
        if (r < 0) {
                kerr(err, errlen, r, r == -EEXIST ? "'%s' exists, not overwriting" :
                     "cannot create '%s'", key_path);
                goto out;
        }
        r = write_line(pub_path, pub, 0644);
        if (r < 0) {
                kerr(err, errlen, r, r == -EEXIST ? "'%s' exists, not overwriting" :
                     "cannot create '%s'", pub_path);
                (void)unlink(key_path);
        }
out:
        explicit_bzero(sec, sizeof(sec));
        free(key_path);
        free(pub_path);
        return r;
}

int fmud_key_read(const char *path, char ret[FMUD_KEY_Z85_LEN + 1], char *err, size_t errlen)
{
        char buf[KEY_FILE_MAX + 1];
        uint8_t bin[32];
        size_t start = 0, end;
        ssize_t n;
        int fd, r = 0;

        if (!path || !*path || !ret)
                return kerr(err, errlen, -EINVAL, "%s", !ret ? "no place for the key" :
                            "no key file named");
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return kerr(err, errlen, -errno, "cannot open '%s'", path);
        n = read(fd, buf, KEY_FILE_MAX);
        if (n < 0)
                r = -errno;
        close(fd);
        if (r < 0)
                return kerr(err, errlen, r, "cannot read '%s'", path);
        /* read() returns at most KEY_FILE_MAX; the bound is for the compiler. */
        end = (size_t)n < KEY_FILE_MAX ? (size_t)n : KEY_FILE_MAX;
        buf[end] = '\0';
        while (start < end && isspace((unsigned char)buf[start]))
                start++;
        while (end > start && isspace((unsigned char)buf[end - 1]))
                end--;
        /* A NUL would end the key early for zmq_z85_decode(), which then takes the prefix. */
        if (end - start != FMUD_KEY_Z85_LEN || (size_t)n == KEY_FILE_MAX ||
            memchr(buf + start, '\0', end - start)) {
                explicit_bzero(buf, sizeof(buf));
                return kerr(err, errlen, -EINVAL, "'%s' does not hold one Z85 key", path);
        }
        buf[end] = '\0';
        if (!zmq_z85_decode(bin, buf + start)) {
                explicit_bzero(buf, sizeof(buf));
                return kerr(err, errlen, -EINVAL, "'%s' does not hold one Z85 key", path);
        }
        memcpy(ret, buf + start, FMUD_KEY_Z85_LEN + 1);
        explicit_bzero(buf, sizeof(buf));
        explicit_bzero(bin, sizeof(bin));
        return 0;
}
