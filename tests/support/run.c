/* Test helpers: run a program with stdout and stderr captured in files. */
#include "run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int run_interrupt(char *const argv[], const char *when, int sig, int signals,
                  struct run_result *ret)
{
        posix_spawn_file_actions_t fa;
        FILE *out = tmpfile(), *err = tmpfile();
        bool seen = !when;
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
        /* 20 ms polls for two minutes: a bound against a hang, not a measurement. */
        for (int i = 0; i < 6000 && !seen; i++) {
                char *text = slurp(fileno(err));

                seen = text && strstr(text, when);
                free(text);
                if (!seen && waitpid(pid, &status, WNOHANG) == pid)
                        break;
                if (!seen)
                        usleep(20000);
        }
        for (int i = 0; seen && i < signals; i++) {
                kill(pid, sig);
                usleep(100000);
        }
        if (!seen) {
                kill(pid, SIGKILL);
                r = -ETIMEDOUT;
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR) {
                        r = r ? r : -errno;
                        goto out_close;
                }
        ret->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        ret->out = slurp(fileno(out));
        ret->err = slurp(fileno(err));
        if (!ret->out || !ret->err) {
                run_result_fini(ret);
                r = r ? r : -ENOMEM;
        }
out_close:
        if (out)
                fclose(out);
        if (err)
                fclose(err);
        return r;
}

int run_capture(char *const argv[], struct run_result *ret)
{
        return run_interrupt(argv, NULL, 0, 0, ret);
}

int run_any_process_names(const char *s)
{
        DIR *d = opendir("/proc");
        struct dirent *e;
        int found = 0;

        if (!d)
                return -errno;
        while (!found && (e = readdir(d))) {
                char path[300], buf[8192];
                ssize_t n;
                int fd;

                if (e->d_name[0] < '1' || e->d_name[0] > '9' || atoi(e->d_name) == getpid())
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                n = read(fd, buf, sizeof(buf) - 1);
                close(fd);
                if (n <= 0)
                        continue;
                for (ssize_t i = 0; i < n; i++)
                        if (!buf[i])
                                buf[i] = ' ';
                buf[n] = '\0';
                found = strstr(buf, s) != NULL;
        }
        closedir(d);
        return found;
}

void run_result_fini(struct run_result *r)
{
        free(r->out);
        free(r->err);
        r->out = r->err = NULL;
}
