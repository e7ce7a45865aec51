/*
 * faults_master: a misbehaving FMU (tests/fmus/Misbehave) inside a running
 * session. The coupled step faults and the session holds at its last good
 * point (MASTER_FAULTED) with a message naming the component, the FMI
 * call, the time and the cause; the values up to there are bit-identical
 * to a clean run; another session, running on another thread at the same
 * time, finishes with results bit-identical to its own clean run; and
 * nothing is left behind.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "support/tmpdir.h"
#include "test_master_sys.h"

static const char *const fmus[] = {
        FMUD_TEST_FMU_DIR "/LinearOde.fmu", FMUD_TEST_FMU_DIR "/Misbehave.fmu",
};

static void copy(const char *from, const char *to)
{
        FILE *in = fopen(from, "rb"), *out;
        char buf[65536];
        size_t n;

        cr_assert(in != NULL, "open %s", from);
        out = fopen(to, "wb");
        cr_assert(out != NULL, "create %s", to);
        while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
                cr_assert(fwrite(buf, 1, n, out) == n);
        fclose(in);
        cr_assert(fclose(out) == 0);
}

/* msys_load() with Misbehave beside LinearOde (struct msys and msys_* otherwise). */
static void load(struct msys *x, const char *elements, const char *connections,
                 const char *params, const char *attrs, const char *records)
{
        struct scenario_opts o;
        char *text, *path;
        int r;

        *x = (struct msys){ 0 };
        x->dir = tmpdir_new("fmud-faults");
        x->cache = tmpdir_new("fmud-faults-cache");
        cr_assert(x->dir && x->cache);
        cr_assert(asprintf(&path, "%s/resources", x->dir) >= 0);
        cr_assert(mkdir(path, 0755) == 0);
        free(path);
        for (size_t i = 0; i < sizeof(fmus) / sizeof(*fmus); i++) {
                cr_assert(asprintf(&path, "%s/resources/%s", x->dir, strrchr(fmus[i], '/') + 1) >= 0);
                copy(fmus[i], path);
                free(path);
        }
        cr_assert(asprintf(&text,
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<ssd:SystemStructureDescription version=\"1.0\" name=\"t\"\n"
                "    xmlns:ssd=\"http://ssp-standard.org/SSP1/SystemStructureDescription\"\n"
                "    xmlns:ssc=\"http://ssp-standard.org/SSP1/SystemStructureCommon\"\n"
                "    xmlns:ssv=\"http://ssp-standard.org/SSP1/SystemStructureParameterValues\"\n"
                "    xmlns:fmud=\"urn:fmud:ssp:settings\">\n"
                "  <ssd:System name=\"t\">\n"
                "<ssd:ParameterBindings><ssd:ParameterBinding><ssd:ParameterValues>"
                "<ssv:ParameterSet version=\"1.0\" name=\"p\"><ssv:Parameters>%s"
                "</ssv:Parameters></ssv:ParameterSet></ssd:ParameterValues>"
                "</ssd:ParameterBinding></ssd:ParameterBindings>\n"
                "    <ssd:Elements>%s</ssd:Elements>\n"
                "    <ssd:Connections>%s</ssd:Connections>\n"
                "  </ssd:System>\n"
                "  <ssd:DefaultExperiment startTime=\"0\" stopTime=\"1\"/>\n"
                "  <ssd:Annotations><ssc:Annotation type=\"org.fmud.settings\">\n"
                "    <fmud:Settings version=\"1\" %s>%s</fmud:Settings>\n"
                "  </ssc:Annotation></ssd:Annotations>\n"
                "</ssd:SystemStructureDescription>\n",
                params, elements, connections, attrs, records) >= 0);
        cr_assert(tmpdir_write(x->dir, "SystemStructure.ssd", text, strlen(text)) == 0);
        free(text);
        diag_list_init(&x->diags, 0);
        scenario_opts_default(&o);
        o.cache_dir = x->cache;
        cr_assert(asprintf(&path, "%s/SystemStructure.ssd", x->dir) >= 0);
        r = scenario_load(path, &o, NULL, &x->diags, &x->sc);
        free(path);
        cr_assert(r == 0, "scenario_load: %d", r);
        session_opts_default(&x->so);
        x->so.worker_path = FMUD_WORKER;
        master_opts_default(&x->mo);
}

/* 'a' (LinearOde) coupled both ways with 'm' (Misbehave), steps of 0.1 to 1. */
static void pair(struct msys *x, int fault, const char *attrs)
{
        char params[512];

        snprintf(params, sizeof(params), MSYS_INT("m.fault", "%d") MSYS_REAL("m.at", "0.5"), fault);
        load(x, MSYS_COMP("a", "LinearOde") MSYS_COMP("m", "Misbehave"),
             MSYS_CONN("a", "y0", "m", "u") MSYS_CONN("m", "x", "a", "u0"), params, attrs,
             MSYS_RECORD("a.x") MSYS_RECORD("a.y0") MSYS_RECORD("m.x"));
}

/* ---- The other session: two LinearOde, 100 points, on its own thread ------- */

static void clean_run(struct msys *x)
{
        load(x, MSYS_COMP("p", "LinearOde") MSYS_COMP("q", "LinearOde"),
             MSYS_CONN("p", "y0", "q", "u0"),
             MSYS_REAL("q.k", "2"), "stepSize=\"0.01\"", MSYS_RECORD("p.x") MSYS_RECORD("q.y0"));
        msys_start(x);
        cr_assert(master_run(x->m) == MASTER_FINISHED, "%s", master_message(x->m));
}

static void *other_session(void *arg)
{
        struct msys *x = arg;

        /* Workers die with the thread that started them: this one outlives its session. */
        clean_run(x);
        master_free(x->m);
        x->m = NULL;
        session_free(x->s);
        x->s = NULL;
        return NULL;
}

/* ---- Leaks ------------------------------------------------------------------ */

static int count_fds(void)
{
        char path[64];
        int n = 0;

        for (int fd = 0; fd < 4096; fd++) {
                snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
                n += access(path, F_OK) == 0;
        }
        return n;
}

static bool maps_memfd(void)
{
        char line[1024];
        bool found = false;
        FILE *f = fopen("/proc/self/maps", "r");

        cr_assert(f != NULL);
        while (fgets(line, sizeof(line), f))
                if (strstr(line, "/memfd:"))
                        found = true;
        fclose(f);
        return found;
}

/* ---- One row of the fault table ------------------------------------------- */

struct row {
        int fault;
        int err;                        /* master_run()'s result */
        const char *attrs;              /* fmud:Settings attributes */
        const char *cause[2];           /* substrings of the message */
};

static void row(const struct row *rw)
{
        struct msys x, ref, mine, other;
        pthread_t t;
        pid_t pids[2];
        size_t a, n_good = 0;
        int fds = count_fds(), r;
        double v;

        /* Clean references first: the pair without the fault, and the other session. */
        pair(&ref, 0, rw->attrs);
        msys_start(&ref);
        cr_assert(master_run(ref.m) == MASTER_FINISHED, "%s", master_message(ref.m));
        clean_run(&mine);

        pair(&x, rw->fault, rw->attrs);
        msys_start(&x);
        for (size_t i = 0; i < 2; i++)
                pids[i] = inst_pid(session_inst(x.s, i));
        cr_assert(pthread_create(&t, NULL, other_session, &other) == 0);
        r = master_run(x.m);
        cr_assert(pthread_join(t, NULL) == 0);

        cr_assert(r == rw->err, "fault %d: %d: %s", rw->fault, r, master_message(x.m));
        cr_assert(master_state(x.m) == MASTER_FAULTED);
        cr_assert(strstr(master_message(x.m), "component 'm': fmi3DoStep at t = 0.5 (step to ") != NULL,
                  "%s", master_message(x.m));
        for (int i = 0; i < 2; i++)
                cr_assert(!rw->cause[i] || strstr(master_message(x.m), rw->cause[i]) != NULL,
                          "want '%s' in: %s", rw->cause[i], master_message(x.m));
        /* Held at the last good point, with the values of the clean run up to there. */
        cr_assert(master_time(x.m) == 0.5, "%.17g", master_time(x.m));
        cr_assert(x.rows[x.n_rows - 1].t == 0.5);
        for (size_t i = 0; i < x.n_rows && i < ref.n_rows; i++) {
                cr_assert(x.rows[i].t == ref.rows[i].t);
                cr_assert(memcmp(x.rows[i].v, ref.rows[i].v, 3 * sizeof(double)) == 0,
                          "row %zu differs from the clean run", i);
                n_good++;
        }
        cr_assert(n_good == 6, "%zu rows", n_good);
        a = msys_comp(&x, "a");
        cr_assert(master_value(x.m, a, msys_var(&x, a, "x"), 0, &v) == 0);
        cr_assert(v == x.rows[x.n_rows - 1].v[msys_col(&x, "a.x")]);
        cr_assert(master_step(x.m, 1) == -EPERM);
        /* The other session did not notice. */
        cr_assert(msys_same_rows(&other, &mine), "the other session's results differ");

        msys_fini(&x);
        msys_fini(&ref);
        msys_fini(&mine);
        msys_fini(&other);
        for (size_t i = 0; i < 2; i++)
                cr_assert(kill(pids[i], 0) == -1 && errno == ESRCH, "worker %d left", (int)pids[i]);
        cr_assert(count_fds() == fds, "%d descriptors, %d before", count_fds(), fds);
        cr_assert(!maps_memfd(), "a channel is still mapped");
}

#define PLAIN "stepSize=\"0.1\""

Test(faults_master, a_crash_holds_the_session)
{
        row(&(struct row){ 1, -ESRCH, PLAIN, {
                "killed by SIGSEGV (segmentation fault, signal 11) during fmi3DoStep", NULL } });
}

Test(faults_master, an_exit_holds_the_session)
{
        row(&(struct row){ 6, -ESRCH, PLAIN, {
                "the FMU exited the worker with status 3 during fmi3DoStep", NULL } });
}

Test(faults_master, a_hang_misses_the_step_budget)
{
        row(&(struct row){ 8, -ETIMEDOUT, "stepSize=\"0.1\" stepBudget=\"0.3\"", {
                "missed the step budget of 0.3 s (a longer one: the scenario's budget or "
                "fmuctl's --budget S; none: inf)", "did not answer fmi3DoStep within" } });
}

Test(faults_master, an_error_comes_with_the_last_messages)
{
        row(&(struct row){ 11, -EIO, PLAIN, {
                "returned Error: misbehave: the second of two messages at t = 0.5",
                "the FMU's last messages: [Warning] logStatusWarning: misbehave: the first of two "
                "messages at t = 0.5" } });
}

Test(faults_master, a_failed_initialization_comes_with_the_last_messages)
{
        struct msys x;
        char *msg = NULL;
        int r;

        pair(&x, 16, PLAIN);
        r = session_new(x.sc, &x.so, &x.s, &msg);
        cr_assert(r == -EIO, "session_new: %d: %s", r, msg ? msg : "");
        cr_assert(msg != NULL);
        cr_assert(strstr(msg, "component 'm': ") == msg, "%s", msg);
        cr_assert(strstr(msg, "the FMU's last messages: [Warning] logStatusWarning: misbehave: "
                              "the initial state is doubtful; [Error] logStatusError: misbehave: "
                              "the initial equations failed") != NULL, "%s", msg);
        cr_assert(x.s == NULL);
        free(msg);
        msys_fini(&x);
}

Test(faults_master, fatal_holds_the_session)
{
        row(&(struct row){ 12, -EIO, PLAIN, { "returned Fatal: misbehave: fatal at t = 0.5", NULL } });
}

Test(faults_master, discard_holds_the_session)
{
        row(&(struct row){ 13, -EIO, PLAIN, { "returned Discard", NULL } });
}

Test(faults_master, garbage_in_the_channel_holds_the_session)
{
        row(&(struct row){ 15, -EPROTO, PLAIN, { "broke the protocol", NULL } });
}

Test(faults_master, a_worker_killed_while_paused_shows_at_once)
{
        struct msys x;
        struct timespec ms = { 0, 1000000 };
        size_t m;
        int i, r;

        pair(&x, 0, PLAIN);
        msys_start(&x);
        cr_assert(master_step(x.m, 3) == MASTER_RUNNING, "%s", master_message(x.m));
        m = msys_comp(&x, "m");
        cr_assert(inst_health(session_inst(x.s, m)) == 0);
        cr_assert(kill(inst_pid(session_inst(x.s, m)), SIGKILL) == 0);
        /* Any thread may ask; nobody is calling the worker (a bound, not a timing check). */
        for (i = 0; i < 20000 && inst_health(session_inst(x.s, m)) == 0; i++)
                nanosleep(&ms, NULL);
        cr_assert(inst_health(session_inst(x.s, m)) == -ESRCH);
        cr_assert(inst_health(session_inst(x.s, msys_comp(&x, "a"))) == 0);
        r = master_step(x.m, 1);
        cr_assert(r == -ESRCH, "%d: %s", r, master_message(x.m));
        cr_assert(master_state(x.m) == MASTER_FAULTED);
        cr_assert(strstr(master_message(x.m), "component 'm'") != NULL &&
                  strstr(master_message(x.m), "was killed by SIGKILL (killed, signal 9) between calls")
                  != NULL, "%s", master_message(x.m));
        cr_assert(master_time(x.m) == x.rows[x.n_rows - 1].t);
        msys_fini(&x);
}

Test(faults_master, stats_split_the_worker_service_time)
{
        struct master_stats st;
        struct msys x;

        pair(&x, 0, PLAIN);
        msys_start(&x);
        cr_assert(master_run(x.m) == MASTER_FINISHED, "%s", master_message(x.m));
        master_get_stats(x.m, &st);
        cr_assert(st.n_insts == 2);
        for (size_t i = 0; i < 2; i++) {
                uint64_t steps, ns;

                cr_assert(st.insts[i].steps == 10);
                cr_assert(st.insts[i].ns_service > 0 && st.insts[i].ns_service < st.insts[i].ns_total,
                          "%llu of %llu", (unsigned long long)st.insts[i].ns_service,
                          (unsigned long long)st.insts[i].ns_total);
                cr_assert(inst_service_stats(session_inst(x.s, i), &steps, &ns) == 0);
                cr_assert(steps == 10 && ns == st.insts[i].ns_service);
        }
        msys_fini(&x);
}
