/*
 * loader: every test FMU's binary loads with its whole Co-Simulation API
 * resolved, and a broken binary is refused with the problem named.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi/fmu.h"
#include "fmi/loader.h"
#include "support/tmpdir.h"

static char *cache;

static void setup(void)
{
        cache = tmpdir_new("fmud-loader");
        cr_assert(cache != NULL);
}

static void teardown(void)
{
        tmpdir_free(cache);
}

/* Import FMUD_TEST_FMU_DIR/<name>.fmu into the cache; asserts it is valid. */
static struct fmu *import(const char *name)
{
        struct fmu_opts opts;
        struct diag_list diags;
        struct fmu *fmu = NULL;
        char path[512];
        int r;

        snprintf(path, sizeof(path), "%s/%s.fmu", FMUD_TEST_FMU_DIR, name);
        fmu_opts_default(&opts);
        opts.cache_dir = cache;
        diag_list_init(&diags, 0);
        r = fmu_open(path, &opts, &diags, &fmu);
        for (size_t i = 0; i < diags.n; i++)
                cr_log_error("%s: %s", name, diags.v[i].message);
        cr_assert(eq(int, r, 0), "importing %s", name);
        cr_assert(fmu->unpacked_dir != NULL);
        diag_list_fini(&diags);
        return fmu;
}

static bool diags_name(const struct diag_list *d, const char *subject, const char *text)
{
        for (size_t i = 0; i < d->n; i++)
                if ((!subject || (d->v[i].subject && !strcmp(d->v[i].subject, subject))) &&
                    strstr(d->v[i].message, text))
                        return true;
        return false;
}

static const char *const fmi3_fmus[] = {
        "LinearOde", "MsdMass1", "MsdMass2", "Feedthrough", "BouncingBall", "IntermediateProbe",
        "GlobalCounter",
};

Test(loader, resolves_the_fmi3_api_of_every_test_fmu, .init = setup, .fini = teardown)
{
        for (size_t i = 0; i < sizeof(fmi3_fmus) / sizeof(fmi3_fmus[0]); i++) {
                struct fmu *fmu = import(fmi3_fmus[i]);
                struct diag_list diags;
                struct fmu_lib *lib = NULL;

                diag_list_init(&diags, 0);
                cr_assert(eq(int, fmu_lib_open(fmu->unpacked_dir, fmu->md, &diags, &lib), 0), "%s", fmi3_fmus[i]);
                cr_assert(eq(int, lib->fmi, MD_FMI3));
                cr_assert(lib->f3.fmi3InstantiateCoSimulation && lib->f3.fmi3DoStep && lib->f3.fmi3GetBinary);
                cr_assert(eq(str, (char *)lib->f3.fmi3GetVersion(), "3.0"));
                if (fmu->md->cs.can_get_and_set_fmu_state)
                        cr_assert(lib->f3.fmi3GetFMUState && lib->f3.fmi3SetFMUState && lib->f3.fmi3FreeFMUState);
                if (fmu->md->cs.has_event_mode)
                        cr_assert(lib->f3.fmi3EnterEventMode && lib->f3.fmi3UpdateDiscreteStates);
                fmu_lib_close(lib);
                fmu_free(fmu);
                diag_list_fini(&diags);
        }
}

Test(loader, resolves_the_fmi2_api, .init = setup, .fini = teardown)
{
        struct fmu *fmu = import("LinearOde2");
        struct diag_list diags;
        struct fmu_lib *lib = NULL;

        diag_list_init(&diags, 0);
        cr_assert(eq(int, fmu_lib_open(fmu->unpacked_dir, fmu->md, &diags, &lib), 0));
        cr_assert(eq(int, lib->fmi, MD_FMI2));
        cr_assert(lib->f2.fmi2Instantiate && lib->f2.fmi2DoStep && lib->f2.fmi2GetReal);
        cr_assert(eq(str, (char *)lib->f2.fmi2GetVersion(), "2.0"));
        cr_assert(eq(str, (char *)lib->f2.fmi2GetTypesPlatform(), "default"));
        fmu_lib_close(lib);
        fmu_free(fmu);
        diag_list_fini(&diags);
}

Test(loader, names_a_missing_required_function, .init = setup, .fini = teardown)
{
        struct fmu *fmu = import("MissingSymbol");
        struct diag_list diags;
        struct fmu_lib *lib = NULL;

        diag_list_init(&diags, 0);
        cr_assert(eq(int, fmu_lib_open(fmu->unpacked_dir, fmu->md, &diags, &lib), -ENOSYS));
        cr_assert(eq(ptr, lib, NULL));
        cr_assert(diags_name(&diags, "fmi3DoStep", "required function not exported"));
        cr_assert(eq(sz, diag_errors(&diags), 1), "only fmi3DoStep is missing");
        fmu_free(fmu);
        diag_list_fini(&diags);
}

/* A description for an FMU whose binary the test writes by hand. */
static const char junk_md[] =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<fmiModelDescription fmiVersion=\"3.0\" modelName=\"Junk\" instantiationToken=\"{junk}\">\n"
        "  <CoSimulation modelIdentifier=\"Junk\"/>\n"
        "  <ModelVariables>\n"
        "    <Float64 name=\"time\" valueReference=\"0\" causality=\"independent\" variability=\"continuous\"/>\n"
        "  </ModelVariables>\n"
        "  <ModelStructure/>\n"
        "</fmiModelDescription>\n";

static struct md *parse_junk_md(void)
{
        struct diag_list diags;
        struct md *md = NULL;

        diag_list_init(&diags, 0);
        cr_assert(eq(int, md_parse(junk_md, sizeof(junk_md) - 1, "modelDescription.xml", NULL, &diags, &md), 0));
        diag_list_fini(&diags);
        return md;
}

Test(loader, refuses_a_binary_that_is_not_a_shared_object, .init = setup, .fini = teardown)
{
        static const char junk[] = "\x7f" "ELF but not really a shared object";
        struct md *md = parse_junk_md();
        struct diag_list diags;
        struct fmu_lib *lib = NULL;
        char name[128];

        snprintf(name, sizeof(name), "binaries/%s/Junk.so", fmu_platform_dir(MD_FMI3));
        cr_assert(eq(int, tmpdir_write(cache, name, junk, sizeof(junk)), 0));
        diag_list_init(&diags, 0);
        cr_assert(eq(int, fmu_lib_open(cache, md, &diags, &lib), -ENOEXEC));
        cr_assert(diags_name(&diags, NULL, "dlopen failed"));
        md_free(md);
        diag_list_fini(&diags);
}

Test(loader, reports_a_missing_binary, .init = setup, .fini = teardown)
{
        struct md *md = parse_junk_md();
        struct diag_list diags;
        struct fmu_lib *lib = NULL;

        diag_list_init(&diags, 0);
        cr_assert(eq(int, fmu_lib_open(cache, md, &diags, &lib), -ENOENT));
        cr_assert(diags_name(&diags, NULL, "cannot load"));
        md_free(md);
        diag_list_fini(&diags);
}
