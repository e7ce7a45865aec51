/*
 * cancel: how a long import (an archive checked and unpacked, a large
 * XML document parsed, a scenario's FMUs opened one by one) learns that
 * its caller no longer wants it: a callback it polls between bounded
 * pieces of work, returning -ECANCELED when it answers true.
 *
 * DESIGN: a callback rather than a flag, so that the daemon can poll an
 * atomic its shutdown sets and a test can cancel at an exact poll. The
 * callback must be cheap and thread-safe: it is called from the loading
 * thread, often (every element of a document).
 */
#ifndef FMUD_FMI_CANCEL_H
#define FMUD_FMI_CANCEL_H

#include <stdbool.h>
#include <stddef.h>

struct fmi_cancel {
        bool (*fn)(void *ctx);          /* true: stop; NULL: never cancelled */
        void *ctx;
};

static inline bool fmi_cancelled(const struct fmi_cancel *c)
{
        return c && c->fn && c->fn(c->ctx);
}

#endif
