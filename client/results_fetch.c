/*
 * results_fetch: a session's results, fetched piece by piece through the
 * daemon and written here (results_fetch.h).
 *
 * DESIGN: the daemon serves its CSV file as bytes (PROTOCOL.md "results");
 * a .mat destination is converted on this side as the bytes come, with the
 * same writer the engine has (engine/record/mat4*.c), so nothing depends on
 * the daemon's version writing .mat and memory stays bounded by one piece.
 * The session's units and which columns are parameters come from its
 * variables (vars), asked once before the first row is converted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/engine.h"
#include "results_fetch.h"

int results_fetch_open(struct results_fetch *f, const char *path, char *err, size_t size)
{
        int e;

        *f = (struct results_fetch){ .path = path, .fd = -1 };
        f->to_mat = mat4_wanted(path);
        f->buf = malloc(PROTO_RESULTS_CHUNK);
        if (!f->buf) {
                snprintf(err, size, "out of memory");
                return -ENOMEM;
        }
        if (!path || !strcmp(path, "-")) {
                f->out = stdout;
                return 0;
        }
        /*
         * Not truncated before its first bytes come (a .mat: before its
         * header holds something, mat4_csv.h): a refused load leaves it
         * as it was, and one made here for nothing is removed.
         */
        /*
         * Read too: after a failed write its last complete line is looked
         * for (cut_to_last_line()); a file one may only write is written.
         */
        f->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0644);
        if (f->fd >= 0)
                f->created = true;
        else if (errno == EEXIST)
                f->fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (f->fd < 0 && errno == EACCES && !f->created)
                f->fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (f->fd < 0) {
                e = errno;
                goto failed;
        }
        if (f->to_mat)
                return 0;
        f->out = fdopen(f->fd, "w");
        if (!f->out) {
                e = errno;
                goto failed;
        }
        f->fd = -1;
        return 0;
failed:
        snprintf(err, size, "cannot write '%s': %s", path, strerror(e));
        if (f->fd >= 0)
                close(f->fd);
        if (f->created)
                (void) unlink(path);
        f->fd = -1;
        free(f->buf);
        f->buf = NULL;
        return -e;
}

static bool is(struct proto_str s, const char *lit)
{
        return s.len == strlen(lit) && !memcmp(s.ptr, lit, s.len);
}

/* The converter, with the session's units and parameters by column name. */
static int start_mat(struct results_fetch *f, struct fmud *c, const struct proto_target *t,
                     char *err, size_t size)
{
        const struct fmud_var *v = NULL;
        struct mat4_var *meta;
        size_t n = 0;
        double time;
        int r;

        /* Units are a nicety: a daemon that cannot list the variables still gets its rows. */
        if (fmud_vars(c, t, &v, &n, &time) < 0)
                n = 0;
        /* The converter reads the strings until the end (results_fetch_close()): kept in f. */
        f->meta = meta = calloc(n ? n : 1, sizeof(*meta));
        f->text = calloc(n ? 2 * n : 1, sizeof(*f->text));
        if (!meta || !f->text) {
                snprintf(err, size, "out of memory");
                return -ENOMEM;
        }
        f->n_text = 2 * n;
        for (size_t i = 0; i < n; i++) {
                f->text[2 * i] = strndup(v[i].name.ptr, v[i].name.len);
                f->text[2 * i + 1] = v[i].unit.len ? strndup(v[i].unit.ptr, v[i].unit.len) : NULL;
                meta[i] = (struct mat4_var){
                        .name = f->text[2 * i], .unit = f->text[2 * i + 1],
                        .parameter = is(v[i].variability, "constant") ||
                                     is(v[i].variability, "fixed"),
                        .text = is(v[i].type, "String") || is(v[i].type, "Binary") };
        }
        r = mat4_csv_new(f->fd, meta, n, &f->mat);
        if (r < 0)
                snprintf(err, size, "cannot convert to '%s': %s", f->path, strerror(-r));
        return r;
}

/* The header's columns, counted as its bytes pass (commas outside quotes). */
static void count_header(struct results_fetch *f, const char *p, size_t len)
{
        for (size_t i = 0; i < len && !f->header_done; i++) {
                if (p[i] == '"')
                        f->quoted = !f->quoted;
                else if (p[i] == ',' && !f->quoted)
                        f->cols++;
                else if (p[i] == '\n' && !f->quoted)
                        f->header_done = true;
        }
}

/* Once the header is through: the text columns a .mat file leaves out, said on stderr. */
static void note_left_out(struct results_fetch *f)
{
        char names[MAT4_LIST_MAX], note[MAT4_LIST_MAX + 4096];
        size_t n;

        if (f->noted || !f->header_done)
                return;
        f->noted = true;
        n = mat4_csv_left_out(f->mat, names, sizeof(names));
        f->cols -= n <= f->cols ? n : f->cols;  /* the columns the file has */
        if (!n)
                return;
        run_mat4_note(note, sizeof(note), f->path, n, names);
        fprintf(stderr, "warning: %s\n", note);
}

/* The converter's failure in err, with the file it was for in front. */
static int name_it(const struct results_fetch *f, int r, char *err, size_t size)
{
        char *why = strdup(err);

        if (why) {
                snprintf(err, size, "'%s': %s", f->path, why);
                free(why);
        }
        return r;
}

/*
 * After a failed write (a full disk, the file size limit): the file cut
 * back to its last complete line, as the recorder leaves a run's own, so
 * that no reader takes half a row for a row. What is buffered is dropped
 * first, or closing would write it after the cut.
 */
static void cut_to_last_line(struct results_fetch *f)
{
        char buf[4096];
        struct stat st;
        int fd = fileno(f->out);
        off_t end;

        __fpurge(f->out);
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return;
        for (end = st.st_size; end > 0;) {
                off_t from = end > (off_t)sizeof(buf) ? end - (off_t)sizeof(buf) : 0;
                ssize_t n = pread(fd, buf, (size_t)(end - from), from);

                if (n <= 0)
                        return;
                for (ssize_t i = n; i > 0; i--)
                        if (buf[i - 1] == '\n') {
                                (void) ftruncate(fd, from + i);
                                return;
                        }
                end = from;
        }
        (void) ftruncate(fd, 0);
}

static int put(struct results_fetch *f, const void *p, size_t len, char *err, size_t size)
{
        int r;

        count_header(f, p, len);
        if (f->to_mat) {
                r = mat4_csv_feed(f->mat, p, len, err, size);
                note_left_out(f);
                if (r < 0 && !f->failed) {
                        f->failed = true;
                        name_it(f, r, err, size);
                }
                return r;
        }
        /* EINVAL: not a regular file (a FIFO, a terminal), nothing to cut. */
        if (len && !f->wrote && f->out != stdout && ftruncate(fileno(f->out), 0) < 0 &&
            errno != EINVAL) {
                r = -errno;
                snprintf(err, size, "cannot write '%s': %s", f->path, strerror(-r));
                return r;
        }
        f->wrote = f->wrote || len;
        if (len && fwrite(p, 1, len, f->out) != len) {
                int e = errno ? errno : EIO;

                if (f->out != stdout)
                        cut_to_last_line(f);
                snprintf(err, size, "cannot write '%s': %s", f->out == stdout ? "standard output" :
                         f->path, strerror(e));
                return -e;
        }
        return 0;
}

int results_fetch_pump(struct results_fetch *f, struct fmud *c, const struct proto_target *t,
                       char *err, size_t size)
{
        struct fmud_results res;
        int r;

        if (f->to_mat && !f->mat && (r = start_mat(f, c, t, err, size)) < 0)
                return r;
        while (!f->done) {
                r = fmud_results_read(c, t, f->off, f->buf, PROTO_RESULTS_CHUNK, &res);
                if (r < 0) {
                        snprintf(err, size, "%s", fmud_errmsg(c));
                        f->daemon_err = true;
                        return r;
                }
                if (strcmp(res.format, "csv")) {
                        snprintf(err, size, "the daemon's results are '%.8s', not csv",
                                 res.format);
                        return -EPROTO;
                }
                r = put(f, f->buf, res.len, err, size);
                if (r < 0)
                        return r;
                f->off += res.len;
                f->done = res.done;
                if (res.len < PROTO_RESULTS_CHUNK)
                        break;
        }
        if (!f->to_mat && fflush(f->out) != 0) {
                int e = errno;

                snprintf(err, size, "cannot write '%s': %s", f->out == stdout ? "standard output" :
                         f->path, strerror(e));
                if (f->out != stdout)
                        cut_to_last_line(f);
                return -e;
        }
        return f->done ? 1 : 0;
}

int results_fetch_close(struct results_fetch *f, char *err, size_t size)
{
        int r = 0;

        if (f->to_mat) {
                /* Nothing fetched (a load refused): path is left as it was. */
                bool any = f->mat != NULL && !f->failed;

                r = mat4_csv_finish(f->mat, NULL, err, size);
                f->mat = NULL;
                /* A failure said before is in err as it was said. */
                if (r < 0 && !f->failed)
                        name_it(f, r, err, size);
                if (r == 0 && any && fsync(f->fd) < 0 && errno != EINVAL) {
                        r = -errno;
                        snprintf(err, size, "cannot write '%s': %s", f->path, strerror(-r));
                }
                if (f->fd >= 0 && close(f->fd) < 0 && !r) {
                        r = -errno;
                        snprintf(err, size, "cannot write '%s': %s", f->path, strerror(-r));
                }
                if (f->created && !any)
                        (void) unlink(f->path);
        } else if (f->out && f->out != stdout) {
                if (fclose(f->out) != 0) {
                        r = -errno;
                        snprintf(err, size, "cannot write '%s': %s", f->path, strerror(-r));
                }
                /* Created here and never written: not left behind. */
                if (f->created && !f->wrote)
                        (void) unlink(f->path);
        } else if (f->out && fflush(f->out) != 0) {
                r = -errno;
                snprintf(err, size, "cannot write standard output: %s", strerror(-r));
        }
        f->out = NULL;
        f->fd = -1;
        free(f->buf);
        f->buf = NULL;
        for (size_t i = 0; f->text && i < f->n_text; i++)
                free(f->text[i]);
        free(f->text);
        f->text = NULL;
        f->n_text = 0;
        free(f->meta);
        f->meta = NULL;
        return r;
}
