/*
 * fuzz_md: arbitrary bytes as a modelDescription.xml. Every input goes
 * through md_parse() with small limits; whatever md comes back, valid or
 * not, is walked with the lookups a caller would use on it, then freed.
 * Small limits keep each run cheap and put the limit paths within reach.
 */
#include <stddef.h>
#include <stdint.h>

#include "fmi/model_description.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk(const struct md *md)
{
        for (size_t i = 0; i < md->n_vars; i++) {
                const struct md_variable *v = &md->vars[i];

                (void)md_find_vr(md, v->vr);
                (void)md_find_vr_type(md, v->type, v->vr);
                (void)md_find_name(md, v->name);
                (void)md_var_elements(md, v);
                (void)md_type_name(v->type);
                (void)md_causality_name(v->causality);
                (void)md_variability_name(v->variability);
                (void)md_initial_name(v->initial);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct md_limits lim = {
                .max_bytes = 1 << 20,
                .max_variables = 1000,
                .max_array_elements = 1000,
                .max_string_bytes = 4096,
                .max_depth = 32,
        };
        struct diag_list diags;
        struct md *md = NULL;

        diag_list_init(&diags, 64);
        (void)md_parse(data, size, "fuzz.xml", &lim, &diags, &md);
        if (md)
                walk(md);
        md_free(md);
        diag_list_fini(&diags);
        return 0;
}
