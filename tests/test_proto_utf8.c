/*
 * utf8 (proto/utf8.c): well-formed UTF-8 is told from everything else
 * (RFC 3629's table), and the code points not to show are named.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <string.h>

#include "proto/utf8.h"

static size_t decode(const char *s, uint32_t *cp)
{
        return utf8_decode(s, strlen(s), cp);
}

Test(utf8, well_formed_sequences_give_their_length_and_code_point)
{
        uint32_t cp = 0;

        cr_assert(eq(sz, decode("\xc3\xa4", &cp), 2));
        cr_assert(eq(u32, cp, 0xe4));
        cr_assert(eq(sz, decode("\xe2\x84\x83", &cp), 3));
        cr_assert(eq(u32, cp, 0x2103));
        cr_assert(eq(sz, decode("\xf0\x9f\x8c\xa1", &cp), 4));
        cr_assert(eq(u32, cp, 0x1f321));
        cr_assert(eq(sz, decode("\xf4\x8f\xbf\xbf", &cp), 4));
        cr_assert(eq(u32, cp, 0x10ffff));
}

Test(utf8, overlongs_surrogates_and_beyond_u10ffff_are_refused)
{
        static const char *const bad[] = {
                "a", "\x80", "\xbf", "\xc0\xaf", "\xc1\xbf", "\xe0\x80\xaf", "\xe0\x9f\xbf",
                "\xed\xa0\x80", "\xed\xbf\xbf", "\xf0\x80\x80\xaf", "\xf0\x8f\xbf\xbf",
                "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xff", "\xc3", "\xe2\x84", "\xc3\x41",
        };
        uint32_t cp = 7;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                cr_assert(eq(sz, decode(bad[i], &cp), 0), "case %zu", i);
        cr_assert(eq(u32, cp, 7), "not written when refused");
}

Test(utf8, a_sequence_cut_by_the_length_is_refused)
{
        uint32_t cp;

        cr_assert(eq(sz, utf8_decode("\xe2\x84\x83", 2, &cp), 0));
        cr_assert(eq(sz, utf8_decode("\xc3\xa4", 0, &cp), 0));
}

Test(utf8, c1_controls_and_bidirectional_overrides_are_controls)
{
        static const uint32_t controls[] = { 0x80, 0x9b, 0x9f, 0x202a, 0x202e, 0x2066, 0x2069 };
        static const uint32_t text[] = { 0x7e, 0xa0, 0xe4, 0x2103, 0x2070, 0x1f321 };

        for (size_t i = 0; i < sizeof(controls) / sizeof(controls[0]); i++)
                cr_assert(eq(int, utf8_is_control(controls[i]), 1), "U+%04X", controls[i]);
        for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++)
                cr_assert(eq(int, utf8_is_control(text[i]), 0), "U+%04X", text[i]);
}
