/*
 * scenario_beneath: a confined load (the daemon's, scenario_opts.confined)
 * opens the scenario and every file it names once, beneath a directory's
 * descriptor, and reads only that descriptor. A directory of a path
 * swapped for a symbolic link at any poll of the load (the load's cancel
 * callback makes the swap: every poll is tried in turn) never makes it
 * read the file the link leads to; a link or ".." on the way is refused
 * naming the source; a file others may not read shows none of its
 * content in any message.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/tmpdir.h"
#include "test_scenario_fixture.h"

/* Every poll is tried up to this many; a load of the test FMUs makes far fewer. */
#define MAX_POLLS 2000

static struct sx x;
static char *allowed, *outside;
static const char *allowed_v[1];

#define HEAD "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
#define SSD_OPEN "<ssd:SystemStructureDescription version=\"1.0\" name=\"b\" " \
        "xmlns:ssd=\"http://ssp-standard.org/SSP1/SystemStructureDescription\">\n"
#define SSD_CLOSE "</ssd:SystemStructureDescription>\n"

static char *join(const char *a, const char *b)
{
        char *s;

        cr_assert(asprintf(&s, "%s/%s", a, b) >= 0);
        return s;
}

/*
 * The staged folder (resolved: an allowed directory is) is the one
 * allowed directory; d/model.fmu in it is Feedthrough; outside it,
 * model.fmu is BouncingBall, which no load here may ever read.
 */
static void setup(void)
{
        char *d, *f;

        sx_stage(&x, NULL, NULL);
        allowed = realpath(x.dir, NULL);
        outside = tmpdir_new("fmud-scn-outside");
        cr_assert(allowed && outside);
        allowed_v[0] = allowed;
        x.opts.allowed_dirs = allowed_v;
        x.opts.n_allowed_dirs = 1;
        x.opts.confined = true;
        d = join(allowed, "d");
        cr_assert(eq(int, mkdir(d, 0755), 0));
        f = join(d, "model.fmu");
        sx_copy(FMUD_TEST_FMU_DIR "/Feedthrough.fmu", f);
        free(f);
        f = join(outside, "model.fmu");
        sx_copy(FMUD_TEST_FMU_DIR "/BouncingBall.fmu", f);
        free(f);
        free(d);
}

static void teardown(void)
{
        sx_fini(&x);
        tmpdir_free(outside);
        free(allowed);
}

static char *one_component(const char *src)
{
        char *s;

        cr_assert(asprintf(&s, HEAD SSD_OPEN "<ssd:System name=\"s\"><ssd:Elements>\n"
                           "<ssd:Component name=\"c\" source=\"%s\"/>\n"
                           "</ssd:Elements></ssd:System>\n" SSD_CLOSE, src) >= 0);
        return s;
}

/* At the at-th poll of the load, d becomes a link to the outside folder. */
struct swap {
        unsigned at, polls;
        bool swapped;
};

static bool swap_poll(void *ctx)
{
        struct swap *s = ctx;
        char *d, *aside;

        if (++s->polls != s->at)
                return false;
        d = join(allowed, "d");
        aside = join(allowed, "d.real");
        cr_assert(eq(int, rename(d, aside), 0));
        cr_assert(eq(int, symlink(outside, d), 0));
        s->swapped = true;
        free(aside);
        free(d);
        return false;
}

static void unswap(struct swap *s)
{
        char *d = join(allowed, "d"), *aside = join(allowed, "d.real");

        if (s->swapped) {
                cr_assert(eq(int, unlink(d), 0));
                cr_assert(eq(int, rename(aside, d), 0));
        }
        free(aside);
        free(d);
}

/* The one component's model, or NULL when the load was refused. */
static const char *loaded_model(int r)
{
        if (r < 0)
                return NULL;
        cr_assert(x.s && x.s->n_components == 1 && x.s->components[0].fmu);
        return x.s->components[0].fmu->md->model_name;
}

static void reset(void)
{
        scenario_free(x.s);
        x.s = NULL;
        diag_list_fini(&x.diags);
        diag_list_init(&x.diags, 0);
}

/* Load path with d swapped at each poll in turn; BouncingBall must never be read. */
static void swap_at_every_poll(const char *path)
{
        struct swap s = { 0 };
        unsigned total;
        int r;

        x.opts.cancel = (struct fmi_cancel){ .fn = swap_poll, .ctx = &s };
        /* Twice: the second finds the FMU unpacked in the cache, as every later load does. */
        for (int i = 0; i < 2; i++) {
                reset();
                s = (struct swap){ 0 };
                r = sx_load(&x, path, NULL);
                if (r < 0)
                        sx_dump(&x);
                cr_assert(eq(int, r, 0));
                cr_assert(eq(str, (char *)loaded_model(r), "Feedthrough"));
        }
        total = s.polls;
        cr_assert(total > 0 && total < MAX_POLLS, "%u polls", total);
        for (unsigned at = 1; at <= total; at++) {
                const char *model;

                reset();
                s = (struct swap){ .at = at };
                r = sx_load(&x, path, NULL);
                model = loaded_model(r);
                unswap(&s);
                cr_assert(s.swapped);
                /* Refused (the link seen on the way) or the file opened before the swap. */
                if (model)
                        cr_assert(eq(str, (char *)model, "Feedthrough"), "swapped at poll %u", at);
                if (!model && !sx_has(&x, "symbolic link", NULL))
                        sx_dump(&x);
                if (!model)
                        cr_assert(sx_has(&x, "symbolic link", NULL), "swapped at poll %u: %d",
                                  at, r);
        }
}

Test(scenario_beneath, a_lone_fmu_is_read_from_the_descriptor_opened_first, .init = setup,
     .fini = teardown)
{
        char *path = join(allowed, "d/model.fmu");

        swap_at_every_poll(path);
        free(path);
}

Test(scenario_beneath, a_component_source_is_read_from_the_descriptor_opened_first,
     .init = setup, .fini = teardown)
{
        char *ssd = one_component("d/model.fmu");

        sx_write(allowed, "SystemStructure.ssd", ssd);
        swap_at_every_poll(NULL);
        free(ssd);
}

/* A refusal naming the source and why; nothing loaded. */
static void refused(const char *source, const char *why)
{
        char *ssd = one_component(source), *quoted;
        int r;

        reset();
        sx_write(allowed, "SystemStructure.ssd", ssd);
        r = sx_load(&x, NULL, NULL);
        cr_assert(asprintf(&quoted, "source '%s'", source) >= 0);
        if (r != -EINVAL || !sx_has(&x, quoted, why))
                sx_dump(&x);
        cr_assert(eq(int, r, -EINVAL));
        cr_assert(x.s == NULL);
        cr_assert(sx_has(&x, quoted, why), "'%s' and '%s'", quoted, why);
        free(quoted);
        free(ssd);
}

Test(scenario_beneath, a_link_or_dot_dot_on_the_way_is_refused_naming_the_source, .init = setup,
     .fini = teardown)
{
        char *in = join(allowed, "in"), *out = join(allowed, "out"), *file = join(allowed, "f.fmu");
        char *d = join(allowed, "d"), *abs;

        /* A link to a folder inside the scenario's folder, to one outside, to a file. */
        cr_assert(eq(int, symlink(d, in), 0));
        cr_assert(eq(int, symlink(outside, out), 0));
        cr_assert(eq(int, symlink("d/model.fmu", file), 0));
        refused("in/model.fmu", "symbolic link");
        refused("out/model.fmu", "symbolic link");
        refused("f.fmu", "symbolic link");
        /* ".." even where it would stay inside. */
        refused("d/../d/model.fmu", "'..'");
        refused("../model.fmu", "'..'");
        /* An absolute source through a link below the allowed directory. */
        cr_assert(asprintf(&abs, "%s/in/model.fmu", allowed) >= 0);
        refused(abs, "symbolic link");
        free(abs);
        /* The same folder named plainly loads. */
        reset();
        abs = one_component("d/model.fmu");
        sx_write(allowed, "SystemStructure.ssd", abs);
        cr_assert(eq(int, sx_load(&x, NULL, NULL), 0));
        free(abs);
        free(in);
        free(out);
        free(file);
        free(d);
}

Test(scenario_beneath, the_scenario_itself_behind_a_link_or_outside_is_refused, .init = setup,
     .fini = teardown)
{
        char *link = join(allowed, "l"), *path, *ssd = one_component("model.fmu");

        sx_write(outside, "SystemStructure.ssd", ssd);
        cr_assert(eq(int, symlink(outside, link), 0));
        path = join(link, "SystemStructure.ssd");
        cr_assert(eq(int, sx_load(&x, path, NULL), -ELOOP));
        cr_assert(sx_has(&x, path, "symbolic link"));
        free(path);
        reset();
        path = join(outside, "SystemStructure.ssd");
        cr_assert(eq(int, sx_load(&x, path, NULL), -EPERM));
        cr_assert(sx_has(&x, path, "not below a directory the daemon loads from"));
        free(path);
        free(link);
        free(ssd);
}

Test(scenario_beneath, a_file_others_may_not_read_is_not_quoted, .init = setup, .fini = teardown)
{
        static const char secret[] = HEAD "<TopSecretRootElement/>\n";
        char *path = join(allowed, "SystemStructure.ssd");

        sx_write(allowed, "SystemStructure.ssd", secret);
        cr_assert(eq(int, chmod(path, 0600), 0));
        cr_assert(eq(int, sx_load(&x, NULL, NULL), -EINVAL));
        cr_assert(sx_has(&x, "TopSecret", NULL) == false);
        cr_assert(sx_has(&x, path, "no detail is given"));
        /* Readable by others: the problem is named. */
        reset();
        cr_assert(eq(int, chmod(path, 0644), 0));
        cr_assert(eq(int, sx_load(&x, NULL, NULL), -EINVAL));
        cr_assert(sx_has(&x, "TopSecretRootElement", NULL));
        free(path);
}
