/*
 * input_table: sampling the unconnected inputs a CSV file drives
 * (engine/master/input_table.h): linear interpolation, hold, a repeated time as a
 * step, before the first and after the last row.
 */
#include <criterion/criterion.h>
#include <stdint.h>

#include "engine/master/input_table.h"

/* times 0, 1, 1, 2; column 0 linear Float64, column 1 held Int32. */
static struct input_table *table4(void)
{
        static const double t[] = { 0, 1, 1, 2 }, f[] = { 0, 10, 20, 40 };
        static const int64_t i[] = { 7, 8, 9, 10 };
        struct input_table *tab = input_table_new(2, 4);

        cr_assert(tab != NULL);
        tab->cols[0] = (struct input_column){ .type = MD_FLOAT64, .linear = true };
        tab->cols[1] = (struct input_column){ .type = MD_INT32, .var = 1 };
        for (size_t r = 0; r < 4; r++) {
                tab->time[r] = t[r];
                input_table_at(tab, r, 0)->f = f[r];
                input_table_at(tab, r, 1)->i = i[r];
        }
        return tab;
}

static double sample(const struct input_table *t, size_t col, double time)
{
        return input_table_double(t, col, input_table_find(t, time), time);
}

Test(input_table, find_counts_the_rows_at_or_before_a_time)
{
        struct input_table *t = table4();

        cr_assert(input_table_find(t, -1) == 0);
        cr_assert(input_table_find(t, 0) == 1);
        cr_assert(input_table_find(t, 0.5) == 1);
        cr_assert(input_table_find(t, 1) == 3);
        cr_assert(input_table_find(t, 1.5) == 3);
        cr_assert(input_table_find(t, 2) == 4);
        cr_assert(input_table_find(t, 9) == 4);
        input_table_free(t);
}

Test(input_table, linear_interpolates_and_a_repeated_time_is_a_step)
{
        struct input_table *t = table4();

        cr_assert(sample(t, 0, 0) == 0);
        cr_assert(sample(t, 0, 0.25) == 2.5);
        cr_assert(sample(t, 0, 0.75) == 7.5);
        /* Left of the step: towards the first row at t = 1; at it: the later row. */
        cr_assert(sample(t, 0, 0.999) == 0 + (10.0 - 0) * ((0.999 - 0) / (1.0 - 0)));
        cr_assert(sample(t, 0, 1) == 20);
        cr_assert(sample(t, 0, 1.5) == 30);
        cr_assert(sample(t, 0, 2) == 40);
        input_table_free(t);
}

Test(input_table, before_the_first_and_after_the_last_row_the_end_values_hold)
{
        struct input_table *t = table4();

        cr_assert(sample(t, 0, -5) == 0);
        cr_assert(sample(t, 0, 1e9) == 40);
        cr_assert(sample(t, 1, -5) == 7);
        cr_assert(sample(t, 1, 1e9) == 10);
        input_table_free(t);
}

Test(input_table, held_columns_take_the_last_row_at_or_before_the_time)
{
        struct input_table *t = table4();
        int32_t v[3] = { 0 };

        cr_assert(sample(t, 1, 0) == 7);
        cr_assert(sample(t, 1, 0.999) == 7);
        cr_assert(sample(t, 1, 1) == 9);        /* the later of the two rows at t = 1 */
        cr_assert(sample(t, 1, 1.999) == 9);
        input_table_put(t, 1, input_table_find(t, 1.5), 1.5, v, 2);
        cr_assert(v[2] == 9 && v[0] == 0 && v[1] == 0);
        input_table_free(t);
}

Test(input_table, float32_rounds_the_interpolated_double_once)
{
        struct input_table *t = table4();
        float f[1];

        t->cols[0].type = MD_FLOAT32;
        input_table_at(t, 0, 0)->f = 0.1;
        input_table_at(t, 1, 0)->f = 0.7;
        input_table_put(t, 0, input_table_find(t, 0.3), 0.3, f, 0);
        cr_assert(f[0] == (float)(0.1 + (0.7 - 0.1) * ((0.3 - 0) / (1.0 - 0))));
        input_table_free(t);
}
