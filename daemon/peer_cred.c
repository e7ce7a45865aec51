/* peer_cred: the uid and gid in a libzmq ipc peer address (peer_cred.h). */
#include "peer_cred.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* The decimal number in s[0..len) into *ret, at most max; false when it is not one. */
static bool number(const char *s, size_t len, uint64_t max, uint64_t *ret)
{
        uint64_t v = 0;

        if (len == 0 || len > 20)
                return false;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return false;
                if (v > (max - (uint64_t)(s[i] - '0')) / 10)
                        return false;
                v = v * 10 + (uint64_t)(s[i] - '0');
        }
        *ret = v;
        return true;
}

int peer_cred_parse(const char *addr, uid_t *uid, gid_t *gid)
{
        const char *f[4];       /* the separators before uid, gid, pid, and the end */
        uint64_t u, g, pid;
        size_t len;

        if (!addr)
                return -EINVAL;
        len = strnlen(addr, 1024);
        if (len == 1024)
                return -EINVAL;
        f[3] = addr + len;
        for (int i = 2; i >= 0; i--) {
                const char *p = f[i + 1];

                while (p > addr && p[-1] != ':')
                        p--;
                if (p == addr)
                        return -EINVAL;
                f[i] = p - 1;
        }
        if (!number(f[0] + 1, (size_t)(f[1] - f[0] - 1), (uid_t)-1 - 1, &u) ||
            !number(f[1] + 1, (size_t)(f[2] - f[1] - 1), (gid_t)-1 - 1, &g) ||
            !number(f[2] + 1, (size_t)(f[3] - f[2] - 1), INT32_MAX, &pid))
                return -EINVAL;
        *uid = (uid_t)u;
        *gid = (gid_t)g;
        return 0;
}
