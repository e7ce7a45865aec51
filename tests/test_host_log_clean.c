/*
 * hlog_clean() (daemon/host_log.c): an FMU's text made one safe log line:
 * no C0, DEL or C1 control in any form, no bidirectional override, valid
 * UTF-8 only (anything else '?'), cut whole at the buffer's end.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <string.h>

#include "daemon/host_int.h"

static const char *clean(const char *src, size_t size)
{
        static char buf[256];

        cr_assert(size <= sizeof(buf));
        (void)hlog_clean(buf, size, src);
        return buf;
}

Test(host_log_clean, text_and_valid_utf8_pass)
{
        cr_assert(eq(str, (char *)clean("gr\xc3\xbc\xc3\x9f" "e \xe2\x9c\x93 \xf0\x9f\x98\x80", 256),
                     "gr\xc3\xbc\xc3\x9f" "e \xe2\x9c\x93 \xf0\x9f\x98\x80"));
        cr_assert(eq(str, (char *)clean("a\tb\nc\rd", 256), "a b c d"));
}

Test(host_log_clean, c1_controls_go_raw_or_encoded)
{
        cr_assert(eq(str, (char *)clean("a\x9b" "31mb\xc2\x9b" "2Jc\x85" "d", 256),
                     "a?31mb2Jc?d"));
        cr_assert(eq(str, (char *)clean("x\x1b[0my\x7f", 256), "x[0my"));
}

Test(host_log_clean, invalid_utf8_becomes_question_marks)
{
        /* A lone continuation, an overlong '/', a surrogate, above U+10FFFF, a cut sequence. */
        cr_assert(eq(str, (char *)clean("a\x80" "b\xc0\xaf" "c\xed\xa0\x80" "d\xf4\x90\x80\x80"
                                        "e\xe2\x9c", 256), "a?b??c???d????e??"));
}

Test(host_log_clean, bidi_overrides_go_and_separators_read_as_spaces)
{
        cr_assert(eq(str, (char *)clean("a\xe2\x80\xaet\xe2\x80\xaa" "b\xe2\x81\xa6" "c\xe2\x81\xa9"
                                        "d", 256), "atbcd"));
        cr_assert(eq(str, (char *)clean("a\xe2\x80\xa8" "b\xe2\x80\xa9" "c", 256), "a b c"));
}

Test(host_log_clean, a_long_text_is_cut_on_a_whole_character)
{
        /* 8 bytes: 4 of text then "...": a 3-byte character that does not fit is left out. */
        cr_assert(eq(str, (char *)clean("ab\xe2\x9c\x93\xe2\x9c\x93\xe2\x9c\x93", 8), "ab..."));
        cr_assert(eq(str, (char *)clean("abcdefghij", 8), "abcd..."));
}
