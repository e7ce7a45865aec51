/* notify: sd_notify's datagram protocol, written out (notify.h). */
#include "notify.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int notify_send(const char *state)
{
        const char *path = getenv("NOTIFY_SOCKET");
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        socklen_t salen;
        size_t n;
        int fd, r = 1;

        if (!path || !*path)
                return 0;
        n = strlen(path);
        if ((path[0] != '/' && path[0] != '@') || n >= sizeof(sa.sun_path))
                return -EINVAL;
        memcpy(sa.sun_path, path, n);
        if (path[0] == '@')
                sa.sun_path[0] = '\0';          /* abstract namespace */
        salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (path[0] == '/'));
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, salen) < 0)
                r = -errno;
        close(fd);
        return r;
}

uint64_t notify_watchdog_period_us(void)
{
        const char *usec = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
        unsigned long long v;
        char *end;

        if (!usec || !*usec)
                return 0;
        if (pid && *pid) {
                errno = 0;
                v = strtoull(pid, &end, 10);
                if (errno || *end || v != (unsigned long long)getpid())
                        return 0;
        }
        errno = 0;
        v = strtoull(usec, &end, 10);
        if (errno || *end || v == 0)
                return 0;
        return v / 2;
}
