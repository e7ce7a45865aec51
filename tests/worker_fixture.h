/*
 * Test helpers: a struct worker in the test's own process, for tests of
 * the worker's modules without a worker process: a test FMU's description
 * and library loaded, and a real channel whose daemon end the test holds.
 */
#ifndef FMUD_TESTS_WORKER_FIXTURE_H
#define FMUD_TESTS_WORKER_FIXTURE_H

#include "worker/worker.h"

/* Zero *w, then load FMUD_TEST_FMU_DIR/<fmu>'s description and library into it. */
void wfix_load(struct worker *w, const char *fmu);
void wfix_unload(struct worker *w);

/*
 * Attach w to a new channel (64 slots of 64 bytes each way) with the
 * buffers dispatch() needs; *ret_daemon is the other end.
 */
void wfix_channel(struct worker *w, struct chan **ret_daemon);
void wfix_channel_close(struct worker *w, struct chan *daemon_end);
/*
 * At the daemon's end: exactly one reply, to request seq, refused with
 * error e and a message containing text.
 */
void wfix_expect_one_refusal(struct chan *daemon_end, uint64_t seq, enum call_error e,
                             const char *text);

#endif
