/* Test helpers: run a program and capture what it prints. */
#ifndef FMUD_TESTS_RUN_H
#define FMUD_TESTS_RUN_H

struct run_result {
        int exit_code;          /* -1 when it died of a signal */
        char *out;              /* everything on stdout, NUL-terminated */
        char *err;              /* everything on stderr */
};

/* Run argv[0] with argv (NULL-terminated), no stdin. Returns 0 or -errno. */
int run_capture(char *const argv[], struct run_result *ret);
void run_result_fini(struct run_result *r);
/*
 * run_capture(), but once the program has written `when` to stderr, send
 * it signal sig `signals` times (a tenth of a second apart), as a user's
 * Ctrl-C (SIGINT). -ETIMEDOUT (the program killed) when `when` did not
 * come within two minutes or the program ended first. `when` NULL: no
 * signal, as run_capture().
 */
int run_interrupt(char *const argv[], const char *when, int sig, int signals,
                  struct run_result *ret);
/* Whether a process's command line holds s (another than this one). */
int run_any_process_names(const char *s);

#endif
