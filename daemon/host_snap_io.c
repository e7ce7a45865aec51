/*
 * host_snap_io: a snapshot exported as a file and imported back, into the
 * same session or another session of the same scenario, in this daemon or
 * another (PROTOCOL.md "snapshot-export", "snapshot-import").
 *
 * DESIGN: export serializes every instance's FMU state of the snapshot
 * (fmi3SerializeFMUState, FMI 3.0 section 2.2.7.4) and the master's state
 * (master_saved_encode()) into one file (snap_blob.h), made on the first
 * export of the snapshot and kept with it until snapshot-delete or unload,
 * so that every piece a client asks for comes from the same bytes; pieces
 * are answered as results' are (bounded, by offset). Import reads a
 * complete upload (put) of such a file, checks all of it before anything
 * changes (the file's own checks, then every component of the session
 * present once with the same instantiationToken and archive SHA-256, then
 * the master state's shape), deserializes each state in its worker and
 * becomes a new snapshot of the session, which restore takes as any other.
 * An instance whose state cannot be deserialized frees those made before
 * it: the session is as it was.
 *
 * Threads: session thread only, the session loaded or paused.
 */
#include "daemon/host_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/snap_blob.h"
#include "daemon/upload.h"

static const char *inst_why(struct inst *inst, int r)
{
        return inst_message(inst)[0] ? inst_message(inst) : r < 0 ? strerror(-r) : "status Error";
}

/* Whether every FMU can serialize its state; -1, or the refusal with msg naming the one. */
static int check_serialize(const struct scenario *sc, const char *what, char *msg, size_t size)
{
        for (size_t i = 0; i < sc->n_components; i++) {
                const struct fmu *f = sc->components[i].fmu;

                if (!f || !f->md || !f->md->cs.can_serialize_fmu_state) {
                        snprintf(msg, size, "%s: instance '%s' cannot serialize its state (its FMU "
                                 "does not declare canSerializeFMUState)", what,
                                 sc->components[i].name);
                        return PROTO_E_UNSUPPORTED;
                }
        }
        return -1;
}

/* One instance's serialized state into *ret (malloc'ed); -1, or the refusal with msg. */
static int serialize_one(struct hsess *hs, size_t i, uint64_t handle, uint8_t **ret,
                         size_t *ret_len, char *msg, size_t size)
{
        struct inst *inst = session_inst(hs->s, i);
        const char *name = hs->sc->components[i].name;
        size_t len = 0;
        uint8_t *p;
        int r;

        r = inst_serialized_fmu_state_size(inst, handle, &len);
        if (r != INST_OK && r != INST_WARNING) {
                snprintf(msg, size, "snapshot-export: instance '%s': SerializedFMUStateSize "
                         "failed: %s", name, inst_why(inst, r));
                return PROTO_E_FAULT;
        }
        if (len > SNAP_BLOB_MAX_STATE) {
                snprintf(msg, size, "snapshot-export: instance '%s': a serialized state of %zu "
                         "bytes, over the limit of %u", name, len, SNAP_BLOB_MAX_STATE);
                return PROTO_E_LIMIT;
        }
        p = malloc(len ? len : 1);
        if (!p) {
                snprintf(msg, size, "out of memory");
                return PROTO_E_INTERNAL;
        }
        r = inst_serialize_fmu_state(inst, handle, p, len);
        if (r != INST_OK && r != INST_WARNING) {
                snprintf(msg, size, "snapshot-export: instance '%s': SerializeFMUState failed: "
                         "%s", name, inst_why(inst, r));
                free(p);
                return r == -EMSGSIZE ? PROTO_E_LIMIT : PROTO_E_FAULT;
        }
        *ret = p;
        *ret_len = len;
        return -1;
}

/* sn's file into sn->blob; -1, or the refusal with msg. */
static int make_blob(struct hsess *hs, struct hsnapshot *sn, char *msg, size_t size)
{
        const struct scenario *sc = hs->sc;
        size_t n = sc->n_components;
        struct snap_blob b = { .flags = sn->state == PROTO_STATE_PAUSED ? SNAP_BLOB_PAUSED : 0,
                               .time = sn->time, .n = (uint32_t)n };
        uint8_t **states = calloc(n ? n : 1, sizeof(*states)), *master = NULL;
        int code = -1, r;

        b.insts = calloc(n ? n : 1, sizeof(*b.insts));
        if (!states || !b.insts) {
                snprintf(msg, size, "out of memory");
                code = PROTO_E_INTERNAL;
                goto out;
        }
        for (size_t i = 0; code < 0 && i < n; i++) {
                const struct scenario_component *sc_c = &sc->components[i];
                const char *token = sc_c->fmu->md->instantiation_token;

                b.insts[i] = (struct snap_blob_inst){
                        .name = sc_c->name, .name_len = strlen(sc_c->name),
                        .token = token ? token : "", .token_len = token ? strlen(token) : 0 };
                memcpy(b.insts[i].sha256, sc_c->fmu->sha256, sizeof(b.insts[i].sha256));
                code = serialize_one(hs, i, sn->handles[i], &states[i], &b.insts[i].state_len,
                                     msg, size);
                b.insts[i].state = states[i];
        }
        if (code >= 0)
                goto out;
        r = master_saved_encode(hs->m, sn->saved, &master, &b.master_len);
        b.master = master;
        if (r == 0 && b.master_len > SNAP_BLOB_MAX_MASTER)
                r = -E2BIG;
        if (r == 0)
                r = snap_blob_encode(&b, &sn->blob, &sn->blob_len);
        if (r < 0) {
                snprintf(msg, size, "snapshot-export: %s", r == -ENOMEM ? "out of memory" :
                         "the snapshot's state is over the limits of its file");
                code = r == -ENOMEM ? PROTO_E_INTERNAL : PROTO_E_LIMIT;
        }
out:
        for (size_t i = 0; states && i < n; i++)
                free(states[i]);
        free(states);
        free(b.insts);
        free(master);
        return code;
}

void hsnap_export(struct hsess *hs, const struct hcmd *c, const struct pv *args)
{
        struct proto_snapshot_export a;
        struct hsnapshot *sn;
        char msg[HOST_MSG_MAX];
        uint64_t max, size;
        size_t slot;
        struct pw w;
        int code;

        if (proto_snapshot_export_decode(args, &a, msg, sizeof(msg)) < 0) {
                host_reply_error(hs->h, c->token, c->id, PROTO_E_BAD_REQUEST, "%s", msg);
                return;
        }
        slot = hsnap_find(hs, a.snapshot);
        sn = slot < HOST_MAX_SNAPSHOTS ? hs->snaps[slot] : NULL;
        if (!sn) {
                host_reply_error(hs->h, c->token, c->id, PROTO_E_INVALID,
                                 "no snapshot %llu in session %llu",
                                 (unsigned long long)a.snapshot, (unsigned long long)hs->id);
                return;
        }
        if (!sn->blob) {
                code = check_serialize(hs->sc, "snapshot-export", msg, sizeof(msg));
                if (code < 0)
                        code = make_blob(hs, sn, msg, sizeof(msg));
                if (code >= 0) {
                        host_reply_error(hs->h, c->token, c->id, (enum proto_err)code, "%s",
                                         msg);
                        return;
                }
        }
        size = sn->blob_len;
        if (a.offset > size) {
                host_reply_error(hs->h, c->token, c->id, PROTO_E_INVALID,
                                 "offset %llu is past the end of snapshot %llu (%llu bytes)",
                                 (unsigned long long)a.offset, (unsigned long long)a.snapshot,
                                 (unsigned long long)size);
                return;
        }
        max = a.has_max ? a.max : PROTO_RESULTS_CHUNK;
        if (max > size - a.offset)
                max = size - a.offset;
        if (pw_init(&w) < 0)
                return;
        proto_reply_ok_begin(&w, c->id);
        proto_results_result_encode(&w, &(struct proto_results_result){
                .data = sn->blob + a.offset, .len = (uint32_t)max, .offset = a.offset,
                .size = size, .done = a.offset + max == size,
                .format = { PROTO_SNAPSHOT_FORMAT, sizeof(PROTO_SNAPSHOT_FORMAT) - 1 } });
        host_reply_take(hs->h, c->token, c->id, &w);
        pw_fini(&w);
}

/* The upload named by a (a complete put) into *ret, at most max bytes; -1 or the refusal. */
static int read_upload(struct hsess *hs, const struct proto_snapshot_import *a, size_t max,
                       uint8_t **ret, size_t *ret_len, char *msg, size_t size)
{
        struct upload *u = hs->h->upload;
        char sha[65], *dir = NULL;
        int dfd = -1, fd = -1, code, r;
        struct stat st = { 0 };
        uint8_t *p = NULL;
        size_t got = 0;

        snprintf(sha, sizeof(sha), "%.*s", (int)a->content.len, a->content.ptr);
        r = upload_dir_new(u, &dir, &dfd);
        if (r < 0) {
                snprintf(msg, size, "snapshot-import: cannot make a directory for it: %s",
                         strerror(-r));
                return PROTO_E_INTERNAL;
        }
        code = upload_link(u, dfd, sha, "snapshot", "content", msg, size);
        if (code < 0) {
                fd = openat(dfd, "snapshot", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0 || fstat(fd, &st) < 0) {
                        snprintf(msg, size, "snapshot-import: cannot read the upload: %s",
                                 strerror(errno));
                        code = PROTO_E_INTERNAL;
                } else if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
                        snprintf(msg, size, "snapshot-import: the file has %llu bytes, over the "
                                 "%zu a snapshot of this session's %zu instances can have",
                                 (unsigned long long)st.st_size, max, hs->sc->n_components);
                        code = PROTO_E_INVALID;
                }
        }
        if (code < 0 && !(p = malloc(st.st_size ? (size_t)st.st_size : 1))) {
                snprintf(msg, size, "out of memory");
                code = PROTO_E_INTERNAL;
        }
        while (code < 0 && got < (size_t)st.st_size) {
                ssize_t n = pread(fd, p + got, (size_t)st.st_size - got, (off_t)got);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        snprintf(msg, size, "snapshot-import: cannot read the upload: %s",
                                 n < 0 ? strerror(errno) : "it is shorter than its size");
                        code = PROTO_E_INTERNAL;
                        break;
                }
                got += (size_t)n;
        }
        if (fd >= 0)
                close(fd);
        close(dfd);
        upload_dir_remove(u, dir);
        free(dir);
        if (code >= 0) {
                free(p);
                return code;
        }
        *ret = p;
        *ret_len = got;
        return -1;
}

/* Every component of the session once in b, of the same FMU: -1, or the refusal with msg. */
static int check_match(const struct scenario *sc, const struct snap_blob *b, size_t *order,
                       char *msg, size_t size)
{
        if (b->n != sc->n_components) {
                snprintf(msg, size, "snapshot-import: the snapshot holds %u instances, the "
                         "session %zu", b->n, sc->n_components);
                return PROTO_E_INVALID;
        }
        for (size_t i = 0; i < sc->n_components; i++) {
                const struct scenario_component *c = &sc->components[i];
                const char *token = c->fmu->md->instantiation_token ?
                                    c->fmu->md->instantiation_token : "";
                size_t len = strlen(c->name), k;

                for (k = 0; k < b->n; k++)
                        if (b->insts[k].name_len == len && !memcmp(b->insts[k].name, c->name, len))
                                break;
                if (k == b->n) {
                        snprintf(msg, size, "snapshot-import: instance '%s' is not in the "
                                 "snapshot", c->name);
                        return PROTO_E_INVALID;
                }
                if (b->insts[k].token_len != strlen(token) ||
                    memcmp(b->insts[k].token, token, strlen(token))) {
                        snprintf(msg, size, "snapshot-import: instance '%s' was saved from "
                                 "another FMU (its instantiationToken differs)", c->name);
                        return PROTO_E_INVALID;
                }
                if (strcmp(b->insts[k].sha256, c->fmu->sha256)) {
                        snprintf(msg, size, "snapshot-import: instance '%s' was saved from "
                                 "another FMU archive (SHA-256 %s, the session's %s)", c->name,
                                 b->insts[k].sha256, c->fmu->sha256);
                        return PROTO_E_INVALID;
                }
                order[i] = k;
        }
        return -1;
}

/* Each instance's state into a new handle of sn; -1, or the fault with msg (none kept). */
static int deserialize_all(struct hsess *hs, struct hsnapshot *sn, const struct snap_blob *b,
                           const size_t *order, char *msg, size_t size)
{
        for (size_t i = 0; i < hs->sc->n_components; i++) {
                const struct snap_blob_inst *s = &b->insts[order[i]];
                struct inst *inst = session_inst(hs->s, i);
                int r;

                r = inst_deserialize_fmu_state(inst, s->state, s->state_len, &sn->handles[i]);
                if (r != INST_OK && r != INST_WARNING) {
                        snprintf(msg, size, "snapshot-import: instance '%s': "
                                 "DeserializeFMUState failed: %s", hs->sc->components[i].name,
                                 inst_why(inst, r));
                        sn->handles[i] = 0;
                        return r == -EMSGSIZE ? PROTO_E_LIMIT : PROTO_E_FAULT;
                }
        }
        return -1;
}

/* The import of a's upload as sn; -1, or the refusal with msg. */
static int import(struct hsess *hs, const struct proto_snapshot_import *a, struct hsnapshot *sn,
                  char *msg, size_t size)
{
        size_t n = hs->sc->n_components, len = 0, *order = NULL;
        struct snap_blob b = { 0 };
        uint8_t *p = NULL;
        char why[HOST_MSG_MAX - 64];
        int code, r;

        code = check_serialize(hs->sc, "snapshot-import", msg, size);
        if (code < 0)
                code = read_upload(hs, a, snap_blob_max_size((uint32_t)n), &p, &len, msg, size);
        if (code >= 0)
                return code;
        r = snap_blob_decode(p, len, &b, why, sizeof(why));
        if (r < 0) {
                snprintf(msg, size, "snapshot-import: %s", why);
                code = r == -ENOMEM ? PROTO_E_INTERNAL : PROTO_E_INVALID;
                goto out;
        }
        order = calloc(n ? n : 1, sizeof(*order));
        sn->handles = calloc(n ? n : 1, sizeof(*sn->handles));
        if (!order || !sn->handles) {
                snprintf(msg, size, "out of memory");
                code = PROTO_E_INTERNAL;
                goto out;
        }
        code = check_match(hs->sc, &b, order, msg, size);
        if (code >= 0)
                goto out;
        r = master_saved_decode(hs->m, b.master, b.master_len, &sn->saved, why, sizeof(why));
        if (r < 0) {
                snprintf(msg, size, "snapshot-import: %s", r == -ENOMEM ? "out of memory" : why);
                code = r == -ENOMEM ? PROTO_E_INTERNAL : PROTO_E_INVALID;
                goto out;
        }
        code = deserialize_all(hs, sn, &b, order, msg, size);
        if (code < 0) {
                sn->time = master_saved_time(sn->saved);
                sn->state = b.flags & SNAP_BLOB_PAUSED ? PROTO_STATE_PAUSED : PROTO_STATE_LOADED;
        }
out:
        snap_blob_fini(&b);
        free(order);
        free(p);
        return code;
}

void hsnap_import(struct hsess *hs, const struct hcmd *c, const struct pv *args)
{
        struct proto_snapshot_import a;
        struct hsnapshot *sn;
        char msg[HOST_MSG_MAX];
        size_t slot;
        struct pw w;
        int code;

        if (proto_snapshot_import_decode(args, &a, msg, sizeof(msg)) < 0) {
                host_reply_error(hs->h, c->token, c->id, PROTO_E_BAD_REQUEST, "%s", msg);
                return;
        }
        slot = hsnap_free_slot(hs);
        if (slot == HOST_MAX_SNAPSHOTS) {
                host_reply_error(hs->h, c->token, c->id, PROTO_E_LIMIT,
                                 "%d snapshots already (the limit)", HOST_MAX_SNAPSHOTS);
                return;
        }
        sn = calloc(1, sizeof(*sn));
        if (!sn)
                snprintf(msg, sizeof(msg), "out of memory");
        code = sn ? import(hs, &a, sn, msg, sizeof(msg)) : PROTO_E_INTERNAL;
        if (code >= 0) {
                hsnap_free(hs, sn, true);
                host_reply_error(hs->h, c->token, c->id, (enum proto_err)code, "%s", msg);
                return;
        }
        sn->id = ++hs->next_snap;
        sn->generation = hs->generation;
        sn->taken = hsnap_wall_now();
        hs->snaps[slot] = sn;
        if (pw_init(&w) < 0)
                return;
        proto_reply_ok_begin(&w, c->id);
        proto_snapshot_result_encode(&w, &(struct proto_snapshot_result){
                .snapshot = sn->id, .time = sn->time });
        host_reply_take(hs->h, c->token, c->id, &w);
        pw_fini(&w);
}
