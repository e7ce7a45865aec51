/*
 * host_telem: a paced session's telemetry on topic "t<session>": about
 * once a second of wall time while it runs, its lateness over the run and
 * over the window, overruns, real-time factor and each instance's step
 * and service times, under status's keys (proto_telemetry).
 *
 * DESIGN: sent from the session thread between stepping calls (a paced
 * run steps a point or a few per call), never during one, and through
 * opts.publish, which never blocks: the pacing is not disturbed. A
 * message lost on the way (the control thread's queue full, a subscriber
 * that does not keep up) is counted in the session's own pub_drops, and
 * every message carries the count so far ("dropped"). Unpaced runs send
 * none: they have no lateness, and telemetry would only slow them.
 *
 * Threads: session thread only.
 */
#include "daemon/host_int.h"
#include "daemon/pub_drops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TELEM_PERIOD_NS 1000000000ull

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct proto_lateness lateness(const struct lat_summary *l)
{
        return (struct proto_lateness){ (double)l->p50_us, (double)l->p99_us, (double)l->p999_us,
                                        (double)l->max_us };
}

static void send(struct hsess *hs)
{
        struct proto_inst_status *insts;
        struct proto_telemetry t;
        struct master_stats ms;
        char topic[32];
        struct pw w;
        void *buf;
        size_t len;

        master_get_stats(hs->m, &ms);
        insts = calloc(ms.n_insts ? ms.n_insts : 1, sizeof(*insts));
        if (!insts || pw_init(&w) < 0) {
                free(insts);
                pub_drops_add(hs->telem_drops);
                return;
        }
        t = (struct proto_telemetry){
                .session = hs->id, .generation = hs->generation, .time = master_time(hs->m),
                .points = ms.points, .real_time_factor = ms.rtf, .warp = hs->warp,
                .lateness = lateness(&ms.lateness),
                .lateness_window = lateness(&ms.lateness_window),
                .overruns = ms.overruns, .dropped = pub_drops_get(hs->telem_drops),
                .n_insts = (uint32_t)ms.n_insts, .insts = insts,
        };
        for (size_t i = 0; i < ms.n_insts && i < hs->sc->n_components; i++) {
                const struct master_inst_stats *is = &ms.insts[i];
                const char *name = hs->sc->components[i].name;
                uint64_t steps = 0, ns = 0;

                insts[i].name = (struct proto_str){ name, (uint32_t)strlen(name) };
                insts[i].steps = is->steps;
                insts[i].step_us_mean = is->steps ? (double)is->ns_total / (double)is->steps / 1e3 :
                                                    0;
                insts[i].step_us_max = (double)is->ns_max / 1e3;
                insts[i].service_us_mean =
                        inst_service_stats(session_inst(hs->s, i), &steps, &ns) == 0 && steps ?
                        (double)ns / (double)steps / 1e3 : 0;
        }
        proto_telemetry_encode(&w, &t);
        buf = pw_take(&w, &len);
        pw_fini(&w);
        free(insts);
        if (!buf) {
                pub_drops_add(hs->telem_drops);
                return;
        }
        snprintf(topic, sizeof(topic), "t%llu", (unsigned long long)hs->id);
        hs->h->opts.publish(hs->h->opts.publish_ctx, topic, buf, len,
                            pub_drops_ref(hs->telem_drops));
}

void htelem_tick(struct hsess *hs)
{
        uint64_t now;

        if (!hs->h->opts.publish || !hs->m || !(hs->warp > 0) ||
            hs->state != PROTO_STATE_RUNNING)
                return;
        now = now_ns();
        if (hs->telem_ns && now - hs->telem_ns < TELEM_PERIOD_NS)
                return;
        if (!hs->telem_drops && !(hs->telem_drops = pub_drops_new()))
                return;
        hs->telem_ns = now;
        send(hs);
}

void htelem_free(struct hsess *hs)
{
        pub_drops_unref(hs->telem_drops);
        hs->telem_drops = NULL;
}
