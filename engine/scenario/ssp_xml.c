/*
 * ssp_xml: SSP documents through fmi/md_xml.c's hostile-input reader, and
 * bounded file reading.
 */
#include "engine/scenario/ssp_xml.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int ssp_xml_read(struct mx *x, const void *buf, size_t len)
{
        if (len > INT_MAX)
                return -EFBIG;
        x->what = "an SSP document";
        x->encoding_rule = "SSP 1.0 requires UTF-8 XML";
        return mx_read(x, buf, len);
}

int ssp_read_fd(int fd, size_t max, char **ret_buf, size_t *ret_len)
{
        struct stat st;
        size_t len = 0;
        char *buf;
        int r;

        if (fstat(fd, &st) < 0) {
                r = -errno;
                goto out;
        }
        if (S_ISDIR(st.st_mode)) {
                r = -EISDIR;
                goto out;
        }
        if (!S_ISREG(st.st_mode)) {
                r = -EINVAL;
                goto out;
        }
        if ((uint64_t)st.st_size > max) {
                r = -EFBIG;
                goto out;
        }
        buf = malloc((size_t)st.st_size + 1);
        if (!buf) {
                r = -ENOMEM;
                goto out;
        }
        /* Read to end of file, but never more than the size seen (it may be growing). */
        while (len < (size_t)st.st_size) {
                ssize_t n = read(fd, buf + len, (size_t)st.st_size - len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r = -errno;
                        free(buf);
                        goto out;
                }
                if (n == 0)
                        break;
                len += (size_t)n;
        }
        buf[len] = '\0';
        *ret_buf = buf;
        *ret_len = len;
        return 0;

out:
        return r;
}

int ssp_read_file(const char *path, size_t max, char **ret_buf, size_t *ret_len)
{
        int fd, r;

        /* O_NONBLOCK: a FIFO planted under the name must not hang us in open(). */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        r = ssp_read_fd(fd, max, ret_buf, ret_len);
        close(fd);
        return r;
}
