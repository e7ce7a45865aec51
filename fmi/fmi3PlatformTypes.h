/*
 * fmi3PlatformTypes.h: the FMI 3.0 base types.
 *
 * Written from the definitions in the FMI 3.0 standard, section 2.2.3
 * ("Platform Dependent Definitions"). Binary FMUs and importers must agree
 * on these types, so they are the ABI: do not change a definition.
 */
#ifndef fmi3PlatformTypes_h
#define fmi3PlatformTypes_h

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Opaque handles. */
typedef void *fmi3Instance;             /* an FMU instance */
typedef void *fmi3InstanceEnvironment;  /* importer data passed to callbacks */
typedef void *fmi3FMUState;             /* a saved internal FMU state */
typedef uint32_t fmi3ValueReference;    /* handle of a variable's value */

/* Base types. */
typedef float fmi3Float32;
typedef double fmi3Float64;
typedef int8_t fmi3Int8;
typedef uint8_t fmi3UInt8;
typedef int16_t fmi3Int16;
typedef uint16_t fmi3UInt16;
typedef int32_t fmi3Int32;
typedef uint32_t fmi3UInt32;
typedef int64_t fmi3Int64;
typedef uint64_t fmi3UInt64;
typedef bool fmi3Boolean;               /* fmi3True or fmi3False */
typedef char fmi3Char;
typedef const fmi3Char *fmi3String;     /* '\0' terminated, UTF-8 */
typedef uint8_t fmi3Byte;
typedef const fmi3Byte *fmi3Binary;     /* length passed out of band */
typedef bool fmi3Clock;                 /* fmi3ClockActive or fmi3ClockInactive */

#define fmi3True true
#define fmi3False false

#define fmi3ClockActive true
#define fmi3ClockInactive false

#endif /* fmi3PlatformTypes_h */
