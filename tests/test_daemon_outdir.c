/*
 * daemon: writing is not reading. A results file a client names lies
 * below an output directory (the allowed ones only govern reading); an
 * existing file is replaced only when it is that client's results from
 * an earlier run, or the load says force; a new file belongs to the
 * client that asked (a root daemon chowns it to the ipc peer's uid and
 * gid); a load that names no file writes below the state directory and
 * says where.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "daemon_fixture.h"
#include "support/as_other.h"
#include "support/run.h"
#include "support/tmpdir.h"


static const char precious[] = "not results: a file the daemon did not write\n";

/* Load Feedthrough (its outputs recorded) writing out (NULL: none named). */
static int load(struct fmud *c, const char *out, bool force, uint64_t *ret_session)
{
        struct proto_load a = {
                .path = daemon_str(FMUD_TEST_FMU_DIR "/Feedthrough.fmu"),
                .out = daemon_str(out ? out : ""),
                .force = force,
        };

        return fmud_load(c, &a, ret_session, NULL);
}

static void unload(struct fmud *c, uint64_t s)
{
        cr_assert(eq(int, fmud_unload(c, &(struct proto_target){ .session = s }), 0), "%s",
                  fmud_errmsg(c));
}

/* The whole file (caller frees); NULL when it cannot be read. */
static char *slurp(const char *path, size_t *ret_len)
{
        FILE *f = fopen(path, "re");
        char *buf = calloc(1, 1 << 16);
        size_t n;

        if (!f || !buf) {
                if (f)
                        fclose(f);
                free(buf);
                return NULL;
        }
        n = fread(buf, 1, (1 << 16) - 1, f);
        fclose(f);
        *ret_len = n;
        return buf;
}

static void assert_unchanged(const char *path)
{
        size_t len = 0;
        char *now = slurp(path, &len);

        cr_assert(now != NULL, "'%s' is gone", path);
        cr_assert(eq(sz, len, sizeof(precious) - 1), "'%s' changed: %s", path, now);
        cr_assert(eq(int, memcmp(now, precious, len), 0), "'%s' changed: %s", path, now);
        free(now);
}

static void assert_results(const char *path)
{
        size_t len = 0;
        char *now = slurp(path, &len);

        cr_assert(now != NULL, "'%s' is not there", path);
        cr_assert(eq(int, strncmp(now, "time,", 5), 0), "'%s' holds no results: %s", path, now);
        free(now);
}

Test(daemon_outdir, results_below_an_allowed_directory_that_is_no_output_directory_are_denied)
{
        char *readonly = tmpdir_new("fmud-outdir-read"), *victim, *extra_arg;
        const char *extra[3];
        struct fmud_daemon d;
        struct fmud *c;
        uint64_t s;
        int r;

        cr_assert(readonly != NULL);
        cr_assert(eq(int, tmpdir_write(readonly, "scenario.ssd", precious, sizeof(precious) - 1), 0));
        cr_assert(asprintf(&victim, "%s/scenario.ssd", readonly) > 0);
        extra_arg = readonly;
        extra[0] = "--allow";
        extra[1] = extra_arg;
        extra[2] = NULL;
        daemon_start(&d, extra);
        c = daemon_connect(&d);
        r = load(c, victim, false, &s);
        daemon_assert_refused(c, r, PROTO_E_DENIED, "results over a file one may only read");
        cr_assert(strstr(fmud_errmsg(c), "not below an output directory") != NULL, "%s",
                  fmud_errmsg(c));
        /* Not even with force: the place decides, not the file. */
        r = load(c, victim, true, &s);
        daemon_assert_refused(c, r, PROTO_E_DENIED, "results over a file one may only read");
        assert_unchanged(victim);
        fmud_close(c);
        daemon_stop(&d);
        free(victim);
        tmpdir_free(readonly);
}

Test(daemon_outdir, an_existing_file_is_refused_without_force_and_replaced_with_it)
{
        struct fmud_daemon d;
        struct fmud *c;
        char *victim, *other, *link_path;
        uint64_t s;
        int r;

        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        cr_assert(eq(int, tmpdir_write(d.dir, "old.csv", precious, sizeof(precious) - 1), 0));
        victim = daemon_path(&d, "old.csv");
        r = load(c, victim, false, &s);
        daemon_assert_refused(c, r, PROTO_E_DENIED, "results over a file the daemon did not write");
        cr_assert(strstr(fmud_errmsg(c), victim) != NULL, "%s", fmud_errmsg(c));
        cr_assert(strstr(fmud_errmsg(c), "--force") != NULL, "%s", fmud_errmsg(c));
        assert_unchanged(victim);
        cr_assert(eq(int, load(c, victim, true, &s), 0), "%s", fmud_errmsg(c));
        cr_assert(daemon_str_eq((struct proto_str){ fmud_load_out(c),
                                                    (uint32_t)strlen(fmud_load_out(c)) }, victim));
        /* The unload completes the file: what a load wrote may still be in flight. */
        unload(c, s);
        assert_results(victim);
        /* Replaced for this client: from now on its own results, replaced without force. */
        cr_assert(eq(int, load(c, victim, false, &s), 0), "%s", fmud_errmsg(c));
        unload(c, s);
        /* A hard link to a file elsewhere: not even with force. */
        cr_assert(eq(int, tmpdir_write(d.dir, "elsewhere", precious, sizeof(precious) - 1), 0));
        other = daemon_path(&d, "elsewhere");
        link_path = daemon_path(&d, "link.csv");
        cr_assert(eq(int, link(other, link_path), 0));
        r = load(c, link_path, true, &s);
        daemon_assert_refused(c, r, PROTO_E_DENIED, "results over a hard link");
        cr_assert(strstr(fmud_errmsg(c), "hard links") != NULL, "%s", fmud_errmsg(c));
        assert_unchanged(other);
        free(other);
        free(link_path);
        fmud_close(c);
        free(victim);
        daemon_stop(&d);
}

Test(daemon_outdir, a_second_run_of_the_same_client_replaces_its_own_results)
{
        struct fmud_daemon d;
        struct fmud *c;
        char *out;
        uint64_t s;

        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        out = daemon_path(&d, "run.csv");
        cr_assert(eq(int, load(c, out, false, &s), 0), "%s", fmud_errmsg(c));
        unload(c, s);
        assert_results(out);
        cr_assert(eq(int, load(c, out, false, &s), 0), "%s", fmud_errmsg(c));
        unload(c, s);
        assert_results(out);
        fmud_close(c);
        free(out);
        daemon_stop(&d);
}

/*
 * Two sessions loaded at once naming one results file, even with force
 * and by the same client: the second is refused while the first holds
 * the file (both wrote into it, one header over the other's rows), and
 * accepted once the first is unloaded.
 */
Test(daemon_outdir, a_results_file_another_loaded_session_writes_is_refused)
{
        struct fmud_daemon d;
        struct fmud *c;
        char *out;
        uint64_t s1, s2;

        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        out = daemon_path(&d, "run.csv");
        cr_assert(eq(int, load(c, out, false, &s1), 0), "%s", fmud_errmsg(c));
        for (int force = 0; force < 2; force++) {
                int r = load(c, out, force, &s2);

                daemon_assert_refused(c, r, PROTO_E_STATE, "a file another session writes");
                cr_assert(strstr(fmud_errmsg(c), "another session still loaded") != NULL, "%s",
                          fmud_errmsg(c));
        }
        cr_assert(eq(int, fmud_start(c, &(struct proto_target){ .session = s1 }, NULL), 0), "%s",
                  fmud_errmsg(c));
        unload(c, s1);
        assert_results(out);
        cr_assert(eq(int, load(c, out, false, &s2), 0), "%s", fmud_errmsg(c));
        unload(c, s2);
        assert_results(out);
        fmud_close(c);
        free(out);
        daemon_stop(&d);
}

Test(daemon_outdir, a_load_that_names_no_file_writes_below_the_state_directory_and_says_where)
{
        struct proto_session_status st;
        struct fmud_daemon d;
        struct fmud *c;
        char *prefix, *out;
        uint64_t s;

        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        cr_assert(eq(int, load(c, NULL, false, &s), 0), "%s", fmud_errmsg(c));
        cr_assert(fmud_load_out(c) != NULL, "the load's reply says nothing of its results");
        out = strdup(fmud_load_out(c));
        cr_assert(asprintf(&prefix, "%s/results/session-%llu-", d.state_dir,
                           (unsigned long long)s) > 0);
        cr_assert(eq(int, strncmp(out, prefix, strlen(prefix)), 0), "%s", out);
        cr_assert(strstr(out, "/results.csv") != NULL, "%s", out);
        cr_assert(eq(int, fmud_status(c, s, &st), 0), "%s",
                  fmud_errmsg(c));
        cr_assert(daemon_str_eq(st.out, out), "status out: %.*s", (int)st.out.len, st.out.ptr);
        unload(c, s);
        assert_results(out);
        /* Another load: another directory, never the first one's file. */
        cr_assert(eq(int, load(c, NULL, false, &s), 0), "%s", fmud_errmsg(c));
        cr_assert(strcmp(fmud_load_out(c), out) != 0, "%s", out);
        unload(c, s);
        fmud_close(c);
        free(prefix);
        free(out);
        daemon_stop(&d);
}

/* fmuctl ARGS... (NULL-terminated) against d; the caller frees with run_result_fini(). */
static struct run_result fmuctl(const struct fmud_daemon *d, const char *const args[])
{
        char *argv[32] = { (char *)FMUD_FMUCTL };
        struct run_result r = { 0 };
        size_t n = 1;

        for (; args[n - 1] && n < 29; n++)
                argv[n] = (char *)args[n - 1];
        argv[n++] = "--endpoint";
        argv[n++] = d->endpoint;
        argv[n] = NULL;
        cr_assert(eq(int, run_capture(argv, &r), 0));
        return r;
}

Test(daemon_outdir, fmuctl_names_force_when_it_is_refused_and_force_replaces)
{
        struct fmud_daemon d;
        struct run_result r;
        char *victim;

        daemon_start(&d, NULL);
        cr_assert(eq(int, tmpdir_write(d.dir, "old.csv", precious, sizeof(precious) - 1), 0));
        victim = daemon_path(&d, "old.csv");
        r = fmuctl(&d, (const char *[]){ "load", FMUD_TEST_FMU_DIR "/Feedthrough.fmu", "--out",
                                         victim, NULL });
        cr_assert(eq(int, r.exit_code, 1), "%s%s", r.out, r.err);
        cr_assert(strstr(r.err, victim) != NULL && strstr(r.err, "--force") != NULL, "%s", r.err);
        run_result_fini(&r);
        assert_unchanged(victim);
        r = fmuctl(&d, (const char *[]){ "load", FMUD_TEST_FMU_DIR "/Feedthrough.fmu", "--out",
                                         victim, "--force", "--json", NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s%s", r.out, r.err);
        cr_assert(strstr(r.out, "\"out\"") != NULL && strstr(r.out, victim) != NULL, "%s", r.out);
        run_result_fini(&r);
        /* Session 2: the forced load (see below); its unload completes the file. */
        r = fmuctl(&d, (const char *[]){ "unload", "2", NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s%s", r.out, r.err);
        run_result_fini(&r);
        assert_results(victim);
        /* No file named: the state directory's, which status names. */
        r = fmuctl(&d, (const char *[]){ "load", FMUD_TEST_FMU_DIR "/Feedthrough.fmu", NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s%s", r.out, r.err);
        /* Session 1 was the refused load (refused on its own thread), 2 the forced one. */
        cr_assert(eq(str, r.out, "3\n"));
        run_result_fini(&r);
        r = fmuctl(&d, (const char *[]){ "status", "3", NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s%s", r.out, r.err);
        cr_assert(strstr(r.out, "out") != NULL && strstr(r.out, d.state_dir) != NULL, "%s", r.out);
        run_result_fini(&r);
        free(victim);
        daemon_stop(&d);
}

struct other_load {
        const struct fmud_daemon *d;
        const char *out;
};

/* As the other user: load writing out (NULL: none); 0, or 4 with the daemon's message. */
static int load_as_other(void *ctx, int report_fd)
{
        const struct other_load *o = ctx;
        struct proto_load a = {
                .path = daemon_str(FMUD_TEST_FMU_DIR "/Feedthrough.fmu"),
                .out = daemon_str(o->out ? o->out : ""),
        };
        char err[512], line[4096];
        struct fmud *c = NULL;
        uint64_t s;
        int r;

        if (fmud_connect(o->d->endpoint, NULL, &c, err, sizeof(err)) < 0)
                return 3;
        r = fmud_load(c, &a, &s, NULL);
        snprintf(line, sizeof(line), "%s", r < 0 ? fmud_errmsg(c) :
                 fmud_load_out(c) ? fmud_load_out(c) : "");
        (void) !write(report_fd, line, strlen(line));
        fmud_close(c);
        return r < 0 ? 4 : 0;
}

/* Run load_as_other() as the other user; its exit status, line what it wrote. */
static int other_loads(const struct fmud_daemon *d, const char *out, char *line, size_t size)
{
        struct other_load o = { d, out };
        int status = 0;
        ssize_t n;

        n = as_other(load_as_other, &o, line, size - 1, &status);
        cr_assert(n >= 0, "%s", strerror((int)-n));
        line[n] = '\0';
        if (status < 0)
                cr_fatal("the child did not exit");
        return status;
}

Test(daemon_outdir, a_root_daemon_gives_the_new_results_file_to_the_client_that_asked)
{
        static const char roles[] = "[roles]\nuser = 65534 operator\n";
        char line[4096], mark[64], *out, *sock, *conf_dir, *conf;
        struct fmud_daemon d;
        struct stat st;
        struct fmud *c;
        ssize_t n;
        uint64_t s;
        int r;

        if (geteuid() != 0)
                cr_skip_test("needs root: the daemon chowns results to another uid only as root");
        /* The other user (65534) may load: an operator. */
        conf_dir = tmpdir_new("outdir-conf");
        cr_assert(conf_dir != NULL);
        cr_assert(eq(int, tmpdir_write(conf_dir, "fmud.conf", roles, sizeof(roles) - 1), 0));
        cr_assert(asprintf(&conf, "%s/fmud.conf", conf_dir) > 0);
        daemon_start(&d, (const char *const[]){ "--config", conf, NULL });
        /* The other user must reach the socket and the output directory. */
        sock = daemon_path(&d, "control.sock");
        cr_assert(eq(int, chmod(d.dir, 0777), 0));
        cr_assert(eq(int, chmod(sock, 0666), 0));
        out = daemon_path(&d, "theirs.csv");
        r = other_loads(&d, out, line, sizeof(line));
        cr_assert(eq(int, r, 0), "the other user's load: %d %s", r, line);
        cr_assert(eq(int, stat(out, &st), 0));
        cr_assert(eq(u32, (uint32_t)st.st_uid, AS_OTHER_UID));
        cr_assert(eq(u32, (uint32_t)st.st_gid, AS_OTHER_GID));
        n = getxattr(out, "trusted.fmud.results", mark, sizeof(mark) - 1);
        cr_assert(n > 0, "not marked");
        mark[n] = '\0';
        cr_assert(eq(str, mark, "uid=65534"));
        /* Another client (root here) over it: not its results, refused. */
        c = daemon_connect(&d);
        r = load(c, out, false, &s);
        daemon_assert_refused(c, r, PROTO_E_DENIED, "another client's results");
        /* The same client again, once its session that writes it is gone: its own, replaced. */
        {
                struct proto_list_result l;

                cr_assert(eq(int, fmud_list(c, &l), 0), "%s", fmud_errmsg(c));
                cr_assert(eq(u32, l.n, 1));
                unload(c, l.sessions[0].session);
        }
        r = other_loads(&d, out, line, sizeof(line));
        cr_assert(eq(int, r, 0), "the other user's second load: %d %s", r, line);
        /* No file named: a directory of the state directory, theirs too. */
        r = other_loads(&d, NULL, line, sizeof(line));
        cr_assert(eq(int, r, 0), "the other user's load: %d %s", r, line);
        cr_assert(eq(int, stat(line, &st), 0), "%s", line);
        cr_assert(eq(u32, (uint32_t)st.st_uid, AS_OTHER_UID));
        *strrchr(line, '/') = '\0';
        cr_assert(eq(int, stat(line, &st), 0), "%s", line);
        cr_assert(eq(u32, (uint32_t)st.st_uid, AS_OTHER_UID));
        fmud_close(c);
        free(out);
        free(sock);
        daemon_stop(&d);
        free(conf);
        tmpdir_free(conf_dir);
}

/* precious at name in d's folder, mode, owner uid, marked as mark (the client's own ident). */
static char *forged(struct fmud_daemon *d, const char *name, mode_t mode, uid_t uid,
                    const char *mark)
{
        const char *attr = geteuid() == 0 ? "trusted.fmud.results" : "user.fmud.results";
        char *path = daemon_path(d, name);

        cr_assert(eq(int, tmpdir_write(d->dir, name, precious, sizeof(precious) - 1), 0));
        cr_assert(eq(int, chmod(path, mode), 0));
        if (uid != geteuid())
                cr_assert(eq(int, chown(path, uid, (gid_t)-1), 0));
        if (setxattr(path, attr, mark, strlen(mark), 0) < 0)
                cr_skip_test("the test folder keeps no %s attribute", attr);
        return path;
}

Test(daemon_outdir, a_mark_on_a_file_others_may_write_or_own_is_not_the_clients)
{
        struct fmud_daemon d;
        char mark[32], *open_to_all, *owned_by_other, *plain;
        struct fmud *c;
        uint64_t s;
        int r;

        snprintf(mark, sizeof(mark), "uid=%u", (unsigned)geteuid());
        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        /* Made writable to everyone: anyone could have put the client's mark on it. */
        open_to_all = forged(&d, "open.csv", 0666, geteuid(), mark);
        r = load(c, open_to_all, false, &s);
        daemon_assert_refused(c, r, PROTO_E_DENIED, "a marked file others may write");
        cr_assert(strstr(fmud_errmsg(c), "not this client's results") != NULL, "%s",
                  fmud_errmsg(c));
        assert_unchanged(open_to_all);
        free(open_to_all);
        open_to_all = forged(&d, "group.csv", 0620, geteuid(), mark);
        r = load(c, open_to_all, false, &s);
        daemon_assert_refused(c, r, PROTO_E_DENIED, "a marked file its group may write");
        assert_unchanged(open_to_all);
        /* Another user's file with the client's mark on it. */
        if (geteuid() == 0) {
                owned_by_other = forged(&d, "other.csv", 0644, AS_OTHER_UID, mark);
                r = load(c, owned_by_other, false, &s);
                daemon_assert_refused(c, r, PROTO_E_DENIED, "a marked file another user owns");
                assert_unchanged(owned_by_other);
                free(owned_by_other);
        }
        /* The client's own file, writable by it alone, with its mark: replaced. */
        plain = forged(&d, "own.csv", 0644, geteuid(), mark);
        cr_assert(eq(int, load(c, plain, false, &s), 0), "%s", fmud_errmsg(c));
        unload(c, s);
        assert_results(plain);
        fmud_close(c);
        free(plain);
        free(open_to_all);
        daemon_stop(&d);
}
