/*
 * instance: a step whose input and output blocks are those of the step
 * before goes to the worker as values only (the worker keeps the blocks:
 * worker/call.h, call_do_step.compact), with results bit-identical to the
 * same calls made in-process. Blocks that change, and a refused step,
 * send the blocks again; a compact reply that lies about its values is a
 * protocol fault.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine/instance/inst_int.h"
#include "test_instance_drv.h"

#define ok(in, expr) cr_assert(eq(int, (expr), INST_OK), "%s: %s", #expr, inst_message(in))

/* ---- Feedthrough: one block per fixed-size type, outputs = inputs ---------- */

/* Small types first, so that every block after them needs padding before it. */
static const struct {
        enum md_type type;
        uint32_t vr_in, vr_out;
        size_t n;
} ft_blocks[] = {
        { MD_INT8, 5, 6, 1 },
        { MD_BOOLEAN, 21, 22, 1 },
        { MD_UINT16, 11, 12, 1 },
        { MD_FLOAT32, 1, 2, 1 },
        { MD_INT64, 17, 18, 1 },
        { MD_FLOAT64, 29, 30, 6 },      /* the 3x2 matrix */
        { MD_UINT8, 7, 8, 1 },
};
#define FT_N    (sizeof(ft_blocks) / sizeof(ft_blocks[0]))

struct ft {
        uint32_t vr_in[FT_N], vr_out[FT_N];
        double in_v[FT_N][6], out_v[FT_N][6];   /* room for six of any type */
        struct inst_in in[FT_N];
        struct inst_out out[FT_N];
};

static void ft_init(struct ft *f)
{
        memset(f, 0, sizeof(*f));
        for (size_t i = 0; i < FT_N; i++) {
                f->vr_in[i] = ft_blocks[i].vr_in;
                f->vr_out[i] = ft_blocks[i].vr_out;
                f->in[i] = (struct inst_in){ .type = ft_blocks[i].type, .vrs = &f->vr_in[i], .nvr = 1,
                                             .values = f->in_v[i], .nvalues = ft_blocks[i].n };
                f->out[i] = (struct inst_out){ .type = ft_blocks[i].type, .vrs = &f->vr_out[i],
                                               .nvr = 1, .values = f->out_v[i],
                                               .nvalues = ft_blocks[i].n };
        }
}

/* Inputs of step n: a different valid value of each type every step. */
static void ft_inputs(struct ft *f, unsigned n)
{
        for (size_t i = 0; i < FT_N; i++)
                for (size_t j = 0; j < ft_blocks[i].n; j++) {
                        void *v = f->in_v[i];

                        switch (ft_blocks[i].type) {
                        case MD_INT8: ((int8_t *)v)[j] = (int8_t)(n * 37u + j - 100); break;
                        case MD_UINT8: ((uint8_t *)v)[j] = (uint8_t)(n * 11u + j); break;
                        case MD_BOOLEAN: ((bool *)v)[j] = (n + j) % 2 == 1; break;
                        case MD_UINT16: ((uint16_t *)v)[j] = (uint16_t)(n * 7919u + j); break;
                        case MD_FLOAT32: ((float *)v)[j] = (float)n * 0.3f + (float)j; break;
                        case MD_INT64: ((int64_t *)v)[j] = -(int64_t)n * 1000003 - (int64_t)j; break;
                        default: ((double *)v)[j] = n * 0.1 + (double)j / 3.0; break;
                        }
                }
}

Test(instance_kept, steps_after_the_first_carry_values_only_and_match_in_process, .timeout = 120)
{
        struct drv *remote = drv_remote("Feedthrough"), *local = drv_local("Feedthrough");
        struct inst *in = drv_inst(remote);
        static struct ft fr, fl;
        struct inst_step_result rr, rl;

        ft_init(&fr);
        ft_init(&fl);
        for (int k = 0; k < 2; k++) {
                struct drv *d = k ? local : remote;

                cr_assert(eq(int, drv_instantiate(d, false, false), INST_OK));
                cr_assert(eq(int, drv_enter_init(d, 0.0), INST_OK));
                cr_assert(eq(int, drv_exit_init(d), INST_OK));
        }
        for (unsigned n = 0; n < 40; n++) {
                ft_inputs(&fr, n);
                ft_inputs(&fl, n);
                ok(in, drv_step(remote, n * 0.125, 0.125, fr.in, FT_N, fr.out, FT_N, &rr));
                cr_assert(eq(int, drv_step(local, n * 0.125, 0.125, fl.in, FT_N, fl.out, FT_N, &rl),
                             INST_OK));
                cr_assert(eq(int, rr.phase, INST_PHASE_DONE));
                for (size_t i = 0; i < FT_N; i++) {
                        size_t bytes = ft_blocks[i].n * call_elem_size(ft_blocks[i].type);

                        cr_assert(eq(int, memcmp(fr.out_v[i], fl.out_v[i], bytes), 0),
                                  "step %u block %zu differs from in-process", n, i);
                        cr_assert(eq(int, memcmp(fr.out_v[i], fr.in_v[i], bytes), 0),
                                  "step %u block %zu is not its input", n, i);
                }
                /* The first step sends the blocks, every later one values only. */
                cr_assert(eq(u64, in->compact_steps, (uint64_t)n));
                cr_assert(eq(u32, kept_id(in), 1u));
        }
        drv_free(remote);
        drv_free(local);
}

/* ---- LinearOde: blocks that change, refusals ---------------------------- */

#define VR_X    1u

/* Inputs u_first.. and outputs x, y_first.. of LinearOde, n channels from first. */
struct lo {
        uint32_t vr_u[10], vr_y[11];
        double u[10], y[11];
        struct inst_in in;
        struct inst_out out;
        struct inst_step s;
};

static void lo_init(struct lo *l, uint32_t first, uint32_t n)
{
        l->vr_y[0] = VR_X;
        for (uint32_t i = 0; i < n; i++) {
                l->vr_u[i] = 10 + first + i;
                l->vr_y[1 + i] = 20 + first + i;
        }
        l->in = (struct inst_in){ .type = MD_FLOAT64, .vrs = l->vr_u, .nvr = n, .values = l->u,
                                  .nvalues = n };
        l->out = (struct inst_out){ .type = MD_FLOAT64, .vrs = l->vr_y, .nvr = n + 1, .values = l->y,
                                    .nvalues = n + 1 };
        l->s = (struct inst_step){ .h = 0.125, .inputs = &l->in, .n_inputs = 1, .outputs = &l->out,
                                   .n_outputs = 1 };
}

/* One step at point k with fresh inputs; y_i = x + u_i must hold after it. */
static int lo_step(struct inst *in, struct lo *l, unsigned k)
{
        struct inst_step_result res;
        int r;

        for (size_t i = 0; i < l->in.nvr; i++)
                l->u[i] = k * 1.5 + (double)i;
        l->s.t = k * 0.125;
        r = inst_do_step(in, &l->s, &res);
        if (r != INST_OK)
                return r;
        for (size_t i = 0; i < l->in.nvr; i++)
                cr_assert(eq(dbl, l->y[1 + i], l->y[0] + l->u[i]), "step %u channel %zu", k, i);
        return r;
}

static struct inst *lo_start(void)
{
        struct inst_instantiate a = { 0 };
        struct inst_opts o;
        struct inst *in;
        char *why = NULL;

        drv_opts(&o, "LinearOde");
        cr_assert(eq(int, inst_new(&o, &in, &why), 0), "%s", why ? why : "");
        ok(in, inst_instantiate(in, &a));
        ok(in, inst_enter_initialization_mode(in, NULL));
        ok(in, inst_exit_initialization_mode(in));
        return in;
}

Test(instance_kept, blocks_that_change_are_sent_again, .timeout = 120)
{
        struct inst *in = lo_start();
        struct lo a, b;
        unsigned k = 0;
        static const struct {
                char which;
                uint64_t compact;
                uint32_t id;
        } seq[] = { { 'a', 0, 1 }, { 'a', 1, 1 }, { 'b', 1, 2 }, { 'b', 2, 2 }, { 'b', 3, 2 },
                    { 'a', 3, 3 }, { 'a', 4, 3 } };

        lo_init(&a, 0, 10);
        lo_init(&b, 5, 4);
        for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
                ok(in, lo_step(in, seq[i].which == 'a' ? &a : &b, k++));
                cr_assert(eq(u64, in->compact_steps, seq[i].compact), "step %zu", i);
                cr_assert(eq(u32, kept_id(in), seq[i].id), "step %zu", i);
        }
        /* The same blocks through other arrays are the same layout. */
        struct lo a2;

        lo_init(&a2, 0, 10);
        ok(in, lo_step(in, &a2, k++));
        cr_assert(eq(u64, in->compact_steps, 5));
        /* One value reference fewer is not. */
        lo_init(&a2, 0, 10);
        a2.in.nvr = 9;
        a2.in.nvalues = 9;
        ok(in, lo_step(in, &a2, k++));
        cr_assert(eq(u32, kept_id(in), 4u));
        cr_assert(eq(int, inst_free(in), 0));
}

Test(instance_kept, a_repeat_behind_a_full_step_goes_values_only, .timeout = 120)
{
        static const double times[4] = { 0.125, 0.25, 0.375, 0.5 };
        struct inst *in = lo_start();
        struct inst_step_result res;
        struct lo a;
        struct inst_step rep;

        lo_init(&a, 0, 10);
        for (size_t i = 0; i < 10; i++)
                a.u[i] = (double)i;
        a.s.t = 0.0;
        rep = a.s;
        rep.chained = true;
        rep.repeat = 3;
        rep.times = times;
        ok(in, inst_post_step(in, &a.s));
        ok(in, inst_post_step(in, &rep));
        cr_assert(eq(u64, in->compact_steps, 3));
        for (int i = 0; i < 4; i++) {
                ok(in, inst_wait_step(in, &res));
                cr_assert(eq(int, res.phase, INST_PHASE_DONE));
                cr_assert(eq(dbl, res.last_successful_time, times[i]));
                for (size_t c = 0; c < 10; c++)
                        cr_assert(eq(dbl, a.y[1 + c], a.y[0] + a.u[c]), "step %d channel %zu", i, c);
        }
        cr_assert(eq(int, inst_free(in), 0));
}

Test(instance_kept, a_refused_step_sends_the_blocks_again, .timeout = 120)
{
        struct inst *in = lo_start();
        struct lo a, bad;
        float f[11];
        unsigned k = 0;

        lo_init(&a, 0, 10);
        ok(in, lo_step(in, &a, k++));
        ok(in, lo_step(in, &a, k++));
        cr_assert(eq(u64, in->compact_steps, 1));
        /* Float32 outputs of Float64 variables: refused by the worker, which may keep nothing. */
        lo_init(&bad, 0, 10);
        bad.out.type = MD_FLOAT32;
        bad.out.values = f;
        cr_assert(eq(int, lo_step(in, &bad, k), -EPROTOTYPE), "%s", inst_message(in));
        cr_assert(eq(u32, kept_id(in), 2u));
        ok(in, lo_step(in, &a, k++));
        cr_assert(eq(u64, in->compact_steps, 1), "sent in full after a refusal");
        cr_assert(eq(u32, kept_id(in), 3u));
        ok(in, lo_step(in, &a, k++));
        cr_assert(eq(u64, in->compact_steps, 2));
        /* A compact step the state machine refuses: the worker never sees its values. */
        ok(in, inst_terminate(in));
        cr_assert(eq(int, lo_step(in, &a, k), -EPERM), "%s", inst_message(in));
        cr_assert(eq(u64, in->compact_steps, 3));
        /* Outputs without room for them are refused before anything is sent, either way. */
        a.out.values = NULL;
        cr_assert(eq(int, lo_step(in, &a, k), -EINVAL));
        cr_assert(eq(u64, in->compact_steps, 3));
        cr_assert(eq(int, inst_free(in), 0));
}

/* Blocks no layout holds (a String) always go in full, and leave the worker nothing kept. */
Test(instance_kept, blocks_of_strings_are_always_sent_in_full, .timeout = 120)
{
        struct drv *remote = drv_remote("Feedthrough");
        struct inst *in = drv_inst(remote);
        static const uint32_t vr_in = 23, vr_out = 24;
        const char *s_in[1], *s_out[1];
        struct inst_in bi = { .type = MD_STRING, .vrs = &vr_in, .nvr = 1, .values = s_in, .nvalues = 1 };
        struct inst_out bo = { .type = MD_STRING, .vrs = &vr_out, .nvr = 1, .values = s_out,
                               .nvalues = 1 };
        struct inst_step_result res;
        char text[32];

        cr_assert(eq(int, drv_instantiate(remote, false, false), INST_OK));
        cr_assert(eq(int, drv_enter_init(remote, 0.0), INST_OK));
        cr_assert(eq(int, drv_exit_init(remote), INST_OK));
        for (unsigned n = 0; n < 5; n++) {
                snprintf(text, sizeof(text), "step %u", n);
                s_in[0] = text;
                ok(in, drv_step(remote, n * 0.125, 0.125, &bi, 1, &bo, 1, &res));
                cr_assert(eq(str, (char *)s_out[0], text));
        }
        cr_assert(eq(u64, in->compact_steps, 0));
        cr_assert(eq(u32, kept_id(in), 0u));
        drv_free(remote);
}

/* ---- A worker whose compact replies lie ------------------------------------ */

static void lying(const char *mode, const char *what)
{
        struct inst_opts o;
        struct inst *in = NULL;
        struct lo a;
        char *why = NULL;

        inst_opts_default(&o);
        o.worker_path = FMUD_FAKE_WORKER;
        o.fmu_dir = mode;
        o.start_timeout_ns = 2000 * 1000000ull;
        cr_assert(eq(int, inst_new(&o, &in, &why), 0), "%s: %s", mode, why ? why : "");
        lo_init(&a, 0, 10);
        /* The fake answers zeros: the first step, in full, is well-formed. */
        a.s.t = 0.0;
        ok(in, inst_do_step(in, &a.s, &(struct inst_step_result){ 0 }));
        a.s.t = 0.125;
        cr_assert(eq(int, inst_do_step(in, &a.s, &(struct inst_step_result){ 0 }), -EPROTO), "%s",
                  mode);
        cr_assert(eq(u64, in->compact_steps, 1));
        cr_assert(strstr(inst_message(in), "broke the protocol") != NULL, "%s", inst_message(in));
        cr_assert(strstr(inst_message(in), what) != NULL, "%s", inst_message(in));
        cr_assert(eq(int, inst_free(in), -EPROTO));
}

Test(instance_kept, compact_replies_that_lie_about_their_values_give_eproto, .timeout = 120)
{
        int fds = drv_count_fds();

        lying("compact-short", "compact outputs of another length");
        lying("compact-outside", "a result range that does not hold its values");
        cr_assert(eq(int, drv_count_children(), 0));
        cr_assert(eq(int, drv_count_fds(), fds));
}
