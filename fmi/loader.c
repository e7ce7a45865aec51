/*
 * loader: dlopen an FMU's binary and resolve its FMI functions by name
 * (FMI 3.0 section 2.5.4.1). The X-macro lists in loader.h are the single
 * source of which functions exist and when each is required.
 */
#include "loader.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fmu.h"

static bool has_type(const struct md *md, enum md_type t)
{
        for (size_t i = 0; i < md->n_vars; i++)
                if (md->vars[i].type == t)
                        return true;
        return false;
}

static bool has_structural_parameter(const struct md *md)
{
        for (size_t i = 0; i < md->n_vars; i++)
                if (md->vars[i].causality == MD_CAUSALITY_STRUCTURAL_PARAMETER)
                        return true;
        return false;
}

/* Whether the description makes a function of this need mandatory. */
static bool needed(const struct md *md, enum fmu_need need)
{
        const struct md_cosim *cs = &md->cs;

        switch (need) {
        case FMU_NEED_ALWAYS:
                return true;
        case FMU_NEED_STATE:
                return cs->can_get_and_set_fmu_state;
        case FMU_NEED_SERIALIZE:
                return cs->can_serialize_fmu_state;
        case FMU_NEED_DIRECTIONAL:
                return cs->provides_directional_derivatives;
        case FMU_NEED_ADJOINT:
                return cs->provides_adjoint_derivatives;
        case FMU_NEED_EVENT_MODE:
                return cs->has_event_mode && !md->hosted_se && !md->hosted_me;
        case FMU_NEED_EVENTS:
                return (cs->has_event_mode || md->hosted_me) && !md->hosted_se;
        case FMU_NEED_EVALUATE:
                return cs->provides_evaluate_discrete_states;
        case FMU_NEED_OUTPUT_DER:
                return cs->max_output_derivative_order > 0;
        case FMU_NEED_INPUT_DER:
                return cs->can_interpolate_inputs;
        case FMU_NEED_CLOCKS:
                return has_type(md, MD_CLOCK);
        case FMU_NEED_CONFIG:
                return has_structural_parameter(md);
        case FMU_NEED_CS:
                return !md->hosted_me && !md->hosted_se;
        case FMU_NEED_ME:
                return md->hosted_me;
        case FMU_NEED_SE:
                return md->hosted_se;
        case FMU_NEED_OPTIONAL:
                break;
        }
        return false;
}

/* Resolve one symbol; a missing required one is named in diags. */
static void *resolve(struct fmu_lib *lib, const struct md *md, const char *name, enum fmu_need need,
                     struct diag_list *diags, int *missing)
{
        void *sym;

        dlerror();
        sym = dlsym(lib->handle, name);
        if (!sym && needed(md, need)) {
                diag_add(diags, DIAG_ERROR, lib->path, 0, name,
                         "required function not exported by the FMU's binary (FMI %s)",
                         md->fmi == MD_FMI3 ? "3.0 section 2.2.2" : "2.0 section 2.1.1");
                (*missing)++;
        }
        return sym;
}

/* FMI 3.0 section 2.2.5; FMI 2.0 section 2.1.4: the binary says which headers it was built with. */
static int check_version(struct fmu_lib *lib, struct diag_list *diags)
{
        const char *v, *want;

        if (lib->fmi == MD_FMI3) {
                v = lib->f3.fmi3GetVersion();
                if (v && !strncmp(v, "3.", 2))
                        return 0;
                want = "3.x";
        } else {
                const char *tp = lib->f2.fmi2GetTypesPlatform();

                if (!tp || strcmp(tp, "default")) {
                        diag_add(diags, DIAG_ERROR, lib->path, 0, "fmi2GetTypesPlatform",
                                 "returned '%s', expected 'default' (FMI 2.0 section 2.1.4)",
                                 tp ? tp : "(null)");
                        return -EPROTO;
                }
                v = lib->f2.fmi2GetVersion();
                if (v && !strcmp(v, "2.0"))
                        return 0;
                want = "2.0";
        }
        diag_add(diags, DIAG_ERROR, lib->path, 0, lib->fmi == MD_FMI3 ? "fmi3GetVersion" : "fmi2GetVersion",
                 "returned '%s', but the description is FMI %s", v ? v : "(null)", want);
        return -EPROTO;
}

int fmu_lib_open(const char *unpacked_dir, const struct md *md, struct diag_list *diags,
                 struct fmu_lib **ret_lib)
{
        struct fmu_lib *lib;
        int missing = 0, r;

        if (!md->cs.present || !md->cs.model_identifier)
                return -EINVAL;
        lib = calloc(1, sizeof(*lib));
        if (!lib)
                return -ENOMEM;
        lib->fmi = md->fmi;
        if (asprintf(&lib->path, "%s/binaries/%s/%s.so", unpacked_dir, fmu_platform_dir(md->fmi),
                     md->cs.model_identifier) < 0) {
                lib->path = NULL;
                r = -ENOMEM;
                goto out_free;
        }
        if (access(lib->path, F_OK) < 0) {
                r = -errno;
                diag_add(diags, DIAG_ERROR, lib->path, 0, NULL, "cannot load: %s", strerror(errno));
                goto out_free;
        }
        lib->handle = dlopen(lib->path, RTLD_NOW | RTLD_LOCAL);
        if (!lib->handle) {
                const char *e = dlerror();

                diag_add(diags, DIAG_ERROR, lib->path, 0, NULL, "dlopen failed: %s", e ? e : "unknown error");
                r = -ENOEXEC;
                goto out_free;
        }

        /* dlsym returns void *; POSIX guarantees it converts to a function pointer. */
#define RESOLVE3(name, need) \
        *(void **)&lib->f3.name = resolve(lib, md, #name, need, diags, &missing);
#define RESOLVE2(name, need) \
        *(void **)&lib->f2.name = resolve(lib, md, #name, need, diags, &missing);
        if (md->fmi == MD_FMI3) {
                FMI3_CS_FUNCTIONS(RESOLVE3)
        } else {
                FMI2_CS_FUNCTIONS(RESOLVE2)
        }
#undef RESOLVE3
#undef RESOLVE2
        if (missing) {
                r = -ENOSYS;
                goto out_close;
        }
        r = check_version(lib, diags);
        if (r < 0)
                goto out_close;
        *ret_lib = lib;
        return 0;

out_close:
        dlclose(lib->handle);
out_free:
        free(lib->path);
        free(lib);
        return r;
}

void fmu_lib_close(struct fmu_lib *lib)
{
        if (!lib)
                return;
        if (lib->handle)
                dlclose(lib->handle);
        free(lib->path);
        free(lib);
}
