/*
 * Test helpers for the session and master tests: a scenario written as
 * an SSD into a temporary folder beside copies of the test FMUs (and the
 * master's own Scripted FMU), loaded with scenario_load(), brought to
 * life with session_new() and master_new(), with every sample row the
 * master produces kept for the test to look at.
 *
 * The tests have no Criterion .timeout: with --jobs, Criterion 2.4.1's
 * timeout watcher leaks in the runner (LeakSanitizer fails the asan
 * build); ctest's TIMEOUT catches a hung test instead.
 */
#ifndef FMUD_TESTS_MASTER_SYS_H
#define FMUD_TESTS_MASTER_SYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/master/master.h"
#include "engine/scenario/scenario.h"
#include "engine/master/session.h"

/* What goes into the SSD; NULL parts are left out. */
struct msys_spec {
        const char *elements;           /* inside <ssd:Elements> */
        const char *connections;        /* inside <ssd:Connections> */
        const char *parameters;         /* <ssv:Parameter> elements of the system's binding */
        double start, stop;             /* ssd:DefaultExperiment */
        const char *attrs;              /* attributes of fmud:Settings */
        const char *settings;           /* children of fmud:Settings */
};

struct mrow {
        double t;
        uint64_t point;
        unsigned flags;
        size_t comp;
        double *v;                      /* one per column */
};

struct msys {
        char *dir, *cache;
        struct diag_list diags;
        struct scenario *sc;
        struct session *s;
        struct master *m;
        struct session_opts so;         /* msys_load() sets the defaults; change before msys_start() */
        struct master_opts mo;
        size_t n_rows, cap;
        struct mrow *rows;
        /* Called for every row after it is stored (the master's thread). */
        void (*on_row)(struct msys *x, const struct mrow *row);
        void *user;
};

/* Component XML for <ssd:Elements>: "<ssd:Component name=... source=resources/FMU.fmu/>". */
#define MSYS_COMP(name, fmu) \
        "<ssd:Component name=\"" name "\" source=\"resources/" fmu ".fmu\"/>"
#define MSYS_CONN(a, ac, b, bc) \
        "<ssd:Connection startElement=\"" a "\" startConnector=\"" ac "\" endElement=\"" b \
        "\" endConnector=\"" bc "\"/>"
#define MSYS_REAL(name, value) \
        "<ssv:Parameter name=\"" name "\"><ssv:Real value=\"" value "\"/></ssv:Parameter>"
#define MSYS_INT(name, value) \
        "<ssv:Parameter name=\"" name "\"><ssv:Integer value=\"" value "\"/></ssv:Parameter>"
#define MSYS_RECORD(var) "<fmud:Record variable=\"" var "\"/>"

/* Write and load the scenario; aborts the test when it is refused. */
void msys_load(struct msys *x, const struct msys_spec *spec);
/* The same, returning scenario_load()'s result (the diagnostics stay in x->diags). */
int msys_load_try(struct msys *x, const struct msys_spec *spec);
/* The diagnostics of a refused load, one per line, into buf. */
void msys_diag_text(const struct msys *x, char *buf, size_t size);
/* session_new() and master_new() with x->so and x->mo; aborts on failure. */
void msys_start(struct msys *x);
/* session_new() only; returns its result and *ret_message (caller frees). */
int msys_session_try(struct msys *x, char **ret_message);
/* Free everything (master, session, scenario, rows, folders). */
void msys_fini(struct msys *x);

size_t msys_col(const struct msys *x, const char *name);        /* aborts when missing */
size_t msys_comp(const struct msys *x, const char *name);
size_t msys_var(const struct msys *x, size_t comp, const char *name);
/* The first row at time t with exactly these flags, or NULL. */
const struct mrow *msys_row(const struct msys *x, double t, unsigned flags);
/* The grid rows (flags 0) in order: *ret_n of them; caller frees the array. */
const struct mrow **msys_grid(const struct msys *x, size_t *ret_n);
/* Whether two row lists are bit-identical (times, flags, every value). */
bool msys_same_rows(const struct msys *a, const struct msys *b);

/* Pin this process (and the workers it starts later) to one CPU. false: cannot. */
bool msys_one_cpu(void);

#endif
