/*
 * fmu_names: the names of platforms, interfaces and integrators (fmu.h),
 * apart from the import so that a worker, which parses names but never
 * opens an archive, links neither libzip nor libcrypto: each shared
 * library is a cost paid at every worker's start.
 */
#include "fmu.h"

#include <errno.h>
#include <string.h>

const char *fmu_platform_dir(enum md_fmi_version fmi)
{
        /* FMI 3.0 section 2.5.1.4.1 platform tuples; FMI 2.0 used fixed names. */
#if defined(__x86_64__)
        return fmi == MD_FMI3 ? "x86_64-linux" : "linux64";
#elif defined(__aarch64__)
        return fmi == MD_FMI3 ? "aarch64-linux" : "aarch64-linux";
#elif defined(__i386__)
        return fmi == MD_FMI3 ? "x86-linux" : "linux32";
#else
#error "unknown platform: add its FMI platform tuple"
#endif
}

const char *fmu_integrator_name(enum fmu_integrator i)
{
        return i == FMU_INTEGRATOR_ADAMS ? "adams" : "bdf";
}

int fmu_integrator_parse(const char *s, size_t len, enum fmu_integrator *ret)
{
        if (len == 3 && !memcmp(s, "bdf", 3))
                *ret = FMU_INTEGRATOR_BDF;
        else if (len == 5 && !memcmp(s, "adams", 5))
                *ret = FMU_INTEGRATOR_ADAMS;
        else
                return -EINVAL;
        return 0;
}

int fmu_interface_parse(const char *s, size_t len, enum fmu_interface *ret)
{
        if (len == 2 && !memcmp(s, "cs", 2))
                *ret = FMU_IFACE_CS;
        else if (len == 2 && !memcmp(s, "me", 2))
                *ret = FMU_IFACE_ME;
        else if (len == 2 && !memcmp(s, "se", 2))
                *ret = FMU_IFACE_SE;
        else
                return -EINVAL;
        return 0;
}
