/*
 * config: the daemon's settings, from fmud.conf (INI, parsed by
 * inih) and the command line, which overrides the file.
 *
 * DESIGN: config_init() sets the built-in defaults, config_load() applies
 * a file on top (every key is documented in configs/fmud.conf; an
 * unknown section or key, or a bad value, is an error naming file:line),
 * config_apply_args() applies the command-line options parsed by
 * config_parse_args(), and config_finish() fills in what derives from
 * the environment (run directory, endpoints, scratch, cache, worker). A
 * reload (SIGHUP) runs the same sequence into a fresh struct and the
 * caller takes what can change at run time.
 *
 * Ownership: every string and the allow and output arrays belong to the struct and
 * are freed by config_fini(). Not thread-safe; the main thread only.
 */
#ifndef FMUD_DAEMON_CONFIG_H
#define FMUD_DAEMON_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "daemon/access.h"
#include "engine/scenario/scenario.h"

/* Where the settings were installed (CMakeLists.txt: FMUD_CONFIG_FILE). */
#ifndef FMUD_CONFIG_FILE
#define FMUD_CONFIG_FILE        "/etc/fmud/fmud.conf"
#endif
#define CONFIG_DEFAULT_PATH     FMUD_CONFIG_FILE
/* [realtime] worker_mlock_bytes unless set: room for a worker, its threads and a usual FMU. */
#define CONFIG_WORKER_MLOCK_BYTES (256ull << 20)

enum config_sandbox { CONFIG_SANDBOX_STRICT, CONFIG_SANDBOX_BASIC, CONFIG_SANDBOX_OFF };
enum config_violation { CONFIG_VIOLATION_ERRNO, CONFIG_VIOLATION_KILL };

struct fmud_config {
        /* [control] */
        char *endpoint;                 /* ipc ROUTER; NULL until config_finish() */
        char *pub_endpoint;             /* ipc PUB */
        char *tcp_endpoint;             /* NULL: no remote access */
        char *tcp_pub_endpoint;         /* NULL: no remote PUB */
        char *server_secret_key;        /* file with the Z85 secret key */
        char *authorized_keys;          /* file of Z85 public keys */
        char *socket_group;             /* NULL: sockets 0600, run dir 0700 */
        uint64_t max_message;           /* bytes */
        /* [rig] */
        char *rig_remote_endpoint;      /* remote rigs' bridges bind here; NULL: none (rig_bridge.h) */
        /* [paths] */
        char **allow;
        size_t n_allow;
        char **output;                  /* results files a client names only below these */
        size_t n_output;
        char *state_dir;                /* results of loads that name no file go below */
        char *cache_dir;
        char *scratch_dir;
        char *worker;
        /* [limits] */
        uint32_t max_sessions;          /* 0: the host's default */
        uint64_t memory;                /* bytes per worker; 0: default */
        uint64_t cpu_seconds;           /* per worker; 0: none */
        double call_timeout;            /* seconds; 0: default */
        double transient_grace;         /* seconds a transient session outlives its owner's silence */
        /* [sandbox] */
        enum config_sandbox sandbox;
        enum config_violation on_violation;
        char *sandbox_user;             /* NULL: none */
        char *pass_env;                 /* names the workers get of the daemon's environment (worker_env.h) */
        /* require = all: a worker that lacks a layer its mode wants is refused (none: noted). */
        bool sandbox_require_all;
        /* [master] */
        /*
         * Seconds per coupled step for scenarios that set none; INFINITY:
         * none (the file's 0 or inf); NAN: not set (the scenario default).
         */
        double default_budget;
        /*
         * Paced runs of scenarios that set none and are given none: the
         * overrun policy and margin (µs), the µs spun before a deadline.
         */
        enum scenario_overrun overrun;
        double overrun_margin_us, spin_us;
        /* [results] */
        uint32_t results_flush_ms;      /* rows wait at most this long to be written; 0: default */
        /* [upload] (upload.h): bytes; 0: the store's defaults */
        uint64_t upload_max_file;       /* one file put */
        uint64_t upload_quota;          /* one client's uploads in progress */
        uint64_t upload_store_bytes;    /* complete uploads kept before the oldest go */
        /* [roles] (access.h) */
        enum access_role default_role;  /* unmatched local users */
        struct access_grant *role_users, *role_groups;
        size_t n_role_users, n_role_groups;
        /* [log] */
        int log_level;                  /* syslog level: 3 err ... 7 debug */
        /* [realtime] (engine/master/realtime.h): every session's defaults */
        bool rt_mlock;                  /* mlockall() the daemon at startup */
        uint32_t rt_priority;           /* master threads' SCHED_FIFO priority; 0: none */
        uint32_t rt_worker_priority;    /* workers'; 0: none */
        char *rt_cpus, *rt_worker_cpus; /* cpu lists; NULL: any cpu */
        bool rt_best_effort;            /* a refused option does not refuse a session */
        bool rt_worker_mlock;           /* every session's workers lock their memory */
        /*
         * What each locking worker may lock (its RLIMIT_MEMLOCK), and the
         * sum over every locking worker of the daemon (0: locking refused).
         */
        uint64_t rt_worker_mlock_bytes, rt_worker_mlock_max_bytes;
        /* derived by config_finish() */
        char *run_dir;
        /* set by fmud at startup: [realtime] mlock "active", "refused: REASON"; empty: off */
        char rt_mlock_state[96];
};

/* Command-line options; NULL / negative / false: not given. */
struct fmud_args {
        const char *config;
        const char *endpoint, *pub_endpoint, *cache_dir, *scratch_dir, *worker, *sandbox;
        const char **allow;             /* n_allow of them, argv's strings; the array is malloc'ed */
        size_t n_allow;
        const char **output;            /* n_output of them, as allow */
        size_t n_output;
        const char *state_dir;
        const char *mlock_max;          /* --worker-mlock-max SIZE|infinity */
        const char *pass_env;           /* --pass-env NAMES: [sandbox] pass_env */
        int ready_fd;                   /* -1: none */
        bool no_config;                 /* --no-config: no file at all, not even the default */
        bool version, help;
        bool check_config;              /* --check-config [FILE]: check, do not serve */
        const char *check_file;         /* its FILE; NULL: --config's or the default */
};

void config_init(struct fmud_config *c);
void config_fini(struct fmud_config *c);

/*
 * Apply the INI file at path on top of c. When required is false and the
 * file does not exist, c is unchanged and 0 is returned. Returns 0, or
 * -errno (the file) or -EINVAL (its content) with err saying what and
 * where ("file:line: ...").
 */
int config_load(struct fmud_config *c, const char *path, bool required, char *err,
                size_t errlen);

/*
 * What config_load_all() tells its caller as it reads: each problem, with
 * its line, and each key it set, with its line; key() returns how many
 * problems it found in the value (a path that does not exist...), which
 * it reports through its own means.
 */
struct config_report {
        void (*problem)(void *ctx, int line, const char *msg);
        int (*key)(void *ctx, int line, const char *section, const char *name, const char *value);
        void *ctx;
};

/*
 * config_load() that goes on after a problem: every one is reported to
 * rep. Returns the number of problems (0: the file is good, or absent and
 * not required), or -errno when the file cannot be read (err says why).
 */
int config_load_all(struct fmud_config *c, const char *path, bool required,
                    const struct config_report *rep, char *err, size_t errlen);

/*
 * fmud --check-config: reads the file at path (required: it must exist)
 * and the options in a as the daemon would, and checks every key and
 * every path it names (allowed and output directories exist, the worker
 * is executable, key files are readable and well-formed, the secret key
 * is private, users and groups exist), without opening a socket or
 * creating anything. Each problem is printed to err as "FILE:LINE: ..."
 * (or "FILE: ..." when no line applies), a good file's summary to out.
 * Returns 0 (good) or 1.
 */
int config_check(const char *path, bool required, const struct fmud_args *a, FILE *out,
                 FILE *err);

/*
 * Parse argv (getopt_long). Returns 0, or -EINVAL with err. ret->allow is
 * and ret->output are malloc'ed (free() them); their strings are argv's.
 */
int config_parse_args(int argc, char **argv, struct fmud_args *ret, char *err, size_t errlen);
/*
 * Apply the given options on top of c (--allow and --output-dir replace
 * the file's lists). 0 or -EINVAL/-ENOMEM.
 */
int config_apply_args(struct fmud_config *c, const struct fmud_args *a, char *err, size_t errlen);

/*
 * Fill in what was not set: the run directory (proto/endpoint.h), the
 * control endpoint below it, the PUB endpoint next to the control
 * endpoint (DIR/events.sock, fmud_pub_endpoint_for()), scratch (RUNDIR/scratch), cache
 * ($CACHE_DIRECTORY, /var/cache/fmud for root, else the user's cache),
 * state ($STATE_DIRECTORY, /var/lib/fmud for root, else $XDG_STATE_HOME/fmud
 * or ~/.local/state/fmud),
 * the worker (next to this program, ../worker/fmud-worker,
 * ../libexec/fmud/fmud-worker). Checks cross-key rules (tcp needs both
 * key files). Returns 0 or -errno with err.
 */
int config_finish(struct fmud_config *c, char *err, size_t errlen);

/* Parse "4G", "512M", "100k", "1048576" (binary multiples). 0 or -EINVAL. */
int config_parse_size(const char *s, uint64_t *ret);

const char *config_sandbox_name(enum config_sandbox s);

/*
 * The i-th key the file may hold, in the table's order: *ret_section and
 * *ret_name (static strings). false past the last. For the checks that
 * the documentation names every key.
 */
bool config_key_at(size_t i, const char **ret_section, const char **ret_name);

#endif
