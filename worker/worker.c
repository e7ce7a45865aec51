/*
 * worker: start-up and shut-down of one fmud-worker: attach the channel,
 * parse DIR/modelDescription.xml, load the FMU's library, say HELLO (or
 * why not) to the daemon; serve until FREE; release everything.
 *
 * DESIGN: the worker trusts nothing it did not check: chan_attach()
 * validates the channel, md_parse() the description (with the default
 * limits for a hostile document), fmu_lib_open() the library. A failure
 * is reported once, in the HELLO event, and the worker exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "worker/sandbox.h"
#include "worker/crash.h"
#include "worker/me.h"
#include "worker/se.h"
#include "worker/worker.h"


int wbuf_reserve(struct wbuf *b, size_t n)
{
        unsigned char *p;
        size_t cap;

        if (n <= b->cap)
                return 0;
        cap = b->cap ? b->cap : 256;
        while (cap < n)
                cap = cap > SIZE_MAX / 2 ? n : cap * 2;
        p = realloc(b->p, cap);
        if (!p)
                return -ENOMEM;
        b->p = p;
        b->cap = cap;
        return 0;
}

void wbuf_fini(struct wbuf *b)
{
        free(b->p);
        *b = (struct wbuf){ 0 };
}

static int read_file(const char *path, size_t max, char **ret, size_t *ret_len)
{
        struct stat st;
        size_t done = 0;
        char *buf;
        int fd, r = 0;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0) {
                r = -errno;
                goto out_close;
        }
        if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
                r = -EFBIG;
                goto out_close;
        }
        buf = malloc((size_t)st.st_size + 1);
        if (!buf) {
                r = -ENOMEM;
                goto out_close;
        }
        while (done < (size_t)st.st_size) {
                ssize_t n = read(fd, buf + done, (size_t)st.st_size - done);

                if (n <= 0) {
                        r = n < 0 ? -errno : -EIO;
                        free(buf);
                        goto out_close;
                }
                done += (size_t)n;
        }
        *ret = buf;
        *ret_len = done;
out_close:
        close(fd);
        return r;
}

static void hello(struct worker *w, int error, const char *msg)
{
        const struct md_cosim *cs = w->md ? &w->md->cs : NULL;
        struct call_hello h = {
                .version = CALL_VERSION,
                .fmi = w->md ? (uint32_t)w->md->fmi : 0,
                .error = error,
                .pid = (uint32_t)getpid(),
        };
        size_t n = msg ? strnlen(msg, CALL_MSG_MAX) : 0;

        if (cs && !error) {
                h.caps = (cs->has_event_mode ? CALL_CAP_EVENT_MODE : 0) |
                         (cs->can_get_and_set_fmu_state ? CALL_CAP_FMU_STATE : 0) |
                         (cs->can_serialize_fmu_state ? CALL_CAP_SERIALIZE : 0) |
                         (cs->provides_directional_derivatives ? CALL_CAP_DIRECTIONAL : 0) |
                         (cs->provides_adjoint_derivatives ? CALL_CAP_ADJOINT : 0) |
                         (cs->provides_intermediate_update ? CALL_CAP_INTERMEDIATE : 0) |
                         (cs->might_return_early_from_do_step ? CALL_CAP_EARLY_RETURN : 0) |
                         (cs->provides_evaluate_discrete_states ? CALL_CAP_EVALUATE : 0) |
                         (cs->max_output_derivative_order ? CALL_CAP_OUTPUT_DER : 0) |
                         (cs->can_interpolate_inputs ? CALL_CAP_INPUT_DER : 0) |
                         (cs->provides_per_element_dependencies ? CALL_CAP_DEPENDENCIES : 0) |
                         (w->n_sp ? CALL_CAP_CONFIGURATION : 0);
        }
        h.msg = (struct call_range){ 0, n };
        (void) send_event(w, CALL_EV_HELLO, &h, sizeof(h), msg, n, false);
}

/* The first error of a diagnostics list, as one line. */
static void first_error(const struct diag_list *d, char *buf, size_t size)
{
        for (size_t i = 0; i < d->n; i++)
                if (d->v[i].severity == DIAG_ERROR) {
                        (void) diag_format(&d->v[i], buf, size);
                        return;
                }
        snprintf(buf, size, "unknown error");
}

static int load(struct worker *w, const char *dir, char *why, size_t size)
{
        struct diag_list diags;
        char path[4096], *xml = NULL;
        size_t len = 0;
        int r;

        /* The sandbox's held descriptor is absolute already; resolving it would undo it. */
        if (!strncmp(dir, "/proc/self/fd/", 14))
                w->dir = strdup(dir);
        else
                w->dir = realpath(dir, NULL);
        if (!w->dir) {
                r = -errno;
                snprintf(why, size, "fmu dir '%.512s': %s", dir, strerror(-r));
                return r;
        }
        snprintf(path, sizeof(path), "%s/modelDescription.xml", w->dir);
        r = read_file(path, MD_MAX_BYTES, &xml, &len);
        if (r == -EFBIG) {
                snprintf(why, size, "reading '%.512s': larger than the %u MiB fmud reads (or not "
                         "a regular file)", path, MD_MAX_BYTES >> 20);
                return r;
        }
        if (r < 0) {
                snprintf(why, size, "reading '%.512s': %s", path, strerror(-r));
                return r;
        }
        diag_list_init(&diags, 0);
        r = md_parse(xml, len, "modelDescription.xml", NULL, &diags, &w->md);
        free(xml);
        /* As fmu.c chose: ScheduledExecution when asked for or when it is the only interface. */
        if (r == 0 && (me_opts.scheduled_execution || (!w->md->cs.present &&
                                                        !w->md->has_model_exchange))) {
                r = md_host_se(w->md);
                if (r == -EINVAL) {
                        diag_list_fini(&diags);
                        snprintf(why, size, "%s", "the FMU has no ScheduledExecution interface to host");
                        return r;
                }
        }
        /* ModelExchange when asked for, or when there is no CoSimulation. */
        if (r == 0 && (me_opts.model_exchange || !w->md->cs.present)) {
                r = md_host_me(w->md);
                if (r == -EINVAL) {
                        diag_list_fini(&diags);
                        snprintf(why, size, "%s", "the FMU has no ModelExchange interface to host");
                        return r;
                }
        }
        if (r == 0)
                r = fmu_lib_open(w->dir, w->md, &diags, &w->lib);
        if (r == 0 && w->md->hosted_me)
                r = me_open(w);
        if (r == 0 && w->md->hosted_se)
                r = se_open(w);
        if (r < 0)
                first_error(&diags, why, size);
        diag_list_fini(&diags);
        return r;
}

static int index_structural(struct worker *w)
{
        size_t n = w->md->n_vars;

        w->sp = calloc(n + 1, sizeof(*w->sp));
        w->stamp = calloc(n + 1, sizeof(*w->stamp));
        w->sp_index = calloc(n + 1, sizeof(*w->sp_index));
        if (!w->sp || !w->stamp || !w->sp_index)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const struct md_variable *v = &w->md->vars[i];

                if (v->causality == MD_CAUSALITY_STRUCTURAL_PARAMETER && v->type == MD_UINT64 &&
                    v->n_dims == 0)
                        w->sp_index[w->n_sp++] = i;
        }
        vars_reset(w);
        return vars_table_init(w);
}

/* Set while a worker is open; only its callbacks read it. */
static struct worker *self;

struct worker *worker_of(void *env)
{
        return self ? self : env;
}

int worker_open(int fd, const char *dir, struct worker **ret)
{
        char why[CALL_MSG_MAX];
        struct worker *w;
        int r;

        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->main_thread = pthread_self();
        pthread_mutex_init(&w->iu_lock, NULL);
        w->ppid = getppid();
        wait_policy_init(&w->wait, WAIT_ADAPTIVE);
        r = chan_attach(fd, &w->chan);
        if (r < 0) {
                free(w);
                return r;
        }
        self = w;
        w->tx = chan_tx(w->chan);
        w->rx = chan_rx(w->chan);
        w->side = chan_side(w->chan, &w->side_size);
        w->max_record = w->tx->max_record;
        /* The sandbox is in place (main.c): say so first. */
        (void) sandbox_send_report(w);
        (void) mlock_send_report(w);
        /* Refused before the FMU's library is opened: none of its code runs. */
        if (sandbox_refused(why, sizeof(why))) {
                r = -EPERM;
                goto out_hello;
        }
        /* Before the FMU's code first runs (its constructors, in load()): last words from then on. */
        crash_install(w);
        for (unsigned d = 0; d < WORKER_DEPTHS; d++)
                if (wbuf_reserve(&w->scratch[d], w->max_record) < 0 ||
                    wbuf_reserve(&w->req[d], w->max_record) < 0) {
                        r = -ENOMEM;
                        snprintf(why, sizeof(why), "out of memory");
                        goto out_hello;
                }
        r = load(w, dir, why, sizeof(why));
        if (r < 0)
                goto out_hello;
        w->fmi = w->md->fmi;
        r = index_structural(w);
        if (r == 0)
                r = clocks_init(w);
        if (r < 0) {
                snprintf(why, sizeof(why), "out of memory");
                goto out_hello;
        }
        /* What the FMU's constructors tried and were refused, before HELLO. */
        sandbox_flush(w);
        hello(w, 0, NULL);
        *ret = w;
        return 0;

out_hello:
        sandbox_flush(w);
        hello(w, r, why);
        worker_close(w);
        return r;
}

int worker_run(struct worker *w)
{
        enum call_op op = CALL_OP_NONE;

        while (serve_one(w, &op))
                ;
        return op == CALL_OP_FREE && w->quit ? 0 : 2;
}

void worker_close(struct worker *w)
{
        if (!w)
                return;
        /* The daemon went away without FREE: free the instance all the same. */
        if (w->inst && w->state != CALL_ST_FATAL) {
                states_free_all(w);
                if (w->fmi == MD_FMI3)
                        w->lib->f3.fmi3FreeInstance(w->inst);
                else
                        w->lib->f2.fmi2FreeInstance(w->inst);
        }
        w->inst = NULL;
        me_close(w);
        se_close(w);
        fmu_lib_close(w->lib);
        md_free(w->md);
        chan_close(w->chan);
        for (size_t i = 0; i < w->n_slots; i++)
                free(w->slots[i].sp);
        free(w->slots);
        for (unsigned d = 0; d < WORKER_DEPTHS; d++) {
                wbuf_fini(&w->req[d]);
                wbuf_fini(&w->scratch[d]);
        }
        wbuf_fini(&w->tmp);
        wbuf_fini(&w->tmp2);
        wbuf_fini(&w->tmp_me);
        wbuf_fini(&w->blocks);
        layout_free(w);
        free(w->cb2);
        free(w->required);
        free(w->sp);
        free(w->stamp);
        free(w->sp_index);
        vars_table_fini(w);
        clocks_fini(w);
        free(w->dir);
        if (self == w)
                self = NULL;
        free(w);
}
