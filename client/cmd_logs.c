/*
 * fmuctl logs SESSION [--follow]: what a session's FMUs logged. The
 * daemon keeps each session's last messages (PROTOCOL.md, logs): they are
 * printed, oldest first, one line each ("INSTANCE: level [category]:
 * message"); with --follow, the messages that come after them as well,
 * from the session's log topic, until the session ends or Ctrl-C.
 *
 * DESIGN: --follow subscribes before it asks for the kept messages, and
 * skips what it already printed by the messages' sequence numbers, so a
 * message logged in between is printed once; a gap in the numbers (PUB
 * lost messages, or the subscription was late) is filled from the kept
 * ones, and so is the end, so the output is whole and in order. PUB is lossy: the end of
 * the session is also checked by asking its status about once a second.
 * Everything printed is the FMU's text: cleaned of control characters
 * (cli_print_log()) whatever the daemon sent.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

enum { O_FOLLOW = 'f' };

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
        (void)sig;
        interrupted = 1;
}

/* The kept messages after *seq; *seq: the last printed. */
static int print_kept(struct cli *a, const struct proto_target *t, uint64_t *seq)
{
        struct proto_logs_result l;
        int r = fmud_logs(a->c, t, &l);

        if (r < 0)
                return r;
        for (uint32_t i = 0; i < l.n; i++)
                if (l.messages[i].seq > *seq) {
                        cli_print_log(stdout, &l.messages[i]);
                        *seq = l.messages[i].seq;
                }
        fflush(stdout);
        return 0;
}

struct logs_follow {
        struct cli *a;
        const struct proto_target *t;
        uint64_t *seq;
};

/* One message: the session's log lines in order, a gap filled from the kept ones. */
static int on_msg(void *ctx, int r, const struct fmud_msg *m)
{
        struct logs_follow *lf = ctx;
        struct proto_log l;

        if (r != 0 || m->kind != FMUD_MSG_LOG || m->log.session != lf->t->session)
                return 0;
        l = m->log;
        /* A gap in the numbers: PUB lost some; the kept ones fill it, in order. */
        if (l.seq > *lf->seq + 1) {
                r = print_kept(lf->a, lf->t, lf->seq);
                if (r < 0)
                        return r;
        }
        if (l.seq > *lf->seq) {
                cli_print_log(stdout, &l);
                fflush(stdout);
                *lf->seq = l.seq;
        }
        return 0;
}

static int follow(struct cli *a, const struct proto_target *t, uint64_t *seq)
{
        struct logs_follow lf = { a, t, seq };
        struct cli_follow f = { .wait_ms = 200, .on_msg = on_msg, .ctx = &lf, .stop = &interrupted };
        int r = cli_follow(a, t, &f);

        /* Ended: what the daemon kept of the end. */
        return r == 1 ? print_kept(a, t, seq) : r;
}

static const struct cli_opt opts[] = {
        { "follow", O_FOLLOW, NULL, "keep printing new messages until the session ends" },
        { 0 },
};

static const struct cli_cmd def = {
        .name = "logs",
        .usage = "SESSION [options]",
        .about = "Prints the messages the session's FMUs logged that the daemon keeps\n"
                 "(the last 256), oldest first: INSTANCE: level [category]: message.\n"
                 "With --follow, goes on printing new ones until the session ends or\n"
                 "Ctrl-C.",
        .opts = { opts },
        .shared = CLI_SHARED_CONN,
};

int cmd_logs(int argc, char **argv)
{
        struct cli a = { .def = &def };
        struct sigaction sa = { .sa_handler = on_sigint };
        struct proto_target t;
        bool follow_on = false;
        uint64_t seq = 0;
        int c, r, code;

        while ((c = cli_getopt(&a, argc, argv)) > 0)
                if (c == O_FOLLOW)
                        follow_on = true;
        if (c < 0)
                return FMUCTL_EXIT_USAGE;
        if (a.help)
                return cli_help(&a, stdout);
        if (optind != argc - 1)
                return cli_usage_error(&a, "expected SESSION");
        code = cli_target(&a, argv[optind], &t);
        if (code == 0)
                code = cli_open(&a);
        if (code)
                return code;
        /* No SA_RESTART: Ctrl-C must end the wait in zmq_poll. */
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        r = 0;
        if (follow_on) {
                r = fmud_events(a.c, true);
                if (r == 0)
                        r = fmud_logs_follow(a.c, t.session, true);
        }
        if (r == 0)
                r = print_kept(&a, &t, &seq);
        if (r == 0 && follow_on)
                r = follow(&a, &t, &seq);
        if (r == FMUD_E_REFUSED && follow_on && seq && fmud_errcode(a.c) == PROTO_E_NO_SESSION)
                r = 0;  /* unloaded while followed: its messages were printed */
        code = r < 0 && r != -EINTR ?
               cli_fail(&a, r, "get the logs of session %s", argv[optind]) :
               interrupted ? FMUCTL_EXIT_INTERRUPTED : FMUCTL_EXIT_OK;
        cli_close(&a);
        return code;
}
