/*
 * kvm_host.c - /dev/kvm itself: capability checks, KVM's supported CPUID,
 * the guest XCR0 KVM can give, and the facts `hvrun doctor` prints; and a
 * checkpoint's side of the host (a fork letting go of the original's VMs).
 * The model and the CPUID probe are every backend's (host.c).
 */
#include "backend_impl.h"
#include "kvm_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

struct kvm_host {
    struct vmm_host base;
    int kvm_fd;
    int run_size;
    struct kvm_pool *pool;
};

static struct kvm_host *kvm_host_of(const struct vmm_host *h)
{
    return (struct kvm_host *)h;
}

struct kvm_pool *kvm_host_pool(const struct vmm_host *host)
{
    return kvm_host_of(host)->pool;
}

void kvm_host_set_vm_pool(struct vmm_host *host, unsigned nr_ready)
{
    kvm_pool_set_size(kvm_host_of(host)->pool, nr_ready);
}

const struct vmm_xstate_layout *kvm_host_xstate(const struct vmm_host *host)
{
    return &host->xstate;
}

int kvm_host_fd(const struct vmm_host *host)
{
    return kvm_host_of(host)->kvm_fd;
}

int kvm_host_run_size(const struct vmm_host *host)
{
    return kvm_host_of(host)->run_size;
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

static int read_host_cpuid(int kvm_fd, struct vmm_cpuid_entry **out, int *n);

/* KVM_GET_SUPPORTED_CPUID, kept per boot (host.c's caches). */
static int cached_host_cpuid(int kvm_fd, struct vmm_cpuid_entry **out,
                             int *n)
{
    char path[512];
    bool cacheable =
        vmm_host_cache_file("supported-cpuid", path, sizeof(path)) == 0;
    if (cacheable && vmm_host_cache_read(path, out, n) == 0)
        return 0;
    int rc = read_host_cpuid(kvm_fd, out, n);
    if (rc == 0 && cacheable)
        vmm_host_cache_write(path, *out, *n);
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
 * The guest's XCR0: the model's x87|SSE|AVX where KVM_SET_XCRS takes effect
 * (VMX, SVM); the host's own where it does not (kvm_pvm runs the guest with
 * the host XCR0 whatever KVM_SET_XCRS says). The layout follows it.
 */
static uint64_t choose_xcr0(const struct vmm_host *h, uint64_t kvm_xcr0)
{
    if (strcmp(h->info.hypervisor, "kvm_pvm") == 0)
        return vmm_host_native_xcr0() & (kvm_xcr0 | VMM_MODEL_XCR0);
    return VMM_MODEL_XCR0;
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

static int fail_open(struct kvm_host *h, int err, char *why, size_t len,
                     const char *what)
{
    if (why && len)
        snprintf(why, len, "%s", what);
    if (h->kvm_fd >= 0)
        close(h->kvm_fd);
    free(h);
    return -err;
}

void kvm_host_close(struct vmm_host *host)
{
    struct kvm_host *h = kvm_host_of(host);
    kvm_pool_free(h->pool);
    close(h->kvm_fd);
    free(h);
}

int kvm_host_open(struct vmm_host **out, char *why, size_t why_len)
{
    struct kvm_host *h = calloc(1, sizeof(*h));
    char msg[256];
    if (!h)
        return -ENOMEM;
    h->base.ops = &kvm_backend_ops;
    h->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
    if (h->kvm_fd < 0) {
        int err = errno;
        snprintf(msg, sizeof(msg), "/dev/kvm: open: %s; %s", strerror(err),
                 err == EACCES || err == EPERM
                     ? "join the kvm group or run as root, or use "
                       "--backend ptrace (or HVRUN_BACKEND=ptrace)"
                     : "this host offers no KVM: use --backend ptrace "
                       "(or set HVRUN_BACKEND=ptrace)");
        return fail_open(h, err, why, why_len, msg);
    }
    struct vmm_host_info *info = &h->base.info;
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
    const struct vmm_cpuid_entry *xs = vmm_cpuid_find(hc, nh, 0xd, 0);
    bool xcr0_ok = xs && (xs->eax & VMM_MODEL_XCR0) == VMM_MODEL_XCR0;
    uint64_t xcr0 =
        xcr0_ok ? choose_xcr0(&h->base, xs->eax | (uint64_t)xs->edx << 32) : 0;
    free(hc);
    if (!xcr0_ok) {
        info->model_missing = "xsave state x87|sse|avx through KVM";
        snprintf(msg, sizeof(msg),
                 "/dev/kvm: the host CPU lacks '%s', which hvrun's fixed "
                 "virtual CPU model requires",
                 info->model_missing);
        return fail_open(h, ENOTSUP, why, why_len, msg);
    }
    char model_why[200];
    if ((rc = vmm_host_build_model(&h->base, xcr0, model_why,
                                   sizeof(model_why))) < 0) {
        snprintf(msg, sizeof(msg), "/dev/kvm: %s", model_why);
        return fail_open(h, -rc, why, why_len, msg);
    }
    h->pool = kvm_pool_new(&h->base);
    if (!h->pool)
        return fail_open(h, ENOMEM, why, why_len, "out of memory");
    if ((rc = vmm_host_probe_guest_cpuid(&h->base, "guest-cpuid", msg,
                                         sizeof(msg))) < 0) {
        kvm_pool_free(h->pool);
        return fail_open(h, -rc, why, why_len, msg);
    }
    *out = &h->base;
    return 0;
}

/* ---- checkpoints (vmm/snapshot.c) ---------------------------------------- */

/* Whether a /proc/self/fd link or a /proc/self/maps name is a KVM VM's or
 * vCPU's ("anon_inode:kvm-vm", "anon_inode:kvm-vcpu:0"). */
static bool is_kvm_object(const char *name)
{
    return strncmp(name, "anon_inode:kvm-", 15) == 0;
}

/* Every fd of a KVM VM or vCPU becomes placeholder (or is closed when
 * there is none). */
static void drop_kvm_fds(int placeholder)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        char proc[300], link[64];
        int fd = atoi(e->d_name);
        if (e->d_name[0] == '.' || fd == dirfd(d) || fd == placeholder)
            continue;
        snprintf(proc, sizeof(proc), "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(proc, link, sizeof(link) - 1);
        if (n <= 0)
            continue;
        link[n] = '\0';
        if (!is_kvm_object(link))
            continue;
        if (placeholder < 0 || dup3(placeholder, fd, O_CLOEXEC) < 0)
            close(fd);
    }
    closedir(d);
}

/* Every vCPU's kvm_run mapping becomes inaccessible anonymous memory. */
static void drop_kvm_run_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return;
    static char line[PATH_MAX + 128];
    while (fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        int name_at = 0;
        if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi,
                   &name_at) < 2 || name_at == 0 ||
            !is_kvm_object(line + name_at))
            continue;
        /* (replaced in place: the file's next line is found by address) */
        (void)mmap((void *)lo, hi - lo, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1,
                   0);
    }
    fclose(f);
}

/*
 * In a fork of hvrun (a checkpoint): every KVM VM and vCPU this process
 * holds is the original's (a fork makes none before this), unusable here
 * (KVM refuses another mm's ioctls), and kept alive by each fd and
 * kvm_run mapping of it: each fd becomes /dev/null and each mapping
 * inaccessible memory, in place, so that the original's VMs go when it
 * closes them, and a kvm_vm that still names them (each VM's until
 * kvm_vm_disown, the pool's) closes and unmaps only placeholders. The
 * pool's worker is not in the fork: a new pool takes its place.
 */
void kvm_host_disown(struct vmm_host *host)
{
    struct kvm_host *h = kvm_host_of(host);
    int placeholder = open("/dev/null", O_RDWR | O_CLOEXEC);
    drop_kvm_fds(placeholder);
    drop_kvm_run_maps();
    if (placeholder >= 0)
        close(placeholder);
    h->pool = kvm_pool_disown(h->pool);
}

/* A restored copy makes its VMs through the host's /dev/kvm fd, its own
 * since the fork: no helper (kvm_helper_start's stand-in is let go). */
void kvm_host_adopt_helper(struct vmm_host *host, int helper_fd)
{
    (void)host;
    if (helper_fd >= 0)
        close(helper_fd);
}

int kvm_helper_start(int *fd, int *pid, char *why, size_t why_len)
{
    *fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (*fd < 0) {
        int err = errno;
        snprintf(why, why_len, "kvm: /dev/null: %s", strerror(err));
        return -err;
    }
    *pid = getpid(); /* never the caller's child: nothing to reap */
    return 0;
}
