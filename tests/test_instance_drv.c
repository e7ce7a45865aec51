/*
 * Test helpers: the same FMU call sequence in-process or through a worker
 * (see test_instance_drv.h).
 */
#include "test_instance_drv.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fmi/loader.h"
#include "support/md_load.h"

#define MAX_STATES 64

struct drv {
        struct inst *inst;              /* remote */
        struct md *md;                  /* local */
        struct fmu_lib *lib;
        void *c;
        char dir[1024];
        void *states[MAX_STATES];
        fmi2CallbackFunctions *cb2;
};

static void logger3(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category,
                 fmi3String message)
{
        (void) env;
        (void) status;
        (void) category;
        (void) message;
}

static void logger2(fmi2ComponentEnvironment env, fmi2String name, fmi2Status status,
                 fmi2String category, fmi2String message, ...)
{
        (void) env;
        (void) name;
        (void) status;
        (void) category;
        (void) message;
}

void drv_opts(struct inst_opts *o, const char *fmu)
{
        static char dir[1024];

        snprintf(dir, sizeof(dir), "%s/%s", FMUD_TEST_FMU_DIR, fmu);
        inst_opts_default(o);
        o->worker_path = FMUD_WORKER;
        o->fmu_dir = dir;
        o->name = fmu;
}

struct drv *drv_remote(const char *fmu)
{
        struct drv *d = calloc(1, sizeof(*d));
        struct inst_opts o;
        char *why = NULL;

        if (!d)
                return NULL;
        drv_opts(&o, fmu);
        if (inst_new(&o, &d->inst, &why) < 0) {
                fprintf(stderr, "inst_new(%s): %s\n", fmu, why ? why : "?");
                free(why);
                free(d);
                return NULL;
        }
        return d;
}

struct drv *drv_local(const char *fmu)
{
        struct drv *d = calloc(1, sizeof(*d));
        struct diag_list diags;

        if (!d)
                return NULL;
        snprintf(d->dir, sizeof(d->dir), "%s/%s", FMUD_TEST_FMU_DIR, fmu);
        d->md = md_load_dir(d->dir);
        diag_list_init(&diags, 0);
        if (!d->md || fmu_lib_open(d->dir, d->md, &diags, &d->lib) < 0) {
                diag_list_fini(&diags);
                md_free(d->md);
                free(d);
                return NULL;
        }
        diag_list_fini(&diags);
        return d;
}

static bool v3(const struct drv *d)
{
        return d->lib->fmi == MD_FMI3;
}

void drv_free(struct drv *d)
{
        if (!d)
                return;
        if (d->inst) {
                (void) inst_free(d->inst);
        } else {
                for (int i = 0; i < MAX_STATES; i++)
                        if (d->states[i]) {
                                if (v3(d))
                                        d->lib->f3.fmi3FreeFMUState(d->c, &d->states[i]);
                                else
                                        d->lib->f2.fmi2FreeFMUstate(d->c, &d->states[i]);
                        }
                if (d->c && v3(d))
                        d->lib->f3.fmi3FreeInstance(d->c);
                else if (d->c)
                        d->lib->f2.fmi2FreeInstance(d->c);
                fmu_lib_close(d->lib);
                md_free(d->md);
                free(d->cb2);
        }
        free(d);
}

struct inst *drv_inst(struct drv *d)
{
        return d->inst;
}

int drv_instantiate(struct drv *d, bool event_mode, bool early_return)
{
        if (d->inst) {
                struct inst_instantiate a = {
                        .event_mode_used = event_mode,
                        .early_return_allowed = early_return,
                };

                return inst_instantiate(d->inst, &a);
        }
        if (v3(d)) {
                d->c = d->lib->f3.fmi3InstantiateCoSimulation("local", d->md->instantiation_token,
                                                              NULL, false, false, event_mode,
                                                              early_return, NULL, 0, d, logger3, NULL);
        } else {
                const fmi2CallbackFunctions cb = { .logger = logger2, .allocateMemory = calloc,
                                                   .freeMemory = free, .componentEnvironment = d };

                d->cb2 = malloc(sizeof(cb));
                memcpy(d->cb2, &cb, sizeof(cb));
                d->c = d->lib->f2.fmi2Instantiate("local", fmi2CoSimulation,
                                                  d->md->instantiation_token, NULL, d->cb2,
                                                  false, false);
        }
        return d->c ? 0 : 3;
}

int drv_enter_init(struct drv *d, double start)
{
        struct inst_experiment e = { .start_time = start };
        int r;

        if (d->inst) {
                if (inst_fmi_version(d->inst) == 3)
                        return inst_enter_initialization_mode(d->inst, &e);
                r = inst_setup_experiment(d->inst, &e);
                return r ? r : inst_enter_initialization_mode(d->inst, NULL);
        }
        if (v3(d))
                return d->lib->f3.fmi3EnterInitializationMode(d->c, false, 0.0, start, false, 0.0);
        r = d->lib->f2.fmi2SetupExperiment(d->c, false, 0.0, start, false, 0.0);
        return r ? r : (int)d->lib->f2.fmi2EnterInitializationMode(d->c);
}

int drv_exit_init(struct drv *d)
{
        if (d->inst)
                return inst_exit_initialization_mode(d->inst);
        return v3(d) ? d->lib->f3.fmi3ExitInitializationMode(d->c) :
                       d->lib->f2.fmi2ExitInitializationMode(d->c);
}

static int get3(struct drv *d, enum md_type t, const uint32_t *vrs, size_t n, void *v, size_t nv)
{
        const struct fmi3_api *f = &d->lib->f3;

        switch (t) {
        case MD_FLOAT32: return f->fmi3GetFloat32(d->c, vrs, n, v, nv);
        case MD_FLOAT64: return f->fmi3GetFloat64(d->c, vrs, n, v, nv);
        case MD_INT8: return f->fmi3GetInt8(d->c, vrs, n, v, nv);
        case MD_UINT8: return f->fmi3GetUInt8(d->c, vrs, n, v, nv);
        case MD_INT16: return f->fmi3GetInt16(d->c, vrs, n, v, nv);
        case MD_UINT16: return f->fmi3GetUInt16(d->c, vrs, n, v, nv);
        case MD_INT32: return f->fmi3GetInt32(d->c, vrs, n, v, nv);
        case MD_UINT32: return f->fmi3GetUInt32(d->c, vrs, n, v, nv);
        case MD_INT64: return f->fmi3GetInt64(d->c, vrs, n, v, nv);
        case MD_UINT64: return f->fmi3GetUInt64(d->c, vrs, n, v, nv);
        case MD_BOOLEAN: return f->fmi3GetBoolean(d->c, vrs, n, v, nv);
        case MD_STRING: return f->fmi3GetString(d->c, vrs, n, v, nv);
        default: return -EINVAL;
        }
}

static int set3(struct drv *d, enum md_type t, const uint32_t *vrs, size_t n, const void *v, size_t nv)
{
        const struct fmi3_api *f = &d->lib->f3;

        switch (t) {
        case MD_FLOAT32: return f->fmi3SetFloat32(d->c, vrs, n, v, nv);
        case MD_FLOAT64: return f->fmi3SetFloat64(d->c, vrs, n, v, nv);
        case MD_INT8: return f->fmi3SetInt8(d->c, vrs, n, v, nv);
        case MD_UINT8: return f->fmi3SetUInt8(d->c, vrs, n, v, nv);
        case MD_INT16: return f->fmi3SetInt16(d->c, vrs, n, v, nv);
        case MD_UINT16: return f->fmi3SetUInt16(d->c, vrs, n, v, nv);
        case MD_INT32: return f->fmi3SetInt32(d->c, vrs, n, v, nv);
        case MD_UINT32: return f->fmi3SetUInt32(d->c, vrs, n, v, nv);
        case MD_INT64: return f->fmi3SetInt64(d->c, vrs, n, v, nv);
        case MD_UINT64: return f->fmi3SetUInt64(d->c, vrs, n, v, nv);
        case MD_BOOLEAN: return f->fmi3SetBoolean(d->c, vrs, n, v, nv);
        case MD_STRING: return f->fmi3SetString(d->c, vrs, n, v, nv);
        default: return -EINVAL;
        }
}

static int getset2(struct drv *d, enum md_type t, const uint32_t *vrs, size_t n, void *v, bool set)
{
        const struct fmi2_api *f = &d->lib->f2;
        fmi2Boolean b[64];
        int s;

        switch (t) {
        case MD_FLOAT64:
                return set ? f->fmi2SetReal(d->c, vrs, n, v) : f->fmi2GetReal(d->c, vrs, n, v);
        case MD_INT32:
                return set ? f->fmi2SetInteger(d->c, vrs, n, v) : f->fmi2GetInteger(d->c, vrs, n, v);
        case MD_STRING:
                return set ? f->fmi2SetString(d->c, vrs, n, v) : f->fmi2GetString(d->c, vrs, n, v);
        case MD_BOOLEAN:
                if (n > 64)
                        return -EINVAL;
                for (size_t i = 0; set && i < n; i++)
                        b[i] = ((bool *)v)[i];
                s = set ? f->fmi2SetBoolean(d->c, vrs, n, b) : f->fmi2GetBoolean(d->c, vrs, n, b);
                for (size_t i = 0; !set && i < n; i++)
                        ((bool *)v)[i] = b[i] != 0;
                return s;
        default:
                return -EINVAL;
        }
}

int drv_get(struct drv *d, enum md_type t, const uint32_t *vrs, size_t n, void *v, size_t nv)
{
        if (d->inst)
                return inst_get(d->inst, t, vrs, n, v, nv);
        return v3(d) ? get3(d, t, vrs, n, v, nv) : getset2(d, t, vrs, n, v, false);
}

int drv_set(struct drv *d, enum md_type t, const uint32_t *vrs, size_t n, const void *v, size_t nv)
{
        if (d->inst)
                return inst_set(d->inst, t, vrs, n, v, nv);
        return v3(d) ? set3(d, t, vrs, n, v, nv) : getset2(d, t, vrs, n, (void *)v, true);
}

int drv_get_binary(struct drv *d, const uint32_t *vrs, size_t n, size_t *sizes,
                   const uint8_t **v, size_t nv)
{
        if (d->inst)
                return inst_get_binary(d->inst, vrs, n, sizes, v, nv);
        return d->lib->f3.fmi3GetBinary(d->c, vrs, n, sizes, v, nv);
}

int drv_set_binary(struct drv *d, const uint32_t *vrs, size_t n, const size_t *sizes,
                   const uint8_t *const *v, size_t nv)
{
        if (d->inst)
                return inst_set_binary(d->inst, vrs, n, sizes, v, nv);
        return d->lib->f3.fmi3SetBinary(d->c, vrs, n, sizes, (const fmi3Binary *)v, nv);
}

static int worst(int a, int b)
{
        return a < 0 ? a : b < 0 ? b : a > b ? a : b;
}

int drv_step(struct drv *d, double t, double h, const struct inst_in *in, size_t nin,
             const struct inst_out *out, size_t nout, struct inst_step_result *res)
{
        struct inst_step s = { .t = t, .h = h, .inputs = in, .n_inputs = nin, .outputs = out,
                               .n_outputs = nout };
        bool event = false, term = false, early = false;
        double last = t + h;
        int r = 0;

        if (d->inst)
                return inst_do_step(d->inst, &s, res);
        *res = (struct inst_step_result){ .phase = INST_PHASE_INPUTS };
        for (size_t i = 0; i < nin; i++) {
                r = worst(r, in[i].type == MD_BINARY ?
                          drv_set_binary(d, in[i].vrs, in[i].nvr, in[i].sizes, in[i].values, in[i].nvalues) :
                          drv_set(d, in[i].type, in[i].vrs, in[i].nvr, in[i].values, in[i].nvalues));
                if (r > INST_WARNING || r < 0)
                        return r;
        }
        res->phase = INST_PHASE_STEP;
        r = v3(d) ? worst(r, d->lib->f3.fmi3DoStep(d->c, t, h, false, &event, &term, &early, &last)) :
                    worst(r, d->lib->f2.fmi2DoStep(d->c, t, h, false));
        res->event_handling_needed = event;
        res->terminate_simulation = term;
        res->early_return = early;
        res->last_successful_time = last;
        if (r > INST_WARNING || r < 0)
                return r;
        res->phase = INST_PHASE_OUTPUTS;
        for (size_t i = 0; i < nout; i++) {
                r = worst(r, out[i].type == MD_BINARY ?
                          drv_get_binary(d, out[i].vrs, out[i].nvr, out[i].sizes, out[i].values, out[i].nvalues) :
                          drv_get(d, out[i].type, out[i].vrs, out[i].nvr, out[i].values, out[i].nvalues));
                if (r > INST_WARNING || r < 0)
                        return r;
        }
        res->phase = INST_PHASE_DONE;
        return r;
}

int drv_enter_event(struct drv *d)
{
        return d->inst ? inst_enter_event_mode(d->inst) : (int)d->lib->f3.fmi3EnterEventMode(d->c);
}

int drv_update_discrete(struct drv *d, struct inst_discrete *ret)
{
        bool a, b, c, e, f;
        int r;

        if (d->inst)
                return inst_update_discrete_states(d->inst, ret);
        r = d->lib->f3.fmi3UpdateDiscreteStates(d->c, &a, &b, &c, &e, &f, &ret->next_event_time);
        *ret = (struct inst_discrete){ a, b, c, e, f, ret->next_event_time };
        return r;
}

int drv_enter_step(struct drv *d)
{
        return d->inst ? inst_enter_step_mode(d->inst) : (int)d->lib->f3.fmi3EnterStepMode(d->c);
}

int drv_enter_config(struct drv *d)
{
        return d->inst ? inst_enter_configuration_mode(d->inst) :
                         (int)d->lib->f3.fmi3EnterConfigurationMode(d->c);
}

int drv_exit_config(struct drv *d)
{
        return d->inst ? inst_exit_configuration_mode(d->inst) :
                         (int)d->lib->f3.fmi3ExitConfigurationMode(d->c);
}

int drv_terminate(struct drv *d)
{
        if (d->inst)
                return inst_terminate(d->inst);
        return v3(d) ? d->lib->f3.fmi3Terminate(d->c) : d->lib->f2.fmi2Terminate(d->c);
}

int drv_reset(struct drv *d)
{
        if (d->inst)
                return inst_reset(d->inst);
        return v3(d) ? d->lib->f3.fmi3Reset(d->c) : d->lib->f2.fmi2Reset(d->c);
}

/* Local handles: slot + 1. */
int drv_get_state(struct drv *d, uint64_t *h)
{
        void **s;
        int i;

        if (d->inst)
                return inst_get_fmu_state(d->inst, h);
        for (i = *h ? (int)*h - 1 : 0; !*h && i < MAX_STATES && d->states[i]; i++)
                ;
        if (i >= MAX_STATES)
                return -ENOSPC;
        s = &d->states[i];
        *h = (uint64_t)i + 1;
        return v3(d) ? d->lib->f3.fmi3GetFMUState(d->c, s) : d->lib->f2.fmi2GetFMUstate(d->c, s);
}

int drv_set_state(struct drv *d, uint64_t h)
{
        if (d->inst)
                return inst_set_fmu_state(d->inst, h);
        return v3(d) ? d->lib->f3.fmi3SetFMUState(d->c, d->states[h - 1]) :
                       d->lib->f2.fmi2SetFMUstate(d->c, d->states[h - 1]);
}

int drv_free_state(struct drv *d, uint64_t *h)
{
        int r;

        if (d->inst)
                return inst_free_fmu_state(d->inst, h);
        r = v3(d) ? d->lib->f3.fmi3FreeFMUState(d->c, &d->states[*h - 1]) :
                    d->lib->f2.fmi2FreeFMUstate(d->c, &d->states[*h - 1]);
        *h = 0;
        return r;
}

int drv_serialize(struct drv *d, uint64_t h, uint8_t **ret, size_t *ret_size)
{
        size_t n = 0;
        int r;

        if (d->inst) {
                r = inst_serialized_fmu_state_size(d->inst, h, &n);
                if (r)
                        return r;
                *ret = malloc(n);
                *ret_size = n;
                return inst_serialize_fmu_state(d->inst, h, *ret, n);
        }
        r = v3(d) ? d->lib->f3.fmi3SerializedFMUStateSize(d->c, d->states[h - 1], &n) :
                    d->lib->f2.fmi2SerializedFMUstateSize(d->c, d->states[h - 1], &n);
        if (r)
                return r;
        *ret = malloc(n);
        *ret_size = n;
        return v3(d) ? d->lib->f3.fmi3SerializeFMUState(d->c, d->states[h - 1], *ret, n) :
                       d->lib->f2.fmi2SerializeFMUstate(d->c, d->states[h - 1], (fmi2Byte *)*ret, n);
}

int drv_deserialize(struct drv *d, const uint8_t *buf, size_t size, uint64_t *ret)
{
        int i;

        if (d->inst)
                return inst_deserialize_fmu_state(d->inst, buf, size, ret);
        for (i = 0; i < MAX_STATES && d->states[i]; i++)
                ;
        if (i >= MAX_STATES)
                return -ENOSPC;
        *ret = (uint64_t)i + 1;
        return v3(d) ? d->lib->f3.fmi3DeserializeFMUState(d->c, buf, size, &d->states[i]) :
                       d->lib->f2.fmi2DeSerializeFMUstate(d->c, (const fmi2Byte *)buf, size,
                                                          &d->states[i]);
}

int drv_output_derivatives(struct drv *d, const uint32_t *vrs, size_t n, const int32_t *orders,
                           double *v, size_t nv)
{
        if (d->inst)
                return inst_get_output_derivatives(d->inst, vrs, n, orders, v, nv);
        if (v3(d))
                return d->lib->f3.fmi3GetOutputDerivatives(d->c, vrs, n, orders, v, nv);
        return d->lib->f2.fmi2GetRealOutputDerivatives(d->c, vrs, n, orders, v);
}

int drv_count_fds(void)
{
        DIR *dir = opendir("/proc/self/fd");
        struct dirent *e;
        int n = 0;

        if (!dir)
                return -1;
        while ((e = readdir(dir)))
                if (e->d_name[0] != '.')
                        n++;
        closedir(dir);
        return n - 1;   /* the directory's own descriptor */
}

int drv_count_children(void)
{
        DIR *dir = opendir("/proc");
        struct dirent *e;
        int n = 0;

        if (!dir)
                return -1;
        while ((e = readdir(dir))) {
                char path[300], buf[512], *p;
                long ppid = -1;
                FILE *f;

                if (!isdigit((unsigned char)e->d_name[0]))
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
                f = fopen(path, "r");
                if (!f)
                        continue;
                if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
                        (void) sscanf(p + 2, "%*c %ld", &ppid);
                fclose(f);
                if (ppid == (long)getpid())
                        n++;
        }
        closedir(dir);
        return n;
}
