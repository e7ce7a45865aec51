/*
 * proto_values: the requests that name variables and values (get, set,
 * subscribe, unsubscribe) and restore: round trips, bounds on the names,
 * embedded NULs, and what each requires.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "proto_fixture.h"

static struct msg m;
static struct pw w;
static void *mem;
static char err[256];

static void setup(void)
{
        cr_assert(pw_init(&w) == 0);
        mem = NULL;
        err[0] = '\0';
}

static void teardown(void)
{
        msg_fini(&m);
        pw_fini(&w);
        free(mem);
}

TestSuite(proto_values, .init = setup, .fini = teardown);

#define S(lit) ((struct proto_str){ (lit), sizeof(lit) - 1 })

typedef void args_fn(struct pw *w);

static const struct pv *args_of(enum proto_op op, uint32_t n, args_fn *fn)
{
        proto_req_begin(&w, 9, op, n);
        fn(&w);
        return msg_req(&m, &w, op, 9);
}

Test(proto_values, get_round_trips)
{
        static const struct proto_str names[] = { S("Plant.x"), S("Ctrl.u[2]") };
        struct proto_get a = { { 7, 1 }, 2, names }, b;

        proto_get_encode(&w, 4, &a);
        cr_assert(proto_get_decode(msg_req(&m, &w, PROTO_OP_GET, 4), &b, &mem, err,
                                   sizeof(err)) == 0, "%s", err);
        cr_assert(b.t.session == 7 && b.n == 2 && str_eq(b.names[1], "Ctrl.u[2]"));
        cr_assert((const void *)b.names == mem);
}

static void encode_names(enum proto_op op, uint32_t n, bool nul)
{
        proto_req_begin(&w, 1, op, 2);
        pw_str(&w, "session");
        pw_u64(&w, 1);
        pw_str(&w, "names");
        pw_array(&w, n);
        for (uint32_t i = 0; i < n; i++) {
                if (nul && i == n - 1)
                        pw_strn(&w, "a\0", 2);
                else
                        pw_str(&w, "a.x");
        }
}

Test(proto_values, get_and_subscribe_bound_their_names)
{
        struct proto_subscribe sb;
        struct proto_get gb;

        encode_names(PROTO_OP_GET, PROTO_MAX_NAMES, false);
        cr_assert(proto_get_decode(msg_req(&m, &w, PROTO_OP_GET, 1), &gb, &mem, err,
                                   sizeof(err)) == 0, "%s", err);
        cr_assert(gb.n == PROTO_MAX_NAMES);
        msg_fini(&m);
        free(mem);
        mem = NULL;
        encode_names(PROTO_OP_GET, PROTO_MAX_NAMES + 1, false);
        cr_assert(proto_get_decode(msg_req(&m, &w, PROTO_OP_GET, 1), &gb, &mem, err,
                                   sizeof(err)) == -EBADMSG);
        cr_assert(mem == NULL && strstr(err, "args.names") != NULL, "%s", err);
        msg_fini(&m);
        encode_names(PROTO_OP_SUBSCRIBE, PROTO_MAX_NAMES + 1, false);
        cr_assert(proto_subscribe_decode(msg_req(&m, &w, PROTO_OP_SUBSCRIBE, 1), &sb, &mem, err,
                                         sizeof(err)) == -EBADMSG);
        msg_fini(&m);
        encode_names(PROTO_OP_GET, 3, true);
        cr_assert(proto_get_decode(msg_req(&m, &w, PROTO_OP_GET, 1), &gb, &mem, err,
                                   sizeof(err)) == -EBADMSG);
        cr_assert(strstr(err, "args.names[2]: embedded NUL") != NULL, "%s", err);
}

Test(proto_values, get_needs_names)
{
        struct proto_target t = { 1, 0 };
        struct proto_get gb;

        proto_target_encode(&w, 1, PROTO_OP_GET, &t);
        cr_assert(proto_get_decode(msg_req(&m, &w, PROTO_OP_GET, 1), &gb, &mem, err,
                                   sizeof(err)) == -EBADMSG);
        cr_assert(strstr(err, "args.names: missing") != NULL, "%s", err);
}

Test(proto_values, set_round_trips_any_value)
{
        struct pv arr_items[2] = { { .type = PV_FLOAT, .f = 1.5 }, { .type = PV_INT, .i = -2 } };
        struct pv vals[4] = {
                { .type = PV_FLOAT, .f = 3.25 },
                { .type = PV_BOOL, .b = true },
                { .type = PV_STR, .s = { "on", 2 } },
                { .type = PV_ARRAY, .a = { arr_items, 2 } },
        };
        struct proto_named_value nv[4] = {
                { S("P.k"), &vals[0] }, { S("P.on"), &vals[1] },
                { S("P.mode"), &vals[2] }, { S("P.v"), &vals[3] },
        };
        struct proto_set a = { { 2, 3 }, 4, nv }, b;

        proto_set_encode(&w, 5, &a);
        cr_assert(proto_set_decode(msg_req(&m, &w, PROTO_OP_SET, 5), &b, &mem, err,
                                   sizeof(err)) == 0, "%s", err);
        cr_assert(b.t.session == 2 && b.t.generation == 3 && b.n == 4);
        for (int i = 0; i < 4; i++) {
                cr_assert(b.values[i].name.len == nv[i].name.len &&
                          !memcmp(b.values[i].name.ptr, nv[i].name.ptr, nv[i].name.len));
                cr_assert(pv_equal(b.values[i].value, nv[i].value), "value %d", i);
        }
}

static void set_int_name(struct pw *p)
{
        pw_str(p, "values");
        pw_map(p, 1);
        pw_u64(p, 1);
        pw_f64(p, 1);
}

static void set_nul_name(struct pw *p)
{
        pw_str(p, "values");
        pw_map(p, 1);
        pw_strn(p, "P.\0k", 4);
        pw_f64(p, 1);
}

static void set_array(struct pw *p)
{
        pw_str(p, "values");
        pw_array(p, 0);
}

Test(proto_values, set_refuses_bad_names)
{
        struct proto_set b;

        cr_assert(proto_set_decode(args_of(PROTO_OP_SET, 1, set_int_name), &b, &mem, err,
                                   sizeof(err)) == -EBADMSG);
        cr_assert(strstr(err, "args.values") != NULL, "%s", err);
        msg_fini(&m);
        cr_assert(proto_set_decode(args_of(PROTO_OP_SET, 1, set_nul_name), &b, &mem, err,
                                   sizeof(err)) == -EBADMSG);
        cr_assert(strstr(err, "NUL") != NULL, "%s", err);
        msg_fini(&m);
        cr_assert(proto_set_decode(args_of(PROTO_OP_SET, 1, set_array), &b, &mem, err,
                                   sizeof(err)) == -EBADMSG);
        cr_assert(strstr(err, "args.values") != NULL, "%s", err);
}

Test(proto_values, subscribe_unsubscribe_restore_round_trip)
{
        static const struct proto_str names[] = { S("Plant.x") };
        struct proto_subscribe sa = { { 1, 2 }, 1, names, 10, true }, sb;
        struct proto_subscribe all = { { 1, 2 }, 0, NULL, 0, false };
        struct proto_unsubscribe ua = { { 1, 2 }, S("s1.3") }, ub;
        struct proto_restore ra = { { 1, 2 }, 77 }, rb;

        proto_subscribe_encode(&w, 1, &sa);
        cr_assert(proto_subscribe_decode(msg_req(&m, &w, PROTO_OP_SUBSCRIBE, 1), &sb, &mem, err,
                                         sizeof(err)) == 0, "%s", err);
        cr_assert(sb.n == 1 && str_eq(sb.names[0], "Plant.x") && sb.decimation == 10);
        cr_assert(sb.every_point, "everyPoint lost");
        msg_fini(&m);
        free(mem);
        mem = NULL;
        proto_subscribe_encode(&w, 2, &all);
        cr_assert(proto_subscribe_decode(msg_req(&m, &w, PROTO_OP_SUBSCRIBE, 2), &sb, &mem, err,
                                         sizeof(err)) == 0, "%s", err);
        cr_assert(sb.n == 0 && sb.names == NULL && sb.decimation == 0 && mem == NULL);
        cr_assert(!sb.every_point, "everyPoint appeared");
        msg_fini(&m);
        proto_unsubscribe_encode(&w, 3, &ua);
        cr_assert(proto_unsubscribe_decode(msg_req(&m, &w, PROTO_OP_UNSUBSCRIBE, 3), &ub, err,
                                           sizeof(err)) == 0, "%s", err);
        cr_assert(str_eq(ub.topic, "s1.3") && ub.t.generation == 2);
        msg_fini(&m);
        proto_restore_encode(&w, 4, &ra);
        cr_assert(proto_restore_decode(msg_req(&m, &w, PROTO_OP_RESTORE, 4), &rb, err,
                                       sizeof(err)) == 0, "%s", err);
        cr_assert(rb.snapshot == 77 && rb.t.session == 1);
}

Test(proto_values, restore_needs_a_snapshot)
{
        struct proto_target t = { 1, 0 };
        struct proto_restore rb;

        proto_target_encode(&w, 1, PROTO_OP_RESTORE, &t);
        cr_assert(proto_restore_decode(msg_req(&m, &w, PROTO_OP_RESTORE, 1), &rb, err,
                                       sizeof(err)) == -EBADMSG);
        cr_assert(strstr(err, "args.snapshot") != NULL, "%s", err);
}

Test(proto_values, list_and_shutdown_take_no_arguments)
{
        struct proto_target t;

        proto_req_begin(&w, 1, PROTO_OP_SHUTDOWN, 0);
        cr_assert(msg_req(&m, &w, PROTO_OP_SHUTDOWN, 1)->m.n == 0);
        msg_fini(&m);
        proto_req_begin(&w, 2, PROTO_OP_LIST, 0);
        cr_assert(proto_target_decode(msg_req(&m, &w, PROTO_OP_LIST, 2), &t, err, sizeof(err)) == 0);
}
