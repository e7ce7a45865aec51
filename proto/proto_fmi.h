/*
 * proto_fmi: the operations of FMI-level instances (PROTOCOL.md
 * "instantiate", "fmi", "free", "detach"): a remote master creates
 * instances in the daemon and calls their FMI functions in batches.
 *
 * DESIGN: one fmi request is an array of calls, each naming its instance
 * and FMI function with that function's arguments; everything a call
 * carries is checked here for shape and bounded (calls per batch, value
 * references per call, bytes of a serialized state), so the daemon's
 * session thread only meets well-formed calls and refuses by the FMU's
 * rules alone. One call sets or gets values of one type, as the FMI
 * function it stands for (fmi3SetFloat64 ...). Included by proto.h.
 */
#ifndef FMUD_PROTO_PROTO_FMI_H
#define FMUD_PROTO_PROTO_FMI_H

#include <stdbool.h>
#include <stdint.h>

#define PROTO_FMI_MAX_CALLS     1024u           /* calls of one fmi request */
#define PROTO_FMI_MAX_VALUES    4096u           /* value references of one call */
#define PROTO_FMI_MAX_BIN       (1u << 20)      /* bytes of one Binary value or serialized state */
#define PROTO_FMI_MAX_ELEMENTS  (1u << 20)      /* values (array elements) of one set or get */

/* instantiate: a new instance of an FMU (by path or uploaded content) in its own worker. */
struct proto_instantiate {
        struct proto_str fmu;           /* a .fmu, absolute */
        struct proto_str content;       /* instead: the SHA-256 of an uploaded .fmu */
        struct proto_str instance_name; /* empty: the model's identifier */
        struct proto_str interface;     /* "cs" or empty (cs) */
        struct proto_str sandbox;       /* "strict", "basic", "off" or empty: the daemon's */
        bool visible, logging_on, event_mode_used, early_return_allowed;
        bool transient;                 /* freed when its connection stops renewing the lease */
};
void proto_instantiate_encode(struct pw *w, uint64_t id, const struct proto_instantiate *a);
int proto_instantiate_decode(const struct pv *args, struct proto_instantiate *ret, char *err,
                             size_t errlen);

/* free {instance}; detach {session} or {instance} (the same numbers). */
struct proto_instance_ref {
        uint64_t instance;
};
void proto_free_encode(struct pw *w, uint64_t id, uint64_t instance);
int proto_free_decode(const struct pv *args, struct proto_instance_ref *ret, char *err,
                      size_t errlen);
void proto_detach_encode(struct pw *w, uint64_t id, uint64_t session);
int proto_detach_decode(const struct pv *args, struct proto_instance_ref *ret, char *err,
                        size_t errlen);

enum proto_fmi_fn {
        PROTO_FMI_SET,
        PROTO_FMI_GET,
        PROTO_FMI_DO_STEP,
        PROTO_FMI_ENTER_INIT,
        PROTO_FMI_EXIT_INIT,
        PROTO_FMI_ENTER_EVENT,
        PROTO_FMI_ENTER_STEP,
        PROTO_FMI_UPDATE_DISCRETE,
        PROTO_FMI_GET_STATE,
        PROTO_FMI_SET_STATE,
        PROTO_FMI_FREE_STATE,
        PROTO_FMI_SERIALIZE,
        PROTO_FMI_DESERIALIZE,
        PROTO_FMI_DIRECTIONAL,
        PROTO_FMI_ADJOINT,
        PROTO_FMI_RESET,
        PROTO_FMI_TERMINATE,
        PROTO_FMI_ENTER_CONFIG,
        PROTO_FMI_EXIT_CONFIG,
        PROTO_FMI_FN_COUNT,
};
/* The wire name: "set", "doStep", ...; NULL out of range. */
const char *proto_fmi_fn_name(enum proto_fmi_fn fn);

/* The type of a set or get, as the FMI 3.0 function names it (section 2.2.6.2). */
enum proto_fmi_type {
        PROTO_FMI_FLOAT32,
        PROTO_FMI_FLOAT64,
        PROTO_FMI_INT8,
        PROTO_FMI_UINT8,
        PROTO_FMI_INT16,
        PROTO_FMI_UINT16,
        PROTO_FMI_INT32,
        PROTO_FMI_UINT32,
        PROTO_FMI_INT64,
        PROTO_FMI_UINT64,
        PROTO_FMI_BOOLEAN,
        PROTO_FMI_STRING,
        PROTO_FMI_BINARY,
        PROTO_FMI_TYPE_COUNT,
};
/* "Float64", ...; NULL out of range. */
const char *proto_fmi_type_name(enum proto_fmi_type t);

/* One call of a batch; the arrays are the request's, checked (borrowed). */
struct proto_fmi_call {
        uint64_t instance;
        enum proto_fmi_fn fn;
        enum proto_fmi_type type;       /* set, get */
        uint32_t n_vrs;                 /* set, get: vrs; derivatives: unknowns */
        const struct pv *vrs;           /* array of value references */
        const struct pv *values;        /* set: n_values values of type (Binary: bin) */
        /*
         * set, get: nValues, the values of all vrs together (an array
         * variable has one per element; FMI 3.0 section 2.2.6.2); get's
         * "nValues", else n_vrs; set's the count of values.
         */
        uint32_t n_values;
        bool has_n_values;
        double t, h;                    /* doStep: currentCommunicationPoint, step size */
        bool no_set_prior;              /* doStep: noSetFMUStatePriorToCurrentPoint */
        bool has_tolerance, has_start, has_stop;        /* enterInitializationMode */
        double tolerance, start, stop;
        uint64_t state;                 /* an FMU state's handle; getFMUState: 0 new */
        struct proto_str bytes;         /* deserializeFMUState */
        uint32_t n_knowns;              /* derivatives: knowns and seed */
        const struct pv *knowns, *seed;
};
struct proto_fmi {
        uint32_t n;
        const struct proto_fmi_call *calls;
};
/* The calls of an fmi request (args {calls: [...]}); *mem holds them (free()). */
int proto_fmi_decode(const struct pv *args, struct proto_fmi *ret, void **mem, char *err,
                     size_t errlen);

#endif
