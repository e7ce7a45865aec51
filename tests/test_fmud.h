/*
 * Test helpers for the fmud daemon: a real fmud process on private ipc
 * endpoints in a temporary directory, started with --ready-fd, and raw
 * ZeroMQ DEALER clients that speak proto.h.
 */
#ifndef FMUD_TESTS_TEST_FMUD_H
#define FMUD_TESTS_TEST_FMUD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto/proto.h"

#define TF_RECV_MS      2000    /* a reply that is never coming: a functional bound */
#define TF_REPLY_MS     60000   /* a reply that must come (a load starts workers) */

struct tf_daemon {
        char *dir;              /* temporary: run/, cache/, scratch/, state/, allowed/, fmud.conf */
        char ctl[256], pub[256];        /* ipc endpoints */
        char ctl_path[232], pub_path[232], run_dir[200];
        pid_t pid;
        void *zctx;
};

/* The content of fmud.conf, or NULL for an empty file. extra: more arguments, NULL-terminated. */
int tf_start(struct tf_daemon *d, const char *conf, const char *const *extra);
/* Send sig and wait; returns the exit code, or -1 for death by a signal. */
int tf_stop(struct tf_daemon *d, int sig);
/* Wait for the daemon to exit by itself; as tf_stop(). */
int tf_wait(struct tf_daemon *d);
void tf_cleanup(struct tf_daemon *d);
/* A file below d->dir. */
void tf_path(const struct tf_daemon *d, const char *name, char *buf, size_t len);

/* A DEALER connected to ep (receive timeout ms). */
void *tf_dealer(struct tf_daemon *d, const char *ep, int timeout_ms);
/* Send one frame. 0 or -1. */
int tf_send(void *s, const void *buf, size_t len);
/* Send the encoded request in w and wait for the reply: decoded into doc/ret (caller frees doc). */
int tf_call(void *s, struct pw *w, struct pv_doc *doc, struct proto_reply *ret, void **ret_buf);
/* Receive one reply frame (timeout per the socket). 0, or -EAGAIN on timeout. */
int tf_recv_reply(void *s, struct pv_doc *doc, struct proto_reply *ret, void **ret_buf);
/* hello on s; returns the reply's ok. */
bool tf_hello_ok(void *s);

/* Does pid still exist as a live (non-zombie) process? */
bool tf_pid_alive(pid_t pid);

#endif
