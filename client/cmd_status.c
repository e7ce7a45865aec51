/*
 * fmuctl status [SESSION]: one session's state, progress, instances and
 * the sandbox layers of each worker; without SESSION the daemon's own.
 */
#include <math.h>
#include <stdio.h>

#include "cli.h"
#include "commands.h"
#include "fmt.h"

static void str(const char *label, struct proto_str s)
{
        printf("%-12s ", label);
        cli_put_clean(stdout, s.ptr, s.len);
        putchar('\n');
}

static const char *layer_state(enum proto_layer_state s)
{
        const char *n = proto_layer_state_name(s);

        return n ? n : "unknown";
}

static void print_inst(const struct proto_inst_status *in)
{
        char tol[FMT_NUM_MAX];

        printf("  %-20.*s %-20.*s %8lld %5u %10llu %12.2f %12.2f %12.2f %10s\n", (int)in->name.len,
               in->name.ptr, (int)in->fmu.len, in->fmu.ptr, (long long)in->pid, in->multirate,
               (unsigned long long)in->steps, in->step_us_mean, in->step_us_max,
               in->service_us_mean, in->has_tolerance ? fmt_double(tol, in->tolerance) : "-");
        if (in->has_integrator) {
                printf("    integrator ");
                cli_put_clean(stdout, in->integrator.ptr, in->integrator.len);
                printf(" (CVODE, Model Exchange): %llu steps, %llu rhs evaluations, %llu root "
                       "evaluations, %llu Jacobian evaluations, %llu events, %llu event iterations\n",
                       (unsigned long long)in->me_steps, (unsigned long long)in->me_rhs_evals,
                       (unsigned long long)in->me_root_evals, (unsigned long long)in->me_jac_evals,
                       (unsigned long long)in->me_events,
                       (unsigned long long)in->me_event_iterations);
        }
        if (in->partitions.len) {
                printf("    partitions ");
                cli_put_clean(stdout, in->partitions.ptr, in->partitions.len);
                printf(" (Scheduled Execution)\n");
        }
        if (in->fault.len) {
                printf("    fault: ");
                cli_put_clean(stdout, in->fault.ptr, in->fault.len);
                putchar('\n');
        }
        for (uint32_t i = 0; i < in->n_layers; i++) {
                const struct proto_layer *l = &in->layers[i];

                printf("    sandbox ");
                cli_put_clean(stdout, l->name.ptr, l->name.len);
                printf("%*s %-11s ", l->name.len < 12 ? 12 - (int)l->name.len : 0, "",
                       layer_state(l->state));
                cli_put_clean(stdout, l->detail.ptr, l->detail.len);
                putchar('\n');
        }
}

static void print_session(const struct proto_session_status *s)
{
        const char *st = proto_state_name(s->state);

        printf("%-12s %llu (generation %llu)\n", "session", (unsigned long long)s->session,
               (unsigned long long)s->generation);
        str("name", s->name);
        printf("%-12s %s\n", "state", st ? st : "unknown");
        if (s->message.len)
                str("message", s->message);
        printf("%-12s t = %.9g (%g .. %g, h = %g), %llu points (%llu extra), %llu events\n",
               "time", s->time, s->start, s->stop, s->step, (unsigned long long)s->points,
               (unsigned long long)s->extra_points, (unsigned long long)s->events);
        if (isinf(s->budget))
                printf("%-12s none\n", "budget");
        else if (s->budget > 0)
                printf("%-12s %g s per coupled step\n", "budget", s->budget);
        if (s->recorder.len) {
                printf("%-12s %llu rows (%.*s), %llu dropped", "results",
                       (unsigned long long)s->rows_recorded, (int)s->recorder.len,
                       s->recorder.ptr, (unsigned long long)s->rows_dropped);
                if (s->results.len) {
                        printf(", ");
                        cli_put_clean(stdout, s->results.ptr, s->results.len);
                }
                printf("\n");
        }
        if (s->out.len)
                str("out", s->out);
        if (s->samples_dropped)
                printf("%-12s %llu samples dropped (a subscriber did not keep up)\n", "samples",
                       (unsigned long long)s->samples_dropped);
        printf("%-12s real-time factor %.4gx, warp %g", "speed", s->real_time_factor, s->warp);
        if (s->warp > 0)
                printf(", lag %.3g s (worst %.3g s)", s->lag_s, s->lag_max_s);
        putchar('\n');
        if (s->warp > 0 || s->lateness.max_us > 0 || s->overruns)
                printf("%-12s p50 %.0f us, p99 %.0f us, p99.9 %.0f us, max %.0f us "
                       "(last 10 s: p99 %.0f us, max %.0f us); %llu overruns (policy %.*s)\n",
                       "lateness", s->lateness.p50_us, s->lateness.p99_us, s->lateness.p999_us,
                       s->lateness.max_us, s->lateness_window.p99_us, s->lateness_window.max_us,
                       (unsigned long long)s->overruns, (int)s->overrun.len,
                       s->overrun.ptr ? s->overrun.ptr : "");
        if (s->has_rig) {
                /* The daemon's words, printed clean as all its text is. */
                printf("%-12s ", "rig");
                cli_put_clean(stdout, s->rig.state.ptr ? s->rig.state.ptr : "",
                              s->rig.state.ptr ? s->rig.state.len : 0);
                fputs(", policy ", stdout);
                cli_put_clean(stdout, s->rig.policy.ptr ? s->rig.policy.ptr : "",
                              s->rig.policy.ptr ? s->rig.policy.len : 0);
                printf("%s; %llu writes applied, %llu late, %llu missing, %llu dropped, "
                       "%llu bad\n", s->rig.in_force ? " (in force)" : "",
                       (unsigned long long)s->rig.applied,
                       (unsigned long long)s->rig.late, (unsigned long long)s->rig.missing,
                       (unsigned long long)s->rig.dropped, (unsigned long long)s->rig.bad);
        }
        printf("%-12s %llu steps chained, %llu worker moves\n", "master",
               (unsigned long long)s->chained_steps, (unsigned long long)s->worker_moves);
        str("sandbox", s->sandbox);
        for (uint32_t i = 0; i < s->n_realtime; i++) {
                const struct proto_rt_option *o = &s->realtime[i];

                printf("%-12s ", "realtime");
                cli_put_clean(stdout, o->name.ptr, o->name.len);
                printf("%*s ", o->name.len < 16 ? 16 - (int)o->name.len : 0, "");
                cli_put_clean(stdout, o->state.ptr, o->state.len);
                if (o->instance.len) {
                        printf(" (instance ");
                        cli_put_clean(stdout, o->instance.ptr, o->instance.len);
                        putchar(')');
                }
                putchar('\n');
        }
        if (s->user.len)
                str("user", s->user);
        if (s->transient) {
                printf("%-12s transient, owner ", "lease");
                cli_put_clean(stdout, s->owner.ptr, s->owner.len);
                putchar('\n');
        } else {
                printf("%-12s none (persistent)\n", "lease");
        }
        printf("%-12s %u\n", "instances", s->n_insts);
        if (s->n_insts)
                printf("  %-20s %-20s %8s %5s %10s %12s %12s %12s %10s\n", "name", "model", "pid",
                       "rate", "steps", "step us mean", "step us max", "service us", "tolerance");
        /* Names are the daemon's: printed as given, but never as terminal controls. */
        for (uint32_t i = 0; i < s->n_insts; i++) {
                struct proto_inst_status in = s->insts[i];

                for (uint32_t k = 0; k < in.name.len; k++)
                        if (in.name.ptr[k] < 0x20 || in.name.ptr[k] >= 0x7f)
                                in.name.len = k;
                for (uint32_t k = 0; k < in.fmu.len; k++)
                        if (in.fmu.ptr[k] < 0x20 || in.fmu.ptr[k] >= 0x7f)
                                in.fmu.len = k;
                print_inst(&in);
        }
}

static void print_daemon(const struct proto_daemon_status *d)
{
        str("server", d->server);
        printf("%-12s %u\n", "protocol", d->version);
        printf("%-12s %.1f s\n", "uptime", d->uptime_s);
        printf("%-12s %u\n", "sessions", d->sessions);
        printf("%-12s %u\n", "workers", d->workers);
        str("sandbox", d->sandbox);
        if (d->mlock.len)
                str("mlock", d->mlock);
        /* The locked-memory budget of the workers (rtMlock): in use of it. */
        if (d->mlock_budget == UINT64_MAX)
                printf("%-12s %llu of unbounded bytes\n", "worker-mlock",
                       (unsigned long long)d->mlock_used);
        else
                printf("%-12s %llu of %llu bytes\n", "worker-mlock",
                       (unsigned long long)d->mlock_used, (unsigned long long)d->mlock_budget);
}

static const struct cli_cmd def = {
        .name = "status",
        .usage = "[SESSION] [options]",
        .about = "The session's state, time, speed, instances and each worker's sandbox\n"
                 "layers; without SESSION, the daemon's own status.",
        .shared = CLI_SHARED_ALL,
};

int cmd_status(int argc, char **argv)
{
        struct cli a = { .def = &def };
        struct proto_session_status s;
        struct proto_daemon_status d;
        struct proto_target t = { 0 };
        int c, code;

        if (cli_getopt(&a, argc, argv) != 0)
                return FMUCTL_EXIT_USAGE;
        if (a.help)
                return cli_help(&a, stdout);
        if (optind < argc - 1)
                return cli_usage_error(&a, "expected at most one SESSION");
        if (optind == argc - 1) {
                code = cli_target(&a, argv[optind], &t);
                if (code)
                        return code;
        }
        code = cli_open(&a);
        if (code)
                return code;
        if (t.session) {
                c = fmud_status(a.c, t.session, &s);
                if (c < 0) {
                        code = cli_fail(&a, c, "get the status of session %llu",
                                        (unsigned long long)t.session);
                } else if (t.generation && s.generation != t.generation) {
                        /* N@G: as the daemon refuses every other request naming it. */
                        fprintf(stderr, "fmuctl: cannot get the status of session %llu: "
                                "session %llu is at generation %llu, not %llu\n",
                                (unsigned long long)t.session, (unsigned long long)t.session,
                                (unsigned long long)s.generation,
                                (unsigned long long)t.generation);
                        code = FMUCTL_EXIT_INVALID;
                } else if (a.json)
                        cli_json_print(cli_json_session_status(&s));
                else
                        print_session(&s);
        } else {
                c = fmud_status_daemon(a.c, &d);
                if (c < 0)
                        code = cli_fail(&a, c, "get the daemon's status");
                else if (a.json)
                        cli_json_print(cli_json_daemon_status(&d));
                else
                        print_daemon(&d);
        }
        cli_close(&a);
        return code;
}
