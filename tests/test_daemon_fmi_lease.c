/*
 * daemon: leases of transient instances and detach (PROTOCOL.md
 * "instantiate", "detach"). A client that goes away without a word loses
 * its transient instance and session once the lease runs out, their
 * workers reaped; one that detached them first keeps them; only the
 * lease's holder may detach, and only what is transient.
 *
 * The daemon runs with transient_grace = 1 s. Waits are bounded by
 * generous hang guards, never measured.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon_fixture.h"

#define GUARD_POLLS     1200    /* of 50 ms: a minute, a hang guard only */
#define LINEAR_ODE      FMUD_TEST_FMU_DIR "/LinearOde.fmu"

static struct fmud_daemon d;
static struct fmud *c;
static char conf_dir[] = "/tmp/fmud-fmi-lease-XXXXXX";
static char conf[sizeof(conf_dir) + 16];
static uint64_t next_id = 1;

static void nap_ms(long ms)
{
        struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

        nanosleep(&ts, NULL);
}

static void setup(void)
{
        const char *extra[] = { "--config", conf, NULL };
        FILE *f;

        cr_assert(mkdtemp(conf_dir) != NULL, "mkdtemp: %s", strerror(errno));
        snprintf(conf, sizeof(conf), "%s/fmud.conf", conf_dir);
        f = fopen(conf, "w");
        cr_assert(f != NULL);
        fputs("[limits]\ntransient_grace = 1\n", f);
        cr_assert(fclose(f) == 0);
        daemon_start(&d, extra);
        c = daemon_connect(&d);
}

static void teardown(void)
{
        fmud_close(c);
        c = NULL;
        daemon_stop(&d);
        unlink(conf);
        rmdir(conf_dir);
}

TestSuite(daemon_fmi_lease, .init = setup, .fini = teardown, .timeout = 120);

/* Send w on r and read the reply into rep (the caller finishes it). */
static void exchange(struct daemon_raw *r, struct pw *w, struct daemon_raw_reply *rep)
{
        daemon_raw_send_pw(r, w);
        pw_fini(w);
        daemon_raw_recv(r, rep);
}

/* A transient instance of LinearOde made on r; its number. */
static uint64_t transient_instance(struct daemon_raw *r)
{
        struct daemon_raw_reply rep;
        uint64_t id = 0;
        struct pw w;

        cr_assert(pw_init(&w) == 0);
        proto_instantiate_encode(&w, next_id++, &(struct proto_instantiate){
                .fmu = daemon_str(LINEAR_ODE), .transient = true });
        exchange(r, &w, &rep);
        cr_assert(rep.rep.ok, "instantiate: %s", rep.message);
        cr_assert(pv_u64(pv_get(rep.rep.result, "instance"), &id) == 0);
        daemon_raw_reply_fini(&rep);
        return id;
}

/* A transient session of LinearOde loaded on r; its number. */
static uint64_t transient_session(struct daemon_raw *r)
{
        struct daemon_raw_reply rep;
        uint64_t id = 0;
        struct pw w;

        cr_assert(pw_init(&w) == 0);
        proto_load_encode(&w, next_id++, &(struct proto_load){
                .path = daemon_str(LINEAR_ODE), .transient = true });
        exchange(r, &w, &rep);
        cr_assert(rep.rep.ok, "load: %s", rep.message);
        cr_assert(pv_u64(pv_get(rep.rep.result, "session"), &id) == 0);
        daemon_raw_reply_fini(&rep);
        return id;
}

/* detach {key: id} on r: 0, or the refusal's code with its message in msg. */
static int detach(struct daemon_raw *r, const char *key, uint64_t id, char *msg, size_t size)
{
        struct daemon_raw_reply rep;
        struct pw w;
        int code;

        cr_assert(pw_init(&w) == 0);
        proto_req_begin(&w, next_id++, PROTO_OP_DETACH, 1);
        pw_str(&w, key);
        pw_u64(&w, id);
        exchange(r, &w, &rep);
        code = rep.rep.ok ? 0 : rep.rep.code;
        if (size) {
                strncpy(msg, rep.message, size - 1);
                msg[size - 1] = 0;
        }
        daemon_raw_reply_fini(&rep);
        return code;
}

/* Whether id is listed; *ret_transient its flag. */
static bool listed(uint64_t id, bool *ret_transient)
{
        struct proto_list_result l;

        cr_assert(eq(int, fmud_list(c, &l), 0), "%s", fmud_errmsg(c));
        for (uint32_t i = 0; i < l.n; i++)
                if (l.sessions[i].session == id) {
                        if (ret_transient)
                                *ret_transient = l.sessions[i].transient;
                        return true;
                }
        return false;
}

static void wait_gone(uint64_t id)
{
        int i;

        for (i = 0; i < GUARD_POLLS && listed(id, NULL); i++)
                nap_ms(50);
        cr_assert(listed(id, NULL) == false, "%llu still listed long after its owner went",
                  (unsigned long long)id);
}

Test(daemon_fmi_lease, a_vanished_owner_loses_what_it_did_not_detach)
{
        struct daemon_raw gone, kept;
        uint64_t gi, gs, ki, ks;
        bool transient = true;
        char msg[256];

        daemon_raw_open(&d, &gone);
        daemon_raw_open(&d, &kept);
        gi = transient_instance(&gone);
        gs = transient_session(&gone);
        ki = transient_instance(&kept);
        ks = transient_session(&kept);
        cr_assert(eq(int, detach(&kept, "instance", ki, msg, sizeof(msg)), 0), "%s", msg);
        cr_assert(eq(int, detach(&kept, "session", ks, msg, sizeof(msg)), 0), "%s", msg);
        /* Both clients go silent; neither says goodbye. */
        daemon_raw_close(&gone);
        daemon_raw_close(&kept);
        wait_gone(gi);
        wait_gone(gs);
        /* Past another grace: what was detached has no lease to run out. */
        nap_ms(1500);
        cr_assert(listed(ki, &transient), "the detached instance stays");
        cr_assert(not(transient));
        cr_assert(listed(ks, &transient), "the detached session stays");
        cr_assert(not(transient));
        /* The expired instance's worker is gone: the detached ones' two remain. */
        cr_assert(eq(sz, daemon_children(d.pid, (pid_t[8]){ 0 }, 8), 2));
}

Test(daemon_fmi_lease, only_the_leases_holder_detaches_and_only_what_is_transient)
{
        struct daemon_raw owner, other;
        char msg[256];
        uint64_t i;

        daemon_raw_open(&d, &owner);
        daemon_raw_open(&d, &other);
        i = transient_instance(&owner);
        cr_assert(eq(int, detach(&other, "instance", i, msg, sizeof(msg)), PROTO_E_DENIED));
        cr_assert(strstr(msg, "is leased to another connection: only its owner may detach it") != NULL,
                  "%s", msg);
        cr_assert(eq(int, detach(&owner, "instance", i, msg, sizeof(msg)), 0), "%s", msg);
        cr_assert(eq(int, detach(&owner, "instance", i, msg, sizeof(msg)), PROTO_E_STATE));
        cr_assert(strstr(msg, "is not transient: nothing to detach") != NULL, "%s", msg);
        cr_assert(eq(int, detach(&owner, "session", 777, msg, sizeof(msg)),
                     PROTO_E_NO_SESSION));
        cr_assert(strstr(msg, "no session or instance 777") != NULL, "%s", msg);
        cr_assert(eq(int, detach(&owner, "generation", 1, msg, sizeof(msg)),
                     PROTO_E_BAD_REQUEST));
        cr_assert(listed(i, NULL), "the refusals harmed nothing");
        daemon_raw_close(&owner);
        daemon_raw_close(&other);
}
