/*
 * archive_check: every entry-level rule for an FMU archive, run before
 * anything is decompressed. Each broken rule becomes one diagnostic naming
 * the entry, and checking goes on, so a user sees every problem at once.
 *
 * DESIGN: two readings of the central directory are compared (libzip's and
 * zip_cdir's); the rules then use our raw one for what libzip hides (NULs in
 * names, flag bits, data offsets) and libzip's for the rest. Names are
 * checked by archive_path; duplicates are found by sorting, so the whole
 * check is O(n log n) in the number of entries.
 */
#include "archive_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive_path.h"

#define EM_WINZIP_AES   99      /* compression method field of AES entries */

/* Reparse points are how NTFS stores links (file attribute 0x400). */
#define DOS_ATTR_REPARSE_POINT 0x400u

static void report(struct ar_report *rep, enum diag_severity sev, const char *raw, size_t len,
                   const char *fmt, va_list ap)
{
        char *name = NULL, *text = NULL;

        if (sev == DIAG_ERROR)
                rep->errors++;
        if (!rep->diags)
                return;
        if (vasprintf(&text, fmt, ap) < 0)
                text = NULL;
        if (raw)
                name = arpath_escape(raw, len);
        /* The quoted name leads the message; on OOM the error still counts (diag_add drops it). */
        if (raw)
                diag_add(rep->diags, sev, rep->file, 0, NULL, "'%s': %s",
                         name ? name : "?", text ? text : fmt);
        else
                diag_add(rep->diags, sev, rep->file, 0, NULL, "%s", text ? text : fmt);
        free(name);
        free(text);
}

void ar_error(struct ar_report *rep, const char *raw, size_t len, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        report(rep, DIAG_ERROR, raw, len, fmt, ap);
        va_end(ap);
}

void ar_warn(struct ar_report *rep, const char *raw, size_t len, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        report(rep, DIAG_WARNING, raw, len, fmt, ap);
        va_end(ap);
}

/* libzip turns NULs in names into spaces; compare with that in mind. */
static bool same_entry(const struct cdir_entry *raw, const char *zname, const zip_stat_t *st)
{
        if (!zname || strlen(zname) != raw->name_len)
                return false;
        for (size_t i = 0; i < raw->name_len; i++) {
                char c = raw->name[i] ? raw->name[i] : ' ';

                if (zname[i] != c)
                        return false;
        }
        if (raw->method != EM_WINZIP_AES && st->comp_method != raw->method)
                return false;
        return st->size == raw->size && st->comp_size == raw->comp_size;
}

static void check_name(const struct cdir_entry *raw, int bad, size_t max_len,
                       struct ar_report *rep)
{
        for (unsigned bit = 1; bit < 1u << ARPATH_NRULES; bit <<= 1) {
                if (!((unsigned)bad & bit))
                        continue;
                if (bit == ARPATH_TOO_LONG)
                        ar_error(rep, raw->name, raw->name_len,
                                 "entry name of %zu bytes is longer than the limit of %zu",
                                 raw->name_len, max_len);
                else
                        ar_error(rep, raw->name, raw->name_len, "%s", arpath_rule(bit));
        }
}

static const char *unix_type(unsigned fmt)
{
        switch (fmt) {
        case S_IFCHR:
                return "character device";
        case S_IFBLK:
                return "block device";
        case S_IFIFO:
                return "FIFO";
        case S_IFSOCK:
                return "socket";
        }
        return "unknown file type";
}

/* Only regular files and directories; the type comes from the external attributes. */
static void check_type(zip_t *za, zip_uint64_t i, const struct cdir_entry *raw, bool is_dir,
                       struct ar_report *rep)
{
        zip_uint8_t opsys;
        zip_uint32_t attr;
        unsigned fmt;

        if (zip_file_get_external_attributes(za, i, 0, &opsys, &attr) < 0) {
                ar_error(rep, raw->name, raw->name_len, "external attributes cannot be read");
                return;
        }
        if (opsys != ZIP_OPSYS_UNIX && opsys != ZIP_OPSYS_OS_X) {
                if ((opsys == ZIP_OPSYS_DOS || opsys == ZIP_OPSYS_WINDOWS_NTFS ||
                     opsys == ZIP_OPSYS_VFAT) && (attr & DOS_ATTR_REPARSE_POINT))
                        ar_error(rep, raw->name, raw->name_len,
                                 "reparse point (a link): links are not allowed (FMI 3.0 section 2.5)");
                return;
        }
        fmt = (attr >> 16) & S_IFMT;
        if (fmt == 0)
                return; /* no type recorded: the name decides */
        if (fmt == S_IFLNK)
                ar_error(rep, raw->name, raw->name_len,
                         "symbolic link: links are not allowed (FMI 3.0 section 2.5)");
        else if (fmt == S_IFREG && is_dir)
                ar_error(rep, raw->name, raw->name_len,
                         "regular-file entry whose name ends in '/'");
        else if (fmt == S_IFDIR && !is_dir)
                ar_error(rep, raw->name, raw->name_len,
                         "directory entry whose name does not end in '/'");
        else if (fmt != S_IFREG && fmt != S_IFDIR)
                ar_error(rep, raw->name, raw->name_len,
                         "%s entry (mode 0%o): only regular files and directories are allowed",
                         unix_type(fmt), (attr >> 16) & 0xffffu);
}

/* Whether size > comp * ratio, without overflow. */
static bool ratio_over(uint64_t size, uint64_t comp, uint32_t ratio)
{
        if (ratio == 0)
                return false;
        if (comp > UINT64_MAX / ratio)
                return false;
        return size > comp * ratio;
}

static void check_data(const struct fmu_limits *lim, const struct cdir_entry *raw,
                       const zip_stat_t *st, bool is_dir, struct ar_report *rep)
{
        bool encrypted = (raw->flags & (CDIR_FLAG_ENCRYPTED | CDIR_FLAG_STRONG_ENCRYPTION)) ||
                         raw->method == EM_WINZIP_AES ||
                         ((st->valid & ZIP_STAT_ENCRYPTION_METHOD) &&
                          st->encryption_method != ZIP_EM_NONE);

        if (encrypted)
                ar_error(rep, raw->name, raw->name_len,
                         "encrypted entry: encryption must not be used (FMI 3.0 section 2.5)");
        else if (raw->method != ZIP_CM_STORE && raw->method != ZIP_CM_DEFLATE)
                ar_error(rep, raw->name, raw->name_len,
                         "unsupported compression method %u: only store (0) and deflate (8) are allowed (FMI 3.0 section 2.5)",
                         raw->method);
        if (is_dir && raw->size > 0)
                ar_error(rep, raw->name, raw->name_len,
                         "directory entry carries %llu bytes of data", (unsigned long long)raw->size);
        if (raw->size > lim->max_entry_size)
                ar_error(rep, raw->name, raw->name_len,
                         "entry size of %llu bytes is over the limit of %llu bytes",
                         (unsigned long long)raw->size, (unsigned long long)lim->max_entry_size);
        if (raw->size >= lim->ratio_min_size && ratio_over(raw->size, raw->comp_size, lim->max_ratio))
                ar_error(rep, raw->name, raw->name_len,
                         "compression ratio over the limit of %u:1 (%llu bytes from %llu)",
                         lim->max_ratio, (unsigned long long)raw->size,
                         (unsigned long long)raw->comp_size);
}

/*
 * Unpacking creates a directory per component, and the cost of reaching
 * each one grows with its depth: bounded here, before anything is written.
 */
static void check_depth(const struct fmu_limits *lim, const struct cdir_entry *raw,
                        const char *norm, struct ar_report *rep)
{
        size_t depth = 1;

        for (const char *c = norm; *c; c++)
                depth += *c == '/';
        if (depth > lim->max_depth)
                ar_error(rep, raw->name, raw->name_len,
                         "entry name has %zu components, over the limit of %zu",
                         depth, lim->max_depth);
}

/* Returns 1 when the entry went into ar->v, 0 when its name is refused, -ENOMEM. */
static int check_entry(struct fmu_archive *ar, zip_uint64_t i, const struct cdir_entry *raw,
                       struct ar_report *rep)
{
        zip_stat_t st;
        bool is_dir;
        char *norm = NULL;
        int bad;

        if (zip_stat_index(ar->zip, i, ZIP_FL_ENC_RAW, &st) < 0 ||
            !same_entry(raw, zip_get_name(ar->zip, i, ZIP_FL_ENC_RAW), &st)) {
                ar_error(rep, raw->name, raw->name_len,
                         "central directory record is read differently by libzip: the archive is ambiguous");
                return 0;
        }
        bad = arpath_check(raw->name, raw->name_len, ar->lim.max_path_len, &is_dir, &norm);
        if (bad < 0)
                return bad;
        /*
         * A backslash alone: a name a Windows tool wrote ('documentation\x'),
         * taken as it is by extracting tools. Not a separator here either,
         * so the name cannot reach anywhere; left out, with a warning.
         */
        if (bad == ARPATH_BACKSLASH) {
                ar_warn(rep, raw->name, raw->name_len, "%s; the entry is left out (a file "
                        "the FMU needs there is then missing)", arpath_rule(ARPATH_BACKSLASH));
                free(norm);
                return 0;
        }
        check_name(raw, bad, ar->lim.max_path_len, rep);
        check_type(ar->zip, i, raw, is_dir, rep);
        check_data(&ar->lim, raw, &st, is_dir, rep);
        if (bad)
                return 0;
        check_depth(&ar->lim, raw, norm, rep);
        ar->v[ar->n++] = (struct ar_entry){ .name = norm, .index = i, .size = raw->size,
                                            .crc = raw->crc, .kind = is_dir ? AR_DIR : AR_FILE };
        return 1;
}

static void check_totals(const struct fmu_archive *ar, const struct cdir *cd, struct ar_report *rep)
{
        const struct fmu_limits *lim = &ar->lim;
        uint64_t total = 0;

        for (size_t i = 0; i < cd->n; i++)
                total = cd->v[i].size > UINT64_MAX - total ? UINT64_MAX : total + cd->v[i].size;
        if (total > lim->max_total_size)
                ar_error(rep, NULL, 0, "entries total %llu bytes uncompressed, over the limit of %llu bytes",
                         (unsigned long long)total, (unsigned long long)lim->max_total_size);
        /* Against the file size, not the sum of compressed sizes: overlapping entries count once. */
        if (total >= lim->ratio_min_size && ratio_over(total, ar->src.size, lim->max_ratio))
                ar_error(rep, NULL, 0,
                         "archive compression ratio over the limit of %u:1 (%llu bytes from a %llu-byte file)",
                         lim->max_ratio, (unsigned long long)total, (unsigned long long)ar->src.size);
}

/* An error about one entry that names a second one (escaped) in the message. */
__attribute__((format(printf, 6, 0)))
static void error_pair(struct ar_report *rep, const char *raw, size_t len,
                       const char *other, size_t other_len, const char *fmt)
{
        char *o = arpath_escape(other, other_len);

        ar_error(rep, raw, len, fmt, o ? o : "?");
        free(o);
}

struct span {
        uint64_t start, end;
        size_t i;
};

static int span_cmp(const void *a, const void *b)
{
        const struct span *x = a, *y = b;

        return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Each entry's local header must agree with its central record (readers
 * that stream by local headers must see the same archive as we do), and its
 * data must lie before the central directory and apart from every other
 * entry's: overlapping entries are how the smallest zip bombs multiply
 * their output.
 */
static int check_local(const struct fmu_archive *ar, const struct cdir *cd, struct ar_report *rep)
{
        struct span *s = calloc(cd->n ? cd->n : 1, sizeof(*s));
        size_t n = 0;

        if (!s)
                return -ENOMEM;
        for (size_t i = 0; i < cd->n; i++) {
                const struct cdir_entry *e = &cd->v[i];
                const char *why;
                uint64_t end;
                int r = cdir_check_local(&ar->src, e, &end, &why);

                if (r < 0 && r != -EBADMSG) {
                        free(s);
                        return r;
                }
                if (r == 0 && end > cd->offset) {
                        r = -EBADMSG;
                        why = "data runs into the central directory";
                }
                if (r < 0) {
                        ar_error(rep, e->name, e->name_len, "%s", why);
                        continue;
                }
                s[n++] = (struct span){ .start = e->local_offset, .end = end, .i = i };
        }
        qsort(s, n, sizeof(*s), span_cmp);
        for (size_t k = 1; k < n; k++) {
                const struct cdir_entry *a = &cd->v[s[k - 1].i], *b = &cd->v[s[k].i];

                if (s[k].start < s[k - 1].end)
                        error_pair(rep, b->name, b->name_len, a->name, a->name_len,
                                   "data overlaps entry '%s'");
        }
        free(s);
        return 0;
}

/*
 * '/' sorts before every other byte a name may hold, so that "f" is next to
 * "f/..." (not "f!x" between them). With fold, case is folded too, so that
 * "A" is next to "a".
 */
static int order(unsigned char c, bool fold)
{
        if (c == '/')
                return 1;
        if (fold && c >= 'A' && c <= 'Z')
                return c - 'A' + 'a';
        return c;
}

static int name_cmp(const char *a, const char *b, bool fold, size_t *ret_common)
{
        size_t i = 0;

        while (a[i] && order((unsigned char)a[i], fold) == order((unsigned char)b[i], fold))
                i++;
        if (ret_common)
                *ret_common = i;
        return order((unsigned char)a[i], fold) - order((unsigned char)b[i], fold);
}

static int entry_order_cmp(const struct ar_entry *a, const struct ar_entry *b, bool fold)
{
        int c = name_cmp(a->name, b->name, fold, NULL);

        if (!c)
                c = strcmp(a->name, b->name);
        return c ? c : (a->index > b->index) - (a->index < b->index);
}

static int entry_slash_cmp(const void *x, const void *y)
{
        return entry_order_cmp(x, y, false);
}

static int entry_fold_cmp(const void *x, const void *y)
{
        return entry_order_cmp(x, y, true);
}

static int entry_cmp(const void *x, const void *y)
{
        return strcmp(((const struct ar_entry *)x)->name, ((const struct ar_entry *)y)->name);
}

/*
 * Two entries of one name and kind. Readers differ in which copy they take
 * (libzip the first, unzip the last), so copies that differ would let two
 * readers see two FMUs: refused. Copies with the same bytes look the same
 * to every reader (some tools append a file twice): a warning, and the
 * second is dropped.
 */
static int check_twin(const struct fmu_archive *ar, const struct ar_entry *a, struct ar_entry *b,
                      struct ar_report *rep)
{
        int same = a->kind == AR_DIR ? 1 : ar_same_data(ar, a, b);

        if (same < 0)
                return same;
        if (!same) {
                ar_error(rep, b->name, strlen(b->name),
                         "duplicate entry name, with different data: readers would not agree "
                         "on which one the archive holds");
                return 0;
        }
        ar_warn(rep, b->name, strlen(b->name),
                "duplicate entry name; both copies hold the same %llu bytes, so one is used",
                (unsigned long long)b->size);
        b->twin = true;
        return 0;
}

static int check_pair(const struct fmu_archive *ar, const struct ar_entry *a, struct ar_entry *b,
                      struct ar_report *rep)
{
        size_t common;

        if (strcmp(a->name, b->name) == 0) {
                if (a->kind == b->kind)
                        return check_twin(ar, a, b, rep);
                else
                        ar_error(rep, b->name, strlen(b->name),
                                 "duplicate entry name: both a file and a directory");
        } else {
                name_cmp(a->name, b->name, false, &common);
                if (a->kind == AR_FILE && a->name[common] == '\0' && b->name[common] == '/')
                        error_pair(rep, a->name, strlen(a->name), b->name, strlen(b->name),
                                   "duplicate entry name: a file, and a directory in '%s'");
        }
        return 0;
}

/*
 * Names that differ only in letter case are distinct to FMI, to zip and to
 * the cache, which is unpacked on Linux, and other importers keep both too;
 * only a case-insensitive file system would keep one of them, so the
 * archive is accepted with a warning. Sorted with case folded, such names
 * are neighbours.
 */
static void check_case(struct fmu_archive *ar, struct ar_report *rep)
{
        qsort(ar->v, ar->n, sizeof(*ar->v), entry_fold_cmp);
        for (size_t k = 1; k < ar->n; k++) {
                const struct ar_entry *a = &ar->v[k - 1], *b = &ar->v[k];
                char *o;

                if (!strcmp(a->name, b->name) || name_cmp(a->name, b->name, true, NULL))
                        continue;
                o = arpath_escape(a->name, strlen(a->name));
                ar_warn(rep, b->name, strlen(b->name),
                        "entry name differs from '%s' only in letter case: both are unpacked, "
                        "but a case-insensitive file system would keep one", o ? o : "?");
                free(o);
        }
}

/*
 * Sorted so that equal names and "f" / "f/..." are neighbours (equal names
 * in central directory order: the sort is by index among them). Twins are
 * dropped afterwards, so every name left is unique for ar_find().
 */
static int check_duplicates(struct fmu_archive *ar, struct ar_report *rep)
{
        size_t n = 0;
        int r = 0;

        qsort(ar->v, ar->n, sizeof(*ar->v), entry_slash_cmp);
        for (size_t k = 1; k < ar->n && r >= 0; k++)
                r = check_pair(ar, &ar->v[k - 1], &ar->v[k], rep);
        for (size_t k = 0; k < ar->n; k++) {
                if (!ar->v[k].twin) {
                        ar->v[n++] = ar->v[k];
                        continue;
                }
                free(ar->v[k].name);
                ar->twins++;
        }
        ar->n = n;
        check_case(ar, rep);
        qsort(ar->v, ar->n, sizeof(*ar->v), entry_cmp);
        return r;
}

/* The directory an entry implies: all of a directory's name, a file's up to its last '/'. */
struct dirpath {
        const char *s;
        size_t len;             /* 0: the root */
};

/*
 * Byte i of the directory path with a '/' appended, then the end (0). '/'
 * becomes 1, below every other byte a name may hold, so that a directory
 * and everything beneath it are neighbours once sorted.
 */
static int dir_byte(const struct dirpath *d, size_t i)
{
        if (i < d->len)
                return d->s[i] == '/' ? 1 : (unsigned char)d->s[i];
        return i == d->len;
}

static int dirpath_cmp(const void *x, const void *y)
{
        const struct dirpath *a = x, *b = y;

        for (size_t i = 0;; i++) {
                int ca = dir_byte(a, i), cb = dir_byte(b, i);

                if (ca != cb || !ca)
                        return ca - cb;
        }
}

/*
 * The directories the names imply, each counted once, against
 * lim->max_dirs: a bound on the depth alone still lets every entry bring
 * its own chain of directories. Sorted, the directories a path shares with
 * any earlier one are exactly those it shares with its predecessor, so the
 * count costs a sort. The entry named is the first one past the limit.
 */
static int check_dirs(const struct fmu_archive *ar, struct ar_report *rep)
{
        struct dirpath *d = calloc(ar->n ? ar->n : 1, sizeof(*d));
        const struct dirpath *over = NULL;
        size_t n = 0, dirs = 0;

        if (!d)
                return -ENOMEM;
        for (size_t k = 0; k < ar->n; k++) {
                const char *name = ar->v[k].name, *slash = strrchr(name, '/');
                size_t len = ar->v[k].kind == AR_DIR ? strlen(name) :
                             slash ? (size_t)(slash - name) : 0;

                if (len)
                        d[n++] = (struct dirpath){ .s = name, .len = len };
        }
        qsort(d, n, sizeof(*d), dirpath_cmp);
        for (size_t k = 0; k < n; k++) {
                size_t i = 0;

                /* Skip the components shared with the previous path; count the rest. */
                while (k > 0 && dir_byte(&d[k], i) && dir_byte(&d[k], i) == dir_byte(&d[k - 1], i))
                        i++;
                while (i > 0 && dir_byte(&d[k], i - 1) != 1)
                        i--;
                for (; i <= d[k].len; i++)
                        dirs += dir_byte(&d[k], i) == 1;
                if (dirs > ar->lim.max_dirs && !over)
                        over = &d[k];
        }
        if (over)
                ar_error(rep, over->s, strlen(over->s),
                         "entry names imply %zu directories, over the limit of %zu (the first entry past it)",
                         dirs, ar->lim.max_dirs);
        free(d);
        return 0;
}

int ar_check(struct fmu_archive *ar, const struct cdir *cd, struct ar_report *rep)
{
        const struct ar_entry *md;
        int r;

        ar->v = calloc(cd->n ? cd->n : 1, sizeof(*ar->v));
        if (!ar->v)
                return -ENOMEM;
        for (size_t i = 0; i < cd->n; i++) {
                r = check_entry(ar, i, &cd->v[i], rep);
                if (r < 0)
                        return r;
        }
        check_totals(ar, cd, rep);
        r = check_local(ar, cd, rep);
        if (r < 0)
                return r;
        r = check_duplicates(ar, rep);
        if (r < 0)
                return r;
        r = check_dirs(ar, rep);
        if (r < 0)
                return r;
        md = ar_find(ar, AR_MD_ENTRY);
        if (!ar->lim.container && (!md || md->kind != AR_FILE))
                ar_error(rep, NULL, 0, "no modelDescription.xml file at the archive root (FMI 3.0 section 2.5.1)");
        return 0;
}
