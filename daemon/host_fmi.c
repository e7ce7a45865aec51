/*
 * host_fmi: FMI-level instances (PROTOCOL.md "instantiate", "free"): one
 * FMU instance in its own sandboxed worker, created and called by a remote
 * master that runs its own co-simulation algorithm.
 *
 * DESIGN: an instance is a session without a master (struct hsess with
 * fmi set), not a kind of its own. That keeps everything a session already
 * has and an instance needs, unchanged and in one place: the registry and
 * its numbers (an instance's number is a session number), the owner and
 * role checks, transient leases and detach (host_lease.c), list and status
 * (kind "instance"), the daemon's limit of sessions, logs, and above all
 * the session's own thread and queue: the control thread never waits for
 * a worker, every FMI call is made on the instance's thread (fmi batches:
 * host_fmi_call.c). The FMU is read as a load reads a lone .fmu
 * (scenario_load(): the same path checks, upload by content, archive checks
 * and cache), then one worker is started with the daemon's sandbox options
 * and fmi3InstantiateCoSimulation (fmi2Instantiate) is called; the
 * instance then waits in the worker's Instantiated state for the master's
 * calls. A session's operations other than status, logs and unload are
 * refused on an instance (host_request.c), fmi and free on a session.
 */
#include "daemon/host_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

void hfmi_instantiate(struct host *h, uint64_t token, const struct proto_req *req,
                      const struct host_peer *peer)
{
        struct proto_instantiate a;
        char err[256];

        if (proto_instantiate_decode(req->args, &a, err, sizeof(err)) < 0) {
                host_reply_error(h, token, req->id, PROTO_E_BAD_REQUEST, "%s", err);
                return;
        }
        /* What a load of the lone .fmu would be: its checks, its upload, its lease. */
        host_sess_create(h, token, req, peer, &(struct proto_load){
                .path = a.fmu, .content = a.content, .sandbox = a.sandbox,
                .transient = a.transient }, true);
}

/* The FMU's messages go where a session's go (logs, the daemon's log), as component 0. */
static void fmu_log(void *ctx, struct inst *inst, int status, const char *category,
                    const char *message)
{
        struct hsess *hs = ctx;

        (void)inst;
        hlog_fmu(hs, 0, hs->st.name, status, category, message);
}

static bool ends_with(const char *s, const char *tail)
{
        size_t n = strlen(s), m = strlen(tail);

        return n >= m && !strcmp(s + n - m, tail);
}

/* Read the FMU into hs->sc (a one-component scenario): -1, or the refusal's code with msg. */
static int read_fmu(struct hsess *hs, const struct proto_instantiate *a, char **ret_path,
                    char *msg, size_t size)
{
        const struct proto_load la = { .path = a->fmu, .content = a->content };
        struct scenario_overrides o = { 0 };
        struct scenario_opts sopt;
        struct diag_list diags;
        char *const *dirs;
        char *input = NULL;
        int code, r;

        if (a->content.len) {
                code = hcontent_prepare(hs, &la, ret_path, &input, msg, size);
                free(input);
                if (code >= 0)
                        return code;
        } else {
                *ret_path = hvalues_strdup(&a->fmu);
        }
        if (!*ret_path) {
                snprintf(msg, size, "fmu: not a file name");
                return PROTO_E_BAD_REQUEST;
        }
        if (!ends_with(*ret_path, ".fmu")) {
                snprintf(msg, size, "fmu: '%s' is not a .fmu", *ret_path);
                /* An upload's by its name in the request, not the daemon's directory. */
                if (hs->content_dir)
                        hcontent_unprefix(hs, msg);
                return PROTO_E_INVALID;
        }
        diag_list_init(&diags, 64);
        scenario_opts_default(&sopt);
        sopt.cache_dir = hs->h->opts.cache_dir;
        sopt.confined = true;
        sopt.open_as = hcontent_dirs(hs, a->content.len > 0, &dirs, &sopt.n_allowed_dirs);
        sopt.allowed_dirs = (const char *const *)dirs;
        r = scenario_load(*ret_path, &sopt, &o, &diags, &hs->sc);
        code = -1;
        if (r == -EINVAL) {
                code = PROTO_E_INVALID;
                hload_diag_text(&diags, msg, size);
        } else if (r < 0 && diag_errors(&diags)) {
                hload_diag_text(&diags, msg, size);
                code = hload_refusal_code(r);
        } else if (r < 0) {
                code = PROTO_E_INVALID;
                snprintf(msg, size, "cannot load '%s': %s", *ret_path, strerror(-r));
        }
        if (r < 0 && hs->content_dir)
                hcontent_unprefix(hs, msg);
        diag_list_fini(&diags);
        return code;
}

/* Start the worker and instantiate: -1, or the refusal's code with msg. */
static int start(struct hsess *hs, const struct proto_instantiate *a, char *msg, size_t size)
{
        const struct host_opts *ho = &hs->h->opts;
        const struct fmu *fmu = hs->sc->components[0].fmu;
        struct inst_opts o;
        char *why = NULL;
        int r;

        if (hlog_start(hs) < 0) {
                snprintf(msg, size, "out of memory");
                return PROTO_E_INTERNAL;
        }
        inst_opts_default(&o);
        o.worker_path = ho->worker_path;
        o.fmu_dir = fmu->unpacked_dir;
        o.name = hs->st.name;
        o.timeout_ns = ho->call_timeout_ns;
        o.envp = ho->worker_envp;
        o.log = fmu_log;
        o.log_ctx = hs;
        hload_sandbox(hs, &o.sandbox);
        r = inst_new(&o, &hs->inst, &why);
        if (r < 0) {
                snprintf(msg, size, "%s: %s", hs->st.name, why ? why : strerror(-r));
                free(why);
                return PROTO_E_FAULT;
        }
        hs->n_workers = 1;
        atomic_fetch_add(&hs->h->workers, 1);
        r = inst_instantiate(hs->inst, &(struct inst_instantiate){
                .name = hs->st.name, .visible = a->visible, .logging_on = a->logging_on,
                .event_mode_used = a->event_mode_used,
                .early_return_allowed = a->early_return_allowed });
        if (r != INST_OK && r != INST_WARNING) {
                snprintf(msg, size, "%s: %s", hs->st.name,
                         r < 0 ? inst_message(hs->inst) : "the FMU could not be instantiated");
                return PROTO_E_FAULT;
        }
        return -1;
}

int hfmi_load(struct hsess *hs, int *ret_code, char *ret_msg, size_t ret_size)
{
        char msg[HOST_MSG_MAX] = "", err[256], *path = NULL, *name;
        struct proto_instantiate a;
        struct pv_doc doc = { 0 };
        int code = PROTO_E_INTERNAL;
        struct pw w;

        if (host_cmd_args(hs->h, hs->load, &doc) < 0) {
                snprintf(msg, sizeof(msg), "arguments: malformed");
                goto fail;
        }
        if (proto_instantiate_decode(doc.root, &a, err, sizeof(err)) < 0) {
                code = PROTO_E_BAD_REQUEST;
                snprintf(msg, sizeof(msg), "%s", err);
                goto fail;
        }
        code = read_fmu(hs, &a, &path, msg, sizeof(msg));
        if (code >= 0)
                goto fail;
        /*
         * A Model Exchange FMU is hosted as Co-Simulation, integrated in its
         * worker, as in a session; a Scheduled Execution one has no doStep
         * to call (its partitions are activated at its Clocks' ticks).
         */
        if (!hs->sc->components[0].fmu->md->cs.present ||
            hs->sc->components[0].fmu->md->hosted_se) {
                code = PROTO_E_UNSUPPORTED;
                snprintf(msg, sizeof(msg), "'%s' offers no Co-Simulation or Model Exchange "
                         "interface (a Scheduled Execution FMU runs in a session: load it)",
                         path);
                goto fail;
        }
        name = a.instance_name.len ? hvalues_strdup(&a.instance_name) :
                                     strdup(hs->sc->components[0].name);
        pthread_mutex_lock(&hs->lock);
        free(hs->st.name);
        hs->st.name = name;
        pthread_mutex_unlock(&hs->lock);
        if (!name) {
                code = PROTO_E_BAD_REQUEST;
                snprintf(msg, sizeof(msg), "instanceName: not a name");
                goto fail;
        }
        code = start(hs, &a, msg, sizeof(msg));
        if (code >= 0)
                goto fail;
        hs->generation = 1;
        hsess_set_state(hs, PROTO_STATE_LOADED, NULL);
        hlog_line(hs, LOG_NOTICE, "instantiated '%s' from '%s'", name, path);
        if (pw_init(&w) == 0) {
                proto_reply_ok_begin(&w, hs->load->id);
                pw_map(&w, 1);
                pw_str(&w, "instance");
                pw_u64(&w, hs->id);
                host_reply_take(hs->h, hs->load->token, hs->load->id, &w);
                pw_fini(&w);
        }
        hcmd_free(hs->load);
        hs->load = NULL;
        free(path);
        pv_doc_fini(&doc);
        return 0;
fail:
        *ret_code = code;
        snprintf(ret_msg, ret_size, "%s", msg[0] ? msg : "instantiate failed");
        hlog_line(hs, code == PROTO_E_FAULT || code == PROTO_E_INTERNAL ? LOG_ERR : LOG_WARNING,
                  "instantiate of '%s' refused: %s", path ? path : "?", ret_msg);
        free(path);
        pv_doc_fini(&doc);
        return -EINVAL;
}

void hfmi_free(struct hsess *hs)
{
        if (!hs->inst)
                return;
        (void) inst_free(hs->inst);
        hs->inst = NULL;
}
