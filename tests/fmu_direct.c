/*
 * fmu_direct: see fmu_direct.h.
 */
#include "fmu_direct.h"

#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <dlfcn.h>
#include <libxml/parser.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const fmi3_fmus[8] = {
        "LinearOde", "MsdMass1", "MsdMass2", "Feedthrough", "BouncingBall",
        "IntermediateProbe", "GlobalCounter", "TimeEvent",
};

/* ---- Loading, as an importer does --------------------------------------- */

static void *open_binary(const char *name, const char *platform)
{
        char path[1024];
        void *dl;

        snprintf(path, sizeof(path), "%s/%s/binaries/%s/%s.so", FMUD_TEST_FMU_DIR, name,
                 platform, name);
        dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        cr_assert(ne(ptr, dl, NULL), "dlopen('%s'): %s", path, dlerror());
        return dl;
}

/* Resolve every function; a missing one fails the test unless allowed. */
void load3(struct fmi3 *api, const char *name, const char *allowed_missing)
{
        memset(api, 0, sizeof(*api));
        api->dl = open_binary(name, FMI3_PLATFORM);
#define X(fn) \
        api->fn = (fmi3##fn##TYPE *)dlsym(api->dl, "fmi3" #fn); \
        if (!allowed_missing || strcmp(allowed_missing, "fmi3" #fn) != 0) \
                cr_assert(ne(ptr, (void *)api->fn, NULL), "%s does not export fmi3" #fn, name);
        FMI3_FUNCTIONS(X)
#undef X
}

void load3_some(struct fmi3 *api, const char *name)
{
        memset(api, 0, sizeof(*api));
        api->dl = open_binary(name, FMI3_PLATFORM);
#define X(fn) api->fn = (fmi3##fn##TYPE *)dlsym(api->dl, "fmi3" #fn);
        FMI3_FUNCTIONS(X)
#undef X
}

void load2(struct fmi2 *api, const char *name)
{
        memset(api, 0, sizeof(*api));
        api->dl = open_binary(name, FMI2_PLATFORM);
#define X(fn) \
        api->fn = (fmi2##fn##TYPE *)dlsym(api->dl, "fmi2" #fn); \
        cr_assert(ne(ptr, (void *)api->fn, NULL), "%s does not export fmi2" #fn, name);
        FMI2_FUNCTIONS(X)
#undef X
}

/* The last message an FMU logged, and how many it logged. */
char last_log[2048];
int n_logs;

void logger3(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category,
                    fmi3String message)
{
        (void) env;
        snprintf(last_log, sizeof(last_log), "[%d %s] %s", (int)status,
                 category ? category : "-", message);
        n_logs++;
}

void logger2(fmi2ComponentEnvironment env, fmi2String instance, fmi2Status status,
                    fmi2String category, fmi2String message, ...)
{
        va_list ap;
        char msg[1024];

        (void) env;
        (void) instance;
        va_start(ap, message);
        vsnprintf(msg, sizeof(msg), message, ap);
        va_end(ap);
        snprintf(last_log, sizeof(last_log), "[%d %s] %s", (int)status,
                 category ? category : "-", msg);
        n_logs++;
}

/* Instantiate for Co-Simulation with the token from modelDescription.xml. */
fmi3Instance instantiate3(struct fmi3 *api, const char *name, bool event_mode,
                                 bool early_return, const fmi3ValueReference *required,
                                 size_t n_required, fmi3IntermediateUpdateCallback iu)
{
        fmi3Instance inst;

        inst = api->InstantiateCoSimulation(name, token_of(name), NULL, fmi3False, fmi3True,
                                            event_mode, early_return, required, n_required,
                                            NULL, logger3, iu);
        cr_assert(ne(ptr, inst, NULL), "instantiating %s failed: %s", name, last_log);
        return inst;
}

void initialize3(struct fmi3 *api, fmi3Instance inst, double t0)
{
        cr_assert(eq(int, api->EnterInitializationMode(inst, fmi3False, 0.0, t0, fmi3False, 0.0),
                     fmi3OK), "%s", last_log);
        cr_assert(eq(int, api->ExitInitializationMode(inst), fmi3OK), "%s", last_log);
}

fmi3Status step3(struct fmi3 *api, fmi3Instance inst, double t, double h,
                        fmi3Boolean *ret_early, double *ret_t)
{
        fmi3Boolean event = fmi3False, terminate = fmi3False, early = fmi3False;
        double t_end = -1.0;
        fmi3Status s;

        s = api->DoStep(inst, t, h, fmi3False, &event, &terminate, &early, &t_end);
        if (ret_early)
                *ret_early = early;
        if (ret_t)
                *ret_t = t_end;
        return s;
}

double get_f64(struct fmi3 *api, fmi3Instance inst, fmi3ValueReference vr)
{
        double v = NAN;

        cr_assert(eq(int, api->GetFloat64(inst, &vr, 1, &v, 1), fmi3OK), "%s", last_log);
        return v;
}

void set_f64(struct fmi3 *api, fmi3Instance inst, fmi3ValueReference vr, double v)
{
        cr_assert(eq(int, api->SetFloat64(inst, &vr, 1, &v, 1), fmi3OK), "%s", last_log);
}

int32_t get_i32(struct fmi3 *api, fmi3Instance inst, fmi3ValueReference vr)
{
        int32_t v = -1;

        cr_assert(eq(int, api->GetInt32(inst, &vr, 1, &v, 1), fmi3OK), "%s", last_log);
        return v;
}

int64_t get_i64(struct fmi3 *api, fmi3Instance inst, fmi3ValueReference vr)
{
        int64_t v = -1;

        cr_assert(eq(int, api->GetInt64(inst, &vr, 1, &v, 1), fmi3OK), "%s", last_log);
        return v;
}

/* ---- modelDescription.xml ------------------------------------------------ */

xmlDocPtr read_description(const char *name)
{
        char path[1024];
        xmlDocPtr doc;

        snprintf(path, sizeof(path), "%s/%s/modelDescription.xml", FMUD_TEST_FMU_DIR, name);
        doc = xmlReadFile(path, NULL, XML_PARSE_NONET);
        cr_assert(ne(ptr, doc, NULL), "cannot parse '%s'", path);
        return doc;
}

xmlNodePtr child(xmlNodePtr parent, const char *tag)
{
        for (xmlNodePtr n = parent->children; n; n = n->next)
                if (n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, tag) == 0)
                        return n;
        return NULL;
}

/* An attribute as a string in buf ("" if absent); returns whether present. */
bool attr(xmlNodePtr node, const char *name, char *buf, size_t size)
{
        xmlChar *v = xmlGetProp(node, (const xmlChar *)name);

        buf[0] = '\0';
        if (!v)
                return false;
        snprintf(buf, size, "%s", (const char *)v);
        xmlFree(v);
        return true;
}

/* The instantiation token (FMI 3.0) or GUID (FMI 2.0) of a staged FMU. */
const char *token_of(const char *name)
{
        static char token[256];
        xmlDocPtr doc = read_description(name);
        xmlNodePtr root = xmlDocGetRootElement(doc);

        if (!attr(root, "instantiationToken", token, sizeof(token)))
                attr(root, "guid", token, sizeof(token));
        xmlFreeDoc(doc);
        return token;
}
