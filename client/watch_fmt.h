/*
 * watch_fmt: how `fmuctl watch` shows a sample's stamps and flags and a
 * session's telemetry, as text and as JSON lines (one compact object per
 * message, so a reader can follow the stream line by line).
 */
#ifndef FMUD_CLIENT_WATCH_FMT_H
#define FMUD_CLIENT_WATCH_FMT_H

#include <stddef.h>
#include <stdint.h>

#include "client/fmud.h"

/* The flags' names joined by ',' ("first,dropped"), or "-" when none; returns buf. */
const char *watch_flags(uint32_t flags, char *buf, size_t len);
/* One line: {"session", "generation", "time", "point", "monoNs", "realNs", "flags", "values"}. */
void watch_json_sample(const struct proto_sample *s);
/* One line: the telemetry, under its wire keys. */
void watch_json_telemetry(const struct proto_telemetry *t);
/* One line of text: time, points, factor, lateness, overruns, then instance=serviceUsMean. */
void watch_text_telemetry(const struct proto_telemetry *t);

#endif
