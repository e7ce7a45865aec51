/* fmud_keygen() and fmud_key_read(): CURVE key files for fmuctl keygen, --key, --server-key. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "client/fmud.h"
#include "support/tmpdir.h"

static char *dir;

static void setup(void)
{
        dir = tmpdir_new("client_key");
        cr_assert(dir != NULL);
}

static void teardown(void)
{
        tmpdir_free(dir);
}

static char *path(const char *name)
{
        char *p;

        cr_assert(asprintf(&p, "%s/%s", dir, name) > 0);
        return p;
}

static void read_file(const char *p, char *buf, size_t len)
{
        FILE *f = fopen(p, "r");
        size_t n;

        cr_assert(f != NULL, "%s: %s", p, strerror(errno));
        n = fread(buf, 1, len - 1, f);
        buf[n] = '\0';
        fclose(f);
}

Test(client_key, keygen_writes_a_matching_pair, .init = setup, .fini = teardown)
{
        char *name = path("node"), *key = path("node.key"), *pub = path("node.pub");
        char sec[64], pubtxt[64], derived[41], err[256] = "";
        struct stat st;

        cr_assert(fmud_keygen(name, err, sizeof(err)) == 0, "%s", err);
        cr_assert(stat(key, &st) == 0);
        cr_assert((st.st_mode & 0777) == 0600, "mode %o", st.st_mode & 0777);
        cr_assert(stat(pub, &st) == 0);
        cr_assert((st.st_mode & 0077 & ~0044) == 0, "public key mode %o", st.st_mode & 0777);
        read_file(key, sec, sizeof(sec));
        read_file(pub, pubtxt, sizeof(pubtxt));
        cr_assert(strlen(sec) == 41 && sec[40] == '\n', "'%s'", sec);
        cr_assert(strlen(pubtxt) == 41 && pubtxt[40] == '\n', "'%s'", pubtxt);
        sec[40] = '\0';
        pubtxt[40] = '\0';
        cr_assert(zmq_curve_public(derived, sec) == 0);
        cr_assert(strcmp(derived, pubtxt) == 0, "the public key is not the secret key's");
        free(name);
        free(key);
        free(pub);
}

Test(client_key, keygen_never_overwrites, .init = setup, .fini = teardown)
{
        char *name = path("n"), *key = path("n.key"), *pub = path("n.pub");
        char before[64], after[64], err[256] = "";

        cr_assert(fmud_keygen(name, err, sizeof(err)) == 0, "%s", err);
        read_file(key, before, sizeof(before));
        cr_assert(fmud_keygen(name, err, sizeof(err)) == -EEXIST);
        cr_assert(strstr(err, "exists") != NULL, "'%s'", err);
        read_file(key, after, sizeof(after));
        cr_assert(strcmp(before, after) == 0, "the secret key changed");

        /* Only the public half there: refused, and no secret left behind. */
        cr_assert(unlink(key) == 0);
        cr_assert(fmud_keygen(name, err, sizeof(err)) == -EEXIST);
        cr_assert(access(key, F_OK) < 0 && errno == ENOENT, "a stray secret key was written");

        /* Only the secret half there: refused, the secret untouched. */
        cr_assert(unlink(pub) == 0);
        cr_assert(tmpdir_write(dir, "n.key", "keep\n", 5) == 0);
        cr_assert(fmud_keygen(name, err, sizeof(err)) == -EEXIST);
        read_file(key, after, sizeof(after));
        cr_assert(strcmp(after, "keep\n") == 0);
        cr_assert(access(pub, F_OK) < 0 && errno == ENOENT);
        free(name);
        free(key);
        free(pub);
}

Test(client_key, keygen_in_a_missing_directory_fails_cleanly, .init = setup, .fini = teardown)
{
        char *name = path("nodir/x"), err[256] = "";

        cr_assert(fmud_keygen(name, err, sizeof(err)) == -ENOENT);
        cr_assert(strstr(err, "cannot create") != NULL, "'%s'", err);
        free(name);
}

Test(client_key, key_read_takes_one_z85_key_with_blanks_around, .init = setup, .fini = teardown)
{
        char pub[41], sec[41], got[41], *p = path("k"), text[128], err[256];

        cr_assert(zmq_curve_keypair(pub, sec) == 0);
        snprintf(text, sizeof(text), "  %s \n\n", pub);
        cr_assert(tmpdir_write(dir, "k", text, strlen(text)) == 0);
        cr_assert(fmud_key_read(p, got, err, sizeof(err)) == 0, "%s", err);
        cr_assert(strcmp(got, pub) == 0);
        free(p);
}

Test(client_key, key_read_refuses_what_is_not_one_key, .init = setup, .fini = teardown)
{
        static const char *const bad[] = {
                "",
                "abc\n",
                "0123456789012345678901234567890123456789X\n",   /* 41 characters */
                "012345678901234567890123456789012345678\n",     /* 39 */
                "0123456789012345678901234567890123456~~~\n",    /* not Z85 */
                "01234567890123456789 0123456789012345678\n",    /* two words */
        };
        char got[41] = "untouched", err[256], *p = path("bad"), *missing = path("missing");

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                (void)unlink(p);
                cr_assert(tmpdir_write(dir, "bad", bad[i], strlen(bad[i])) == 0);
                cr_assert(fmud_key_read(p, got, err, sizeof(err)) == -EINVAL, "'%s' was taken", bad[i]);
                cr_assert(strstr(err, "Z85") != NULL, "'%s'", err);
        }
        /* 40 characters whose first 35 (a whole number of Z85 groups) end at a NUL. */
        (void)unlink(p);
        cr_assert(tmpdir_write(dir, "bad", "01234567890123456789012345678901234\0" "5678\n", 41) == 0);
        cr_assert(fmud_key_read(p, got, err, sizeof(err)) == -EINVAL, "a key with a NUL was taken");
        cr_assert(strstr(err, "Z85") != NULL, "'%s'", err);
        cr_assert(fmud_key_read(missing, got, err, sizeof(err)) == -ENOENT);
        cr_assert(strcmp(got, "untouched") == 0, "written on failure");
        free(p);
        free(missing);
}
