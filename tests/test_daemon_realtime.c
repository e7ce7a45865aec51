/*
 * daemon_realtime: a session's real-time options through libfmud against
 * a real fmud (daemon_fixture.h): SCHED_FIFO and cpu sets read back from
 * the kernel for the master thread and the workers, each option reported
 * in status, and a refused option failing the load unless best-effort;
 * how the master then waits for its workers (master-wait), and that a
 * master sharing its one cpu with its workers at SCHED_FIFO finishes.
 * Where the kernel refuses real time altogether (no CAP_SYS_NICE, no
 * RLIMIT_RTPRIO), the tests that need it are skipped.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "daemon_fixture.h"

#define MISSING_CPU     "1000"  /* below CPU_SETSIZE, above any cpu this machine has */
#define HRT_BUF         160     /* an option's state */

static struct fmud_daemon d;
static struct fmud *c;

static void setup(void)
{
        daemon_start(&d, NULL);
        c = daemon_connect(&d);
}

static void teardown(void)
{
        fmud_close(c);
        c = NULL;
        daemon_stop(&d);
}

TestSuite(daemon_realtime, .init = setup, .fini = teardown);

static struct proto_load scripted(void)
{
        return (struct proto_load){ .path = daemon_str(FMUD_MASTER_FMU_DIR "/Scripted.fmu"),
                                    .has_stop = true, .stop = 0.1, .has_step = true,
                                    .step = 0.01 };
}

/* The state status reports for option name; NULL when it is not there. */
static const char *option(const struct proto_session_status *st, const char *name, char *buf,
                          size_t size)
{
        for (uint32_t i = 0; i < st->n_realtime; i++)
                if (daemon_str_eq(st->realtime[i].name, name)) {
                        snprintf(buf, size, "%.*s", (int)st->realtime[i].state.len,
                                 st->realtime[i].state.ptr);
                        return buf;
                }
        return NULL;
}

/* How status says the master waits; "(none)" when it does not say. */
static const char *master_wait(const struct proto_session_status *st, char *buf, size_t size)
{
        if (!option(st, "master-wait", buf, size))
                snprintf(buf, size, "(none)");
        return buf;
}

/* The threads of pid with SCHED_FIFO at priority prio; *ret_tid: one of them. */
static int fifo_threads(pid_t pid, int prio, pid_t *ret_tid)
{
        struct sched_param sp;
        char path[64];
        struct dirent *e;
        int n = 0;
        DIR *dir;

        snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
        dir = opendir(path);
        cr_assert(dir, "%s: %s", path, strerror(errno));
        while ((e = readdir(dir))) {
                pid_t tid = (pid_t)atoi(e->d_name);

                if (tid <= 0 || sched_getscheduler(tid) != SCHED_FIFO ||
                    sched_getparam(tid, &sp) < 0 || sp.sched_priority != prio)
                        continue;
                *ret_tid = tid;
                n++;
        }
        closedir(dir);
        return n;
}

static bool only_cpu(pid_t tid, int cpu)
{
        cpu_set_t set;

        cr_assert(sched_getaffinity(tid, sizeof(set), &set) == 0, "%s", strerror(errno));
        return CPU_COUNT(&set) == 1 && CPU_ISSET(cpu, &set);
}

Test(daemon_realtime, fifo_priorities_and_cpu_sets_apply_to_master_and_workers)
{
        struct proto_load a = scripted();
        struct proto_session_status st;
        uint64_t s = 0;
        char buf[128], line[128];
        pid_t worker, master = 0, wt = 0;
        FILE *slack;
        int r;

        a.has_rt_priority = true;
        a.rt_priority = 21;
        a.has_rt_worker_priority = true;
        a.rt_worker_priority = 11;
        a.rt_cpus = daemon_str("0");
        a.rt_worker_cpus = daemon_str("0");
        r = fmud_load(c, &a, &s, NULL);
        if (r == FMUD_E_REFUSED && (strstr(fmud_errmsg(c), strerror(EPERM)) ||
                                    strstr(fmud_errmsg(c), strerror(EACCES)) ||
                                    strstr(fmud_errmsg(c), strerror(ENOENT))))
                cr_skip_test("the kernel refuses real time here: %s", fmud_errmsg(c));
        cr_assert(r == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
        cr_assert(st.n_insts == 1 && st.n_realtime == 7, "%u options", st.n_realtime);
        cr_assert(!strcmp(option(&st, "master-priority", buf, sizeof(buf)), "active"), "%s", buf);
        cr_assert(!strcmp(option(&st, "worker-priority", buf, sizeof(buf)), "active"), "%s", buf);
        cr_assert(!strcmp(option(&st, "master-cpus", buf, sizeof(buf)), "active"), "%s", buf);
        cr_assert(!strcmp(option(&st, "worker-cpus", buf, sizeof(buf)), "active"), "%s", buf);
        cr_assert(!strcmp(option(&st, "timer-slack", buf, sizeof(buf)), "active"), "%s", buf);
        cr_assert(!strcmp(option(&st, "dma-latency", buf, sizeof(buf)), "active"), "%s", buf);
        worker = (pid_t)st.insts[0].pid;
        /* The kernel's word: the session's thread in the daemon, every thread of the worker. */
        cr_assert(fifo_threads(d.pid, 21, &master) == 1);
        cr_assert(only_cpu(master, 0));
        cr_assert(sched_getscheduler(worker) == SCHED_FIFO);
        cr_assert(fifo_threads(worker, 11, &wt) >= 1);
        cr_assert(only_cpu(worker, 0));
        snprintf(line, sizeof(line), "/proc/%d/timerslack_ns", (int)worker);
        slack = fopen(line, "r");
        cr_assert(slack, "%s: %s", line, strerror(errno));
        cr_assert(fgets(line, sizeof(line), slack));
        fclose(slack);
        /* 1 ns as asked, or 0: the kernel gives SCHED_FIFO tasks no slack at all. */
        cr_assert(strtoull(line, NULL, 10) <= 1, "worker timer slack %s", line);
        /* The session runs as real time and ends as usual. */
        cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        daemon_wait_state(c, s, PROTO_STATE_FINISHED, &st);
        cr_assert(fmud_unload(c, &(struct proto_target){ s, 0 }) == 0, "%s", fmud_errmsg(c));
}

/* Load a with the real-time options, or skip where the kernel refuses them. */
static uint64_t load_realtime(struct proto_load *a)
{
        uint64_t s = 0;
        int r = fmud_load(c, a, &s, NULL);

        if (r == FMUD_E_REFUSED && (strstr(fmud_errmsg(c), strerror(EPERM)) ||
                                    strstr(fmud_errmsg(c), strerror(EACCES)) ||
                                    strstr(fmud_errmsg(c), strerror(ENOENT))))
                cr_skip_test("the kernel refuses real time here: %s", fmud_errmsg(c));
        cr_assert(r == 0, "%s", fmud_errmsg(c));
        return s;
}

/*
 * The master at SCHED_FIFO 21 and its worker at 11 on cpu 0 alone: a
 * master that spun or yielded while waiting would keep the worker that
 * owes the reply off its only cpu for the whole budget of every wait. It
 * waits asleep, says so, and runs 2000 points to the stop time.
 */
Test(daemon_realtime, a_fifo_master_sharing_its_cpu_with_its_worker_waits_asleep_and_finishes)
{
        struct proto_load a = scripted();
        struct proto_session_status st;
        char buf[HRT_BUF];
        uint64_t s;

        a.stop = 0.2;
        a.step = 1e-4;
        a.has_rt_priority = true;
        a.rt_priority = 21;
        a.has_rt_worker_priority = true;
        a.rt_worker_priority = 11;
        a.rt_cpus = daemon_str("0");
        a.rt_worker_cpus = daemon_str("0");
        s = load_realtime(&a);
        cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
        cr_assert(!strcmp(master_wait(&st, buf, sizeof(buf)),
                          "futex: 1 of 1 workers share the master's cpus (SCHED_FIFO 21)"),
                  "%s", buf);
        cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        daemon_wait_state(c, s, PROTO_STATE_FINISHED, &st);
        cr_assert(st.points == 2000, "%llu points", (unsigned long long)st.points);
        cr_assert(st.time == 0.2, "t = %.17g", st.time);
}

/* On two cpus of their own, the master and its worker keep the adaptive wait. */
Test(daemon_realtime, a_fifo_master_on_another_cpu_than_its_worker_waits_adaptively)
{
        struct proto_load a = scripted();
        struct proto_session_status st;
        char buf[HRT_BUF];
        uint64_t s;

        if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
                cr_skip_test("one cpu: the master cannot have a cpu of its own");
        a.has_rt_priority = true;
        a.rt_priority = 21;
        a.has_rt_worker_priority = true;
        a.rt_worker_priority = 11;
        a.rt_cpus = daemon_str("0");
        a.rt_worker_cpus = daemon_str("1");
        s = load_realtime(&a);
        cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
        cr_assert(!strcmp(master_wait(&st, buf, sizeof(buf)),
                          "adaptive: no worker shares the master's cpus"), "%s", buf);
        cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        daemon_wait_state(c, s, PROTO_STATE_FINISHED, NULL);
}

Test(daemon_realtime, a_cpu_that_does_not_exist_refuses_the_load_naming_option_and_reason)
{
        struct proto_load a = scripted();
        struct proto_session_status st;
        uint64_t s = 0;
        pid_t kids[8];
        int r;

        a.rt_worker_cpus = daemon_str(MISSING_CPU);
        r = fmud_load(c, &a, &s, NULL);
        daemon_assert_refused(c, r, PROTO_E_INVALID, "worker cpus");
        cr_assert(strstr(fmud_errmsg(c), "realtime worker-cpus: Invalid argument (task ") &&
                  strstr(fmud_errmsg(c), "(rtBestEffort: load anyway)"), "%s", fmud_errmsg(c));
        a.rt_worker_cpus = daemon_str("");
        a.rt_cpus = daemon_str(MISSING_CPU);
        r = fmud_load(c, &a, &s, NULL);
        daemon_assert_refused(c, r, PROTO_E_INVALID, "master cpus");
        cr_assert(strstr(fmud_errmsg(c), "realtime master-cpus: Invalid argument"), "%s",
                  fmud_errmsg(c));
        /* Nothing left behind, and the daemon loads the same session without the option. */
        cr_assert(daemon_children(d.pid, kids, 8) == 0);
        a.rt_cpus = daemon_str("");
        s = daemon_load(c, &a, NULL);
        cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
        cr_assert(st.n_realtime == 0);
}

Test(daemon_realtime, best_effort_loads_and_reports_the_refusal)
{
        struct proto_load a = scripted();
        struct proto_session_status st;
        char buf[128];
        uint64_t s;

        a.rt_worker_cpus = daemon_str(MISSING_CPU);
        a.rt_best_effort = true;
        s = daemon_load(c, &a, NULL);
        cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
        cr_assert(st.n_realtime == 2);
        cr_assert(option(&st, "worker-cpus", buf, sizeof(buf)));
        cr_assert(!strncmp(buf, "refused: Invalid argument (task ", 32), "%s", buf);
        /* No real-time master: it waits as ever. */
        cr_assert(!strcmp(master_wait(&st, buf, sizeof(buf)), "adaptive"), "%s", buf);
        cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        daemon_wait_state(c, s, PROTO_STATE_FINISHED, NULL);
}

Test(daemon_realtime, bad_priorities_and_cpu_lists_are_bad_requests)
{
        struct proto_load a = scripted();
        uint64_t s;
        int r;

        a.has_rt_priority = true;
        a.rt_priority = 100;
        r = fmud_load(c, &a, &s, NULL);
        daemon_assert_refused(c, r, PROTO_E_BAD_REQUEST, "priority 100");
        cr_assert(!strcmp(fmud_errmsg(c), "args.rtPriority: expected 0 (none) to 99"), "%s",
                  fmud_errmsg(c));
        a = scripted();
        a.rt_worker_cpus = daemon_str("0-");
        r = fmud_load(c, &a, &s, NULL);
        daemon_assert_refused(c, r, PROTO_E_BAD_REQUEST, "cpu list");
        cr_assert(strstr(fmud_errmsg(c), "rtWorkerCpus: cpu list '0-': expected cpus and "
                         "ranges below 1024"), "%s", fmud_errmsg(c));
}

/* [realtime] mlock: the daemon locks its memory at startup and status says so. */
Test(daemon_realtime_config, mlock_is_applied_and_reported)
{
        char conf[] = "/tmp/fmud-rt-XXXXXX";
        static const char text[] = "[realtime]\nmlock = yes\nbest_effort = yes\n";
        const char *extra[] = { "--config", conf, NULL };
        struct fmud_daemon dm = { 0 };
        struct proto_daemon_status st;
        struct fmud *cm;
        char state[96], *status;
        unsigned long long locked_kb;
#ifdef __SANITIZE_ADDRESS__
        const bool sanitized = true;
#else
        const bool sanitized = false;
#endif
        FILE *f;
        int fd;

        fd = mkstemp(conf);
        cr_assert(fd >= 0);
        cr_assert(write(fd, text, sizeof(text) - 1) == (ssize_t)(sizeof(text) - 1));
        close(fd);
        daemon_start(&dm, extra);
        unlink(conf);
        cm = daemon_connect(&dm);
        cr_assert(fmud_status_daemon(cm, &st) == 0, "%s", fmud_errmsg(cm));
        snprintf(state, sizeof(state), "%.*s", (int)st.mlock.len, st.mlock.ptr);
        fmud_close(cm);
        /* The kernel's word: VmLck of a locked daemon is not zero. */
        snprintf(conf, sizeof(conf), "/proc/%d/status", (int)dm.pid);
        f = fopen(conf, "r");
        cr_assert(f);
        status = NULL;
        for (char line[256]; fgets(line, sizeof(line), f);)
                if (!strncmp(line, "VmLck:", 6))
                        status = strdup(line);
        fclose(f);
        daemon_stop(&dm);
        cr_assert(status);
        locked_kb = strtoull(status + 6, NULL, 10);
        free(status);
        if (geteuid() == 0) {
                cr_assert(!strcmp(state, "active"), "mlock %s", state);
                /* AddressSanitizer makes mlockall() a no-op that succeeds: no kernel's word there. */
                cr_assert(locked_kb > 0 || sanitized, "VmLck: %llu kB", locked_kb);
        } else {
                cr_assert(!strcmp(state, "active") || !strncmp(state, "refused: ", 9), "%s",
                          state);
        }
}

/*
 * A daemon the kernel refuses SCHED_FIFO: started without CAP_SYS_NICE in
 * its bounding set and with RLIMIT_RTPRIO 0 (this test's process only:
 * each test runs in a process of its own).
 */
static void start_without_realtime(void)
{
        struct rlimit none = { 0, 0 };

        if (prctl(PR_CAPBSET_DROP, CAP_SYS_NICE, 0, 0, 0) < 0)
                cr_skip_test("cannot drop CAP_SYS_NICE: %s", strerror(errno));
        cr_assert(setrlimit(RLIMIT_RTPRIO, &none) == 0, "%s", strerror(errno));
        setup();
}

Test(daemon_realtime_refused, a_priority_the_kernel_refuses_fails_the_load_with_its_reason,
     .init = start_without_realtime, .fini = teardown)
{
        struct proto_load a = scripted();
        struct proto_session_status st;
        char buf[128];
        uint64_t s;
        int r;

        a.has_rt_priority = true;
        a.rt_priority = 10;
        r = fmud_load(c, &a, &s, NULL);
        daemon_assert_refused(c, r, PROTO_E_INVALID, "priority without CAP_SYS_NICE");
        cr_assert(!strcmp(fmud_errmsg(c), "realtime master-priority: Operation not permitted "
                          "(rtBestEffort: load anyway)"), "%s", fmud_errmsg(c));
        a.rt_best_effort = true;
        s = daemon_load(c, &a, NULL);
        cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
        cr_assert(!strcmp(option(&st, "master-priority", buf, sizeof(buf)),
                          "refused: Operation not permitted"), "%s", buf);
        /* What the kernel gave, not what was asked: an ordinary master waits as ever. */
        cr_assert(!strcmp(master_wait(&st, buf, sizeof(buf)), "adaptive"), "%s", buf);
        cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        daemon_wait_state(c, s, PROTO_STATE_FINISHED, NULL);
}
