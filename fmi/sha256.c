/*
 * sha256: streaming SHA-256 with EVP, so memory stays constant whatever the
 * size of the FMU.
 */
#include "sha256.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <openssl/evp.h>

#define CHUNK (256 * 1024)

static void to_hex(const unsigned char *md, char *hex)
{
        static const char digits[] = "0123456789abcdef";

        for (int i = 0; i < SHA256_HEX_LEN / 2; i++) {
                hex[2 * i] = digits[md[i] >> 4];
                hex[2 * i + 1] = digits[md[i] & 0xf];
        }
        hex[SHA256_HEX_LEN] = '\0';
}

static int finish(EVP_MD_CTX *ctx, char *hex)
{
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int n = 0;

        if (EVP_DigestFinal_ex(ctx, md, &n) != 1 || n != SHA256_HEX_LEN / 2)
                return -ENOMEM;
        to_hex(md, hex);
        return 0;
}

struct sha256_ctx *sha256_new(void)
{
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();

        if (ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
                EVP_MD_CTX_free(ctx);
                ctx = NULL;
        }
        return (struct sha256_ctx *)ctx;
}

int sha256_update(struct sha256_ctx *c, const void *p, size_t len)
{
        return EVP_DigestUpdate((EVP_MD_CTX *)c, p, len) == 1 ? 0 : -ENOMEM;
}

int sha256_final(struct sha256_ctx *c, char ret_hex[SHA256_HEX_LEN + 1])
{
        return finish((EVP_MD_CTX *)c, ret_hex);
}

void sha256_free(struct sha256_ctx *c)
{
        EVP_MD_CTX_free((EVP_MD_CTX *)c);
}

int sha256_fd(int fd, char ret_hex[SHA256_HEX_LEN + 1])
{
        struct sha256_ctx *c = sha256_new();
        unsigned char *buf = malloc(CHUNK);
        off_t off = 0;
        ssize_t n;
        int r;

        if (!buf || !c) {
                r = -ENOMEM;
                goto out_free;
        }
        for (;;) {
                n = pread(fd, buf, CHUNK, off);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r = -errno;
                        goto out_free;
                }
                if (n == 0)
                        break;
                r = sha256_update(c, buf, (size_t)n);
                if (r < 0)
                        goto out_free;
                off += n;
        }
        r = sha256_final(c, ret_hex);

out_free:
        sha256_free(c);
        free(buf);
        return r;
}

int sha256_buf(const void *p, size_t len, char ret_hex[SHA256_HEX_LEN + 1])
{
        struct sha256_ctx *c = sha256_new();
        int r = c ? sha256_update(c, p, len) : -ENOMEM;

        if (r == 0)
                r = sha256_final(c, ret_hex);
        sha256_free(c);
        return r;
}
