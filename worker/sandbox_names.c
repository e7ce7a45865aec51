/*
 * sandbox_names: the names of sandbox modes, layers and layer states
 * (sandbox.h), shared by fmud-worker and the daemon.
 */
#include <errno.h>
#include <string.h>

#include "worker/sandbox.h"

const char *sandbox_layer_name(enum sandbox_layer l)
{
        static const char *const names[SANDBOX_LAYER_COUNT] = {
                [SANDBOX_ENVIRONMENT] = "environment",
                [SANDBOX_LIMITS] = "limits",
                [SANDBOX_PRIVILEGES] = "privileges",
                [SANDBOX_NAMESPACES] = "namespaces",
                [SANDBOX_LANDLOCK] = "landlock",
                [SANDBOX_SECCOMP] = "seccomp",
        };

        return (unsigned)l < SANDBOX_LAYER_COUNT ? names[l] : "?";
}

const char *sandbox_mode_name(enum sandbox_mode m)
{
        switch (m) {
        case SANDBOX_OFF:
                return "off";
        case SANDBOX_BASIC:
                return "basic";
        case SANDBOX_STRICT:
                return "strict";
        }
        return "?";
}

const char *sandbox_state_name(enum sandbox_layer_state s)
{
        switch (s) {
        case SANDBOX_ACTIVE:
                return "active";
        case SANDBOX_UNAVAILABLE:
                return "unavailable";
        case SANDBOX_DISABLED:
                return "disabled";
        }
        return "?";
}

int sandbox_mode_parse(const char *s)
{
        if (!s)
                return -EINVAL;
        for (int m = SANDBOX_OFF; m <= SANDBOX_STRICT; m++)
                if (strcmp(s, sandbox_mode_name((enum sandbox_mode)m)) == 0)
                        return m;
        return -EINVAL;
}

int sandbox_layer_parse(const char *s)
{
        if (!s)
                return -EINVAL;
        for (int l = 0; l < SANDBOX_LAYER_COUNT; l++)
                if (strcmp(s, sandbox_layer_name((enum sandbox_layer)l)) == 0)
                        return l;
        return -EINVAL;
}
