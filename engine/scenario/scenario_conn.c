/*
 * scenario_conn: every ssd:Connection of every system into the graph of
 * scenario_graph.h, then one scenario_connection per fed component input.
 *
 * Direction (SSP 1.0: start and end do not denote it): from a system's
 * point of view an element's output or calculatedParameter is a source and
 * its input or parameter a sink (a local is neither: FMI 3.0 section
 * 2.4.7.4, "must not be used as input to another model"); the system's own input or parameter
 * connector is a source inside it, its output or calculatedParameter a
 * sink. A connection joins one source and one sink of the same class
 * (signal: output or calculatedParameter -> input; parameter:
 * calculatedParameter -> parameter).
 *
 * Along the path from the producing output to the input it feeds, unit
 * conversions and LinearTransformations fold into one factor and offset:
 * at each hop the value is first converted into the unit of the connector
 * it reaches (unless suppressUnitConversion), then transformed (SSP 1.0
 * LinearTransformation: "the value of source is already converted to the
 * target unit").
 */
#include "engine/scenario/scenario_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/scenario/scenario_graph.h"

#define MAX_DIMS 32

enum role { ROLE_NONE, ROLE_SOURCE, ROLE_SINK };

struct end {
        struct sg_node node;
        enum role role;
        bool parameter;
        bool unspecified;               /* a system connector of kind unspecified: role from the other end */
        char *name;                     /* for messages */
};

static enum role var_role(const struct md_variable *v, bool *ret_param)
{
        *ret_param = v->causality == MD_CAUSALITY_PARAMETER ||
                     v->causality == MD_CAUSALITY_CALCULATED_PARAMETER;
        /* A local is none: "must not be used as input to another model" (FMI 3.0 2.4.7.4). */
        switch (v->causality) {
        case MD_CAUSALITY_OUTPUT:
        case MD_CAUSALITY_CALCULATED_PARAMETER:
                return ROLE_SOURCE;
        case MD_CAUSALITY_INPUT:
        case MD_CAUSALITY_PARAMETER:
                return ROLE_SINK;
        default:
                return ROLE_NONE;
        }
}

/* A system connector seen from outside (child) or inside (own). */
static enum role sys_role(const struct ssd_connector *k, bool own, bool *ret_param)
{
        bool in;

        *ret_param = k->kind == SSD_KIND_PARAMETER || k->kind == SSD_KIND_CALCULATED_PARAMETER;
        if (k->kind == SSD_KIND_INPUT || k->kind == SSD_KIND_PARAMETER)
                in = true;
        else if (k->kind == SSD_KIND_OUTPUT || k->kind == SSD_KIND_CALCULATED_PARAMETER)
                in = false;
        else
                return ROLE_NONE;
        return in == own ? ROLE_SOURCE : ROLE_SINK;
}

static int end_sys(struct sc_load *l, const struct ssd_element *sys, const char *conn, bool own,
                   int line, struct end *ret)
{
        const struct ssd_connector *k = ssd_connector(sys, conn);

        if (!k)
                return sc_err(l, l->label, line, conn, "unknown connector: system '%s' declares no "
                              "connector of that name", sys->name);
        ret->node = (struct sg_node){ .kind = SG_SYS, .sys = sys, .conn = k };
        ret->role = sys_role(k, own, &ret->parameter);
        if (asprintf(&ret->name, "%s.%s", sys->name, conn) < 0)
                return -ENOMEM;
        /* SSP: "treated as connectors of whatever kind is needed to make the connection allowed". */
        ret->unspecified = k->kind == SSD_KIND_UNSPECIFIED;
        if (ret->role == ROLE_NONE && !ret->unspecified)
                return sc_err(l, l->label, line, ret->name, "system connectors of kind %s cannot be "
                              "connected (input, output, parameter, calculatedParameter can)",
                              ssd_kind_name(k->kind));
        return 0;
}

/* One end of a connection in system sys; 1 when it is on a component whose FMU failed. */
static int end_of(struct sc_load *l, const struct ssd_element *sys, const char *elem,
                  const char *conn, int line, struct end *ret)
{
        const struct scenario_component *c;
        const struct ssd_element *e;
        const struct md_variable *v;

        if (!elem)
                return end_sys(l, sys, conn, true, line, ret);
        e = ssd_child(sys, elem);
        if (!e)
                return sc_err(l, l->label, line, elem, "unknown element: system '%s' has no "
                              "component or system of that name", sys->name);
        if (e->kind == SSD_SYSTEM)
                return end_sys(l, e, conn, false, line, ret);
        c = &l->s->components[e->comp];
        if (!c->fmu)
                return 1;
        v = md_find_name(c->fmu->md, conn);
        if (asprintf(&ret->name, "%s.%s", c->name, conn) < 0)
                return -ENOMEM;
        if (!v)
                return sc_err(l, l->label, line, ret->name, "unknown connector: the FMU of "
                              "component '%s' (%s) has no variable '%s'", c->name, c->source, conn);
        ret->node = (struct sg_node){ .kind = SG_VAR, .comp = e->comp,
                                      .var = (size_t)(v - c->fmu->md->vars) };
        ret->role = var_role(v, &ret->parameter);
        if (ret->role == ROLE_NONE && v->causality == MD_CAUSALITY_LOCAL)
                return sc_err(l, l->label, line, ret->name, "a variable of causality local cannot "
                              "be connected: the FMU keeps it to itself (FMI 3.0 section "
                              "2.4.7.4); connect an output to an input, or a calculated "
                              "parameter to a parameter");
        if (ret->role == ROLE_NONE)
                return sc_err(l, l->label, line, ret->name, "a variable of causality %s cannot be "
                              "connected", md_causality_name(v->causality));
        return 0;
}

static int direction(struct sc_load *l, const struct ssd_connection *c, struct end *a,
                     struct end *b)
{
        if (a->unspecified && b->role != ROLE_NONE) {
                a->role = b->role == ROLE_SOURCE ? ROLE_SINK : ROLE_SOURCE;
                a->parameter = b->parameter;
        } else if (b->unspecified && a->role != ROLE_NONE) {
                b->role = a->role == ROLE_SOURCE ? ROLE_SINK : ROLE_SOURCE;
                b->parameter = a->parameter;
        }
        if (a->role == ROLE_NONE || b->role == ROLE_NONE)
                return sc_err(l, l->label, c->line, a->role == ROLE_NONE ? a->name : b->name,
                              "two connectors of kind unspecified: nothing says which way the "
                              "connection runs");
        if (a->role == b->role)
                return sc_err(l, l->label, c->line, NULL, "'%s' and '%s' are both %s: a connection "
                              "runs from an output to an input", a->name, b->name,
                              a->role == ROLE_SINK ? "inputs (or parameters), nothing feeds them"
                                                   : "outputs (or calculated parameters)");
        /*
         * SSP's allowed connections: a calculated parameter (or a system's
         * parameter connector) feeds a parameter, an input or an output
         * connector; only an output feeding a parameter does not fit, since
         * a parameter is set once, before there are outputs.
         */
        const struct end *src = a->role == ROLE_SOURCE ? a : b, *dst = src == a ? b : a;

        if (dst->parameter && !src->parameter)
                return sc_err(l, l->label, c->line, NULL, "'%s' feeds the parameter '%s': a "
                              "parameter is fed by a calculated parameter, not by an output",
                              src->name, dst->name);
        return 0;
}

static int add_edge(struct sc_load *l, struct sg_graph *g, const struct ssd_element *sys,
                    const struct ssd_connection *c)
{
        struct end a = { 0 }, b = { 0 };
        struct sg_edge e = { .c = c };
        size_t na, nb, k;
        int r;

        r = end_of(l, sys, c->start_element, c->start_connector, c->line, &a);
        if (r == 0)
                r = end_of(l, sys, c->end_element, c->end_connector, c->line, &b);
        if (r == 0)
                r = direction(l, c, &a, &b);
        if (r == 0)
                r = sg_node(g, &a.node, &na);
        if (r == 0)
                r = sg_node(g, &b.node, &nb);
        if (r < 0 || r == 1)
                goto out;
        e.from = a.role == ROLE_SOURCE ? na : nb;
        e.to = a.role == ROLE_SOURCE ? nb : na;
        e.parameter = a.parameter;
        if (g->nodes[e.to].in != SIZE_MAX) {
                const struct ssd_connection *o = g->edges[g->nodes[e.to].in].c;

                /* Its ends too: the line alone is ambiguous when connections share one. */
                r = sc_err(l, l->label, c->line, a.role == ROLE_SINK ? a.name : b.name,
                           "fed twice: also by the connection at line %d (%s%s%s to %s%s%s)",
                           o->line, o->start_element ? o->start_element : "",
                           o->start_element ? "." : "", o->start_connector,
                           o->end_element ? o->end_element : "", o->end_element ? "." : "",
                           o->end_connector);
                goto out;
        }
        r = sg_edge(g, &e, &k);
        if (r == 0)
                g->nodes[e.to].in = k;
out:
        free(a.name);
        free(b.name);
        return r == -ENOSPC ? -ENOMEM : r;
}

static int add_system(struct sc_load *l, struct sg_graph *g, const struct ssd_element *sys)
{
        int bad = 0, r;

        for (size_t i = 0; i < sys->n_connections; i++) {
                if (g->n_edges >= l->opts->max_connections)
                        return sc_err(l, l->label, sys->connections[i].line, NULL,
                                      "more than %zu connections", l->opts->max_connections);
                r = add_edge(l, g, sys, &sys->connections[i]);
                if (r == -ENOMEM)
                        return r;
                bad |= r < 0;
        }
        for (size_t i = 0; i < sys->n_elements; i++) {
                if (sys->elements[i].kind != SSD_SYSTEM)
                        continue;
                r = add_system(l, g, &sys->elements[i]);
                if (r == -ENOMEM)
                        return r;
                bad |= r < 0;
        }
        return bad ? -EINVAL : 0;
}

/* The FMU variable behind a VAR node. */
static const struct md_variable *node_var(const struct sc_load *l, const struct sg_node *n,
                                          const struct md **ret_md)
{
        *ret_md = l->s->components[n->comp].fmu->md;
        return &(*ret_md)->vars[n->var];
}

/* The unit at a node: the variable's, else its declared connector's; NULL: none. */
static const struct md_unit *node_unit(const struct sc_load *l, const struct sg_node *n,
                                       struct md_unit *scratch)
{
        const struct md *md;
        const char *name;
        const struct md_unit *u;

        if (n->kind == SG_VAR) {
                u = sc_var_unit_of(l, n->comp, node_var(l, n, &md), &name);
        } else {
                name = n->conn->unit;
                u = name ? sc_unit(l, NULL, name) : NULL;
        }
        if (!name)
                return NULL;
        if (u)
                return u;
        /* A unit without a definition converts only to itself (by name). */
        *scratch = (struct md_unit){ .name = (char *)name };
        return scratch;
}

struct fold {
        const char *what;               /* "a.y -> b.u", for messages */
        double factor, offset;
        bool transformed;               /* a LinearTransformation on the way */
        bool relative;                  /* relativeQuantity: conversions drop offsets */
};

/* One edge of the path; *cur is the value's unit so far (kept in *store when undefined). */
static int fold_hop(struct sc_load *l, const struct sg_graph *g, const struct sg_edge *e,
                    const struct md_unit **cur, struct md_unit *store, struct fold *f)
{
        struct md_unit scratch;
        const struct md_unit *to = node_unit(l, &g->nodes[e->to], &scratch);
        double c, d;
        char a[160], b[160];

        if (to && *cur && !e->c->suppress_unit_conversion) {
                if (scenario_unit_convert(*cur, to, &c, &d) < 0)
                        return sc_err(l, l->label, e->c->line, f->what,
                                      "no unit conversion from %s to %s: the base units differ",
                                      sc_unit_str(*cur, a, sizeof(a)), sc_unit_str(to, b, sizeof(b)));
                if (f->relative)
                        d = 0;
                f->factor *= c;
                f->offset = c * f->offset + d;
        }
        if (to == &scratch) {
                *store = scratch;
                to = store;
        }
        if (to)
                *cur = to;
        if (e->c->has_transformation) {
                f->factor *= e->c->factor;
                f->offset = e->c->factor * f->offset + e->c->offset;
                f->transformed = true;
        }
        return 0;
}

static int check_shape(struct sc_load *l, int line, const struct md *ma, const struct md_variable *a,
                       const char *na, const struct md *mb, const struct md_variable *b,
                       const char *nb)
{
        uint64_t da[MAX_DIMS], db[MAX_DIMS];
        int ka = sc_var_dims(ma, a, da, MAX_DIMS), kb = sc_var_dims(mb, b, db, MAX_DIMS);
        char sa[96], sb[96];

        /* Sized by structural parameters: checked once they are set (sc_structural). */
        if (sc_var_structural(a) || sc_var_structural(b))
                return 0;
        if (ka >= 0 && ka == kb && memcmp(da, db, (size_t)ka * sizeof(*da)) == 0)
                return 0;
        return sc_err(l, l->label, line, NULL, "shape mismatch: '%s' is %s, '%s' is %s", na,
                      scenario_dims_str(da, ka, sa, sizeof(sa)), nb, scenario_dims_str(db, kb, sb, sizeof(sb)));
}

/* Types, transformation and shape of the path from src to dst (both VAR nodes). */
static int check_path(struct sc_load *l, int line, const struct sg_node *src,
                      const struct sg_node *dst, const struct fold *f)
{
        const struct md *ma, *mb;
        const struct md_variable *a = node_var(l, src, &ma), *b = node_var(l, dst, &mb);
        const char *ca = l->s->components[src->comp].name, *cb = l->s->components[dst->comp].name;
        bool floats = md_type_is_float(a->type) && md_type_is_float(b->type);
        char na[256], nb[256];

        snprintf(na, sizeof(na), "%s.%s", ca, a->name);
        snprintf(nb, sizeof(nb), "%s.%s", cb, b->name);
        /* An output Clock ticks a triggered input Clock (FMI 3.0 section 2.2.8.2). */
        if (a->type == MD_CLOCK && b->type == MD_CLOCK &&
            b->attrs.clock.interval_variability != MD_INTERVAL_TRIGGERED)
                return sc_err(l, l->label, line, nb, "a connected input Clock must be triggered "
                              "(intervalVariability=\"triggered\"): the FMU times its "
                              "time-based Clocks itself (FMI 3.0 section 2.2.8.2)");
        /* Per path: a connector of kind unspecified on the way says nothing of it (direction()). */
        if (b->causality == MD_CAUSALITY_PARAMETER && a->causality == MD_CAUSALITY_OUTPUT)
                return sc_err(l, l->label, line, nb, "'%s' feeds the parameter '%s': a parameter "
                              "is fed by a calculated parameter, not by an output", na, nb);
        if (a->type != b->type && !(floats && f->transformed))
                return sc_err(l, l->label, line, nb, "type mismatch: %s '%s' feeds %s '%s' (types "
                              "must match; a LinearTransformation converts between Float32 and "
                              "Float64)",
                              md_type_name(a->type), na, md_type_name(b->type), nb);
        if ((f->transformed || f->factor != 1 || f->offset != 0) && !floats)
                return sc_err(l, l->label, line, nb, "a LinearTransformation or unit conversion "
                              "applies to Float32/Float64 only, not to %s '%s'",
                              md_type_name(md_type_is_float(a->type) ? b->type : a->type),
                              md_type_is_float(a->type) ? nb : na);
        return check_shape(l, line, ma, a, na, mb, b, nb);
}

/* Declared types of system connectors on the way must admit the value's type. */
static int check_sys_types(struct sc_load *l, const struct sg_graph *g, const size_t *path,
                           size_t n, enum md_type t)
{
        for (size_t i = 0; i < n; i++) {
                const struct sg_node *to = &g->nodes[g->edges[path[i]].to];

                if (to->kind == SG_SYS && !sc_type_fits(to->conn->type, to->conn->exact, t))
                        return sc_err(l, l->label, to->conn->line, to->conn->name,
                                      "connector of system '%s' has type %s, but the value "
                                      "flowing through it is %s", to->sys->name,
                                      sc_ssd_type_name(to->conn->type, to->conn->exact),
                                      md_type_name(t));
        }
        return 0;
}

/* The connection ending at sink node k, whose path (edge indices, source first) is path. */
static int make(struct sc_load *l, const struct sg_graph *g, const size_t *path, size_t n,
                struct scenario_connection *ret)
{
        const struct sg_node *src = &g->nodes[g->edges[path[0]].from];
        const struct sg_node *dst = &g->nodes[g->edges[path[n - 1]].to];
        const struct md *ma, *mb;
        const struct md_variable *a = node_var(l, src, &ma), *b = node_var(l, dst, &mb);
        const struct ssd_connection *last = g->edges[path[n - 1]].c;
        struct fold f = { .factor = 1, .relative = a->attrs.relative_quantity ||
                                                   b->attrs.relative_quantity };
        struct md_unit scratch, store;
        const struct md_unit *cur = node_unit(l, src, &scratch);
        char what[512];
        int r = 0;

        snprintf(what, sizeof(what), "%s.%s -> %s.%s", l->s->components[src->comp].name, a->name,
                 l->s->components[dst->comp].name, b->name);
        f.what = what;
        if (cur == &scratch) {
                store = scratch;
                cur = &store;
        }
        for (size_t i = 0; i < n && r == 0; i++)
                r = fold_hop(l, g, &g->edges[path[i]], &cur, &store, &f);
        if (r == 0)
                r = check_sys_types(l, g, path, n, a->type);
        if (r == 0)
                r = check_path(l, last->line, src, dst, &f);
        if (r < 0)
                return r;
        *ret = (struct scenario_connection){
                .from_comp = src->comp, .from_var = src->var,
                .to_comp = dst->comp, .to_var = dst->var,
                .from_type = a->type, .to_type = b->type,
                .elements = md_var_elements(ma, a),
                .factor = f.factor, .offset = f.offset,
                .identity = !f.transformed && f.factor == 1 && f.offset == 0 && a->type == b->type,
                /* Set once in Initialization Mode where it feeds a parameter; else moved at every point. */
                .parameter = b->causality == MD_CAUSALITY_PARAMETER,
                .origin = sc_origin(l->label, last->line),
        };
        return ret->origin ? 0 : -ENOMEM;
}

/*
 * Walk back from sink node k to the component output feeding it. Returns
 * the path length (0: nothing feeds it), or -EINVAL for a loop of system
 * connectors.
 */
static int walk(struct sc_load *l, const struct sg_graph *g, size_t k, size_t *path)
{
        size_t n = 0, at = k;

        while (g->nodes[at].in != SIZE_MAX) {
                if (n == g->n_edges)
                        return sc_err(l, l->label, g->edges[g->nodes[k].in].c->line, NULL,
                                      "the connections through system connectors form a loop");
                path[n++] = g->nodes[at].in;
                at = g->edges[g->nodes[at].in].from;
        }
        if (g->nodes[at].kind != SG_VAR)
                return 0;       /* an unconnected system input: k keeps its start value */
        for (size_t i = 0; i < n / 2; i++) {
                size_t t = path[i];

                path[i] = path[n - 1 - i];
                path[n - 1 - i] = t;
        }
        return (int)n;
}

static int cmp_conn(const void *x, const void *y)
{
        const struct scenario_connection *a = x, *b = y;

        if (a->to_comp != b->to_comp)
                return a->to_comp < b->to_comp ? -1 : 1;
        return a->to_var < b->to_var ? -1 : a->to_var > b->to_var;
}

static int build(struct sc_load *l, const struct sg_graph *g)
{
        struct scenario *s = l->s;
        size_t *path;
        int bad = 0, r = 0;

        s->connections = calloc(g->n_nodes + 1, sizeof(*s->connections));
        path = calloc(g->n_edges + 1, sizeof(*path));
        if (!s->connections || !path) {
                free(path);
                return -ENOMEM;
        }
        for (size_t k = 0; k < g->n_nodes && r != -ENOMEM; k++) {
                if (g->nodes[k].kind != SG_VAR || g->nodes[k].in == SIZE_MAX)
                        continue;
                r = walk(l, g, k, path);
                if (r > 0)
                        r = make(l, g, path, (size_t)r, &s->connections[s->n_connections]);
                if (r == 0 && s->connections[s->n_connections].origin)
                        s->n_connections++;
                bad |= r < 0;
        }
        free(path);
        qsort(s->connections, s->n_connections, sizeof(*s->connections), cmp_conn);
        return r == -ENOMEM ? r : bad ? -EINVAL : 0;
}

int sc_connections(struct sc_load *l)
{
        struct sg_graph g;
        int r;

        r = sg_init(&g, l->opts->max_connections);
        if (r < 0)
                return r;
        /* Build from the edges that passed, so their problems are found too. */
        r = add_system(l, &g, &l->doc.root);
        if (r != -ENOMEM) {
                int rb = build(l, &g);

                r = rb == -ENOMEM ? rb : r < 0 ? r : rb;
        }
        sg_fini(&g);
        return r;
}
