/*
 * daemon: a scenario and every file it names are opened once, beneath a
 * directory's descriptor (the allowed directory, the scenario's folder),
 * following no symbolic link: a source through a link is refused naming
 * it, a directory swapped for a link while loads go on never makes the
 * daemon read what the link leads to, and a scenario its client may not
 * read is refused without quoting it.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon_fixture.h"
#include "support/tmpdir.h"

/* Loads made while the folder flips between a directory and a link. */
#define RACE_LOADS 40

#define SSD_HEAD "<?xml version=\"1.0\"?>\n" \
        "<ssd:SystemStructureDescription version=\"1.0\" name=\"linked\" " \
        "xmlns:ssd=\"http://ssp-standard.org/SSP1/SystemStructureDescription\">\n"

static void copy(const char *from, const char *to)
{
        char buf[65536];
        int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ssize_t n;

        cr_assert(in >= 0 && out >= 0);
        while ((n = read(in, buf, sizeof(buf))) > 0)
                cr_assert(eq(long, (long)write(out, buf, (size_t)n), (long)n));
        cr_assert(n == 0);
        close(in);
        close(out);
}

static int sessions(struct fmud *c)
{
        struct proto_list_result l;

        cr_assert(fmud_list(c, &l) == 0, "%s", fmud_errmsg(c));
        return (int)l.n;
}

Test(daemon_scenario_paths, a_source_through_a_link_is_refused_even_inside)
{
        static const char ssd[] = SSD_HEAD
                "<ssd:System name=\"s\"><ssd:Elements>\n"
                "<ssd:Component name=\"a\" source=\"sub/Feedthrough.fmu\"/>\n"
                "</ssd:Elements></ssd:System></ssd:SystemStructureDescription>\n";
        struct fmud_daemon d;
        struct proto_load a = { 0 };
        char *real, *sub, *fmu, *path;
        struct fmud *c;

        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        cr_assert(tmpdir_write(d.dir, "scn/SystemStructure.ssd", ssd, sizeof(ssd) - 1) == 0);
        real = daemon_path(&d, "scn/real");
        cr_assert(eq(int, mkdir(real, 0755), 0));
        fmu = daemon_path(&d, "scn/real/Feedthrough.fmu");
        copy(FMUD_TEST_FMU_DIR "/Feedthrough.fmu", fmu);
        /* The link leads to a folder beside it, inside the allowed directory. */
        sub = daemon_path(&d, "scn/sub");
        cr_assert(eq(int, symlink("real", sub), 0));
        path = daemon_path(&d, "scn/SystemStructure.ssd");
        a.path = daemon_str(path);
        daemon_assert_refused(c, fmud_load(c, &a, NULL, NULL), PROTO_E_INVALID, "a linked source");
        cr_assert(strstr(fmud_errmsg(c), "source 'sub/Feedthrough.fmu'") != NULL, "%s",
                  fmud_errmsg(c));
        cr_assert(strstr(fmud_errmsg(c), "symbolic link") != NULL, "%s", fmud_errmsg(c));
        cr_assert(eq(int, sessions(c), 0));
        fmud_close(c);
        free(path);
        free(sub);
        free(fmu);
        free(real);
        daemon_stop(&d);
}

struct flipper {
        const char *a, *b;
        atomic_bool stop;
        unsigned long flips;
};

/* Exchange a and b (a folder and a link) until told to stop. */
static void *flip(void *arg)
{
        struct flipper *f = arg;

        while (!atomic_load(&f->stop)) {
                if (renameat2(AT_FDCWD, f->a, AT_FDCWD, f->b, RENAME_EXCHANGE) == 0)
                        f->flips++;
        }
        return NULL;
}

Test(daemon_scenario_paths, a_folder_swapped_for_a_link_during_loads_is_never_followed)
{
        struct fmud_daemon d;
        char *outside = tmpdir_new("fmud-swap-outside"), *dir, *link, *path, *out_fmu, *in_fmu;
        struct flipper f = { 0 };
        struct proto_load a = { 0 };
        unsigned loaded = 0, refused = 0;
        pthread_t t;
        struct fmud *c;

        cr_assert(outside != NULL);
        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        dir = daemon_path(&d, "d");
        link = daemon_path(&d, "e");
        cr_assert(eq(int, mkdir(dir, 0755), 0));
        in_fmu = daemon_path(&d, "d/model.fmu");
        copy(FMUD_TEST_FMU_DIR "/Feedthrough.fmu", in_fmu);
        cr_assert(asprintf(&out_fmu, "%s/model.fmu", outside) > 0);
        copy(FMUD_TEST_FMU_DIR "/BouncingBall.fmu", out_fmu);
        cr_assert(eq(int, symlink(outside, link), 0));
        path = daemon_path(&d, "d/model.fmu");
        a.path = daemon_str(path);
        f.a = dir;
        f.b = link;
        cr_assert(eq(int, pthread_create(&t, NULL, flip, &f), 0));
        for (int i = 0; i < RACE_LOADS; i++) {
                struct proto_list_result l;
                struct proto_target tg = { 0 };
                uint64_t s;

                if (fmud_load(c, &a, &s, NULL) < 0) {
                        refused++;
                        continue;
                }
                loaded++;
                cr_assert(fmud_list(c, &l) == 0, "%s", fmud_errmsg(c));
                cr_assert(eq(u32, l.n, 1));
                /* Never the model behind the link. */
                cr_assert(daemon_str_eq(l.sessions[0].name, "Feedthrough"), "load %d: %.*s", i,
                          (int)l.sessions[0].name.len, l.sessions[0].name.ptr);
                tg.session = s;
                cr_assert(fmud_unload(c, &tg) == 0, "%s", fmud_errmsg(c));
        }
        atomic_store(&f.stop, true);
        pthread_join(t, NULL);
        cr_log_info("%u loaded, %u refused, %lu flips", loaded, refused, f.flips);
        cr_assert(f.flips > 0);
        fmud_close(c);
        free(path);
        free(in_fmu);
        free(out_fmu);
        free(link);
        free(dir);
        daemon_stop(&d);
        tmpdir_free(outside);
}

Test(daemon_scenario_paths, a_scenario_not_everyone_may_read_is_not_quoted)
{
        static const char secret[] = "<?xml version=\"1.0\"?>\n<TopSecretRootElement/>\n";
        struct fmud_daemon d;
        struct proto_load a = { 0 };
        char *path;
        struct fmud *c;

        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        cr_assert(tmpdir_write(d.dir, "private.ssd", secret, sizeof(secret) - 1) == 0);
        path = daemon_path(&d, "private.ssd");
        cr_assert(eq(int, chmod(path, 0600), 0));
        a.path = daemon_str(path);
        daemon_assert_refused(c, fmud_load(c, &a, NULL, NULL), PROTO_E_INVALID, "a private ssd");
        cr_assert(strstr(fmud_errmsg(c), "TopSecret") == NULL, "quoted: %s", fmud_errmsg(c));
        cr_assert(strstr(fmud_errmsg(c), "private.ssd") != NULL, "%s", fmud_errmsg(c));
        /* Readable by everyone: the message says what is wrong, quoting it. */
        cr_assert(eq(int, chmod(path, 0644), 0));
        daemon_assert_refused(c, fmud_load(c, &a, NULL, NULL), PROTO_E_INVALID, "a bad ssd");
        cr_assert(strstr(fmud_errmsg(c), "TopSecret") != NULL, "%s", fmud_errmsg(c));
        cr_assert(eq(int, sessions(c), 0));
        fmud_close(c);
        free(path);
        daemon_stop(&d);
}
