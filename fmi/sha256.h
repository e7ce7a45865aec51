/*
 * sha256: SHA-256 of a file or a buffer as lower-case hex, through OpenSSL's
 * EVP interface. The archive cache is keyed by it.
 */
#ifndef FMUD_FMI_SHA256_H
#define FMUD_FMI_SHA256_H

#include <stddef.h>

#define SHA256_HEX_LEN 64

/*
 * Hash everything readable from fd, from offset 0 to end of file, with
 * pread() in chunks (the file offset is left alone). ret_hex receives 64 hex
 * digits and a NUL. Returns 0, -errno from pread(), or -ENOMEM.
 */
int sha256_fd(int fd, char ret_hex[SHA256_HEX_LEN + 1]);

/* Same for len bytes at p. Returns 0 or -ENOMEM. */
int sha256_buf(const void *p, size_t len, char ret_hex[SHA256_HEX_LEN + 1]);

/*
 * A hash fed piece by piece (an upload's chunks as they arrive):
 * sha256_new() (NULL: out of memory), sha256_update() any number of
 * times, sha256_final() once, sha256_free() (NULL: no-op). 0 or -ENOMEM.
 */
struct sha256_ctx;
struct sha256_ctx *sha256_new(void);
int sha256_update(struct sha256_ctx *c, const void *p, size_t len);
int sha256_final(struct sha256_ctx *c, char ret_hex[SHA256_HEX_LEN + 1]);
void sha256_free(struct sha256_ctx *c);

#endif
