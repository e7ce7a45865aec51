/* Test helpers: run a program with stdout and stderr captured in files. */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static char *slurp(int fd)
{
        struct stat st;
        char *buf;

        if (fstat(fd, &st) < 0 || !(buf = malloc((size_t)st.st_size + 1)))
                return NULL;
        if (pread(fd, buf, (size_t)st.st_size, 0) != st.st_size) {
                free(buf);
                return NULL;
        }
        buf[st.st_size] = '\0';
        return buf;
}

int run_capture(char *const argv[], struct run_result *ret)
{
        posix_spawn_file_actions_t fa;
        FILE *out = tmpfile(), *err = tmpfile();
        int status, r = 0;
        pid_t pid;

        if (!out || !err) {
                r = -errno;
                goto out_close;
        }
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, fileno(out), 1);
        posix_spawn_file_actions_adddup2(&fa, fileno(err), 2);
        r = -posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        if (r < 0)
                goto out_close;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR) {
                        r = -errno;
                        goto out_close;
                }
        ret->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        ret->out = slurp(fileno(out));
        ret->err = slurp(fileno(err));
        if (!ret->out || !ret->err) {
                run_result_fini(ret);
                r = -ENOMEM;
        }
out_close:
        if (out)
                fclose(out);
        if (err)
                fclose(err);
        return r;
}

void run_result_fini(struct run_result *r)
{
        free(r->out);
        free(r->err);
        r->out = r->err = NULL;
}
