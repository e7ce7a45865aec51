/*
 * sandbox_int: the layers of the worker's sandbox (sandbox.h), one file
 * each, called in order by sandbox.c. Private to worker/.
 *
 * Each layer function applies its layer to the calling (single-threaded)
 * process and returns 0 when it is active, or -errno when it is not (the
 * kernel refused it, or it does not exist here); either way it writes a
 * one-line detail into buf: what it did, or why it could not.
 */
#ifndef FMUD_WORKER_SANDBOX_INT_H
#define FMUD_WORKER_SANDBOX_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "worker/sandbox.h"

/* sandbox.c */
int sandbox_environment(const struct sandbox_args *a, char *buf, size_t size);

/* sandbox_limits.c */
int sandbox_limits(const struct sandbox_args *a, char *buf, size_t size);

/* sandbox_privs.c: no_new_privs always; as root, become a->opts.uid/gid. */
int sandbox_privileges(const struct sandbox_args *a, char *buf, size_t size);

/* sandbox_ns.c */
int sandbox_namespaces(const struct sandbox_args *a, char *buf, size_t size);
/* Whether sandbox_namespaces() made /tmp the worker's own (writable) tmpfs. */
bool sandbox_private_tmp(void);

/* sandbox_landlock.c */
int sandbox_landlock(const struct sandbox_args *a, char *buf, size_t size);

/* sandbox_seccomp.c */
int sandbox_seccomp(const struct sandbox_args *a, char *buf, size_t size);

#endif
