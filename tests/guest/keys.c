/*
 * keys.c - the kernel key retention service as Linux gives it: add_key,
 * request_key and keyctl on a fresh anonymous session keyring: key types
 * (user, logon, keyring), default permissions and owners, the special
 * keyrings (thread, process, session, user, user session, created on
 * demand), update, read, describe, search (nested keyrings), link/unlink,
 * clear, setperm (possession), chown, revoke, timeouts, invalidate,
 * request_key without an upcall, the authorisation-only operations, the
 * session keyring over fork and exec, a thread's own keyring,
 * SESSION_TO_PARENT, and the run's keys in /proc/keys. Prints facts, never
 * serials (Linux's are random). Run natively and under hvrun, the output
 * must match (tests/run-guest-tests.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/keyctl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

typedef int32_t key_serial_t;

/* keyutils.h's permission bits (not in the uapi headers) */
#define KEY_POS_VIEW 0x01000000
#define KEY_USR_VIEW 0x00010000
#define KEY_USR_READ 0x00020000

static long kc(long op, long a, long b, long c, long d)
{
    return syscall(SYS_keyctl, op, a, b, c, d);
}

static long add(const char *type, const char *desc, const void *data,
                size_t len, key_serial_t ring)
{
    return syscall(SYS_add_key, type, desc, data, len, ring);
}

static long req(const char *type, const char *desc, const char *info,
                key_serial_t dest)
{
    return syscall(SYS_request_key, type, desc, info, dest);
}

/*
 * Until the joined thread has left the thread group (/proc/self/status's
 * Threads: 1), at most ~5 s. pthread_join returns once the thread's tid
 * is cleared, which Linux does before it takes the exiting thread out of
 * the group, and KEYCTL_SESSION_TO_PARENT refuses a parent with more
 * than one thread (EPERM): natively a child forked right after the join
 * got EPERM now and then (2 runs in 500 on a 2-core host).
 */
static void await_single_thread(void)
{
    for (int tries = 0; tries < 50000; tries++) {
        FILE *f = fopen("/proc/self/status", "r");
        char line[256];
        int threads = -1;
        while (f && fgets(line, sizeof(line), f))
            if (!strncmp(line, "Threads:", 8))
                threads = atoi(line + 8);
        if (f)
            fclose(f);
        if (threads == 1)
            return;
        usleep(100);
    }
}

/* A result as "ok" (or the given name for a non-negative value) or the
 * errno's name. */
static const char *res(long rc)
{
    static char buf[64];
    if (rc >= 0)
        snprintf(buf, sizeof(buf), "ok");
    else
        snprintf(buf, sizeof(buf), "%s", strerrorname_np(errno));
    return buf;
}

static void describe(const char *what, long id)
{
    char buf[256];
    long n = kc(KEYCTL_DESCRIBE, id, (long)buf, sizeof(buf), 0);
    if (n < 0)
        printf("%s: describe %s\n", what, res(n));
    else
        printf("%s: %s (len %ld)\n", what, buf, n);
}

static long id_of(long spec, int create)
{
    return kc(KEYCTL_GET_KEYRING_ID, spec, create, 0, 0);
}

static void show_read(const char *what, long id)
{
    char buf[64] = {0};
    long n = kc(KEYCTL_READ, id, (long)buf, sizeof(buf) - 1, 0);
    if (n < 0)
        printf("%s: read %s\n", what, res(n));
    else
        printf("%s: read %ld \"%.*s\"\n", what, n, (int)(n < 63 ? n : 63),
               buf);
}

static long ring_count(long id)
{
    key_serial_t ids[64];
    long n = kc(KEYCTL_READ, id, (long)ids, sizeof(ids), 0);
    return n < 0 ? n : n / (long)sizeof(key_serial_t);
}

static void *thread_main(void *arg)
{
    long parent_thread = *(long *)arg;
    printf("thread: own keyring before: %s\n",
           res(id_of(KEY_SPEC_THREAD_KEYRING, 0)));
    long t = id_of(KEY_SPEC_THREAD_KEYRING, 1);
    printf("thread: created %s, differs from the creator's %d\n", res(t),
           t != parent_thread);
    describe("thread keyring", KEY_SPEC_THREAD_KEYRING);
    return NULL;
}

/* /proc/keys' line of a key: its flags, permissions, owner, type and
 * description columns (the serial, use count and timeout left out). */
static void proc_keys_line(const char *what, long id)
{
    FILE *f = fopen("/proc/keys", "r");
    CHECK(f);
    char line[512], want[16];
    snprintf(want, sizeof(want), "%08lx ", id);
    int found = 0;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, want, 9))
            continue;
        char flags[16], timeout[16], perm[16], type[32];
        int use;
        unsigned uid, gid;
        int off = 0;
        if (sscanf(line, "%*x %15s %d %15s %15s %u %u %31s %n", flags, &use,
                   timeout, perm, &uid, &gid, type, &off) == 7) {
            printf("%s: /proc/keys %s %s %s %u %u %s %s", what, flags,
                   strcmp(timeout, "perm") ? "timed" : "perm", perm, uid,
                   gid, type, line + off);
            found = 1;
        }
    }
    fclose(f);
    if (!found)
        printf("%s: not in /proc/keys\n", what);
}

/* /proc/key-users' figures for uid: keys, keys in quota, bytes. */
static int key_user(unsigned uid, int *keys, int *qkeys, long *qbytes)
{
    FILE *f = fopen("/proc/key-users", "r");
    CHECK(f);
    char line[256];
    int found = 0;
    while (fgets(line, sizeof(line), f)) {
        unsigned u;
        int usage, nkeys, nikeys, qn, qmax;
        long qb, qmaxb;
        if (sscanf(line, " %u: %d %d/%d %d/%d %ld/%ld", &u, &usage, &nkeys,
                   &nikeys, &qn, &qmax, &qb, &qmaxb) == 8 &&
            u == uid) {
            *keys = nkeys;
            *qkeys = qn;
            *qbytes = qb;
            found = 1;
        }
    }
    fclose(f);
    return found;
}

/* A process of another uid: possession and the other bits, its own user
 * keyrings, its byte quota. */
static void other_user(long root_key)
{
    CHECK(setgid(1000) == 0 && setuid(1000) == 0);
    describe("uid 1000: root's k1 (possessed)", root_key);
    long ses = kc(KEYCTL_JOIN_SESSION_KEYRING, 0, 0, 0, 0);
    CHECK(ses > 0);
    describe("uid 1000: session", ses);
    describe("uid 1000: root's k1 (not possessed)", root_key);
    describe("uid 1000: user", KEY_SPEC_USER_KEYRING);
    char payload[2000];
    memset(payload, 'q', sizeof(payload));
    int n = 0;
    long rc;
    for (;;) {
        char desc[16];
        snprintf(desc, sizeof(desc), "q%02d", n);
        rc = add("user", desc, payload, sizeof(payload), ses);
        if (rc < 0 || ++n > 50)
            break;
    }
    /* (how many fit depends on the uid's keys the host still holds
     * natively: its collector frees a dead session's a moment later) */
    printf("uid 1000: keys of 2000 bytes until %s\n", res(rc));
    int keys, qkeys;
    long qbytes;
    CHECK(key_user(1000, &keys, &qkeys, &qbytes));
    printf("uid 1000: at the byte quota: %d\n",
           n > 0 && qbytes <= 20000 && qbytes + 2008 > 20000);
    printf("uid 1000: chown to root: %s\n",
           res(kc(KEYCTL_CHOWN, ses, 0, -1, 0)));
    printf("uid 1000: setperm of root's k1: %s\n",
           res(kc(KEYCTL_SETPERM, root_key, 0x3f3f0000, 0, 0)));
}

static void exec_child(long ses)
{
    printf("exec: session kept %d\n", id_of(KEY_SPEC_SESSION_KEYRING, 0) == ses);
    printf("exec: process keyring %s\n", res(id_of(KEY_SPEC_PROCESS_KEYRING, 0)));
    printf("exec: thread keyring %s\n", res(id_of(KEY_SPEC_THREAD_KEYRING, 0)));
    printf("exec: k1 found %s\n", res(req("user", "k1", NULL, 0)));
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc == 3 && !strcmp(argv[1], "exec")) {
        exec_child(atol(argv[2]));
        return 0;
    }

    /* A fresh session of our own: nothing of the caller's shows. */
    long ses = kc(KEYCTL_JOIN_SESSION_KEYRING, 0, 0, 0, 0);
    CHECK(ses > 0);
    CHECK(id_of(KEY_SPEC_SESSION_KEYRING, 0) == ses);
    describe("session", KEY_SPEC_SESSION_KEYRING);
    printf("session: %ld keys\n", ring_count(ses));

    /* Thread and process keyrings: absent until created. */
    printf("thread keyring: %s\n", res(id_of(KEY_SPEC_THREAD_KEYRING, 0)));
    describe("thread (not made by describe)", KEY_SPEC_THREAD_KEYRING);
    printf("update the thread keyring (not made): %s\n",
           res(kc(KEYCTL_UPDATE, KEY_SPEC_THREAD_KEYRING, (long)"x", 1, 0)));
    long thr = id_of(KEY_SPEC_THREAD_KEYRING, 1);
    printf("thread keyring created: %s, again the same %d\n", res(thr),
           id_of(KEY_SPEC_THREAD_KEYRING, 0) == thr);
    describe("thread", thr);
    printf("process keyring: %s\n", res(id_of(KEY_SPEC_PROCESS_KEYRING, 0)));
    long proc = id_of(KEY_SPEC_PROCESS_KEYRING, 1);
    printf("process keyring created: %s\n", res(proc));
    describe("process", proc);
    describe("user", KEY_SPEC_USER_KEYRING);
    describe("user session", KEY_SPEC_USER_SESSION_KEYRING);
    printf("user keyring stable %d, differs from user session %d\n",
           id_of(KEY_SPEC_USER_KEYRING, 0) == id_of(KEY_SPEC_USER_KEYRING, 1),
           id_of(KEY_SPEC_USER_KEYRING, 0) !=
               id_of(KEY_SPEC_USER_SESSION_KEYRING, 0));
    printf("user session links the user keyring: %d\n",
           kc(KEYCTL_SEARCH, KEY_SPEC_USER_SESSION_KEYRING, (long)"keyring",
              (long)"_uid.0", 0) == id_of(KEY_SPEC_USER_KEYRING, 0));
    printf("reqkey auth key: %s\n", res(id_of(KEY_SPEC_REQKEY_AUTH_KEY, 0)));
    printf("requestor keyring: %s\n",
           res(id_of(KEY_SPEC_REQUESTOR_KEYRING, 0)));
    printf("spec -9: %s\n", res(id_of(-9, 0)));
    printf("serial 0: %s\n", res(id_of(0, 0)));
    printf("no such serial: %s\n", res(id_of(0x7ffffff0, 0)));

    /* user keys */
    long k1 = add("user", "k1", "value1", 6, KEY_SPEC_SESSION_KEYRING);
    printf("add k1: %s\n", res(k1));
    describe("k1", k1);
    show_read("k1", k1);
    char small[2];
    printf("k1 short read: %ld\n", kc(KEYCTL_READ, k1, (long)small, 2, 0));
    printf("k1 sized describe: %ld\n", kc(KEYCTL_DESCRIBE, k1, 0, 0, 0));
    long k1b = add("user", "k1", "v2", 2, KEY_SPEC_SESSION_KEYRING);
    printf("add k1 again: %s, same key %d\n", res(k1b), k1b == k1);
    show_read("k1", k1);
    printf("update k1: %s\n", res(kc(KEYCTL_UPDATE, k1, (long)"value3", 6, 0)));
    show_read("k1", k1);
    printf("session: %ld keys\n", ring_count(ses));
    printf("add empty payload: %s\n",
           res(add("user", "k0", "", 0, KEY_SPEC_SESSION_KEYRING)));
    printf("add no type: %s\n",
           res(add("nosuch", "x", "v", 1, KEY_SPEC_SESSION_KEYRING)));
    printf("add dot type: %s\n",
           res(add(".x", "x", "v", 1, KEY_SPEC_SESSION_KEYRING)));
    printf("add empty desc: %s\n",
           res(add("user", "", "v", 1, KEY_SPEC_SESSION_KEYRING)));
    printf("add null desc: %s\n",
           res(add("user", NULL, "v", 1, KEY_SPEC_SESSION_KEYRING)));
    printf("add null payload with length: %s\n",
           res(add("user", "x", NULL, 1, KEY_SPEC_SESSION_KEYRING)));
    printf("add to a user key: %s\n", res(add("user", "x", "v", 1, k1)));
    printf("add to serial 0: %s\n", res(add("user", "x", "v", 1, 0)));
    printf("add bad pointer: %s\n",
           res(add("user", (const char *)8, "v", 1, KEY_SPEC_SESSION_KEYRING)));

    /* logon keys: not readable, a "service:" description */
    printf("logon no colon: %s\n",
           res(add("logon", "plain", "v", 1, KEY_SPEC_SESSION_KEYRING)));
    long lg = add("logon", "svc:name", "secret", 6, KEY_SPEC_SESSION_KEYRING);
    printf("logon: %s\n", res(lg));
    describe("logon", lg);
    show_read("logon", lg);

    /* keyrings inside keyrings, search, request_key */
    printf("keyring with payload: %s\n",
           res(add("keyring", "r0", "x", 1, KEY_SPEC_SESSION_KEYRING)));
    long ring1 = add("keyring", "ring1", NULL, 0, KEY_SPEC_SESSION_KEYRING);
    printf("ring1: %s\n", res(ring1));
    describe("ring1", ring1);
    long k2 = add("user", "k2", "two", 3, ring1);
    printf("k2 in ring1: %s\n", res(k2));
    printf("search k1: same %d\n",
           kc(KEYCTL_SEARCH, ses, (long)"user", (long)"k1", 0) == k1);
    printf("search k2 nested: same %d\n",
           kc(KEYCTL_SEARCH, ses, (long)"user", (long)"k2", 0) == k2);
    printf("search ring1 by type keyring: same %d\n",
           kc(KEYCTL_SEARCH, ses, (long)"keyring", (long)"ring1", 0) == ring1);
    printf("search missing: %s\n",
           res(kc(KEYCTL_SEARCH, ses, (long)"user", (long)"nope", 0)));
    printf("search wrong type: %s\n",
           res(kc(KEYCTL_SEARCH, ses, (long)"logon", (long)"k1", 0)));
    printf("search in a user key: %s\n",
           res(kc(KEYCTL_SEARCH, k1, (long)"user", (long)"k1", 0)));
    printf("request k2: same %d\n", req("user", "k2", NULL, 0) == k2);
    printf("request missing: %s\n", res(req("user", "nope", NULL, 0)));
    printf("request missing to ring1: %s\n",
           res(req("user", "nope", NULL, ring1)));
    printf("request bad type: %s\n", res(req("nosuch", "nope", NULL, 0)));
    long got = req("user", "k1", NULL, ring1);
    printf("request k1 into ring1: same %d, ring1 now %ld keys\n", got == k1,
           ring_count(ring1));

    /* link, unlink, clear */
    printf("unlink k1 from ring1: %s\n", res(kc(KEYCTL_UNLINK, k1, ring1, 0, 0)));
    printf("unlink again: %s\n", res(kc(KEYCTL_UNLINK, k1, ring1, 0, 0)));
    long rc = kc(KEYCTL_LINK, k1, ring1, 0, 0);
    printf("link k1 to ring1: %s, %ld keys\n", res(rc), ring_count(ring1));
    rc = kc(KEYCTL_LINK, k1, ring1, 0, 0);
    printf("link twice: %s, %ld keys\n", res(rc), ring_count(ring1));
    long k1dup = add("user", "k1", "in ring1", 8, ring1);
    printf("add k1 to ring1: same key %d, %ld keys\n", k1dup == k1,
           ring_count(ring1));
    long k1new = add("keyring", "k1", NULL, 0, ring1);
    printf("add keyring k1 to ring1: new %d, %ld keys\n", k1new != k1,
           ring_count(ring1));
    printf("link into a user key: %s\n", res(kc(KEYCTL_LINK, k2, k1, 0, 0)));
    printf("link a ring into itself: %s\n",
           res(kc(KEYCTL_LINK, ring1, ring1, 0, 0)));
    printf("link session into ring1 (loop): %s\n",
           res(kc(KEYCTL_LINK, ses, ring1, 0, 0)));
    rc = kc(KEYCTL_CLEAR, ring1, 0, 0, 0);
    printf("clear ring1: %s, %ld keys\n", res(rc), ring_count(ring1));
    printf("clear a user key: %s\n", res(kc(KEYCTL_CLEAR, k1, 0, 0, 0)));

    /* permissions */
    long kp = add("user", "kp", "p", 1, KEY_SPEC_SESSION_KEYRING);
    printf("setperm view-only: %s\n",
           res(kc(KEYCTL_SETPERM, kp, KEY_POS_VIEW | KEY_USR_VIEW, 0, 0)));
    describe("kp", kp);
    show_read("kp", kp);
    printf("update kp: %s\n", res(kc(KEYCTL_UPDATE, kp, (long)"q", 1, 0)));
    printf("add_key over kp (no write): %s\n",
           res(add("user", "kp", "q", 1, KEY_SPEC_SESSION_KEYRING)));
    printf("setperm kp again: %s\n", res(kc(KEYCTL_SETPERM, kp, 0x3f010000, 0, 0)));
    printf("setperm bad bits: %s\n", res(kc(KEYCTL_SETPERM, k1, 0x40000000, 0, 0)));
    long ku = add("user", "ku", "u", 1, KEY_SPEC_SESSION_KEYRING);
    printf("setperm user-read only: %s\n",
           res(kc(KEYCTL_SETPERM, ku, KEY_USR_VIEW | KEY_USR_READ, 0, 0)));
    show_read("ku (user bits)", ku);
    printf("chown ku: %s\n", res(kc(KEYCTL_CHOWN, ku, 1234, 5678, 0)));
    describe("ku", ku);
    show_read("ku (other bits)", ku);
    printf("chown no change: %s\n", res(kc(KEYCTL_CHOWN, k1, -1, -1, 0)));
    char sec[16] = "x";
    printf("get_security: %ld \"%s\"\n",
           kc(KEYCTL_GET_SECURITY, k1, (long)sec, sizeof(sec), 0), sec);

    /* revoke, timeout, invalidate */
    long kr = add("user", "kr", "r", 1, KEY_SPEC_SESSION_KEYRING);
    printf("revoke: %s\n", res(kc(KEYCTL_REVOKE, kr, 0, 0, 0)));
    show_read("kr", kr);
    describe("kr", kr);
    printf("update revoked: %s\n", res(kc(KEYCTL_UPDATE, kr, (long)"z", 1, 0)));
    printf("search revoked: %s\n",
           res(kc(KEYCTL_SEARCH, ses, (long)"user", (long)"kr", 0)));
    printf("revoke again: %s\n", res(kc(KEYCTL_REVOKE, kr, 0, 0, 0)));
    long kr2 = add("user", "kr", "r2", 2, KEY_SPEC_SESSION_KEYRING);
    printf("add_key over revoked: %s, a new key %d\n", res(kr2), kr2 != kr);
    show_read("kr (new)", kr2);
    long kt = add("user", "kt", "t", 1, KEY_SPEC_SESSION_KEYRING);
    printf("timeout: %s\n", res(kc(KEYCTL_SET_TIMEOUT, kt, 1, 0, 0)));
    proc_keys_line("kt", kt);
    show_read("kt (before)", kt);
    struct timespec two = {2, 100000000};
    nanosleep(&two, NULL);
    show_read("kt (after)", kt);
    printf("search expired: %s\n",
           res(kc(KEYCTL_SEARCH, ses, (long)"user", (long)"kt", 0)));
    printf("timeout expired: %s\n", res(kc(KEYCTL_SET_TIMEOUT, kt, 0, 0, 0)));

    /* authorisation-only operations, without an upcall in progress */
    printf("instantiate: %s\n", res(kc(KEYCTL_INSTANTIATE, k1, (long)"a", 1, 0)));
    printf("negate: %s\n", res(kc(KEYCTL_NEGATE, k1, 10, 0, 0)));
    printf("reject: %s\n", res(kc(KEYCTL_REJECT, k1, 10, EKEYREJECTED, 0)));
    printf("assume authority 0: %s\n", res(kc(KEYCTL_ASSUME_AUTHORITY, 0, 0, 0, 0)));
    printf("assume authority k1: %s\n", res(kc(KEYCTL_ASSUME_AUTHORITY, k1, 0, 0, 0)));
    printf("reqkey default: %ld\n",
           kc(KEYCTL_SET_REQKEY_KEYRING, KEY_REQKEY_DEFL_NO_CHANGE, 0, 0, 0));
    printf("set reqkey thread: old %ld\n",
           kc(KEYCTL_SET_REQKEY_KEYRING, KEY_REQKEY_DEFL_THREAD_KEYRING, 0, 0, 0));
    printf("reqkey now: %ld\n",
           kc(KEYCTL_SET_REQKEY_KEYRING, KEY_REQKEY_DEFL_NO_CHANGE, 0, 0, 0));
    printf("set reqkey 9: %s\n", res(kc(KEYCTL_SET_REQKEY_KEYRING, 9, 0, 0, 0)));
    kc(KEYCTL_SET_REQKEY_KEYRING, KEY_REQKEY_DEFL_DEFAULT, 0, 0, 0);
    printf("unknown op: %s\n", res(kc(9999, 0, 0, 0, 0)));
    printf("describe bad buffer: %s\n", res(kc(KEYCTL_DESCRIBE, k1, 8, 100, 0)));

    proc_keys_line("k1", k1);
    proc_keys_line("logon", lg);
    proc_keys_line("ring1", ring1);
    proc_keys_line("session", ses);
    proc_keys_line("kr", kr);

    /* Invalidated: unlinked by the collector a moment later on Linux (a
     * search meanwhile says EKEYREVOKED, then ENOKEY), at once here. */
    long ki = add("user", "ki", "i", 1, KEY_SPEC_SESSION_KEYRING);
    printf("invalidate: %s\n", res(kc(KEYCTL_INVALIDATE, ki, 0, 0, 0)));
    long srch = kc(KEYCTL_SEARCH, ses, (long)"user", (long)"ki", 0);
    printf("search invalidated fails: %d\n",
           srch < 0 && (errno == ENOKEY || errno == EKEYREVOKED));
    printf("read invalidated fails: %d\n", kc(KEYCTL_READ, ki, 0, 0, 0) < 0);

    /* named sessions */
    long named = kc(KEYCTL_JOIN_SESSION_KEYRING, (long)"hvrun-named", 0, 0, 0);
    printf("named session: %s, new %d\n", res(named), named != ses);
    describe("named", named);
    printf("k1 in the named session: %s\n", res(req("user", "k1", NULL, 0)));
    printf("join the same name: same %d\n",
           kc(KEYCTL_JOIN_SESSION_KEYRING, (long)"hvrun-named", 0, 0, 0) == named);
    ses = kc(KEYCTL_JOIN_SESSION_KEYRING, 0, 0, 0, 0);
    long k3 = add("user", "k3", "three", 5, KEY_SPEC_SESSION_KEYRING);
    CHECK(k3 > 0);

    /* threads, fork, exec */
    pthread_t th;
    CHECK(pthread_create(&th, NULL, thread_main, &thr) == 0);
    pthread_join(th, NULL);
    await_single_thread(); /* before the child's SESSION_TO_PARENT */
    printf("main thread keyring kept: %d\n", id_of(KEY_SPEC_THREAD_KEYRING, 0) == thr);

    pid_t pid = fork();
    if (pid == 0) {
        printf("child: session same %d, k3 found %d\n",
               id_of(KEY_SPEC_SESSION_KEYRING, 0) == ses,
               req("user", "k3", NULL, 0) == k3);
        printf("child: process keyring %s\n",
               res(id_of(KEY_SPEC_PROCESS_KEYRING, 0)));
        printf("child: thread keyring %s\n",
               res(id_of(KEY_SPEC_THREAD_KEYRING, 0)));
        long cs = kc(KEYCTL_JOIN_SESSION_KEYRING, (long)"child-ses", 0, 0, 0);
        add("user", "from-child", "c", 1, KEY_SPEC_SESSION_KEYRING);
        printf("child: session to parent: %s\n",
               res(kc(KEYCTL_SESSION_TO_PARENT, 0, 0, 0, 0)));
        (void)cs;
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && st == 0);
    printf("parent: session changed %d\n", id_of(KEY_SPEC_SESSION_KEYRING, 0) != ses);
    describe("parent session", KEY_SPEC_SESSION_KEYRING);
    printf("parent: from-child found %s\n", res(req("user", "from-child", NULL, 0)));
    ses = kc(KEYCTL_JOIN_SESSION_KEYRING, 0, 0, 0, 0);
    CHECK(add("user", "k1", "one", 3, KEY_SPEC_SESSION_KEYRING) > 0);

    pid = fork();
    if (pid == 0) {
        char arg[32];
        snprintf(arg, sizeof(arg), "%ld", ses);
        execl("/proc/self/exe", argv[0], "exec", arg, (char *)NULL);
        _exit(127);
    }
    CHECK(waitpid(pid, &st, 0) == pid && st == 0);

    /* quota: what keys cost root, as deltas (the host's own keys count
     * natively) */
    int keys0, qkeys0, keys1, qkeys1;
    long qbytes0, qbytes1;
    CHECK(key_user(0, &keys0, &qkeys0, &qbytes0));
    long kq = add("user", "quota", "12345", 5, KEY_SPEC_SESSION_KEYRING);
    long rq = add("keyring", "quota-ring", NULL, 0, KEY_SPEC_SESSION_KEYRING);
    CHECK(kq > 0 && rq > 0);
    CHECK(key_user(0, &keys1, &qkeys1, &qbytes1));
    printf("quota: +%d keys, +%d in quota, +%ld bytes\n", keys1 - keys0,
           qkeys1 - qkeys0, qbytes1 - qbytes0);
    CHECK(kc(KEYCTL_UPDATE, kq, (long)"1234567", 7, 0) == 0);
    CHECK(key_user(0, &keys1, &qkeys1, &qbytes1));
    printf("quota after update: +%ld bytes\n", qbytes1 - qbytes0);
    CHECK(kc(KEYCTL_UNLINK, kq, KEY_SPEC_SESSION_KEYRING, 0, 0) == 0);
    CHECK(kc(KEYCTL_UNLINK, rq, KEY_SPEC_SESSION_KEYRING, 0, 0) == 0);

    pid = fork();
    if (pid == 0) {
        other_user(add("user", "k1", "one", 3, KEY_SPEC_SESSION_KEYRING));
        _exit(0);
    }
    CHECK(waitpid(pid, &st, 0) == pid && st == 0);
    return 0;
}
