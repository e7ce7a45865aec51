/* inspect_flags: the capability flags in the order FMI 3.0 section 4.4 lists them. */
#include "inspect.h"

size_t inspect_cosim_flags(const struct md *md, struct inspect_flag out[INSPECT_MAX_FLAGS])
{
        const struct md_cosim *cs = &md->cs;
        size_t n = 0;

#define FLAG(xml, field) out[n++] = (struct inspect_flag){ xml, cs->field }
        FLAG("needsExecutionTool", needs_execution_tool);
        FLAG("canBeInstantiatedOnlyOncePerProcess", can_be_instantiated_only_once_per_process);
        FLAG(md->fmi == MD_FMI3 ? "canGetAndSetFMUState" : "canGetAndSetFMUstate", can_get_and_set_fmu_state);
        FLAG(md->fmi == MD_FMI3 ? "canSerializeFMUState" : "canSerializeFMUstate", can_serialize_fmu_state);
        FLAG(md->fmi == MD_FMI3 ? "providesDirectionalDerivatives" : "providesDirectionalDerivative",
             provides_directional_derivatives);
        FLAG("canHandleVariableCommunicationStepSize", can_handle_variable_communication_step_size);
        if (md->fmi == MD_FMI3) {
                FLAG("providesAdjointDerivatives", provides_adjoint_derivatives);
                FLAG("providesPerElementDependencies", provides_per_element_dependencies);
                FLAG("providesIntermediateUpdate", provides_intermediate_update);
                FLAG("mightReturnEarlyFromDoStep", might_return_early_from_do_step);
                FLAG("canReturnEarlyAfterIntermediateUpdate", can_return_early_after_intermediate_update);
                FLAG("hasEventMode", has_event_mode);
                FLAG("providesEvaluateDiscreteStates", provides_evaluate_discrete_states);
        } else {
                FLAG("canInterpolateInputs", can_interpolate_inputs);
                FLAG("canRunAsynchronuously", can_run_asynchronuously);
                FLAG("canNotUseMemoryManagementFunctions", can_not_use_memory_management_functions);
        }
#undef FLAG
        return n;
}
