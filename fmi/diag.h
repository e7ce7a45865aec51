/*
 * diag: a list of problems found in an FMU (archive entries, modelDescription
 * rules, missing symbols), so that one pass reports every problem, not just
 * the first.
 *
 * DESIGN: fmi/ is a library and never prints; it appends diagnostics here and
 * the program on top (fmuctl, fmud) decides how to show them.
 */
#ifndef FMUD_FMI_DIAG_H
#define FMUD_FMI_DIAG_H

#include <stdarg.h>
#include <stddef.h>

enum diag_severity {
        DIAG_WARNING,
        DIAG_ERROR,
};

struct diag {
        enum diag_severity severity;
        char *file;     /* "modelDescription.xml", an archive entry, ...; may be NULL */
        int line;       /* 1-based, 0 when unknown */
        char *subject;  /* variable, entry or symbol the rule is about; may be NULL */
        char *message;  /* the rule broken, ending with "(FMI 3.0 section X)" where one applies */
};

struct diag_list {
        struct diag *v;
        size_t n, cap;
        size_t max;     /* further diagnostics are counted, not stored: */
        size_t dropped; /* errors */
        size_t dropped_warnings;
};

/* Start an empty list that keeps at most 'max' entries (0: a default of 1000). */
void diag_list_init(struct diag_list *l, size_t max);
/* Free every entry; the list may be reused after diag_list_init(). */
void diag_list_fini(struct diag_list *l);

/*
 * Append one diagnostic. file and subject are copied and may be NULL.
 * Returns 0, or -ENOMEM (the diagnostic is then counted as dropped).
 */
__attribute__((format(printf, 6, 7)))
int diag_add(struct diag_list *l, enum diag_severity sev, const char *file, int line,
             const char *subject, const char *fmt, ...);
__attribute__((format(printf, 6, 0)))
int diag_addv(struct diag_list *l, enum diag_severity sev, const char *file, int line,
              const char *subject, const char *fmt, va_list ap);

/* Number of DIAG_ERROR entries, dropped ones included. */
size_t diag_errors(const struct diag_list *l);

/* Number of warnings found: those stored and those only counted. */
size_t diag_warnings(const struct diag_list *l);

/*
 * Make every warning from index 'from' on an error (strict validation),
 * appending note (e.g. "refused under --strict") to its message when
 * given. Returns how many were made errors.
 */
size_t diag_promote(struct diag_list *l, size_t from, const char *note);
/* Add the errors and warnings 'from' counted without storing them to l's counts. */
void diag_count_unstored(struct diag_list *l, const struct diag_list *from);

/*
 * Format one diagnostic as "file:line: subject: message" into buf (always
 * NUL-terminated, truncated to size). Returns the length it wanted.
 */
int diag_format(const struct diag *d, char *buf, size_t size);

#endif
