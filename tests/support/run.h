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

#endif
