/*
 * fmu_models: the test FMUs' exported API, and their modelDescription.xml
 * against what the binaries do: every variable's type, element count,
 * start value and causality, checked through the FMI calls. The FMUs are
 * called directly (fmu_direct.h); Criterion runs each test in its own
 * process.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmu_direct.h"

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
                "IntermediateProbe", "GlobalCounter", "MissingSymbol", "TimeEvent",
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
                attr(v, "valueReference", vrs, sizeof(vrs));
                vr = (fmi2ValueReference)strtoul(vrs, NULL, 10);
                if (child(v, "Boolean")) {
                        fmi2Boolean b = -1;

                        cr_assert(eq(int, api.GetBoolean(c, &vr, 1, &b), fmi2OK), "%s", last_log);
                        cr_assert(b == fmi2False || b == fmi2True);
                        continue;
                }
                /* An Enumeration is got as an Integer (FMI 2.0 section 2.2.7). */
                if (child(v, "Enumeration")) {
                        fmi2Integer e = -1;

                        cr_assert(eq(int, api.GetInteger(c, &vr, 1, &e), fmi2OK), "%s", last_log);
                        cr_assert(e >= 1 && e <= 3, "%d", (int)e);
                        continue;
                }
                real = child(v, "Real");
                cr_assert(ne(ptr, real, NULL));
                cr_assert(eq(int, api.GetReal(c, &vr, 1, &value), fmi2OK), "%s", last_log);
                if (attr(real, "start", start, sizeof(start)))
                        cr_assert(eq(dbl, value, strtod(start, NULL)));
        }
        api.FreeInstance(c);
        dlclose(api.dl);
        xmlFreeDoc(doc);
}
