/*
 * results_fetch: a session's results file fetched through the daemon
 * (fmud_results_read()) into a file or stream on this side, as CSV, or as
 * MAT v4 when the file's name ends in .mat (results_fetch.c).
 */
#ifndef FMUD_CLIENT_RESULTS_FETCH_H
#define FMUD_CLIENT_RESULTS_FETCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/engine.h"
#include "fmud.h"

struct results_fetch {
        const char *path;               /* as given; NULL or "-": standard output */
        FILE *out;                      /* CSV: where the bytes go */
        bool created, wrote;            /* path made here; CSV: truncated and written to */
        int fd;                         /* .mat: the file */
        struct mat4_csv *mat;           /* .mat: the converter, once started */
        struct mat4_var *meta;          /* .mat: its variables, and their strings (text) */
        char **text;
        size_t n_text;
        bool to_mat;
        uint64_t off;                   /* bytes fetched */
        bool done;
        bool daemon_err;                /* the last failure was the daemon's (fmud_errmsg()) */
        bool header_done, quoted;
        bool noted;                     /* .mat: the left-out columns said */
        bool failed;                    /* .mat: the converter failed, said in err */
        size_t cols;                    /* the header's columns after time, once header_done */
        void *buf;                      /* one piece (PROTO_RESULTS_CHUNK) */
};

/*
 * Open the destination: path (0644), or standard output for NULL or "-"
 * (CSV only). It is truncated only when its first bytes come (a .mat:
 * once its header holds something), so a refused load, or a .mat of text
 * columns only, leaves path as it was. 0, or -errno with why in err.
 */
int results_fetch_open(struct results_fetch *f, const char *path, char *err, size_t size);

/*
 * Fetch what is complete now: pieces until one is short or the file is
 * done. The first call on a .mat destination asks the session's variables
 * (units, parameters) before the rows. 1 when the whole file is here, 0
 * when more may come, or a libfmud error (-errno, FMUD_E_REFUSED) with why
 * in err.
 */
int results_fetch_pump(struct results_fetch *f, struct fmud *c, const struct proto_target *t,
                       char *err, size_t size);

/*
 * Finish the file (a .mat's header), close it; 0, or -errno with why in
 * err. A file made here that got nothing is removed.
 */
int results_fetch_close(struct results_fetch *f, char *err, size_t size);

#endif
