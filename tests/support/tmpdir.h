/* Test helpers: temporary directories removed with everything in them. */
#ifndef FMUD_TESTS_TMPDIR_H
#define FMUD_TESTS_TMPDIR_H

#include <stddef.h>

/* mkdtemp under $TMPDIR (or /tmp); returns a malloc'ed path or NULL. */
char *tmpdir_new(const char *prefix);
/* Remove the tree (making read-only parts writable first) and free path. */
void tmpdir_free(char *path);
/* Write len bytes to dir/name, creating parent directories. Returns 0 or -errno. */
int tmpdir_write(const char *dir, const char *name, const void *data, size_t len);

#endif
