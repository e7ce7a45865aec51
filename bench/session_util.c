/*
 * session_util: the session benchmarks' shared set-up (session_util.h).
 */
#include "session_util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

double bench_now(void)
{
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_dbl(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return x < y ? -1 : x > y;
}

double bench_median(double *v, unsigned n)
{
        qsort(v, n, sizeof(*v), cmp_dbl);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void bench_die(const char *what, int r)
{
        fprintf(stderr, "bench: %s: %s\n", what, strerror(r < 0 ? -r : r));
        exit(1);
}

double bench_load(void)
{
        FILE *f = fopen("/proc/loadavg", "r");
        double l = -1;

        if (f) {
                if (fscanf(f, "%lf", &l) != 1)
                        l = -1;
                fclose(f);
        }
        return l;
}

void bench_machine(void)
{
        char line[256], model[256] = "?";
        struct utsname u;
        FILE *f = fopen("/proc/cpuinfo", "r");

        while (f && fgets(line, sizeof(line), f))
                if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
                        snprintf(model, sizeof(model), "%s", strchr(line, ':') + 2);
                        model[strcspn(model, "\n")] = '\0';
                        break;
                }
        if (f)
                fclose(f);
        uname(&u);
        printf("machine: %s, %ld online cpus, Linux %s; load average %.2f\n", model,
               sysconf(_SC_NPROCESSORS_ONLN), u.release, bench_load());
}

void bench_mkdtemp(char *ret, size_t size)
{
        snprintf(ret, size, "/tmp/fmud-bench-XXXXXX");
        if (!mkdtemp(ret))
                bench_die("mkdtemp", errno);
}

void bench_rmrf(const char *dir)
{
        char cmd[256];

        if (!dir[0])
                return;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
                fprintf(stderr, "bench: could not remove %s\n", dir);
}

void bench_copy(const char *from, const char *to)
{
        FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
        char buf[65536];
        size_t n;

        if (!in || !out)
                bench_die(from, errno);
        while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
                if (fwrite(buf, 1, n, out) != n)
                        bench_die(to, errno);
        fclose(in);
        if (fclose(out))
                bench_die(to, errno);
}

static void put(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(FILE *f, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        if (vfprintf(f, fmt, ap) < 0)
                bench_die("writing the .ssd", EIO);
        va_end(ap);
}

static void ssd_params(FILE *f, const struct bench_ssd *d)
{
        put(f, "<ssd:ParameterBindings><ssd:ParameterBinding><ssd:ParameterValues>"
            "<ssv:ParameterSet version=\"1.0\" name=\"p\"><ssv:Parameters>");
        for (size_t i = 0; i < d->n; i++)
                put(f, "<ssv:Parameter name=\"%s.%s\"><ssv:%s value=\"%s\"/></ssv:Parameter>",
                    d->comps[i].name, d->param, d->param_type, d->param_value);
        put(f, "</ssv:Parameters></ssv:ParameterSet></ssd:ParameterValues>"
            "</ssd:ParameterBinding></ssd:ParameterBindings>");
}

void bench_ssd_write(const char *dir, const struct bench_ssd *d, char *ret, size_t size)
{
        char path[512];
        FILE *f;

        snprintf(path, sizeof(path), "%s/resources", dir);
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                bench_die(path, errno);
        for (size_t i = 0; i < d->n; i++) {
                snprintf(path, sizeof(path), "%s/resources/%s.fmu", dir, d->comps[i].name);
                bench_copy(d->comps[i].fmu, path);
        }
        snprintf(ret, size, "%s/SystemStructure.ssd", dir);
        f = fopen(ret, "w");
        if (!f)
                bench_die(ret, errno);
        put(f, "<?xml version=\"1.0\"?>\n<ssd:SystemStructureDescription version=\"1.0\" "
            "name=\"bench\" "
            "xmlns:ssd=\"http://ssp-standard.org/SSP1/SystemStructureDescription\" "
            "xmlns:ssc=\"http://ssp-standard.org/SSP1/SystemStructureCommon\" "
            "xmlns:ssv=\"http://ssp-standard.org/SSP1/SystemStructureParameterValues\" "
            "xmlns:fmud=\"urn:fmud:ssp:settings\"><ssd:System name=\"bench\">");
        if (d->param)
                ssd_params(f, d);
        put(f, "<ssd:Elements>");
        for (size_t i = 0; i < d->n; i++)
                put(f, "<ssd:Component name=\"%s\" source=\"resources/%s.fmu\"/>",
                    d->comps[i].name, d->comps[i].name);
        put(f, "</ssd:Elements>");
        if (d->ring_out) {
                put(f, "<ssd:Connections>");
                for (size_t i = 0; i < d->n; i++)
                        put(f, "<ssd:Connection startElement=\"%s\" startConnector=\"%s\" "
                            "endElement=\"%s\" endConnector=\"%s\"/>", d->comps[i].name,
                            d->ring_out, d->comps[(i + 1) % d->n].name, d->ring_in);
                put(f, "</ssd:Connections>");
        }
        put(f, "</ssd:System><ssd:DefaultExperiment startTime=\"0\" stopTime=\"%.17g\"/>"
            "<ssd:Annotations><ssc:Annotation type=\"org.fmud.settings\">"
            "<fmud:Settings version=\"1\" stepSize=\"%.17g\">", d->stop, d->step);
        for (size_t i = 0; i < d->n_record; i++)
                put(f, "<fmud:Record variable=\"%s\"/>", d->record[i]);
        put(f, "</fmud:Settings></ssc:Annotation></ssd:Annotations>"
            "</ssd:SystemStructureDescription>\n");
        if (fclose(f))
                bench_die(ret, errno);
}

static void print_diags(const struct diag_list *diags)
{
        char line[512];

        for (size_t i = 0; i < diags->n; i++) {
                diag_format(&diags->v[i], line, sizeof(line));
                fprintf(stderr, "%s\n", line);
        }
}

/* Load path (with ov, may be NULL) into x, whose cache directory exists. */
static void sys_load(struct bench_sys *x, const char *path, const struct scenario_overrides *ov,
                     const char *worker)
{
        struct scenario_opts o;
        struct session_opts so;
        struct diag_list diags;
        char *msg = NULL;
        int r;

        scenario_opts_default(&o);
        o.cache_dir = x->cache;
        diag_list_init(&diags, 0);
        r = scenario_load(path, &o, ov, &diags, &x->sc);
        if (r < 0) {
                print_diags(&diags);
                bench_die("scenario_load", r);
        }
        diag_list_fini(&diags);
        session_opts_default(&so);
        so.worker_path = worker;
        r = session_new(x->sc, &so, &x->s, &msg);
        if (r < 0) {
                fprintf(stderr, "%s\n", msg ? msg : "");
                bench_die("session_new", r);
        }
        r = master_new(x->s, NULL, &x->m, &msg);
        if (r < 0) {
                fprintf(stderr, "%s\n", msg ? msg : "");
                bench_die("master_new", r);
        }
}

void bench_sys_start(struct bench_sys *x, const char *path, const char *worker)
{
        *x = (struct bench_sys){ 0 };
        bench_mkdtemp(x->cache, sizeof(x->cache));
        sys_load(x, path, NULL, worker);
}

void bench_rig_sys_start(struct bench_sys *x, const char *fmu_path, double h, double stop,
                         double warp, const char *worker)
{
        static const char *const rig_in[] = { "lin.u0" };
        static const char *const rig_out[] = { "lin.y0", "lin.y1" };
        const struct scenario_overrides ov = {
                .has_step = true, .step = h, .has_start = true, .start = 0,
                .has_stop = true, .stop = stop,
                .has_warp = true, .warp = warp,
                .n_rig_in = 1, .rig_in = rig_in, .n_rig_out = 2, .rig_out = rig_out,
                .has_rig_timeout = true, .rig_timeout_ms = 10000,
        };
        const struct bench_comp comp = { "lin", fmu_path };
        const struct bench_ssd d = { .n = 1, .comps = &comp, .step = h, .stop = 1 };
        char path[512];

        *x = (struct bench_sys){ 0 };
        bench_mkdtemp(x->cache, sizeof(x->cache));
        bench_ssd_write(x->cache, &d, path, sizeof(path));
        sys_load(x, path, &ov, worker);
}

void bench_sys_close(struct bench_sys *x)
{
        master_free(x->m);
        session_free(x->s);
        scenario_free(x->sc);
        bench_rmrf(x->cache);
        *x = (struct bench_sys){ 0 };
}

void bench_lib_open(struct bench_lib *l, const char *fmu_path)
{
        struct diag_list diags;
        struct fmu_opts o;
        int r;

        *l = (struct bench_lib){ 0 };
        bench_mkdtemp(l->cache, sizeof(l->cache));
        fmu_opts_default(&o);
        o.cache_dir = l->cache;
        diag_list_init(&diags, 0);
        r = fmu_open(fmu_path, &o, &diags, &l->fmu);
        if (r == 0 && (!l->fmu->unpacked_dir || l->fmu->md->fmi != MD_FMI3))
                r = -EINVAL;
        if (r == 0)
                r = fmu_lib_open(l->fmu->unpacked_dir, l->fmu->md, &diags, &l->lib);
        if (r < 0) {
                print_diags(&diags);
                bench_die(fmu_path, r);
        }
        diag_list_fini(&diags);
}

void bench_lib_close(struct bench_lib *l)
{
        fmu_lib_close(l->lib);
        fmu_free(l->fmu);
        bench_rmrf(l->cache);
        *l = (struct bench_lib){ 0 };
}

uint32_t bench_vr(const struct bench_lib *l, const char *name)
{
        const struct md_variable *v = md_find_name(l->fmu->md, name);

        if (!v)
                bench_die(name, ENOENT);
        return v->vr;
}

static void on_log(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category,
                   fmi3String message)
{
        (void) env;
        if (status > fmi3Warning)
                fprintf(stderr, "FMU [%s]: %s\n", category, message);
}

fmi3Instance bench_instantiate(const struct bench_lib *l, const char *name, const char *param,
                               const char *value, double stop)
{
        const struct fmi3_api *f = &l->lib->f3;
        const struct md *md = l->fmu->md;
        fmi3Instance in;
        fmi3Status st = fmi3OK;

        in = f->fmi3InstantiateCoSimulation(name, md->instantiation_token, NULL, false, false,
                                            false, false, NULL, 0, NULL, on_log, NULL);
        if (!in)
                bench_die("fmi3InstantiateCoSimulation", EIO);
        if (param) {
                const struct md_variable *v = md_find_name(md, param);
                double dv = atof(value);
                int32_t iv = atoi(value);

                if (!v)
                        bench_die(param, ENOENT);
                st = v->type == MD_FLOAT64 ? f->fmi3SetFloat64(in, &v->vr, 1, &dv, 1) :
                                             f->fmi3SetInt32(in, &v->vr, 1, &iv, 1);
        }
        if (st > fmi3Warning ||
            f->fmi3EnterInitializationMode(in, false, 0, 0, true, stop) > fmi3Warning ||
            f->fmi3ExitInitializationMode(in) > fmi3Warning)
                bench_die("initialization", EIO);
        return in;
}
