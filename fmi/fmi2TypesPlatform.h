/*
 * fmi2TypesPlatform.h: the FMI 2.0 base types.
 *
 * Written from the definitions in the FMI 2.0 standard, section 2.1.2
 * ("Platform Dependent Definitions"). FMI 2.0 FMUs in the wild are
 * compiled against exactly these types ("default" platform), so they are
 * the ABI: do not change a definition.
 */
#ifndef fmi2TypesPlatform_h
#define fmi2TypesPlatform_h

/* The platform these types describe (fmi2GetTypesPlatform). */
#define fmi2TypesPlatform "default"

/* Opaque handles. */
typedef void *fmi2Component;            /* an FMU instance */
typedef void *fmi2ComponentEnvironment; /* importer data passed to callbacks */
typedef void *fmi2FMUstate;             /* a saved internal FMU state */
typedef unsigned int fmi2ValueReference;

/* Base types. */
typedef double fmi2Real;
typedef int fmi2Integer;
typedef int fmi2Boolean;                /* fmi2True or fmi2False */
typedef char fmi2Char;
typedef const fmi2Char *fmi2String;     /* '\0' terminated, UTF-8 */
typedef char fmi2Byte;                  /* serialized FMU state */

#define fmi2True 1
#define fmi2False 0

#endif /* fmi2TypesPlatform_h */
