/*
 * Get, set and step by name on a host session (test_host_drv.h), with
 * the replies asserted, for the tests of values and reconfiguration.
 */
#ifndef FMUD_TEST_HOST_VALS_H
#define FMUD_TEST_HOST_VALS_H

#include <string.h>

#include "test_host_drv.h"

#define FT HDRV_FMU("Feedthrough")

#define PVF(x) ((struct pv){ .type = PV_FLOAT, .f = (x) })
#define PVI(x) ((struct pv){ .type = PV_INT, .i = (x) })
#define PVU(x) ((struct pv){ .type = PV_UINT, .u = (x) })
#define PVB(x) ((struct pv){ .type = PV_BOOL, .b = (x) })
#define PVS(x) ((struct pv){ .type = PV_STR, .s = { (x), (uint32_t)strlen(x) } })

struct proto_str hv_str(const char *s);
/* Get names; rep->r.result holds {values: [...]}; with v, the values decoded (free(*mem)). */
void hv_get(struct hdrv *d, uint64_t s, const char *const *names, uint32_t n, struct hrep *rep,
            struct proto_get_result *v, void **mem);
/* One set request of n named values; its reply in rep. */
void hv_set(struct hdrv *d, uint64_t s, const struct proto_named_value *nv, uint32_t n,
            struct hrep *rep);
void hv_set1(struct hdrv *d, uint64_t s, const char *name, const struct pv *value,
             struct hrep *rep);
void hv_set_ok(struct hdrv *d, uint64_t s, const char *name, struct pv value);
/* The refusal's message, asserting its code. */
const char *hv_set_err(struct hdrv *d, uint64_t s, const char *name, struct pv value,
                       enum proto_err code);
void hv_step(struct hdrv *d, uint64_t s, uint64_t n);

#endif
