/*
 * Test helper: act as another local user. A child drops its supplementary
 * groups and becomes uid and gid 65534 (nobody), then does what the test
 * asks and reports through a pipe; the parent reads the report and reaps
 * the child. Only a root test process can become another user.
 *
 * DESIGN: the child exits without returning into the test (no Criterion
 * assertion runs there): what it learned travels through the pipe, how it
 * ended through its exit status.
 */
#ifndef FMUD_TESTS_AS_OTHER_H
#define FMUD_TESTS_AS_OTHER_H

#include <stddef.h>
#include <sys/types.h>

#define AS_OTHER_UID    65534   /* nobody */
#define AS_OTHER_GID    65534
#define AS_OTHER_NOT_BECOME     2       /* the child's exit status when it could not become them */

/* Runs in the child as the other user: write the report to fd; return the exit status. */
typedef int as_other_fn(void *ctx, int fd);

/*
 * Fork a child that becomes AS_OTHER_UID/AS_OTHER_GID and exits with
 * fn(ctx, fd), fd the write end of a pipe (AS_OTHER_NOT_BECOME when it
 * could not become them). Everything the child wrote, up to size bytes,
 * lands in buf; the child is reaped. Returns the number of bytes read and
 * *ret_status the child's exit status (-1 when it did not exit but was
 * killed), or -errno when no child could be run.
 */
ssize_t as_other(as_other_fn *fn, void *ctx, void *buf, size_t size, int *ret_status);

#endif
