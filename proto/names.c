/*
 * names: the wire spellings of operations, error codes and states.
 * These tables are the protocol (PROTOCOL.md): never reorder a spelling.
 */
#include <string.h>

#include "proto/proto.h"
#include "proto/proto_int.h"

static const char *const op_names[PROTO_OP_COUNT] = {
        [PROTO_OP_HELLO] = "hello",
        [PROTO_OP_LOAD] = "load",
        [PROTO_OP_UNLOAD] = "unload",
        [PROTO_OP_LIST] = "list",
        [PROTO_OP_STATUS] = "status",
        [PROTO_OP_START] = "start",
        [PROTO_OP_PAUSE] = "pause",
        [PROTO_OP_RESUME] = "resume",
        [PROTO_OP_STOP] = "stop",
        [PROTO_OP_WARP] = "warp",
        [PROTO_OP_STEP] = "step",
        [PROTO_OP_RUN_UNTIL] = "run-until",
        [PROTO_OP_GET] = "get",
        [PROTO_OP_SET] = "set",
        [PROTO_OP_SUBSCRIBE] = "subscribe",
        [PROTO_OP_UNSUBSCRIBE] = "unsubscribe",
        [PROTO_OP_SNAPSHOT] = "snapshot",
        [PROTO_OP_RESTORE] = "restore",
        [PROTO_OP_LOGS] = "logs",
        [PROTO_OP_SHUTDOWN] = "shutdown",
        [PROTO_OP_VARS] = "vars",
        [PROTO_OP_RIG] = "rig",
        [PROTO_OP_PUT] = "put",
        [PROTO_OP_RESULTS] = "results",
        [PROTO_OP_SNAPSHOTS] = "snapshots",
        [PROTO_OP_SNAPSHOT_DELETE] = "snapshot-delete",
        [PROTO_OP_INSTANTIATE] = "instantiate",
        [PROTO_OP_FMI] = "fmi",
        [PROTO_OP_FREE] = "free",
        [PROTO_OP_DETACH] = "detach",
        [PROTO_OP_SNAPSHOT_EXPORT] = "snapshot-export",
        [PROTO_OP_SNAPSHOT_IMPORT] = "snapshot-import",
};

static const char *const err_names[PROTO_E_COUNT] = {
        [PROTO_E_BAD_REQUEST] = "bad-request",
        [PROTO_E_VERSION] = "version",
        [PROTO_E_UNKNOWN_OP] = "unknown-op",
        [PROTO_E_NO_SESSION] = "no-session",
        [PROTO_E_STALE] = "stale",
        [PROTO_E_STATE] = "state",
        [PROTO_E_NO_VARIABLE] = "no-variable",
        [PROTO_E_TYPE] = "type",
        [PROTO_E_DENIED] = "denied",
        [PROTO_E_INVALID] = "invalid",
        [PROTO_E_FAULT] = "fault",
        [PROTO_E_LIMIT] = "limit",
        [PROTO_E_UNSUPPORTED] = "unsupported",
        [PROTO_E_INTERNAL] = "internal",
        [PROTO_E_TOO_LARGE] = "too-large",
};

static const char *const state_names[PROTO_STATE_COUNT] = {
        [PROTO_STATE_LOADING] = "loading",
        [PROTO_STATE_LOADED] = "loaded",
        [PROTO_STATE_RUNNING] = "running",
        [PROTO_STATE_PAUSED] = "paused",
        [PROTO_STATE_FINISHED] = "finished",
        [PROTO_STATE_FAULTED] = "faulted",
        [PROTO_STATE_STOPPED] = "stopped",
};

static const char *const layer_state_names[PROTO_LAYER_STATE_COUNT] = {
        [PROTO_LAYER_ACTIVE] = "active",
        [PROTO_LAYER_UNAVAILABLE] = "unavailable",
        [PROTO_LAYER_OFF] = "off",
};

static int parse(const char *const *names, int n, const char *s, size_t len)
{
        if (!s)
                return -1;
        for (int i = 0; i < n; i++)
                if (strlen(names[i]) == len && !memcmp(names[i], s, len))
                        return i;
        return -1;
}

const char *proto_op_name(enum proto_op op)
{
        return (unsigned)op < PROTO_OP_COUNT ? op_names[op] : NULL;
}

int proto_op_parse(const char *s, size_t len)
{
        return parse(op_names, PROTO_OP_COUNT, s, len);
}

const char *proto_err_name(enum proto_err e)
{
        return (unsigned)e < PROTO_E_COUNT ? err_names[e] : NULL;
}

int proto_err_parse(const char *s, size_t len)
{
        return parse(err_names, PROTO_E_COUNT, s, len);
}

const char *proto_state_name(enum proto_state s)
{
        return (unsigned)s < PROTO_STATE_COUNT ? state_names[s] : NULL;
}

int proto_state_parse(const char *s, size_t len)
{
        return parse(state_names, PROTO_STATE_COUNT, s, len);
}

const char *proto_layer_state_name(enum proto_layer_state s)
{
        return (unsigned)s < PROTO_LAYER_STATE_COUNT ? layer_state_names[s] : NULL;
}

int proto_layer_state_parse(const char *s, size_t len)
{
        return parse(layer_state_names, PROTO_LAYER_STATE_COUNT, s, len);
}
