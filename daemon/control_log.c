/* control_log: leveled log lines on stderr (control_log.h). */
#include "control_log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static _Atomic int level = LOG_LVL_INFO;

void log_set_level(int l)
{
        atomic_store_explicit(&level, l, memory_order_relaxed);
}

int log_get_level(void)
{
        return atomic_load_explicit(&level, memory_order_relaxed);
}

void log_msg(int l, const char *fmt, ...)
{
        char buf[2048];
        va_list ap;
        int n;

        if (l > atomic_load_explicit(&level, memory_order_relaxed))
                return;
        n = snprintf(buf, sizeof(buf), "<%d>fmud: ", l);
        va_start(ap, fmt);
        n += vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
        va_end(ap);
        if (n > (int)sizeof(buf) - 2)
                n = (int)sizeof(buf) - 2;
        buf[n++] = '\n';
        /* One write per line, so lines from several threads never interleave. */
        (void)!write(STDERR_FILENO, buf, (size_t)n);
}
