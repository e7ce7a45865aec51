/*
 * sigmask: fmud-worker's own pthread_sigmask() and sigprocmask(), which
 * never block SIGSYS while the sandbox traps refused system calls
 * (worker/sandbox_seccomp.c).
 *
 * DESIGN: a seccomp trap raises SIGSYS in the thread that made the call.
 * If that thread blocks SIGSYS, the kernel cannot deliver it to our
 * handler: it resets SIGSYS to its default action and the whole worker
 * dies, where the call should only have failed with EPERM. Libraries
 * block every signal in their own threads (libzmq's I/O threads do), so
 * the executable exports these two functions (worker.dynlist): the FMU
 * and the libraries it loads bind to them before glibc's, and they pass
 * every request on to the next definition (glibc's, or a sanitizer's)
 * with SIGSYS taken out of what is to be blocked. A thread that blocks
 * SIGSYS with a raw rt_sigprocmask system call still gets killed on a
 * refused call: that is the FMU's own doing, and the daemon reports the
 * worker killed by SIGSYS.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdatomic.h>

#include "worker/sandbox.h"

typedef int mask_fn(int how, const sigset_t *set, sigset_t *old);

static int pass(const char *name, _Atomic(mask_fn *) *next, int how, const sigset_t *set,
                sigset_t *old)
{
        mask_fn *fn = atomic_load_explicit(next, memory_order_acquire);
        sigset_t copy;

        if (!fn) {
                fn = (mask_fn *)dlsym(RTLD_NEXT, name);
                if (!fn)
                        return -1;
                atomic_store_explicit(next, fn, memory_order_release);
        }
        if (set && how != SIG_UNBLOCK && sandbox_traps() && sigismember(set, SIGSYS) == 1) {
                copy = *set;
                (void) sigdelset(&copy, SIGSYS);
                set = &copy;
        }
        return fn(how, set, old);
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
        static _Atomic(mask_fn *) next;

        return pass("pthread_sigmask", &next, how, set, old);
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
        static _Atomic(mask_fn *) next;

        return pass("sigprocmask", &next, how, set, old);
}
