/* Test helpers: scenarios for the session and master tests (see test_master_sys.h). */
#include "test_master_sys.h"

#include <criterion/criterion.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support/tmpdir.h"

static const char *const fmus[] = {
        FMUD_TEST_FMU_DIR "/LinearOde.fmu", FMUD_TEST_FMU_DIR "/LinearOde2.fmu",
        FMUD_TEST_FMU_DIR "/MsdMass1.fmu", FMUD_TEST_FMU_DIR "/MsdMass2.fmu",
        FMUD_TEST_FMU_DIR "/BouncingBall.fmu", FMUD_TEST_FMU_DIR "/IntermediateProbe.fmu",
        FMUD_TEST_FMU_DIR "/Feedthrough.fmu", FMUD_TEST_FMU_DIR "/GlobalCounter.fmu",
        FMUD_TEST_FMU_DIR "/TimeEvent.fmu", FMUD_TEST_FMU_DIR "/Misbehave.fmu",
        FMUD_TEST_FMU_DIR "/FixedStep.fmu", FMUD_TEST_FMU_DIR "/FixedStepRigid.fmu",
        FMUD_TEST_FMU_DIR "/ClockedDeriv.fmu", FMUD_TEST_FMU_DIR "/ClockKinds.fmu",
        FMUD_TEST_FMU_DIR "/BallME.fmu", FMUD_TEST_FMU_DIR "/VanDerPol.fmu",
        FMUD_TEST_FMU_DIR "/Robertson.fmu", FMUD_TEST_FMU_DIR "/BallME2.fmu",
        FMUD_TEST_FMU_DIR "/BallBoth2.fmu", FMUD_TEST_FMU_DIR "/VectorGain.fmu",
        FMUD_TEST_FMU_DIR "/Partitions.fmu", FMUD_TEST_FMU_DIR "/PartitionsNoPrio.fmu",
        FMUD_TEST_FMU_DIR "/Choice2.fmu", FMUD_TEST_FMU_DIR "/Threshold.fmu",
        FMUD_TEST_FMU_DIR "/ClockedME.fmu", FMUD_TEST_FMU_DIR "/ClockKindsRigid.fmu",
        FMUD_TEST_FMU_DIR "/ClockKinds33.fmu", FMUD_TEST_FMU_DIR "/TimeEventKc.fmu",
        FMUD_TEST_FMU_DIR "/ClockKindsLate.fmu", FMUD_TEST_FMU_DIR "/SwitchedME.fmu",
        FMUD_TEST_FMU_DIR "/SwitchedME2.fmu",
        FMUD_MASTER_FMU_DIR "/Scripted.fmu",
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

static char *ssd_text(const struct msys_spec *sp)
{
        char *s = NULL;

        cr_assert(asprintf(&s,
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<ssd:SystemStructureDescription version=\"1.0\" name=\"t\"\n"
                "    xmlns:ssd=\"http://ssp-standard.org/SSP1/SystemStructureDescription\"\n"
                "    xmlns:ssc=\"http://ssp-standard.org/SSP1/SystemStructureCommon\"\n"
                "    xmlns:ssv=\"http://ssp-standard.org/SSP1/SystemStructureParameterValues\"\n"
                "    xmlns:fmud=\"urn:fmud:ssp:settings\">\n"
                "  <ssd:System name=\"t\">\n"
                "%s%s%s"
                "    <ssd:Elements>%s</ssd:Elements>\n"
                "    <ssd:Connections>%s</ssd:Connections>\n"
                "  </ssd:System>\n"
                "  <ssd:DefaultExperiment startTime=\"%.17g\" stopTime=\"%.17g\"/>\n"
                "  <ssd:Annotations><ssc:Annotation type=\"org.fmud.settings\">\n"
                "    <fmud:Settings version=\"1\" %s>%s</fmud:Settings>\n"
                "  </ssc:Annotation></ssd:Annotations>\n"
                "</ssd:SystemStructureDescription>\n",
                sp->parameters ? "<ssd:ParameterBindings><ssd:ParameterBinding><ssd:ParameterValues>"
                                 "<ssv:ParameterSet version=\"1.0\" name=\"p\"><ssv:Parameters>" : "",
                sp->parameters ? sp->parameters : "",
                sp->parameters ? "</ssv:Parameters></ssv:ParameterSet></ssd:ParameterValues>"
                                 "</ssd:ParameterBinding></ssd:ParameterBindings>\n" : "",
                sp->elements ? sp->elements : "", sp->connections ? sp->connections : "",
                sp->start, sp->stop, sp->attrs ? sp->attrs : "",
                sp->settings ? sp->settings : "") >= 0);
        return s;
}

void msys_diag_text(const struct msys *x, char *buf, size_t size)
{
        size_t n = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < x->diags.n && n + 1 < size; i++) {
                diag_format(&x->diags.v[i], buf + n, size - n);
                n += strlen(buf + n);
                if (n + 1 < size) {
                        buf[n++] = '\n';
                        buf[n] = '\0';
                }
        }
}

int msys_load_try(struct msys *x, const struct msys_spec *spec)
{
        struct scenario_opts o;
        char *text, *path;
        int r;

        *x = (struct msys){ 0 };
        x->dir = tmpdir_new("fmud-mst");
        x->cache = tmpdir_new("fmud-mst-cache");
        cr_assert(x->dir && x->cache);
        cr_assert(asprintf(&path, "%s/resources", x->dir) >= 0);
        cr_assert(mkdir(path, 0755) == 0);
        free(path);
        for (size_t i = 0; i < sizeof(fmus) / sizeof(*fmus); i++) {
                const char *base = strrchr(fmus[i], '/') + 1;

                cr_assert(asprintf(&path, "%s/resources/%s", x->dir, base) >= 0);
                copy(fmus[i], path);
                free(path);
        }
        text = ssd_text(spec);
        cr_assert(tmpdir_write(x->dir, "SystemStructure.ssd", text, strlen(text)) == 0);
        free(text);
        diag_list_init(&x->diags, 0);
        scenario_opts_default(&o);
        o.cache_dir = x->cache;
        cr_assert(asprintf(&path, "%s/SystemStructure.ssd", x->dir) >= 0);
        r = scenario_load(path, &o, NULL, &x->diags, &x->sc);
        free(path);
        session_opts_default(&x->so);
        x->so.worker_path = FMUD_WORKER;
        master_opts_default(&x->mo);
        return r;
}

void msys_load(struct msys *x, const struct msys_spec *spec)
{
        int r = msys_load_try(x, spec);

        if (r < 0) {
                char buf[512];

                for (size_t i = 0; i < x->diags.n; i++) {
                        diag_format(&x->diags.v[i], buf, sizeof(buf));
                        fprintf(stderr, "%s\n", buf);
                }
        }
        cr_assert(r == 0, "scenario_load: %d", r);
}

static void sink(void *ctx, const struct master_row *row)
{
        struct msys *x = ctx;
        struct mrow *r;

        if (x->n_rows == x->cap) {
                x->cap = x->cap ? 2 * x->cap : 256;
                x->rows = realloc(x->rows, x->cap * sizeof(*x->rows));
                cr_assert(x->rows != NULL);
        }
        r = &x->rows[x->n_rows++];
        *r = (struct mrow){ .t = row->time, .point = row->point, .flags = row->flags,
                            .comp = row->comp };
        r->v = malloc((row->n_columns + 1) * sizeof(double));
        cr_assert(r->v != NULL);
        memcpy(r->v, row->values, row->n_columns * sizeof(double));
        if (x->on_row)
                x->on_row(x, r);
}

int msys_session_try(struct msys *x, char **ret_message)
{
        return session_new(x->sc, &x->so, &x->s, ret_message);
}

void msys_start(struct msys *x)
{
        char *msg = NULL;
        int r;

        r = session_new(x->sc, &x->so, &x->s, &msg);
        cr_assert(r == 0, "session_new: %d: %s", r, msg ? msg : "");
        free(msg);
        if (!x->mo.sink) {
                x->mo.sink = sink;
                x->mo.sink_ctx = x;
        }
        r = master_new(x->s, &x->mo, &x->m, &msg);
        cr_assert(r == 0, "master_new: %d: %s", r, msg ? msg : "");
        free(msg);
}

void msys_fini(struct msys *x)
{
        master_free(x->m);
        session_free(x->s);
        scenario_free(x->sc);
        diag_list_fini(&x->diags);
        for (size_t i = 0; i < x->n_rows; i++)
                free(x->rows[i].v);
        free(x->rows);
        tmpdir_free(x->dir);
        tmpdir_free(x->cache);
        *x = (struct msys){ 0 };
}

size_t msys_col(const struct msys *x, const char *name)
{
        for (size_t i = 0; i < x->sc->n_columns; i++)
                if (!strcmp(x->sc->columns[i].name, name))
                        return i;
        cr_assert_fail("no column '%s'", name);
        return 0;
}

size_t msys_comp(const struct msys *x, const char *name)
{
        int c = scenario_find_component(x->sc, name);

        cr_assert(c >= 0, "no component '%s'", name);
        return (size_t)c;
}

size_t msys_var(const struct msys *x, size_t comp, const char *name)
{
        const struct md *md = x->sc->components[comp].fmu->md;
        const struct md_variable *v = md_find_name(md, name);

        cr_assert(v != NULL, "no variable '%s'", name);
        return (size_t)(v - md->vars);
}

const struct mrow *msys_row(const struct msys *x, double t, unsigned flags)
{
        for (size_t i = 0; i < x->n_rows; i++)
                if (x->rows[i].t == t && x->rows[i].flags == flags)
                        return &x->rows[i];
        return NULL;
}

const struct mrow **msys_grid(const struct msys *x, size_t *ret_n)
{
        const struct mrow **g = calloc(x->n_rows + 1, sizeof(*g));
        size_t n = 0;

        cr_assert(g != NULL);
        for (size_t i = 0; i < x->n_rows; i++)
                if (x->rows[i].flags == 0)
                        g[n++] = &x->rows[i];
        *ret_n = n;
        return g;
}

bool msys_same_rows(const struct msys *a, const struct msys *b)
{
        size_t nc = a->sc->n_columns;

        if (a->n_rows != b->n_rows || nc != b->sc->n_columns)
                return false;
        for (size_t i = 0; i < a->n_rows; i++) {
                const struct mrow *p = &a->rows[i], *q = &b->rows[i];

                if (memcmp(&p->t, &q->t, sizeof(p->t)) || p->flags != q->flags ||
                    memcmp(p->v, q->v, nc * sizeof(double)))
                        return false;
        }
        return true;
}

bool msys_one_cpu(void)
{
        cpu_set_t set;
        int cpu = -1;

        if (sched_getaffinity(0, sizeof(set), &set) < 0)
                return false;
        for (int i = 0; i < CPU_SETSIZE && cpu < 0; i++)
                if (CPU_ISSET(i, &set))
                        cpu = i;
        if (cpu < 0)
                return false;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        return sched_setaffinity(0, sizeof(set), &set) == 0;
}
