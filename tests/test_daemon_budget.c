/*
 * daemon_budget: the step budget a session gets, as its status says,
 * from the daemon's default_budget (set to a number, to none with 0 or
 * inf, or not set: the scenario default) and from the load.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_fixture.h"
#include "support/tmpdir.h"

static struct fmud_daemon d;
static char *conf_dir;

static void teardown(void)
{
        daemon_stop(&d);
        tmpdir_free(conf_dir);
        conf_dir = NULL;
}

/*
 * Start a daemon whose file sets default_budget to value (NULL: not set)
 * and load Scripted (with a budget of its own when load_budget > 0);
 * returns the session's budget.
 */
static double budget_of(const char *value, double load_budget)
{
        char text[256], path[512];
        struct proto_load a = {
                .path = daemon_str(FMUD_MASTER_FMU_DIR "/Scripted.fmu"),
                .has_budget = load_budget > 0, .budget = load_budget,
        };
        struct proto_session_status st;
        struct fmud *c;
        uint64_t s;
        double b;

        conf_dir = tmpdir_new("fmud-budget");
        cr_assert(conf_dir);
        snprintf(text, sizeof(text), "[master]\n%s%s\n", value ? "default_budget = " : "",
                 value ? value : "");
        cr_assert(tmpdir_write(conf_dir, "fmud.conf", text, strlen(text)) == 0);
        snprintf(path, sizeof(path), "%s/fmud.conf", conf_dir);
        daemon_start(&d, (const char *const[]){ "--config", path, NULL });
        c = daemon_connect(&d);
        s = daemon_load(c, &a, NULL);
        cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
        b = st.budget;
        fmud_close(c);
        return b;
}

Test(daemon_budget, zero_means_no_budget, .fini = teardown)
{
        double b = budget_of("0", 0);

        cr_assert(isinf(b) && b > 0, "budget %g", b);
}

Test(daemon_budget, inf_means_no_budget, .fini = teardown)
{
        double b = budget_of("inf", 0);

        cr_assert(isinf(b) && b > 0, "budget %g", b);
}

Test(daemon_budget, a_number_is_the_default, .fini = teardown)
{
        double b = budget_of("0.5", 0);

        cr_assert(b == 0.5, "budget %g", b);
}

Test(daemon_budget, not_set_is_the_scenario_default, .fini = teardown)
{
        double b = budget_of(NULL, 0);

        cr_assert(b == 10.0, "budget %g", b);
}

Test(daemon_budget, the_load_budget_wins_over_no_default_budget, .fini = teardown)
{
        double b = budget_of("0", 2.0);

        cr_assert(b == 2.0, "budget %g", b);
}
