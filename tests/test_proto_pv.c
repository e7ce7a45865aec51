/*
 * proto_pv: conversions of decoded values that never lose information,
 * pv_strdup, and the wire spellings of operations, errors and states.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"

Test(proto_pv, pv_f64_takes_ints_only_when_exact)
{
        struct pv v = { .type = PV_UINT, .u = 1ull << 53 };
        double d;

        cr_assert(pv_f64(&v, &d) == 0 && d == 9007199254740992.0);
        v.u = (1ull << 53) + 1;
        cr_assert(pv_f64(&v, &d) == -EPROTOTYPE);
        v.u = 1ull << 63;
        cr_assert(pv_f64(&v, &d) == 0 && d == 9223372036854775808.0);
        v.u = UINT64_MAX;
        cr_assert(pv_f64(&v, &d) == -EPROTOTYPE);
        v = (struct pv){ .type = PV_INT, .i = INT64_MIN };
        cr_assert(pv_f64(&v, &d) == 0 && d == -9223372036854775808.0);
        v.i = -(1ll << 53) - 1;
        cr_assert(pv_f64(&v, &d) == -EPROTOTYPE);
        v.i = INT64_MAX;
        cr_assert(pv_f64(&v, &d) == -EPROTOTYPE);
        v = (struct pv){ .type = PV_FLOAT, .f = -0.5 };
        cr_assert(pv_f64(&v, &d) == 0 && d == -0.5);
        v = (struct pv){ .type = PV_STR, .s = { "1", 1 } };
        cr_assert(pv_f64(&v, &d) == -EPROTOTYPE);
        cr_assert(pv_f64(NULL, &d) == -EPROTOTYPE);
}

Test(proto_pv, integer_conversions_refuse_what_does_not_fit)
{
        struct pv v = { .type = PV_UINT, .u = UINT64_MAX };
        uint64_t u;
        int64_t i;
        bool b;

        cr_assert(pv_u64(&v, &u) == 0 && u == UINT64_MAX);
        cr_assert(pv_i64(&v, &i) == -EPROTOTYPE);
        v.u = INT64_MAX;
        cr_assert(pv_i64(&v, &i) == 0 && i == INT64_MAX);
        v = (struct pv){ .type = PV_INT, .i = -3 };
        cr_assert(pv_u64(&v, &u) == -EPROTOTYPE);
        cr_assert(pv_i64(&v, &i) == 0 && i == -3);
        v = (struct pv){ .type = PV_FLOAT, .f = 2.0 };
        cr_assert(pv_u64(&v, &u) == -EPROTOTYPE, "a float is not an integer");
        cr_assert(pv_bool(&v, &b) == -EPROTOTYPE);
        v = (struct pv){ .type = PV_BOOL, .b = true };
        cr_assert(pv_bool(&v, &b) == 0 && b);
        cr_assert(pv_u64(&v, &u) == -EPROTOTYPE);
}

Test(proto_pv, pv_strdup_refuses_embedded_nul)
{
        struct pv v = { .type = PV_STR, .s = { "ab\0c", 4 } };
        char *s;

        cr_assert(pv_strdup(&v) == NULL);
        v.s.len = 2;
        s = pv_strdup(&v);
        cr_assert(s && !strcmp(s, "ab"));
        free(s);
        v.s.len = 0;
        s = pv_strdup(&v);
        cr_assert(s && !strcmp(s, ""));
        free(s);
        v.type = PV_BIN;
        cr_assert(pv_strdup(&v) == NULL);
        cr_assert(pv_is_str(&(struct pv){ .type = PV_STR, .s = { "op", 2 } }, "op"));
        cr_assert(!pv_is_str(&(struct pv){ .type = PV_BIN, .s = { "op", 2 } }, "op"));
        cr_assert(!pv_is_str(&(struct pv){ .type = PV_STR, .s = { "opx", 3 } }, "op"));
}

Test(proto_pv, names_round_trip)
{
        for (int i = 0; i < PROTO_OP_COUNT; i++) {
                const char *s = proto_op_name((enum proto_op)i);

                cr_assert(s && proto_op_parse(s, strlen(s)) == i);
        }
        for (int i = 0; i < PROTO_E_COUNT; i++) {
                const char *s = proto_err_name((enum proto_err)i);

                cr_assert(s && proto_err_parse(s, strlen(s)) == i);
        }
        for (int i = 0; i < PROTO_STATE_COUNT; i++) {
                const char *s = proto_state_name((enum proto_state)i);

                cr_assert(s && proto_state_parse(s, strlen(s)) == i);
        }
        for (int i = 0; i < PROTO_LAYER_STATE_COUNT; i++) {
                const char *s = proto_layer_state_name((enum proto_layer_state)i);

                cr_assert(s && proto_layer_state_parse(s, strlen(s)) == i);
        }
        cr_assert(!strcmp(proto_op_name(PROTO_OP_RUN_UNTIL), "run-until"));
        cr_assert(!strcmp(proto_err_name(PROTO_E_BAD_REQUEST), "bad-request"));
        cr_assert(!strcmp(proto_err_name(PROTO_E_NO_VARIABLE), "no-variable"));
        cr_assert(proto_op_name(PROTO_OP_COUNT) == NULL);
        cr_assert(proto_op_parse("hello\0", 6) == -1);
        cr_assert(proto_op_parse("hell", 4) == -1);
        cr_assert(proto_err_parse("nope", 4) == -1);
}
