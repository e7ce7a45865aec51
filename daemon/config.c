/*
 * config: the daemon's settings from its INI file (config.h). Every key
 * is one row of the table below; the row says how the value is parsed
 * and where it goes.
 */
#include "config.h"

#include "daemon/worker_env.h"
#include "engine/master/realtime.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum key_type {
        KEY_STR,                /* any string */
        KEY_PATH,               /* an absolute path */
        KEY_IPC,                /* ipc://... */
        KEY_TCP,                /* tcp://... */
        KEY_ALLOW,              /* an absolute directory, repeatable */
        KEY_OUTPUT,             /* an absolute directory, repeatable */
        KEY_SIZE,               /* bytes, with K/M/G/T */
        KEY_U32,
        KEY_U64,
        KEY_SECONDS,            /* a non-negative finite number */
        KEY_BUDGET,             /* seconds > 0; 0, inf or infinity: none (INFINITY) */
        KEY_MICROS,             /* a non-negative finite number of µs, at most 1e12 */
        KEY_OVERRUN,            /* none, soft, hard */
        KEY_SANDBOX,
        KEY_VIOLATION,
        KEY_REQUIRE,            /* none, all */
        KEY_LOG_LEVEL,
        KEY_ROLE,               /* observer, operator, admin */
        KEY_GRANT_USER,         /* "NAME ROLE", repeatable */
        KEY_GRANT_GROUP,
        KEY_BOOL,               /* yes/no, true/false, on/off, 1/0 */
        KEY_PRIORITY,           /* SCHED_FIFO 1..99; 0: none */
        KEY_CPUS,               /* a cpu list, "0-1,3" */
        KEY_ENV_NAMES,          /* names of environment variables, or '*' (worker_env.h) */
};

struct key {
        const char *section, *name;
        enum key_type type;
        size_t off;
        /* KEY_SIZE: the bounds (max 0: none) and the message for a value outside them. */
        uint64_t min, max;
        const char *range;
};

#define CONFIG_MIN_MESSAGE      1024u
#define CONFIG_MAX_MESSAGE      (1ull << 30)
#define CONFIG_MIN_WORKER_MLOCK (16ull << 20)

#define K(sec, nm, ty, field) { .section = sec, .name = nm, .type = ty, \
                                .off = offsetof(struct fmud_config, field) }
#define KSIZE(sec, nm, field, lo, hi, why) { .section = sec, .name = nm, .type = KEY_SIZE, \
                                             .off = offsetof(struct fmud_config, field), \
                                             .min = lo, .max = hi, .range = why }
static const struct key keys[] = {
        K("control", "endpoint", KEY_IPC, endpoint),
        K("control", "pub_endpoint", KEY_IPC, pub_endpoint),
        K("control", "tcp_endpoint", KEY_TCP, tcp_endpoint),
        K("control", "tcp_pub_endpoint", KEY_TCP, tcp_pub_endpoint),
        K("control", "server_secret_key", KEY_PATH, server_secret_key),
        K("control", "authorized_keys", KEY_PATH, authorized_keys),
        K("control", "socket_group", KEY_STR, socket_group),
        KSIZE("control", "max_message", max_message, CONFIG_MIN_MESSAGE, CONFIG_MAX_MESSAGE,
              "must lie between 1K and 1G"),
        K("paths", "allow", KEY_ALLOW, allow),
        K("paths", "output_dir", KEY_OUTPUT, output),
        K("paths", "state_dir", KEY_PATH, state_dir),
        K("paths", "cache_dir", KEY_PATH, cache_dir),
        K("paths", "scratch_dir", KEY_PATH, scratch_dir),
        K("paths", "worker", KEY_PATH, worker),
        K("limits", "max_sessions", KEY_U32, max_sessions),
        K("limits", "memory", KEY_SIZE, memory),
        K("limits", "cpu_seconds", KEY_U64, cpu_seconds),
        K("limits", "call_timeout", KEY_SECONDS, call_timeout),
        K("limits", "transient_grace", KEY_SECONDS, transient_grace),
        K("sandbox", "mode", KEY_SANDBOX, sandbox),
        K("sandbox", "on_violation", KEY_VIOLATION, on_violation),
        K("sandbox", "user", KEY_STR, sandbox_user),
        K("sandbox", "pass_env", KEY_ENV_NAMES, pass_env),
        K("sandbox", "require", KEY_REQUIRE, sandbox_require_all),
        K("master", "default_budget", KEY_BUDGET, default_budget),
        K("master", "overrun", KEY_OVERRUN, overrun),
        K("master", "overrun_margin_us", KEY_MICROS, overrun_margin_us),
        K("master", "spin_us", KEY_MICROS, spin_us),
        K("results", "flush_ms", KEY_U32, results_flush_ms),
        K("upload", "max_file_bytes", KEY_SIZE, upload_max_file),
        K("upload", "quota_bytes", KEY_SIZE, upload_quota),
        K("upload", "store_bytes", KEY_SIZE, upload_store_bytes),
        K("roles", "default_role", KEY_ROLE, default_role),
        K("roles", "user", KEY_GRANT_USER, role_users),
        K("roles", "group", KEY_GRANT_GROUP, role_groups),
        K("log", "level", KEY_LOG_LEVEL, log_level),
        K("realtime", "mlock", KEY_BOOL, rt_mlock),
        K("realtime", "priority", KEY_PRIORITY, rt_priority),
        K("realtime", "worker_priority", KEY_PRIORITY, rt_worker_priority),
        K("realtime", "cpus", KEY_CPUS, rt_cpus),
        K("realtime", "worker_cpus", KEY_CPUS, rt_worker_cpus),
        K("realtime", "best_effort", KEY_BOOL, rt_best_effort),
        K("realtime", "worker_mlock", KEY_BOOL, rt_worker_mlock),
        K("rig", "remote_endpoint", KEY_TCP, rig_remote_endpoint),
        KSIZE("realtime", "worker_mlock_bytes", rt_worker_mlock_bytes, CONFIG_MIN_WORKER_MLOCK, 0,
              "must be at least 16M (what a worker maps before its FMU)"),
        K("realtime", "worker_mlock_max_bytes", KEY_SIZE, rt_worker_mlock_max_bytes),
};
#undef K

/* Hard bounds on what a file may ask for. */
#define CONFIG_MAX_ALLOW        256
#define CONFIG_MIN_GRACE        0.1     /* seconds: a lease shorter would outrun a busy client */
#define CONFIG_MAX_GRACE        86400.0
#define CONFIG_MAX_GRANTS       1024    /* [roles] user or group entries */
#define CONFIG_MAX_NAME         256     /* of a user or group */

void config_init(struct fmud_config *c)
{
        *c = (struct fmud_config){
                .max_message = 16u << 20,
                .transient_grace = 10,
                .sandbox = CONFIG_SANDBOX_STRICT,
                .on_violation = CONFIG_VIOLATION_ERRNO,
                .log_level = 6,
                .default_budget = NAN,
                .default_role = ACCESS_OBSERVER,
                .rt_worker_mlock_bytes = CONFIG_WORKER_MLOCK_BYTES,
        };
}

static void free_dirs(char ***v, size_t *n)
{
        for (size_t i = 0; i < *n; i++)
                free((*v)[i]);
        free(*v);
        *v = NULL;
        *n = 0;
}

static void free_allow(struct fmud_config *c)
{
        free_dirs(&c->allow, &c->n_allow);
        free_dirs(&c->output, &c->n_output);
}

static void free_grants(struct access_grant **v, size_t *n)
{
        for (size_t i = 0; i < *n; i++)
                free((*v)[i].name);
        free(*v);
        *v = NULL;
        *n = 0;
}

void config_fini(struct fmud_config *c)
{
        char **strs[] = { &c->endpoint, &c->pub_endpoint, &c->tcp_endpoint,
                          &c->tcp_pub_endpoint, &c->server_secret_key, &c->authorized_keys,
                          &c->socket_group, &c->state_dir, &c->cache_dir, &c->scratch_dir,
                          &c->worker, &c->rig_remote_endpoint,
                          &c->sandbox_user, &c->pass_env, &c->run_dir, &c->rt_cpus,
                          &c->rt_worker_cpus };

        for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
                free(*strs[i]);
                *strs[i] = NULL;
        }
        free_allow(c);
        free_grants(&c->role_users, &c->n_role_users);
        free_grants(&c->role_groups, &c->n_role_groups);
}

const char *config_sandbox_name(enum config_sandbox s)
{
        switch (s) {
        case CONFIG_SANDBOX_STRICT: return "strict";
        case CONFIG_SANDBOX_BASIC: return "basic";
        case CONFIG_SANDBOX_OFF: return "off";
        }
        return "?";
}

bool config_key_at(size_t i, const char **ret_section, const char **ret_name)
{
        if (i >= sizeof(keys) / sizeof(keys[0]))
                return false;
        *ret_section = keys[i].section;
        *ret_name = keys[i].name;
        return true;
}

int config_parse_size(const char *s, uint64_t *ret)
{
        unsigned long long v;
        unsigned shift = 0;
        char *end;

        if (!s || *s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno)
                return -EINVAL;
        switch (*end) {
        case 'k': case 'K': shift = 10; end++; break;
        case 'm': case 'M': shift = 20; end++; break;
        case 'g': case 'G': shift = 30; end++; break;
        case 't': case 'T': shift = 40; end++; break;
        default: break;
        }
        if (shift && (*end == 'i' || *end == 'I'))
                end++;
        if (shift && (*end == 'b' || *end == 'B'))
                end++;
        if (*end || (shift && v > (UINT64_MAX >> shift)))
                return -EINVAL;
        *ret = (uint64_t)v << shift;
        return 0;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *ret)
{
        unsigned long long v;
        char *end;

        if (*s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno || *end || v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}

static int parse_seconds(const char *s, double *ret)
{
        char *end;
        double v;

        errno = 0;
        v = strtod(s, &end);
        if (errno || end == s || *end || !isfinite(v) || v < 0)
                return -EINVAL;
        *ret = v;
        return 0;
}

/* A step budget: seconds > 0, or none (0, inf, infinity in any case: INFINITY). */
static int parse_budget(const char *s, double *ret)
{
        if (!strcasecmp(s, "inf") || !strcasecmp(s, "infinity")) {
                *ret = INFINITY;
                return 0;
        }
        if (parse_seconds(s, ret) < 0)
                return -EINVAL;
        if (*ret == 0)
                *ret = INFINITY;
        return 0;
}

static int parse_enum(const char *s, const char *const *names, int n)
{
        for (int i = 0; i < n; i++)
                if (!strcmp(s, names[i]))
                        return i;
        return -EINVAL;
}

static int set_str(char **dst, const char *v)
{
        char *p = NULL;

        if (*v) {
                p = strdup(v);
                if (!p)
                        return -ENOMEM;
        }
        free(*dst);
        *dst = p;
        return 0;
}

static int add_dir(char ***v, size_t *n, const char *dir)
{
        char **a, *p;

        if (*n >= CONFIG_MAX_ALLOW)
                return -E2BIG;
        a = realloc(*v, (*n + 1) * sizeof(*a));
        if (!a)
                return -ENOMEM;
        *v = a;
        p = strdup(dir);
        if (!p)
                return -ENOMEM;
        a[(*n)++] = p;
        return 0;
}

/* "NAME ROLE": a user or group name (or number) and a role, appended to v. */
static int add_grant(struct access_grant **v, size_t *n, const char *s, const char **why)
{
        struct access_grant *a;
        size_t len = strcspn(s, " \t");
        const char *role = s + len + strspn(s + len, " \t");
        int r = access_role_parse(role);

        if (len == 0 || len >= CONFIG_MAX_NAME || r < 0 || memchr(s, ':', len)) {
                *why = "must be a name (or number) and a role: observer, operator or admin";
                return -EINVAL;
        }
        if (*n >= CONFIG_MAX_GRANTS) {
                *why = "too many entries";
                return -EINVAL;
        }
        a = realloc(*v, (*n + 1) * sizeof(*a));
        if (!a)
                return -ENOMEM;
        *v = a;
        a[*n].name = strndup(s, len);
        if (!a[*n].name)
                return -ENOMEM;
        a[(*n)++].role = (enum access_role)r;
        return 0;
}

static int set_key(struct fmud_config *c, const struct key *k, const char *v, const char **why)
{
        static const char *const sandboxes[] = { "strict", "basic", "off" };
        static const char *const violations[] = { "errno", "kill" };
        static const char *const requires[] = { "none", "all" };
        static const char *const bools[] = { "yes", "no", "true", "false", "on", "off", "1", "0" };
        static char cpus_why[128];      /* the loader is single-threaded */
        static const char *const levels[] = { "emerg", "alert", "crit", "err", "warning",
                                              "notice", "info", "debug" };
        void *field = (char *)c + k->off;
        uint64_t u;
        double d;
        int r;

        switch (k->type) {
        case KEY_STR:
                return set_str(field, v);
        case KEY_ENV_NAMES:
                *why = worker_env_bad(v);
                return *why ? -EINVAL : set_str(field, v);
        case KEY_PATH:
        case KEY_ALLOW:
        case KEY_OUTPUT:
                if (*v != '/' && (*v || k->type != KEY_PATH)) {
                        *why = "must be an absolute path";
                        return -EINVAL;
                }
                if (k->type == KEY_PATH)
                        return set_str(field, v);
                r = k->type == KEY_ALLOW ? add_dir(&c->allow, &c->n_allow, v) :
                                           add_dir(&c->output, &c->n_output, v);
                if (r == -E2BIG)
                        *why = k->type == KEY_ALLOW ? "too many allowed directories" :
                                                      "too many output directories";
                return r == -E2BIG ? -EINVAL : r;
        case KEY_IPC:
        case KEY_TCP: {
                const char *pre = k->type == KEY_IPC ? "ipc://" : "tcp://";

                if (*v && (strncmp(v, pre, 6) || !v[6])) {
                        *why = k->type == KEY_IPC ? "must be ipc://PATH" : "must be tcp://HOST:PORT";
                        return -EINVAL;
                }
                return set_str(field, v);
        }
        case KEY_SIZE:
                if (config_parse_size(v, &u) < 0) {
                        *why = "must be a size such as 16M";
                        return -EINVAL;
                }
                if (u < k->min || (k->max && u > k->max)) {
                        *why = k->range;
                        return -EINVAL;
                }
                *(uint64_t *)field = u;
                return 0;
        case KEY_U32:
        case KEY_U64:
                if (parse_u64(v, k->type == KEY_U32 ? UINT32_MAX : UINT64_MAX, &u) < 0) {
                        *why = "must be a non-negative integer";
                        return -EINVAL;
                }
                if (k->type == KEY_U32)
                        *(uint32_t *)field = (uint32_t)u;
                else
                        *(uint64_t *)field = u;
                return 0;
        case KEY_SECONDS:
                if (parse_seconds(v, &d) < 0) {
                        *why = "must be a non-negative number of seconds";
                        return -EINVAL;
                }
                if (field == &c->transient_grace && (d < CONFIG_MIN_GRACE || d > CONFIG_MAX_GRACE)) {
                        *why = "must lie between 0.1 and 86400 seconds";
                        return -EINVAL;
                }
                *(double *)field = d;
                return 0;
        case KEY_BUDGET:
                if (parse_budget(v, &d) < 0) {
                        *why = "must be a non-negative number of seconds, or inf (0 and inf: "
                               "no budget)";
                        return -EINVAL;
                }
                *(double *)field = d;
                return 0;
        case KEY_BOOL:
                r = parse_enum(v, bools, 8);
                if (r < 0) {
                        *why = "must be yes or no";
                        return -EINVAL;
                }
                *(bool *)field = r % 2 == 0;
                return 0;
        case KEY_PRIORITY:
                if (parse_u64(v, RT_PRIORITY_MAX, &u) < 0) {
                        *why = "must be a SCHED_FIFO priority, 1 to 99 (0: none)";
                        return -EINVAL;
                }
                *(uint32_t *)field = (uint32_t)u;
                return 0;
        case KEY_CPUS:
                if (rt_cpus_check(v, cpus_why, sizeof(cpus_why)) < 0) {
                        *why = cpus_why;
                        return -EINVAL;
                }
                return set_str(field, v);
        case KEY_MICROS:
                if (parse_seconds(v, &d) < 0 || d > 1e12 ||
                    (field == &c->spin_us && d > SCENARIO_SPIN_US_MAX)) {
                        *why = field == &c->spin_us ? "must be 0 to 1000000 microseconds" :
                               "must be 0 to 1e12 microseconds";
                        return -EINVAL;
                }
                *(double *)field = d;
                return 0;
        case KEY_OVERRUN:
                if (scenario_overrun_parse(v, strlen(v), (enum scenario_overrun *)field) < 0) {
                        *why = "must be none, soft or hard";
                        return -EINVAL;
                }
                return 0;
        case KEY_ROLE:
                r = access_role_parse(v);
                if (r < 0) {
                        *why = "must be observer, operator or admin";
                        return -EINVAL;
                }
                *(enum access_role *)field = (enum access_role)r;
                return 0;
        case KEY_GRANT_USER:
                return add_grant(&c->role_users, &c->n_role_users, v, why);
        case KEY_GRANT_GROUP:
                return add_grant(&c->role_groups, &c->n_role_groups, v, why);
        case KEY_REQUIRE:
                r = parse_enum(v, requires, 2);
                if (r < 0) {
                        *why = "must be none or all";
                        return -EINVAL;
                }
                *(bool *)field = r == 1;
                return 0;
        case KEY_SANDBOX:
        case KEY_VIOLATION:
        case KEY_LOG_LEVEL:
                if (k->type == KEY_SANDBOX)
                        r = parse_enum(v, sandboxes, 3);
                else if (k->type == KEY_VIOLATION)
                        r = parse_enum(v, violations, 2);
                else
                        r = parse_enum(v, levels, 8);
                if (r < 0) {
                        *why = k->type == KEY_SANDBOX ? "must be strict, basic or off" :
                               k->type == KEY_VIOLATION ? "must be errno or kill" :
                               "must be a syslog level name (err, warning, notice, info, debug)";
                        return -EINVAL;
                }
                if (k->type == KEY_SANDBOX)
                        *(enum config_sandbox *)field = (enum config_sandbox)r;
                else if (k->type == KEY_VIOLATION)
                        *(enum config_violation *)field = (enum config_violation)r;
                else
                        *(int *)field = r;
                return 0;
        }
        return -EINVAL;
}

struct load_ctx {
        struct fmud_config *c;
        int r;                  /* the first error */
        char *err;
        size_t errlen;
        bool seen_allow;        /* the file's allow replaces the defaults' */
        bool seen_output;       /* and its output_dir */
        FILE *f;
        int line;               /* of the line inih works on: lines read so far */
        bool key_before;        /* inih's prev_name: a key line since the last section */
        const struct config_report *rep;        /* NULL: stop at the first problem */
        int problems;
};

/* A problem at the current line: the first one in err; every one to rep. */
static void fail(struct load_ctx *x, int r, const char *fmt, ...)
{
        char msg[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        x->problems++;
        if (x->rep)
                x->rep->problem(x->rep->ctx, x->line, msg);
        if (x->r)
                return;
        x->r = r;
        if (x->err)
                snprintf(x->err, x->errlen, "%s", msg);
}

/*
 * inih's reader, counting lines: inih calls the handler for the line it
 * read last, so x->line is the handler's line. When every problem is
 * wanted, the lines inih itself refuses (it names only the first) are
 * found here with its own rules: a comment, a continuation (indented,
 * after a key), a [section], or a line with '=' or ':'.
 */
static char *read_line(char *str, int num, void *stream)
{
        struct load_ctx *x = stream;
        const char *s;
        size_t len;

        if (!fgets(str, num, x->f))
                return NULL;
        x->line++;
        if (!x->rep)
                return str;
        s = str + strspn(str, " \t\r\n");
        len = strlen(s);
        while (len && strchr(" \t\r\n", s[len - 1]))
                len--;
        if (!len || *s == ';' || *s == '#' || (x->key_before && s > str))
                return str;
        if (*s == '[') {
                if (!memchr(s, ']', len))
                        fail(x, -EINVAL, "not a section header or a key = value line");
                x->key_before = false;
        } else if (memchr(s, '=', len) || memchr(s, ':', len)) {
                x->key_before = true;
        } else {
                fail(x, -EINVAL, "not a section header or a key = value line");
        }
        return str;
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
        struct load_ctx *x = user;
        const char *why = NULL;
        int r;

        if (x->r && !x->rep)
                return 0;
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
                if (strcmp(keys[i].section, section) || strcmp(keys[i].name, name))
                        continue;
                if (keys[i].type == KEY_ALLOW && !x->seen_allow) {
                        free_dirs(&x->c->allow, &x->c->n_allow);
                        x->seen_allow = true;
                }
                if (keys[i].type == KEY_OUTPUT && !x->seen_output) {
                        free_dirs(&x->c->output, &x->c->n_output);
                        x->seen_output = true;
                }
                r = set_key(x->c, &keys[i], value, &why);
                if (r == -ENOMEM)
                        fail(x, r, "out of memory");
                else if (r < 0)
                        fail(x, r, "[%s] %s = '%s': %s", section, name, value, why);
                else if (x->rep && x->rep->key)
                        x->problems += x->rep->key(x->rep->ctx, x->line, section, name, value);
                return r == 0;
        }
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
                if (!strcmp(keys[i].section, section)) {
                        fail(x, -EINVAL, "unknown key '%s' in section [%s]", name, section);
                        return 0;
                }
        fail(x, -EINVAL, "unknown section [%s] (key '%s')", section, name);
        return 0;
}

/* config_load() and config_load_all(): see config.h. */
static int load(struct fmud_config *c, const char *path, bool required, char *err,
                size_t errlen, const struct config_report *rep)
{
        char msg[512] = "";
        struct load_ctx x = { .c = c, .err = msg, .errlen = sizeof(msg), .rep = rep };
        int line;

        x.f = fopen(path, "re");
        if (!x.f) {
                int r = -errno;

                if (r == -ENOENT && !required)
                        return 0;
                if (err)
                        snprintf(err, errlen, "%s: %s", path, strerror(-r));
                return r;
        }
        line = ini_parse_stream(read_line, &x, on_key, &x);
        fclose(x.f);
        if (line == 0 && !x.r)
                return 0;
        if (line < 0) {
                if (err)
                        snprintf(err, errlen, "%s: %s", path,
                                 line == -2 ? "out of memory" : "cannot be read");
                return line == -2 ? -ENOMEM : -EIO;
        }
        if (rep && line > 0 && !x.problems) {   /* one inih refused that read_line did not */
                x.line = line;
                fail(&x, -EINVAL, "not a section header or a key = value line");
        }
        if (rep)        /* each problem went to rep with its line */
                return x.problems;
        if (!x.r)       /* a line inih itself refused: no '=' or an unclosed section */
                snprintf(msg, sizeof(msg), "not a section header or a key = value line");
        if (err)
                snprintf(err, errlen, "%s:%d: %s", path, line, msg);
        return x.r ? x.r : -EINVAL;
}

int config_load(struct fmud_config *c, const char *path, bool required, char *err,
                size_t errlen)
{
        return load(c, path, required, err, errlen, NULL);
}

int config_load_all(struct fmud_config *c, const char *path, bool required,
                    const struct config_report *rep, char *err, size_t errlen)
{
        return load(c, path, required, err, errlen, rep);
}
