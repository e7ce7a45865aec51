/* diag: the problem list fmi/ fills and the programs print. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <string.h>

#include "fmi/diag.h"

Test(diag, keeps_every_field_and_formats_file_line_subject_message)
{
        struct diag_list l;
        char buf[256];

        diag_list_init(&l, 0);
        cr_assert(eq(int, diag_add(&l, DIAG_ERROR, "modelDescription.xml", 42, "x",
                                   "rule %d broken", 7), 0));
        cr_assert(eq(sz, l.n, 1));
        cr_assert(eq(int, l.v[0].line, 42));
        diag_format(&l.v[0], buf, sizeof(buf));
        cr_assert(eq(str, buf, "modelDescription.xml:42: 'x': rule 7 broken"));
        diag_list_fini(&l);
}

Test(diag, counts_errors_beyond_the_cap_without_storing_them)
{
        struct diag_list l;

        diag_list_init(&l, 3);
        for (int i = 0; i < 10; i++)
                diag_add(&l, i % 2 ? DIAG_WARNING : DIAG_ERROR, NULL, 0, NULL, "p%d", i);
        cr_assert(eq(sz, l.n, 3));
        cr_assert(eq(sz, diag_errors(&l), 5));
        diag_list_fini(&l);
}

Test(diag, promote_makes_later_warnings_errors_with_a_note)
{
        struct diag_list l;

        diag_list_init(&l, 0);
        cr_assert(eq(int, diag_add(&l, DIAG_WARNING, "a", 0, NULL, "before"), 0));
        cr_assert(eq(int, diag_add(&l, DIAG_WARNING, "b", 0, NULL, "after"), 0));
        cr_assert(eq(int, diag_add(&l, DIAG_ERROR, "c", 0, NULL, "error"), 0));
        cr_assert(eq(sz, diag_warnings(&l), 2));
        cr_assert(eq(sz, diag_promote(&l, 1, "refused under --strict"), 1));
        cr_assert(eq(int, l.v[0].severity, DIAG_WARNING));
        cr_assert(eq(str, l.v[0].message, "before"));
        cr_assert(eq(int, l.v[1].severity, DIAG_ERROR));
        cr_assert(eq(str, l.v[1].message, "after; refused under --strict"));
        cr_assert(eq(str, l.v[2].message, "error"));
        cr_assert(eq(sz, diag_errors(&l), 2));
        cr_assert(eq(sz, diag_warnings(&l), 1));
        diag_list_fini(&l);
}
