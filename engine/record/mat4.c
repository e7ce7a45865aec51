/*
 * mat4: the MAT v4 result writer (format in mat4.h).
 *
 * DESIGN: every matrix but data_2 has a size known once the variables
 * are, so the file is laid out at mat4_open() and only data_2 grows: rows
 * go through a 64 KiB buffer appended with pwrite(), and mat4_close()
 * patches the two numbers that depend on how many rows came (data_2's
 * column count, data_1's last time). Memory stays bounded by the buffer
 * and the variables, whatever the length of the run. A file cut short by
 * a crash still parses as a file with fewer columns than its header says,
 * which readers reject rather than misread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/record/mat4.h"

#define BUF_SIZE        65536u
#define MAX_VARS        (1u << 24)
#define MAX_TEXT        4096u           /* bytes of one name or description */

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define MOPT_M          0               /* IEEE little endian */
#else
#define MOPT_M          1000            /* IEEE big endian */
#endif
#define TYPE_F64        (MOPT_M + 0)
#define TYPE_I32        (MOPT_M + 20)
#define TYPE_TEXT       (MOPT_M + 51)   /* uint8 text */

struct mat4 {
        int fd;
        int err;
        size_t n_par, n_var, n;
        size_t *par_of;                 /* for each variable: its data_1 row, or SIZE_MAX */
        double *par;                    /* data_1's first column: t0 and the parameters */
        off_t data1_off;                /* data_1's values */
        off_t ncols_off;                /* data_2's column count in its header */
        off_t off;                      /* where the buffer goes */
        uint64_t rows;
        double t_last;
        size_t len;
        unsigned char buf[BUF_SIZE];
};

static int write_at(int fd, const void *p, size_t len, off_t off)
{
        const char *c = p;

        while (len) {
                ssize_t w = pwrite(fd, c, len, off);

                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0)
                        return -errno;
                if (w == 0)
                        return -EIO;
                c += w;
                len -= (size_t)w;
                off += w;
        }
        return 0;
}

static int flush(struct mat4 *m)
{
        int r;

        if (m->err || !m->len)
                return m->err;
        r = write_at(m->fd, m->buf, m->len, m->off);
        if (r < 0)
                return m->err = r;
        m->off += (off_t)m->len;
        m->len = 0;
        return 0;
}

static int put(struct mat4 *m, const void *p, size_t len)
{
        const unsigned char *c = p;

        while (len && !m->err) {
                size_t k = BUF_SIZE - m->len < len ? BUF_SIZE - m->len : len;

                memcpy(m->buf + m->len, c, k);
                m->len += k;
                c += k;
                len -= k;
                if (m->len == BUF_SIZE)
                        (void) flush(m);
        }
        return m->err;
}

/* Where the next byte put() takes lands in the file. */
static off_t here(const struct mat4 *m)
{
        return m->off + (off_t)m->len;
}

static void header(struct mat4 *m, int32_t type, uint32_t rows, uint32_t cols, const char *name)
{
        int32_t h[5] = { type, (int32_t)rows, (int32_t)cols, 0, (int32_t)strlen(name) + 1 };

        (void) put(m, h, sizeof(h));
        (void) put(m, name, strlen(name) + 1);
}

/* A text matrix of n strings, one per column (binTrans), NUL-padded to the longest. */
static void text_cols(struct mat4 *m, const char *name, char *const *s, size_t n)
{
        size_t w = 1;
        static const char zeros[MAX_TEXT + 1];

        for (size_t i = 0; i < n; i++)
                if (strlen(s[i]) > w)
                        w = strlen(s[i]);
        header(m, TYPE_TEXT, (uint32_t)w, (uint32_t)n, name);
        for (size_t i = 0; i < n && !m->err; i++) {
                size_t l = strlen(s[i]);

                (void) put(m, s[i], l);
                (void) put(m, zeros, w - l);
        }
}

static void aclass(struct mat4 *m)
{
        static const char *const rows[4] = { "Atrajectory", "1.1", "", "binTrans" };
        char cm[4 * 11];

        header(m, TYPE_TEXT, 4, 11, "Aclass");
        /* Column after column: the j-th character of each row in turn. */
        for (size_t j = 0; j < 11; j++)
                for (size_t i = 0; i < 4; i++)
                        cm[j * 4 + i] = j < strlen(rows[i]) ? rows[i][j] : ' ';
        (void) put(m, cm, sizeof(cm));
}

/* "description [unit]", "description", "[unit]" or "", at most MAX_TEXT bytes. */
static char *describe(const struct mat4_var *v)
{
        const char *d = v->description ? v->description : "", *u = v->unit ? v->unit : "";
        size_t ld = strnlen(d, MAX_TEXT), lu = strnlen(u, MAX_TEXT / 2);
        char *s = malloc(ld + lu + 4);

        if (!s)
                return NULL;
        if (lu && ld + lu + 3 > MAX_TEXT)
                ld = MAX_TEXT - lu - 3;
        memcpy(s, d, ld);
        s[ld] = '\0';
        if (lu) {
                if (ld)
                        strcat(s, " ");
                strcat(s, "[");
                strncat(s, u, lu);
                strcat(s, "]");
        }
        return s;
}

static int layout(struct mat4 *m, const struct mat4_var *vars)
{
        size_t n = m->n + 1;
        char **names = calloc(n, sizeof(*names)), **descs = calloc(n, sizeof(*descs));
        int32_t *info = calloc(n * 4, sizeof(*info));
        size_t kp = 1, kv = 1;
        int r = -ENOMEM;

        if (!names || !descs || !info)
                goto out;
        names[0] = strdup("time");
        descs[0] = strdup("Time in [s]");
        if (!names[0] || !descs[0])
                goto out;
        memcpy(info, (int32_t[4]){ 0, 1, 0, -1 }, sizeof(int32_t[4]));
        for (size_t i = 0; i < m->n; i++) {
                int32_t *d = info + (i + 1) * 4;

                names[i + 1] = strndup(vars[i].name, MAX_TEXT);
                descs[i + 1] = describe(&vars[i]);
                if (!names[i + 1] || !descs[i + 1])
                        goto out;
                if (vars[i].parameter) {
                        m->par_of[i] = kp;
                        d[0] = 1, d[1] = (int32_t)++kp, d[2] = 0, d[3] = 0;
                } else {
                        m->par_of[i] = SIZE_MAX;
                        d[0] = 2, d[1] = (int32_t)++kv, d[2] = 0, d[3] = -1;
                }
        }
        aclass(m);
        text_cols(m, "name", names, n);
        text_cols(m, "description", descs, n);
        header(m, TYPE_I32, 4, (uint32_t)n, "dataInfo");
        (void) put(m, info, n * 4 * sizeof(*info));
        header(m, TYPE_F64, (uint32_t)(m->n_par + 1), 2, "data_1");
        m->data1_off = here(m);
        (void) put(m, m->par, (m->n_par + 1) * sizeof(double));
        (void) put(m, m->par, (m->n_par + 1) * sizeof(double));
        /* data_2's column count is the third int32 of its header. */
        m->ncols_off = here(m) + 2 * (off_t)sizeof(int32_t);
        header(m, TYPE_F64, (uint32_t)(m->n_var + 1), 0, "data_2");
        r = m->err;
out:
        for (size_t i = 0; i < n && names && descs; i++) {
                free(names[i]);
                free(descs[i]);
        }
        free(names);
        free(descs);
        free(info);
        return r;
}

int mat4_open(int fd, const struct mat4_var *vars, size_t n, struct mat4 **ret)
{
        struct mat4 *m;
        int r;

        if (fd < 0 || (n && !vars) || n >= MAX_VARS)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (!vars[i].name)
                        return -EINVAL;
        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->fd = fd;
        m->n = n;
        for (size_t i = 0; i < n; i++)
                m->n_par += vars[i].parameter;
        m->n_var = n - m->n_par;
        m->par_of = calloc(n ? n : 1, sizeof(*m->par_of));
        m->par = calloc(m->n_par + 1, sizeof(*m->par));
        r = m->par_of && m->par ? layout(m, vars) : -ENOMEM;
        if (r < 0) {
                free(m->par_of);
                free(m->par);
                free(m);
                return r;
        }
        *ret = m;
        return 0;
}

int mat4_row(struct mat4 *m, double time, const double *values)
{
        if (m->err)
                return m->err;
        if (m->rows == 0) {
                /* data_1 from the first row: a parameter's value is the same in every row. */
                m->par[0] = time;
                for (size_t i = 0; i < m->n; i++)
                        if (m->par_of[i] != SIZE_MAX)
                                m->par[m->par_of[i]] = values[i];
        }
        (void) put(m, &time, sizeof(time));
        for (size_t i = 0; i < m->n; i++)
                if (m->par_of[i] == SIZE_MAX)
                        (void) put(m, &values[i], sizeof(values[i]));
        m->rows++;
        m->t_last = time;
        return m->err;
}

int mat4_close(struct mat4 *m, uint64_t *ret_rows)
{
        size_t k;
        int32_t cols;
        int r;

        if (!m)
                return 0;
        (void) flush(m);
        k = (m->n_par + 1) * sizeof(double);
        cols = m->rows > INT32_MAX ? INT32_MAX : (int32_t)m->rows;
        r = m->rows > INT32_MAX ? -EFBIG : m->err;
        if (!r)
                r = write_at(m->fd, m->par, k, m->data1_off);
        if (!r) {
                m->par[0] = m->t_last;
                r = write_at(m->fd, m->par, k, m->data1_off + (off_t)k);
        }
        if (!r)
                r = write_at(m->fd, &cols, sizeof(cols), m->ncols_off);
        if (ret_rows)
                *ret_rows = m->rows;
        free(m->par_of);
        free(m->par);
        free(m);
        return r;
}
