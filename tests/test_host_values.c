/*
 * host: get and set by name on a session's instances, every FMI type
 * (Feedthrough: one input/output pair per type, a matrix and a vector),
 * and every refusal: unknown name, wrong type, out of range, inexact,
 * wrong state, a variable the worker refuses to set.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_host_drv.h"

#include "test_host_vals.h"

Test(host_values, get_every_type)
{
        static const char *const names[] = {
                "Float32_output", "Float64_output", "Int8_output", "UInt8_output", "Int64_output",
                "UInt64_output", "Boolean_output", "String_output", "Binary_output",
                "Enumeration_output", "Float64_matrix_output", "Float64_vector_output",
                "Feedthrough.Int16_output",
        };
        struct proto_get_result v;
        struct hdrv d;
        struct hrep rep;
        void *mem = NULL;
        int64_t i;
        uint64_t s;

        hdrv_init(&d, NULL);
        s = hdrv_load(&d, FT, NULL, NULL);
        hv_get(&d, s, names, 13, &rep, &v, &mem);
        cr_assert(v.values[0]->type == PV_FLOAT && v.values[0]->f == 1.5);
        cr_assert(v.values[1]->type == PV_FLOAT && v.values[1]->f == 2.5);
        cr_assert(v.values[2]->type == PV_INT && v.values[2]->i == -8);
        cr_assert(v.values[3]->type == PV_UINT && v.values[3]->u == 8);
        cr_assert(v.values[4]->type == PV_INT && v.values[4]->i == -64);
        cr_assert(v.values[5]->type == PV_UINT && v.values[5]->u == 64);
        cr_assert(v.values[6]->type == PV_BOOL && v.values[6]->b);
        cr_assert(v.values[7]->type == PV_STR && v.values[7]->s.len == 5 &&
                  !memcmp(v.values[7]->s.ptr, "hello", 5));
        cr_assert(v.values[8]->type == PV_BIN && v.values[8]->s.len == 2 &&
                  !memcmp(v.values[8]->s.ptr, "\xca\xfe", 2));
        cr_assert(pv_i64(v.values[9], &i) == 0 && i == 2);
        cr_assert(v.values[10]->type == PV_ARRAY && v.values[10]->a.n == 6);
        cr_assert(v.values[10]->a.items[3].type == PV_FLOAT && v.values[10]->a.items[3].f == 1.1);
        cr_assert(v.values[11]->type == PV_ARRAY && v.values[11]->a.n == 4 &&
                  v.values[11]->a.items[3].f == 4);
        cr_assert(v.values[12]->type == PV_INT && v.values[12]->i == -16);
        free(mem);
        hrep_fini(&rep);
        hdrv_fini(&d);
}

Test(host_values, set_reaches_the_outputs_at_the_next_point)
{
        static const char *const names[] = { "UInt64_output", "Int64_output", "Float64_output",
                                             "String_output", "Binary_output", "Boolean_output",
                                             "Float64_matrix_output", "Float32_output",
                                             "Float64_input", "length" };
        struct pv m[6];
        struct proto_get_result v;
        struct hdrv d;
        struct hrep rep;
        void *mem = NULL;
        uint64_t s;

        hdrv_init(&d, NULL);
        s = hdrv_load(&d, FT, NULL, NULL);
        hv_set_ok(&d, s, "UInt64_input", PVU(UINT64_MAX));
        hv_set_ok(&d, s, "Int64_input", PVI(INT64_MIN));
        hv_set_ok(&d, s, "Float64_input", PVU(7));         /* an int, exact in a Float */
        hv_set_ok(&d, s, "String_input", PVS("world"));
        hv_set_ok(&d, s, "Binary_input", ((struct pv){ .type = PV_BIN, .s = { "\x01\x02\x03", 3 } }));
        hv_set_ok(&d, s, "Boolean_input", PVB(false));
        hv_set_ok(&d, s, "Float32_input", PVF(0.1));
        for (int k = 0; k < 6; k++)
                m[k] = PVF(10.0 + k);
        hv_set_ok(&d, s, "Float64_matrix_input", ((struct pv){ .type = PV_ARRAY, .a = { m, 6 } }));
        /*
         * Until the next step FMI 3.0 forbids gets: a value set is answered
         * as set (7 as a float), an output as published at the point (the
         * value before the set), any other is refused.
         */
        hv_get(&d, s, names + 8, 1, &rep, &v, &mem);
        cr_assert(v.values[0]->type == PV_FLOAT && v.values[0]->f == 7);
        free(mem);
        hrep_fini(&rep);
        hv_get(&d, s, names + 2, 1, &rep, &v, &mem);
        cr_assert(v.values[0]->type == PV_FLOAT && v.values[0]->f == 2.5);
        free(mem);
        hrep_fini(&rep);
        hv_get(&d, s, names + 9, 1, &rep, NULL, NULL);
        (void) hrep_err(&rep, PROTO_E_STATE);
        hrep_fini(&rep);
        hv_step(&d, s, 1);
        hv_get(&d, s, names + 8, 1, &rep, &v, &mem);
        cr_assert(v.values[0]->f == 7);
        free(mem);
        hrep_fini(&rep);
        hv_get(&d, s, names, 8, &rep, &v, &mem);
        cr_assert(v.values[0]->type == PV_UINT && v.values[0]->u == UINT64_MAX);
        cr_assert(v.values[1]->type == PV_INT && v.values[1]->i == INT64_MIN);
        cr_assert(v.values[2]->f == 7);
        cr_assert(v.values[3]->s.len == 5 && !memcmp(v.values[3]->s.ptr, "world", 5));
        cr_assert(v.values[4]->s.len == 3 && !memcmp(v.values[4]->s.ptr, "\x01\x02\x03", 3));
        cr_assert(!v.values[5]->b);
        cr_assert(v.values[6]->a.items[5].f == 15);
        cr_assert(v.values[7]->f == (double)0.1f);
        free(mem);
        hrep_fini(&rep);
        hdrv_fini(&d);
}

Test(host_values, refusals)
{
        struct pv three[3] = { PVF(1), PVF(2), PVF(3) };
        struct hdrv d;
        struct hrep rep;
        const char *msg;
        const char *const unknown[] = { "Float64_output", "nope" };
        uint64_t s;

        hdrv_init(&d, NULL);
        /* Paced and long: once resumed, it is still running when the set comes. */
        s = hdrv_load(&d, FT, NULL, &(struct proto_load){ .has_warp = true, .warp = 1,
                                                          .has_stop = true, .stop = 1000,
                                                          .has_step = true, .step = 0.01 });
        msg = hv_set_err(&d, s, "Int32_input", PVF(1.0), PROTO_E_TYPE);
        cr_assert(strstr(msg, "Int32_input") && strstr(msg, "Int32") && strstr(msg, "float"), "%s", msg);
        msg = hv_set_err(&d, s, "UInt8_input", PVU(300), PROTO_E_TYPE);
        cr_assert(strstr(msg, "UInt8") && strstr(msg, "uint"), "%s", msg);
        (void) hv_set_err(&d, s, "UInt8_input", PVI(-1), PROTO_E_TYPE);
        (void) hv_set_err(&d, s, "Int8_input", PVI(-129), PROTO_E_TYPE);
        (void) hv_set_err(&d, s, "Float64_input", PVS("1"), PROTO_E_TYPE);
        (void) hv_set_err(&d, s, "Float64_input", PVU((1ull << 53) + 1), PROTO_E_TYPE);
        (void) hv_set_err(&d, s, "Boolean_input", PVU(1), PROTO_E_TYPE);
        (void) hv_set_err(&d, s, "Float64_matrix_input", ((struct pv){ .type = PV_ARRAY, .a = { three, 3 } }),
                          PROTO_E_TYPE);
        (void) hv_set_err(&d, s, "Float64_matrix_input", PVF(1), PROTO_E_TYPE);
        msg = hv_set_err(&d, s, "nope", PVF(1), PROTO_E_NO_VARIABLE);
        cr_assert(strstr(msg, "'nope'"), "%s", msg);
        (void) hv_set_err(&d, s, "other.Float64_input", PVF(1), PROTO_E_NO_VARIABLE);
        /* A structural parameter that would resize a recorded array: refused, saying why. */
        hv_step(&d, s, 1);
        msg = hv_set_err(&d, s, "n", PVU(3), PROTO_E_INVALID);
        cr_assert(strstr(msg, "from [4] to [3]"), "%s", msg);
        hv_get(&d, s, unknown, 2, &rep, NULL, NULL);
        (void) hrep_err(&rep, PROTO_E_NO_VARIABLE);
        hrep_fini(&rep);
        /*
         * Running: set takes what it takes while paused and refuses the rest
         * alike (the structural parameter, a value of the wrong type), with
         * the run going on; get served.
         */
        hdrv_target(&d, PROTO_OP_RESUME, s, 0, &rep);
        cr_assert(rep.r.ok);
        hrep_fini(&rep);
        msg = hv_set_err(&d, s, "n", PVU(3), PROTO_E_INVALID);
        cr_assert(strstr(msg, "from [4] to [3]"), "%s", msg);
        msg = hv_set_err(&d, s, "Int32_input", PVF(1.0), PROTO_E_TYPE);
        cr_assert(strstr(msg, "'Int32_input' is Int32"), "%s", msg);
        hv_set_ok(&d, s, "Float64_input", PVF(1));
        hv_get(&d, s, unknown, 1, &rep, NULL, NULL);
        cr_assert(rep.r.ok);
        hrep_fini(&rep);
        hdrv_fini(&d);
}

Test(host_values, an_input_the_input_file_drives_is_refused_with_its_column)
{
        const char *const names[] = { "Float64_output" };
        struct proto_get_result v;
        struct hrep rep;
        struct hdrv d;
        const char *msg;
        void *mem = NULL;
        char *csv = NULL;
        FILE *f;
        uint64_t s;

        hdrv_init(&d, NULL);
        cr_assert(asprintf(&csv, "%s/in.csv", d.out) > 0);
        f = fopen(csv, "w");
        cr_assert(f != NULL);
        fprintf(f, "time,Float64_input\n0,5\n10,5\n");
        cr_assert(fclose(f) == 0);
        s = hdrv_load(&d, FT, NULL, &(struct proto_load){ .has_stop = true, .stop = 1,
                                                          .has_step = true, .step = 0.01,
                                                          .input = { csv, (uint32_t)strlen(csv) } });
        hv_step(&d, s, 1);
        /* The file puts 5 in before every step: a set would be undone at the next. */
        msg = hv_set_err(&d, s, "Float64_input", PVF(7), PROTO_E_INVALID);
        cr_assert(strstr(msg, "'Float64_input' is driven by the input file's column "
                          "'Float64_input'") != NULL, "%s", msg);
        /* The inputs beside it are set as ever. */
        hv_set_ok(&d, s, "Int32_input", PVI(3));
        hv_step(&d, s, 1);
        hv_get(&d, s, names, 1, &rep, &v, &mem);
        cr_assert(v.values[0]->f == 5, "%g", v.values[0]->f);
        free(mem);
        hrep_fini(&rep);
        free(csv);
        hdrv_fini(&d);
}

Test(host_values, a_rig_input_port_is_refused_with_its_port)
{
        static const struct proto_str ins[] = { { "Float64_input", 13 }, { "Int32_input", 11 } };
        static const struct proto_assign start = { { "Int32_input", 11 }, { "9", 1 } };
        const char *const names[] = { "Float64_output", "Int32_output" };
        struct proto_get_result v;
        struct hrep rep;
        struct hdrv d;
        const char *msg;
        void *mem = NULL;
        uint64_t s;

        hdrv_init(&d, NULL);
        s = hdrv_load(&d, FT, NULL, &(struct proto_load){ .has_stop = true, .stop = 1,
                                                          .has_step = true, .step = 0.01,
                                                          .n_rig_in = 2, .rig_in = ins,
                                                          .n_starts = 1, .starts = &start });
        hv_step(&d, s, 2);
        /* No rig has written: the inputs keep what initialization gave them, not 0. */
        hv_get(&d, s, names, 2, &rep, &v, &mem);
        cr_assert(v.values[0]->f == 2.5, "%g", v.values[0]->f);
        cr_assert((v.values[1]->type == PV_INT && v.values[1]->i == 9) ||
                  (v.values[1]->type == PV_UINT && v.values[1]->u == 9));
        free(mem);
        hrep_fini(&rep);
        /* The rig's value (or its policy's) goes in before every step. */
        msg = hv_set_err(&d, s, "Float64_input", PVF(7), PROTO_E_INVALID);
        cr_assert(strstr(msg, "'Float64_input' is the rig port 'Float64_input'") != NULL, "%s",
                  msg);
        hv_set_ok(&d, s, "Int8_input", PVI(3));
        hdrv_fini(&d);
}

Test(host_values, a_multirate_output_between_its_points_is_the_held_value)
{
        static const char *const names[] = { "slow.x", "fast.x" };
        struct proto_get_result v;
        struct hdrv d;
        struct hrep rep;
        void *mem = NULL;
        uint64_t s;

        hdrv_init(&d, NULL);
        s = hdrv_load(&d, HDRV_EXAMPLE("multirate"), NULL, NULL);
        /* slow (multirate 5, k = 0.5) stepped to 0.05 at t = 0; its consumers see x(0) until then. */
        hv_step(&d, s, 1);
        hv_get(&d, s, names, 2, &rep, &v, &mem);
        cr_assert(v.values[0]->type == PV_FLOAT && v.values[0]->f == 1.0, "slow.x = %.17g",
                  v.values[0]->f);
        cr_assert(v.values[1]->f == exp(-0.01), "fast.x = %.17g", v.values[1]->f);
        free(mem);
        hrep_fini(&rep);
        hv_step(&d, s, 4);
        hv_get(&d, s, names, 1, &rep, &v, &mem);
        cr_assert(v.values[0]->f == exp(-0.5 * 0.05), "slow.x = %.17g", v.values[0]->f);
        free(mem);
        hrep_fini(&rep);
        hdrv_fini(&d);
}

/* LinearOde "lin" beside Misbehave "bad", which fails (fmi3Error) in the step from 0.05. */
static char *fault_ssd(struct hdrv *d, const char *settings_attrs)
{
        char *ssd = NULL;
        FILE *f;

        cr_assert(asprintf(&ssd, "%s/fault.ssd", d->out) > 0);
        f = fopen(ssd, "w");
        cr_assert(f != NULL);
        fprintf(f, "<?xml version=\"1.0\"?>\n"
                "<ssd:SystemStructureDescription version=\"1.0\" name=\"fault\" "
                "xmlns:ssd=\"http://ssp-standard.org/SSP1/SystemStructureDescription\" "
                "xmlns:ssc=\"http://ssp-standard.org/SSP1/SystemStructureCommon\" "
                "xmlns:ssv=\"http://ssp-standard.org/SSP1/SystemStructureParameterValues\" "
                "xmlns:fmud=\"urn:fmud:ssp:settings\">\n"
                "<ssd:System name=\"fault\"><ssd:Elements>\n"
                "<ssd:Component name=\"lin\" source=\"%s\"/>\n"
                "<ssd:Component name=\"bad\" source=\"%s\"><ssd:ParameterBindings>"
                "<ssd:ParameterBinding><ssd:ParameterValues>"
                "<ssv:ParameterSet version=\"1.0\" name=\"p\"><ssv:Parameters>"
                "<ssv:Parameter name=\"fault\"><ssv:Integer value=\"11\"/></ssv:Parameter>"
                "<ssv:Parameter name=\"at\"><ssv:Real value=\"0.05\"/></ssv:Parameter>"
                "<ssv:Parameter name=\"u\"><ssv:Real value=\"1\"/></ssv:Parameter>"
                "</ssv:Parameters></ssv:ParameterSet></ssd:ParameterValues>"
                "</ssd:ParameterBinding></ssd:ParameterBindings></ssd:Component>\n"
                "</ssd:Elements></ssd:System>\n"
                "<ssd:DefaultExperiment startTime=\"0\" stopTime=\"1\"/>\n"
                "<ssd:Annotations><ssc:Annotation type=\"org.fmud.settings\">"
                "<fmud:Settings version=\"1\" stepSize=\"0.01\" %s>"
                "<fmud:Record variable=\"lin.x\"/><fmud:Record variable=\"bad.x\"/>"
                "</fmud:Settings></ssc:Annotation></ssd:Annotations>\n"
                "</ssd:SystemStructureDescription>\n",
                HDRV_FMU("LinearOde"), HDRV_FMU("Misbehave"), settings_attrs);
        cr_assert(fclose(f) == 0);
        return ssd;
}

/* Start session s and wait for its fault. */
static void run_to_fault(struct hdrv *d, uint64_t s)
{
        struct hrep rep;

        hdrv_target(d, PROTO_OP_START, s, 0, &rep);
        cr_assert(rep.r.ok);
        hrep_fini(&rep);
        hdrv_wait_state(d, s, PROTO_STATE_FAULTED);
}

Test(host_values, after_a_fault_get_answers_the_point_the_session_holds_at)
{
        static const char *const names[] = { "lin.x", "bad.x", "lin.der_x" };
        struct proto_get_result v;
        struct hdrv d;
        struct hrep rep;
        void *mem = NULL;
        char *ssd;
        uint64_t s;

        hdrv_init(&d, NULL);
        ssd = fault_ssd(&d, "");
        s = hdrv_load(&d, ssd, NULL, NULL);
        run_to_fault(&d, s);
        hv_get(&d, s, names, 3, &rep, &v, &mem);
        /* lin's FMU is at 0.06, the session at 0.05: recorded outputs are the point's. */
        cr_assert(fabs(v.values[0]->f - exp(-0.05)) < 1e-15, "lin.x = %.17g, exp(-0.06) = %.17g",
                  v.values[0]->f, exp(-0.06));
        cr_assert(fabs(v.values[1]->f - 0.05) < 1e-15, "bad.x = %.17g", v.values[1]->f);
        /* Without rollback, what the session does not track is the FMU's own, at 0.06. */
        cr_assert(fabs(v.values[2]->f + exp(-0.06)) < 1e-15, "lin.der_x = %.17g", v.values[2]->f);
        free(mem);
        hrep_fini(&rep);
        free(ssd);
        hdrv_fini(&d);
}

Test(host_values, with_rollback_on_fault_every_instance_is_back_at_the_point)
{
        static const char *const names[] = { "lin.der_x", "lin.x" };
        struct proto_get_result v;
        struct hdrv d;
        struct hrep rep;
        void *mem = NULL;
        char *ssd;
        uint64_t s;

        hdrv_init(&d, NULL);
        /* Asked for by the load argument, and by the scenario's setting. */
        for (int by_arg = 1; by_arg >= 0; by_arg--) {
                ssd = fault_ssd(&d, by_arg ? "" : "rollbackOnFault=\"true\"");
                s = hdrv_load(&d, ssd, NULL, &(struct proto_load){ .rollback_on_fault = by_arg });
                run_to_fault(&d, s);
                hv_get(&d, s, names, 2, &rep, &v, &mem);
                cr_assert(fabs(v.values[0]->f + exp(-0.05)) < 1e-15, "lin.der_x = %.17g",
                          v.values[0]->f);
                cr_assert(fabs(v.values[1]->f - exp(-0.05)) < 1e-15);
                free(mem);
                hrep_fini(&rep);
                free(ssd);
        }
        hdrv_fini(&d);
}

Test(host_values, numbers_an_fmu_would_not_get_as_given_are_refused)
{
        struct hdrv d;
        const char *msg;
        uint64_t s;

        hdrv_init(&d, NULL);
        s = hdrv_load(&d, FT, NULL, NULL);
        msg = hv_set_err(&d, s, "Float32_input", PVF(1e-50), PROTO_E_TYPE);
        cr_assert(strstr(msg, "'Float32_input'") && strstr(msg, "would become 0"), "%s", msg);
        msg = hv_set_err(&d, s, "Float32_input", PVF(1e300), PROTO_E_TYPE);
        cr_assert(strstr(msg, "would become an infinity"), "%s", msg);
        msg = hv_set_err(&d, s, "Float64_input", PVF(NAN), PROTO_E_TYPE);
        cr_assert(strstr(msg, "'Float64_input'") && strstr(msg, "NaN"), "%s", msg);
        /* Float32 rounds to its nearest value otherwise; an infinity is a number. */
        hv_set_ok(&d, s, "Float32_input", PVF(1e-30));
        hv_set_ok(&d, s, "Float64_input", PVF(INFINITY));
        hdrv_fini(&d);
}

/*
 * A request with a value the FMU's rules refuse now (an output) applies
 * none of its values, also those before it: the input keeps its value.
 */
Test(host_values, a_value_the_fmi_rules_refuse_fails_the_whole_request)
{
        static const char *const out[] = { "Float64_output" };
        struct proto_named_value nv[] = { { hv_str("Float64_input"), &PVF(5) },
                                          { hv_str("Float32_output"), &PVF(1) } };
        struct proto_get_result v;
        struct hdrv d;
        struct hrep rep;
        void *mem = NULL;
        uint64_t s;

        hdrv_init(&d, NULL);
        s = hdrv_load(&d, FT, NULL, NULL);
        hv_step(&d, s, 1);
        hv_set(&d, s, nv, 2, &rep);
        cr_assert(strstr(hrep_err(&rep, PROTO_E_INVALID), "'Float32_output' is an output"),
                  "%.*s", (int)rep.r.message_len, rep.r.message);
        hrep_fini(&rep);
        hv_step(&d, s, 1);
        hv_get(&d, s, out, 1, &rep, &v, &mem);
        cr_assert(v.values[0]->type == PV_FLOAT && v.values[0]->f == 2.5, "%g", v.values[0]->f);
        free(mem);
        hrep_fini(&rep);
        hdrv_fini(&d);
}

/* The same for a clocked input, which only Event Mode takes: u1 before it keeps its value. */
Test(host_values, a_clocked_input_between_points_fails_the_whole_request)
{
        static const char *const u1[] = { "u1" };
        struct proto_named_value nv[] = { { hv_str("u1"), &PVF(3) }, { hv_str("cu"), &PVF(5) } };
        struct proto_get_result v;
        struct hdrv d;
        struct hrep rep;
        void *mem = NULL;
        double before;
        uint64_t s;

        hdrv_init(&d, NULL);
        s = hdrv_load(&d, HDRV_FMU("ClockedDeriv"), NULL, NULL);
        hv_step(&d, s, 1);
        hv_get(&d, s, u1, 1, &rep, &v, &mem);
        before = v.values[0]->f;
        cr_assert(before != 3);
        free(mem);
        hrep_fini(&rep);
        hv_set(&d, s, nv, 2, &rep);
        cr_assert(strstr(hrep_err(&rep, PROTO_E_INVALID), "'cu' is clocked"),
                  "%.*s", (int)rep.r.message_len, rep.r.message);
        hrep_fini(&rep);
        hv_get(&d, s, u1, 1, &rep, &v, &mem);
        cr_assert(v.values[0]->f == before, "%g", v.values[0]->f);
        free(mem);
        hrep_fini(&rep);
        hdrv_fini(&d);
}
