/*
 * archive_twin: whether two entries of one name hold the same bytes, so
 * that a duplicate can be accepted (archive_check.c) without trusting the
 * CRC the archive declares.
 *
 * DESIGN: both entries are decompressed through ar_stream(), which stops at
 * the declared size and checks the CRC, into a SHA-256 each; memory stays
 * one chunk whatever the size. Only pairs that already agree on size and
 * CRC get this far.
 */
#include "archive_int.h"

#include <errno.h>
#include <string.h>

#include <openssl/evp.h>

static int digest_sink(void *ctx, const void *buf, size_t len)
{
        return EVP_DigestUpdate(ctx, buf, len) == 1 ? 0 : -ENOMEM;
}

/* SHA-256 of e's data into md (32 bytes). Returns 0, -EBADMSG (unreadable), -ENOMEM. */
static int digest(const struct fmu_archive *ar, const struct ar_entry *e, unsigned char *md)
{
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        unsigned int n = 0;
        int r;

        if (!ctx)
                return -ENOMEM;
        r = EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 ? 0 : -ENOMEM;
        if (r == 0)
                r = ar_stream(ar, e, digest_sink, ctx, NULL);
        if (r == 0 && (EVP_DigestFinal_ex(ctx, md, &n) != 1 || n != 32))
                r = -ENOMEM;
        EVP_MD_CTX_free(ctx);
        return r;
}

int ar_same_data(const struct fmu_archive *ar, const struct ar_entry *a, const struct ar_entry *b)
{
        unsigned char ma[EVP_MAX_MD_SIZE], mb[EVP_MAX_MD_SIZE];
        int r;

        if (a->kind != AR_FILE || b->kind != AR_FILE || a->size != b->size || a->crc != b->crc)
                return 0;
        r = digest(ar, a, ma);
        if (r == 0)
                r = digest(ar, b, mb);
        if (r == -ENOMEM)
                return r;
        return r == 0 && memcmp(ma, mb, 32) == 0;
}
