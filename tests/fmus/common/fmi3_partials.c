/*
 * fmi3_partials.c: partial derivatives (fmi3GetDirectionalDerivative,
 * fmi3GetAdjointDerivative, section 2.2.12) and per-element dependencies
 * (fmi3GetNumberOfVariableDependencies, fmi3GetVariableDependencies,
 * section 2.2.9) of a test FMU.
 *
 * DESIGN: the model gives one Jacobian entry at a time (its partial()
 * hook) and a static dependency table; this file does the FMI part:
 * states, argument checks, and the products
 *   directional: sensitivity_i = sum_j J(unknown_i, known_j) seed_j
 *   adjoint:     sensitivity_j = sum_i seed_i J(unknown_i, known_j)
 * summed in index order, so results are reproducible to the bit. Only
 * scalar float variables are supported (O(unknowns * knowns) hook calls;
 * fine for test models). A model without the capability flag refuses, as
 * before the hooks existed.
 */
#include <stddef.h>

#include "fmi3Functions.h"

#include "common.h"

static fmi3Status fail(struct inst *inst)
{
        inst_fail(inst);
        return fmi3Error;
}

/* Partial derivatives: Initialization, Event and Step Mode, and Terminated (2.2.12). */
#define PARTIAL_STATES (STATE_BIT(ST_INITIALIZATION) | STATE_BIT(ST_EVENT) | \
                        STATE_BIT(ST_STEP) | STATE_BIT(ST_TERMINATED))

/* Check that every vr names a scalar float variable; false after logging. */
static bool scalar_floats(struct inst *inst, const char *fn, const fmi3ValueReference vrs[],
                          size_t n)
{
        for (size_t i = 0; i < n; i++) {
                const struct var *v = inst_find_var(inst, vrs[i]);

                if (!v || (v->type != VAR_FLOAT64 && v->type != VAR_FLOAT32) ||
                    v->sized || v->count != 1) {
                        inst_log(inst, FMU_ERROR, "%s: value reference %u is not a scalar float "
                                 "variable", fn, vrs[i]);
                        return false;
                }
        }
        return true;
}

static fmi3Status partial(fmi3Instance instance, const char *fn, bool adjoint,
                          const fmi3ValueReference unknowns[], size_t nu,
                          const fmi3ValueReference knowns[], size_t nk,
                          const fmi3Float64 seed[], size_t n_seed,
                          fmi3Float64 sens[], size_t n_sens)
{
        struct inst *inst = instance;
        unsigned cap = adjoint ? MODEL_PROVIDES_ADJOINT : MODEL_PROVIDES_DIRECTIONAL;

        if (!inst)
                return fmi3Error;
        if (!(model.caps & cap) || !model.partial) {
                inst_log(inst, FMU_ERROR, "%s: %s is false", fn, adjoint ?
                         "providesAdjointDerivatives" : "providesDirectionalDerivatives");
                return fail(inst);
        }
        if (!inst_check_state(inst, fn, PARTIAL_STATES))
                return fail(inst);
        if ((nu && (!unknowns || (adjoint ? !seed : !sens))) ||
            (nk && (!knowns || (adjoint ? !sens : !seed)))) {
                inst_log(inst, FMU_ERROR, "%s: an array argument is NULL", fn);
                return fail(inst);
        }
        if (!scalar_floats(inst, fn, unknowns, nu) || !scalar_floats(inst, fn, knowns, nk))
                return fail(inst);
        if (n_seed != (adjoint ? nu : nk) || n_sens != (adjoint ? nk : nu)) {
                inst_log(inst, FMU_ERROR, "%s: nSeed = %zu and nSensitivity = %zu do not match "
                         "%zu unknowns and %zu knowns", fn, n_seed, n_sens, nu, nk);
                return fail(inst);
        }
        if (inst_refresh(inst) < 0)
                return fail(inst);
        for (size_t o = 0; o < n_sens; o++) {
                double sum = 0.0;

                for (size_t k = 0; k < n_seed; k++) {
                        size_t i = adjoint ? k : o, j = adjoint ? o : k;
                        double d;

                        if (model.partial(inst, inst_find_var(inst, unknowns[i]),
                                          inst_find_var(inst, knowns[j]), &d) < 0)
                                return fail(inst);
                        sum += d * seed[k];
                }
                sens[o] = sum;
        }
        return fmi3OK;
}

fmi3Status fmi3GetDirectionalDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[],
                                        size_t nUnknowns, const fmi3ValueReference knowns[],
                                        size_t nKnowns, const fmi3Float64 seed[], size_t nSeed,
                                        fmi3Float64 sensitivity[], size_t nSensitivity)
{
        return partial(instance, "fmi3GetDirectionalDerivative", false, unknowns, nUnknowns,
                       knowns, nKnowns, seed, nSeed, sensitivity, nSensitivity);
}

fmi3Status fmi3GetAdjointDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[],
                                    size_t nUnknowns, const fmi3ValueReference knowns[],
                                    size_t nKnowns, const fmi3Float64 seed[], size_t nSeed,
                                    fmi3Float64 sensitivity[], size_t nSensitivity)
{
        return partial(instance, "fmi3GetAdjointDerivative", true, unknowns, nUnknowns, knowns,
                       nKnowns, seed, nSeed, sensitivity, nSensitivity);
}

/*
 * Section 2.2.9: before fmi3ExitInitializationMode the initial
 * dependencies, after it the runtime ones.
 */
static bool initial_phase(const struct inst *inst)
{
        return inst->sim.state == ST_INSTANTIATED || inst->sim.state == ST_CONFIGURATION ||
               inst->sim.state == ST_INITIALIZATION;
}

/* Check the call; false after logging why it is refused. */
static bool dependencies_ok(struct inst *inst, const char *fn, fmi3ValueReference vr)
{
        if (!(model.caps & MODEL_PER_ELEMENT_DEPENDENCIES)) {
                inst_log(inst, FMU_ERROR, "%s: providesPerElementDependencies is false", fn);
                return false;
        }
        if (!inst_check_state(inst, fn, SETTLED_STATE))
                return false;
        if (!inst_find_var(inst, vr)) {
                inst_log(inst, FMU_ERROR, "%s: unknown value reference %u", fn, vr);
                return false;
        }
        return true;
}

/* The number of table entries of dependent vr in the current phase. */
static size_t count_dependencies(const struct inst *inst, fmi3ValueReference vr)
{
        bool initial = initial_phase(inst);
        size_t n = 0;

        for (size_t i = 0; i < model.n_dependencies; i++)
                if (model.dependencies[i].dependent == vr && model.dependencies[i].initial == initial)
                        n++;
        return n;
}

fmi3Status fmi3GetNumberOfVariableDependencies(fmi3Instance instance,
                                               fmi3ValueReference valueReference,
                                               size_t *nDependencies)
{
        struct inst *inst = instance;

        if (!inst)
                return fmi3Error;
        if (!dependencies_ok(inst, "fmi3GetNumberOfVariableDependencies", valueReference))
                return fail(inst);
        if (!nDependencies) {
                inst_log(inst, FMU_ERROR, "fmi3GetNumberOfVariableDependencies: nDependencies is NULL");
                return fail(inst);
        }
        *nDependencies = count_dependencies(inst, valueReference);
        return fmi3OK;
}

fmi3Status fmi3GetVariableDependencies(fmi3Instance instance, fmi3ValueReference dependent,
                                       size_t elementIndicesOfDependent[],
                                       fmi3ValueReference independents[],
                                       size_t elementIndicesOfIndependents[],
                                       fmi3DependencyKind dependencyKinds[],
                                       size_t nDependencies)
{
        const char *fn = "fmi3GetVariableDependencies";
        struct inst *inst = instance;
        bool initial;
        size_t k = 0;

        if (!inst)
                return fmi3Error;
        if (!dependencies_ok(inst, fn, dependent))
                return fail(inst);
        if (nDependencies != count_dependencies(inst, dependent)) {
                inst_log(inst, FMU_ERROR, "%s: nDependencies = %zu, but variable %u has %zu", fn,
                         nDependencies, dependent, count_dependencies(inst, dependent));
                return fail(inst);
        }
        if (nDependencies && (!elementIndicesOfDependent || !independents ||
                              !elementIndicesOfIndependents || !dependencyKinds)) {
                inst_log(inst, FMU_ERROR, "%s: an array argument is NULL", fn);
                return fail(inst);
        }
        initial = initial_phase(inst);
        for (size_t i = 0; i < model.n_dependencies; i++) {
                const struct dependency *d = &model.dependencies[i];

                if (d->dependent != dependent || d->initial != initial)
                        continue;
                elementIndicesOfDependent[k] = 0;       /* all elements: scalars */
                independents[k] = d->independent;
                elementIndicesOfIndependents[k] = 0;
                dependencyKinds[k] = (fmi3DependencyKind)d->kind;
                k++;
        }
        return fmi3OK;
}
