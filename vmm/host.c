/*
 * host.c - what opening a host means for every backend: the fixed CPU
 * model built from the host CPU, the CPUID probe (run through the
 * backend's own VMs, so it measures what that backend's guests see), the
 * pinning of the thread that runs guests, and the per-boot cache files.
 */
#include "backend_impl.h"

#include <stdarg.h>

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cpuid.h>
#include <pthread.h>

#include "cpuid_probe.h"

static pid_t self_pid; /* 0: not read since start or the last fork */

static void self_pid_forget(void) { self_pid = 0; }

static void register_self_pid_forget(void)
{
    (void)pthread_atfork(NULL, NULL, self_pid_forget);
}

pid_t vmm_host_self_pid(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (!self_pid) {
        (void)pthread_once(&once, register_self_pid_forget);
        self_pid = getpid();
    }
    return self_pid;
}

void vmm_host_cpuid_model(const struct vmm_host *host, uint32_t leaf,
                          uint32_t subleaf, uint32_t regs[4])
{
    vmm_cpu_model_cpuid(host->model, host->nr_model, leaf, subleaf, regs);
}

void vmm_host_model_identity(const struct vmm_host *host,
                             struct vmm_cpu_identity *out, uint64_t *hwcap,
                             uint64_t *hwcap2)
{
    struct vmm_cpuid_entry seen[VMM_CPUID_PROBE_LEAVES];
    vmm_cpuid_model_view(host->model, host->nr_model, seen);
    vmm_cpuid_identity_of(seen, out);
    *hwcap = vmm_cpu_model_hwcap(host->model, host->nr_model);
    *hwcap2 = vmm_cpu_model_hwcap2(host->model, host->nr_model);
}

/*
 * Per-boot caches. KVM_GET_SUPPORTED_CPUID costs ~0.7 ms on kvm_pvm, on
 * every run, and its answer changes only with the host kernel; so it (and
 * the CPUID probe's result) is kept per boot (and kernel release) in
 * $XDG_CACHE_HOME/hvrun, else ~/.cache/hvrun. A cache
 * that is missing, unreadable, unwritable or malformed is only a miss;
 * HVRUN_NO_CACHE=1 turns it off.
 */
#define CPUID_CACHE_MAGIC 0x6376706964763101ULL /* "cpuidv1" */

static int cache_dir(char *out, size_t len)
{
    const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n = x && x[0] == '/' ? snprintf(out, len, "%s/hvrun", x)
            : home && home[0] == '/' ? snprintf(out, len, "%s/.cache/hvrun", home)
                                     : -1;
    return n > 0 && (size_t)n < len ? 0 : -1;
}

static bool cache_off(void)
{
    const char *off = getenv("HVRUN_NO_CACHE");
    return off && *off && strcmp(off, "0") != 0;
}

int vmm_host_cache_dir(char *out, size_t len)
{
    if (cache_off() || cache_dir(out, len) < 0)
        return -1;
    char parent[256];
    snprintf(parent, sizeof(parent), "%s", out);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent) {
        *slash = 0;
        (void)mkdirat(AT_FDCWD, parent, 0700); /* ~/.cache */
    }
    (void)mkdirat(AT_FDCWD, out, 0700);
    return 0;
}

int vmm_host_cache_file(const char *name, char *out, size_t len)
{
    char dir[256], boot[64] = {0};
    struct utsname u;
    if (cache_off() || cache_dir(dir, sizeof(dir)) < 0 || uname(&u) < 0)
        return -1;
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd < 0 ? -1 : read(fd, boot, sizeof(boot) - 1);
    if (fd >= 0)
        close(fd);
    if (got < 36)
        return -1;
    boot[36] = 0;
    int n = snprintf(out, len, "%s/%s-%s-%s", dir, name, u.release, boot);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

int vmm_host_cache_read(const char *path, struct vmm_cpuid_entry **out, int *n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    uint64_t head[2];
    struct stat st;
    struct vmm_cpuid_entry *e = NULL;
    int rc = -1;
    if (read(fd, head, sizeof(head)) == (ssize_t)sizeof(head) &&
        head[0] == CPUID_CACHE_MAGIC && head[1] > 0 && head[1] <= 4096 &&
        fstat(fd, &st) == 0 &&
        (uint64_t)st.st_size == sizeof(head) + head[1] * sizeof(*e) &&
        (e = calloc(head[1], sizeof(*e))) &&
        read(fd, e, head[1] * sizeof(*e)) == (ssize_t)(head[1] * sizeof(*e))) {
        *out = e;
        *n = (int)head[1];
        e = NULL;
        rc = 0;
    }
    free(e);
    close(fd);
    return rc;
}

/* Written to a temporary name and renamed, so a reader sees all or none. */
void vmm_host_cache_write(const char *path, const struct vmm_cpuid_entry *e,
                        int n)
{
    char dir[256], tmp[600];
    if (vmm_host_cache_dir(dir, sizeof(dir)) < 0) /* made if missing */
        return;
    snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return;
    uint64_t head[2] = {CPUID_CACHE_MAGIC, (uint64_t)n};
    bool ok = write(fd, head, sizeof(head)) == (ssize_t)sizeof(head) &&
              write(fd, e, (size_t)n * sizeof(*e)) ==
                  (ssize_t)((size_t)n * sizeof(*e));
    close(fd);
    if (!ok || rename(tmp, path) < 0)
        unlink(tmp);
}

/*
 * The instruction-set features the guest can really execute are the host
 * CPU's own (nothing traps SSE or AVX), and kvm_pvm's
 * KVM_GET_SUPPORTED_CPUID under-reports them, so the model is checked
 * against the CPUID instruction here. State components are different: the
 * guest's XCR0 is set through KVM, so KVM's leaf 0xd must allow it.
 */
static int native_cpuid_table(struct vmm_cpuid_entry *t, int max)
{
    static const uint32_t leaves[][2] = {{1, 0}, {7, 0}, {0x80000001, 0}};
    int n = 0;
    for (size_t i = 0; i < sizeof(leaves) / sizeof(leaves[0]) && n < max;
         i++) {
        unsigned a, b, c, d;
        __cpuid_count(leaves[i][0], leaves[i][1], a, b, c, d);
        t[n++] = (struct vmm_cpuid_entry){leaves[i][0], leaves[i][1],
                                          VMM_CPUID_INDEXED, a, b, c, d};
    }
    return n;
}

uint64_t vmm_host_native_xcr0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (uint64_t)hi << 32 | lo;
}


/* The xstate layout for xcr0 from the host's leaf 0xd sub-leaves. */
static void set_xstate_layout(struct vmm_host *h, uint64_t xcr0)
{
    struct vmm_cpuid_entry sub[VMM_XSTATE_MAX_COMPONENTS];
    int n = 0;
    for (unsigned i = 2; i < VMM_XSTATE_MAX_COMPONENTS; i++) {
        unsigned a, b, c, d;
        __cpuid_count(0xd, i, a, b, c, d);
        sub[n++] = (struct vmm_cpuid_entry){0xd, i, VMM_CPUID_INDEXED,
                                            a, b, c, d};
    }
    vmm_cpu_xstate_layout(xcr0, sub, n, &h->xstate);
}

int vmm_host_build_model(struct vmm_host *h, uint64_t xcr0, char *why,
                         size_t why_len)
{
    set_xstate_layout(h, xcr0);
    struct vmm_cpuid_entry native[8];
    int nn = native_cpuid_table(native, 8);
    const char *missing = NULL;
    h->nr_model = vmm_cpu_build_model(native, nn, &h->xstate, h->model,
                                      VMM_CPUID_MAX_ENTRIES, &missing);
    if (h->nr_model < 0) {
        snprintf(why, why_len,
                 "the host CPU lacks '%s', which hvrun's fixed virtual CPU "
                 "model requires",
                 missing ? missing : "?");
        h->info.model_missing = missing;
        return -ENOTSUP;
    }
    h->hwcap = vmm_cpu_model_hwcap(h->model, h->nr_model);
    h->hwcap2 = vmm_cpu_model_hwcap2(h->model, h->nr_model);
    return 0;
}

/*
 * What the guest's CPUID really shows (cpuid_probe.c), kept like the
 * supported-CPUID table: per boot and kernel release, and per model (a
 * hash of the table hvrun sets), so a changed model is probed again.
 */
static uint64_t model_hash(const struct vmm_host *h)
{
    uint64_t x = 0xcbf29ce484222325ULL; /* FNV-1a */
    const unsigned char *b = (const unsigned char *)h->model;
    for (size_t i = 0; i < (size_t)h->nr_model * sizeof(h->model[0]); i++)
        x = (x ^ b[i]) * 0x100000001b3ULL;
    return x;
}

/*
 * Where the guest's CPUID is the host's, leaf 1 EBX (and leaves 0xb and
 * 0x8000001e) carry the APIC id of whichever host CPU runs the vCPU, and
 * RDTSCP/RDPID its number: the thread that runs guests is pinned to one
 * CPU for the whole process, so they read the same in every run of it
 * (--verify's, --repeat's). The CPU is the lowest allowed one that no
 * other hvrun of this user holds: each hvrun holds an flock on a file per
 * CPU (pin_lock_dir) for its life, so concurrent runs (analyze -j,
 * parallel test runners) spread over the cores instead of all sharing
 * the first, while a run alone is on the lowest CPU as before. With
 * every CPU held (more runs than CPUs, or other users of the lock
 * directory: parallel test runners), the allowed CPU our pid picks, so
 * the extra runs spread over the CPUs instead of all joining the first.
 * What the guest reads of its CPU does not depend on which (the model's
 * CPU 0: getcpu, RDTSCP/RDPID rewritten, docs/DETERMINISM.md "Per-CPU
 * values"). The VM pool's worker takes the whole set back (kvm_pool.c).
 */
static int pinned_cpu = -1;

static int pin_lock_dir(char *out, size_t len)
{
    const char *rt = getenv("XDG_RUNTIME_DIR");
    int n = rt && rt[0] == '/' ? snprintf(out, len, "%s/hvrun", rt)
                               : cache_dir(out, len);
    if (n < 0 || (size_t)n >= len)
        return -1;
    char parent[256];
    snprintf(parent, sizeof(parent), "%s", out);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent) {
        *slash = 0;
        (void)mkdirat(AT_FDCWD, parent, 0700);
    }
    (void)mkdirat(AT_FDCWD, out, 0700);
    return 0;
}

/* Whether this process now holds CPU c's lock (kept open, close-on-exec,
 * until the process ends). */
static bool take_cpu_lock(const char *dir, int c)
{
    char path[320];
    if (snprintf(path, sizeof(path), "%s/cpu-%d.lock", dir, c) >=
        (int)sizeof(path))
        return false;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return false;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
        return true;
    close(fd);
    return false;
}

/* The n-th allowed CPU (n below CPU_COUNT(allowed)). */
static int nth_allowed(const cpu_set_t *allowed, int n)
{
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, allowed) && n-- == 0)
            return c;
    return -1;
}

static int choose_guest_cpu(const cpu_set_t *allowed)
{
    int count = CPU_COUNT(allowed);
    char dir[256];
    if (count == 0)
        return -1;
    if (count == 1 || pin_lock_dir(dir, sizeof(dir)) < 0)
        return nth_allowed(allowed, 0);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, allowed) && take_cpu_lock(dir, c))
            return c;
    return nth_allowed(allowed, (int)(getpid() % count));
}

void vmm_host_pin_guest_thread(struct vmm_host *h)
{
    if (sched_getaffinity(0, sizeof(h->cpus_allowed), &h->cpus_allowed) < 0)
        return;
    if (pinned_cpu < 0 || !CPU_ISSET(pinned_cpu, &h->cpus_allowed))
        pinned_cpu = choose_guest_cpu(&h->cpus_allowed);
    if (pinned_cpu < 0)
        return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(pinned_cpu, &one);
    (void)sched_setaffinity(0, sizeof(one), &one);
}

void vmm_host_unpin_thread(const struct vmm_host *h)
{
    if (CPU_COUNT(&h->cpus_allowed) > 0)
        (void)sched_setaffinity(0, sizeof(h->cpus_allowed),
                                &h->cpus_allowed);
}

int vmm_host_probe_guest_cpuid(struct vmm_host *h, const char *cache_tag,
                               char *why, size_t why_len)
{
    char name[64], path[512];
    snprintf(name, sizeof(name), "%s-%016llx", cache_tag,
             (unsigned long long)model_hash(h));
    bool cacheable = vmm_host_cache_file(name, path, sizeof(path)) == 0;
    struct vmm_cpuid_entry *cached = NULL, seen[VMM_CPUID_PROBE_LEAVES];
    int n = 0;
    if (cacheable && vmm_host_cache_read(path, &cached, &n) == 0 &&
        n == VMM_CPUID_PROBE_LEAVES) {
        memcpy(seen, cached, sizeof(seen));
    } else {
        int rc = vmm_cpuid_probe(h, seen, why, why_len);
        if (rc < 0) {
            free(cached);
            return rc;
        }
        if (cacheable)
            vmm_host_cache_write(path, seen, VMM_CPUID_PROBE_LEAVES);
    }
    free(cached);
    h->info.cpuid_control = vmm_cpuid_probe_matches(seen, h->model,
                                                    h->nr_model);
    h->info.cpuid_answered = vmm_cpuid_probe_answered(seen, h->model,
                                                      h->nr_model);
    vmm_cpuid_identity_of(seen, &h->cpu);
    if (!h->info.cpuid_control) { /* describe the CPU the guest sees */
        h->hwcap = vmm_cpu_model_hwcap(seen, VMM_CPUID_PROBE_LEAVES);
        h->hwcap2 = vmm_cpu_model_hwcap2(seen, VMM_CPUID_PROBE_LEAVES);
        vmm_host_pin_guest_thread(h);
    }
    return 0;
}

int vmm_host_cpuid_answers(struct vmm_host *h,
                           const struct vmm_cpuid_entry **out)
{
    *out = h->answers;
    if (h->answers_probed)
        return h->nr_answers;
    h->answers_probed = true;
    char name[64], path[512], why[256];
    snprintf(name, sizeof(name), "cpuid-answers-%016llx",
             (unsigned long long)model_hash(h));
    bool cacheable = vmm_host_cache_file(name, path, sizeof(path)) == 0;
    struct vmm_cpuid_entry *cached = NULL;
    int n = 0;
    if (cacheable && vmm_host_cache_read(path, &cached, &n) == 0 &&
        n == h->nr_model) {
        memcpy(h->answers, cached, (size_t)n * sizeof(h->answers[0]));
        h->nr_answers = n;
    } else {
        int rc = vmm_cpuid_probe_answers(h, h->model, h->nr_model,
                                         h->answers, why, sizeof(why));
        h->nr_answers = rc < 0 ? rc : h->nr_model;
        if (rc == 0 && cacheable)
            vmm_host_cache_write(path, h->answers, h->nr_model);
    }
    free(cached);
    return h->nr_answers;
}

void vmm_event_fail(struct vmm_event *ev, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ev->kind = VMM_EVENT_FAILED;
    vsnprintf(ev->what, sizeof(ev->what), fmt, ap);
    va_end(ap);
}
