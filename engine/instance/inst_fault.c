/*
 * inst_fault: what the daemon says when a worker fails: how it died
 * (signal by name, exit status, the call it was in), what it said last
 * (worker/crash.h), which deadline it missed; killing a faulted worker,
 * and one that is stopped or whose session is abandoned; the FMU's last
 * log messages; the supervisor's view of an idle worker.
 *
 * DESIGN: the wait status is the truth about a death. The worker's last
 * words are untrusted detail: parsed strictly, and used only when they
 * name the signal the wait status shows. A worker that missed its
 * deadline or broke the protocol is never trusted again: it is killed at
 * once (its whole process group when it leads one, so whatever the FMU
 * started goes too), which also gives back the CPU an endless loop holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/instance/inst_int.h"
#include "engine/instance/supervisor.h"
#include "worker/crash.h"      /* CRASH_CATEGORY only: the worker library is not linked */

static const char *fmi2_type(enum md_type t)
{
        switch (t) {
        case MD_FLOAT64: return "Real";
        case MD_INT32: return "Integer";
        case MD_BOOLEAN: return "Boolean";
        case MD_STRING: return "String";
        default: return md_type_name(t);
        }
}

const char *fault_call_name(const struct inst *inst, char *buf, size_t size)
{
        enum call_op op = inst->cur_op;
        const char *v = inst->fmi == 2 ? "fmi2" : "fmi3";

        if (!inst->fmi)
                snprintf(buf, size, "its start-up");
        else if (op == CALL_OP_GET || op == CALL_OP_SET)
                snprintf(buf, size, "%s%s%s", v, op == CALL_OP_GET ? "Get" : "Set",
                         inst->fmi == 2 ? fmi2_type(inst->cur_type) : md_type_name(inst->cur_type));
        else if (op > CALL_OP_NONE && call_fmi_function(op, inst->fmi))
                snprintf(buf, size, "%s%s", v, call_fmi_function(op, inst->fmi));
        else
                snprintf(buf, size, "no call");
        return buf;
}

/* As the worker writes limits (worker/crash.c): "256 MiB". */
static void format_limit(uint64_t bytes, char *buf, size_t size)
{
        if (bytes && bytes % (1ull << 30) == 0)
                snprintf(buf, size, "%" PRIu64 " GiB", bytes >> 30);
        else if (bytes && bytes % (1ull << 20) == 0)
                snprintf(buf, size, "%" PRIu64 " MiB", bytes >> 20);
        else
                snprintf(buf, size, "%" PRIu64 " bytes", bytes);
}

/* "SIGSEGV (segmentation fault, signal 11)" */
static void signal_text(int sig, char *buf, size_t size)
{
        const char *abbrev = sigabbrev_np(sig), *descr = sigdescr_np(sig);
        char low[64];
        size_t i;

        for (i = 0; descr && descr[i] && i < sizeof(low) - 1; i++)
                low[i] = (char)(descr[i] >= 'A' && descr[i] <= 'Z' ? descr[i] - 'A' + 'a' : descr[i]);
        low[i] = '\0';
        if (abbrev)
                snprintf(buf, size, "SIG%s (%s, signal %d)", abbrev, i ? low : "unknown", sig);
        else
                snprintf(buf, size, "signal %d", sig);
}

int fault_died(struct inst *inst)
{
        char call[64], sig[96], detail[160] = "", limit[32];
        const struct inst_last_words *lw = &inst->words;
        bool in_call = inst->cur_op != CALL_OP_NONE && inst->cur_op != CALL_OP_FREE;
        int st = inst->wstatus, n = 0;

        fault_call_name(inst, call, sizeof(call));
        if (WIFSIGNALED(st)) {
                signal_text(WTERMSIG(st), sig, sizeof(sig));
                if (lw->valid && lw->sig == WTERMSIG(st)) {
                        if (lw->sig == SIGSEGV || lw->sig == SIGBUS)
                                n = snprintf(detail, sizeof(detail), "; faulting address 0x%" PRIx64,
                                             lw->addr);
                        if (lw->near_limit && n >= 0 && (size_t)n < sizeof(detail)) {
                                format_limit(lw->limit, limit, sizeof(limit));
                                snprintf(detail + n, sizeof(detail) - (size_t)n,
                                         "; out of memory (address-space limit %s reached)", limit);
                        }
                }
                if (in_call)
                        return inst_fault_set(inst, -ESRCH, "worker %d was killed by %s during %s%s",
                                              (int)inst->pid, sig, call, detail);
                return inst_fault_set(inst, -ESRCH, "worker %d was killed by %s between calls%s",
                                      (int)inst->pid, sig, detail);
        }
        if (WIFEXITED(st) && in_call)
                return inst_fault_set(inst, -ESRCH, "worker %d: the FMU exited the worker with "
                                      "status %d during %s", (int)inst->pid, WEXITSTATUS(st), call);
        if (WIFEXITED(st))
                return inst_fault_set(inst, -ESRCH, "worker %d exited with status %d between calls",
                                      (int)inst->pid, WEXITSTATUS(st));
        return inst_fault_set(inst, -ESRCH, "worker %d ended with wait status %#x", (int)inst->pid,
                              (unsigned)st);
}

int fault_timeout(struct inst *inst)
{
        char call[64];

        fault_call_name(inst, call, sizeof(call));
        return inst_fault_set(inst, -ETIMEDOUT, "worker %d did not answer %s within %g s; killed",
                              (int)inst->pid, call, (double)inst->cur_timeout_ns / 1e9);
}

void fault_kill(struct inst *inst)
{
        if (inst->reaped || inst->pid <= 0)
                return;
        /* Unreaped, the pid cannot have been reused: the group is still the worker's. */
        if (getpgid(inst->pid) == inst->pid)
                (void) kill(-inst->pid, SIGKILL);
        spawn_reap(inst, 0);
}

int fault_check_idle(struct inst *inst)
{
        if (inst->reaped || !supervisor_exited(inst->watch, NULL))
                return 0;
        if (!spawn_poll(inst))
                return 0;       /* not reapable yet: the call finds out */
        return fault_died(inst);
}

/*
 * The worker's crash handler writes its last words in exactly one form
 * (worker/crash.c): "signal 11 code 1 address 0x0 limit 268435456 near 1".
 * They come from a process that may be corrupt, so each piece is taken
 * strictly: the literal text, then digits only (no sign, space or '+'
 * where the writer puts none), each number bounded while it is read.
 */
static bool take_lit(const char **p, const char *lit)
{
        size_t n = strlen(lit);

        if (strncmp(*p, lit, n))
                return false;
        *p += n;
        return true;
}

/* 1 to 'max_digits' digits in 'base' (10 or 16), at most 'max'. */
static bool take_num(const char **p, unsigned base, unsigned max_digits, uint64_t max,
                     uint64_t *ret)
{
        const char *s = *p;
        uint64_t v = 0;
        unsigned n = 0;

        for (;; s++, n++) {
                unsigned d;

                if (*s >= '0' && *s <= '9')
                        d = (unsigned)(*s - '0');
                else if (base == 16 && *s >= 'a' && *s <= 'f')
                        d = (unsigned)(*s - 'a') + 10;
                else
                        break;
                if (n == max_digits || d > max || v > (max - d) / base)
                        return false;
                v = v * base + d;
        }
        if (!n)
                return false;
        *p = s;
        *ret = v;
        return true;
}

bool fault_parse_words(const char *m, struct inst_last_words *ret)
{
        uint64_t sig, code, addr, limit, near;
        bool neg;

        if (!take_lit(&m, "signal ") || !take_num(&m, 10, 2, 64, &sig) || sig < 1 ||
            !take_lit(&m, " code "))
                return false;
        neg = take_lit(&m, "-");
        if (!take_num(&m, 10, 10, INT_MAX, &code) || !take_lit(&m, " address 0x") ||
            !take_num(&m, 16, 16, UINT64_MAX, &addr) || !take_lit(&m, " limit ") ||
            !take_num(&m, 10, 20, UINT64_MAX, &limit) || !take_lit(&m, " near ") ||
            !take_num(&m, 10, 1, 1, &near) || *m != '\0')
                return false;
        *ret = (struct inst_last_words){ .valid = true, .near_limit = near, .sig = (int)sig,
                                         .code = neg ? -(int)code : (int)code, .addr = addr,
                                         .limit = limit };
        return true;
}

bool fault_on_log(struct inst *inst, int status, const char *category, const char *message)
{
        struct inst_log_rec *r;

        if (status == INST_FATAL && !strcmp(category, CRASH_CATEGORY)) {
                struct inst_last_words lw;

                if (fault_parse_words(message, &lw)) {
                        inst->words = lw;
                        return true;
                }
        }
        r = &inst->recent[inst->recent_next];
        inst->recent_next = (inst->recent_next + 1) % INST_RECENT_LOGS;
        if (inst->n_recent < INST_RECENT_LOGS)
                inst->n_recent++;
        r->status = status;
        snprintf(r->category, sizeof(r->category), "%s", category);
        snprintf(r->text, sizeof(r->text), "%s", message);
        return false;
}

/* ---- Public ---------------------------------------------------------------- */

int inst_health(const struct inst *inst)
{
        int f = atomic_load_explicit(&inst->fault_pub, memory_order_acquire);

        if (f)
                return f;
        return supervisor_exited(inst->watch, NULL) ? -ESRCH : 0;
}

size_t inst_recent_logs(const struct inst *inst, const char *skip, char *buf, size_t size)
{
        static const char *const names[] = { "OK", "Warning", "Discard", "Error", "Fatal" };
        size_t len = 0, n = 0;

        if (size)
                buf[0] = '\0';
        for (unsigned i = 0; i < inst->n_recent; i++) {
                unsigned k = (inst->recent_next + INST_RECENT_LOGS - inst->n_recent + i) %
                             INST_RECENT_LOGS;
                const struct inst_log_rec *r = &inst->recent[k];
                int w;

                if (skip && r->text[0] && strstr(skip, r->text))
                        continue;
                if (len >= size)
                        break;
                w = snprintf(buf + len, size - len, "%s[%s] %s: %s", n ? "; " : "",
                             r->status >= 0 && r->status <= 4 ? names[r->status] : "?",
                             r->category, r->text);
                if (w < 0)
                        break;
                len += (size_t)w;
                n++;
        }
        return n;
}

int inst_service_stats(const struct inst *inst, uint64_t *ret_steps, uint64_t *ret_ns_total)
{
        if (!inst)
                return -EINVAL;
        if (ret_steps)
                *ret_steps = inst->svc_steps;
        if (ret_ns_total)
                *ret_ns_total = inst->svc_ns;
        return 0;
}

int inst_me_stats(const struct inst *inst, struct inst_me_stats *ret)
{
        if (!inst)
                return -EINVAL;
        *ret = inst->me;
        return 0;
}

int inst_protocol(struct inst *inst, const char *what)
{
        return inst_fault_set(inst, -EPROTO, "worker %d broke the protocol: %s", (int)inst->pid, what);
}

/*
 * Whether the worker is stopped (SIGSTOP, a tracer: /proc/PID/stat state
 * 'T' or 't'): it cannot answer, and waiting for it would only run out a
 * call's deadline.
 */
static bool stopped(pid_t pid)
{
        char path[64], buf[512], *p;
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return false;
        buf[n] = '\0';
        /* "pid (comm) S ...": comm may hold anything, the state follows the last ')'. */
        p = strrchr(buf, ')');
        return p && p[1] == ' ' && (p[2] == 'T' || p[2] == 't');
}

void inst_abandon(struct inst *inst, const char *why)
{
        atomic_store_explicit(&inst->abandoned_why, why, memory_order_relaxed);
        atomic_store_explicit(&inst->abandoned, true, memory_order_release);
}

int inst_kill_stopped(struct inst *inst)
{
        if (inst->reaped || inst->fault || inst->pid <= 0 || !stopped(inst->pid))
                return 0;
        fault_kill(inst);
        return inst_fault_set(inst, -ECANCELED, "worker %d was stopped; killed", (int)inst->pid);
}
