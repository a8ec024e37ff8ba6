/*
 * kvm_host.c - /dev/kvm itself: capability checks, the host's CPUID, the
 * fixed model built from it, and the facts `hvrun doctor` prints.
 */
#include "backend.h"
#include "kvm_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cpuid.h>

#include "cpu_x86_64.h"
#include "cpuid_probe.h"

struct vmm_host {
    int kvm_fd;
    int run_size;
    struct vmm_host_info info;
    struct vmm_cpuid_entry model[VMM_CPUID_MAX_ENTRIES];
    int nr_model;
    uint64_t hwcap, hwcap2;
    struct vmm_cpu_identity cpu; /* what the guest's CPUID shows */
    cpu_set_t cpus_allowed;      /* before pin_guest_thread */
    struct vmm_xstate_layout xstate;
    struct kvm_pool *pool;
};

struct kvm_pool *kvm_host_pool(const struct vmm_host *host)
{
    return host->pool;
}

void vmm_host_set_vm_pool(struct vmm_host *host, unsigned nr_ready)
{
    kvm_pool_set_size(host->pool, nr_ready);
}

const struct vmm_xstate_layout *kvm_host_xstate(const struct vmm_host *host)
{
    return &host->xstate;
}

int kvm_host_fd(const struct vmm_host *host) { return host->kvm_fd; }
int kvm_host_run_size(const struct vmm_host *host) { return host->run_size; }
uint64_t vmm_host_hwcap(const struct vmm_host *host) { return host->hwcap; }
uint64_t vmm_host_hwcap2(const struct vmm_host *host) { return host->hwcap2; }

void vmm_host_cpu_identity(const struct vmm_host *host,
                           struct vmm_cpu_identity *out)
{
    *out = host->cpu;
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

void vmm_host_get_info(const struct vmm_host *host, struct vmm_host_info *i)
{
    *i = host->info;
}

static void detect_hypervisor(struct vmm_host_info *info)
{
    static const char *const kinds[] = {"kvm_pvm", "kvm_intel", "kvm_amd"};
    snprintf(info->hypervisor, sizeof(info->hypervisor), "unknown");
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        char path[64];
        snprintf(path, sizeof(path), "/sys/module/%s", kinds[i]);
        if (access(path, F_OK) == 0) {
            snprintf(info->hypervisor, sizeof(info->hypervisor), "%s",
                     kinds[i]);
            return;
        }
    }
}

/* Reads KVM_GET_SUPPORTED_CPUID into our own entry type. */
/*
 * KVM_GET_SUPPORTED_CPUID costs ~0.7 ms on kvm_pvm, on every run, and its
 * answer changes only with the host kernel; so it is kept per boot (and
 * kernel release) in $XDG_CACHE_HOME/hvrun, else ~/.cache/hvrun. A cache
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

static int cache_file(const char *name, char *out, size_t len)
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

static int cache_read(const char *path, struct vmm_cpuid_entry **out, int *n)
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
static void cache_write(const char *path, const struct vmm_cpuid_entry *e,
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

static int read_host_cpuid(int kvm_fd, struct vmm_cpuid_entry **out, int *n);

static int cached_host_cpuid(int kvm_fd, struct vmm_cpuid_entry **out,
                             int *n)
{
    char path[512];
    bool cacheable = cache_file("supported-cpuid", path, sizeof(path)) == 0;
    if (cacheable && cache_read(path, out, n) == 0)
        return 0;
    int rc = read_host_cpuid(kvm_fd, out, n);
    if (rc == 0 && cacheable)
        cache_write(path, *out, *n);
    return rc;
}

static int read_host_cpuid(int kvm_fd, struct vmm_cpuid_entry **out, int *n)
{
    for (int nent = 128; nent <= 4096; nent *= 2) {
        struct kvm_cpuid2 *c = calloc(1, sizeof(*c) +
                                             nent * sizeof(c->entries[0]));
        if (!c)
            return -ENOMEM;
        c->nent = (uint32_t)nent;
        if (ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, c) < 0) {
            int err = errno;
            free(c);
            if (err == E2BIG)
                continue;
            return -err;
        }
        struct vmm_cpuid_entry *e = calloc(c->nent, sizeof(*e));
        if (!e) {
            free(c);
            return -ENOMEM;
        }
        for (uint32_t i = 0; i < c->nent; i++) {
            struct kvm_cpuid_entry2 *k = &c->entries[i];
            e[i] = (struct vmm_cpuid_entry){
                k->function, k->index,
                (k->flags & KVM_CPUID_FLAG_SIGNIFCANT_INDEX)
                    ? VMM_CPUID_INDEXED
                    : 0,
                k->eax, k->ebx, k->ecx, k->edx};
        }
        *out = e;
        *n = (int)c->nent;
        free(c);
        return 0;
    }
    return -E2BIG;
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

static uint64_t host_xcr0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (uint64_t)hi << 32 | lo;
}

/*
 * The guest's XCR0: the model's x87|SSE|AVX where KVM_SET_XCRS takes effect
 * (VMX, SVM); the host's own where it does not (kvm_pvm runs the guest with
 * the host XCR0 whatever KVM_SET_XCRS says). The layout follows it.
 */
static void choose_xstate(struct vmm_host *h, uint64_t kvm_xcr0)
{
    uint64_t xcr0 = VMM_MODEL_XCR0;
    if (strcmp(h->info.hypervisor, "kvm_pvm") == 0)
        xcr0 = host_xcr0() & (kvm_xcr0 | VMM_MODEL_XCR0);
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
 * RDTSCP/RDPID its number: the thread that runs guests is pinned to the
 * lowest CPU it may use, so they read the same in every run. The VM
 * pool's worker takes the whole set back (kvm_pool.c).
 */
static void pin_guest_thread(struct vmm_host *h)
{
    if (sched_getaffinity(0, sizeof(h->cpus_allowed), &h->cpus_allowed) < 0)
        return;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &h->cpus_allowed))
            continue;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(c, &one);
        (void)sched_setaffinity(0, sizeof(one), &one);
        return;
    }
}

void kvm_host_unpin_thread(const struct vmm_host *h)
{
    if (CPU_COUNT(&h->cpus_allowed) > 0)
        (void)sched_setaffinity(0, sizeof(h->cpus_allowed),
                                &h->cpus_allowed);
}

static int probe_guest_cpuid(struct vmm_host *h, char *why, size_t why_len)
{
    char name[64], path[512];
    snprintf(name, sizeof(name), "guest-cpuid-%016llx",
             (unsigned long long)model_hash(h));
    bool cacheable = cache_file(name, path, sizeof(path)) == 0;
    struct vmm_cpuid_entry *cached = NULL, seen[VMM_CPUID_PROBE_LEAVES];
    int n = 0;
    if (cacheable && cache_read(path, &cached, &n) == 0 &&
        n == VMM_CPUID_PROBE_LEAVES) {
        memcpy(seen, cached, sizeof(seen));
    } else {
        int rc = vmm_cpuid_probe(h, seen, why, why_len);
        if (rc < 0) {
            free(cached);
            return rc;
        }
        if (cacheable)
            cache_write(path, seen, VMM_CPUID_PROBE_LEAVES);
    }
    free(cached);
    h->info.cpuid_control = vmm_cpuid_probe_matches(seen, h->model,
                                                    h->nr_model);
    vmm_cpuid_identity_of(seen, &h->cpu);
    if (!h->info.cpuid_control) { /* describe the CPU the guest sees */
        h->hwcap = vmm_cpu_model_hwcap(seen, VMM_CPUID_PROBE_LEAVES);
        h->hwcap2 = vmm_cpu_model_hwcap2(seen, VMM_CPUID_PROBE_LEAVES);
        pin_guest_thread(h);
    }
    return 0;
}

int kvm_host_set_cpuid(const struct vmm_host *host, int vcpu_fd)
{
    struct kvm_cpuid2 *c =
        calloc(1, sizeof(*c) + host->nr_model * sizeof(c->entries[0]));
    if (!c)
        return -ENOMEM;
    c->nent = (uint32_t)host->nr_model;
    for (int i = 0; i < host->nr_model; i++) {
        const struct vmm_cpuid_entry *m = &host->model[i];
        c->entries[i] = (struct kvm_cpuid_entry2){
            .function = m->function, .index = m->index,
            .flags = (m->flags & VMM_CPUID_INDEXED)
                         ? KVM_CPUID_FLAG_SIGNIFCANT_INDEX
                         : 0,
            .eax = m->eax, .ebx = m->ebx, .ecx = m->ecx, .edx = m->edx};
    }
    int rc = ioctl(vcpu_fd, KVM_SET_CPUID2, c) < 0 ? -errno : 0;
    free(c);
    return rc;
}

static int fail_open(struct vmm_host *h, int err, char *why, size_t len,
                     const char *what)
{
    if (why && len)
        snprintf(why, len, "%s", what);
    if (h->kvm_fd >= 0)
        close(h->kvm_fd);
    free(h);
    return -err;
}

int vmm_host_open(struct vmm_host **out, char *why, size_t why_len)
{
    struct vmm_host *h = calloc(1, sizeof(*h));
    char msg[256];
    if (!h)
        return -ENOMEM;
    h->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
    if (h->kvm_fd < 0) {
        int err = errno;
        snprintf(msg, sizeof(msg), "/dev/kvm: open: %s; %s", strerror(err),
                 err == EACCES || err == EPERM
                     ? "join the kvm group or run as root (or try "
                       "--backend ptrace once it exists)"
                     : "this host offers no KVM (try --backend ptrace once "
                       "it exists)");
        return fail_open(h, err, why, why_len, msg);
    }
    struct vmm_host_info *info = &h->info;
    info->api_version = ioctl(h->kvm_fd, KVM_GET_API_VERSION, 0);
    if (info->api_version != KVM_API_VERSION) {
        snprintf(msg, sizeof(msg), "/dev/kvm: API version %d, need %d",
                 info->api_version, KVM_API_VERSION);
        return fail_open(h, EINVAL, why, why_len, msg);
    }
    int sync = ioctl(h->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_SYNC_REGS);
    info->sync_regs = sync > 0 && (sync & KVM_SYNC_X86_REGS) &&
                      (sync & KVM_SYNC_X86_SREGS);
    info->immediate_exit =
        ioctl(h->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_IMMEDIATE_EXIT) > 0;
    info->nr_memslots =
        ioctl(h->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_NR_MEMSLOTS);
    if (!info->sync_regs)
        return fail_open(h, ENOTSUP, why, why_len,
                         "/dev/kvm: KVM_CAP_SYNC_REGS (regs+sregs) is "
                         "missing; hvrun needs it");
    h->run_size = ioctl(h->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
    if (h->run_size <= 0)
        return fail_open(h, errno, why, why_len,
                         "/dev/kvm: KVM_GET_VCPU_MMAP_SIZE failed");
    detect_hypervisor(info);
    struct vmm_cpuid_entry *hc = NULL;
    int nh = 0;
    int rc = cached_host_cpuid(h->kvm_fd, &hc, &nh);
    if (rc < 0)
        return fail_open(h, -rc, why, why_len,
                         "/dev/kvm: KVM_GET_SUPPORTED_CPUID failed");
    const struct vmm_cpuid_entry *pmu = vmm_cpuid_find(hc, nh, 0xa, 0);
    info->pmu = pmu && (pmu->eax & 0xff) != 0;
    /* CR4.TSD traps user RDTSC under VMX/SVM; kvm_pvm ignores it. */
    info->rdtsc_trappable = strcmp(info->hypervisor, "kvm_intel") == 0 ||
                            strcmp(info->hypervisor, "kvm_amd") == 0;
    const char *missing = NULL;
    const struct vmm_cpuid_entry *xs = vmm_cpuid_find(hc, nh, 0xd, 0);
    bool xcr0_ok = xs && (xs->eax & VMM_MODEL_XCR0) == VMM_MODEL_XCR0;
    if (xcr0_ok)
        choose_xstate(h, xs->eax | (uint64_t)xs->edx << 32);
    free(hc);
    struct vmm_cpuid_entry native[8];
    int nn = native_cpuid_table(native, 8);
    h->nr_model = xcr0_ok ? vmm_cpu_build_model(native, nn, &h->xstate,
                                                h->model,
                                                VMM_CPUID_MAX_ENTRIES,
                                                &missing)
                          : -1;
    if (!xcr0_ok)
        missing = "xsave state x87|sse|avx through KVM";
    if (h->nr_model < 0) {
        snprintf(msg, sizeof(msg),
                 "/dev/kvm: the host CPU lacks '%s', which hvrun's fixed "
                 "virtual CPU model requires",
                 missing ? missing : "?");
        info->model_missing = missing;
        return fail_open(h, ENOTSUP, why, why_len, msg);
    }
    h->hwcap = vmm_cpu_model_hwcap(h->model, h->nr_model);
    h->hwcap2 = vmm_cpu_model_hwcap2(h->model, h->nr_model);
    h->pool = kvm_pool_new(h);
    if (!h->pool)
        return fail_open(h, ENOMEM, why, why_len, "out of memory");
    if ((rc = probe_guest_cpuid(h, msg, sizeof(msg))) < 0) {
        kvm_pool_free(h->pool);
        return fail_open(h, -rc, why, why_len, msg);
    }
    *out = h;
    return 0;
}

void vmm_host_close(struct vmm_host *host)
{
    if (!host)
        return;
    kvm_pool_free(host->pool);
    close(host->kvm_fd);
    free(host);
}
