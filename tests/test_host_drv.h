/*
 * Test driver for daemon/host.h: a host with real workers, requests
 * encoded with proto/ and handed to host_request() as the control thread
 * would, replies and PUB messages collected from the callbacks (any
 * thread) under a mutex and condition variable, decoded with proto/.
 */
#ifndef FMUD_TESTS_HOST_DRV_H
#define FMUD_TESTS_HOST_DRV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/host.h"
#include "proto/proto.h"

struct hmsg {
        uint64_t token;                 /* replies */
        char *topic;                    /* PUB messages */
        void *buf;
        size_t len;
};

struct hdrv {
        struct host *h;
        char *dir;                      /* temporary: cache/, scratch/, out/ */
        char cache[512], scratch[512], out[512];
        pthread_mutex_t lock;
        pthread_cond_t cond;
        size_t n_replies, n_pubs;
        struct hmsg replies[256];
        struct hmsg *pubs;
        size_t pub_cap;
        uint64_t next_id;
};

/* A decoded reply; free with hrep_fini(). */
struct hrep {
        void *buf;
        struct pv_doc doc;
        struct proto_reply r;
};

/* Start a host allowing the examples, the test FMUs and d->out (plus extra, may be NULL). */
void hdrv_init(struct hdrv *d, const char *extra_allowed);
/* The same with another worker binary (a failing one). */
void hdrv_init_worker(struct hdrv *d, const char *worker);
/* The same with a sandbox mode. */
void hdrv_init_sandbox(struct hdrv *d, enum host_sandbox mode);
void hdrv_fini(struct hdrv *d);

/* Send the request in w (proto_*_encode'd with id hdrv_id(d)); returns its token (the id). */
uint64_t hdrv_id(struct hdrv *d);
uint64_t hdrv_send(struct hdrv *d, struct pw *w);
/* Wait for the reply to token. */
void hdrv_wait(struct hdrv *d, uint64_t token, struct hrep *ret);
/* Whether the reply to token is there (without waiting). */
bool hdrv_has(struct hdrv *d, uint64_t token);
void hrep_fini(struct hrep *r);

/* Send and wait. */
void hdrv_target(struct hdrv *d, enum proto_op op, uint64_t session, uint64_t gen, struct hrep *ret);
uint64_t hdrv_target_send(struct hdrv *d, enum proto_op op, uint64_t session, uint64_t gen);
/* Load path (out may be NULL) with load's other fields from base (may be NULL). */
uint64_t hdrv_load_send(struct hdrv *d, const char *path, const char *out,
                        const struct proto_load *base);
/* Load and assert success; returns the session. */
uint64_t hdrv_load(struct hdrv *d, const char *path, const char *out, const struct proto_load *base);

/* Assert that r is an error with code; returns its message (NUL-terminated copy, static). */
const char *hrep_err(const struct hrep *r, enum proto_err code);
/* Assert ok and decode a progress result. */
void hrep_progress(const struct hrep *r, struct proto_progress *ret);

/* Status of a session (asserts ok); mem: free(). */
void hdrv_status(struct hdrv *d, uint64_t session, struct hrep *rep, struct proto_session_status *st,
                 void **mem);
enum proto_state hdrv_state(struct hdrv *d, uint64_t session);
/* Poll status until the session is in state st (a state it must reach). */
void hdrv_wait_state(struct hdrv *d, uint64_t session, enum proto_state st);

/* PUB messages so far on topic (or all when NULL): count; copies with hdrv_pub(). */
size_t hdrv_pub_count(struct hdrv *d, const char *topic);
/* The i-th message on topic: decoded into doc (free with pv_doc_fini()); buffer kept by d. */
const struct pv *hdrv_pub(struct hdrv *d, const char *topic, size_t i, struct pv_doc *doc);

/* Whole file as a malloc'ed buffer. */
char *hdrv_slurp(const char *path, size_t *ret_len);
/* Whether process pid is gone (reaped). */
bool hdrv_gone(int64_t pid);

#define HDRV_EXAMPLE(name) FMUD_EXAMPLES_DIR "/" name
#define HDRV_FMU(name) FMUD_TEST_FMU_DIR "/" name ".fmu"

#endif
