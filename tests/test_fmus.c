/*
 * fmus: the project's own test FMUs (tests/fmus/), checked directly.
 *
 * Each test dlopen()s a staged binary (FMUD_TEST_FMU_DIR/<Name>/binaries/
 * <platform>/<Name>.so), resolves the FMI functions by name as an importer
 * does, and checks real behaviour against analytic or independently
 * computed results: exported API, consistency with modelDescription.xml,
 * equations, events and early return, intermediate update, FMU state
 * round trips, state machine refusals. Criterion runs every test in its
 * own process, so the process-global state of GlobalCounter and the
 * static log buffer below start fresh each time.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi/fmi2FunctionTypes.h"
#include "fmi/fmi3FunctionTypes.h"

#if defined(__x86_64__)
#define FMI3_PLATFORM "x86_64-linux"
#elif defined(__aarch64__)
#define FMI3_PLATFORM "aarch64-linux"
#endif
#define FMI2_PLATFORM "linux64"

/* Every function of the FMI 3.0 API, by name without the fmi3 prefix. */
#define FMI3_FUNCTIONS(X) \
        X(GetVersion) X(SetDebugLogging) X(InstantiateModelExchange) \
        X(InstantiateCoSimulation) X(InstantiateScheduledExecution) X(FreeInstance) \
        X(EnterInitializationMode) X(ExitInitializationMode) X(EnterEventMode) \
        X(Terminate) X(Reset) \
        X(GetFloat32) X(GetFloat64) X(GetInt8) X(GetUInt8) X(GetInt16) X(GetUInt16) \
        X(GetInt32) X(GetUInt32) X(GetInt64) X(GetUInt64) X(GetBoolean) X(GetString) \
        X(GetBinary) X(GetClock) \
        X(SetFloat32) X(SetFloat64) X(SetInt8) X(SetUInt8) X(SetInt16) X(SetUInt16) \
        X(SetInt32) X(SetUInt32) X(SetInt64) X(SetUInt64) X(SetBoolean) X(SetString) \
        X(SetBinary) X(SetClock) \
        X(GetNumberOfVariableDependencies) X(GetVariableDependencies) \
        X(GetFMUState) X(SetFMUState) X(FreeFMUState) X(SerializedFMUStateSize) \
        X(SerializeFMUState) X(DeserializeFMUState) \
        X(GetDirectionalDerivative) X(GetAdjointDerivative) \
        X(EnterConfigurationMode) X(ExitConfigurationMode) \
        X(GetIntervalDecimal) X(GetIntervalFraction) X(GetShiftDecimal) X(GetShiftFraction) \
        X(SetIntervalDecimal) X(SetIntervalFraction) X(SetShiftDecimal) X(SetShiftFraction) \
        X(EvaluateDiscreteStates) X(UpdateDiscreteStates) \
        X(EnterContinuousTimeMode) X(CompletedIntegratorStep) X(SetTime) \
        X(SetContinuousStates) X(GetContinuousStateDerivatives) X(GetEventIndicators) \
        X(GetContinuousStates) X(GetNominalsOfContinuousStates) \
        X(GetNumberOfEventIndicators) X(GetNumberOfContinuousStates) \
        X(EnterStepMode) X(GetOutputDerivatives) X(DoStep) X(ActivateModelPartition)

#define FMI2_FUNCTIONS(X) \
        X(GetTypesPlatform) X(GetVersion) X(SetDebugLogging) X(Instantiate) \
        X(FreeInstance) X(SetupExperiment) X(EnterInitializationMode) \
        X(ExitInitializationMode) X(Terminate) X(Reset) \
        X(GetReal) X(GetInteger) X(GetBoolean) X(GetString) \
        X(SetReal) X(SetInteger) X(SetBoolean) X(SetString) \
        X(GetFMUstate) X(SetFMUstate) X(FreeFMUstate) X(SerializedFMUstateSize) \
        X(SerializeFMUstate) X(DeSerializeFMUstate) X(GetDirectionalDerivative) \
        X(EnterEventMode) X(NewDiscreteStates) X(EnterContinuousTimeMode) \
        X(CompletedIntegratorStep) X(SetTime) X(SetContinuousStates) X(GetDerivatives) \
        X(GetEventIndicators) X(GetContinuousStates) X(GetNominalsOfContinuousStates) \
        X(SetRealInputDerivatives) X(GetRealOutputDerivatives) X(DoStep) X(CancelStep) \
        X(GetStatus) X(GetRealStatus) X(GetIntegerStatus) X(GetBooleanStatus) \
        X(GetStringStatus)

struct fmi3 {
        void *dl;
#define X(name) fmi3##name##TYPE *name;
        FMI3_FUNCTIONS(X)
#undef X
};

struct fmi2 {
        void *dl;
#define X(name) fmi2##name##TYPE *name;
        FMI2_FUNCTIONS(X)
#undef X
};

static const char *const fmi3_fmus[] = {
        "LinearOde", "MsdMass1", "MsdMass2", "Feedthrough", "BouncingBall",
        "IntermediateProbe", "GlobalCounter",
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
static void load3(struct fmi3 *api, const char *name, const char *allowed_missing)
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

static void load2(struct fmi2 *api, const char *name)
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
static char last_log[2048];
static int n_logs;

static void logger3(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category,
                    fmi3String message)
{
        (void) env;
        snprintf(last_log, sizeof(last_log), "[%d %s] %s", (int)status,
                 category ? category : "-", message);
        n_logs++;
}

static void logger2(fmi2ComponentEnvironment env, fmi2String instance, fmi2Status status,
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

static const char *token_of(const char *name);

/* Instantiate for Co-Simulation with the token from modelDescription.xml. */
static fmi3Instance instantiate3(struct fmi3 *api, const char *name, bool event_mode,
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

static void initialize3(struct fmi3 *api, fmi3Instance inst, double t0)
{
        cr_assert(eq(int, api->EnterInitializationMode(inst, fmi3False, 0.0, t0, fmi3False, 0.0),
                     fmi3OK), "%s", last_log);
        cr_assert(eq(int, api->ExitInitializationMode(inst), fmi3OK), "%s", last_log);
}

static fmi3Status step3(struct fmi3 *api, fmi3Instance inst, double t, double h,
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

static double get_f64(struct fmi3 *api, fmi3Instance inst, fmi3ValueReference vr)
{
        double v = NAN;

        cr_assert(eq(int, api->GetFloat64(inst, &vr, 1, &v, 1), fmi3OK), "%s", last_log);
        return v;
}

static void set_f64(struct fmi3 *api, fmi3Instance inst, fmi3ValueReference vr, double v)
{
        cr_assert(eq(int, api->SetFloat64(inst, &vr, 1, &v, 1), fmi3OK), "%s", last_log);
}

static int32_t get_i32(struct fmi3 *api, fmi3Instance inst, fmi3ValueReference vr)
{
        int32_t v = -1;

        cr_assert(eq(int, api->GetInt32(inst, &vr, 1, &v, 1), fmi3OK), "%s", last_log);
        return v;
}

static int64_t get_i64(struct fmi3 *api, fmi3Instance inst, fmi3ValueReference vr)
{
        int64_t v = -1;

        cr_assert(eq(int, api->GetInt64(inst, &vr, 1, &v, 1), fmi3OK), "%s", last_log);
        return v;
}

/* ---- modelDescription.xml ------------------------------------------------ */

static xmlDocPtr read_description(const char *name)
{
        char path[1024];
        xmlDocPtr doc;

        snprintf(path, sizeof(path), "%s/%s/modelDescription.xml", FMUD_TEST_FMU_DIR, name);
        doc = xmlReadFile(path, NULL, XML_PARSE_NONET);
        cr_assert(ne(ptr, doc, NULL), "cannot parse '%s'", path);
        return doc;
}

static xmlNodePtr child(xmlNodePtr parent, const char *tag)
{
        for (xmlNodePtr n = parent->children; n; n = n->next)
                if (n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, tag) == 0)
                        return n;
        return NULL;
}

/* An attribute as a string in buf ("" if absent); returns whether present. */
static bool attr(xmlNodePtr node, const char *name, char *buf, size_t size)
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
static const char *token_of(const char *name)
{
        static char token[256];
        xmlDocPtr doc = read_description(name);
        xmlNodePtr root = xmlDocGetRootElement(doc);

        if (!attr(root, "instantiationToken", token, sizeof(token)))
                attr(root, "guid", token, sizeof(token));
        xmlFreeDoc(doc);
        return token;
}

/* Number of elements of a variable: its <Dimension>s, resolved in the FMU. */
static size_t element_count(struct fmi3 *api, fmi3Instance inst, xmlNodePtr var)
{
        size_t n = 1;
        char buf[64];

        for (xmlNodePtr d = var->children; d; d = d->next) {
                if (d->type != XML_ELEMENT_NODE || strcmp((const char *)d->name, "Dimension"))
                        continue;
                if (attr(d, "start", buf, sizeof(buf))) {
                        n *= strtoull(buf, NULL, 10);
                } else {
                        fmi3ValueReference vr;
                        uint64_t size = 0;

                        cr_assert(attr(d, "valueReference", buf, sizeof(buf)));
                        vr = (fmi3ValueReference)strtoul(buf, NULL, 10);
                        cr_assert(eq(int, api->GetUInt64(inst, &vr, 1, &size, 1), fmi3OK));
                        n *= size;
                }
        }
        return n;
}

/* The i-th whitespace-separated token of list (a single value repeats). */
static const char *list_item(const char *list, size_t i, char *buf, size_t size)
{
        const char *p = list;
        size_t k = 0, len;

        for (;;) {
                while (*p == ' ')
                        p++;
                len = strcspn(p, " ");
                if (k == i || p[len] == '\0')
                        break;
                p += len;
                k++;
        }
        snprintf(buf, size, "%.*s", (int)len, p);
        return buf;
}

static uint8_t hex_byte(const char *p)
{
        char b[3] = { p[0], p[1], '\0' };

        return (uint8_t)strtoul(b, NULL, 16);
}

static float strtof_wrap(const char *s)
{
        return strtof(s, NULL);
}

static double strtod_wrap(const char *s)
{
        return strtod(s, NULL);
}

/* Get a variable in Instantiated; compare with the start values, if any. */
static void check_variable(struct fmi3 *api, fmi3Instance inst, xmlNodePtr var)
{
        const char *type = (const char *)var->name;
        char name[128], vrs[32], start[256], item[64];
        fmi3ValueReference vr;
        bool has_start;
        size_t n;

        attr(var, "name", name, sizeof(name));
        attr(var, "valueReference", vrs, sizeof(vrs));
        vr = (fmi3ValueReference)strtoul(vrs, NULL, 10);
        has_start = attr(var, "start", start, sizeof(start));
        n = element_count(api, inst, var);

#define CHECK_NUMERIC(Type, ctype, parse) do { \
                ctype *v = calloc(n + 1, sizeof(ctype)); \
                cr_assert(eq(int, api->Get##Type(inst, &vr, 1, v, n), fmi3OK), \
                          "Get" #Type " of '%s' (vr %u, %zu values): %s", name, vr, n, last_log); \
                for (size_t i = 0; has_start && i < n; i++) \
                        cr_assert(v[i] == (ctype)parse(list_item(start, i, item, sizeof(item))), \
                                  "start value %zu of '%s' differs from the XML", i, name); \
                free(v); \
        } while (0)
#define PARSE_INT(s) strtoll((s), NULL, 10)
#define PARSE_UINT(s) strtoull((s), NULL, 10)
#define PARSE_BOOL(s) (strcmp((s), "true") == 0 || strcmp((s), "1") == 0)

        if (strcmp(type, "Float32") == 0)
                CHECK_NUMERIC(Float32, float, strtof_wrap);
        else if (strcmp(type, "Float64") == 0)
                CHECK_NUMERIC(Float64, double, strtod_wrap);
        else if (strcmp(type, "Int8") == 0)
                CHECK_NUMERIC(Int8, int8_t, PARSE_INT);
        else if (strcmp(type, "UInt8") == 0)
                CHECK_NUMERIC(UInt8, uint8_t, PARSE_UINT);
        else if (strcmp(type, "Int16") == 0)
                CHECK_NUMERIC(Int16, int16_t, PARSE_INT);
        else if (strcmp(type, "UInt16") == 0)
                CHECK_NUMERIC(UInt16, uint16_t, PARSE_UINT);
        else if (strcmp(type, "Int32") == 0)
                CHECK_NUMERIC(Int32, int32_t, PARSE_INT);
        else if (strcmp(type, "UInt32") == 0)
                CHECK_NUMERIC(UInt32, uint32_t, PARSE_UINT);
        else if (strcmp(type, "Int64") == 0 || strcmp(type, "Enumeration") == 0)
                CHECK_NUMERIC(Int64, int64_t, PARSE_INT);
        else if (strcmp(type, "UInt64") == 0)
                CHECK_NUMERIC(UInt64, uint64_t, PARSE_UINT);
        else if (strcmp(type, "Boolean") == 0)
                CHECK_NUMERIC(Boolean, bool, PARSE_BOOL);
        else if (strcmp(type, "String") == 0 || strcmp(type, "Binary") == 0) {
                xmlNodePtr s = child(var, "Start");
                fmi3String str = NULL;
                fmi3Binary bin = NULL;
                size_t size = 0;

                cr_assert(eq(sz, n, 1), "string and binary arrays are not used");
                if (type[0] == 'S')
                        cr_assert(eq(int, api->GetString(inst, &vr, 1, &str, 1), fmi3OK), "%s", last_log);
                else
                        cr_assert(eq(int, api->GetBinary(inst, &vr, 1, &size, &bin, 1), fmi3OK), "%s", last_log);
                if (s) {
                        attr(s, "value", start, sizeof(start));
                        if (type[0] == 'S') {
                                cr_assert(eq(str, (char *)str, start));
                        } else {
                                cr_assert(eq(sz, size, strlen(start) / 2));
                                for (size_t i = 0; i < size; i++)
                                        cr_assert(eq(u8, bin[i], hex_byte(start + 2 * i)));
                        }
                }
        } else {
                cr_assert(false, "unexpected variable element <%s>", type);
        }
#undef CHECK_NUMERIC
#undef PARSE_INT
#undef PARSE_UINT
#undef PARSE_BOOL
}

/* ---- Exported API and consistency with modelDescription.xml -------------- */

Test(fmus, every_fmi3_fmu_exports_the_whole_api)
{
        for (size_t i = 0; i < sizeof(fmi3_fmus) / sizeof(fmi3_fmus[0]); i++) {
                struct fmi3 api;

                load3(&api, fmi3_fmus[i], NULL);
                cr_assert(eq(str, (char *)api.GetVersion(), "3.0"));
                dlclose(api.dl);
        }
}

Test(fmus, missing_symbol_lacks_exactly_do_step)
{
        struct fmi3 api;

        load3(&api, "MissingSymbol", "fmi3DoStep");
        cr_assert(eq(ptr, (void *)api.DoStep, NULL));
        dlclose(api.dl);
}

Test(fmus, fmi2_fmu_exports_the_whole_api)
{
        struct fmi2 api;

        load2(&api, "LinearOde2");
        cr_assert(eq(str, (char *)api.GetVersion(), "2.0"));
        cr_assert(eq(str, (char *)api.GetTypesPlatform(), "default"));
        dlclose(api.dl);
}

/*
 * Every variable of every modelDescription.xml exists in the binary with
 * the declared type and size, and its start value is the binary's.
 */
Test(fmus, descriptions_match_the_binaries)
{
        const char *names[] = {
                "LinearOde", "MsdMass1", "MsdMass2", "Feedthrough", "BouncingBall",
                "IntermediateProbe", "GlobalCounter", "MissingSymbol",
        };

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                xmlDocPtr doc = read_description(names[i]);
                xmlNodePtr root = xmlDocGetRootElement(doc), vars, cs;
                char id[128];
                struct fmi3 api;
                fmi3Instance inst;
                size_t n = 0;

                cs = child(root, "CoSimulation");
                cr_assert(ne(ptr, cs, NULL));
                attr(cs, "modelIdentifier", id, sizeof(id));
                cr_assert(eq(str, id, (char *)names[i]));
                load3(&api, names[i], strcmp(names[i], "MissingSymbol") ? NULL : "fmi3DoStep");
                inst = instantiate3(&api, names[i], false, false, NULL, 0, NULL);
                vars = child(root, "ModelVariables");
                for (xmlNodePtr v = vars->children; v; v = v->next) {
                        if (v->type != XML_ELEMENT_NODE)
                                continue;
                        check_variable(&api, inst, v);
                        n++;
                }
                cr_assert(n > 1);
                api.FreeInstance(inst);
                dlclose(api.dl);
                xmlFreeDoc(doc);
        }
}

Test(fmus, fmi2_description_matches_the_binary)
{
        xmlDocPtr doc = read_description("LinearOde2");
        xmlNodePtr vars = child(xmlDocGetRootElement(doc), "ModelVariables");
        fmi2CallbackFunctions cb = { .logger = logger2 };
        struct fmi2 api;
        fmi2Component c;

        load2(&api, "LinearOde2");
        c = api.Instantiate("m", fmi2CoSimulation, token_of("LinearOde2"), NULL, &cb,
                            fmi2False, fmi2False);
        cr_assert(ne(ptr, c, NULL), "%s", last_log);
        for (xmlNodePtr v = vars->children; v; v = v->next) {
                char vrs[32], start[64];
                xmlNodePtr real;
                fmi2ValueReference vr;
                double value = NAN;

                if (v->type != XML_ELEMENT_NODE)
                        continue;
                real = child(v, "Real");
                cr_assert(ne(ptr, real, NULL));
                attr(v, "valueReference", vrs, sizeof(vrs));
                vr = (fmi2ValueReference)strtoul(vrs, NULL, 10);
                cr_assert(eq(int, api.GetReal(c, &vr, 1, &value), fmi2OK), "%s", last_log);
                if (attr(real, "start", start, sizeof(start)))
                        cr_assert(eq(dbl, value, strtod(start, NULL)));
        }
        api.FreeInstance(c);
        dlclose(api.dl);
        xmlFreeDoc(doc);
}

/* ---- LinearOde -------------------------------------------------------------- */

enum { LO_X = 1, LO_DER_X = 2, LO_K = 3, LO_X0 = 4, LO_U0 = 10, LO_Y0 = 20 };

Test(fmus, linear_ode_matches_the_exact_solution_and_feeds_through)
{
        const double k = 0.7, x0 = 2.0, h = 0.01;
        struct fmi3 api;
        fmi3Instance inst;

        load3(&api, "LinearOde", NULL);
        inst = instantiate3(&api, "LinearOde", false, false, NULL, 0, NULL);
        set_f64(&api, inst, LO_K, k);
        set_f64(&api, inst, LO_X0, x0);
        initialize3(&api, inst, 0.0);
        cr_assert(eq(dbl, get_f64(&api, inst, LO_X), x0));

        for (int n = 0; n < 500; n++) {
                double t = n * h, u[10], y[10], x, exact;
                fmi3ValueReference uvr[10], yvr[10];

                for (int i = 0; i < 10; i++) {
                        uvr[i] = LO_U0 + i;
                        yvr[i] = LO_Y0 + i;
                        u[i] = 0.1 * i + t;
                }
                cr_assert(eq(int, api.SetFloat64(inst, uvr, 10, u, 10), fmi3OK));
                cr_assert(eq(int, step3(&api, inst, t, h, NULL, NULL), fmi3OK), "%s", last_log);
                x = get_f64(&api, inst, LO_X);
                exact = x0 * exp(-k * (n + 1) * h);
                cr_assert(epsilon_eq(dbl, x, exact, 1e-12 * exact), "t = %g", (n + 1) * h);
                cr_assert(eq(dbl, get_f64(&api, inst, LO_DER_X), -k * x));
                cr_assert(eq(int, api.GetFloat64(inst, yvr, 10, y, 10), fmi3OK));
                for (int i = 0; i < 10; i++)
                        cr_assert(eq(dbl, y[i], x + u[i]));
        }
        api.FreeInstance(inst);
}

Test(fmus, linear_ode_applies_a_tuned_k_and_gives_output_derivatives)
{
        fmi3ValueReference vrs[] = { LO_X, LO_X, LO_DER_X, LO_Y0 };
        fmi3Int32 orders[] = { 1, 2, 1, 1 };
        double d[4], x1, x, k2 = 3.0;
        struct fmi3 api;
        fmi3Instance inst;

        load3(&api, "LinearOde", NULL);
        inst = instantiate3(&api, "LinearOde", false, false, NULL, 0, NULL);
        initialize3(&api, inst, 0.0);
        for (int n = 0; n < 10; n++)
                cr_assert(eq(int, step3(&api, inst, n * 0.1, 0.1, NULL, NULL), fmi3OK));
        x1 = get_f64(&api, inst, LO_X);
        cr_assert(epsilon_eq(dbl, x1, exp(-1.0), 1e-12));
        set_f64(&api, inst, LO_K, k2);          /* tunable: allowed in Step Mode */
        cr_assert(eq(int, step3(&api, inst, 1.0, 0.5, NULL, NULL), fmi3OK));
        x = get_f64(&api, inst, LO_X);
        cr_assert(epsilon_eq(dbl, x, x1 * exp(-k2 * 0.5), 1e-15));

        cr_assert(eq(int, api.GetOutputDerivatives(inst, vrs, 4, orders, d, 4), fmi3OK));
        /* Exact up to the order of the multiplications. */
        cr_assert(ieee_ulp_eq(dbl, d[0], -k2 * x, 2));
        cr_assert(ieee_ulp_eq(dbl, d[1], k2 * k2 * x, 2));
        cr_assert(ieee_ulp_eq(dbl, d[2], k2 * k2 * x, 2));
        cr_assert(ieee_ulp_eq(dbl, d[3], -k2 * x, 2));
        orders[0] = 3;          /* above maxOutputDerivativeOrder */
        cr_assert(eq(int, api.GetOutputDerivatives(inst, vrs, 1, orders, d, 1), fmi3Error));
        api.FreeInstance(inst);
}

Test(fmus, linear_ode2_runs_through_the_fmi2_api)
{
        fmi2CallbackFunctions cb = { .logger = logger2 };
        const double k = 0.5, h = 0.02;
        fmi2ValueReference vk = LO_K, vx = LO_X, vu = LO_U0 + 3, vy = LO_Y0 + 3;
        fmi2FMUstate state = NULL;
        double x, y, status_t, u = 4.0;
        fmi2Boolean terminated = fmi2True;
        struct fmi2 api;
        fmi2Component c;

        load2(&api, "LinearOde2");
        cr_assert(eq(ptr, api.Instantiate("m", fmi2ModelExchange, token_of("LinearOde2"), NULL,
                                          &cb, fmi2False, fmi2False), NULL));
        cr_assert(eq(ptr, api.Instantiate("m", fmi2CoSimulation, "{wrong}", NULL, &cb,
                                          fmi2False, fmi2False), NULL));
        cr_assert(ne(ptr, strstr(last_log, "GUID"), NULL), "%s", last_log);
        c = api.Instantiate("m", fmi2CoSimulation, token_of("LinearOde2"),
                            "file:///nonexistent/resources", &cb, fmi2False, fmi2False);
        cr_assert(ne(ptr, c, NULL));
        cr_assert(eq(int, api.SetReal(c, &vk, 1, &k), fmi2OK));
        cr_assert(eq(int, api.SetupExperiment(c, fmi2False, 0.0, 0.0, fmi2True, 10.0), fmi2OK));
        cr_assert(eq(int, api.EnterInitializationMode(c), fmi2OK));
        cr_assert(eq(int, api.SetReal(c, &vu, 1, &u), fmi2OK));
        cr_assert(eq(int, api.ExitInitializationMode(c), fmi2OK));
        for (int n = 0; n < 100; n++) {
                cr_assert(eq(int, api.DoStep(c, n * h, h, fmi2True), fmi2OK), "%s", last_log);
                cr_assert(eq(int, api.GetReal(c, &vx, 1, &x), fmi2OK));
                cr_assert(eq(int, api.GetReal(c, &vy, 1, &y), fmi2OK));
                cr_assert(epsilon_eq(dbl, x, exp(-k * (n + 1) * h), 1e-12));
                cr_assert(eq(dbl, y, x + u));
                if (n == 49)
                        cr_assert(eq(int, api.GetFMUstate(c, &state), fmi2OK));
        }
        cr_assert(eq(int, api.GetRealStatus(c, fmi2LastSuccessfulTime, &status_t), fmi2OK));
        cr_assert(epsilon_eq(dbl, status_t, 2.0, 1e-12));
        cr_assert(eq(int, api.GetBooleanStatus(c, fmi2Terminated, &terminated), fmi2OK));
        cr_assert(eq(int, terminated, fmi2False));
        /* Back to t = 1 and the same result again. */
        cr_assert(eq(int, api.SetFMUstate(c, state), fmi2OK));
        cr_assert(eq(int, api.DoStep(c, 1.0, 1.0, fmi2True), fmi2OK), "%s", last_log);
        cr_assert(eq(int, api.GetReal(c, &vx, 1, &x), fmi2OK));
        cr_assert(epsilon_eq(dbl, x, exp(-k * 2.0), 1e-12));
        cr_assert(eq(int, api.FreeFMUstate(c, &state), fmi2OK));
        cr_assert(eq(int, api.DoStep(c, 2.0, 9.0, fmi2True), fmi2Error), "passes stopTime");
        cr_assert(eq(int, api.Reset(c), fmi2OK));
        cr_assert(eq(int, api.GetReal(c, &vk, 1, &x), fmi2OK));
        cr_assert(eq(dbl, x, 1.0));
        api.FreeInstance(c);
}

/* ---- MsdMass1 + MsdMass2 ---------------------------------------------------- */

enum { M1_X1 = 1, M1_V1 = 2, M1_F = 3 };
enum { M2_X2 = 1, M2_V2 = 2, M2_F = 3, M2_X1 = 4, M2_V1 = 5 };

/* The coupled system with the FMUs' default parameters (see their model.c). */
static void msd_rhs(const double z[4], double dz[4])
{
        const double m1 = 1.0, k1 = 10.0, d1 = 0.5, m2 = 1.0, kc = 10.0, dc = 0.2;
        double F = kc * (z[2] - z[0]) + dc * (z[3] - z[1]);

        dz[0] = z[1];
        dz[1] = (-k1 * z[0] - d1 * z[1] + F) / m1;
        dz[2] = z[3];
        dz[3] = -F / m2;
}

#define MSD_T 5.0
#define MSD_SAMPLE 0.0025                       /* reference sampled here */
#define MSD_SAMPLES 2001                        /* MSD_T / MSD_SAMPLE + 1 */
#define MSD_RK4_PER_SAMPLE 25                   /* monolithic RK4 step 1e-4 */

/* Monolithic reference: RK4 with a step of 1e-4, far below the FMUs' error. */
static void msd_reference(double ref[MSD_SAMPLES][4])
{
        double z[4] = { 0.0, 0.0, 1.0, 0.0 }, dt = MSD_SAMPLE / MSD_RK4_PER_SAMPLE;

        memcpy(ref[0], z, sizeof(z));
        for (int s = 1; s < MSD_SAMPLES; s++) {
                for (int j = 0; j < MSD_RK4_PER_SAMPLE; j++) {
                        double k1[4], k2[4], k3[4], k4[4], w[4];

                        msd_rhs(z, k1);
                        for (int i = 0; i < 4; i++)
                                w[i] = z[i] + 0.5 * dt * k1[i];
                        msd_rhs(w, k2);
                        for (int i = 0; i < 4; i++)
                                w[i] = z[i] + 0.5 * dt * k2[i];
                        msd_rhs(w, k3);
                        for (int i = 0; i < 4; i++)
                                w[i] = z[i] + dt * k3[i];
                        msd_rhs(w, k4);
                        for (int i = 0; i < 4; i++)
                                z[i] += dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
                }
                memcpy(ref[s], z, sizeof(z));
        }
}

/*
 * Couple the two FMUs with a Jacobi loop of step h (zero-order hold of the
 * exchanged values) up to MSD_T; return the largest position error against
 * the reference at the communication points.
 */
static double msd_jacobi_error(double h, double ref[MSD_SAMPLES][4])
{
        fmi3ValueReference m1_out[] = { M1_X1, M1_V1 }, m2_in[] = { M2_X1, M2_V1 };
        fmi3ValueReference m1_in = M1_F, m2_out = M2_F, m2_pos = M2_X2;
        int steps = (int)lround(MSD_T / h), stride = (int)lround(h / MSD_SAMPLE);
        double xv1[2], F, x2, err = 0.0;
        struct fmi3 a1, a2;
        fmi3Instance i1, i2;

        load3(&a1, "MsdMass1", NULL);
        load3(&a2, "MsdMass2", NULL);
        i1 = instantiate3(&a1, "MsdMass1", false, false, NULL, 0, NULL);
        i2 = instantiate3(&a2, "MsdMass2", false, false, NULL, 0, NULL);

        /* Initialization: resolve x1, v1 -> mass 2 -> F -> mass 1. */
        cr_assert(eq(int, a1.EnterInitializationMode(i1, fmi3False, 0, 0, fmi3False, 0), fmi3OK));
        cr_assert(eq(int, a2.EnterInitializationMode(i2, fmi3False, 0, 0, fmi3False, 0), fmi3OK));
        cr_assert(eq(int, a1.GetFloat64(i1, m1_out, 2, xv1, 2), fmi3OK));
        cr_assert(eq(int, a2.SetFloat64(i2, m2_in, 2, xv1, 2), fmi3OK));
        cr_assert(eq(int, a2.GetFloat64(i2, &m2_out, 1, &F, 1), fmi3OK));
        cr_assert(eq(int, a1.SetFloat64(i1, &m1_in, 1, &F, 1), fmi3OK));
        cr_assert(eq(int, a1.ExitInitializationMode(i1), fmi3OK));
        cr_assert(eq(int, a2.ExitInitializationMode(i2), fmi3OK));

        for (int n = 0; n < steps; n++) {
                /* Both step with the outputs of the previous point (Jacobi). */
                cr_assert(eq(int, a1.GetFloat64(i1, m1_out, 2, xv1, 2), fmi3OK));
                cr_assert(eq(int, a2.GetFloat64(i2, &m2_out, 1, &F, 1), fmi3OK));
                cr_assert(eq(int, a1.SetFloat64(i1, &m1_in, 1, &F, 1), fmi3OK));
                cr_assert(eq(int, a2.SetFloat64(i2, m2_in, 2, xv1, 2), fmi3OK));
                cr_assert(eq(int, step3(&a1, i1, n * h, h, NULL, NULL), fmi3OK), "%s", last_log);
                cr_assert(eq(int, step3(&a2, i2, n * h, h, NULL, NULL), fmi3OK), "%s", last_log);

                cr_assert(eq(int, a1.GetFloat64(i1, m1_out, 2, xv1, 2), fmi3OK));
                cr_assert(eq(int, a2.GetFloat64(i2, &m2_pos, 1, &x2, 1), fmi3OK));
                err = fmax(err, fabs(xv1[0] - ref[(n + 1) * stride][0]));
                err = fmax(err, fabs(x2 - ref[(n + 1) * stride][2]));
        }
        a1.FreeInstance(i1);
        a2.FreeInstance(i2);
        return err;
}

/*
 * Bound: with the default parameters the Jacobi coupling with zero-order
 * hold has a global error of first order in h. Over 5 s the largest
 * position error is 0.042 m at h = 0.01 (positions are of order 1 m) and
 * 0.020 m at h = 0.005; the test allows 0.06 m and asks that halving h
 * cuts the error to at most 0.6 of it.
 */
Test(fmus, msd_jacobi_coupling_converges_to_the_monolithic_solution, .timeout = 120)
{
        static double ref[MSD_SAMPLES][4];
        double e1, e2, e3;

        msd_reference(ref);
        e1 = msd_jacobi_error(0.01, ref);
        e2 = msd_jacobi_error(0.005, ref);
        e3 = msd_jacobi_error(0.0025, ref);
        cr_assert(lt(dbl, e1, 0.06), "error at h = 0.01: %g", e1);
        cr_assert(lt(dbl, e2, 0.6 * e1), "errors %g (h = 0.01), %g (h = 0.005)", e1, e2);
        cr_assert(lt(dbl, e3, 0.6 * e2), "errors %g (h = 0.005), %g (h = 0.0025)", e2, e3);
}

/* ---- Feedthrough ------------------------------------------------------------ */

enum {
        FT_F32 = 1, FT_F64 = 3, FT_I8 = 5, FT_U8 = 7, FT_I16 = 9, FT_U16 = 11, FT_I32 = 13,
        FT_U32 = 15, FT_I64 = 17, FT_U64 = 19, FT_BOOL = 21, FT_STR = 23, FT_BIN = 25,
        FT_ENUM = 27, FT_MATRIX = 29, FT_N = 31, FT_VECTOR = 32, FT_LENGTH = 34,
};

/* Set input vr_in of a scalar type, step, and read back output vr_in + 1. */
#define ROUND_TRIP(Type, ctype, tag, value) do { \
                fmi3ValueReference in = FT_##tag, out = FT_##tag + 1; \
                ctype v = (value), r = 0; \
                cr_assert(eq(int, api.Set##Type(inst, &in, 1, &v, 1), fmi3OK), "%s", last_log); \
                cr_assert(eq(int, step3(&api, inst, t, 0.1, NULL, NULL), fmi3OK)); \
                t += 0.1; \
                cr_assert(eq(int, api.Get##Type(inst, &out, 1, &r, 1), fmi3OK)); \
                cr_assert(v == r, #Type " did not round-trip"); \
        } while (0)

Test(fmus, feedthrough_round_trips_every_type)
{
        fmi3ValueReference str_in = FT_STR, str_out = FT_STR + 1;
        fmi3ValueReference bin_in = FT_BIN, bin_out = FT_BIN + 1;
        fmi3ValueReference m_in = FT_MATRIX, m_out = FT_MATRIX + 1;
        const uint8_t bytes[] = { 0x00, 0xff, 0x10, 0x00, 0x7f };
        double m[6] = { 1, 2, 3, 4, 5, 6 }, mr[6];
        fmi3String s = "Grüße, \"world\"", sr = NULL;
        fmi3Binary b = bytes, br = NULL;
        size_t size = sizeof(bytes), sizer = 0;
        struct fmi3 api;
        fmi3Instance inst;
        double t = 0.0;

        load3(&api, "Feedthrough", NULL);
        inst = instantiate3(&api, "Feedthrough", false, false, NULL, 0, NULL);
        initialize3(&api, inst, 0.0);

        ROUND_TRIP(Float32, float, F32, -3.25e-7f);
        ROUND_TRIP(Float64, double, F64, 1.0 / 3.0);
        ROUND_TRIP(Int8, int8_t, I8, INT8_MIN);
        ROUND_TRIP(UInt8, uint8_t, U8, UINT8_MAX);
        ROUND_TRIP(Int16, int16_t, I16, INT16_MIN);
        ROUND_TRIP(UInt16, uint16_t, U16, UINT16_MAX);
        ROUND_TRIP(Int32, int32_t, I32, INT32_MIN);
        ROUND_TRIP(UInt32, uint32_t, U32, UINT32_MAX);
        ROUND_TRIP(Int64, int64_t, I64, INT64_MIN);
        ROUND_TRIP(UInt64, uint64_t, U64, UINT64_MAX);
        ROUND_TRIP(Boolean, bool, BOOL, false);
        ROUND_TRIP(Int64, int64_t, ENUM, 3);

        cr_assert(eq(int, api.SetString(inst, &str_in, 1, &s, 1), fmi3OK));
        cr_assert(eq(int, api.SetBinary(inst, &bin_in, 1, &size, &b, 1), fmi3OK));
        cr_assert(eq(int, api.SetFloat64(inst, &m_in, 1, m, 6), fmi3OK));
        cr_assert(eq(int, step3(&api, inst, t, 0.1, NULL, NULL), fmi3OK));
        cr_assert(eq(int, api.GetString(inst, &str_out, 1, &sr, 1), fmi3OK));
        cr_assert(eq(str, (char *)sr, (char *)s));
        cr_assert(ne(ptr, (void *)sr, (void *)s), "the FMU keeps its own copy");
        cr_assert(eq(int, api.GetBinary(inst, &bin_out, 1, &sizer, &br, 1), fmi3OK));
        cr_assert(eq(sz, sizer, sizeof(bytes)));
        cr_assert(eq(int, memcmp(br, bytes, sizeof(bytes)), 0));
        cr_assert(eq(int, api.GetFloat64(inst, &m_out, 1, mr, 6), fmi3OK));
        for (int i = 0; i < 6; i++)
                cr_assert(eq(dbl, mr[i], m[i]));
        api.FreeInstance(inst);
}

Test(fmus, feedthrough_outputs_follow_inputs_in_initialization_mode)
{
        fmi3ValueReference in = FT_I32, out = FT_I32 + 1;
        int32_t v = 12345, r = 0;
        struct fmi3 api;
        fmi3Instance inst;

        load3(&api, "Feedthrough", NULL);
        inst = instantiate3(&api, "Feedthrough", false, false, NULL, 0, NULL);
        cr_assert(eq(int, api.EnterInitializationMode(inst, fmi3False, 0, 0, fmi3False, 0), fmi3OK));
        cr_assert(eq(int, api.SetInt32(inst, &in, 1, &v, 1), fmi3OK));
        cr_assert(eq(int, api.GetInt32(inst, &out, 1, &r, 1), fmi3OK));
        cr_assert(eq(i32, r, v));
        api.FreeInstance(inst);
}

Test(fmus, feedthrough_resizes_the_vector_in_configuration_modes)
{
        fmi3ValueReference n = FT_N, vin = FT_VECTOR, vout = FT_VECTOR + 1;
        uint64_t seven = 7, two = 2, too_many = 65;
        double v[7] = { 10, 11, 12, 13, 14, 15, 16 }, r[7];
        struct fmi3 api;
        fmi3Instance inst;

        load3(&api, "Feedthrough", NULL);
        inst = instantiate3(&api, "Feedthrough", false, false, NULL, 0, NULL);
        /* n is a structural parameter: not settable outside Configuration Mode. */
        cr_assert(eq(int, api.SetUInt64(inst, &n, 1, &seven, 1), fmi3Error));
        cr_assert(eq(int, api.Reset(inst), fmi3OK));

        cr_assert(eq(int, api.EnterConfigurationMode(inst), fmi3OK));
        cr_assert(eq(int, api.SetUInt64(inst, &n, 1, &seven, 1), fmi3OK));
        cr_assert(eq(int, api.ExitConfigurationMode(inst), fmi3OK));
        cr_assert(eq(int, api.SetFloat64(inst, &vin, 1, v, 7), fmi3OK), "%s", last_log);
        initialize3(&api, inst, 0.0);
        cr_assert(eq(int, step3(&api, inst, 0.0, 0.1, NULL, NULL), fmi3OK));
        cr_assert(eq(int, api.GetFloat64(inst, &vout, 1, r, 7), fmi3OK));
        for (int i = 0; i < 7; i++)
                cr_assert(eq(dbl, r[i], v[i]));

        /* Reconfiguration Mode from Step Mode: shrink to 2, keep the prefix. */
        cr_assert(eq(int, api.EnterConfigurationMode(inst), fmi3OK));
        cr_assert(eq(int, api.SetUInt64(inst, &n, 1, &two, 1), fmi3OK));
        cr_assert(eq(int, api.ExitConfigurationMode(inst), fmi3OK));
        cr_assert(eq(int, api.GetFloat64(inst, &vout, 1, r, 2), fmi3OK));
        cr_assert(eq(dbl, r[0], 10.0));
        cr_assert(eq(dbl, r[1], 11.0));
        cr_assert(eq(int, step3(&api, inst, 0.1, 0.1, NULL, NULL), fmi3OK), "%s", last_log);

        /* More than the 64 elements the FMU holds is refused. */
        cr_assert(eq(int, api.EnterConfigurationMode(inst), fmi3OK));
        cr_assert(eq(int, api.SetUInt64(inst, &n, 1, &too_many, 1), fmi3Error));
        cr_assert(ne(ptr, strstr(last_log, "at most 64"), NULL), "%s", last_log);
        api.FreeInstance(inst);
}

Test(fmus, feedthrough_refuses_a_wrong_number_of_values)
{
        fmi3ValueReference vrs[] = { FT_MATRIX, FT_F64 };
        double v[8] = { 0 };
        struct fmi3 api;
        fmi3Instance inst;

        load3(&api, "Feedthrough", NULL);
        inst = instantiate3(&api, "Feedthrough", false, false, NULL, 0, NULL);
        cr_assert(eq(int, api.GetFloat64(inst, vrs, 2, v, 7), fmi3OK), "6 + 1 values");
        cr_assert(eq(dbl, v[3], 1.1), "row-major: A[1][1] is the 4th value");
        cr_assert(eq(int, api.GetFloat64(inst, vrs, 2, v, 6), fmi3Error));
        cr_assert(ne(ptr, strstr(last_log, "nValues = 6"), NULL), "%s", last_log);
        /* The error moved the FMU to Terminated (FMI 3.0 section 2.3.1). */
        cr_assert(eq(int, api.EnterInitializationMode(inst, fmi3False, 0, 0, fmi3False, 0),
                     fmi3Error));
        cr_assert(ne(ptr, strstr(last_log, "Terminated"), NULL), "%s", last_log);
        api.FreeInstance(inst);
}

/* ---- BouncingBall ----------------------------------------------------------- */

enum { BB_H = 1, BB_V = 3, BB_G = 5, BB_E = 6, BB_H0 = 8, BB_BOUNCES = 10 };

Test(fmus, bouncing_ball_returns_early_at_the_bounce_and_handles_the_event)
{
        const double g = 9.81, e = 0.7, t1 = sqrt(2.0 * 1.0 / g), v_impact = -g * t1;
        fmi3Boolean need = fmi3True, term, nominals, values, next_defined, early = fmi3False;
        fmi3Boolean event = fmi3False, terminate = fmi3False;
        double t = 0.0, t_end = 0.0, next, h = 0.01, t2;
        struct fmi3 api;
        fmi3Instance inst;
        int n;

        load3(&api, "BouncingBall", NULL);
        inst = instantiate3(&api, "BouncingBall", true, true, NULL, 0, NULL);
        initialize3(&api, inst, 0.0);
        /* eventModeUsed: Exit Initialization Mode leads to Event Mode. */
        cr_assert(eq(int, api.UpdateDiscreteStates(inst, &need, &term, &nominals, &values,
                                                   &next_defined, &next), fmi3OK));
        cr_assert(eq(int, api.EnterStepMode(inst), fmi3OK));

        for (n = 0; n < 100; n++) {
                cr_assert(eq(int, api.DoStep(inst, t, h, fmi3False, &event, &terminate, &early,
                                             &t_end), fmi3OK), "%s", last_log);
                if (early)
                        break;
                cr_assert(eq(int, event, fmi3False));
                t = t_end;
        }
        cr_assert(eq(int, early, fmi3True), "no early return in 1 s");
        cr_assert(eq(int, event, fmi3True));
        cr_assert(epsilon_eq(dbl, t_end, t1, 1e-12), "first bounce at %.17g", t_end);
        cr_assert(eq(dbl, get_f64(&api, inst, BB_H), 0.0));
        cr_assert(epsilon_eq(dbl, get_f64(&api, inst, BB_V), v_impact, 1e-12));

        cr_assert(eq(int, api.EnterEventMode(inst), fmi3OK));
        cr_assert(eq(int, api.UpdateDiscreteStates(inst, &need, &term, &nominals, &values,
                                                   &next_defined, &next), fmi3OK));
        cr_assert(eq(int, need, fmi3False));
        cr_assert(eq(int, term, fmi3False));
        cr_assert(eq(int, api.EnterStepMode(inst), fmi3OK));
        cr_assert(epsilon_eq(dbl, get_f64(&api, inst, BB_V), -e * v_impact, 1e-12));
        cr_assert(eq(i32, get_i32(&api, inst, BB_BOUNCES), 1));

        /* The next step starts at the event time; the second bounce follows. */
        t = t_end;
        t2 = t1 + 2.0 * (-e * v_impact) / g;
        for (n = 0; n < 200; n++) {
                cr_assert(eq(int, api.DoStep(inst, t, h, fmi3False, &event, &terminate, &early,
                                             &t_end), fmi3OK), "%s", last_log);
                if (early)
                        break;
                t = t_end;
        }
        cr_assert(eq(int, early, fmi3True));
        cr_assert(epsilon_eq(dbl, t_end, t2, 1e-12), "second bounce at %.17g", t_end);
        api.FreeInstance(inst);
}

Test(fmus, bouncing_ball_without_early_return_bounces_inside_the_step)
{
        const double g = 9.81, e = 0.7, t1 = sqrt(2.0 / g), v1 = e * g * t1;
        double t = 0.0, t_end = 0.0, h_exact, dt;
        fmi3Boolean early = fmi3True;
        struct fmi3 api;
        fmi3Instance inst;

        load3(&api, "BouncingBall", NULL);
        inst = instantiate3(&api, "BouncingBall", false, false, NULL, 0, NULL);
        initialize3(&api, inst, 0.0);
        for (int n = 0; n < 6; n++) {
                cr_assert(eq(int, step3(&api, inst, t, 0.1, &early, &t_end), fmi3OK));
                cr_assert(eq(int, early, fmi3False));
                cr_assert(epsilon_eq(dbl, t_end, t + 0.1, 1e-15));
                t = t_end;
        }
        dt = t - t1;
        h_exact = v1 * dt - 0.5 * g * dt * dt;
        cr_assert(epsilon_eq(dbl, get_f64(&api, inst, BB_H), h_exact, 1e-12));
        cr_assert(epsilon_eq(dbl, get_f64(&api, inst, BB_V), v1 - g * dt, 1e-12));
        cr_assert(eq(i32, get_i32(&api, inst, BB_BOUNCES), 1));

        /* Early return without Event Mode: bounce inside, return at the impact. */
        api.FreeInstance(inst);
        inst = instantiate3(&api, "BouncingBall", false, true, NULL, 0, NULL);
        initialize3(&api, inst, 0.0);
        cr_assert(eq(int, step3(&api, inst, 0.0, 1.0, &early, &t_end), fmi3OK));
        cr_assert(eq(int, early, fmi3True));
        cr_assert(epsilon_eq(dbl, t_end, t1, 1e-12));
        cr_assert(epsilon_eq(dbl, get_f64(&api, inst, BB_V), v1, 1e-12));
        api.FreeInstance(inst);
}

Test(fmus, bouncing_ball_comes_to_rest)
{
        double t = 0.0;
        int32_t bounces;
        struct fmi3 api;
        fmi3Instance inst;

        load3(&api, "BouncingBall", NULL);
        inst = instantiate3(&api, "BouncingBall", false, false, NULL, 0, NULL);
        initialize3(&api, inst, 0.0);
        for (int n = 0; n < 100; n++, t += 0.1)
                cr_assert(eq(int, step3(&api, inst, t, 0.1, NULL, NULL), fmi3OK));
        bounces = get_i32(&api, inst, BB_BOUNCES);
        cr_assert(eq(dbl, get_f64(&api, inst, BB_H), 0.0));
        cr_assert(eq(dbl, get_f64(&api, inst, BB_V), 0.0));
        cr_assert(bounces > 5);
        cr_assert(eq(int, step3(&api, inst, t, 0.1, NULL, NULL), fmi3OK));
        cr_assert(eq(i32, get_i32(&api, inst, BB_BOUNCES), bounces), "a ball at rest stays");
        api.FreeInstance(inst);
}

/* Run n steps of h from t, recording h and v after each. */
static void bb_run(struct fmi3 *api, fmi3Instance inst, double t, int n, double *out)
{
        for (int i = 0; i < n; i++) {
                double t_end;
                fmi3Boolean early;

                cr_assert(eq(int, step3(api, inst, t, 0.01, &early, &t_end), fmi3OK), "%s", last_log);
                t = t_end;
                out[3 * i] = t;
                out[3 * i + 1] = get_f64(api, inst, BB_H);
                out[3 * i + 2] = get_f64(api, inst, BB_V);
        }
}

Test(fmus, bouncing_ball_state_round_trips_continue_bit_identically)
{
        enum { N = 80 };
        double first[3 * N], again[3 * N], from_bytes[3 * N], t = 0.0;
        fmi3FMUState state = NULL, restored = NULL, bogus = NULL;
        fmi3Byte *bytes;
        size_t size = 0;
        struct fmi3 api;
        fmi3Instance inst;

        load3(&api, "BouncingBall", NULL);
        inst = instantiate3(&api, "BouncingBall", false, true, NULL, 0, NULL);
        initialize3(&api, inst, 0.0);
        for (int n = 0; n < 30; n++, t += 0.01)
                cr_assert(eq(int, step3(&api, inst, t, 0.01, NULL, NULL), fmi3OK));
        cr_assert(eq(int, api.GetFMUState(inst, &state), fmi3OK));
        cr_assert(eq(int, api.SerializedFMUStateSize(inst, state, &size), fmi3OK));
        bytes = malloc(size);
        cr_assert(eq(int, api.SerializeFMUState(inst, state, bytes, size), fmi3OK));

        bb_run(&api, inst, t, N, first);                /* crosses the bounce */
        cr_assert(eq(int, api.SetFMUState(inst, state), fmi3OK));
        bb_run(&api, inst, t, N, again);
        cr_assert(eq(int, memcmp(first, again, sizeof(first)), 0));

        cr_assert(eq(int, api.DeserializeFMUState(inst, bytes, size, &restored), fmi3OK));
        cr_assert(eq(int, api.SetFMUState(inst, restored), fmi3OK));
        bb_run(&api, inst, t, N, from_bytes);
        cr_assert(eq(int, memcmp(first, from_bytes, sizeof(first)), 0));

        /* Wrong size, then a damaged magic: refused (and Terminated). */
        cr_assert(eq(int, api.DeserializeFMUState(inst, bytes, size - 1, &bogus), fmi3Error));
        cr_assert(eq(ptr, bogus, NULL));
        cr_assert(eq(int, api.SetFMUState(inst, state), fmi3OK), "restoring recovers");
        bytes[0] ^= 0xff;
        cr_assert(eq(int, api.DeserializeFMUState(inst, bytes, size, &bogus), fmi3Error));
        cr_assert(eq(int, step3(&api, inst, t, 0.01, NULL, NULL), fmi3Error));
        cr_assert(eq(int, api.SetFMUState(inst, state), fmi3OK));
        cr_assert(eq(int, step3(&api, inst, t, 0.01, NULL, NULL), fmi3OK));

        cr_assert(eq(int, api.FreeFMUState(inst, &state), fmi3OK));
        cr_assert(eq(ptr, state, NULL));
        cr_assert(eq(int, api.FreeFMUState(inst, &restored), fmi3OK));
        free(bytes);
        api.FreeInstance(inst);
}

/* ---- IntermediateProbe ------------------------------------------------------ */

enum { IP_U = 1, IP_Y = 2, IP_N = 3, IP_LAST_U = 4, IP_SUM_U = 5, IP_LAST_T = 6 };

/* What the importer's callback saw and should do; one test per process. */
static struct {
        struct fmi3 *api;
        fmi3Instance inst;
        int calls;
        double times[16];
        double y_seen[16];
        bool flags_ok;
        int return_early_at;            /* request early return at this call */
        bool misbehave;                 /* read a non-intermediate variable */
        fmi3Status misbehave_status;
} probe;

static void probe_callback(fmi3InstanceEnvironment env, fmi3Float64 t, fmi3Boolean set_requested,
                           fmi3Boolean get_allowed, fmi3Boolean step_finished,
                           fmi3Boolean can_return_early, fmi3Boolean *early_requested,
                           fmi3Float64 *early_time)
{
        fmi3ValueReference u = IP_U, y = IP_Y, n = IP_N;
        double value = 10.0 * (probe.calls + 1), y_now = NAN;
        int32_t count;
        int k = probe.calls++;

        (void) env;
        probe.times[k] = t;
        probe.flags_ok &= set_requested && get_allowed && step_finished && can_return_early;
        if (probe.misbehave) {
                probe.misbehave_status = probe.api->GetInt32(probe.inst, &n, 1, &count, 1);
                return;
        }
        /* 4.2.2: all gets first, then sets. */
        probe.api->GetFloat64(probe.inst, &y, 1, &y_now, 1);
        probe.y_seen[k] = y_now;
        probe.api->SetFloat64(probe.inst, &u, 1, &value, 1);
        if (probe.calls == probe.return_early_at) {
                *early_requested = fmi3True;
                *early_time = t;
        }
}

static fmi3Instance probe_start(struct fmi3 *api)
{
        fmi3ValueReference required[] = { IP_U, IP_Y };
        fmi3Instance inst;

        load3(api, "IntermediateProbe", NULL);
        inst = instantiate3(api, "IntermediateProbe", false, true, required, 2, probe_callback);
        probe.api = api;
        probe.inst = inst;
        probe.flags_ok = true;
        initialize3(api, inst, 0.0);
        set_f64(api, inst, IP_U, 2.0);
        return inst;
}

Test(fmus, intermediate_probe_reports_what_the_callback_set)
{
        fmi3ValueReference u = IP_U;
        double x = 1.0;
        fmi3Boolean early = fmi3True;
        double t_end = 0.0;
        struct fmi3 api;
        fmi3Instance inst = probe_start(&api);

        cr_assert(eq(int, step3(&api, inst, 0.0, 1.0, &early, &t_end), fmi3OK), "%s", last_log);
        cr_assert(eq(int, early, fmi3False));
        cr_assert(eq(dbl, t_end, 1.0));
        cr_assert(eq(int, probe.calls, 4));
        cr_assert(eq(dbl, probe.times[0], 0.25));
        cr_assert(eq(dbl, probe.times[1], 0.5));
        cr_assert(eq(dbl, probe.times[2], 0.75));
        cr_assert(eq(dbl, probe.times[3], 1.0));
        cr_assert(probe.flags_ok, "set requested, get allowed, step finished, can return early");
        /* y = integral of u: 2 for the first quarter, then the values set. */
        cr_assert(eq(dbl, probe.y_seen[0], 0.5));
        cr_assert(eq(dbl, probe.y_seen[1], 0.5 + 2.5));
        cr_assert(eq(dbl, get_f64(&api, inst, IP_Y), 0.25 * (2.0 + 10.0 + 20.0 + 30.0)));
        cr_assert(eq(i32, get_i32(&api, inst, IP_N), 4));
        cr_assert(eq(dbl, get_f64(&api, inst, IP_LAST_U), 40.0));
        cr_assert(eq(dbl, get_f64(&api, inst, IP_SUM_U), 100.0));
        cr_assert(eq(dbl, get_f64(&api, inst, IP_LAST_T), 1.0));
        /* u stays an ordinary input in Step Mode. */
        cr_assert(eq(int, api.SetFloat64(inst, &u, 1, &x, 1), fmi3OK));
        api.FreeInstance(inst);
}

Test(fmus, intermediate_probe_returns_early_when_asked)
{
        fmi3Boolean early = fmi3False;
        double t_end = 0.0;
        struct fmi3 api;
        fmi3Instance inst;

        probe.return_early_at = 2;
        inst = probe_start(&api);
        cr_assert(eq(int, step3(&api, inst, 0.0, 1.0, &early, &t_end), fmi3OK), "%s", last_log);
        cr_assert(eq(int, early, fmi3True));
        cr_assert(eq(dbl, t_end, 0.5));
        cr_assert(eq(i32, get_i32(&api, inst, IP_N), 2));
        cr_assert(eq(dbl, get_f64(&api, inst, IP_LAST_T), 0.5));
        /* The next step starts where the FMU stopped. */
        probe.return_early_at = 0;
        cr_assert(eq(int, step3(&api, inst, 0.5, 0.5, &early, &t_end), fmi3OK), "%s", last_log);
        cr_assert(eq(dbl, t_end, 1.0));
        api.FreeInstance(inst);
}

Test(fmus, intermediate_probe_refuses_non_intermediate_access_in_the_callback)
{
        fmi3ValueReference u = IP_U, n = IP_N;
        double x = 1.0;
        int32_t count;
        struct fmi3 api;
        fmi3Instance inst;

        probe.misbehave = true;
        inst = probe_start(&api);
        cr_assert(eq(int, step3(&api, inst, 0.0, 1.0, NULL, NULL), fmi3Error));
        cr_assert(eq(int, probe.misbehave_status, fmi3Error));
        cr_assert(eq(int, api.Reset(inst), fmi3OK));

        /* Outside a callback, n_updates is an ordinary output and u an input. */
        cr_assert(eq(int, api.GetInt32(inst, &n, 1, &count, 1), fmi3OK));
        cr_assert(eq(int, api.SetFloat64(inst, &u, 1, &x, 1), fmi3OK));
        api.FreeInstance(inst);
}

/* ---- GlobalCounter ---------------------------------------------------------- */

Test(fmus, global_counter_instances_in_one_process_interfere)
{
        fmi3FMUState state = NULL;
        struct fmi3 api;
        fmi3Instance a, b;

        load3(&api, "GlobalCounter", NULL);
        a = instantiate3(&api, "GlobalCounter", false, false, NULL, 0, NULL);
        b = instantiate3(&api, "GlobalCounter", false, false, NULL, 0, NULL);
        initialize3(&api, a, 0.0);
        initialize3(&api, b, 0.0);
        cr_assert(eq(int, step3(&api, a, 0.0, 0.1, NULL, NULL), fmi3OK));
        cr_assert(eq(i64, get_i64(&api, a, 1), 1));
        cr_assert(eq(int, step3(&api, b, 0.0, 0.1, NULL, NULL), fmi3OK));
        cr_assert(eq(i64, get_i64(&api, b, 1), 2), "b sees a's step");
        cr_assert(eq(int, step3(&api, a, 0.1, 0.1, NULL, NULL), fmi3OK));
        cr_assert(eq(i64, get_i64(&api, a, 1), 3), "a sees b's step");
        cr_assert(eq(i64, get_i64(&api, a, 2), 2), "a's own steps");
        /* canGetAndSetFMUState is false. */
        cr_assert(eq(int, api.GetFMUState(a, &state), fmi3Error));
        api.FreeInstance(a);
        api.FreeInstance(b);
}

/* ---- State machine and argument checks ------------------------------------ */

Test(fmus, illegal_calls_are_refused_with_a_reason)
{
        fmi3ValueReference x0 = LO_X0;
        double one = 1.0, d;
        struct fmi3 api;
        fmi3Instance inst;

        load3(&api, "LinearOde", NULL);
        cr_assert(eq(ptr, api.InstantiateCoSimulation("i", "{not the token}", NULL, fmi3False,
                                                      fmi3False, fmi3False, fmi3False, NULL, 0,
                                                      NULL, logger3, NULL), NULL));
        cr_assert(ne(ptr, strstr(last_log, "instantiationToken"), NULL), "%s", last_log);
        cr_assert(eq(ptr, api.InstantiateCoSimulation("i", token_of("LinearOde"), NULL, fmi3False,
                                                      fmi3False, fmi3True, fmi3False, NULL, 0,
                                                      NULL, logger3, NULL), NULL),
                  "eventModeUsed without hasEventMode");
        cr_assert(eq(ptr, api.InstantiateModelExchange("i", token_of("LinearOde"), NULL,
                                                       fmi3False, fmi3False, NULL, logger3), NULL));
        cr_assert(eq(ptr, api.InstantiateCoSimulation(" ", token_of("LinearOde"), NULL, fmi3False,
                                                      fmi3False, fmi3False, fmi3False, NULL, 0,
                                                      NULL, logger3, NULL), NULL));

        inst = instantiate3(&api, "LinearOde", false, false, NULL, 0, NULL);
        cr_assert(eq(int, step3(&api, inst, 0.0, 0.1, NULL, NULL), fmi3Error));
        cr_assert(ne(ptr, strstr(last_log, "fmi3DoStep must not be called in Instantiated"), NULL),
                  "%s", last_log);
        cr_assert(eq(int, api.Reset(inst), fmi3OK));

        initialize3(&api, inst, 0.0);
        cr_assert(eq(int, api.SetFloat64(inst, &x0, 1, &one, 1), fmi3Error));
        cr_assert(ne(ptr, strstr(last_log, "fixed parameter"), NULL), "%s", last_log);
        cr_assert(ne(ptr, strstr(last_log, "Step Mode"), NULL), "%s", last_log);
        cr_assert(eq(int, api.Reset(inst), fmi3OK));

        initialize3(&api, inst, 0.0);
        cr_assert(eq(int, api.GetFloat64(inst, &x0, 1, &d, 2), fmi3Error), "nValues 2 for a scalar");
        cr_assert(eq(int, api.Reset(inst), fmi3OK));

        initialize3(&api, inst, 0.0);
        cr_assert(eq(int, api.EnterEventMode(inst), fmi3Error), "eventModeUsed was false");
        cr_assert(eq(int, api.Reset(inst), fmi3OK));

        initialize3(&api, inst, 0.0);
        cr_assert(eq(int, step3(&api, inst, 0.5, 0.1, NULL, NULL), fmi3Error), "wrong time");
        cr_assert(eq(int, api.Reset(inst), fmi3OK));

        initialize3(&api, inst, 0.0);
        cr_assert(eq(int, step3(&api, inst, 0.0, 0.0, NULL, NULL), fmi3Error), "h = 0");
        cr_assert(eq(int, api.Reset(inst), fmi3OK));

        initialize3(&api, inst, 0.0);
        cr_assert(eq(int, api.GetDirectionalDerivative(inst, NULL, 0, NULL, 0, NULL, 0, NULL, 0),
                     fmi3Error));
        cr_assert(eq(int, api.Reset(inst), fmi3OK));
        cr_assert(eq(int, api.EnterConfigurationMode(inst), fmi3Error), "no structural parameters");
        api.FreeInstance(inst);
}

Test(fmus, debug_logging_filters_informational_messages)
{
        const char *events[] = { "logEvents" }, *bogus[] = { "logNoSuchCategory" };
        struct fmi3 api;
        fmi3Instance inst;
        int before;

        load3(&api, "BouncingBall", NULL);
        inst = instantiate3(&api, "BouncingBall", false, false, NULL, 0, NULL);
        cr_assert(eq(int, api.SetDebugLogging(inst, fmi3False, 0, NULL), fmi3OK));
        initialize3(&api, inst, 0.0);
        before = n_logs;
        cr_assert(eq(int, step3(&api, inst, 0.0, 1.0, NULL, NULL), fmi3OK));
        cr_assert(eq(int, n_logs, before), "logEvents is off");
        cr_assert(eq(int, api.SetDebugLogging(inst, fmi3True, 1, events), fmi3OK));
        cr_assert(eq(int, step3(&api, inst, 1.0, 1.0, NULL, NULL), fmi3OK));
        cr_assert(n_logs > before, "bounces are logged under logEvents");
        cr_assert(ne(ptr, strstr(last_log, "logEvents"), NULL), "%s", last_log);
        cr_assert(eq(int, api.SetDebugLogging(inst, fmi3True, 1, bogus), fmi3Error));
        api.FreeInstance(inst);
}
