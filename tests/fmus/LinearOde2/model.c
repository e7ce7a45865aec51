/*
 * LinearOde2: the FMI 2.0 twin of LinearOde: the same equations, value
 * references and start values (see LinearOde/model.c), built against the
 * FMI 2.0 front end, with its own GUID.
 */
#define LINEAR_ODE_TOKEN "{8f3c6a41-2d0e-4b7a-9c15-5e1f0a7d3b02}"
#define LINEAR_ODE_FMI2

#include "../LinearOde/model.c"
