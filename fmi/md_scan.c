/*
 * md_scan: a linear pass over the bytes of a hostile XML document, before
 * libxml2 sees it, counting the attributes of each start tag and the
 * elements of the whole document.
 *
 * DESIGN: libxml2 checks a start tag's attributes for duplicates pairwise
 * (quadratic in their number) and builds a node for every element, all
 * before any SAX callback could object: 120,000 attributes on one element
 * keep it busy for minutes, millions of empty elements take gigabytes.
 * This pass sees the same tags in one look at each byte and refuses the
 * document first, naming the limit, the line and the element. It knows
 * just enough XML to find tags: comments, CDATA sections and processing
 * instructions are skipped, and quoted attribute values are skipped whole
 * (an '=' or '>' inside one counts for nothing). Anything it does not
 * understand (a DOCTYPE, an unterminated construct) ends the pass without
 * a verdict: libxml2 refuses those itself, and everything before that
 * point was counted. The cancellation flag is polled every MX_SCAN_POLL
 * bytes.
 */
#include "md_xml.h"

#include <errno.h>
#include <string.h>

#define MX_SCAN_POLL    (1u << 20)
#define MX_NAME_SHOW    64

struct scan {
        const unsigned char *p;
        size_t len, i;
        int line;
};

static bool starts(const struct scan *s, const char *lit)
{
        size_t n = strlen(lit);

        return s->len - s->i >= n && memcmp(s->p + s->i, lit, n) == 0;
}

/* Move past the next occurrence of lit, counting lines; false when there is none. */
static bool skip_past(struct scan *s, const char *lit)
{
        size_t n = strlen(lit);

        while (s->i < s->len) {
                if (starts(s, lit)) {
                        s->i += n;
                        return true;
                }
                if (s->p[s->i] == '\n')
                        s->line++;
                s->i++;
        }
        return false;
}

/* The element name at p, printable, for a message. */
static void show_name(const unsigned char *p, size_t len, char *out)
{
        size_t k = 0;

        while (k < len && k < MX_NAME_SHOW && p[k] != ' ' && p[k] != '\t' && p[k] != '\n' &&
               p[k] != '\r' && p[k] != '>' && p[k] != '/') {
                out[k] = p[k] >= 0x20 && p[k] < 0x7f ? (char)p[k] : '?';
                k++;
        }
        out[k] = '\0';
}

/* A limit was crossed; added is what diag_add() returned for its message. */
static int refuse(struct mx *x, int added)
{
        x->refused = true;
        if (added < 0) {
                x->nomem = true;
                return -ENOMEM;
        }
        return -EINVAL;
}

/*
 * A start tag at s->i (on the '<'). Returns 0 and leaves s after its '>';
 * 1 when it does not end (the pass stops); -EINVAL when over a limit.
 */
static int start_tag(struct mx *x, struct scan *s)
{
        const unsigned char *tag = s->p + s->i + 1;
        int line = s->line;
        size_t attrs = 0;
        char name[MX_NAME_SHOW + 1];

        s->i++;
        while (s->i < s->len) {
                unsigned char c = s->p[s->i];

                if (c == '>') {
                        s->i++;
                        return 0;
                }
                if (c == '\n') {
                        s->line++;
                } else if (c == '"' || c == '\'') {
                        const unsigned char *end = memchr(s->p + s->i + 1, c, s->len - s->i - 1);

                        if (!end)
                                return 1;
                        for (const unsigned char *q = s->p + s->i + 1; q < end; q++)
                                if (*q == '\n')
                                        s->line++;
                        s->i = (size_t)(end - s->p);
                } else if (c == '=' && ++attrs > x->max_attributes) {
                        show_name(tag, (size_t)(s->p + s->len - tag), name);
                        return refuse(x, diag_add(x->diags, DIAG_ERROR, x->file, line, NULL,
                                      "element <%s> has more than %zu attributes, the limit of "
                                      "attributes per element; document refused",
                                      name, x->max_attributes));
                }
                s->i++;
        }
        return 1;
}

int mx_prescan(struct mx *x, const void *buf, size_t len)
{
        struct scan s = { .p = buf, .len = len, .line = 1 };
        size_t elements = 0, next_poll = MX_SCAN_POLL;
        char name[MX_NAME_SHOW + 1];

        while (s.i < s.len) {
                const unsigned char *lt;
                int r;

                if (s.i >= next_poll) {
                        if (fmi_cancelled(x->cancel))
                                return -ECANCELED;
                        next_poll = s.i + MX_SCAN_POLL;
                }
                lt = memchr(s.p + s.i, '<', s.len - s.i);
                for (const unsigned char *q = s.p + s.i; q < (lt ? lt : s.p + s.len); q++)
                        if (*q == '\n')
                                s.line++;
                if (!lt)
                        break;
                s.i = (size_t)(lt - s.p);
                if (starts(&s, "<!--")) {
                        s.i += 4;
                        if (!skip_past(&s, "-->"))
                                break;
                } else if (starts(&s, "<![CDATA[")) {
                        s.i += 9;
                        if (!skip_past(&s, "]]>"))
                                break;
                } else if (starts(&s, "<?")) {
                        s.i += 2;
                        if (!skip_past(&s, "?>"))
                                break;
                } else if (starts(&s, "<!")) {
                        break;          /* a DOCTYPE: libxml2 stops there too */
                } else if (starts(&s, "</")) {
                        s.i += 2;
                        if (!skip_past(&s, ">"))
                                break;
                } else {
                        if (++elements > x->max_elements) {
                                show_name(lt + 1, (size_t)(s.p + s.len - lt - 1), name);
                                return refuse(x, diag_add(x->diags, DIAG_ERROR, x->file, s.line,
                                              NULL, "more than %zu elements, the limit of "
                                              "elements in a document, at <%s>; document refused",
                                              x->max_elements, name));
                        }
                        r = start_tag(x, &s);
                        if (r < 0)
                                return r;
                        if (r > 0)
                                break;
                }
        }
        return 0;
}
