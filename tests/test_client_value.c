/* fmud_value_parse() and fmud_value_format(): values as written on fmuctl's command line. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "client/fmud.h"

static struct pv *parse_ok(const char *text)
{
        struct pv *v = NULL;
        char err[128] = "";
        int r = fmud_value_parse(text, &v, err, sizeof(err));

        cr_assert(r == 0, "'%s': %d %s", text, r, err);
        cr_assert(v != NULL);
        return v;
}

static void parse_fails(const char *text, const char *why)
{
        struct pv *v = NULL;
        char err[128] = "";
        int r = fmud_value_parse(text, &v, err, sizeof(err));

        cr_assert(r == -EINVAL, "'%s' parsed (%d)", text, r);
        cr_assert(v == NULL);
        cr_assert(strstr(err, why) != NULL, "'%s': '%s' does not say '%s'", text, err, why);
}

static void is_str(const struct pv *v, const char *s)
{
        cr_assert(v->type == PV_STR, "type %d", v->type);
        cr_assert(v->s.len == strlen(s), "len %u, not %zu", v->s.len, strlen(s));
        cr_assert(memcmp(v->s.ptr, s, v->s.len) == 0);
}

Test(client_value, booleans)
{
        struct pv *t = parse_ok("true"), *f = parse_ok(" false ");

        cr_assert(t->type == PV_BOOL && t->b);
        cr_assert(f->type == PV_BOOL && !f->b);
        fmud_value_free(t);
        fmud_value_free(f);
}

Test(client_value, integers_keep_their_sign_and_range)
{
        struct pv *u = parse_ok("42"), *i = parse_ok("-3"), *h = parse_ok("0x1f");
        struct pv *max = parse_ok("18446744073709551615"), *min = parse_ok("-9223372036854775808");

        cr_assert(u->type == PV_UINT && u->u == 42);
        cr_assert(i->type == PV_INT && i->i == -3);
        cr_assert(h->type == PV_UINT && h->u == 31);
        cr_assert(max->type == PV_UINT && max->u == UINT64_MAX);
        cr_assert(min->type == PV_INT && min->i == INT64_MIN);
        fmud_value_free(u);
        fmud_value_free(i);
        fmud_value_free(h);
        fmud_value_free(max);
        fmud_value_free(min);
}

Test(client_value, integer_out_of_range_is_refused)
{
        parse_fails("18446744073709551616", "out of range");
        parse_fails("-9223372036854775809", "out of range");
}

Test(client_value, floats)
{
        struct pv *a = parse_ok("1.5"), *b = parse_ok("-2e-3"), *c = parse_ok("inf");
        struct pv *d = parse_ok("nan"), *e = parse_ok("-0.0");

        cr_assert(a->type == PV_FLOAT && a->f == 1.5);
        cr_assert(b->type == PV_FLOAT && b->f == -2e-3);
        cr_assert(c->type == PV_FLOAT && isinf(c->f) && c->f > 0);
        cr_assert(d->type == PV_FLOAT && isnan(d->f));
        cr_assert(e->type == PV_FLOAT && e->f == 0 && signbit(e->f));
        fmud_value_free(a);
        fmud_value_free(b);
        fmud_value_free(c);
        fmud_value_free(d);
        fmud_value_free(e);
}

Test(client_value, quoted_strings_and_escapes)
{
        struct pv *a = parse_ok("\"a b\""), *b = parse_ok("\"q\\\"x\\\\y\\n\\t\""), *c = parse_ok("\"42\"");

        is_str(a, "a b");
        is_str(b, "q\"x\\y\n\t");
        is_str(c, "42");
        fmud_value_free(a);
        fmud_value_free(b);
        fmud_value_free(c);
        parse_fails("\"unterminated", "unterminated");
        parse_fails("\"bad \\q escape\"", "escape");
        parse_fails("\"a\" b", "after the value");
}

Test(client_value, other_text_is_a_string)
{
        struct pv *a = parse_ok("hello world"), *b = parse_ok("1.0.0"), *c = parse_ok("truex");
        struct pv *d = parse_ok(""), *e = parse_ok("0x");

        is_str(a, "hello world");
        is_str(b, "1.0.0");
        is_str(c, "truex");
        is_str(d, "");
        is_str(e, "0x");
        fmud_value_free(a);
        fmud_value_free(b);
        fmud_value_free(c);
        fmud_value_free(d);
        fmud_value_free(e);
}

static void is_bin(const struct pv *v, const void *bytes, size_t len)
{
        cr_assert(v->type == PV_BIN, "type %d", v->type);
        cr_assert(v->s.len == len, "len %u, not %zu", v->s.len, len);
        cr_assert(len == 0 || memcmp(v->s.ptr, bytes, len) == 0);
}

Test(client_value, binary_is_hex_after_hex_colon)
{
        struct pv *a = parse_ok("hex:0aff10"), *b = parse_ok(" hex:CAFE "), *c = parse_ok("hex:");
        struct pv *d = parse_ok("[hex:00, hex:ff]"), *e = parse_ok("\"hex:zz\"");

        is_bin(a, "\x0a\xff\x10", 3);
        is_bin(b, "\xca\xfe", 2);
        is_bin(c, "", 0);
        cr_assert(d->type == PV_ARRAY && d->a.n == 2);
        is_bin(&d->a.items[0], "\x00", 1);
        is_bin(&d->a.items[1], "\xff", 1);
        /* Quoted, it is the text. */
        is_str(e, "hex:zz");
        fmud_value_free(a);
        fmud_value_free(b);
        fmud_value_free(c);
        fmud_value_free(d);
        fmud_value_free(e);
        parse_fails("hex:0af", "two hex digits per byte");
        parse_fails("hex:zz", "two hex digits per byte");
        parse_fails("hex:ca fe", "two hex digits per byte");
        parse_fails("hex:0x0a", "two hex digits per byte");
        parse_fails("[hex:0, 1]", "two hex digits per byte");
}

Test(client_value, arrays_nest_and_mix_types)
{
        struct pv *v = parse_ok("[1, -2.5, \"a,]\", [true, x y], []]");
        const struct pv *in;

        cr_assert(v->type == PV_ARRAY && v->a.n == 5, "n %u", v->a.n);
        cr_assert(v->a.items[0].type == PV_UINT && v->a.items[0].u == 1);
        cr_assert(v->a.items[1].type == PV_FLOAT && v->a.items[1].f == -2.5);
        is_str(&v->a.items[2], "a,]");
        in = &v->a.items[3];
        cr_assert(in->type == PV_ARRAY && in->a.n == 2);
        cr_assert(in->a.items[0].type == PV_BOOL && in->a.items[0].b);
        is_str(&in->a.items[1], "x y");
        cr_assert(v->a.items[4].type == PV_ARRAY && v->a.items[4].a.n == 0);
        fmud_value_free(v);
}

Test(client_value, malformed_arrays_are_refused)
{
        parse_fails("[1, 2", "expected ',' or ']'");
        parse_fails("[1,,2]", "empty array item");
        parse_fails("[1] 2", "after the value");
        parse_fails("[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]", "too deep");
        parse_fails("[\"a\" b]", "expected ',' or ']'");
}

static void round_trip(const char *text, const char *want)
{
        struct pv *v = parse_ok(text), *back;
        char buf[256], again[256];
        size_t n = fmud_value_format(v, buf, sizeof(buf));

        cr_assert(n == strlen(buf), "length %zu for '%s'", n, buf);
        if (want)
                cr_assert(strcmp(buf, want) == 0, "'%s' formats as '%s', not '%s'", text, buf, want);
        back = parse_ok(buf);
        fmud_value_format(back, again, sizeof(again));
        cr_assert(strcmp(buf, again) == 0, "'%s' -> '%s' -> '%s'", text, buf, again);
        cr_assert(back->type == v->type, "'%s': type %d, then %d", text, v->type, back->type);
        if (v->type == PV_FLOAT && !isnan(v->f))
                cr_assert(back->f == v->f, "'%s' does not read back exactly", buf);
        fmud_value_free(v);
        fmud_value_free(back);
}

Test(client_value, format_reads_back_the_same_value)
{
        round_trip("0.1", "0.1");
        round_trip("2.0", "2.0");
        round_trip("1e300", "1e+300");
        round_trip("0.30000000000000004", "0.30000000000000004");
        round_trip("-inf", "-inf");
        round_trip("nan", "nan");
        round_trip("-7", "-7");
        round_trip("true", "true");
        round_trip("\"a\\\"b\\\\c\\n\"", "\"a\\\"b\\\\c\\n\"");
        round_trip("[1, [2.5, \"x\"], []]", "[1, [2.5, \"x\"], []]");
        round_trip("plain", "\"plain\"");
        round_trip("hex:0AFF10", "hex:0aff10");
        round_trip("hex:", "hex:");
        round_trip("[hex:ca, \"hex:ca\"]", "[hex:ca, \"hex:ca\"]");
        /* Subnormals: fewer digits than a normal number needs read them back. */
        round_trip("1e-310", "1e-310");
        round_trip("5e-324", "5e-324");
        round_trip("1e-320", "1e-320");
        /* A normal number keeps its plain form. */
        round_trip("10", "10");
        round_trip("10.0", "10.0");
        round_trip("123456.0", "123456.0");
}

Test(client_value, format_truncates_but_reports_the_full_length)
{
        struct pv *v = parse_ok("[1, 2, 3]");
        char buf[4];
        size_t n = fmud_value_format(v, buf, sizeof(buf));

        cr_assert(n == strlen("[1, 2, 3]"), "n %zu", n);
        cr_assert(strcmp(buf, "[1,") == 0, "'%s'", buf);
        fmud_value_free(v);
}
