/*
 * upload_int: the inside of struct upload, shared by daemon/upload*.c
 * (upload.c: puts and eviction; upload_dir.c: load directories).
 */
#ifndef FMUD_DAEMON_UPLOAD_INT_H
#define FMUD_DAEMON_UPLOAD_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct upart;

struct upload {
        pthread_mutex_t lock;           /* everything below, and the store's files */
        char *dir;
        int dfd, pfd, lfd;              /* the store, partial/, load/ */
        uint64_t max_file, quota, store_bytes;
        struct upart *parts;
};

/* Remove everything below the directory fd (its descriptor is consumed). */
void upload_clear_dir(int fd);
/* Whether s is 64 lowercase hex digits: a complete upload's name. */
bool upload_hex_name(const char *s);
/* Under u->lock: complete upload sha's size, touched (most recently used); -errno: none. */
int upload_complete_size(struct upload *u, const char *sha, uint64_t *ret);

#endif
