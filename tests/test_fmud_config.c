/*
 * fmud's settings: every key of the INI file, refusals with file:line,
 * command-line overrides (daemon/config.h), and the daemon's refusal to
 * start on a bad file.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/config.h"
#include "daemon/worker_env.h"
#include "support/run.h"
#include "support/tmpdir.h"

static char *dir;

static void setup(void)
{
        dir = tmpdir_new("fmud-config");
        cr_assert(dir);
}

static void teardown(void)
{
        tmpdir_free(dir);
}

static int load_text(struct fmud_config *c, const char *text, char *err, size_t errlen)
{
        char path[512];

        cr_assert(tmpdir_write(dir, "fmud.conf", text, strlen(text)) == 0);
        snprintf(path, sizeof(path), "%s/fmud.conf", dir);
        return config_load(c, path, true, err, errlen);
}

static const char every_key[] =
        "# every key\n"
        "[control]\n"
        "endpoint = ipc:///x/control.sock\n"
        "pub_endpoint = ipc:///x/events.sock\n"
        "tcp_endpoint = tcp://127.0.0.1:5555\n"
        "tcp_pub_endpoint = tcp://127.0.0.1:5556\n"
        "server_secret_key = /etc/fmud/server.key\n"
        "authorized_keys = /etc/fmud/authorized_keys\n"
        "socket_group = fmud\n"
        "max_message = 2M\n"
        "[paths]\n"
        "allow = /srv/a\n"
        "allow = /srv/b\n"
        "  /srv/c\n"
        "cache_dir = /var/cache/x\n"
        "scratch_dir = /run/x/scratch\n"
        "worker = /usr/libexec/fmud/fmud-worker\n"
        "[limits]\n"
        "max_sessions = 7\n"
        "memory = 4G\n"
        "cpu_seconds = 600\n"
        "call_timeout = 2.5\n"
        "transient_grace = 3.5\n"
        "[sandbox]\n"
        "mode = basic\n"
        "on_violation = kill\n"
        "user = nobody\n"
        "require = all\n"
        "pass_env = LM_LICENSE_FILE, DYMOLA_RUNTIME_LICENSE\n"
        "[master]\n"
        "default_budget = 0.25\n"
        "[results]\n"
        "flush_ms = 250\n"
        "[log]\n"
        "level = debug\n"
        "[realtime]\n"
        "mlock = yes\n"
        "priority = 50\n"
        "worker_priority = 49\n"
        "cpus = 1\n"
        "worker_cpus = 0,2-3\n"
        "best_effort = true\n"
        "worker_mlock = yes\n"
        "worker_mlock_bytes = 128M\n"
        "worker_mlock_max_bytes = 1G\n";

/* A hang fails its test by name, well inside ctest's limit for the file. */
TestSuite(fmud_config, .timeout = 120);

Test(fmud_config, every_key_is_parsed, .init = setup, .fini = teardown)
{
        struct fmud_config c;
        char err[512] = "";

        config_init(&c);
        cr_assert(load_text(&c, every_key, err, sizeof(err)) == 0, "%s", err);
        cr_assert_str_eq(c.endpoint, "ipc:///x/control.sock");
        cr_assert_str_eq(c.pub_endpoint, "ipc:///x/events.sock");
        cr_assert_str_eq(c.tcp_endpoint, "tcp://127.0.0.1:5555");
        cr_assert_str_eq(c.tcp_pub_endpoint, "tcp://127.0.0.1:5556");
        cr_assert_str_eq(c.server_secret_key, "/etc/fmud/server.key");
        cr_assert_str_eq(c.authorized_keys, "/etc/fmud/authorized_keys");
        cr_assert_str_eq(c.socket_group, "fmud");
        cr_assert(c.max_message == 2u << 20);
        cr_assert(c.n_allow == 3, "%zu allowed", c.n_allow);
        cr_assert_str_eq(c.allow[0], "/srv/a");
        cr_assert_str_eq(c.allow[1], "/srv/b");
        cr_assert_str_eq(c.allow[2], "/srv/c");
        cr_assert_str_eq(c.cache_dir, "/var/cache/x");
        cr_assert_str_eq(c.scratch_dir, "/run/x/scratch");
        cr_assert_str_eq(c.worker, "/usr/libexec/fmud/fmud-worker");
        cr_assert(c.max_sessions == 7);
        cr_assert(c.memory == 4ull << 30);
        cr_assert(c.cpu_seconds == 600);
        cr_assert(c.call_timeout == 2.5);
        cr_assert(strcmp(c.pass_env, "LM_LICENSE_FILE, DYMOLA_RUNTIME_LICENSE") == 0);
        cr_assert(c.transient_grace == 3.5);
        cr_assert(c.sandbox == CONFIG_SANDBOX_BASIC);
        cr_assert(c.on_violation == CONFIG_VIOLATION_KILL);
        cr_assert_str_eq(c.sandbox_user, "nobody");
        cr_assert(c.sandbox_require_all);
        cr_assert(c.default_budget == 0.25);
        cr_assert(c.results_flush_ms == 250);
        cr_assert(c.log_level == 7);
        cr_assert(c.rt_mlock && c.rt_best_effort && c.rt_worker_mlock);
        cr_assert(c.rt_priority == 50 && c.rt_worker_priority == 49);
        cr_assert_str_eq(c.rt_cpus, "1");
        cr_assert_str_eq(c.rt_worker_cpus, "0,2-3");
        cr_assert(c.rt_worker_mlock_bytes == 128ull << 20 && c.rt_worker_mlock_max_bytes == 1ull << 30);
        config_fini(&c);
        /* Unset: a 256M share, and no budget: no worker locks. */
        config_init(&c);
        cr_assert(c.rt_worker_mlock_bytes == 256ull << 20 && c.rt_worker_mlock_max_bytes == 0);
        config_fini(&c);
}

Test(fmud_config, the_shipped_file_parses, .init = setup, .fini = teardown)
{
        struct fmud_config c;
        char err[512] = "";

        config_init(&c);
        cr_assert(config_load(&c, FMUD_TEST_SRC_DIR "/../configs/fmud.conf", true, err,
                              sizeof(err)) == 0, "%s", err);
        cr_assert(c.sandbox == CONFIG_SANDBOX_STRICT);
        cr_assert(c.max_message == 16u << 20);
        cr_assert(c.transient_grace == 10);
        cr_assert(c.results_flush_ms == 1000);
        /* Real time is asked for, never assumed. */
        cr_assert(!c.rt_mlock && !c.rt_priority && !c.rt_worker_priority && !c.rt_cpus);
        config_fini(&c);
}

static void expect_refused(const char *text, const char *where, const char *what)
{
        struct fmud_config c;
        char err[512] = "";

        config_init(&c);
        cr_assert(load_text(&c, text, err, sizeof(err)) == -EINVAL, "accepted: %s", text);
        cr_assert(strstr(err, where), "'%s' does not say '%s'", err, where);
        cr_assert(strstr(err, what), "'%s' does not say '%s'", err, what);
        config_fini(&c);
}

Test(fmud_config, unknown_keys_and_sections_are_refused_with_file_and_line, .init = setup,
     .fini = teardown)
{
        expect_refused("[control]\nmax_message = 1M\n\nendpont = ipc:///x\n", "fmud.conf:4:",
                       "endpont");
        expect_refused("[paths]\nallow = /a\n[colour]\nred = 1\n", "fmud.conf:4:", "colour");
        expect_refused("stray = 1\n", "fmud.conf:1:", "stray");
        expect_refused("[limits]\nnot a key line\n", "fmud.conf:2:", "key = value");
}

Test(fmud_config, bad_values_are_refused_with_file_and_line, .init = setup, .fini = teardown)
{
        expect_refused("[limits]\nmemory = lots\n", "fmud.conf:2:", "memory");
        expect_refused("[limits]\nmax_sessions = -1\n", "fmud.conf:2:", "max_sessions");
        expect_refused("[limits]\ncall_timeout = nan\n", "fmud.conf:2:", "call_timeout");
        expect_refused("[limits]\ntransient_grace = 0\n", "fmud.conf:2:", "transient_grace");
        expect_refused("[limits]\ntransient_grace = 1e9\n", "fmud.conf:2:", "transient_grace");
        expect_refused("[sandbox]\nmode = loose\n", "fmud.conf:2:", "strict");
        expect_refused("[sandbox]\non_violation = shrug\n", "fmud.conf:2:", "errno");
        expect_refused("[sandbox]\nrequire = most\n", "fmud.conf:2:", "must be none or all");
        expect_refused("[sandbox]\npass_env = LM_LICENSE_FILE 1X\n", "fmud.conf:2:",
                       "names environment variables");
        expect_refused("[sandbox]\npass_env = A=B\n", "fmud.conf:2:", "names environment variables");
        expect_refused("[control]\nendpoint = tcp://0.0.0.0:1\n", "fmud.conf:2:", "ipc://");
        expect_refused("[control]\ntcp_endpoint = ipc:///x\n", "fmud.conf:2:", "tcp://");
        expect_refused("[control]\nmax_message = 10\n", "fmud.conf:2:", "max_message");
        expect_refused("[paths]\nallow = relative/dir\n", "fmud.conf:2:", "absolute");
        expect_refused("[log]\nlevel = loud\n", "fmud.conf:2:", "level");
        expect_refused("[results]\nflush_ms = soon\n", "fmud.conf:2:", "flush_ms");
        expect_refused("[results]\nflush_ms = -5\n", "fmud.conf:2:", "flush_ms");
        expect_refused("[realtime]\npriority = 100\n", "fmud.conf:2:",
                       "must be a SCHED_FIFO priority, 1 to 99 (0: none)");
        expect_refused("[realtime]\nworker_priority = high\n", "fmud.conf:2:",
                       "worker_priority");
        expect_refused("[realtime]\ncpus = 0-\n", "fmud.conf:2:", "cpu list '0-'");
        expect_refused("[realtime]\nworker_cpus = 99999\n", "fmud.conf:2:", "worker_cpus");
        expect_refused("[realtime]\nmlock = maybe\n", "fmud.conf:2:", "must be yes or no");
        expect_refused("[realtime]\nworker_mlock_bytes = 1M\n", "fmud.conf:2:",
                       "must be at least 16M (what a worker maps before its FMU)");
        expect_refused("[realtime]\nworker_mlock_max_bytes = all\n", "fmud.conf:2:",
                       "must be a size such as 16M");
}

Test(fmud_config, sizes_take_binary_suffixes)
{
        uint64_t v;

        cr_assert(config_parse_size("4G", &v) == 0 && v == 4ull << 30);
        cr_assert(config_parse_size("512M", &v) == 0 && v == 512ull << 20);
        cr_assert(config_parse_size("64KiB", &v) == 0 && v == 64ull << 10);
        cr_assert(config_parse_size("1000", &v) == 0 && v == 1000);
        cr_assert(config_parse_size("", &v) == -EINVAL);
        cr_assert(config_parse_size("-1G", &v) == -EINVAL);
        cr_assert(config_parse_size("4X", &v) == -EINVAL);
        cr_assert(config_parse_size("99999999999T", &v) == -EINVAL);
}

Test(fmud_config, a_missing_default_file_is_no_error_but_a_given_one_is, .init = setup,
     .fini = teardown)
{
        struct fmud_config c;
        char err[512] = "", path[512];

        snprintf(path, sizeof(path), "%s/none.conf", dir);
        config_init(&c);
        cr_assert(config_load(&c, path, false, err, sizeof(err)) == 0);
        cr_assert(config_load(&c, path, true, err, sizeof(err)) == -ENOENT);
        cr_assert(strstr(err, "none.conf"));
        config_fini(&c);
}

Test(fmud_config, command_line_options_override_the_file, .init = setup, .fini = teardown)
{
        char *argv[] = { "fmud", "--endpoint", "ipc:///y/c.sock", "--allow", "/opt/one",
                         "--allow", "/opt/two", "--sandbox", "off", "--cache-dir", "/c",
                         "--scratch-dir", "/s", "--worker", "/w", "--pub-endpoint",
                         "ipc:///y/e.sock", "--ready-fd", "5", NULL };
        struct fmud_config c;
        struct fmud_args a;
        char err[512] = "";

        config_init(&c);
        cr_assert(load_text(&c, every_key, err, sizeof(err)) == 0, "%s", err);
        cr_assert(config_parse_args(19, argv, &a, err, sizeof(err)) == 0, "%s", err);
        cr_assert(a.ready_fd == 5);
        cr_assert(config_apply_args(&c, &a, err, sizeof(err)) == 0, "%s", err);
        cr_assert_str_eq(c.endpoint, "ipc:///y/c.sock");
        cr_assert_str_eq(c.pub_endpoint, "ipc:///y/e.sock");
        cr_assert(c.n_allow == 2);
        cr_assert_str_eq(c.allow[0], "/opt/one");
        cr_assert_str_eq(c.allow[1], "/opt/two");
        cr_assert(c.sandbox == CONFIG_SANDBOX_OFF);
        cr_assert_str_eq(c.cache_dir, "/c");
        cr_assert_str_eq(c.scratch_dir, "/s");
        cr_assert_str_eq(c.worker, "/w");
        /* What the command line does not name stays from the file. */
        cr_assert(c.max_sessions == 7);
        cr_assert_str_eq(c.tcp_endpoint, "tcp://127.0.0.1:5555");
        free(a.allow);
        config_fini(&c);
}

Test(fmud_config, bad_options_are_refused)
{
        char *argv1[] = { "fmud", "--sandbox", "loose", NULL };
        char *argv2[] = { "fmud", "--no-such-option", NULL };
        char *argv3[] = { "fmud", "--ready-fd", "x", NULL };
        char *argv4[] = { "fmud", "--endpoint", "tcp://1.2.3.4:5", NULL };
        char *argv5[] = { "fmud", "--worker-mlock-max", "lots", NULL };
        struct fmud_config c;
        struct fmud_args a;
        char err[512];

        cr_assert(config_parse_args(2, argv2, &a, err, sizeof(err)) == -EINVAL);
        cr_assert(config_parse_args(3, argv3, &a, err, sizeof(err)) == -EINVAL);
        config_init(&c);
        cr_assert(config_parse_args(3, argv1, &a, err, sizeof(err)) == 0);
        cr_assert(config_apply_args(&c, &a, err, sizeof(err)) == -EINVAL);
        free(a.allow);
        cr_assert(config_parse_args(3, argv4, &a, err, sizeof(err)) == 0);
        cr_assert(config_apply_args(&c, &a, err, sizeof(err)) == -EINVAL);
        free(a.allow);
        cr_assert(config_parse_args(3, argv5, &a, err, sizeof(err)) == 0);
        cr_assert(config_apply_args(&c, &a, err, sizeof(err)) == -EINVAL);
        cr_assert_str_eq(err, "--worker-mlock-max 'lots': must be a size such as 1G, or infinity");
        cr_assert(c.rt_worker_mlock_max_bytes == 0);
        free(a.allow);
        config_fini(&c);
}

Test(fmud_config, tcp_without_keys_is_refused, .init = setup, .fini = teardown)
{
        struct fmud_config c;
        char err[512] = "";

        config_init(&c);
        cr_assert(load_text(&c, "[control]\ntcp_endpoint = tcp://127.0.0.1:1\n"
                                "server_secret_key = /k\n[paths]\nworker = /bin/true\n",
                            err, sizeof(err)) == 0, "%s", err);
        cr_assert(config_finish(&c, err, sizeof(err)) == -EINVAL);
        cr_assert(strstr(err, "authorized_keys"), "%s", err);
        config_fini(&c);
}

Test(fmud_config, a_remote_rig_endpoint_needs_tcp_and_ports, .init = setup, .fini = teardown)
{
        struct fmud_config c;
        char err[512] = "";

        config_init(&c);
        cr_assert(load_text(&c, "[rig]\nremote_endpoint = tcp://0.0.0.0:5560-5569\n[paths]\n"
                                "worker = /bin/true\n", err, sizeof(err)) == 0, "%s", err);
        cr_assert(config_finish(&c, err, sizeof(err)) == -EINVAL);
        cr_assert_str_eq(err, "remote_endpoint needs tcp_endpoint (its keys and authorized_keys)");
        config_fini(&c);
        config_init(&c);
        cr_assert(load_text(&c, "[rig]\nremote_endpoint = tcp://0.0.0.0:9-5\n[paths]\n"
                                "worker = /bin/true\n", err, sizeof(err)) == 0, "%s", err);
        cr_assert(config_finish(&c, err, sizeof(err)) == -EINVAL);
        cr_assert_str_eq(err, "remote_endpoint 'tcp://0.0.0.0:9-5': expected tcp://ADDRESS:PORT, "
                              "tcp://ADDRESS:LO-HI or tcp://ADDRESS:*");
        config_fini(&c);
}

Test(fmud_config, the_daemon_refuses_an_unknown_key_naming_file_and_line, .init = setup,
     .fini = teardown)
{
        char path[512];
        char *argv[] = { FMUD_BINARY, "--config", path, NULL };
        struct run_result r;

        cr_assert(tmpdir_write(dir, "bad.conf", "[limits]\n\nbogus = 1\n", 20) == 0);
        snprintf(path, sizeof(path), "%s/bad.conf", dir);
        cr_assert(run_capture(argv, &r) == 0);
        cr_assert(r.exit_code == 1, "exit %d", r.exit_code);
        cr_assert(strstr(r.err, "bad.conf:3:") && strstr(r.err, "bogus"), "stderr: %s", r.err);
        run_result_fini(&r);
}

Test(fmud_config, the_daemon_refuses_a_missing_given_file, .init = setup, .fini = teardown)
{
        char path[512];
        char *argv[] = { FMUD_BINARY, "--config", path, NULL };
        struct run_result r;

        snprintf(path, sizeof(path), "%s/absent.conf", dir);
        cr_assert(run_capture(argv, &r) == 0);
        cr_assert(r.exit_code == 1, "exit %d", r.exit_code);
        cr_assert(strstr(r.err, "absent.conf"), "stderr: %s", r.err);
        run_result_fini(&r);
}

Test(fmud_config, version_and_help)
{
        char *argv[] = { FMUD_BINARY, "--version", NULL };
        char *argv2[] = { FMUD_BINARY, "--help", NULL };
        struct run_result r;

        cr_assert(run_capture(argv, &r) == 0);
        cr_assert(r.exit_code == 0 && !strncmp(r.out, "fmud ", 5), "%s", r.out);
        run_result_fini(&r);
        cr_assert(run_capture(argv2, &r) == 0);
        cr_assert(r.exit_code == 0 && strstr(r.out, "--ready-fd"));
        run_result_fini(&r);
}

/* default_budget: not set (NAN) apart from every value; 0 and inf both mean none. */
Test(fmud_config, default_budget_not_set_none_and_seconds, .init = setup, .fini = teardown)
{
        static const struct { const char *text; double want; } cases[] = {
                { "[master]\ndefault_budget = 0\n", INFINITY },
                { "[master]\ndefault_budget = inf\n", INFINITY },
                { "[master]\ndefault_budget = Infinity\n", INFINITY },
                { "[master]\ndefault_budget = 0.25\n", 0.25 },
                { "[master]\ndefault_budget = 10\n", 10 },
        };
        struct fmud_config c;
        char err[512] = "";

        config_init(&c);
        cr_assert(isnan(c.default_budget), "not set reads %g", c.default_budget);
        cr_assert(load_text(&c, "[master]\n", err, sizeof(err)) == 0, "%s", err);
        cr_assert(isnan(c.default_budget), "not set reads %g", c.default_budget);
        config_fini(&c);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                config_init(&c);
                cr_assert(load_text(&c, cases[i].text, err, sizeof(err)) == 0, "%s", err);
                cr_assert(c.default_budget == cases[i].want, "%s: %g", cases[i].text,
                          c.default_budget);
                config_fini(&c);
        }
        expect_refused("[master]\ndefault_budget = -1\n", "fmud.conf:2", "no budget");
        expect_refused("[master]\ndefault_budget = nan\n", "fmud.conf:2", "no budget");
        expect_refused("[master]\ndefault_budget = -inf\n", "fmud.conf:2", "no budget");
}

/* The pacing defaults: none, 0 and 0 unless set; a policy by name, microseconds bounded. */
Test(fmud_config, pacing_defaults_overrun_margin_and_spin, .init = setup, .fini = teardown)
{
        struct fmud_config c;
        char err[512] = "";

        config_init(&c);
        cr_assert(c.overrun == SCENARIO_OVERRUN_NONE);
        cr_assert(c.overrun_margin_us == 0.0);
        cr_assert(c.spin_us == 0.0);
        cr_assert(load_text(&c, "[master]\noverrun = soft\noverrun_margin_us = 250\n"
                                "spin_us = 80\n", err, sizeof(err)) == 0, "%s", err);
        cr_assert(c.overrun == SCENARIO_OVERRUN_SOFT);
        cr_assert(c.overrun_margin_us == 250.0);
        cr_assert(c.spin_us == 80.0);
        config_fini(&c);
        expect_refused("[master]\noverrun = firm\n", "fmud.conf:2", "must be none, soft or hard");
        expect_refused("[master]\noverrun_margin_us = -1\n", "fmud.conf:2",
                       "must be 0 to 1e12 microseconds");
        expect_refused("[master]\nspin_us = 2000000\n", "fmud.conf:2",
                       "must be 0 to 1000000 microseconds");
}

Test(fmud_config, roles_are_parsed_and_default_to_observer, .init = setup, .fini = teardown)
{
        struct fmud_config c;
        char err[512] = "";

        config_init(&c);
        cr_assert(c.default_role == ACCESS_OBSERVER && c.n_role_users == 0 && c.n_role_groups == 0);
        cr_assert(load_text(&c, "[roles]\ndefault_role = operator\nuser = alice admin\n"
                                "user = 1001\toperator\ngroup = sim observer\n", err,
                            sizeof(err)) == 0, "%s", err);
        cr_assert(c.default_role == ACCESS_OPERATOR);
        cr_assert(c.n_role_users == 2 && c.n_role_groups == 1);
        cr_assert_str_eq(c.role_users[0].name, "alice");
        cr_assert(c.role_users[0].role == ACCESS_ADMIN);
        cr_assert_str_eq(c.role_users[1].name, "1001");
        cr_assert(c.role_users[1].role == ACCESS_OPERATOR);
        cr_assert_str_eq(c.role_groups[0].name, "sim");
        cr_assert(c.role_groups[0].role == ACCESS_OBSERVER);
        config_fini(&c);
}

Test(fmud_config, bad_roles_are_refused_with_file_and_line, .init = setup, .fini = teardown)
{
        expect_refused("[roles]\ndefault_role = root\n", "fmud.conf:2:", "observer, operator or admin");
        expect_refused("[roles]\nuser = alice\n", "fmud.conf:2:", "a name (or number) and a role");
        expect_refused("[roles]\n\ngroup = sim superuser\n", "fmud.conf:3:", "group = ");
        expect_refused("[roles]\nuser = a:b admin\n", "fmud.conf:2:", "a role");
        expect_refused("[roles]\nwho = alice admin\n", "fmud.conf:2:", "who");
}

Test(fmud_config, output_dirs_and_the_state_dir_from_the_file_and_the_command_line,
     .init = setup, .fini = teardown)
{
        static const char text[] = "[paths]\nallow = /srv/read\noutput_dir = /srv/out1\n"
                                   "output_dir = /srv/out2\nstate_dir = /var/lib/x\n";
        char *argv[] = { "fmud", "--output-dir", "/opt/out", "--state-dir", "/st", NULL };
        struct fmud_config c;
        struct fmud_args a;
        char err[512] = "";

        config_init(&c);
        cr_assert(load_text(&c, text, err, sizeof(err)) == 0, "%s", err);
        /* Reading and writing are configured apart. */
        cr_assert(c.n_allow == 1, "%zu", c.n_allow);
        cr_assert_str_eq(c.allow[0], "/srv/read");
        cr_assert(c.n_output == 2, "%zu", c.n_output);
        cr_assert_str_eq(c.output[0], "/srv/out1");
        cr_assert_str_eq(c.output[1], "/srv/out2");
        cr_assert_str_eq(c.state_dir, "/var/lib/x");
        cr_assert(config_parse_args(5, argv, &a, err, sizeof(err)) == 0, "%s", err);
        cr_assert(config_apply_args(&c, &a, err, sizeof(err)) == 0, "%s", err);
        cr_assert(c.n_output == 1, "%zu", c.n_output);
        cr_assert_str_eq(c.output[0], "/opt/out");
        cr_assert_str_eq(c.state_dir, "/st");
        cr_assert(c.n_allow == 1, "%zu", c.n_allow);
        free(a.allow);
        free(a.output);
        config_fini(&c);
}

Test(fmud_config, a_relative_output_dir_is_refused, .init = setup, .fini = teardown)
{
        char *argv[] = { "fmud", "--output-dir", "out", NULL };
        struct fmud_config c;
        struct fmud_args a;
        char err[512] = "";

        config_init(&c);
        cr_assert(load_text(&c, "[paths]\noutput_dir = rel\n", err, sizeof(err)) == -EINVAL);
        cr_assert(strstr(err, "output_dir = 'rel': must be an absolute path") != NULL, "%s", err);
        cr_assert(config_parse_args(3, argv, &a, err, sizeof(err)) == 0, "%s", err);
        cr_assert(config_apply_args(&c, &a, err, sizeof(err)) == -EINVAL);
        cr_assert_str_eq(err, "--output-dir 'out': must be an absolute path");
        cr_assert(c.n_output == 0, "%zu", c.n_output);
        free(a.allow);
        free(a.output);
        config_fini(&c);
}

Test(fmud_config, the_pub_endpoint_defaults_to_events_sock_beside_the_control_socket, .init = setup,
     .fini = teardown)
{
        struct fmud_config c;
        char err[512] = "";

        config_init(&c);
        cr_assert(load_text(&c, "[control]\nendpoint = ipc:///srv/rig/ctl.sock\n"
                                "[paths]\nworker = /bin/true\n", err, sizeof(err)) == 0, "%s", err);
        cr_assert(config_finish(&c, err, sizeof(err)) == 0, "%s", err);
        cr_assert_str_eq(c.pub_endpoint, "ipc:///srv/rig/events.sock");
        config_fini(&c);
        /* A control socket named events.sock leaves no name to derive: say which key to set. */
        config_init(&c);
        cr_assert(load_text(&c, "[control]\nendpoint = ipc:///srv/rig/events.sock\n"
                                "[paths]\nworker = /bin/true\n", err, sizeof(err)) == 0, "%s", err);
        cr_assert(config_finish(&c, err, sizeof(err)) == -EINVAL);
        cr_assert_str_eq(err, "endpoint 'ipc:///srv/rig/events.sock': the events socket would be "
                              "the control socket itself: set pub_endpoint (--pub-endpoint)");
        config_fini(&c);
        /* Given, it is kept. */
        config_init(&c);
        cr_assert(load_text(&c, "[control]\nendpoint = ipc:///srv/rig/events.sock\n"
                                "pub_endpoint = ipc:///srv/rig/pub.sock\n"
                                "[paths]\nworker = /bin/true\n", err, sizeof(err)) == 0, "%s", err);
        cr_assert(config_finish(&c, err, sizeof(err)) == 0, "%s", err);
        cr_assert_str_eq(c.pub_endpoint, "ipc:///srv/rig/pub.sock");
        config_fini(&c);
}

Test(fmud_config, config_and_no_config_exclude_each_other)
{
        char *both[] = { "fmud", "--no-config", "--config", "/etc/fmud/fmud.conf", NULL };
        char *none[] = { "fmud", "--no-config", NULL };
        struct fmud_args a;
        char err[512] = "";

        cr_assert(config_parse_args(4, both, &a, err, sizeof(err)) == -EINVAL);
        cr_assert_str_eq(err, "--config and --no-config exclude each other");
        cr_assert(config_parse_args(2, none, &a, err, sizeof(err)) == 0, "%s", err);
        cr_assert(a.no_config && !a.config);
        free(a.allow);
        free(a.output);
}

/* The entries of env, joined by spaces, into buf. */
static const char *joined(char **env, char *buf, size_t size)
{
        size_t len = 0;

        buf[0] = '\0';
        for (size_t i = 0; env[i]; i++)
                len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? " " : "", env[i]);
        return buf;
}

/*
 * A worker's environment: the names pass_env gives, a default PATH when
 * PATH is not among them; '*' all of the daemon's but the service
 * manager's own variables (NOTIFY_SOCKET would let an FMU speak to systemd
 * for the daemon), which only a name passes.
 */
Test(fmud_config, pass_env_gives_workers_the_named_variables_only)
{
        char *from[] = { "LM_LICENSE_FILE=27000@lic", "HOME=/root", "NOTIFY_SOCKET=/run/notify",
                         "LISTEN_FDS=1", "PATH=/opt/bin", "X", NULL };
        char buf[512];
        char **env;

        env = worker_env_new(NULL, from);
        cr_assert(strcmp(joined(env, buf, sizeof(buf)), "PATH=/usr/local/bin:/usr/bin:/bin") == 0,
                  "%s", buf);
        free(env);
        env = worker_env_new("LM_LICENSE_FILE, NOTIFY_SOCKET", from);
        cr_assert(strcmp(joined(env, buf, sizeof(buf)), "LM_LICENSE_FILE=27000@lic "
                         "NOTIFY_SOCKET=/run/notify PATH=/usr/local/bin:/usr/bin:/bin") == 0,
                  "%s", buf);
        free(env);
        env = worker_env_new("*", from);
        cr_assert(strcmp(joined(env, buf, sizeof(buf)), "LM_LICENSE_FILE=27000@lic HOME=/root "
                         "PATH=/opt/bin") == 0, "%s", buf);
        free(env);
        cr_assert(worker_env_bad("A_1 b") == NULL);
        cr_assert(worker_env_bad("*") == NULL);
        cr_assert(worker_env_bad("1A") != NULL);
        cr_assert(worker_env_bad("A=B") != NULL);
}
