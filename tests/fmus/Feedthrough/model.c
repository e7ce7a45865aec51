/*
 * Feedthrough: one input and one output of every FMI 3.0 type, each output
 * equal to its input after every fmi3DoStep and in Initialization Mode,
 * for tests of value transport (types, arrays, strings, binaries,
 * structural parameters and resizing).
 *
 *   <Type>_output = <Type>_input     for Float32 .. UInt64, Boolean,
 *                                    String, Binary, Enumeration (Color)
 *   Float64_matrix_output[3][2] = Float64_matrix_input[3][2]  (row-major)
 *   Float64_vector_output[n]    = Float64_vector_input[n]
 *
 * n is a tunable structural parameter (start 4, at most 64): set it in
 * Configuration Mode (from Instantiated) or Reconfiguration Mode (from
 * Step Mode). Resizing keeps the first min(old, new) elements of both
 * vectors and zeroes the rest. `length` is a tunable Float64 parameter in
 * unit m (declared type Length, display unit mm) that no equation uses;
 * so is `stage.length`, a flat name with a dot (a component "x" has
 * "x.stage.length", as a component "x.stage" has "x.stage.length").
 *
 * Value references (input, output): time 0, Float32 1 2, Float64 3 4,
 * Int8 5 6, UInt8 7 8, Int16 9 10, UInt16 11 12, Int32 13 14, UInt32 15 16,
 * Int64 17 18, UInt64 19 20, Boolean 21 22, String 23 24, Binary 25 26,
 * Enumeration 27 28, Float64_matrix 29 30, n 31, Float64_vector 32 33,
 * length 34, stage.length 35.
 */
#include <string.h>

#include "model.h"

#define VECTOR_CAP 64
#define MATRIX_ROWS 3
#define MATRIX_COLS 2

struct model_data {
        float f32_in, f32_out;
        double f64_in, f64_out;
        int8_t i8_in, i8_out;
        uint8_t u8_in, u8_out;
        int16_t i16_in, i16_out;
        uint16_t u16_in, u16_out;
        int32_t i32_in, i32_out;
        uint32_t u32_in, u32_out;
        int64_t i64_in, i64_out;
        uint64_t u64_in, u64_out;
        bool b_in, b_out;
        struct var_string s_in, s_out;
        struct var_binary bin_in, bin_out;
        int64_t e_in, e_out;
        double m_in[MATRIX_ROWS][MATRIX_COLS], m_out[MATRIX_ROWS][MATRIX_COLS];
        uint64_t n;
        uint64_t n_configured;          /* n the vectors are sized for */
        double v_in[VECTOR_CAP], v_out[VECTOR_CAP];
        double length;
        double stage_length;
};

#define IN(vr, name, type, var, field) \
        VAR_SCALAR(vr, name "_input", type, VAR_INPUT, var, VAR_EXACT, field)
#define OUT(vr, name, type, var, field) \
        VAR_SCALAR(vr, name "_output", type, VAR_OUTPUT, var, VAR_CALCULATED, field)

static const struct var vars[] = {
        VAR_TIME(0),
        IN(1, "Float32", VAR_FLOAT32, VAR_CONTINUOUS, f32_in),
        OUT(2, "Float32", VAR_FLOAT32, VAR_CONTINUOUS, f32_out),
        IN(3, "Float64", VAR_FLOAT64, VAR_CONTINUOUS, f64_in),
        OUT(4, "Float64", VAR_FLOAT64, VAR_CONTINUOUS, f64_out),
        IN(5, "Int8", VAR_INT8, VAR_DISCRETE, i8_in),
        OUT(6, "Int8", VAR_INT8, VAR_DISCRETE, i8_out),
        IN(7, "UInt8", VAR_UINT8, VAR_DISCRETE, u8_in),
        OUT(8, "UInt8", VAR_UINT8, VAR_DISCRETE, u8_out),
        IN(9, "Int16", VAR_INT16, VAR_DISCRETE, i16_in),
        OUT(10, "Int16", VAR_INT16, VAR_DISCRETE, i16_out),
        IN(11, "UInt16", VAR_UINT16, VAR_DISCRETE, u16_in),
        OUT(12, "UInt16", VAR_UINT16, VAR_DISCRETE, u16_out),
        IN(13, "Int32", VAR_INT32, VAR_DISCRETE, i32_in),
        OUT(14, "Int32", VAR_INT32, VAR_DISCRETE, i32_out),
        IN(15, "UInt32", VAR_UINT32, VAR_DISCRETE, u32_in),
        OUT(16, "UInt32", VAR_UINT32, VAR_DISCRETE, u32_out),
        IN(17, "Int64", VAR_INT64, VAR_DISCRETE, i64_in),
        OUT(18, "Int64", VAR_INT64, VAR_DISCRETE, i64_out),
        IN(19, "UInt64", VAR_UINT64, VAR_DISCRETE, u64_in),
        OUT(20, "UInt64", VAR_UINT64, VAR_DISCRETE, u64_out),
        IN(21, "Boolean", VAR_BOOLEAN, VAR_DISCRETE, b_in),
        OUT(22, "Boolean", VAR_BOOLEAN, VAR_DISCRETE, b_out),
        IN(23, "String", VAR_STRING, VAR_DISCRETE, s_in),
        OUT(24, "String", VAR_STRING, VAR_DISCRETE, s_out),
        IN(25, "Binary", VAR_BINARY, VAR_DISCRETE, bin_in),
        OUT(26, "Binary", VAR_BINARY, VAR_DISCRETE, bin_out),
        IN(27, "Enumeration", VAR_INT64, VAR_DISCRETE, e_in),
        OUT(28, "Enumeration", VAR_INT64, VAR_DISCRETE, e_out),
        VAR_ARRAY(29, "Float64_matrix_input", VAR_FLOAT64, VAR_INPUT, VAR_CONTINUOUS,
                  VAR_EXACT, m_in, MATRIX_ROWS * MATRIX_COLS),
        VAR_ARRAY(30, "Float64_matrix_output", VAR_FLOAT64, VAR_OUTPUT, VAR_CONTINUOUS,
                  VAR_CALCULATED, m_out, MATRIX_ROWS * MATRIX_COLS),
        VAR_SCALAR(31, "n", VAR_UINT64, VAR_STRUCTURAL_PARAMETER, VAR_TUNABLE, VAR_EXACT, n),
        VAR_SIZED(32, "Float64_vector_input", VAR_FLOAT64, VAR_INPUT, VAR_CONTINUOUS,
                  VAR_EXACT, v_in, 31, VECTOR_CAP),
        VAR_SIZED(33, "Float64_vector_output", VAR_FLOAT64, VAR_OUTPUT, VAR_CONTINUOUS,
                  VAR_CALCULATED, v_out, 31, VECTOR_CAP),
        VAR_SCALAR(34, "length", VAR_FLOAT64, VAR_PARAMETER, VAR_TUNABLE, VAR_EXACT, length),
        VAR_SCALAR(35, "stage.length", VAR_FLOAT64, VAR_PARAMETER, VAR_TUNABLE, VAR_EXACT,
                   stage_length),
};

static void start(struct inst *inst)
{
        static const uint8_t binary_start[] = { 0xca, 0xfe };
        struct model_data *d = inst_data(inst);

        d->f32_in = 1.5f;
        d->f64_in = 2.5;
        d->i8_in = -8;
        d->u8_in = 8;
        d->i16_in = -16;
        d->u16_in = 16;
        d->i32_in = -32;
        d->u32_in = 32;
        d->i64_in = -64;
        d->u64_in = 64;
        d->b_in = true;
        var_string_init(&d->s_in, "hello");
        var_binary_init(&d->bin_in, binary_start, sizeof(binary_start));
        d->e_in = 2;    /* green */
        /* m_in[i][j] = i + j / 10, as in section 2.2.7.1's example. */
        for (int i = 0; i < MATRIX_ROWS; i++)
                for (int j = 0; j < MATRIX_COLS; j++)
                        d->m_in[i][j] = i + 0.1 * j;
        d->n = 4;
        d->n_configured = 4;
        for (int i = 0; i < 4; i++)
                d->v_in[i] = i + 1;
        d->length = 1.5;
        d->stage_length = 0.5;
}

static int calculate(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        d->f32_out = d->f32_in;
        d->f64_out = d->f64_in;
        d->i8_out = d->i8_in;
        d->u8_out = d->u8_in;
        d->i16_out = d->i16_in;
        d->u16_out = d->u16_in;
        d->i32_out = d->i32_in;
        d->u32_out = d->u32_in;
        d->i64_out = d->i64_in;
        d->u64_out = d->u64_in;
        d->b_out = d->b_in;
        d->s_out = d->s_in;
        d->bin_out.size = d->bin_in.size;
        memcpy(d->bin_out.bytes, d->bin_in.bytes, d->bin_in.size);
        d->e_out = d->e_in;
        memcpy(d->m_out, d->m_in, sizeof(d->m_out));
        memcpy(d->v_out, d->v_in, d->n * sizeof(d->v_in[0]));
        return 0;
}

static int do_step(struct inst *inst, struct step *step)
{
        (void) inst;
        (void) step;    /* the outputs follow in calculate() */
        return 0;
}

/* n changed: keep the common prefix, zero the rest of both vectors. */
static int configure(struct inst *inst)
{
        struct model_data *d = inst_data(inst);
        uint64_t keep = d->n < d->n_configured ? d->n : d->n_configured;

        for (uint64_t i = keep; i < VECTOR_CAP; i++) {
                d->v_in[i] = 0.0;
                d->v_out[i] = 0.0;
        }
        if (d->n != d->n_configured)
                inst_log(inst, FMU_OK, "resized the vectors from %llu to %llu elements",
                         (unsigned long long)d->n_configured, (unsigned long long)d->n);
        d->n_configured = d->n;
        return 0;
}

const struct model model = {
        .token = "{8f3c6a41-2d0e-4b7a-9c15-5e1f0a7d3b05}",
        .data_size = sizeof(struct model_data),
        .vars = vars,
        .n_vars = sizeof(vars) / sizeof(vars[0]),
        .caps = MODEL_CAN_GET_SET_STATE | MODEL_CAN_SERIALIZE_STATE,
        .start = start,
        .calculate = calculate,
        .do_step = do_step,
        .configure = configure,
};
