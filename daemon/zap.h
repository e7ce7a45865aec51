/*
 * zap: who may connect over tcp. A ZeroMQ Authentication Protocol
 * (RFC 27) handler that admits a CURVE client only when its public key is
 * listed in the authorized_keys file; every other request is refused.
 *
 * DESIGN: libzmq admits every CURVE client whose handshake succeeds when
 * no handler listens on inproc://zeromq.zap.01, so zap_start() binds the
 * handler before it returns and the caller must not bind a tcp socket
 * unless it succeeded. The keys are reloaded by zap_reload() (SIGHUP);
 * a file that fails to parse leaves the previous list in force.
 *
 * Key files (shared with `fmuctl keygen`): a secret key file holds the
 * 40-character Z85 secret key on one line, a public key file the
 * 40-character Z85 public key on one line; authorized_keys holds one
 * Z85 public key per line, optionally followed by the key's role
 * (observer, operator or admin; none: operator, access.h), blank lines
 * and '#' comments allowed. The role is looked up at every request
 * (zap_role()): a reload changes it for connected clients too, and a key
 * removed by a reload is refused everything.
 *
 * Threads: the handler runs on its own thread with its own REP socket;
 * the key list is shared with the caller's thread under a mutex.
 * zap_start(), zap_reload() and zap_stop() from one thread.
 */
#ifndef FMUD_DAEMON_ZAP_H
#define FMUD_DAEMON_ZAP_H

#include <stddef.h>
#include <stdint.h>

#define ZAP_KEY_Z85_LEN 40
#define ZAP_MAX_KEYS    65536

struct zap;

/* Bind the handler in zctx and start its thread. Returns 0 or -errno with err. */
int zap_start(void *zctx, const char *keys_path, struct zap **ret, char *err, size_t errlen);
/* Re-read keys_path. 0, or -errno with err (the old list stays). */
int zap_reload(struct zap *z, const char *keys_path, char *err, size_t errlen);
/* Number of keys admitted now. */
size_t zap_count(struct zap *z);
/* The role of the key whose Z85 text is z85; ACCESS_NONE when it is not admitted now. */
int zap_role(struct zap *z, const char *z85);
/* Stop the thread and close its socket. NULL is a no-op. */
void zap_stop(struct zap *z);

/*
 * Read a list of public keys (authorized_keys format). *ret is malloc'ed,
 * n 32-byte keys. Returns 0 or -errno with err naming file:line.
 */
int zap_read_keys(const char *path, uint8_t (**ret)[32], size_t *ret_n, char *err, size_t errlen);
/* The same with each key's role (enum access_role) in *ret_roles (malloc'ed, n of them). */
int zap_read_keys_roles(const char *path, uint8_t (**ret)[32], uint8_t **ret_roles, size_t *ret_n,
                        char *err, size_t errlen);
/*
 * Read a secret key file into ret (41 bytes: Z85 text, NUL-terminated).
 * Refuses (-EPERM) a file that group or other may read. 0 or -errno with err.
 */
int zap_read_secret(const char *path, char ret[ZAP_KEY_Z85_LEN + 1], char *err, size_t errlen);

/*
 * Make s a CURVE server with the secret key in secret_key_file, in the
 * "fmud" ZAP domain (the handler zap_start() bound: every connection is
 * checked against authorized_keys); the key is wiped after use. 0; the
 * key file's -errno with err; or libzmq's -errno with err unset.
 */
int zap_curve_server(void *s, const char *secret_key_file, char *err, size_t errlen);

#endif
