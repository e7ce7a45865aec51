/* Test helper: act as another local user (as_other.h). */
#include "as_other.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

static void child(as_other_fn *fn, void *ctx, int fd)
{
        if (setgroups(0, NULL) < 0 || setresgid(AS_OTHER_GID, AS_OTHER_GID, AS_OTHER_GID) < 0 ||
            setresuid(AS_OTHER_UID, AS_OTHER_UID, AS_OTHER_UID) < 0)
                _exit(AS_OTHER_NOT_BECOME);
        _exit(fn(ctx, fd));
}

ssize_t as_other(as_other_fn *fn, void *ctx, void *buf, size_t size, int *ret_status)
{
        char *p = buf;
        size_t len = 0;
        int fds[2], status = 0;
        ssize_t n;
        pid_t pid;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                n = -errno;
                close(fds[0]);
                close(fds[1]);
                return n;
        }
        if (pid == 0) {
                close(fds[0]);
                child(fn, ctx, fds[1]);
        }
        close(fds[1]);
        /* Until the child closed its end (it exited) or buf is full. */
        while (len < size) {
                n = read(fds[0], p + len, size - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                len += (size_t)n;
        }
        close(fds[0]);
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        *ret_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        return (ssize_t)len;
}
