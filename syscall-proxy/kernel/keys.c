/*
 * keys.c - add_key, request_key, keyctl: the run's own kernel key
 * retention service, as Linux's security/keys/ gives it (keyctl(2),
 * keyrings(7)).
 *
 * The host's keyrings are never used: a session or user keyring of the
 * host would leak into the run, and Linux's serials are random. The run
 * keeps its keys in the world; serials come from a counter per run from a
 * fixed base. Types: "keyring", "user", "logon" (payload not readable);
 * any other is ENODEV as a kernel without it answers (big_key included,
 * as on a kernel built without CONFIG_BIG_KEYS).
 *
 * Credentials: a process has a session keyring (inherited over fork and
 * exec) and a process keyring (shared by its threads, dropped by fork and
 * exec); a thread its own thread keyring (a new thread of a creator that
 * has one gets a new one, exec drops it); each uid of the run a user and
 * a user session keyring, made on first use. A process without a session
 * keyring (the first one: as started by init, without pam_keyinit) uses
 * its user session keyring, as Linux installs it on first access.
 *
 * Permissions as Linux's key_task_permission: the owner's, else the
 * group's, else the other bits, plus the possessor bits when the key is
 * reachable from the caller's thread, process and session keyrings
 * through keyrings it may search. CAP_SYS_ADMIN (root of the run) is
 * needed to chown and lets setperm of keys of others. Quotas per uid as a
 * Linux host's defaults (root 1000000 keys / 25000000 bytes, others 200 /
 * 20000), EDQUOT past them.
 *
 * Timeouts and revocation read the run's logical CLOCK_REALTIME. A key is
 * destroyed when its last link or credential reference goes (Linux's
 * garbage collector does it a moment later), an invalidated one at once;
 * a revoked or expired key stays until then.
 *
 * Not modelled: upcalls (request_key finds or fails ENOKEY, as with no
 * /sbin/request-key; INSTANTIATE, NEGATE, REJECT are EPERM as without an
 * authorisation key), persistent keyrings, keyring restrictions, the DH
 * and public key operations and key notifications (EOPNOTSUPP, as a
 * kernel built without them).
 */
#include "proxy.h"
#include "kernel.h"
#include "internal.h"

#include <errno.h>
#include <linux/keyctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

#include "det.h"

#define KEYS_FIRST_SERIAL 0x2b1e4a01 /* Linux-looking, never host-derived */
#define KEY_DESC_MAX 4096
#define KEY_TYPE_NAME_MAX 32
#define KEY_PAYLOAD_MAX (1024 * 1024 - 1)
#define USER_PAYLOAD_MAX 32767
#define KEYRING_DEPTH_MAX 6
#define KEY_GID_INVALID UINT32_MAX
#define KEY_OVERFLOW_GID 65534
/* What a key costs its owner's byte quota besides its description (and
 * NUL) and payload, as measured on Linux 6.x's /proc/key-users. */
#define KEY_CHARGE_OVERHEAD 4

/* keyutils' permission bits (not in the uapi headers) */
#define KEY_POS_VIEW 0x01000000
#define KEY_POS_READ 0x02000000
#define KEY_POS_WRITE 0x04000000
#define KEY_POS_SEARCH 0x08000000
#define KEY_POS_LINK 0x10000000
#define KEY_POS_SETATTR 0x20000000
#define KEY_POS_ALL 0x3f000000
#define KEY_USR_VIEW 0x00010000
#define KEY_USR_READ 0x00020000
#define KEY_USR_LINK 0x00100000
#define KEY_USR_ALL 0x003f0000
#define KEY_ALL_BITS 0x3f3f3f3f

/* what an operation needs of a key (the low bits of one mask) */
#define NEED_VIEW 0x01
#define NEED_READ 0x02
#define NEED_WRITE 0x04
#define NEED_SEARCH 0x08
#define NEED_LINK 0x10
#define NEED_SETATTR 0x20

/* lookup flags */
#define LOOKUP_CREATE 0x01 /* special keyrings are made when missing */
#define LOOKUP_FOR_UNLINK 0x02 /* revoked and expired keys do */

enum key_type { KT_KEYRING, KT_USER, KT_LOGON };
static const char *const type_names[] = {"keyring", "user", "logon"};

struct key {
    int32_t serial;
    enum key_type type;
    char *desc;
    unsigned char *data; /* user, logon */
    size_t len;
    int32_t *links;      /* keyring */
    int nr_links, cap_links;
    uint32_t uid, gid, perm;
    bool revoked, invalidated;
    bool uid_keyring;    /* a user or user session keyring */
    int64_t expiry;      /* CLOCK_REALTIME seconds; 0: none */
    int refs;            /* links to it and credentials holding it */
    size_t charged;      /* quota bytes, charged to uid */
    bool in_quota;
};

struct key_user {
    uint32_t uid;
    int32_t user_ring, user_session;
    int nr_keys;
    size_t bytes;
};

struct proxy_keys {
    struct key **keys; /* by serial, ascending */
    int nr, cap;
    int32_t next_serial;
    struct key_user *users;
    int nr_users;
};

/* ---- the run's keys ------------------------------------------------------ */

static struct proxy_keys *keys_of(struct proxy_world *w)
{
    if (!w->keys) {
        w->keys = calloc(1, sizeof(*w->keys));
        if (w->keys)
            w->keys->next_serial = KEYS_FIRST_SERIAL;
    }
    return w->keys;
}

static int64_t now_s(struct proxy_process *p)
{
    return det_clock_peek_ns(p->det, CLOCK_REALTIME) / 1000000000LL;
}

static struct key *find_key(struct proxy_keys *ks, int32_t serial)
{
    int lo = 0, hi = ks->nr - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (ks->keys[mid]->serial == serial)
            return ks->keys[mid];
        if (ks->keys[mid]->serial < serial)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

static struct key_user *user_of(struct proxy_keys *ks, uint32_t uid)
{
    for (int i = 0; i < ks->nr_users; i++)
        if (ks->users[i].uid == uid)
            return &ks->users[i];
    struct key_user *n =
        realloc(ks->users, (size_t)(ks->nr_users + 1) * sizeof(*n));
    if (!n)
        return NULL;
    ks->users = n;
    n = &ks->users[ks->nr_users++];
    memset(n, 0, sizeof(*n));
    n->uid = uid;
    return n;
}

static void quota_limits(uint32_t uid, int *max_keys, size_t *max_bytes)
{
    *max_keys = uid == 0 ? 1000000 : 200;
    *max_bytes = uid == 0 ? 25000000 : 20000;
}

/* Charges uid for a key of `bytes` (or for `bytes` more when nr is 0). */
static long quota_charge(struct proxy_keys *ks, uint32_t uid, int nr,
                         size_t bytes, bool overrun)
{
    struct key_user *u = user_of(ks, uid);
    if (!u)
        return -ENOMEM;
    int max_keys;
    size_t max_bytes;
    quota_limits(uid, &max_keys, &max_bytes);
    if (!overrun &&
        (u->nr_keys + nr > max_keys || u->bytes + bytes > max_bytes))
        return -EDQUOT;
    u->nr_keys += nr;
    u->bytes += bytes;
    return 0;
}

static void quota_release(struct proxy_keys *ks, const struct key *k)
{
    if (!k->in_quota)
        return;
    struct key_user *u = user_of(ks, k->uid);
    if (u) {
        u->nr_keys--;
        u->bytes -= k->charged;
    }
}

static void key_put(struct proxy_keys *ks, struct key *k);

static void key_destroy(struct proxy_keys *ks, struct key *k)
{
    for (int i = 0; i < ks->nr; i++)
        if (ks->keys[i] == k) {
            memmove(&ks->keys[i], &ks->keys[i + 1],
                    (size_t)(ks->nr - i - 1) * sizeof(*ks->keys));
            ks->nr--;
            break;
        }
    quota_release(ks, k);
    int32_t *links = k->links;
    int nr = k->nr_links;
    k->links = NULL;
    k->nr_links = 0;
    for (int i = 0; i < nr; i++) {
        struct key *c = find_key(ks, links[i]);
        if (c)
            key_put(ks, c);
    }
    free(links);
    free(k->desc);
    free(k->data);
    free(k);
}

static void key_put(struct proxy_keys *ks, struct key *k)
{
    if (k && --k->refs <= 0)
        key_destroy(ks, k);
}

static void put_serial(struct proxy_world *w, int32_t *serial)
{
    if (*serial && w->keys)
        key_put(w->keys, find_key(w->keys, *serial));
    *serial = 0;
}

/* Room in the table for one more key. */
static long keys_reserve(struct proxy_keys *ks)
{
    if (ks->nr < ks->cap)
        return 0;
    int cap = ks->cap ? ks->cap * 2 : 16;
    struct key **n = realloc(ks->keys, (size_t)cap * sizeof(*n));
    if (!n)
        return -ENOMEM;
    ks->keys = n;
    ks->cap = cap;
    return 0;
}

/* A new key, with one reference (the caller's). */
static long key_alloc(struct proxy_process *p, enum key_type type,
                      const char *desc, const void *data, size_t len,
                      uint32_t uid, uint32_t gid, uint32_t perm,
                      bool overrun, struct key **out)
{
    struct proxy_keys *ks = keys_of(p->world);
    if (!ks)
        return -ENOMEM;
    struct key *k = calloc(1, sizeof(*k));
    if (!k || !(k->desc = strdup(desc)) ||
        (len && !(k->data = malloc(len)))) {
        if (k)
            free(k->desc);
        free(k);
        return -ENOMEM;
    }
    size_t charge = strlen(desc) + 1 + KEY_CHARGE_OVERHEAD + len;
    long rc = keys_reserve(ks);
    if (rc == 0)
        rc = quota_charge(ks, uid, 1, charge, overrun);
    if (rc < 0) {
        free(k->data);
        free(k->desc);
        free(k);
        return rc;
    }
    if (len)
        memcpy(k->data, data, len);
    k->len = len;
    k->type = type;
    k->serial = ks->next_serial++;
    k->uid = uid;
    k->gid = gid;
    k->perm = perm;
    k->refs = 1;
    k->charged = charge;
    k->in_quota = true;
    ks->keys[ks->nr++] = k;
    *out = k;
    return 0;
}

/* ---- keyrings -------------------------------------------------------------- */

static int link_index(const struct key *ring, int32_t serial)
{
    for (int i = 0; i < ring->nr_links; i++)
        if (ring->links[i] == serial)
            return i;
    return -1;
}

/* Links k into ring, in place of a key of the same type and description
 * (Linux's keyrings are indexed by both). */
static long ring_link(struct proxy_keys *ks, struct key *ring, struct key *k)
{
    if (link_index(ring, k->serial) >= 0)
        return 0;
    for (int i = 0; i < ring->nr_links; i++) {
        struct key *o = find_key(ks, ring->links[i]);
        if (o && o->type == k->type && !strcmp(o->desc, k->desc)) {
            ring->links[i] = k->serial;
            k->refs++;
            key_put(ks, o);
            return 0;
        }
    }
    if (ring->nr_links == ring->cap_links) {
        int cap = ring->cap_links ? ring->cap_links * 2 : 8;
        int32_t *n = realloc(ring->links, (size_t)cap * sizeof(*n));
        if (!n)
            return -ENOMEM;
        ring->links = n;
        ring->cap_links = cap;
    }
    ring->links[ring->nr_links++] = k->serial;
    k->refs++;
    return 0;
}

static void ring_unlink_at(struct proxy_keys *ks, struct key *ring, int i)
{
    struct key *k = find_key(ks, ring->links[i]);
    memmove(&ring->links[i], &ring->links[i + 1],
            (size_t)(ring->nr_links - i - 1) * sizeof(*ring->links));
    ring->nr_links--;
    key_put(ks, k);
}

/* Whether target is ring or inside it (a link would make a loop). */
static bool ring_contains(struct proxy_keys *ks, const struct key *ring,
                          int32_t target, int depth)
{
    if (ring->serial == target)
        return true;
    if (depth > KEYRING_DEPTH_MAX)
        return false;
    for (int i = 0; i < ring->nr_links; i++) {
        const struct key *c = find_key(ks, ring->links[i]);
        if (c && c->type == KT_KEYRING &&
            ring_contains(ks, c, target, depth + 1))
            return true;
    }
    return false;
}

/* ---- permissions ------------------------------------------------------------ */

static bool in_group(const struct proxy_process *p, uint32_t gid)
{
    if (gid == p->cred.egid)
        return true;
    for (int i = 0; i < p->cred.nr_groups; i++)
        if (p->cred.groups[i] == gid)
            return true;
    return false;
}

static bool permitted(const struct proxy_process *p, const struct key *k,
                      bool possessed, unsigned need)
{
    uint32_t kperm;
    if (k->uid == p->cred.euid)
        kperm = k->perm >> 16;
    else if (k->gid != KEY_GID_INVALID && in_group(p, k->gid))
        kperm = k->perm >> 8;
    else
        kperm = k->perm;
    if (possessed)
        kperm |= k->perm >> 24;
    return (kperm & need & 0x3f) == need;
}

static bool key_usable(struct proxy_process *p, const struct key *k)
{
    return !k->invalidated && !k->revoked &&
           !(k->expiry && now_s(p) >= k->expiry);
}

/* The caller's keyrings searched first to last: thread, process, session
 * (the user session one when it has none). */
static int cred_rings(struct proxy_process *p, int32_t out[3])
{
    int n = 0;
    int32_t t = p->threads ? p->threads[p->cur].key_thread : 0;
    if (t)
        out[n++] = t;
    if (p->key_process)
        out[n++] = p->key_process;
    if (p->key_session)
        out[n++] = p->key_session;
    else {
        struct key_user *u = p->world->keys
                                 ? user_of(p->world->keys, p->cred.euid)
                                 : NULL;
        if (u && u->user_session)
            out[n++] = u->user_session;
    }
    return n;
}

static bool reachable_from(struct proxy_process *p, struct proxy_keys *ks,
                           const struct key *ring, int32_t target, int depth)
{
    if (depth > KEYRING_DEPTH_MAX)
        return false;
    for (int i = 0; i < ring->nr_links; i++) {
        const struct key *c = find_key(ks, ring->links[i]);
        if (!c)
            continue;
        if (c->serial == target)
            return true;
        if (c->type == KT_KEYRING && key_usable(p, c) &&
            permitted(p, c, true, NEED_SEARCH) &&
            reachable_from(p, ks, c, target, depth + 1))
            return true;
    }
    return false;
}

/* Linux's possession: one of the caller's keyrings, or found by a search
 * of them (through keyrings the possessor may search, the key itself
 * searchable by its possessor). */
static bool possessed(struct proxy_process *p, const struct key *k)
{
    struct proxy_keys *ks = p->world->keys;
    int32_t rings[3];
    int n = cred_rings(p, rings);
    for (int i = 0; i < n; i++)
        if (rings[i] == k->serial)
            return true;
    if (!permitted(p, k, true, NEED_SEARCH))
        return false;
    for (int i = 0; i < n; i++) {
        const struct key *r = find_key(ks, rings[i]);
        if (r && key_usable(p, r) && permitted(p, r, true, NEED_SEARCH) &&
            reachable_from(p, ks, r, k->serial, 1))
            return true;
    }
    return false;
}

/* ---- the special keyrings --------------------------------------------------- */

static long new_keyring(struct proxy_process *p, const char *name,
                        uint32_t perm, uint32_t uid, uint32_t gid,
                        bool overrun, struct key **out)
{
    return key_alloc(p, KT_KEYRING, name, NULL, 0, uid, gid, perm, overrun,
                     out);
}

/* The caller's user keyrings, made on first use (Linux's
 * look_up_user_keyrings): "_uid.N" and "_uid_ses.N", no group, the user
 * session keyring holding a link to the user keyring. */
static long user_keyrings(struct proxy_process *p, struct key_user **out)
{
    struct proxy_keys *ks = keys_of(p->world);
    struct key_user *u = ks ? user_of(ks, p->cred.euid) : NULL;
    if (!u)
        return -ENOMEM;
    uint32_t perm = (KEY_POS_ALL & ~KEY_POS_SETATTR) | KEY_USR_ALL;
    char name[32];
    struct key *k;
    if (!u->user_ring) {
        snprintf(name, sizeof(name), "_uid.%u", p->cred.euid);
        long rc =
            new_keyring(p, name, perm, p->cred.euid, KEY_GID_INVALID, true, &k);
        if (rc < 0)
            return rc;
        u = user_of(ks, p->cred.euid); /* the table may have moved */
        u->user_ring = k->serial;
        k->uid_keyring = true;
    }
    if (!u->user_session) {
        snprintf(name, sizeof(name), "_uid_ses.%u", p->cred.euid);
        long rc =
            new_keyring(p, name, perm, p->cred.euid, KEY_GID_INVALID, true, &k);
        if (rc < 0)
            return rc;
        u = user_of(ks, p->cred.euid);
        u->user_session = k->serial;
        k->uid_keyring = true;
        if ((rc = ring_link(ks, k, find_key(ks, u->user_ring))) < 0)
            return rc;
    }
    *out = u;
    return 0;
}

/* Makes serial the process's session keyring (a reference of its own). */
static void install_session(struct proxy_process *p, struct key *k)
{
    k->refs++;
    put_serial(p->world, &p->key_session);
    p->key_session = k->serial;
}

/* A new anonymous session keyring, "_ses", joined. */
static long join_anonymous(struct proxy_process *p, struct key **out)
{
    struct key *k;
    long rc = new_keyring(p, "_ses", KEY_POS_ALL | KEY_USR_VIEW | KEY_USR_READ,
                          p->cred.euid, p->cred.egid, true, &k);
    if (rc < 0)
        return rc;
    install_session(p, k);
    key_put(p->world->keys, k);
    *out = k;
    return 0;
}

static long install_own(struct proxy_process *p, int32_t *slot,
                        const char *name)
{
    struct key *k;
    long rc = new_keyring(p, name, KEY_POS_ALL | KEY_USR_VIEW, p->cred.euid,
                          p->cred.egid, true, &k);
    if (rc < 0)
        return rc;
    *slot = k->serial; /* the allocation's reference is the slot's */
    return 0;
}

static long special_keyring(struct proxy_process *p, long id, unsigned flags,
                            struct key **out)
{
    struct proxy_keys *ks = keys_of(p->world);
    if (!ks)
        return -ENOMEM;
    int32_t *slot = NULL;
    const char *name = NULL;
    struct key_user *u;
    long rc;
    switch (id) {
    case KEY_SPEC_THREAD_KEYRING:
        slot = &p->threads[p->cur].key_thread;
        name = "_tid";
        break;
    case KEY_SPEC_PROCESS_KEYRING:
        slot = &p->key_process;
        name = "_pid";
        break;
    case KEY_SPEC_SESSION_KEYRING:
        /* None yet: the user session keyring, or a new one to add to; a
         * user keyring as session is left for a new one to add to. */
        *out = p->key_session ? find_key(ks, p->key_session) : NULL;
        if (!*out) {
            if ((rc = user_keyrings(p, &u)) < 0)
                return rc;
            if (flags & LOOKUP_CREATE)
                return join_anonymous(p, out);
            install_session(p, find_key(ks, u->user_session));
            *out = find_key(ks, p->key_session);
        } else if ((*out)->uid_keyring && (flags & LOOKUP_CREATE)) {
            return join_anonymous(p, out);
        }
        return *out ? 0 : -ENOKEY;
    case KEY_SPEC_USER_KEYRING:
    case KEY_SPEC_USER_SESSION_KEYRING:
        if ((rc = user_keyrings(p, &u)) < 0)
            return rc;
        *out = find_key(ks, id == KEY_SPEC_USER_KEYRING ? u->user_ring
                                                        : u->user_session);
        return *out ? 0 : -ENOKEY;
    case KEY_SPEC_REQKEY_AUTH_KEY:
    case KEY_SPEC_REQUESTOR_KEYRING:
        return -ENOKEY; /* no upcall is ever in progress */
    default:
        return -EINVAL;
    }
    if (!*slot) {
        if (!(flags & LOOKUP_CREATE))
            return -ENOKEY;
        if ((rc = install_own(p, slot, name)) < 0)
            return rc;
    }
    *out = find_key(ks, *slot);
    return *out ? 0 : -ENOKEY;
}

/* Linux's lookup_user_key: the key an id names (a serial or a
 * KEY_SPEC_*), checked for state and for the permission `need`. */
static long lookup(struct proxy_process *p, long id, unsigned flags,
                   unsigned need, struct key **out, bool *poss)
{
    struct key *k = NULL;
    bool is_poss = true;
    long rc;
    id = (int32_t)id;
    if (id < 0) {
        if ((rc = special_keyring(p, id, flags, &k)) < 0)
            return rc;
    } else if (id == 0) {
        return -EINVAL;
    } else {
        struct proxy_keys *ks = p->world->keys;
        if (!ks || !(k = find_key(ks, (int32_t)id)))
            return -ENOKEY;
        is_poss = possessed(p, k);
    }
    if (!(flags & LOOKUP_FOR_UNLINK)) {
        if (k->invalidated)
            return -ENOKEY;
        if (k->revoked)
            return -EKEYREVOKED;
        if (k->expiry && now_s(p) >= k->expiry)
            return -EKEYEXPIRED;
    }
    if (need && !permitted(p, k, is_poss, need))
        return -EACCES;
    *out = k;
    if (poss)
        *poss = is_poss;
    return 0;
}

/* ---- strings from the guest --------------------------------------------------- */

static long type_in(struct proxy_process *p, uint64_t gva,
                    char type[KEY_TYPE_NAME_MAX])
{
    long n = vmm_as_strncpy_in(p->as, type, gva, KEY_TYPE_NAME_MAX);
    if (n == -ENAMETOOLONG || n == 0)
        return -EINVAL;
    return n < 0 ? -EFAULT : 0;
}

/* A known type's index; -ENODEV for another (add_key's answer). */
static int type_index(const char *type)
{
    for (int i = 0; i < (int)(sizeof(type_names) / sizeof(*type_names)); i++)
        if (!strcmp(type, type_names[i]))
            return i;
    return -ENODEV;
}

static long desc_in(struct proxy_process *p, uint64_t gva, char *desc)
{
    long n = vmm_as_strncpy_in(p->as, desc, gva, KEY_DESC_MAX);
    if (n == -ENAMETOOLONG)
        return -EINVAL;
    return n < 0 ? -EFAULT : n;
}

/* The type and description a search names (request_key, KEYCTL_SEARCH):
 * *desc is malloc'ed (the caller frees it) when the type was read, even if
 * the description then failed (the return says so). */
static long type_and_desc_in(struct proxy_process *p, uint64_t type_gva,
                             uint64_t desc_gva, char type[KEY_TYPE_NAME_MAX],
                             char **desc)
{
    *desc = NULL;
    long rc = type_in(p, type_gva, type);
    if (rc < 0)
        return rc;
    if (!(*desc = malloc(KEY_DESC_MAX)))
        return -ENOMEM;
    return desc_in(p, desc_gva, *desc);
}

/* ---- search ---------------------------------------------------------------- */

struct search {
    struct proxy_process *p;
    enum key_type type;
    const char *desc;
    long err; /* what a skipped match says when nothing is found */
};

static struct key *search_ring(struct search *s, const struct key *ring,
                               bool poss, int depth)
{
    struct proxy_keys *ks = s->p->world->keys;
    for (int i = 0; i < ring->nr_links; i++) {
        struct key *k = find_key(ks, ring->links[i]);
        if (!k || k->type != s->type || strcmp(k->desc, s->desc) ||
            k->invalidated)
            continue;
        if (k->revoked)
            s->err = -EKEYREVOKED;
        else if (k->expiry && now_s(s->p) >= k->expiry)
            s->err = -EKEYEXPIRED;
        else if (!permitted(s->p, k, poss, NEED_SEARCH))
            s->err = -EACCES;
        else
            return k;
    }
    if (depth >= KEYRING_DEPTH_MAX)
        return NULL;
    for (int i = 0; i < ring->nr_links; i++) {
        struct key *c = find_key(ks, ring->links[i]);
        if (!c || c->type != KT_KEYRING || !key_usable(s->p, c) ||
            !permitted(s->p, c, poss, NEED_SEARCH))
            continue;
        struct key *k = search_ring(s, c, poss, depth + 1);
        if (k)
            return k;
    }
    return NULL;
}

/* Links found into dest (0: none), as KEYCTL_SEARCH and request_key do. */
static long link_found(struct proxy_process *p, struct key *found,
                       struct key *dest, bool poss)
{
    if (!dest)
        return found->serial;
    if (!permitted(p, found, poss, NEED_LINK))
        return -EACCES;
    if (found->type == KT_KEYRING &&
        ring_contains(p->world->keys, found, dest->serial, 0))
        return -EDEADLK;
    long rc = ring_link(p->world->keys, dest, found);
    return rc < 0 ? rc : found->serial;
}

/* ---- add_key, request_key ------------------------------------------------------ */

static long vet(enum key_type type, const char *desc, size_t len)
{
    if (!desc)
        return -EINVAL;
    if (type == KT_KEYRING)
        return len ? -EINVAL : 0;
    if (type == KT_LOGON) {
        const char *colon = strchr(desc, ':');
        if (!colon || colon == desc)
            return -EINVAL;
    }
    return len == 0 || len > USER_PAYLOAD_MAX ? -EINVAL : 0;
}

static uint32_t default_perm(enum key_type type)
{
    uint32_t perm = KEY_POS_VIEW | KEY_POS_SEARCH | KEY_POS_LINK |
                    KEY_POS_SETATTR | KEY_USR_VIEW | KEY_POS_WRITE;
    if (type != KT_LOGON)
        perm |= KEY_POS_READ; /* the type can read its payload */
    return perm;
}

/* A user or logon key's new payload, charged to its owner. */
static long set_payload(struct proxy_process *p, struct key *k,
                        const void *data, size_t len)
{
    struct proxy_keys *ks = p->world->keys;
    unsigned char *n = malloc(len);
    if (!n)
        return -ENOMEM;
    if (k->in_quota) {
        long rc = 0;
        if (len > k->len)
            rc = quota_charge(ks, k->uid, 0, len - k->len, false);
        else
            user_of(ks, k->uid)->bytes -= k->len - len;
        if (rc < 0) {
            free(n);
            return rc;
        }
        k->charged = k->charged - k->len + len;
    }
    memcpy(n, data, len);
    free(k->data);
    k->data = n;
    k->len = len;
    return 0;
}

static long add_key(struct proxy_process *p, enum key_type type,
                    const char *desc, const void *data, size_t len,
                    struct key *ring, bool ring_poss)
{
    if (ring->type != KT_KEYRING)
        return -ENOTDIR;
    long rc = vet(type, desc, len);
    if (rc < 0)
        return rc;
    struct proxy_keys *ks = p->world->keys;
    /* A user or logon key of the same description is updated in place
     * (find_key_to_update: a revoked or invalidated one is replaced). */
    for (int i = 0; type != KT_KEYRING && i < ring->nr_links; i++) {
        struct key *o = find_key(ks, ring->links[i]);
        if (!o || o->type != type || strcmp(o->desc, desc) || o->revoked ||
            o->invalidated)
            continue;
        if (!permitted(p, o, ring_poss, NEED_WRITE))
            return -EACCES;
        rc = set_payload(p, o, data, len);
        return rc < 0 ? rc : o->serial;
    }
    struct key *k;
    if ((rc = key_alloc(p, type, desc, data, len, p->cred.euid, p->cred.egid,
                        default_perm(type), false, &k)) < 0)
        return rc;
    rc = ring_link(ks, ring, k);
    int32_t serial = k->serial;
    key_put(ks, k);
    return rc < 0 ? rc : serial;
}

static long sys_add_key(struct proxy_process *p, const uint64_t a[6])
{
    char type[KEY_TYPE_NAME_MAX];
    long rc = type_in(p, a[0], type);
    if (rc < 0)
        return rc;
    char *desc = NULL, *data = NULL;
    size_t len = a[3];
    struct key *ring;
    bool poss;
    if (a[1]) {
        if (!(desc = malloc(KEY_DESC_MAX)))
            return -ENOMEM;
        if ((rc = desc_in(p, a[1], desc)) < 0)
            goto out;
        if (!*desc) {
            free(desc);
            desc = NULL;
        } else if (desc[0] == '.' && !strcmp(type, "keyring")) {
            rc = -EPERM;
            goto out;
        }
    }
    rc = -EINVAL;
    if (len > KEY_PAYLOAD_MAX)
        goto out;
    if (len) {
        rc = -ENOMEM;
        if (!(data = malloc(len)))
            goto out;
        rc = -EFAULT;
        if (proxy_copy_in(p, data, a[2], len) < 0)
            goto out;
    }
    if ((rc = lookup(p, (long)a[4], LOOKUP_CREATE, NEED_WRITE, &ring,
                     &poss)) < 0)
        goto out;
    rc = type[0] == '.' ? -EPERM : type_index(type);
    if (rc >= 0)
        rc = add_key(p, (enum key_type)rc, desc, data, len, ring, poss);
out:
    free(desc);
    free(data);
    return rc;
}

/* The caller's keyrings searched for a key, as request_key does. */
static struct key *search_creds(struct proxy_process *p, struct search *s,
                                bool *poss)
{
    int32_t rings[3];
    int n = cred_rings(p, rings);
    for (int i = 0; i < n; i++) {
        struct key *r = find_key(p->world->keys, rings[i]);
        if (!r || !key_usable(p, r))
            continue;
        struct key *k = search_ring(s, r, true, 1);
        if (k) {
            *poss = true;
            return k;
        }
    }
    return NULL;
}

/* construct_get_dest_keyring, for a request_key that names no keyring:
 * the KEYCTL_SET_REQKEY_KEYRING default, falling through the thread,
 * process and session keyrings to the user session one (a requestor
 * keyring exists only during an upcall, and hvrun makes none), must be
 * writable: EACCES (CVE-2017-17807: joining a session keyring needs only
 * search permission). */
static long reqkey_default_dest_check(struct proxy_process *p)
{
    static const long chain[] = {KEY_SPEC_THREAD_KEYRING,
                                 KEY_SPEC_PROCESS_KEYRING,
                                 KEY_SPEC_SESSION_KEYRING,
                                 KEY_SPEC_USER_SESSION_KEYRING};
    size_t first = 0;
    struct key *k;
    switch (p->key_reqkey) {
    case KEY_REQKEY_DEFL_USER_KEYRING:
        if (special_keyring(p, KEY_SPEC_USER_KEYRING, 0, &k) < 0)
            return 0;
        return permitted(p, k, true, NEED_WRITE) ? 0 : -EACCES;
    case KEY_REQKEY_DEFL_USER_SESSION_KEYRING:
        first = 3;
        break;
    case KEY_REQKEY_DEFL_SESSION_KEYRING:
        first = 2;
        break;
    case KEY_REQKEY_DEFL_PROCESS_KEYRING:
        first = 1;
        break;
    }
    for (size_t i = first; i < sizeof(chain) / sizeof(chain[0]); i++)
        if (special_keyring(p, chain[i], 0, &k) == 0 && k)
            return permitted(p, k, true, NEED_WRITE) ? 0 : -EACCES;
    return 0;
}

static long sys_request_key(struct proxy_process *p, const uint64_t a[6])
{
    char type[KEY_TYPE_NAME_MAX], *desc;
    struct key *dest = NULL, *found;
    bool poss;
    long rc = type_and_desc_in(p, a[0], a[1], type, &desc);
    if (rc < 0)
        goto out;
    if (a[2]) { /* the callout: only checked, no upcall is made */
        char *info = malloc(KEY_DESC_MAX);
        rc = info ? desc_in(p, a[2], info) : -ENOMEM;
        free(info);
        if (rc < 0)
            goto out;
    }
    if (a[3] && (rc = lookup(p, (long)a[3], LOOKUP_CREATE, NEED_WRITE,
                             &dest, NULL)) < 0)
        goto out;
    rc = -EPERM;
    if (type[0] == '.')
        goto out;
    rc = -ENOKEY;
    int ti = type_index(type);
    if (ti < 0 || !p->world->keys)
        goto out;
    struct search s = {p, (enum key_type)ti, desc, -ENOKEY};
    found = search_creds(p, &s, &poss);
    rc = found ? link_found(p, found, dest, poss) : s.err;
    /* Nothing found: with callout info, construct_key_and_link's checks
     * (a keyring is never made so: EPERM; the destination keyring must be
     * writable), then no /sbin/request-key to make it: ENOKEY. */
    bool none = rc == -EAGAIN || rc == -ENOKEY;
    if (none && a[2] && ti == KT_KEYRING)
        rc = -EPERM;
    else if (none && a[2] && !dest)
        rc = reqkey_default_dest_check(p);
    if (rc == -EAGAIN || rc == 0)
        rc = -ENOKEY;
out:
    free(desc);
    return rc;
}

/* ---- keyctl ------------------------------------------------------------------ */

static long kc_get_keyring_id(struct proxy_process *p, const uint64_t a[6])
{
    struct key *k;
    long rc = lookup(p, (long)a[1], a[2] ? LOOKUP_CREATE : 0, 0, &k, NULL);
    return rc < 0 ? rc : k->serial;
}

static long kc_join_session(struct proxy_process *p, const uint64_t a[6])
{
    struct key *k;
    long rc;
    if (!a[1]) {
        if ((rc = keys_of(p->world) ? join_anonymous(p, &k) : -ENOMEM) < 0)
            return rc;
        return k->serial;
    }
    char name[KEY_DESC_MAX];
    if ((rc = desc_in(p, a[1], name)) < 0)
        return rc;
    /* keyctl_join_session_keyring: a dot name is the kernel's own keyring
     * (.builtin_trusted_keys: CVE-2016-9604), never joined */
    if (name[0] == '.')
        return -EPERM;
    if (!name[0])
        return -EINVAL;
    struct proxy_keys *ks = keys_of(p->world);
    if (!ks)
        return -ENOMEM;
    /* find_keyring_by_name: one the caller may search, not as possessor */
    for (int i = 0; i < ks->nr; i++) {
        k = ks->keys[i];
        if (k->type == KT_KEYRING && !strcmp(k->desc, name) &&
            key_usable(p, k) && permitted(p, k, false, NEED_SEARCH)) {
            if (k->serial != p->key_session)
                install_session(p, k);
            return k->serial;
        }
    }
    if ((rc = new_keyring(p, name,
                          KEY_POS_ALL | KEY_USR_VIEW | KEY_USR_READ |
                              KEY_USR_LINK,
                          p->cred.euid, p->cred.egid, false, &k)) < 0)
        return rc;
    install_session(p, k);
    key_put(ks, k);
    return k->serial;
}

static long kc_update(struct proxy_process *p, const uint64_t a[6])
{
    size_t len = a[3];
    if (len > KEY_PAYLOAD_MAX)
        return -EINVAL;
    char *data = NULL;
    if (len && (!(data = malloc(len)) || proxy_copy_in(p, data, a[2], len))) {
        free(data);
        return data ? -EFAULT : -ENOMEM;
    }
    struct key *k;
    long rc = lookup(p, (long)a[1], 0, NEED_WRITE, &k, NULL);
    if (rc == 0) {
        if (k->type == KT_KEYRING)
            rc = -EOPNOTSUPP;
        else if ((rc = vet(k->type, k->desc, len)) == 0)
            rc = set_payload(p, k, data, len);
    }
    free(data);
    return rc;
}

static long kc_revoke(struct proxy_process *p, const uint64_t a[6])
{
    struct key *k;
    long rc = lookup(p, (long)a[1], 0, NEED_WRITE, &k, NULL);
    if (rc == -EACCES)
        rc = lookup(p, (long)a[1], 0, NEED_SETATTR, &k, NULL);
    if (rc < 0)
        return rc;
    k->revoked = true;
    /* its death time, from which the collector counts */
    int64_t now = now_s(p);
    if (!k->expiry || k->expiry > now)
        k->expiry = now;
    return 0;
}

static long kc_chown(struct proxy_process *p, const uint64_t a[6])
{
    uint32_t uid = (uint32_t)a[2], gid = (uint32_t)a[3];
    struct key *k;
    long rc = lookup(p, (long)a[1], LOOKUP_CREATE, NEED_SETATTR, &k, NULL);
    if (rc < 0)
        return rc;
    if (uid == UINT32_MAX && gid == UINT32_MAX)
        return 0;
    bool admin = proxy_ns_init_capable(p);
    if (uid != UINT32_MAX && uid != k->uid && !admin)
        return -EACCES;
    if (gid != UINT32_MAX && gid != k->gid && !admin &&
        (k->uid != p->cred.euid || !in_group(p, gid)))
        return -EACCES;
    if (uid != UINT32_MAX && uid != k->uid) {
        struct proxy_keys *ks = p->world->keys;
        if (k->in_quota &&
            (rc = quota_charge(ks, uid, 1, k->charged, false)) < 0)
            return rc;
        quota_release(ks, k);
        k->uid = uid;
    }
    if (gid != UINT32_MAX)
        k->gid = gid;
    return 0;
}

static long kc_setperm(struct proxy_process *p, const uint64_t a[6])
{
    uint32_t perm = (uint32_t)a[2];
    if (perm & ~KEY_ALL_BITS)
        return -EINVAL;
    struct key *k;
    long rc = lookup(p, (long)a[1], LOOKUP_CREATE, NEED_SETATTR, &k, NULL);
    if (rc < 0)
        return rc;
    if (k->uid != p->cred.euid && !proxy_ns_init_capable(p))
        return -EACCES;
    k->perm = perm;
    return 0;
}

static uint32_t uid_seen(const struct proxy_process *p, uint32_t uid)
{
    return proxy_ns_uid_seen(p, uid);
}

static uint32_t gid_seen(const struct proxy_process *p, uint32_t gid)
{
    return gid == KEY_GID_INVALID ? KEY_OVERFLOW_GID
                                  : proxy_ns_gid_seen(p, gid);
}

/* A result of the given size, copied out only when it all fits. */
static long out_whole(struct proxy_process *p, uint64_t buf, size_t cap,
                      const void *data, size_t len)
{
    if (buf && cap >= len && proxy_copy_out(p, buf, data, len) < 0)
        return -EFAULT;
    return (long)len;
}

static long kc_describe(struct proxy_process *p, const uint64_t a[6])
{
    struct key *k;
    long rc = lookup(p, (long)a[1], 0, NEED_VIEW, &k, NULL);
    if (rc < 0)
        return rc;
    size_t cap = strlen(k->desc) + 64;
    char *s = malloc(cap);
    if (!s)
        return -ENOMEM;
    int n = snprintf(s, cap, "%s;%u;%u;%08x;%s", type_names[k->type],
                     uid_seen(p, k->uid), gid_seen(p, k->gid), k->perm,
                     k->desc);
    rc = out_whole(p, a[2], a[3], s, (size_t)n + 1);
    free(s);
    return rc;
}

static long kc_read(struct proxy_process *p, const uint64_t a[6])
{
    struct key *k;
    bool poss;
    long rc = lookup(p, (long)a[1], 0, 0, &k, &poss);
    if (rc < 0)
        return rc;
    /* Without READ, a key the caller possesses may still be read. */
    if (!permitted(p, k, poss, NEED_READ) && !poss)
        return -EACCES;
    if (k->type == KT_LOGON)
        return -EOPNOTSUPP;
    size_t cap = a[3];
    if (k->type == KT_USER) {
        size_t n = cap < k->len ? cap : k->len;
        if (a[2] && n && proxy_copy_out(p, a[2], k->data, n) < 0)
            return -EFAULT;
        return (long)k->len;
    }
    size_t len = (size_t)k->nr_links * sizeof(int32_t);
    if (a[2] && cap >= sizeof(int32_t)) {
        size_t n = (cap < len ? cap : len) / sizeof(int32_t);
        if (proxy_copy_out(p, a[2], k->links, n * sizeof(int32_t)) < 0)
            return -EFAULT;
    }
    return (long)len;
}

static long kc_clear(struct proxy_process *p, const uint64_t a[6])
{
    struct key *k;
    long rc = lookup(p, (long)a[1], LOOKUP_CREATE, NEED_WRITE, &k, NULL);
    if (rc < 0)
        return rc;
    if (k->type != KT_KEYRING)
        return -ENOTDIR;
    k->refs++; /* a keyring cleared of a link to itself stays till done */
    while (k->nr_links)
        ring_unlink_at(p->world->keys, k, k->nr_links - 1);
    key_put(p->world->keys, k);
    return 0;
}

static long kc_link(struct proxy_process *p, const uint64_t a[6])
{
    struct key *ring, *k;
    long rc = lookup(p, (long)a[2], LOOKUP_CREATE, NEED_WRITE, &ring, NULL);
    if (rc < 0 ||
        (rc = lookup(p, (long)a[1], LOOKUP_CREATE, NEED_LINK, &k, NULL)) < 0)
        return rc;
    if (ring->type != KT_KEYRING)
        return -ENOTDIR;
    if (k->type == KT_KEYRING &&
        ring_contains(p->world->keys, k, ring->serial, 0))
        return -EDEADLK;
    return ring_link(p->world->keys, ring, k);
}

static long kc_unlink(struct proxy_process *p, const uint64_t a[6])
{
    struct key *ring, *k;
    long rc = lookup(p, (long)a[2], 0, NEED_WRITE, &ring, NULL);
    if (rc < 0 ||
        (rc = lookup(p, (long)a[1], LOOKUP_FOR_UNLINK, 0, &k, NULL)) < 0)
        return rc;
    if (ring->type != KT_KEYRING)
        return -ENOTDIR;
    int i = link_index(ring, k->serial);
    if (i < 0)
        return -ENOENT;
    ring_unlink_at(p->world->keys, ring, i);
    return 0;
}

static long kc_move(struct proxy_process *p, const uint64_t a[6])
{
    if (a[4] & ~(uint64_t)KEYCTL_MOVE_EXCL)
        return -EINVAL;
    struct key *k, *from, *to;
    long rc = lookup(p, (long)a[1], LOOKUP_CREATE, NEED_LINK, &k, NULL);
    if (rc < 0 ||
        (rc = lookup(p, (long)a[2], 0, NEED_WRITE, &from, NULL)) < 0 ||
        (rc = lookup(p, (long)a[3], LOOKUP_CREATE, NEED_WRITE, &to, NULL)) <
            0)
        return rc;
    if (from->type != KT_KEYRING || to->type != KT_KEYRING)
        return -ENOTDIR;
    int i = link_index(from, k->serial);
    if (i < 0)
        return -ENOENT;
    struct proxy_keys *ks = p->world->keys;
    if (a[4] & KEYCTL_MOVE_EXCL)
        for (int j = 0; j < to->nr_links; j++) {
            struct key *o = find_key(ks, to->links[j]);
            if (o && o->type == k->type && !strcmp(o->desc, k->desc))
                return -EEXIST;
        }
    if (k->type == KT_KEYRING && ring_contains(ks, k, to->serial, 0))
        return -EDEADLK;
    if (from == to)
        return 0;
    if ((rc = ring_link(ks, to, k)) < 0)
        return rc;
    ring_unlink_at(ks, from, link_index(from, k->serial));
    return 0;
}

static long kc_search(struct proxy_process *p, const uint64_t a[6])
{
    char type[KEY_TYPE_NAME_MAX], *desc;
    struct key *ring, *dest = NULL, *found;
    bool poss;
    long rc = type_and_desc_in(p, a[2], a[3], type, &desc);
    if (rc < 0 ||
        (rc = lookup(p, (long)a[1], 0, NEED_SEARCH, &ring, &poss)) < 0 ||
        (a[4] && (rc = lookup(p, (long)a[4], LOOKUP_CREATE, NEED_WRITE,
                              &dest, NULL)) < 0))
        goto out;
    int ti = type_index(type);
    rc = -ENOKEY;
    if (ti < 0)
        goto out;
    rc = -ENOTDIR;
    if (ring->type != KT_KEYRING)
        goto out;
    struct search s = {p, (enum key_type)ti, desc, -ENOKEY};
    found = search_ring(&s, ring, poss, 1);
    rc = found ? link_found(p, found, dest, poss) : s.err;
out:
    free(desc);
    return rc;
}

static long kc_set_timeout(struct proxy_process *p, const uint64_t a[6])
{
    struct key *k;
    long rc = lookup(p, (long)a[1], LOOKUP_CREATE, NEED_SETATTR, &k, NULL);
    if (rc < 0)
        return rc;
    unsigned timeout = (unsigned)a[2];
    k->expiry = timeout ? now_s(p) + timeout : 0;
    return 0;
}

static long kc_invalidate(struct proxy_process *p, const uint64_t a[6])
{
    struct key *k;
    long rc = lookup(p, (long)a[1], 0, NEED_SEARCH, &k, NULL);
    if (rc < 0)
        return rc;
    /* The collector unlinks it from every keyring at once. */
    struct proxy_keys *ks = p->world->keys;
    k->invalidated = true;
    k->refs++;
    for (int i = 0; i < ks->nr; i++) {
        struct key *r = ks->keys[i];
        int j;
        if (r->type == KT_KEYRING && (j = link_index(r, k->serial)) >= 0)
            ring_unlink_at(ks, r, j);
    }
    key_put(ks, k);
    return 0;
}

static long kc_get_security(struct proxy_process *p, const uint64_t a[6])
{
    struct key *k;
    long rc = lookup(p, (long)a[1], 0, NEED_VIEW, &k, NULL);
    if (rc < 0)
        return rc;
    /* no security module labels keys: an empty string */
    if (a[2] && a[3] > 0 && proxy_copy_out(p, a[2], "", 1) < 0)
        return -EFAULT;
    return 1;
}

static long kc_set_reqkey_keyring(struct proxy_process *p,
                                  const uint64_t a[6])
{
    int want = (int)a[1];
    int old = p->key_reqkey;
    struct key *k;
    long rc;
    switch (want) {
    case KEY_REQKEY_DEFL_NO_CHANGE:
        return old;
    case KEY_REQKEY_DEFL_THREAD_KEYRING:
    case KEY_REQKEY_DEFL_PROCESS_KEYRING:
        /* the keyring is made now, as Linux installs it */
        rc = special_keyring(p, want == KEY_REQKEY_DEFL_THREAD_KEYRING
                                    ? KEY_SPEC_THREAD_KEYRING
                                    : KEY_SPEC_PROCESS_KEYRING,
                             LOOKUP_CREATE, &k);
        if (rc < 0)
            return rc;
        break;
    case KEY_REQKEY_DEFL_DEFAULT:
    case KEY_REQKEY_DEFL_SESSION_KEYRING:
    case KEY_REQKEY_DEFL_USER_KEYRING:
    case KEY_REQKEY_DEFL_USER_SESSION_KEYRING:
    case KEY_REQKEY_DEFL_REQUESTOR_KEYRING:
        break;
    default:
        return -EINVAL;
    }
    p->key_reqkey = want;
    return old;
}

static long kc_session_to_parent(struct proxy_process *p)
{
    struct key *ses;
    long rc = lookup(p, KEY_SPEC_SESSION_KEYRING, 0, NEED_LINK, &ses, NULL);
    if (rc < 0)
        return rc;
    struct proxy_process *parent = proxy_world_find(p->world, p->ppid);
    /* Outside the run (the first process's) or unlike the caller: EPERM. */
    int live = 0;
    for (int i = 0; parent && i < parent->nr_threads; i++)
        live += parent->threads[i].state != PROXY_THREAD_EXITED;
    if (!parent || parent->zombie || live > 1)
        return -EPERM;
    if (parent->cred.ruid != p->cred.euid ||
        parent->cred.euid != p->cred.euid ||
        parent->cred.suid != p->cred.euid ||
        parent->cred.rgid != p->cred.egid ||
        parent->cred.egid != p->cred.egid || parent->cred.sgid != p->cred.egid)
        return -EPERM;
    struct key *pses = parent->key_session
                           ? find_key(p->world->keys, parent->key_session)
                           : NULL;
    if ((pses && pses->uid != p->cred.euid) || ses->uid != p->cred.euid)
        return -EPERM;
    if (pses != ses)
        install_session(parent, ses);
    return 0;
}

/* KEYCTL_CAPABILITIES: what this service does, as Linux's bitmap. */
static long kc_capabilities(struct proxy_process *p, const uint64_t a[6])
{
    unsigned char caps[2] = {
        KEYCTL_CAPS0_CAPABILITIES | KEYCTL_CAPS0_INVALIDATE | KEYCTL_CAPS0_MOVE,
        KEYCTL_CAPS1_NS_KEYRING_NAME | KEYCTL_CAPS1_NS_KEY_TAG,
    };
    size_t n = a[2] < sizeof(caps) ? a[2] : sizeof(caps);
    if (a[1] && n && proxy_copy_out(p, a[1], caps, n) < 0)
        return -EFAULT;
    return sizeof(caps);
}

static long sys_keyctl(struct proxy_process *p, const uint64_t a[6])
{
    if (!keys_of(p->world))
        return -ENOMEM;
    switch ((int)a[0]) {
    case KEYCTL_GET_KEYRING_ID:
        return kc_get_keyring_id(p, a);
    case KEYCTL_JOIN_SESSION_KEYRING:
        return kc_join_session(p, a);
    case KEYCTL_UPDATE:
        return kc_update(p, a);
    case KEYCTL_REVOKE:
        return kc_revoke(p, a);
    case KEYCTL_CHOWN:
        return kc_chown(p, a);
    case KEYCTL_SETPERM:
        return kc_setperm(p, a);
    case KEYCTL_DESCRIBE:
        return kc_describe(p, a);
    case KEYCTL_CLEAR:
        return kc_clear(p, a);
    case KEYCTL_LINK:
        return kc_link(p, a);
    case KEYCTL_UNLINK:
        return kc_unlink(p, a);
    case KEYCTL_SEARCH:
        return kc_search(p, a);
    case KEYCTL_READ:
        return kc_read(p, a);
    case KEYCTL_INSTANTIATE:
    case KEYCTL_NEGATE:
    case KEYCTL_REJECT:
    case KEYCTL_INSTANTIATE_IOV:
        return -EPERM; /* no authorisation key: no upcall in progress */
    case KEYCTL_SET_REQKEY_KEYRING:
        return kc_set_reqkey_keyring(p, a);
    case KEYCTL_SET_TIMEOUT:
        return kc_set_timeout(p, a);
    case KEYCTL_ASSUME_AUTHORITY:
        if ((long)a[1] < 0)
            return -EINVAL;
        return a[1] ? -ENOKEY : 0; /* no key is under construction */
    case KEYCTL_GET_SECURITY:
        return kc_get_security(p, a);
    case KEYCTL_SESSION_TO_PARENT:
        return kc_session_to_parent(p);
    case KEYCTL_INVALIDATE:
        return kc_invalidate(p, a);
    case KEYCTL_MOVE:
        return kc_move(p, a);
    case KEYCTL_CAPABILITIES:
        return kc_capabilities(p, a);
    default: /* GET_PERSISTENT, DH, PKEY, RESTRICT, WATCH and unknown */
        return -EOPNOTSUPP;
    }
}

/* ---- credentials over fork, exec, exit ------------------------------------------ */

void proxy_keys_fork(struct proxy_process *c)
{
    struct proxy_keys *ks = c->world->keys;
    struct key *k = ks && c->key_session ? find_key(ks, c->key_session)
                                         : NULL;
    if (k)
        k->refs++;
    else
        c->key_session = 0;
    c->key_process = 0; /* only threads of one process share it */
    c->threads[0].key_thread = 0;
}

void proxy_keys_clone_thread(struct proxy_process *p, struct proxy_thread *t)
{
    t->key_thread = 0;
    if (p->threads[p->cur].key_thread)
        (void)install_own(p, &t->key_thread, "_tid");
}

void proxy_keys_thread_exit(struct proxy_process *p, struct proxy_thread *t)
{
    put_serial(p->world, &t->key_thread);
}

void proxy_keys_exec(struct proxy_process *p)
{
    put_serial(p->world, &p->key_process);
    for (int i = 0; i < p->nr_threads; i++)
        put_serial(p->world, &p->threads[i].key_thread);
}

void proxy_keys_exit(struct proxy_process *p)
{
    proxy_keys_exec(p);
    put_serial(p->world, &p->key_session);
}

void proxy_keys_world_free(struct proxy_world *w)
{
    struct proxy_keys *ks = w->keys;
    if (!ks)
        return;
    for (int i = 0; i < ks->nr; i++) {
        free(ks->keys[i]->links);
        free(ks->keys[i]->desc);
        free(ks->keys[i]->data);
        free(ks->keys[i]);
    }
    free(ks->keys);
    free(ks->users);
    free(ks);
    w->keys = NULL;
}

/* ---- /proc/keys, /proc/key-users ------------------------------------------------ */

static void timeout_text(struct proxy_process *p, const struct key *k,
                         char *out, size_t cap)
{
    int64_t now = now_s(p);
    if (!k->expiry) {
        snprintf(out, cap, "perm");
        return;
    }
    if (now >= k->expiry) {
        snprintf(out, cap, "expd");
        return;
    }
    int64_t t = k->expiry - now;
    if (t < 60)
        snprintf(out, cap, "%llds", (long long)t);
    else if (t < 60 * 60)
        snprintf(out, cap, "%lldm", (long long)(t / 60));
    else if (t < 60 * 60 * 24)
        snprintf(out, cap, "%lldh", (long long)(t / 3600));
    else if (t < 60 * 60 * 24 * 7)
        snprintf(out, cap, "%lldd", (long long)(t / 86400));
    else
        snprintf(out, cap, "%lldw", (long long)(t / 604800));
}

int proxy_keys_proc_line(struct proxy_process *viewer, int i, char *line,
                         size_t cap)
{
    struct proxy_keys *ks = viewer->world ? viewer->world->keys : NULL;
    if (!ks || i >= ks->nr)
        return 0;
    line[0] = '\0';
    const struct key *k = ks->keys[i];
    /* keys the viewer may view, as Linux's proc_keys_show */
    if (!permitted(viewer, k, possessed(viewer, k), NEED_VIEW))
        return 1;
    char tmo[16], tail[64];
    timeout_text(viewer, k, tmo, sizeof(tmo));
    if (k->type == KT_KEYRING) {
        if (k->nr_links)
            snprintf(tail, sizeof(tail), ": %d", k->nr_links);
        else
            snprintf(tail, sizeof(tail), ": empty");
    } else {
        snprintf(tail, sizeof(tail), ": %zu", k->len);
    }
    snprintf(line, cap, "%08x %c%c%c%c%c%c%c %5d %4s %08x %5u %5u %-9.9s %.*s%s\n",
             (unsigned)k->serial, 'I', k->revoked ? 'R' : '-',
             '-', k->in_quota ? 'Q' : '-', '-', '-',
             k->invalidated ? 'i' : '-', k->refs, tmo, k->perm,
             uid_seen(viewer, k->uid), gid_seen(viewer, k->gid),
             type_names[k->type], 200, k->desc,
             k->revoked && k->type != KT_KEYRING ? ": 0" : tail);
    return 1;
}

int proxy_keys_users_line(struct proxy_process *viewer, int i, char *line,
                          size_t cap)
{
    struct proxy_keys *ks = viewer->world ? viewer->world->keys : NULL;
    if (!ks || i >= ks->nr_users)
        return 0;
    /* Linux's users are a tree by uid: the i-th smallest */
    const struct key_user *u = NULL;
    for (int j = 0; j < ks->nr_users; j++) {
        int below = 0;
        for (int m = 0; m < ks->nr_users; m++)
            below += ks->users[m].uid < ks->users[j].uid;
        if (below == i)
            u = &ks->users[j];
    }
    int usage = 0;
    for (int j = 0; j < ks->nr; j++)
        usage += ks->keys[j]->uid == u->uid;
    line[0] = '\0';
    if (!usage) /* a user whose keys are all gone is not listed */
        return 1;
    int max_keys;
    size_t max_bytes;
    quota_limits(u->uid, &max_keys, &max_bytes);
    snprintf(line, cap, "%5u: %5d %d/%d %d/%d %zu/%zu\n",
             uid_seen(viewer, u->uid), usage + 1, usage, usage, u->nr_keys,
             max_keys, u->bytes, max_bytes);
    return 1;
}

const struct proxy_syscall proxy_keys_syscalls[] = {
    {SYS_add_key, "add_key", sys_add_key},
    {SYS_request_key, "request_key", sys_request_key},
    {SYS_keyctl, "keyctl", sys_keyctl},
    {-1, NULL, NULL},
};
