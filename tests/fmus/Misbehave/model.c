/*
 * Misbehave: an FMI 3.0 Co-Simulation FMU that fails on purpose, in every
 * way an FMU can hurt its importer, for the fault isolation tests.
 *
 *   x' = u              integrated exactly over each step (u held)
 *   steps               completed steps
 *   fault               what a step starting at t >= at does:
 *                        0 nothing special
 *                        1 SIGSEGV (a write through a null pointer)
 *                        2 abort()
 *                        3 SIGFPE (integer division by zero)
 *                        4 SIGBUS (touching a mapping of a truncated memfd)
 *                        5 SIGILL (__builtin_trap)
 *                        6 exit(3)
 *                        7 _exit(4)
 *                        8 an endless loop
 *                        9 a deadlock (a default mutex locked twice)
 *                       10 malloc+memset 16 MiB chunks until malloc fails,
 *                          keep them, log "allocation failed", fmi3Error
 *                          (refused without an address-space limit)
 *                       11 fmi3Error after two log messages
 *                       12 fmi3Fatal
 *                       13 fmi3Discard (lastSuccessfulTime = t)
 *                       14 `count` Warning log messages, then a normal step
 *                       15 garbage over the worker's channel: the reply
 *                          ring's indices and slots, again and again
 *                       16 (whatever at is) the initial equations fail:
 *                          fmi3Error in Initialization Mode after two log
 *                          messages
 *                       17 x becomes NaN (a normal step otherwise)
 *                       18 a Warning log message full of control
 *                          characters (an escape sequence, a bell, a
 *                          line break that would forge a log line),
 *                          then a normal step
 *                       19 a slow step: sleeps `count` milliseconds, then
 *                          a normal step
 *                       20 a line printed to stdout, as printf in an
 *                          export does, then a normal step
 *                       21 three (or `count`) Warning messages logged from a
 *                          thread of the FMU's own (joined within the
 *                          step), as a solver thread does, then a normal
 *                          step
 *                       22 (whatever at is) slow initial equations, as a
 *                          large model's: the first computation in
 *                          Initialization Mode (fmi3ExitInitializationMode)
 *                          sleeps `count` milliseconds
 *                       23 (whatever at is) a licence check, as commercial
 *                          exports make: the initial equations fail unless
 *                          the environment has FMUD_MISBEHAVE_ENV, and x
 *                          starts at its value
 *                       24 a Warning log message in UTF-8 beyond ASCII
 *                          (two, three and four byte sequences), then a
 *                          normal step
 *                       25 fmi3Error, its reason logged from a thread of
 *                          the FMU's own (joined within the step)
 *                       26 a Warning log message that says so, then a
 *                          deadlock (as 9): a step that hangs where its
 *                          importer can see it hang
 *                      27 a terminal assertion, as a Modelica model's:
 *                          the step at 'at' logs a Warning that it is
 *                          armed; fmi3Terminate logs an Error naming x
 *                          and returns fmi3Error
 *                      28 (whatever at is) a slow fmi3Terminate: logs a
 *                          Warning that says so, then sleeps `count`
 *                          milliseconds, as an FMU flushing its logs or
 *                          returning a licence does
 *                      29 output as a hand-written export prints it: each
 *                          step a line to stdout and one to stderr, the
 *                          first step also a line of 3000 characters;
 *                          fmi3Terminate prints a last line without its
 *                          newline, and does not flush stdout
 *                      30 NUL bytes in what it prints: at 'at' "before",
 *                          a NUL, "after" and a newline, then 4096 NULs
 *                          and "tail"; each step (as 29) "misbehave: out
 *                          at t = T" on stdout
 *                      31 its own file on stdout, as freopen makes it: at
 *                          'at' 600 kB of lines, then stdout reopened on
 *                          own.txt (its working directory) with "HEADER";
 *                          later steps add lines; fmi3Terminate fails
 *                          (Error) unless own.txt still starts "HEADER"
 *                      32 chatter, then a Warning: 70 lines on stdout a
 *                          step, and at 'at' a Warning "misbehave: the
 *                          warning that matters at t = T"
 *                      33 a line on stdout, then SIGSEGV (as 1)
 *   The instance name "misbehave-crash-at-instantiation": SIGSEGV while
 *   instantiating, before any doStep.
 *   at                  the time from which doStep misbehaves
 *   count               messages of faults 14 and 21, milliseconds of faults
 *                       19, 22 and 28
 *
 * fmi3DoStep is this file's own (FMUD_OMIT_DO_STEP leaves the shared one
 * out), so a step can return Discard and Fatal.
 *
 * Value references: time 0, u 1, x 2, steps 3, fault 4, at 5, count 6.
 */
#define _GNU_SOURCE     /* syscall, ftruncate, nanosleep under -std=c11 */

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fmi3Functions.h"

#include "common.h"

#define CHUNK           (16u << 20)
#define CHANNEL_FD      3

struct model_data {
        double u;
        double x;
        int32_t steps;
        int32_t fault;
        double at;
        int32_t count;
        bool slept;             /* fault 22 has slept */
};

static const struct var vars[] = {
        VAR_TIME(0),
        VAR_SCALAR(1, "u", VAR_FLOAT64, VAR_INPUT, VAR_CONTINUOUS, VAR_EXACT, u),
        VAR_SCALAR(2, "x", VAR_FLOAT64, VAR_OUTPUT, VAR_CONTINUOUS, VAR_CALCULATED, x),
        VAR_SCALAR(3, "steps", VAR_INT32, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, steps),
        VAR_SCALAR(4, "fault", VAR_INT32, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, fault),
        VAR_SCALAR(5, "at", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, at),
        VAR_SCALAR(6, "count", VAR_INT32, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, count),
};

static void crash(int fault);

static void start(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        if (!strcmp(inst_name(inst), "misbehave-crash-at-instantiation"))
                crash(1);

        d->u = 0.0;
        d->fault = 0;
        d->at = 1e300;
        d->count = 0;
}

static int calculate(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        if (inst_initializing(inst)) {
                if (d->fault == 16) {
                        inst_log(inst, FMU_WARNING, "misbehave: the initial state is doubtful");
                        inst_log(inst, FMU_ERROR, "misbehave: the initial equations failed");
                        return -EDOM;
                }
                if (d->fault == 22 && !d->slept) {
                        struct timespec ms = { d->count / 1000, (long)(d->count % 1000) * 1000000 };

                        nanosleep(&ms, NULL);
                        d->slept = true;
                }
                d->x = 0.0;
                d->steps = 0;
                if (d->fault == 23) {
                        const char *v = getenv("FMUD_MISBEHAVE_ENV");

                        if (!v) {
                                inst_log(inst, FMU_ERROR, "misbehave: no licence: the "
                                         "environment variable FMUD_MISBEHAVE_ENV is not set");
                                return -EACCES;
                        }
                        d->x = atof(v);
                }
        }
        return 0;
}

static int do_step(struct inst *inst, struct step *step)
{
        struct model_data *d = inst_data(inst);

        d->x += d->u * step->h;
        d->steps++;
        return 0;
}

/*
 * Hides a value from the optimizer: after it, the compiler knows nothing of
 * p, so a store through it or a division by it is neither dropped nor
 * folded into something else at any optimization level.
 */
#define OPAQUE(p)       __asm__ volatile("" : "+r"(p))

/* Out of sight of the sanitizers: the point is the signal itself. */
__attribute__((no_sanitize("undefined"), no_sanitize("address"), noinline))
static void crash(int fault)
{
        volatile int *null = NULL;
        int zero = 0;
        volatile int one = 1;

        switch (fault) {
        case 1:
                OPAQUE(null);
                *null = 1;      /* a volatile store through an unknown pointer: done */
                break;
        case 2:
                abort();
        case 3:
                OPAQUE(zero);
                one = one / zero;
                break;
        case 5:
                __builtin_trap();
        default:
                break;
        }
}

static void bus_error(void)
{
        int fd = (int)syscall(SYS_memfd_create, "misbehave", 0);
        volatile char *p;

        if (fd >= 0 && ftruncate(fd, 4096) == 0) {
                p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                if (p != MAP_FAILED && ftruncate(fd, 0) == 0)
                        p[0] = 1;       /* the page is past the end of the file now */
        }
        raise(SIGBUS);
}

static void forever(void)
{
        volatile uint64_t n = 0;

        for (;;)
                n++;
}

static void deadlock(void)
{
        static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

        pthread_mutex_lock(&m);
        pthread_mutex_lock(&m);         /* a default mutex: never returns */
}

/* What fault 10 allocated; never freed. */
static void *volatile leaked;

/* fault 10; 0 or -ENOMEM (logged) */
static int grow(struct inst *inst)
{
        struct rlimit rl;
        void **list = NULL, **chunk;
        size_t n = 0;

        if (getrlimit(RLIMIT_AS, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY) {
                inst_log(inst, FMU_ERROR, "misbehave: no address-space limit, not growing");
                return -EPERM;
        }
        while ((chunk = malloc(CHUNK)) != NULL) {
                memset(chunk, 0xa5, CHUNK);
                chunk[0] = list;
                list = chunk;
                n++;
        }
        /* Kept, as a leaking FMU keeps them: the instance is done for anyway. */
        leaked = list;
        inst_log(inst, FMU_ERROR, "allocation failed after %zu MiB", n * (CHUNK >> 20));
        return -ENOMEM;
}

/* fault 15: the channel is descriptor 3; its header says where the reply ring is. */
static void scribble(struct inst *inst)
{
        volatile uint64_t *tail, *head;
        struct stat st;
        unsigned char *base;
        uint64_t rep_off, rep_size;

        if (fstat(CHANNEL_FD, &st) < 0 || st.st_size < 4096) {
                inst_log(inst, FMU_ERROR, "misbehave: no channel on descriptor %d", CHANNEL_FD);
                return;
        }
        base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, CHANNEL_FD, 0);
        if (base == MAP_FAILED) {
                inst_log(inst, FMU_ERROR, "misbehave: cannot map the channel");
                return;
        }
        /* struct chan_hdr: magic, version, total_size, req_off, req_size, rep_off, rep_size */
        memcpy(&rep_off, base + 32, 8);
        memcpy(&rep_size, base + 40, 8);
        if (rep_off > (uint64_t)st.st_size || rep_size < 4096 || rep_size > (uint64_t)st.st_size - rep_off)
                return;
        /* struct ring_hdr: tail at 64, head at 128, slots after its 320 bytes. */
        tail = (volatile uint64_t *)(base + rep_off + 64);
        head = (volatile uint64_t *)(base + rep_off + 128);
        for (;;) {
                struct timespec ms = { 0, 1000000 };

                memset(base + rep_off + 320, 0x5a, 4096 - 320);
                *tail = 0xdeadbeefdeadbeefull;
                *head = 0x0123456789abcdefull;
                nanosleep(&ms, NULL);
        }
}

/* What a step at t does under fault; returns its status when it returns at all. */
/* Fault 21: the FMU's own thread logs, as a solver thread of an export does. */
/* What a thread of the FMU logs: n Warnings, or the reason of an Error. */
struct thread_log {
        struct inst *inst;
        int n;
        bool error;
};

static void *log_from_thread(void *arg)
{
        const struct thread_log *tl = arg;

        if (tl->error)
                inst_log(tl->inst, FMU_ERROR, "misbehave: the solver thread diverged");
        for (int i = 0; !tl->error && i < tl->n; i++)
                inst_log(tl->inst, FMU_WARNING, "misbehave: message %d from a thread of the FMU",
                         i);
        return NULL;
}

/* Run log_from_thread() on a thread of the FMU's own, joined before the step returns. */
static void thread_logs(struct inst *inst, int n, bool error)
{
        struct thread_log tl = { inst, n, error };
        pthread_t th;

        if (pthread_create(&th, NULL, log_from_thread, &tl) == 0)
                pthread_join(th, NULL);
}

static fmi3Status misbehave(struct inst *inst, struct model_data *d, double t,
                            fmi3Float64 *last)
{
        switch (d->fault) {
        case 1: case 2: case 3: case 5:
                crash(d->fault);
                break;
        case 4:
                bus_error();
                break;
        case 6:
                exit(3);
        case 7:
                _exit(4);
        case 8:
                forever();
                break;
        case 9:
                deadlock();
                break;
        case 26:
                inst_log(inst, FMU_WARNING, "misbehave: hanging in the step at t = %g", t);
                deadlock();
                break;
        case 10:
                (void) grow(inst);
                inst_fail(inst);
                return fmi3Error;
        case 11:
                inst_log(inst, FMU_WARNING, "misbehave: the first of two messages at t = %g", t);
                inst_log(inst, FMU_ERROR, "misbehave: the second of two messages at t = %g", t);
                inst_fail(inst);
                return fmi3Error;
        case 12:
                inst_log(inst, FMU_FATAL, "misbehave: fatal at t = %g", t);
                return fmi3Fatal;
        case 13:
                inst_log(inst, FMU_DISCARD, "misbehave: step discarded at t = %g", t);
                *last = t;
                return fmi3Discard;
        case 14:
                for (int32_t i = 0; i < d->count; i++)
                        inst_log(inst, FMU_WARNING, "misbehave: flood message %d", (int)i);
                return fmi3OK;
        case 15:
                scribble(inst);
                break;
        case 19: {
                struct timespec ms = { d->count / 1000, (long)(d->count % 1000) * 1000000 };

                nanosleep(&ms, NULL);
                return fmi3OK;
        }
        case 21:
                thread_logs(inst, d->count > 0 ? d->count : 3, false);
                return fmi3OK;
        case 25:
                thread_logs(inst, 0, true);
                return fmi3Error;
        case 27:
                /* Once, at 'at': the run can be seen under way. */
                if (t - d->at < 1e-9)
                        inst_log(inst, FMU_WARNING, "misbehave: the terminal assertion is armed");
                return fmi3OK;
        case 24:
                inst_log(inst, FMU_WARNING, "misbehave: Gr\xc3\xbc\xc3\x9f\xc3\xa4 "
                         "\xe2\x84\x83 \xf0\x9f\x8c\xa1 end");
                return fmi3OK;
        case 20:
                printf("misbehave: printed to stdout at t = %g\n", t);
                fflush(stdout);
                return fmi3OK;
        case 30:
                if (t - d->at < 1e-9) {
                        static const char zeros[4096];

                        fputs("before", stdout);
                        putchar('\0');
                        fputs("after\n", stdout);
                        fwrite(zeros, 1, sizeof(zeros), stdout);
                        fputs("tail\n", stdout);
                }
                printf("misbehave: out at t = %g\n", t);
                fflush(stdout);
                return fmi3OK;
        case 31:
                if (t - d->at < 1e-9) {
                        for (int i = 0; i < 600; i++)
                                printf("%0999d\n", i);
                        fflush(stdout);
                        if (!freopen("own.txt", "w", stdout))
                                return fmi3Error;
                        printf("HEADER\n");
                } else {
                        printf("more at t = %g\n", t);
                }
                fflush(stdout);
                return fmi3OK;
        case 32:
                for (int i = 0; i < 70; i++)
                        printf("misbehave: chatter %d at t = %g\n", i, t);
                fflush(stdout);
                if (t - d->at < 1e-9)
                        inst_log(inst, FMU_WARNING, "misbehave: the warning that matters at t = %g",
                                 t);
                return fmi3OK;
        case 33:
                printf("misbehave: the last line before the crash at t = %g\n", t);
                fflush(stdout);
                crash(1);
                break;
        case 29:
                if (t - d->at < 1e-9) {
                        for (int i = 0; i < 3000; i++)
                                putchar('a' + i % 26);
                        putchar('\n');
                }
                printf("misbehave: out at t = %g\n", t);
                fprintf(stderr, "misbehave: err at t = %g\n", t);
                return fmi3OK;
        case 18:
                inst_log(inst, FMU_WARNING, "misbehave: \033[31mred\033[0m\a\nfmud: forged "
                         "line\r\x7f\xc2\x9b" "2J end");
                return fmi3OK;
        default:
                break;
        }
        return fmi3OK;
}

fmi3Status fmi3DoStep(fmi3Instance instance, fmi3Float64 currentCommunicationPoint,
                      fmi3Float64 communicationStepSize,
                      fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                      fmi3Boolean *eventHandlingNeeded, fmi3Boolean *terminateSimulation,
                      fmi3Boolean *earlyReturn, fmi3Float64 *lastSuccessfulTime)
{
        struct inst *inst = instance;
        double t = currentCommunicationPoint, h = communicationStepSize;
        struct model_data *d;
        struct step s;
        fmi3Status st = fmi3OK;

        (void) noSetFMUStatePriorToCurrentPoint;
        if (!inst || !eventHandlingNeeded || !terminateSimulation || !earlyReturn ||
            !lastSuccessfulTime)
                return fmi3Error;
        if (!inst_check_state(inst, "fmi3DoStep", STATE_BIT(ST_STEP)) || !(h > 0.0)) {
                inst_fail(inst);
                return fmi3Error;
        }
        d = inst->data;
        *eventHandlingNeeded = fmi3False;
        *terminateSimulation = fmi3False;
        *earlyReturn = fmi3False;
        *lastSuccessfulTime = t + h;
        if (d->fault && t >= d->at) {
                st = misbehave(inst, d, t, lastSuccessfulTime);
                if (st != fmi3OK)
                        return st;
        }
        s = (struct step){ .t = t, .h = h, .t_end = t + h };
        (void) do_step(inst, &s);
        if (d->fault == 17 && t >= d->at)
                d->x = NAN;
        inst->sim.time = t + h;
        if (inst_calculate(inst) < 0) {
                inst_fail(inst);
                return fmi3Error;
        }
        return fmi3OK;
}

static int terminate(struct inst *inst)
{
        struct model_data *d = inst->data;

        if (d->fault == 28) {
                struct timespec ms = { d->count / 1000, (long)(d->count % 1000) * 1000000 };

                inst_log(inst, FMU_WARNING, "misbehave: terminating slowly");
                nanosleep(&ms, NULL);
        }
        if (d->fault == 29)
                printf("misbehave: the last words, without a newline (nor a flush)");
        if (d->fault == 31) {
                char head[8] = "";
                FILE *f = fopen("own.txt", "r");

                if (!f || !fgets(head, sizeof(head), f) || strcmp(head, "HEADER\n")) {
                        inst_log(inst, FMU_ERROR, "misbehave: own.txt no longer starts with "
                                 "HEADER ('%s')", head);
                        if (f)
                                fclose(f);
                        return -1;
                }
                fclose(f);
        }
        if (d->fault != 27)
                return 0;
        inst_log(inst, FMU_ERROR, "terminal assertion failed: x = %g at the end", d->x);
        return -1;
}

const struct model model = {
        .token = "{0b7e3f9a-6c21-4d58-a3e4-91f2c7d05b6e}",
        .data_size = sizeof(struct model_data),
        .vars = vars,
        .n_vars = sizeof(vars) / sizeof(vars[0]),
        .caps = MODEL_CAN_GET_SET_STATE | MODEL_CAN_SERIALIZE_STATE,
        .start = start,
        .calculate = calculate,
        .do_step = do_step,
        .terminate = terminate,
};
