/*
 * engine: the one header a program outside the engine includes (fmuctl's
 * `run --local` and `inspect`): a scenario loaded and checked
 * (scenario.h), and run from its file to a results file (run.h).
 *
 * DESIGN: the engine's parts (instance, scenario, master, record, run)
 * include each other freely; a program built on the engine sees them only
 * through this header, so the client never depends on the engine's
 * insides (docs/ARCHITECTURE.md, checked by scripts/check-layers).
 */
#ifndef FMUD_ENGINE_ENGINE_H
#define FMUD_ENGINE_ENGINE_H

#include "engine/record/mat4_csv.h"
#include "engine/run/run.h"
#include "engine/scenario/scenario.h"

#endif
