/*
 * fmuctl_daemon: fmuctl snapshot list, delete, export and import against a
 * real fmud (a file exported from one session imports into another):
 * the list in text and JSON, a deleted snapshot gone from it and unknown
 * to restore, and the refusals (unknown id, bad forms) in one line each.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_fixture.h"
#include "support/run.h"

static struct fmud_daemon d;

static void setup(void)
{
        daemon_start(&d, NULL);
        cr_assert(setenv("FMUD_ENDPOINT", d.endpoint, 1) == 0);
}

static void teardown(void)
{
        daemon_stop(&d);
}

static struct run_result fmuctl(const char *const args[])
{
        char *argv[32] = { (char *)FMUD_FMUCTL };
        struct run_result r = { 0 };
        size_t n = 1;

        for (; args[n - 1] && n < 31; n++)
                argv[n] = (char *)args[n - 1];
        argv[n] = NULL;
        cr_assert(run_capture(argv, &r) == 0);
        return r;
}

static void fmuctl_ok(const char *const args[], char *out, size_t size)
{
        struct run_result r = fmuctl(args);

        cr_assert(eq(int, r.exit_code, 0), "fmuctl %s %s: %s", args[0], args[1], r.err);
        if (out)
                snprintf(out, size, "%s", r.out);
        run_result_fini(&r);
}

static struct json_object *snapshots_json(const char *sid)
{
        struct run_result r = fmuctl((const char *[]){ "snapshot", "list", sid, "--json", NULL });
        struct json_object *o, *a = NULL;

        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        o = json_tokener_parse(r.out);
        cr_assert(o != NULL, "no JSON: '%s'", r.out);
        run_result_fini(&r);
        cr_assert(json_object_object_get_ex(o, "snapshots", &a));
        json_object_get(a);
        json_object_put(o);
        return a;
}

static uint64_t entry_u64(struct json_object *a, size_t i, const char *k)
{
        struct json_object *v = NULL;

        cr_assert(json_object_object_get_ex(json_object_array_get_idx(a, i), k, &v), "%s", k);
        return json_object_get_uint64(v);
}

Test(fmuctl_daemon, snapshot_list_and_delete, .init = setup, .fini = teardown)
{
        struct json_object *a;
        struct run_result r;
        char out[4096];

        fmuctl_ok((const char *[]){ "load", FMUD_EXAMPLES "/msd.ssp", NULL }, NULL, 0);
        fmuctl_ok((const char *[]){ "snapshot", "1", NULL }, out, sizeof(out));
        cr_assert(eq(str, out, "1\n"));
        fmuctl_ok((const char *[]){ "step", "1", "10", NULL }, NULL, 0);
        fmuctl_ok((const char *[]){ "snapshot", "1", NULL }, out, sizeof(out));
        cr_assert(eq(str, out, "2\n"));

        a = snapshots_json("1");
        cr_assert(eq(sz, json_object_array_length(a), 2));
        cr_assert(eq(u64, entry_u64(a, 0, "snapshot"), 1));
        cr_assert(eq(u64, entry_u64(a, 1, "snapshot"), 2));
        cr_assert(eq(u64, entry_u64(a, 1, "generation"), 1));
        json_object_put(a);
        fmuctl_ok((const char *[]){ "snapshot", "list", "1", NULL }, out, sizeof(out));
        cr_assert(eq(int, strncmp(out, "ID ", 3), 0), "%s", out);
        cr_assert(strstr(out, "\n1 ") != NULL && strstr(out, "\n2 ") != NULL, "%s", out);

        fmuctl_ok((const char *[]){ "snapshot", "delete", "1", "1", NULL }, out, sizeof(out));
        cr_assert(eq(str, out, ""));
        a = snapshots_json("1");
        cr_assert(eq(sz, json_object_array_length(a), 1));
        cr_assert(eq(u64, entry_u64(a, 0, "snapshot"), 2));
        json_object_put(a);

        /* Gone: restore and a second delete are refused in one line; 2 still restores. */
        r = fmuctl((const char *[]){ "restore", "1", "1", NULL });
        cr_assert(eq(int, r.exit_code, 1));
        cr_assert(strstr(r.err, "no snapshot 1 in session 1") != NULL, "%s", r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "snapshot", "delete", "1", "1", NULL });
        cr_assert(eq(int, r.exit_code, 1));
        cr_assert(eq(str, r.err, "fmuctl: cannot delete snapshot 1 of session 1: no snapshot 1 in "
                     "session 1\n"));
        run_result_fini(&r);
        fmuctl_ok((const char *[]){ "restore", "1", "2", NULL }, out, sizeof(out));
        cr_assert(eq(str, out, "2\n"));

        /* Bad forms: usage errors, exit 2. */
        r = fmuctl((const char *[]){ "snapshot", "delete", "1", NULL });
        cr_assert(eq(int, r.exit_code, 2));
        cr_assert(strstr(r.err, "expected delete SESSION ID") != NULL, "%s", r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "snapshot", "list", NULL });
        cr_assert(eq(int, r.exit_code, 2));
        cr_assert(strstr(r.err, "expected list SESSION") != NULL, "%s", r.err);
        run_result_fini(&r);
}

Test(fmuctl_daemon, snapshot_export_and_import, .init = setup, .fini = teardown)
{
        char *file = daemon_path(&d, "s.fmudsnap"), out[4096];
        struct run_result r;
        struct json_object *a;

        fmuctl_ok((const char *[]){ "load", FMUD_EXAMPLES "/msd.ssp", NULL }, NULL, 0);
        fmuctl_ok((const char *[]){ "step", "1", "10", NULL }, NULL, 0);
        fmuctl_ok((const char *[]){ "snapshot", "1", NULL }, out, sizeof(out));
        cr_assert(eq(str, out, "1\n"));
        fmuctl_ok((const char *[]){ "snapshot", "export", "1", "1", "-o", file, NULL }, out,
                  sizeof(out));
        cr_assert(eq(str, out, ""));

        /* Into another session of the scenario: its first snapshot, at the same time. */
        fmuctl_ok((const char *[]){ "load", FMUD_EXAMPLES "/msd.ssp", NULL }, NULL, 0);
        fmuctl_ok((const char *[]){ "snapshot", "import", "2", file, NULL }, out, sizeof(out));
        cr_assert(eq(str, out, "1\n"));
        a = snapshots_json("2");
        cr_assert(eq(sz, json_object_array_length(a), 1));
        cr_assert(eq(u64, entry_u64(a, 0, "snapshot"), 1));
        json_object_put(a);
        fmuctl_ok((const char *[]){ "restore", "2", "1", NULL }, out, sizeof(out));
        cr_assert(eq(str, out, "2\n"));

        /* Refusals in one line; bad forms are usage errors. */
        r = fmuctl((const char *[]){ "snapshot", "export", "1", "7", "-o", file, NULL });
        cr_assert(eq(int, r.exit_code, 1));
        cr_assert(eq(str, r.err, "fmuctl: cannot export snapshot 7 of session 1: no snapshot 7 "
                     "in session 1\n"));
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "snapshot", "import", "2", FMUD_EXAMPLES "/msd.ssp", NULL });
        cr_assert(eq(int, r.exit_code, 1));
        cr_assert(strstr(r.err, "not a snapshot file") != NULL, "%s", r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "snapshot", "export", "1", "1", NULL });
        cr_assert(eq(int, r.exit_code, 2));
        cr_assert(strstr(r.err, "export needs -o FILE") != NULL, "%s", r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "snapshot", "import", "2", file, "-o", file, NULL });
        cr_assert(eq(int, r.exit_code, 2));
        cr_assert(strstr(r.err, "-o FILE is for export only") != NULL, "%s", r.err);
        run_result_fini(&r);
        free(file);
}

/*
 * status N@G is refused unless the session is still at generation G, as
 * every request naming N@G is (docs/fmuctl.md "Sessions"): it answered
 * with the status of whatever run the session held.
 */
Test(fmuctl_daemon, status_of_a_stale_generation_is_refused, .init = setup, .fini = teardown)
{
        struct run_result r;
        char out[4096];

        fmuctl_ok((const char *[]){ "load", FMUD_EXAMPLES "/msd.ssp", NULL }, NULL, 0);
        fmuctl_ok((const char *[]){ "snapshot", "1", NULL }, NULL, 0);
        fmuctl_ok((const char *[]){ "status", "1@1", NULL }, out, sizeof(out));
        fmuctl_ok((const char *[]){ "restore", "1", "1", NULL }, NULL, 0);
        r = fmuctl((const char *[]){ "status", "1@1", NULL });
        cr_assert(eq(int, r.exit_code, 1), "%s%s", r.out, r.err);
        cr_assert(eq(str, r.out, ""));
        cr_assert(strstr(r.err, "is at generation 2, not 1") != NULL, "%s", r.err);
        run_result_fini(&r);
        fmuctl_ok((const char *[]){ "status", "1@2", NULL }, out, sizeof(out));
}
