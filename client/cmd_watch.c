/*
 * fmuctl watch SESSION [NAME...] [--every N] [--every-point] [--telemetry]:
 * follow variables live from a subscription until the session ends or
 * Ctrl-C. On a terminal a table redrawn in place (at most ~20 times a
 * second); otherwise one line per sample: the time, the point, its wall
 * clock (monoNs, realNs) and flags, then each value, separated by spaces,
 * after a header line with the names; with --json one JSON object per
 * sample and line (watch_fmt.h). --telemetry follows a paced session's
 * telemetry instead, one line a second.
 *
 * PUB is lossy (a late subscriber misses what came before), so the end of
 * the session is also checked by asking its status about once a second.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "watch_fmt.h"

enum { O_EVERY = 1300, O_EVERY_POINT, O_TELEMETRY };

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
        (void)sig;
        interrupted = 1;
}

struct view {
        bool tty;
        bool json;                      /* one JSON object per line */
        bool header;                    /* printed (not tty) */
        unsigned lines;                 /* on the terminal (tty) */
        char *frame;                    /* the latest table, not yet drawn (tty) */
        size_t frame_len;
        unsigned frame_lines;
        struct timespec drawn;
};

/* Render the table for s into w->frame (drawn later by flush()). */
static void render(struct view *w, uint64_t session, const struct proto_sample *s)
{
        char val[256], name[128], flags[96];
        FILE *f;

        free(w->frame);
        w->frame = NULL;
        f = open_memstream(&w->frame, &w->frame_len);
        if (!f)
                return;
        fprintf(f, "\rsession %llu  t = %-14.9g point %llu  monoNs %llu realNs %llu  %s\033[K\n",
                (unsigned long long)session, s->time, (unsigned long long)s->point,
                (unsigned long long)s->mono_ns, (unsigned long long)s->real_ns,
                watch_flags(s->flags, flags, sizeof(flags)));
        for (uint32_t i = 0; i < s->n; i++) {
                if (s->names)
                        fmud_str(s->names[i], name, sizeof(name));
                else
                        snprintf(name, sizeof(name), "#%u", i);
                for (char *p = name; *p; p++)
                        if (*p < 0x20 || *p >= 0x7f)
                                *p = '?';
                fmud_value_format(&s->values->a.items[i], val, sizeof(val));
                fprintf(f, "  %-32s %s\033[K\n", name, val);
        }
        if (fclose(f) != 0) {
                free(w->frame);
                w->frame = NULL;
                return;
        }
        w->frame_lines = s->n + 1;
}

/* Draw the pending frame over the previous one. */
static void flush(struct view *w)
{
        if (!w->frame)
                return;
        if (w->lines)
                printf("\033[%uA", w->lines);
        fwrite(w->frame, 1, w->frame_len, stdout);
        fflush(stdout);
        w->lines = w->frame_lines;
        free(w->frame);
        w->frame = NULL;
        clock_gettime(CLOCK_MONOTONIC, &w->drawn);
}

static void print_line(struct view *w, const struct proto_sample *s)
{
        char val[256], flags[96];

        if (w->json) {
                watch_json_sample(s);
                return;
        }
        if (!w->header) {
                fputs("time point monoNs realNs flags", stdout);
                for (uint32_t i = 0; i < s->n; i++) {
                        putchar(' ');
                        if (s->names)
                                cli_put_clean(stdout, s->names[i].ptr, s->names[i].len);
                        else
                                printf("#%u", i);
                }
                putchar('\n');
                w->header = true;
        }
        {
                struct pv t = { .type = PV_FLOAT, .f = s->time };

                fmud_value_format(&t, val, sizeof(val));
                fputs(val, stdout);
        }
        printf(" %llu %llu %llu %s", (unsigned long long)s->point, (unsigned long long)s->mono_ns,
               (unsigned long long)s->real_ns, watch_flags(s->flags, flags, sizeof(flags)));
        for (uint32_t i = 0; i < s->n; i++) {
                fmud_value_format(&s->values->a.items[i], val, sizeof(val));
                printf(" %s", val);
        }
        putchar('\n');
        fflush(stdout);
}

static int end_code(enum proto_state s, double t)
{
        const char *n = proto_state_name(s);

        fprintf(stderr, "fmuctl watch: session %s at t = %.9g\n", n ? n : "ended", t);
        return s == PROTO_STATE_FAULTED ? FMUCTL_EXIT_FAULT : FMUCTL_EXIT_OK;
}

struct watch_follow {
        struct view *w;
        uint64_t session;
        struct cli_follow *f;
};

/* One message: a due redraw, then the session's telemetry or sample shown. */
static int on_msg(void *ctx, int r, const struct fmud_msg *m)
{
        struct watch_follow *wf = ctx;
        struct view *w = wf->w;

        if (w->frame && (r != 0 || cli_since(&w->drawn) >= 0.05))
                flush(w);
        if (r == 0 && m->kind == FMUD_MSG_TELEMETRY && m->telemetry.session == wf->session) {
                if (w->json)
                        watch_json_telemetry(&m->telemetry);
                else
                        watch_text_telemetry(&m->telemetry);
        }
        if (r == 0 && m->kind == FMUD_MSG_SAMPLE && m->sample.session == wf->session) {
                if (w->tty && !w->json)
                        render(w, wf->session, &m->sample);
                else
                        print_line(w, &m->sample);
        }
        /* A table waiting to be drawn: wake up soon for it. */
        wf->f->wait_ms = w->frame ? 50 : 200;
        return 0;
}

/* The session's samples dropped on the way so far (every subscription's), or 0. */
static uint64_t dropped(struct cli *a, const struct proto_target *t)
{
        struct proto_session_status st;

        return fmud_status(a->c, t->session, &st) == 0 ? st.samples_dropped : 0;
}

/* Follow until the end; returns the exit code. */
static int follow(struct cli *a, const struct proto_target *t, struct view *w)
{
        struct cli_follow f = { .wait_ms = w->frame ? 50 : 200, .on_msg = on_msg,
                                .stop = &interrupted };
        struct watch_follow wf = { w, t->session, &f };
        uint64_t before = dropped(a, t), after;
        int r;

        f.ctx = &wf;
        r = cli_follow(a, t, &f);

        if (r == 1) {
                /* A loss at the very end has no later sample to carry its flag: said here. */
                after = dropped(a, t);
                if (after > before)
                        fprintf(stderr, "fmuctl watch: %llu samples of session %llu were dropped "
                                "while watching (a subscriber did not keep up); some shown rows "
                                "may be missing\n", (unsigned long long)(after - before),
                                (unsigned long long)t->session);
                return end_code(f.state, f.time);
        }
        if (r == FMUD_E_REFUSED && fmud_errcode(a->c) == PROTO_E_NO_SESSION) {
                fprintf(stderr, "fmuctl watch: session %llu is gone\n",
                        (unsigned long long)t->session);
                return FMUCTL_EXIT_OK;
        }
        if (r < 0)
                return cli_fail(a, r, "watch session %llu", (unsigned long long)t->session);
        return FMUCTL_EXIT_OK;
}

static const struct cli_opt opts[] = {
        { "every", O_EVERY, "N", "every N-th sample (default 1)" },
        { "every-point", O_EVERY_POINT, NULL, "every communication point, not only the recorded" },
        { "telemetry", O_TELEMETRY, NULL, "a paced session's telemetry instead, once a second" },
        { 0 },
};

static const struct cli_cmd def = {
        .name = "watch",
        .usage = "SESSION [NAME...] [options]",
        .about = "Follows variables (none named: every recorded column) live until the\n"
                 "session ends or Ctrl-C: a table redrawn in place on a terminal, one\n"
                 "line per sample otherwise (time, point, monoNs, realNs, flags, then the\n"
                 "values); --json: one JSON object per line. --telemetry follows a paced\n"
                 "session's lateness, overruns and service times instead.",
        .opts = { opts },
        .shared = CLI_SHARED_ALL,
};

int cmd_watch(int argc, char **argv)
{
        struct cli a = { .def = &def };
        struct sigaction sa = { .sa_handler = on_sigint };
        struct view w = { .tty = isatty(STDOUT_FILENO) };
        struct proto_target t;
        char topic[FMUD_MAX_TOPIC + 1];
        uint64_t every = 1;
        bool every_point = false, telemetry = false;
        int c, code = 0;

        while (code == 0 && (c = cli_getopt(&a, argc, argv)) > 0)
                if (c == O_EVERY)
                        code = cli_count(&a, "--every", optarg, &every);
                else if (c == O_EVERY_POINT)
                        every_point = true;
                else if (c == O_TELEMETRY)
                        telemetry = true;
        if (c < 0)
                return FMUCTL_EXIT_USAGE;
        if (code)
                return code;
        if (a.help)
                return cli_help(&a, stdout);
        if (optind >= argc)
                return cli_usage_error(&a, "expected SESSION");
        if (telemetry && (optind + 1 < argc || every_point || every != 1))
                return cli_usage_error(&a, "--telemetry takes no NAME, --every or --every-point");
        w.json = a.json;
        code = cli_target(&a, argv[optind], &t);
        if (code == 0)
                code = cli_open(&a);
        if (code)
                return code;
        /* No SA_RESTART: Ctrl-C must end the wait in zmq_poll. */
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        c = fmud_events(a.c, true);
        topic[0] = '\0';
        if (c == 0 && telemetry)
                c = fmud_telemetry(a.c, t.session, true);
        else if (c == 0)
                c = fmud_subscribe_every(a.c, &t, (const char *const *)argv + optind + 1,
                                         (size_t)(argc - optind - 1), every, every_point, topic,
                                         sizeof(topic));
        if (c < 0) {
                code = cli_fail(&a, c, "watch session %s", argv[optind]);
        } else {
                code = follow(&a, &t, &w);
                flush(&w);
                /* Best effort: the session may be gone, and the daemon drops it anyway. */
                fmud_set_timeout(a.c, 1000);
                if (topic[0])
                        (void)fmud_unsubscribe(a.c, &t, topic);
        }
        cli_close(&a);
        return code;
}
