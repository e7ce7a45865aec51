/*
 * host: a path a client names is opened beneath its allowed directory
 * (daemon/host_beneath.c) with no symbolic link followed anywhere on the
 * way, so that swapping a directory of the path for a link between the
 * check at load and the open cannot lead outside: the open itself refuses.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/host_int.h"
#include "support/tmpdir.h"

static char *allowed, *outside;

static void setup(void)
{
        allowed = tmpdir_new("fmud-beneath");
        outside = tmpdir_new("fmud-beneath-out");
        cr_assert(allowed && outside);
}

static void teardown(void)
{
        tmpdir_free(allowed);
        tmpdir_free(outside);
}

static int open_in(const char *rel, int flags, int *fd, char *msg, size_t size)
{
        char *path = NULL;
        int code;

        cr_assert(asprintf(&path, "%s/%s", allowed, rel) > 0);
        code = hpath_open(NULL, &allowed, 1, path, flags, 0644, fd, msg, size);
        free(path);
        return code;
}

Test(host_paths, a_directory_swapped_for_a_link_leads_nowhere, .init = setup, .fini = teardown)
{
        char msg[512], link[1024], victim[1024];
        struct stat st;
        int fd = -1;

        /* At the check, results/ was a directory; now it is a link to outside. */
        snprintf(link, sizeof(link), "%s/results", allowed);
        cr_assert(eq(int, symlink(outside, link), 0));
        cr_assert(eq(int, open_in("results/victim", O_WRONLY | O_CREAT, &fd, msg, sizeof(msg)),
                     PROTO_E_DENIED), "%s", msg);
        cr_assert(strstr(msg, "symbolic link") != NULL, "%s", msg);
        snprintf(victim, sizeof(victim), "%s/victim", outside);
        cr_assert(eq(int, stat(victim, &st), -1), "a file was created outside");
}

Test(host_paths, a_file_that_is_a_link_is_not_followed, .init = setup, .fini = teardown)
{
        char msg[512], link[1024];
        int fd = -1;

        cr_assert(tmpdir_write(outside, "secret", "x", 1) == 0);
        snprintf(link, sizeof(link), "%s/in.csv", allowed);
        snprintf(msg, sizeof(msg), "%s/secret", outside);
        cr_assert(eq(int, symlink(msg, link), 0));
        cr_assert(eq(int, open_in("in.csv", O_RDONLY, &fd, msg, sizeof(msg)), PROTO_E_DENIED));
}

Test(host_paths, dot_dot_does_not_leave_the_allowed_directory, .init = setup, .fini = teardown)
{
        char msg[512], rel[1024];
        int fd = -1;

        cr_assert(tmpdir_write(outside, "secret", "x", 1) == 0);
        snprintf(rel, sizeof(rel), "../%s/secret", strrchr(outside, '/') + 1);
        cr_assert(eq(int, open_in(rel, O_RDONLY, &fd, msg, sizeof(msg)), PROTO_E_DENIED), "%s",
                  msg);
}

Test(host_paths, a_plain_file_below_is_opened, .init = setup, .fini = teardown)
{
        char msg[512], sub[1024];
        int fd = -1;

        snprintf(sub, sizeof(sub), "%s/sub", allowed);
        cr_assert(eq(int, mkdir(sub, 0755), 0));
        cr_assert(eq(int, open_in("sub/new.csv", O_WRONLY | O_CREAT, &fd, msg, sizeof(msg)), -1),
                  "%s", msg);
        cr_assert(fd >= 0);
        close(fd);
        cr_assert(eq(int, open_in("elsewhere.csv", O_RDONLY, &fd, msg, sizeof(msg)),
                     PROTO_E_DENIED));
        cr_assert(eq(int, hpath_open(NULL, &allowed, 1, "/etc/passwd", O_RDONLY, 0, &fd, msg,
                                     sizeof(msg)), PROTO_E_DENIED));
        cr_assert(strstr(msg, "not below an allowed directory") != NULL, "%s", msg);
}

Test(host_paths, an_allowed_directory_spelt_through_a_link_is_refused_by_its_text, .init = setup,
     .fini = teardown)
{
        char msg[512], alias[1024], path[1100];
        int fd = -1;

        cr_assert(tmpdir_write(allowed, "in.csv", "x", 1) == 0);
        snprintf(alias, sizeof(alias), "%s/alias", outside);
        cr_assert(eq(int, symlink(allowed, alias), 0));
        snprintf(path, sizeof(path), "%s/in.csv", alias);
        cr_assert(eq(int, hpath_open(NULL, &allowed, 1, path, O_RDONLY, 0, &fd, msg, sizeof(msg)),
                     PROTO_E_DENIED), "%s", msg);
        cr_assert(eq(int, fd, -1));
        cr_assert(strstr(msg, "not below an allowed directory") != NULL, "%s", msg);
        cr_assert(strstr(msg, "canonical path") != NULL, "%s", msg);
}

/* allowed (or outside) then depth components "d", then "f". */
static char *deep(const char *top, int depth)
{
        size_t len = strlen(top) + 2 * (size_t)depth + 3;
        char *p = malloc(len), *e;

        cr_assert(p != NULL);
        e = p + sprintf(p, "%s", top);
        for (int i = 0; i < depth; i++)
                e += sprintf(e, "/d");
        sprintf(e, "/f");
        return p;
}

Test(host_paths, a_path_of_too_many_components_is_refused_before_any_walk, .init = setup,
     .fini = teardown)
{
        char msg[8192], *p;
        int fd = -1;

        /* Inside and outside the allowed directory, whether or not the directories exist. */
        p = deep(allowed, 300);
        cr_assert(eq(int, hpath_open(NULL, &allowed, 1, p, O_RDONLY, 0, &fd, msg, sizeof(msg)),
                     PROTO_E_INVALID), "%s", msg);
        cr_assert(strstr(msg, "too long (at most 256 components") != NULL, "%s", msg);
        free(p);
        p = deep(outside, 2000);
        cr_assert(eq(int, hpath_open(NULL, &allowed, 1, p, O_RDONLY, 0, &fd, msg, sizeof(msg)),
                     PROTO_E_INVALID), "%s", msg);
        cr_assert(strstr(msg, "too long") != NULL, "%s", msg);
        cr_assert(eq(int, hpath_check_out(&allowed, 1, p, msg, sizeof(msg)), PROTO_E_INVALID),
                  "%s", msg);
        cr_assert(strstr(msg, "too long") != NULL, "%s", msg);
        cr_assert(eq(int, fd, -1));
        free(p);
        /* At the bound, the path is walked as any other (and is not there). */
        p = deep(allowed, 250);
        cr_assert(eq(int, hpath_open(NULL, &allowed, 1, p, O_RDONLY, 0, &fd, msg, sizeof(msg)),
                     PROTO_E_DENIED), "%s", msg);
        cr_assert(strstr(msg, "not there") != NULL, "%s", msg);
        free(p);
}

Test(host_paths, dot_dot_is_refused_even_where_it_stays_inside, .init = setup, .fini = teardown)
{
        char msg[512], sub[1024];
        int fd = -1;

        snprintf(sub, sizeof(sub), "%s/sub", allowed);
        cr_assert(eq(int, mkdir(sub, 0755), 0));
        cr_assert(tmpdir_write(allowed, "in.csv", "x", 1) == 0);
        cr_assert(eq(int, open_in("sub/../in.csv", O_RDONLY, &fd, msg, sizeof(msg)),
                     PROTO_E_DENIED), "%s", msg);
        cr_assert(eq(int, fd, -1));
        cr_assert(strstr(msg, "'..'") != NULL, "%s", msg);
        cr_assert(eq(int, open_in("in.csv", O_RDONLY, &fd, msg, sizeof(msg)), -1), "%s", msg);
        close(fd);
}
