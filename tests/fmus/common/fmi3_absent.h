/*
 * fmi3_absent: the get and set functions of the types a hand-written FMI
 * 3.0 model has none of (Float32 to String, and Binary), each refusing
 * with the includer's fail(instance, function, why). Included once, by a
 * model source that defines its own Float64 functions and a static
 * fmi3Status fail(...) taking its instance pointer first.
 */
#ifndef FMUD_TEST_FMU_FMI3_ABSENT_H
#define FMUD_TEST_FMU_FMI3_ABSENT_H

#define NO_GET(T, CT) \
        fmi3Status fmi3Get##T(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr, \
                              CT values[], size_t nValues) \
        { \
                (void) vr; (void) nvr; (void) values; (void) nValues; \
                return fail(instance, "fmi3Get" #T, "the model has no such variables"); \
        }
#define NO_SET(T, CT) \
        fmi3Status fmi3Set##T(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr, \
                              const CT values[], size_t nValues) \
        { \
                (void) vr; (void) nvr; (void) values; (void) nValues; \
                return fail(instance, "fmi3Set" #T, "the model has no such variables"); \
        }
#define NO_TYPE(T, CT) NO_GET(T, CT) NO_SET(T, CT)

NO_TYPE(Float32, fmi3Float32)
NO_TYPE(Int8, fmi3Int8)
NO_TYPE(UInt8, fmi3UInt8)
NO_TYPE(Int16, fmi3Int16)
NO_TYPE(UInt16, fmi3UInt16)
NO_TYPE(Int32, fmi3Int32)
NO_TYPE(UInt32, fmi3UInt32)
NO_TYPE(Int64, fmi3Int64)
NO_TYPE(UInt64, fmi3UInt64)
NO_TYPE(Boolean, fmi3Boolean)
#ifndef ME_STRING_INPUT
NO_TYPE(String, fmi3String)
#endif

#undef NO_TYPE
#undef NO_SET
#undef NO_GET

fmi3Status fmi3GetBinary(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                         size_t sizes[], fmi3Binary values[], size_t nValues)
{
        (void) vr; (void) nvr; (void) sizes; (void) values; (void) nValues;
        return fail(instance, "fmi3GetBinary", "the model has no such variables");
}

fmi3Status fmi3SetBinary(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                         const size_t sizes[], const fmi3Binary values[], size_t nValues)
{
        (void) vr; (void) nvr; (void) sizes; (void) values; (void) nValues;
        return fail(instance, "fmi3SetBinary", "the model has no such variables");
}

#endif
