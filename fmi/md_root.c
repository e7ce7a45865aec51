/*
 * md_root: the document-level parts of a model description: the root
 * element's attributes, the interface elements (CoSimulation with its
 * capability flags, ModelExchange, ScheduledExecution), LogCategories and
 * DefaultExperiment. FMI 3.0 sections 2.4.1, 2.4.2, 2.4.5, 2.4.6, 4.4;
 * FMI 2.0 sections 2.2.1, 2.2.4, 2.2.5, 3.3, 4.3.
 */
#include "md_ctx.h"

#include <stdlib.h>
#include <string.h>

struct flag {
        const char *name;
        size_t off;             /* of a bool in struct md_cosim */
};

#define FLAG(n, f) { n, offsetof(struct md_cosim, f) }

/* FMI 3.0 section 2.4.2 (common) and 4.4 (Co-Simulation only). */
static const struct flag cs_flags3[] = {
        FLAG("needsExecutionTool", needs_execution_tool),
        FLAG("canBeInstantiatedOnlyOncePerProcess", can_be_instantiated_only_once_per_process),
        FLAG("canGetAndSetFMUState", can_get_and_set_fmu_state),
        FLAG("canSerializeFMUState", can_serialize_fmu_state),
        FLAG("providesDirectionalDerivatives", provides_directional_derivatives),
        FLAG("providesAdjointDerivatives", provides_adjoint_derivatives),
        FLAG("providesPerElementDependencies", provides_per_element_dependencies),
        FLAG("providesEvaluateDiscreteStates", provides_evaluate_discrete_states),
        FLAG("canHandleVariableCommunicationStepSize", can_handle_variable_communication_step_size),
        FLAG("providesIntermediateUpdate", provides_intermediate_update),
        FLAG("mightReturnEarlyFromDoStep", might_return_early_from_do_step),
        FLAG("canReturnEarlyAfterIntermediateUpdate", can_return_early_after_intermediate_update),
        FLAG("hasEventMode", has_event_mode),
};

/* FMI 2.0 section 4.3 (the spelling of the standard, typos included). */
static const struct flag cs_flags2[] = {
        FLAG("needsExecutionTool", needs_execution_tool),
        FLAG("canHandleVariableCommunicationStepSize", can_handle_variable_communication_step_size),
        FLAG("canInterpolateInputs", can_interpolate_inputs),
        FLAG("canRunAsynchronuously", can_run_asynchronuously),
        FLAG("canBeInstantiatedOnlyOncePerProcess", can_be_instantiated_only_once_per_process),
        FLAG("canNotUseMemoryManagementFunctions", can_not_use_memory_management_functions),
        FLAG("canGetAndSetFMUstate", can_get_and_set_fmu_state),
        FLAG("canSerializeFMUstate", can_serialize_fmu_state),
        FLAG("providesDirectionalDerivative", provides_directional_derivatives),
};

static bool is_c_identifier(const char *s)
{
        size_t n = strlen(s);

        if (n == 0)
                return false;
        for (size_t i = 0; i < n; i++) {
                char ch = s[i];
                bool alpha = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || ch == '_';

                if (!alpha && (i == 0 || ch < '0' || ch > '9'))
                        return false;
        }
        return true;
}

/* modelIdentifier of an interface element; it becomes a library file name. */
static void read_model_identifier(struct md_ctx *c, const xmlNode *n, char **ret)
{
        const char *sec = SEC(c, "2.4.2", n && mx_is(n, "ModelExchange") ? "3.3" : "4.3");
        const char *id = md_attr(c, n, "modelIdentifier");
        char buf[MD_SHOW_LEN];

        if (!id) {
                md_err(c, mx_line(n), mx_name(n), sec,
                       "missing required attribute modelIdentifier");
                return;
        }
        if (!is_c_identifier(id)) {
                md_err(c, mx_line(n), mx_name(n), sec,
                       "modelIdentifier=\"%s\" is not a C identifier ([A-Za-z_][A-Za-z0-9_]*); "
                       "it names the FMU's shared library", md_show(id, buf));
                return;
        }
        /* FMI sets no length; a file name does (NAME_MAX, 255 bytes). */
        if (strlen(id) > MD_MAX_MODEL_IDENTIFIER) {
                md_err(c, mx_line(n), mx_name(n), sec,
                       "modelIdentifier=\"%s\" has %zu characters: its shared library's file "
                       "name (with \".so\") would be longer than 255 bytes, which Linux refuses",
                       md_show(id, buf), strlen(id));
                return;
        }
        if (ret && !(*ret = strdup(id)))
                c->nomem = true;
}

/*
 * FMI 3.0 renamed "FMUstate" to "FMUState" and "providesDirectionalDerivative"
 * to "...Derivatives". A flag in the other version's spelling would read as
 * false without a word: warn that it is ignored, naming the spelling to use.
 */
static void other_spelling(struct md_ctx *c, const xmlNode *n, bool v3)
{
        static const char *const pairs[][2] = {
                { "canGetAndSetFMUstate", "canGetAndSetFMUState" },
                { "canSerializeFMUstate", "canSerializeFMUState" },
                { "providesDirectionalDerivative", "providesDirectionalDerivatives" },
        };

        for (size_t i = 0; i < sizeof(pairs) / sizeof(*pairs); i++) {
                const char *other = pairs[i][v3 ? 0 : 1], *own = pairs[i][v3 ? 1 : 0];

                if (md_attr(c, n, other))
                        md_warn(c, mx_line(n), "CoSimulation", SEC(c, "4.4", "4.3"),
                                "%s is the FMI %s spelling and is ignored; FMI %s reads %s", other,
                                v3 ? "2.0" : "3.0", v3 ? "3.0" : "2.0", own);
        }
}

static void read_cosim(struct md_ctx *c, const xmlNode *n)
{
        bool v3 = c->md->fmi == MD_FMI3;
        const struct flag *flags = v3 ? cs_flags3 : cs_flags2;
        size_t n_flags = v3 ? sizeof(cs_flags3) / sizeof(*flags)
                            : sizeof(cs_flags2) / sizeof(*flags);
        const char *sec = SEC(c, "4.4", "4.3");
        struct md_cosim *cs = &c->md->cs;
        int line = mx_line(n);

        cs->present = true;
        c->md->cs_declared = true;
        read_model_identifier(c, n, &cs->model_identifier);
        for (size_t i = 0; i < n_flags; i++) {
                bool *f = (bool *)((char *)cs + flags[i].off);

                md_attr_bool(c, n, "CoSimulation", flags[i].name, sec, f);
        }
        md_attr_u32(c, n, "CoSimulation", "maxOutputDerivativeOrder", sec,
                    &cs->max_output_derivative_order);
        other_spelling(c, n, v3);
        if (!v3)
                return;
        if (md_attr_double(c, n, "CoSimulation", "fixedInternalStepSize", sec,
                           &cs->fixed_internal_step_size) == 1) {
                cs->has_fixed_internal_step_size = true;
                if (!(cs->fixed_internal_step_size > 0))
                        md_err(c, line, "CoSimulation", sec,
                               "fixedInternalStepSize must be greater than 0");
        }
        if (md_attr_i32(c, n, "CoSimulation", "recommendedIntermediateInputSmoothness", sec,
                        &cs->recommended_intermediate_input_smoothness) == 1)
                cs->recommended_intermediate_input_smoothness_given = true;
        if (cs->can_serialize_fmu_state && !cs->can_get_and_set_fmu_state)
                md_err(c, line, "CoSimulation", "2.4.2",
                       "canSerializeFMUState=\"true\" requires canGetAndSetFMUState=\"true\"");
        if (cs->can_return_early_after_intermediate_update && !cs->provides_intermediate_update)
                md_err(c, line, "CoSimulation", "4.4",
                       "canReturnEarlyAfterIntermediateUpdate=\"true\" requires "
                       "providesIntermediateUpdate=\"true\"");
}

static void check_unique_categories(struct md_ctx *c, int line)
{
        const struct md *md = c->md;
        size_t *idx = md_sort_by_name(md->log_categories, md->n_log_categories,
                                      sizeof(*md->log_categories),
                                      offsetof(struct md_log_category, name));

        if (!idx) {
                c->nomem = true;
                return;
        }
        for (size_t k = 1; k < md->n_log_categories; k++) {
                const char *name = md->log_categories[idx[k]].name;

                if (strcmp(md->log_categories[idx[k - 1]].name, name) == 0 &&
                    (k == 1 || strcmp(md->log_categories[idx[k - 2]].name, name) != 0))
                        md_err(c, line, name, SEC(c, "2.4.5", "2.2.4"),
                               "log category name is not unique");
        }
        free(idx);
}

static void read_log_categories(struct md_ctx *c, const xmlNode *logs)
{
        const char *sec = SEC(c, "2.4.5", "2.2.4");
        struct md *md = c->md;
        size_t n = mx_count(logs, "Category");

        if (n == 0)
                return;
        md->log_categories = calloc(n, sizeof(*md->log_categories));
        if (!md->log_categories) {
                c->nomem = true;
                return;
        }
        for (const xmlNode *e = mx_first(logs); e && !c->nomem; e = mx_next(e)) {
                struct md_log_category *lc;
                const char *name;

                if (!mx_is(e, "Category"))
                        continue;
                name = md_attr(c, e, "name");
                if (!name || !*name) {
                        md_err(c, mx_line(e), NULL, sec, "Category without a name");
                        continue;
                }
                lc = &md->log_categories[md->n_log_categories++];
                md_attr_dup(c, e, "name", &lc->name);
                md_attr_dup(c, e, "description", &lc->description);
        }
        if (!c->nomem)
                check_unique_categories(c, mx_line(logs));
}

static void read_default_experiment(struct md_ctx *c, const xmlNode *e)
{
        struct md_default_experiment *x = &c->md->default_experiment;
        const char *sec = SEC(c, "2.4.6", "2.2.5");

        c->md->has_default_experiment = true;
        x->has_start = md_attr_double(c, e, "DefaultExperiment", "startTime", sec, &x->start) == 1;
        x->has_stop = md_attr_double(c, e, "DefaultExperiment", "stopTime", sec, &x->stop) == 1;
        x->has_tolerance = md_attr_double(c, e, "DefaultExperiment", "tolerance", sec,
                                          &x->tolerance) == 1;
        x->has_step = md_attr_double(c, e, "DefaultExperiment", "stepSize", sec, &x->step) == 1;
}

static void read_attrs(struct md_ctx *c)
{
        static const char *const naming[] = { "flat", "structured" };
        const char *sec = SEC(c, "2.4.1", "2.2.1");
        const xmlNode *r = c->root;
        struct md *md = c->md;
        int line = mx_line(r), k;

        if (md_attr_dup(c, r, "modelName", &md->model_name) == 0)
                md_err(c, line, NULL, sec, "missing required attribute modelName");
        /* The other version's name is a likely mistake: say so, rather than only "missing". */
        if (md_attr_dup(c, r, SEC(c, "instantiationToken", "guid"), &md->instantiation_token) == 0)
                md_err(c, line, NULL, sec, "missing required attribute %s%s",
                       SEC(c, "instantiationToken", "guid"),
                       !md_attr(c, r, SEC(c, "guid", "instantiationToken")) ? "" :
                       SEC(c, " (guid is its FMI 2.0 name)", " (instantiationToken is its FMI 3.0 name)"));
        md_attr_dup(c, r, "description", &md->description);
        md_attr_dup(c, r, "author", &md->author);
        md_attr_dup(c, r, "version", &md->version);
        md_attr_dup(c, r, "copyright", &md->copyright);
        md_attr_dup(c, r, "license", &md->license);
        md_attr_dup(c, r, "generationTool", &md->generation_tool);
        md_attr_dup(c, r, "generationDateAndTime", &md->generation_date_and_time);
        if (md_attr_enum(c, r, NULL, "variableNamingConvention", sec, naming, 2, &k) == 1)
                md->naming = (enum md_naming)k;
        if (md->fmi == MD_FMI2)
                md_attr_u32(c, r, NULL, "numberOfEventIndicators", sec,
                            &md->number_of_event_indicators);
}

/* The first child named 'name'; a second one is an error. */
static const xmlNode *section(struct md_ctx *c, const char *name)
{
        const xmlNode *found = NULL;

        for (const xmlNode *e = mx_first(c->root); e; e = mx_next(e)) {
                if (!mx_is(e, name))
                        continue;
                if (!found)
                        found = e;
                else
                        md_err(c, mx_line(e), name, SEC(c, "2.4.1", "2.2.1"),
                               "element appears more than once");
        }
        return found;
}

int md_read_root(struct md_ctx *c)
{
        const xmlNode *cs, *me, *se = NULL, *e;
        const char *sec = SEC(c, "2.4.1", "2.2.1");

        read_attrs(c);
        cs = section(c, "CoSimulation");
        me = section(c, "ModelExchange");
        if (c->md->fmi == MD_FMI3)
                se = section(c, "ScheduledExecution");
        if (cs)
                read_cosim(c, cs);
        if (me) {
                c->md->has_model_exchange = true;
                read_model_identifier(c, me, &c->md->me_model_identifier);
                md_attr_bool(c, me, "ModelExchange", "needsCompletedIntegratorStep",
                             SEC(c, "3.3", "3.3"), &c->md->me_needs_completed_integrator_step);
        }
        if (se) {
                c->md->has_scheduled_execution = true;
                read_model_identifier(c, se, &c->md->se_model_identifier);
        }
        if (!cs && !me && !se)
                md_err(c, mx_line(c->root), NULL, sec, "%s",
                       c->md->fmi == MD_FMI3
                       ? "none of ModelExchange, CoSimulation or ScheduledExecution is present"
                       : "neither ModelExchange nor CoSimulation is present");
        /* Without CoSimulation the description is still valid: whether fmud runs it is fmu.c's call. */
        e = section(c, "LogCategories");
        if (e)
                read_log_categories(c, e);
        e = section(c, "DefaultExperiment");
        if (e)
                read_default_experiment(c, e);
        c->units = section(c, "UnitDefinitions");
        c->types = section(c, "TypeDefinitions");
        c->vars = section(c, "ModelVariables");
        c->structure = section(c, "ModelStructure");
        if (!c->vars && c->md->fmi == MD_FMI2)
                md_err(c, mx_line(c->root), NULL, sec, "missing required element ModelVariables");
        if (!c->structure)
                md_err(c, mx_line(c->root), NULL, sec, "missing required element ModelStructure");
        return c->nomem ? -1 : 0;
}
