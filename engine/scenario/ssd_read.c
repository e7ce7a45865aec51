/*
 * ssd_read: SystemStructure.ssd into struct ssd_doc, SSP 1.0 section 5
 * (SystemStructureDescription.xsd). Elements fmud does not use for
 * running (geometry, meta data, signatures, enumerations) are skipped;
 * elements that would change the result but are not supported (signal
 * dictionaries, parameter mappings, index ranges, mapping
 * transformations) are refused by name rather than silently ignored.
 */
#include "engine/scenario/ssd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/scenario/scenario.h"
#include "engine/scenario/ssp_xml.h"

__attribute__((format(printf, 4, 5)))
static int err(struct mx *x, const xmlNode *n, const char *subject, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        diag_addv(x->diags, DIAG_ERROR, x->file, mx_line(n), subject, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

static int unsupported(struct mx *x, const xmlNode *n)
{
        return err(x, n, NULL, "<%s> is not supported by fmud", mx_name(n));
}

/* "" names the system's own connector, like an absent attribute. */
static const char *element_ref(struct mx *x, const xmlNode *n, const char *attr)
{
        const char *s = mx_attr(x, n, attr);

        return s && *s ? s : NULL;
}

static int parse_kind(struct mx *x, const xmlNode *n, const char *s, enum ssd_kind *ret)
{
        for (enum ssd_kind k = SSD_KIND_INPUT; k <= SSD_KIND_UNSPECIFIED; k++)
                if (strcmp(s, ssd_kind_name(k)) == 0) {
                        *ret = k;
                        return 0;
                }
        return err(x, n, NULL, "<Connector kind=\"%s\">: not a connector kind (SSP 1.0 5.3.4)", s);
}

/* The type element of a connector: SSP 1.0 names, and FMI 3.0 names for exact types. */
static int read_type(struct mx *x, const xmlNode *t, struct ssd_connector *c)
{
        static const struct { const char *name; enum ssd_type type; } generic[] = {
                { "Real", SSD_TYPE_REAL },       { "Integer", SSD_TYPE_INTEGER },
                { "Boolean", SSD_TYPE_BOOLEAN }, { "String", SSD_TYPE_STRING },
                { "Enumeration", SSD_TYPE_ENUMERATION }, { "Binary", SSD_TYPE_BINARY },
        };
        const char *name = mx_name(t);

        for (size_t i = 0; i < sizeof(generic) / sizeof(*generic); i++)
                if (strcmp(name, generic[i].name) == 0)
                        c->type = generic[i].type;
        for (enum md_type m = MD_FLOAT32; c->type == SSD_TYPE_NONE && m <= MD_UINT64; m++)
                if (strcmp(name, md_type_name(m)) == 0) {
                        c->type = SSD_TYPE_EXACT;
                        c->exact = m;
                }
        if (c->type == SSD_TYPE_NONE)
                return err(x, t, c->name, "<%s> is not a connector type fmud knows", name);
        if (c->type == SSD_TYPE_REAL || (c->type == SSD_TYPE_EXACT && md_type_is_float(c->exact)))
                c->unit = mx_attr(x, t, "unit");
        return 0;
}

static int read_connectors(struct mx *x, const xmlNode *list, struct ssd_element *e)
{
        size_t n = mx_count(list, "Connector");
        int bad = 0;

        e->connectors = calloc(n ? n : 1, sizeof(*e->connectors));
        if (!e->connectors)
                return -ENOMEM;
        for (const xmlNode *n1 = mx_first(list); n1; n1 = mx_next(n1)) {
                struct ssd_connector *c = &e->connectors[e->n_connectors];
                const char *kind;

                if (!mx_is(n1, "Connector"))
                        continue;
                c->line = mx_line(n1);
                c->name = mx_attr(x, n1, "name");
                kind = mx_attr(x, n1, "kind");
                if (!c->name || !kind) {
                        bad |= ssd_missing(x, n1, c->name ? "kind" : "name") < 0;
                        continue;
                }
                if (ssd_connector(e, c->name)) {
                        bad |= err(x, n1, c->name, "connector defined twice on '%s'", e->name) < 0;
                        continue;
                }
                bad |= parse_kind(x, n1, kind, &c->kind) < 0;
                for (const xmlNode *t = mx_first(n1); t; t = mx_next(t))
                        if (!mx_is(t, "Dimension") && !mx_is(t, "ConnectorGeometry") &&
                            !mx_is(t, "Annotations") && !mx_is(t, "Clock"))
                                bad |= read_type(x, t, c) < 0;
                e->n_connectors++;
        }
        return bad ? -EINVAL : 0;
}

static int read_transformation(struct mx *x, const xmlNode *t, struct ssd_connection *c)
{
        int bad = 0;

        if (!mx_is(t, "LinearTransformation"))
                return unsupported(x, t);
        c->has_transformation = true;
        c->factor = 1;
        c->offset = 0;
        bad |= ssd_attr_double(x, t, "factor", &c->factor) < 0;
        bad |= ssd_attr_double(x, t, "offset", &c->offset) < 0;
        return bad ? -EINVAL : 0;
}

static int read_connection(struct mx *x, const xmlNode *n, struct ssd_connection *c)
{
        int bad = 0;

        c->line = mx_line(n);
        c->start_element = element_ref(x, n, "startElement");
        c->end_element = element_ref(x, n, "endElement");
        c->start_connector = mx_attr(x, n, "startConnector");
        c->end_connector = mx_attr(x, n, "endConnector");
        if (!c->start_connector)
                bad |= ssd_missing(x, n, "startConnector") < 0;
        if (!c->end_connector)
                bad |= ssd_missing(x, n, "endConnector") < 0;
        if (mx_attr(x, n, "startIndices") || mx_attr(x, n, "endIndices"))
                bad |= err(x, n, NULL,
                           "startIndices/endIndices are not supported: connect whole variables") < 0;
        bad |= ssd_attr_bool(x, n, "suppressUnitConversion", &c->suppress_unit_conversion) < 0;
        for (const xmlNode *t = mx_first(n); t; t = mx_next(t))
                if (!mx_is(t, "ConnectionGeometry") && !mx_is(t, "Annotations"))
                        bad |= read_transformation(x, t, c) < 0;
        return bad ? -EINVAL : 0;
}

static int read_connections(struct mx *x, const xmlNode *list, struct ssd_element *sys)
{
        size_t n = mx_count(list, "Connection");
        int bad = 0;

        sys->connections = calloc(n ? n : 1, sizeof(*sys->connections));
        if (!sys->connections)
                return -ENOMEM;
        for (const xmlNode *c = mx_first(list); c; c = mx_next(c)) {
                if (!mx_is(c, "Connection"))
                        continue;
                bad |= read_connection(x, c, &sys->connections[sys->n_connections++]) < 0;
        }
        return bad ? -EINVAL : 0;
}

static int read_binding(struct mx *x, const xmlNode *n, struct ssd_binding *b)
{
        const char *type = mx_attr(x, n, "type"), *base = mx_attr(x, n, "sourceBase");
        int bad = 0;

        b->line = mx_line(n);
        b->source = mx_attr(x, n, "source");
        b->prefix = mx_attr(x, n, "prefix");
        if (!b->prefix)
                b->prefix = "";
        if (type && strcmp(type, "application/x-ssp-parameter-set") != 0)
                bad |= err(x, n, NULL, "parameter sources of type '%s' are not supported", type) < 0;
        if (base && strcmp(base, "SSD") != 0)
                bad |= err(x, n, NULL, "sourceBase=\"%s\" is not supported (only SSD)", base) < 0;
        for (const xmlNode *c = mx_first(n); c; c = mx_next(c)) {
                if (mx_is(c, "ParameterValues")) {
                        b->values = mx_first(c);
                        if (!b->values || !mx_is(b->values, "ParameterSet"))
                                bad |= err(x, c, NULL, "<ParameterValues> must hold one "
                                           "<ssv:ParameterSet>") < 0;
                } else if (mx_is(c, "ParameterMapping")) {
                        bad |= unsupported(x, c) < 0;
                }
        }
        if (!b->source == !b->values && !bad)
                bad |= err(x, n, NULL, "<ParameterBinding> needs either a source or inline "
                           "<ParameterValues>, not %s", b->source ? "both" : "neither") < 0;
        return bad ? -EINVAL : 0;
}

static int read_bindings(struct mx *x, const xmlNode *list, struct ssd_element *e)
{
        size_t n = mx_count(list, "ParameterBinding");
        int bad = 0;

        e->bindings = calloc(n ? n : 1, sizeof(*e->bindings));
        if (!e->bindings)
                return -ENOMEM;
        for (const xmlNode *c = mx_first(list); c; c = mx_next(c))
                if (mx_is(c, "ParameterBinding"))
                        bad |= read_binding(x, c, &e->bindings[e->n_bindings++]) < 0;
        return bad ? -EINVAL : 0;
}

/* fmud's settings: one ssc:Annotation of our type, holding one <Settings>. */
static int read_annotations(struct mx *x, const xmlNode *list, const xmlNode **ret, int *ret_line)
{
        for (const xmlNode *a = mx_first(list); a; a = mx_next(a)) {
                const char *type = mx_attr(x, a, "type");
                const xmlNode *s = mx_first(a);

                if (!mx_is(a, "Annotation") || !type || strcmp(type, SCENARIO_ANNOTATION_TYPE) != 0)
                        continue;
                if (!ret)
                        return err(x, a, NULL, "fmud settings belong on the "
                                   "SystemStructureDescription or its top-level System, not here");
                if (*ret)
                        return err(x, a, NULL, "fmud settings given twice (first at line %d)",
                                   *ret_line);
                if (!s || !mx_is(s, "Settings") || mx_next(s))
                        return err(x, a, NULL, "the %s annotation must hold exactly one <Settings>",
                                   SCENARIO_ANNOTATION_TYPE);
                *ret = s;
                *ret_line = mx_line(s);
        }
        return 0;
}

static int read_element(struct mx *x, const xmlNode *n, struct ssd_element *e, bool top);

static int read_elements(struct mx *x, const xmlNode *list, struct ssd_element *sys)
{
        size_t n = mx_count(list, NULL);
        int bad = 0, r;

        sys->elements = calloc(n ? n : 1, sizeof(*sys->elements));
        if (!sys->elements)
                return -ENOMEM;
        for (const xmlNode *c = mx_first(list); c; c = mx_next(c)) {
                struct ssd_element *e = &sys->elements[sys->n_elements];

                if (!mx_is(c, "Component") && !mx_is(c, "System")) {
                        bad |= unsupported(x, c) < 0;
                        continue;
                }
                e->kind = mx_is(c, "System") ? SSD_SYSTEM : SSD_COMPONENT;
                r = read_element(x, c, e, false);
                if (r == -ENOMEM)
                        return r;
                bad |= r < 0;
                if (!e->name)
                        continue;
                sys->n_elements++;
                if (ssd_child(sys, e->name) != e)
                        bad |= err(x, c, e->name, "two elements of system '%s' have this name",
                                   sys->name) < 0;
        }
        return bad ? -EINVAL : 0;
}

/* The child elements of a Component or System; r collects the worst result. */
static int read_children(struct mx *x, const xmlNode *n, struct ssd_element *e, bool top)
{
        int bad = 0, r = 0;

        for (const xmlNode *c = mx_first(n); c && r != -ENOMEM; c = mx_next(c)) {
                r = 0;
                if (mx_is(c, "Connectors"))
                        r = read_connectors(x, c, e);
                else if (mx_is(c, "ParameterBindings"))
                        r = read_bindings(x, c, e);
                else if (e->kind == SSD_SYSTEM && mx_is(c, "Elements"))
                        r = read_elements(x, c, e);
                else if (e->kind == SSD_SYSTEM && mx_is(c, "Connections"))
                        r = read_connections(x, c, e);
                else if (e->kind == SSD_SYSTEM && mx_is(c, "SignalDictionaries"))
                        r = unsupported(x, c);
                else if (mx_is(c, "Annotations"))
                        r = read_annotations(x, c, top ? &e->settings : NULL, &e->settings_line);
                bad |= r < 0;
        }
        return r == -ENOMEM ? r : bad ? -EINVAL : 0;
}

static int read_element(struct mx *x, const xmlNode *n, struct ssd_element *e, bool top)
{
        int bad = 0, r;

        e->line = mx_line(n);
        e->name = mx_attr(x, n, "name");
        if (!e->name || !*e->name)
                bad |= ssd_missing(x, n, "name") < 0;
        if (e->kind == SSD_COMPONENT) {
                e->source = mx_attr(x, n, "source");
                e->type = mx_attr(x, n, "type");
                e->implementation = mx_attr(x, n, "implementation");
                if (!e->source)
                        bad |= err(x, n, e->name, "a component without a source cannot run") < 0;
        }
        r = read_children(x, n, e, top);
        if (r == -ENOMEM)
                return r;
        return bad || r < 0 ? -EINVAL : 0;
}

static int read_root_children(struct ssd_doc *doc, const xmlNode *root)
{
        struct mx *x = &doc->x;
        int bad = 0, r = 0, n_units;

        for (const xmlNode *c = mx_first(root); c && r != -ENOMEM; c = mx_next(c)) {
                r = 0;
                if (mx_is(c, "System") && doc->root.line) {
                        r = err(x, c, NULL, "a second top-level <System>");
                } else if (mx_is(c, "System")) {
                        doc->root.kind = SSD_SYSTEM;
                        r = read_element(x, c, &doc->root, true);
                } else if (mx_is(c, "Units")) {
                        n_units = ssd_read_units(x, c, &doc->units);
                        r = n_units < 0 ? n_units : 0;
                        doc->n_units = n_units < 0 ? 0 : (size_t)n_units;
                } else if (mx_is(c, "DefaultExperiment")) {
                        doc->experiment_line = mx_line(c);
                        r = ssd_attr_double(x, c, "startTime", &doc->start);
                        doc->has_start = r == 0;
                        bad |= r < 0;
                        r = ssd_attr_double(x, c, "stopTime", &doc->stop);
                        doc->has_stop = r == 0;
                } else if (mx_is(c, "Annotations")) {
                        r = read_annotations(x, c, &doc->settings, &doc->settings_line);
                }
                bad |= r < 0;
        }
        if (r == -ENOMEM)
                return r;
        if (!doc->root.line && !bad)
                bad |= err(x, root, NULL, "no top-level <System>") < 0;
        return bad ? -EINVAL : 0;
}

int ssd_read(struct ssd_doc *doc, const void *buf, size_t len)
{
        struct mx *x = &doc->x;
        const xmlNode *root;
        const char *version;
        int r;

        doc->root.kind = SSD_SYSTEM;
        r = ssp_xml_read(x, buf, len);
        if (r < 0)
                return r;
        root = xmlDocGetRootElement(x->doc);
        if (!mx_is(root, "SystemStructureDescription"))
                return err(x, root, NULL,
                           "the root element is <%s>, not <ssd:SystemStructureDescription>",
                           mx_name(root));
        version = mx_attr(x, root, "version");
        doc->name = mx_attr(x, root, "name");
        if (!version || !doc->name)
                return ssd_missing(x, root, version ? "name" : "version");
        if (strcmp(version, "1.0") != 0 && strcmp(version, "2.0") != 0)
                return err(x, root, NULL, "SSD version \"%s\": fmud reads SSP 1.0 (and 2.0 "
                           "documents that use only 1.0 features)", version);
        r = read_root_children(doc, root);
        if (r == 0 && doc->settings && doc->root.settings)
                r = err(x, root, NULL, "fmud settings given twice (lines %d and %d)",
                        doc->settings_line, doc->root.settings_line);
        if (r == 0 && doc->root.settings) {
                doc->settings = doc->root.settings;
                doc->settings_line = doc->root.settings_line;
        }
        return x->nomem ? -ENOMEM : r;
}
