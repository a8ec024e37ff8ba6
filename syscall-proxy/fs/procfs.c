/*
 * procfs.c - what the synthesised /proc and /sys files say (vfs.c opens
 * them): the machine's (cpuinfo, meminfo, stat, uptime, loadavg, version,
 * the kernel's and the host's names, /sys's CPU and NUMA node lists, node
 * 0's meminfo, boot_id and uuid) from detcore's model, the process's
 * (/proc/PID/stat, status, statm, maps, cmdline, environ, auxv, keys,
 * System V IPC lists) from the process model, the table of virtual files
 * with the detcore switch that makes each virtual, and the virtual init's
 * /proc/1 (its entries and their contents). Each generator writes into a
 * content buffer (vfs.h) that vfs.c turns into a memfd.
 */
#include "proxy.h"
#include "config.h"
#include "hooks.h"
#include "kernel.h"
#include "fs.h"
#include "vfs.h"
#include "procfile.h"
#include "internal.h"
#include "cpu_x86_64.h"
#include "det.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define NS_PER_TICK 10000000LL /* USER_HZ = 100 */
/* Linux's CAP_LAST_CAP in 6.1 is 40: a full set is 41 bits. */
#define CAP_FULL_SET 0x000001ffffffffffULL
/* Reading the argv/envp area: Linux's get_mm_proctitle reads one page. */
#define PROCTITLE_MAX_BYTES 4096
#define GUEST_COPY_CHUNK_BYTES 65536

/* ---- figures from detcore ------------------------------------------------ */

static int64_t clock_ns(struct proxy_process *p, int clockid)
{
    struct timespec ts;
    if (det_clock_gettime(p->det, clockid, &ts) < 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Boot time of the process, in ticks since boot: the process started when
 * its CPU clock was zero. */
static uint64_t start_ticks(struct proxy_process *p)
{
    int64_t ns = clock_ns(p, CLOCK_BOOTTIME) - det_cputime_ns(p->det);
    return ns > 0 ? (uint64_t)(ns / NS_PER_TICK) : 0;
}

/* The last pid Linux handed out: the run's last process or thread id. */
static int last_pid(const struct proxy_process *p)
{
    if (p->world)
        return p->world->next_pid - 1;
    return p->next_tid - 1 > p->pid ? p->next_tid - 1 : p->pid;
}

int proxy_procfs_last_pid(const struct proxy_process *p)
{
    return last_pid(p);
}

static int live_threads(const struct proxy_process *p)
{
    int n = 0;
    for (int i = 0; i < p->nr_threads; i++)
        n += p->threads[i].state != PROXY_THREAD_EXITED;
    return n > 0 ? n : 1;
}

/* ---- the machine --------------------------------------------------------- */

/*
 * cpuinfo flag names in Linux's order (capability word, then bit), for the
 * CPUID words the guest can read (struct vmm_cpu_identity): what it
 * executes and what it reads agree, on a host whose CPUID is the model and
 * on one where it is the host's own CPU. Bits Linux hides (osxsave, ospke
 * is shown) are left out.
 */
struct flag_word {
    size_t off; /* of the uint32_t in struct vmm_cpu_identity */
    const char *names[32];
};
#define CPU_WORD(field) offsetof(struct vmm_cpu_identity, field)
static const struct flag_word cpuinfo_words[] = {
    {CPU_WORD(leaf1_edx),
     {"fpu", "vme", "de", "pse", "tsc", "msr", "pae", "mce", "cx8", "apic",
      NULL, "sep", "mtrr", "pge", "mca", "cmov", "pat", "pse36", "pn",
      "clflush", NULL, "dts", "acpi", "mmx", "fxsr", "sse", "sse2", "ss", "ht",
      "tm", "ia64", "pbe"}},
    {CPU_WORD(ext1_edx),
     {[11] = "syscall", [19] = "mp", [20] = "nx", [22] = "mmxext",
      [25] = "fxsr_opt", [26] = "pdpe1gb", [27] = "rdtscp", [29] = "lm",
      [30] = "3dnowext", [31] = "3dnow"}},
    {CPU_WORD(leaf1_ecx),
     {"pni", "pclmulqdq", "dtes64", "monitor", "ds_cpl", "vmx", "smx", "est",
      "tm2", "ssse3", "cid", "sdbg", "fma", "cx16", "xtpr", "pdcm", NULL,
      "pcid", "dca", "sse4_1", "sse4_2", "x2apic", "movbe", "popcnt",
      "tsc_deadline_timer", "aes", "xsave", NULL, "avx", "f16c", "rdrand",
      "hypervisor"}},
    {CPU_WORD(ext1_ecx),
     {"lahf_lm", "cmp_legacy", "svm", "extapic", "cr8_legacy", "abm", "sse4a",
      "misalignsse", "3dnowprefetch", "osvw", "ibs", "xop", "skinit", "wdt",
      NULL, "lwp", "fma4", "tce", NULL, "nodeid_msr", NULL, "tbm", "topoext",
      "perfctr_core", "perfctr_nb", NULL, "bpext", "ptsc", "perfctr_llc",
      "mwaitx"}},
    {CPU_WORD(leaf7_ebx),
     {"fsgsbase", "tsc_adjust", "sgx", "bmi1", "hle", "avx2", NULL, "smep",
      "bmi2", "erms", "invpcid", "rtm", "cqm", NULL, "mpx", "rdt_a",
      "avx512f", "avx512dq", "rdseed", "adx", "smap", "avx512ifma", NULL,
      "clflushopt", "clwb", "intel_pt", "avx512pf", "avx512er", "avx512cd",
      "sha_ni", "avx512bw", "avx512vl"}},
    {CPU_WORD(leaf7_ecx),
     {[1] = "avx512vbmi", [2] = "umip", [3] = "pku", [4] = "ospke",
      [5] = "waitpkg", [6] = "avx512_vbmi2", [8] = "gfni", [9] = "vaes",
      [10] = "vpclmulqdq", [11] = "avx512_vnni", [12] = "avx512_bitalg",
      [14] = "avx512_vpopcntdq", [16] = "la57", [22] = "rdpid",
      [25] = "cldemote", [27] = "movdiri", [28] = "movdir64b",
      [29] = "enqcmd"}},
    {CPU_WORD(leaf7_edx),
     {[2] = "avx512_4vnniw", [3] = "avx512_4fmaps", [4] = "fsrm",
      [8] = "avx512_vp2intersect", [10] = "md_clear", [14] = "serialize",
      [18] = "pconfig", [22] = "amx_bf16", [23] = "avx512_fp16",
      [24] = "amx_tile", [25] = "amx_int8", [28] = "flush_l1d",
      [29] = "arch_capabilities"}},
};

static void put_cpu_flags(struct vbuf *b, const struct vmm_cpu_identity *c)
{
    for (size_t w = 0; w < sizeof(cpuinfo_words) / sizeof(cpuinfo_words[0]);
         w++) {
        uint32_t bits;
        memcpy(&bits, (const char *)c + cpuinfo_words[w].off, sizeof(bits));
        for (unsigned bit = 0; bit < 32; bit++) {
            if ((bits >> bit) & 1 && cpuinfo_words[w].names[bit])
                vb_printf(b, " %s", cpuinfo_words[w].names[bit]);
        }
    }
}

static int gen_cpuinfo(struct proxy_process *p, struct vbuf *b)
{
    const struct vmm_cpu_identity *c = &p->cpu;
    vb_printf(b,
              "processor\t: 0\n"
              "vendor_id\t: %s\n"
              "cpu family\t: %u\n"
              "model\t\t: %u\n"
              "model name\t: %s\n"
              "stepping\t: %u\n"
              "cpu MHz\t\t: 2000.000\n"
              "cache size\t: 16384 KB\n"
              "physical id\t: 0\n"
              "siblings\t: 1\n"
              "core id\t\t: 0\n"
              "cpu cores\t: 1\n"
              "apicid\t\t: 0\n"
              "initial apicid\t: 0\n"
              "fpu\t\t: yes\n"
              "fpu_exception\t: yes\n"
              "cpuid level\t: %u\n"
              "wp\t\t: yes\n"
              "flags\t\t:",
              c->vendor, c->family, c->model, c->brand, c->stepping,
              c->max_leaf);
    put_cpu_flags(b, c);
    vb_printf(b, "\n"
                 "bugs\t\t:\n"
                 "bogomips\t: 4000.00\n"
                 "clflush size\t: 64\n"
                 "cache_alignment\t: 64\n"
                 "address sizes\t: 39 bits physical, 48 bits virtual\n"
                 "power management:\n"
                 "\n");
    return 0;
}

static void mem_line(struct vbuf *b, const char *name, unsigned long long kb)
{
    char label[32];
    snprintf(label, sizeof(label), "%s:", name);
    vb_printf(b, "%-16s%8llu kB\n", label, kb);
}

/* The figures of an idle 8 GiB machine, in kB, scaled to --memory
 * (model_kb); MemTotal and MemFree are detcore's (sysinfo says the same).
 * /proc/meminfo lists them in this order; a NUMA node's meminfo
 * (gen_node_meminfo) takes its figures from here too. */
static const struct {
    const char *name;
    unsigned long long kb;
} meminfo_model[] = {
    {"Buffers", 65536},
    {"Cached", 1048576},
    {"SwapCached", 0},
    {"Active", 1048576},
    {"Inactive", 524288},
    {"Active(anon)", 524288},
    {"Inactive(anon)", 0},
    {"Active(file)", 524288},
    {"Inactive(file)", 524288},
    {"Unevictable", 0},
    {"Mlocked", 0},
    {"SwapTotal", 0},
    {"SwapFree", 0},
    {"Zswap", 0},
    {"Zswapped", 0},
    {"Dirty", 0},
    {"Writeback", 0},
    {"AnonPages", 524288},
    {"Mapped", 131072},
    {"Shmem", 0},
    {"KReclaimable", 65536},
    {"Slab", 131072},
    {"SReclaimable", 65536},
    {"SUnreclaim", 65536},
    {"KernelStack", 4096},
    {"PageTables", 8192},
    {"NFS_Unstable", 0},
    {"Bounce", 0},
    {"WritebackTmp", 0},
    {"CommitLimit", 4194304},
    {"Committed_AS", 1048576},
    {"VmallocTotal", 34359738367ULL},
    {"VmallocUsed", 16384},
    {"VmallocChunk", 0},
    {"Percpu", 1024},
};
#define MEMINFO_MODEL_LEN (sizeof(meminfo_model) / sizeof(meminfo_model[0]))

/* Figure i of meminfo_model for this machine: kB of an 8 GiB machine ->
 * kB of --memory's (VmallocTotal is the kernel's address space, not
 * memory). < 2^50: no overflow. */
static unsigned long long model_kb(const struct proxy_process *p, size_t i)
{
    unsigned long long total_kb = p->det->cfg.mem_total_bytes >> 10;
    const unsigned long long base_kb = DET_MEM_TOTAL_BYTES >> 10;
    if (strcmp(meminfo_model[i].name, "VmallocTotal") == 0)
        return meminfo_model[i].kb;
    return meminfo_model[i].kb * total_kb / base_kb;
}

/* meminfo_model's figure called name (0 for none). */
static unsigned long long model_kb_of(const struct proxy_process *p,
                                      const char *name)
{
    for (size_t i = 0; i < MEMINFO_MODEL_LEN; i++)
        if (strcmp(meminfo_model[i].name, name) == 0)
            return model_kb(p, i);
    return 0;
}

unsigned long long proxy_procfs_model_kb(const struct proxy_process *p,
                                         const char *name)
{
    return model_kb_of(p, name);
}

static int gen_meminfo(struct proxy_process *p, struct vbuf *b)
{
    unsigned long long total_kb = p->det->cfg.mem_total_bytes >> 10;
    unsigned long long free_kb = det_mem_free_bytes(&p->det->cfg) >> 10;
    const unsigned long long base_kb = DET_MEM_TOTAL_BYTES >> 10;
#define SCALED(kb) ((kb) * total_kb / base_kb) /* < 2^50: no overflow */
    mem_line(b, "MemTotal", total_kb);
    mem_line(b, "MemFree", free_kb);
    mem_line(b, "MemAvailable", free_kb + SCALED(1048576));
    for (size_t i = 0; i < MEMINFO_MODEL_LEN; i++)
        mem_line(b, meminfo_model[i].name, model_kb(p, i));
    vb_printf(b, "HardwareCorrupted: %5d kB\n", 0);
    mem_line(b, "AnonHugePages", 0);
    mem_line(b, "ShmemHugePages", 0);
    mem_line(b, "ShmemPmdMapped", 0);
    mem_line(b, "FileHugePages", 0);
    mem_line(b, "FilePmdMapped", 0);
    vb_printf(b,
              "HugePages_Total:   %5d\n"
              "HugePages_Free:    %5d\n"
              "HugePages_Rsvd:    %5d\n"
              "HugePages_Surp:    %5d\n",
              0, 0, 0, 0);
    mem_line(b, "Hugepagesize", 2048);
    mem_line(b, "Hugetlb", 0);
    mem_line(b, "DirectMap4k", SCALED(131072));
    mem_line(b, "DirectMap2M", total_kb - SCALED(131072));
#undef SCALED
    mem_line(b, "DirectMap1G", 0);
    return 0;
}

/*
 * /sys/devices/system/node/node0/meminfo: the one NUMA node holds the
 * whole machine, in Linux 6.1's layout (drivers/base/node.c) with
 * /proc/meminfo's figures. The host's is read live (libnuma parses it at
 * start-up, QEMU links libnuma): its digits differ each run, and so did
 * how long the parse ran, which --progress software counts into time.
 */
static int gen_node_meminfo(struct proxy_process *p, struct vbuf *b)
{
    static const char *const figures[] = {
        "SwapCached",   "Active",       "Inactive",       "Active(anon)",
        "Inactive(anon)", "Active(file)", "Inactive(file)", "Unevictable",
        "Mlocked",      "Dirty",        "Writeback",      "FilePages",
        "Mapped",       "AnonPages",    "Shmem",          "KernelStack",
        "PageTables",   "NFS_Unstable", "Bounce",         "WritebackTmp",
        "KReclaimable", "Slab",         "SReclaimable",   "SUnreclaim",
        "AnonHugePages", "ShmemHugePages", "ShmemPmdMapped",
        "FileHugePages", "FilePmdMapped",
    };
    unsigned long long total_kb = p->det->cfg.mem_total_bytes >> 10;
    unsigned long long free_kb = det_mem_free_bytes(&p->det->cfg) >> 10;
    vb_printf(b, "Node 0 ");
    mem_line(b, "MemTotal", total_kb);
    vb_printf(b, "Node 0 ");
    mem_line(b, "MemFree", free_kb);
    vb_printf(b, "Node 0 ");
    mem_line(b, "MemUsed", total_kb - free_kb);
    for (size_t i = 0; i < sizeof(figures) / sizeof(figures[0]); i++) {
        /* The node's file pages: the page cache, buffers included. */
        unsigned long long kb =
            strcmp(figures[i], "FilePages") == 0
                ? model_kb_of(p, "Cached") + model_kb_of(p, "Buffers")
                : model_kb_of(p, figures[i]);
        vb_printf(b, "Node 0 ");
        mem_line(b, figures[i], kb);
    }
    vb_printf(b,
              "Node 0 HugePages_Total: %5d\n"
              "Node 0 HugePages_Free:  %5d\n"
              "Node 0 HugePages_Surp:  %5d\n",
              0, 0, 0);
    return 0;
}

/* One CPU, busy for the process's CPU time and idle the rest of uptime. */
static int gen_stat(struct proxy_process *p, struct vbuf *b)
{
    int64_t boot_ns = clock_ns(p, CLOCK_BOOTTIME);
    int64_t cpu_ns = det_cputime_ns(p->det);
    int64_t real_ns = clock_ns(p, CLOCK_REALTIME);
    long long user = cpu_ns / NS_PER_TICK;
    long long idle = (boot_ns - cpu_ns) / NS_PER_TICK;
    if (idle < 0)
        idle = 0;
    for (int i = 0; i < 2; i++)
        vb_printf(b, "%s %lld 0 0 %lld 0 0 0 0 0 0\n", i ? "cpu0" : "cpu ",
                  user, idle);
    vb_printf(b,
              "intr 0\n"
              "ctxt 0\n"
              "btime %lld\n"
              "processes %d\n"
              "procs_running 1\n"
              "procs_blocked 0\n"
              "softirq 0 0 0 0 0 0 0 0 0 0 0\n",
              (long long)((real_ns - boot_ns) / 1000000000LL), last_pid(p));
    return 0;
}

static int gen_uptime(struct proxy_process *p, struct vbuf *b)
{
    int64_t ns = clock_ns(p, CLOCK_BOOTTIME);
    vb_printf(b, "%lld.%02lld 0.00\n", (long long)(ns / 1000000000LL),
              (long long)(ns % 1000000000LL / NS_PER_TICK));
    return 0;
}

static int gen_loadavg(struct proxy_process *p, struct vbuf *b)
{
    vb_printf(b, "0.00 0.00 0.00 1/%d %d\n", live_threads(p), last_pid(p));
    return 0;
}

static int gen_version(struct proxy_process *p, struct vbuf *b)
{
    struct det_uname u;
    det_get_uname(p->det, &u);
    vb_printf(b,
              "%s version %s (hvrun@hvrun) (gcc-12 (Debian 12.2.0-14) "
              "12.2.0, GNU ld (GNU Binutils for Debian) 2.40) %s\n",
              u.sysname, u.release, u.version);
    return 0;
}

enum uname_field {
    UF_HOSTNAME,
    UF_DOMAINNAME,
    UF_OSRELEASE,
    UF_OSTYPE,
    UF_VERSION
};

static int gen_uname_field(struct proxy_process *p, struct vbuf *b,
                           enum uname_field f)
{
    struct det_uname u;
    det_get_uname(p->det, &u);
    /* A UTS namespace of its own has its own names. */
    if (proxy_ns_nodename(p)) {
        snprintf(u.nodename, sizeof(u.nodename), "%s", proxy_ns_nodename(p));
        snprintf(u.domainname, sizeof(u.domainname), "%s",
                 proxy_ns_domainname(p));
    }
    const char *v = f == UF_HOSTNAME     ? u.nodename
                    : f == UF_DOMAINNAME ? u.domainname
                    : f == UF_OSRELEASE  ? u.release
                    : f == UF_OSTYPE     ? u.sysname
                                         : u.version;
    vb_printf(b, "%s\n", v);
    return 0;
}

static int gen_hostname(struct proxy_process *p, struct vbuf *b)
{
    return gen_uname_field(p, b, UF_HOSTNAME);
}
static int gen_domainname(struct proxy_process *p, struct vbuf *b)
{
    return gen_uname_field(p, b, UF_DOMAINNAME);
}
static int gen_osrelease(struct proxy_process *p, struct vbuf *b)
{
    return gen_uname_field(p, b, UF_OSRELEASE);
}
/* The limit the mm calls apply (vmm_max_map_count), not the host's. */
static int gen_max_map_count(struct proxy_process *p, struct vbuf *b)
{
    (void)p;
    vb_printf(b, "%zu\n", vmm_max_map_count());
    return 0;
}
static int gen_ostype(struct proxy_process *p, struct vbuf *b)
{
    return gen_uname_field(p, b, UF_OSTYPE);
}
static int gen_kversion(struct proxy_process *p, struct vbuf *b)
{
    return gen_uname_field(p, b, UF_VERSION);
}

/* A fresh UUID per open, from the guest's random stream. */
static int gen_uuid(struct proxy_process *p, struct vbuf *b)
{
    char id[37];
    det_uuid(p->det, id);
    vb_printf(b, "%s\n", id);
    return 0;
}

static int gen_boot_id(struct proxy_process *p, struct vbuf *b)
{
    vb_printf(b, "%s\n", p->det->boot_id);
    return 0;
}

/* online, possible, present: CPU 0 only (glibc's get_nprocs reads online);
 * the node lists of /sys/devices/system/node and node0's cpulist: node 0,
 * CPU 0, the same "0". */
static int gen_cpu_list(struct proxy_process *p, struct vbuf *b)
{
    vb_put(b, "0\n", 2);
    return 0;
}

/* A host /etc file's bytes into b; b->s stays NULL when there is none. */
static void read_host_etc(const char *path, struct vbuf *b)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char chunk[4096];
    ssize_t n;
    while ((n = read(fd, chunk, sizeof(chunk))) > 0)
        vb_put(b, chunk, (size_t)n);
    close(fd);
    if (!b->s)
        vb_put(b, "", 0);
}

/* The host's /etc/hosts, and the run's hostname (the machine's, default
 * "hvrun" or --hostname) on 127.0.1.1 as Debian's installer writes it,
 * unless a line names it already: so that gethostbyname(gethostname())
 * resolves as on a Debian host. The file is the machine's, as on a host:
 * a name set later by sethostname in a UTS namespace is not added. */
static int gen_etc_hosts(struct proxy_process *p, struct vbuf *b)
{
    struct vbuf host = {0};
    read_host_etc("/etc/hosts", &host);
    struct det_uname u;
    det_get_uname(p->det, &u);
    const char *name = u.nodename;
    if (host.failed) {
        free(host.s);
        return -ENOMEM;
    }
    vb_put(b, host.s ? host.s : "", host.len);
    if (name[0] && !proxy_hosts_names(host.s, host.len, name)) {
        if (host.len && host.s[host.len - 1] != '\n')
            vb_put(b, "\n", 1);
        vb_printf(b, "127.0.1.1\t%s\n", name);
    }
    free(host.s);
    return 0;
}

/* The host's nsswitch.conf with files as the only source (hermetic.c). */
static int gen_nsswitch(struct proxy_process *p, struct vbuf *b)
{
    struct vbuf host = {0};
    read_host_etc("/etc/nsswitch.conf", &host);
    size_t len = 0;
    char *s = proxy_nsswitch_files_only(host.s, host.len, &len);
    free(host.s);
    if (!s || host.failed) {
        free(s);
        return -ENOMEM;
    }
    vb_put(b, s, len);
    free(s);
    return 0;
}

/* ---- the process --------------------------------------------------------- */

/* Sizes from the VMA list, in pages; Linux's names (task_mem). */
struct vm_figures {
    uint64_t total, rss, anon, file, shmem, data, stack, exe, lib, locked;
    gva_t start_code, end_code, start_data, end_data;
};

static uint64_t vma_pages(const struct vmm_vma *v)
{
    return (v->end - v->start) / VMM_PAGE_SIZE;
}

/*
 * The main program's segments are the file mappings of the lowest file
 * VMA's inode (the loader puts the program below its interpreter and every
 * mmap). Every VMA is backed when mapped, so all but PROT_NONE is resident.
 */
static void vm_figures_of(const struct proxy_process *p, struct vm_figures *f)
{
    memset(f, 0, sizeof(*f));
    const struct vmm_aspace *as = p->as;
    const struct vmm_vma *main_vma = NULL;
    for (size_t i = 0; i < as->nr_vmas && !main_vma; i++) {
        if (as->vmas[i]->flags & VMM_VMA_FILE)
            main_vma = as->vmas[i];
    }
    for (size_t i = 0; i < as->nr_vmas; i++) {
        const struct vmm_vma *v = as->vmas[i];
        uint64_t n = vma_pages(v);
        bool is_file = v->flags & VMM_VMA_FILE;
        bool is_main = main_vma && is_file && v->dev == main_vma->dev &&
                       v->ino == main_vma->ino;
        f->total += n;
        if (v->flags & VMM_VMA_LOCKED) /* mm->locked_vm: mlock'ed VMAs */
            f->locked += n;
        if (v->prot != PROT_NONE && !(v->flags & VMM_VMA_LAZY)) {
            f->rss += n;
            if (is_file)
                f->file += n;
            else if (v->flags & VMM_VMA_SHARED)
                f->shmem += n;
            else
                f->anon += n;
        }
        if (v->flags & (VMM_VMA_STACK | VMM_VMA_GROWSDOWN))
            f->stack += n;
        else if ((v->prot & PROT_WRITE) && !(v->flags & VMM_VMA_SHARED))
            f->data += n;
        if ((v->prot & PROT_EXEC) && !(v->prot & PROT_WRITE) &&
            !(v->flags & VMM_VMA_STACK)) {
            if (is_main)
                f->exe += n;
            else
                f->lib += n;
        }
        if (is_main && (v->prot & PROT_EXEC)) {
            if (!f->start_code)
                f->start_code = v->start;
            f->end_code = v->end;
        }
        if (is_main && (v->prot & PROT_WRITE)) {
            if (!f->start_data)
                f->start_data = v->start;
            f->end_data = v->end;
        }
    }
}

uint64_t proxy_procfs_rss_pages(const struct proxy_process *p)
{
    struct vm_figures f;
    vm_figures_of(p, &f);
    return f.rss;
}

/* Signal sets as /proc prints them: bit (sig-1). */
static void sig_sets(const struct proxy_process *p, uint64_t *ignored,
                     uint64_t *caught)
{
    *ignored = *caught = 0;
    for (int sig = 1; sig < PROXY_NSIG; sig++) {
        uint64_t h = p->sig.sigactions[sig].handler;
        if (h == 1)
            *ignored |= 1ULL << (sig - 1);
        else if (h > 1)
            *caught |= 1ULL << (sig - 1);
    }
}

/* The state letter of /proc/<pid>/stat: R for the process reading its own
 * file (it is running), T stopped, S when its current thread waits, Z
 * exited and not reaped. */
static char state_letter(const struct proxy_process *p)
{
    if (p->zombie)
        return 'Z';
    if (p->stopped)
        return 'T';
    if (p->world && p->world->procs[p->world->cur] == p)
        return 'R';
    if (p->threads &&
        p->threads[p->cur].state != PROXY_THREAD_RUNNABLE)
        return 'S';
    return 'R';
}

static const char *state_name(char c)
{
    return c == 'T'   ? "T (stopped)"
           : c == 'S' ? "S (sleeping)"
           : c == 'Z' ? "Z (zombie)"
                      : "R (running)";
}

/* The pid a stat or status shows: the thread's under task/TID/. */
static int viewed_tid(const struct proxy_process *p)
{
    return p->proc_tid ? p->proc_tid : p->pid;
}

/* A thread other than the one on the vCPU that waits is sleeping. The
 * process's own /proc/PID/stat is its leader's, the thread whose tid is
 * the pid, as in Linux: a thread that reads it while the main thread
 * waits (LTP's TST_PROCESS_STATE_WAIT(getpid(), 'S')) sees S, not its
 * own R. */
static char thread_state_letter(const struct proxy_process *p)
{
    char c = state_letter(p);
    int tid = p->proc_tid ? p->proc_tid : p->pid;
    if (c == 'T' || c == 'Z' || tid == p->tid)
        return c;
    for (int k = 0; k < p->nr_threads; k++)
        if (k != p->cur && p->threads[k].tid == tid &&
            p->threads[k].state != PROXY_THREAD_EXITED)
            return p->threads[k].state == PROXY_THREAD_RUNNABLE ? 'R' : 'S';
    return c;
}

/*
 * What /proc/<pid>/stat and status say of a process: a guest's
 * (proc_view_of) or the virtual init's (init_view). Each file has one
 * formatter, put_stat and put_status, whichever process it describes.
 */
struct proc_view {
    int tgid, pid; /* the pid shown: a thread's under task/TID */
    const char *comm;
    char state; /* R, S, T or Z */
    /* A zombie has no memory, files or fs left: its status has no Umask
     * and no memory lines, FDSize 0 (Linux's proc_pid_status). */
    bool zombie;
    int exit_code; /* a zombie's wait status, stat's last field */
    int ppid, pgrp, sid, tty_fg_pgrp;
    unsigned tty_nr;
    int nice, threads;
    uint64_t utime_ticks, start_ticks, rsslim;
    struct vm_figures vm;
    gva_t start_stack, start_brk, arg_start, arg_end, env_start, env_end;
    uint64_t pending, blocked, ignored, caught;
    /* status only */
    unsigned umask;
    uint32_t uids[4], gids[4]; /* real, effective, saved, filesystem */
    int fd_slots, nr_groups;
    uint32_t groups[64];
    int pid_levels; /* NSpid: the run's /proc, then each namespace below */
    int nspids[PROXY_PID_LEVELS + 1];
    bool thp_enabled, no_new_privs;
    uint64_t sigq_limit, caps, cap_eff, cap_inh, cap_bnd, cap_amb; /* caps: permitted */
    int seccomp_mode, seccomp_filters;
};

/* man 5 proc, /proc/pid/stat: 52 fields. A guest's address fields are
 * shown (it reads its own file, or a relative's: hvrun has no ptrace
 * access rule for /proc); the virtual init's are what Linux shows a
 * reader without access (1, 1 and zeros). */
static void put_stat(struct vbuf *b, const struct proc_view *v)
{
    vb_printf(b, "%d (%s) %c %d %d %d %u %d 0 0 0 0 0 %llu 0 0 0 %d %d %d 0 %llu",
              v->pid, v->comm, v->state, v->ppid, v->pgrp, v->sid, v->tty_nr,
              v->tty_fg_pgrp, (unsigned long long)v->utime_ticks,
              20 + v->nice, v->nice, v->threads,
              (unsigned long long)v->start_ticks);
    vb_printf(b, " %llu %llu %llu %llu %llu %llu 0 0",
              (unsigned long long)(v->vm.total * VMM_PAGE_SIZE),
              (unsigned long long)v->vm.rss, (unsigned long long)v->rsslim,
              (unsigned long long)v->vm.start_code,
              (unsigned long long)v->vm.end_code,
              (unsigned long long)v->start_stack);
    vb_printf(b, " %llu %llu %llu %llu 0 0 0 17 0 0 0 0 0 0",
              (unsigned long long)v->pending, (unsigned long long)v->blocked,
              (unsigned long long)v->ignored, (unsigned long long)v->caught);
    vb_printf(b, " %llu %llu %llu %llu %llu %llu %llu %d\n",
              (unsigned long long)v->vm.start_data,
              (unsigned long long)v->vm.end_data,
              (unsigned long long)v->start_brk,
              (unsigned long long)v->arg_start, (unsigned long long)v->arg_end,
              (unsigned long long)v->env_start, (unsigned long long)v->env_end,
              v->exit_code);
}

static void status_kb(struct vbuf *b, const char *name, uint64_t pages)
{
    vb_printf(b, "%s:\t%8llu kB\n", name,
              (unsigned long long)(pages * (VMM_PAGE_SIZE / 1024)));
}

/* Name: escapes a newline and a backslash, as Linux's proc_task_name. */
static void status_name(struct vbuf *b, const char *comm)
{
    vb_put(b, "Name:\t", 6);
    for (const char *c = comm; *c; c++) {
        if (*c == '\n')
            vb_put(b, "\\n", 2);
        else if (*c == '\\')
            vb_put(b, "\\\\", 2);
        else
            vb_put(b, c, 1);
    }
}

static void status_ids(struct vbuf *b, const struct proc_view *v)
{
    vb_printf(b, "Uid:\t%u\t%u\t%u\t%u\n", v->uids[0], v->uids[1], v->uids[2],
              v->uids[3]);
    vb_printf(b, "Gid:\t%u\t%u\t%u\t%u\n", v->gids[0], v->gids[1], v->gids[2],
              v->gids[3]);
    vb_printf(b, "FDSize:\t%d\nGroups:\t", v->fd_slots);
    for (int i = 0; i < v->nr_groups; i++)
        vb_printf(b, "%s%u", i ? " " : "", v->groups[i]);
    for (int k = 0; k < 2; k++) {
        vb_printf(b, k ? "NSpid:" : " \nNStgid:");
        for (int l = 0; l < v->pid_levels; l++)
            vb_printf(b, "\t%d", v->nspids[l]);
        vb_printf(b, "\n");
    }
    vb_printf(b, "NSpgid:\t%d\nNSsid:\t%d\n", v->pgrp, v->sid);
}

static void status_mem(struct vbuf *b, const struct vm_figures *f)
{
    status_kb(b, "VmPeak", f->total);
    status_kb(b, "VmSize", f->total);
    status_kb(b, "VmLck", f->locked);
    status_kb(b, "VmPin", 0);
    status_kb(b, "VmHWM", f->rss);
    status_kb(b, "VmRSS", f->rss);
    status_kb(b, "RssAnon", f->anon);
    status_kb(b, "RssFile", f->file);
    status_kb(b, "RssShmem", f->shmem);
    status_kb(b, "VmData", f->data);
    status_kb(b, "VmStk", f->stack);
    status_kb(b, "VmExe", f->exe);
    status_kb(b, "VmLib", f->lib);
    /* One page-table page per 2 MiB mapped, and the top levels. */
    status_kb(b, "VmPTE", f->total / 512 + 3);
    status_kb(b, "VmSwap", 0);
    status_kb(b, "HugetlbPages", 0);
}

static void put_status(struct vbuf *b, const struct proc_view *v)
{
    status_name(b, v->comm);
    vb_printf(b, "\n");
    if (!v->zombie)
        vb_printf(b, "Umask:\t%04o\n", v->umask);
    vb_printf(b,
              "State:\t%s\nTgid:\t%d\nNgid:\t0\n"
              "Pid:\t%d\nPPid:\t%d\nTracerPid:\t0\n",
              state_name(v->state), v->tgid, v->pid, v->ppid);
    status_ids(b, v);
    if (!v->zombie) {
        status_mem(b, &v->vm);
        vb_printf(b, "CoreDumping:\t0\nTHP_enabled:\t%d\n",
                  v->thp_enabled ? 1 : 0);
    }
    vb_printf(b,
              "Threads:\t%d\n"
              "SigQ:\t0/%llu\nSigPnd:\t%016llx\nShdPnd:\t%016llx\n"
              "SigBlk:\t%016llx\nSigIgn:\t%016llx\nSigCgt:\t%016llx\n",
              v->threads,
              (unsigned long long)v->sigq_limit, 0ULL,
              (unsigned long long)v->pending, (unsigned long long)v->blocked,
              (unsigned long long)v->ignored, (unsigned long long)v->caught);
    vb_printf(b,
              "CapInh:\t%016llx\nCapPrm:\t%016llx\nCapEff:\t%016llx\n"
              "CapBnd:\t%016llx\nCapAmb:\t%016llx\n"
              "NoNewPrivs:\t%d\nSeccomp:\t%d\nSeccomp_filters:\t%d\n"
              "Speculation_Store_Bypass:\tthread vulnerable\n"
              "SpeculationIndirectBranch:\tconditional enabled\n"
              "Cpus_allowed:\t1\nCpus_allowed_list:\t0\nMems_allowed:\t",
              (unsigned long long)v->cap_inh, (unsigned long long)v->caps,
              (unsigned long long)v->cap_eff,
              (unsigned long long)v->cap_bnd, (unsigned long long)v->cap_amb,
              v->no_new_privs ? 1 : 0,
              v->seccomp_mode,
              v->seccomp_filters);
    /* MAX_NUMNODES (1024 on Debian) bits, in 32-bit groups. */
    for (int i = 0; i < 31; i++)
        vb_put(b, "00000000,", 9);
    vb_printf(b, "00000001\nMems_allowed_list:\t0\n"
                 "voluntary_ctxt_switches:\t0\n"
                 "nonvoluntary_ctxt_switches:\t0\n");
}

/* The ids of status, as the reader's user namespace maps them; here the
 * process's own. The supplementary groups are the ones getgroups reports
 * (cred.c: the list setgroups gave, else hvrun's). */
static void view_ids_of(const struct proxy_process *p, struct proc_view *v)
{
    const uint32_t uids[4] = {p->cred.ruid, p->cred.euid, p->cred.suid,
                              p->cred.fsuid};
    const uint32_t gids[4] = {p->cred.rgid, p->cred.egid, p->cred.sgid,
                              p->cred.fsgid};
    for (int i = 0; i < 4; i++) {
        v->uids[i] = proxy_ns_uid_seen(p, uids[i]);
        v->gids[i] = proxy_ns_gid_seen(p, gids[i]);
    }
    gid_t host_groups[64];
    int n = p->cred.nr_groups >= 0
                ? (p->cred.nr_groups < 64 ? p->cred.nr_groups : 64)
                : proxy_host_groups(host_groups, 64);
    v->nr_groups = n > 0 ? n : 0;
    for (int i = 0; i < v->nr_groups; i++)
        v->groups[i] = proxy_ns_gid_seen(
            p, p->cred.nr_groups >= 0 ? p->cred.groups[i] : host_groups[i]);
    /* /proc is the run's (no guest mounts one of its own): its pid there,
     * then in each pid namespace below, down to the process's own. */
    v->pid_levels = 1 + proxy_ns_pid_level(p);
    for (int l = 0; l < v->pid_levels; l++)
        v->nspids[l] = l ? p->cred.vpids[l] : p->pid;
}

/* The memory fields of stat and status; a zombie's are 0 (no mm). */
static void view_memory_of(const struct proxy_process *p, struct proc_view *v)
{
    vm_figures_of(p, &v->vm);
    v->start_stack = p->mm.start_stack;
    v->start_brk = p->mm.brk_start;
    v->arg_start = p->mm.arg_start;
    v->arg_end = p->mm.arg_end;
    v->env_start = p->mm.env_start;
    v->env_end = p->mm.env_end;
}

static void proc_view_of(struct proxy_process *p, struct proc_view *v)
{
    memset(v, 0, sizeof(*v));
    v->tgid = p->pid;
    v->pid = viewed_tid(p);
    v->comm = proxy_thread_comm_of(p, p->proc_tid);
    v->state = thread_state_letter(p);
    v->ppid = p->ppid;
    v->pgrp = p->pgid;
    v->sid = p->sid;
    v->tty_nr = proxy_hooks.tty_nr(p);
    v->tty_fg_pgrp = proxy_hooks.tty_fg_pgrp(p);
    v->utime_ticks =
        proxy_cpu_clock_ns(p, CLOCK_PROCESS_CPUTIME_ID) / NS_PER_TICK;
    v->nice = p->prctl.nice;
    v->threads = live_threads(p);
    v->start_ticks = start_ticks(p);
    v->rsslim = p->rlimits[RLIMIT_RSS].rlim_cur;
    v->zombie = p->zombie;
    if (p->zombie)
        v->exit_code = p->exit_status;
    else
        view_memory_of(p, v);
    v->pending = p->sig.pending_mask;
    v->blocked = p->sig.sigmask;
    sig_sets(p, &v->ignored, &v->caught);
    v->umask = (unsigned)p->fs.umask;
    view_ids_of(p, v);
    v->fd_slots = p->zombie ? 0 : p->fds.cap;
    v->thp_enabled = !p->prctl.thp_disabled;
    v->no_new_privs = p->prctl.no_new_privs;
    v->sigq_limit = p->rlimits[RLIMIT_SIGPENDING].rlim_cur;
    proxy_cred_caps(p, &v->cap_eff, &v->caps, &v->cap_inh);
    v->cap_bnd = CAP_FULL_SET & ~p->cred.cap_bset_dropped;
    v->cap_amb = proxy_cred_ambient(p);
    const struct proxy_thread *t = &p->threads[p->cur];
    v->seccomp_mode = t->seccomp_strict ? 1 : t->seccomp ? 2 : 0;
    v->seccomp_filters = proxy_seccomp_filters(t);
}

static int gen_self_stat(struct proxy_process *p, struct vbuf *b)
{
    struct proc_view v;
    proc_view_of(p, &v);
    put_stat(b, &v);
    return 0;
}

static int gen_self_status(struct proxy_process *p, struct vbuf *b)
{
    struct proc_view v;
    proc_view_of(p, &v);
    put_status(b, &v);
    return 0;
}

/* /proc/sysvipc: the run's own IPC namespace (kernel/sysvshm.c,
 * kernel/sysvsem.c, kernel/sysvmsg.c), not the host's: the header line,
 * then one line per object. */
static int gen_ipc_table(struct proxy_process *p, struct vbuf *b,
                         const char *header,
                         int (*line_of)(const struct proxy_process *, int,
                                        char *, size_t))
{
    vb_printf(b, "%s", header);
    proxy_ns_ipc_enter(p); /* the reader's IPC namespace */
    char line[256];
    for (int i = 0; p->world && line_of(p, i, line, sizeof(line)) > 0;
         i++)
        vb_printf(b, "%s", line);
    return 0;
}

static int gen_sysvipc_shm(struct proxy_process *p, struct vbuf *b)
{
    return gen_ipc_table(p, b,
                         "       key      shmid perms                  size  "
                         "cpid  lpid nattch   uid   gid  cuid  cgid      "
                         "atime      dtime      ctime                   rss "
                         "                 swap\n",
                         proxy_shm_proc_line);
}

static int gen_sysvipc_sem(struct proxy_process *p, struct vbuf *b)
{
    return gen_ipc_table(p, b,
                         "       key      semid perms      nsems   uid   gid  "
                         "cuid  cgid      otime      ctime\n",
                         proxy_sem_proc_line);
}

static int gen_sysvipc_msg(struct proxy_process *p, struct vbuf *b)
{
    return gen_ipc_table(p, b,
                         "       key      msqid perms      cbytes       qnum "
                         "lspid lrpid   uid   gid  cuid  cgid      stime      "
                         "rtime      ctime\n",
                         proxy_msg_proc_line);
}

/* /proc/keys and /proc/key-users: the run's keys (kernel/keys.c), not
 * the host's. */
static int gen_key_table(struct proxy_process *p, struct vbuf *b,
                         int (*line_of)(struct proxy_process *, int, char *,
                                        size_t))
{
    char line[512];
    for (int i = 0; line_of(p, i, line, sizeof(line)) > 0; i++)
        vb_printf(b, "%s", line);
    return 0;
}

static int gen_proc_keys(struct proxy_process *p, struct vbuf *b)
{
    return gen_key_table(p, b, proxy_keys_proc_line);
}

static int gen_key_users(struct proxy_process *p, struct vbuf *b)
{
    return gen_key_table(p, b, proxy_keys_users_line);
}

/* size resident shared text lib data dt, in pages, as Linux's statm. */
static void put_statm(struct vbuf *b, const struct vm_figures *f)
{
    vb_printf(b, "%llu %llu %llu %llu 0 %llu 0\n",
              (unsigned long long)f->total, (unsigned long long)f->rss,
              (unsigned long long)(f->file + f->shmem),
              (unsigned long long)f->exe,
              (unsigned long long)(f->data + f->stack));
}

static int gen_self_statm(struct proxy_process *p, struct vbuf *b)
{
    struct vm_figures f;
    vm_figures_of(p, &f);
    put_statm(b, &f);
    return 0;
}

static void put_limit(struct vbuf *b, rlim_t v)
{
    if (v == RLIM_INFINITY)
        vb_printf(b, "%-20s ", "unlimited");
    else
        vb_printf(b, "%-20llu ", (unsigned long long)v);
}

/* /proc/PID/limits as Linux's proc_pid_limits prints it: the guest's
 * limits (what getrlimit says), not hvrun's own, which the host's file
 * would show. */
static int gen_self_limits(struct proxy_process *p, struct vbuf *b)
{
    static const struct {
        const char *name, *unit;
    } names[RLIM_NLIMITS] = {
        [RLIMIT_CPU] = {"Max cpu time", "seconds"},
        [RLIMIT_FSIZE] = {"Max file size", "bytes"},
        [RLIMIT_DATA] = {"Max data size", "bytes"},
        [RLIMIT_STACK] = {"Max stack size", "bytes"},
        [RLIMIT_CORE] = {"Max core file size", "bytes"},
        [RLIMIT_RSS] = {"Max resident set", "bytes"},
        [RLIMIT_NPROC] = {"Max processes", "processes"},
        [RLIMIT_NOFILE] = {"Max open files", "files"},
        [RLIMIT_MEMLOCK] = {"Max locked memory", "bytes"},
        [RLIMIT_AS] = {"Max address space", "bytes"},
        [RLIMIT_LOCKS] = {"Max file locks", "locks"},
        [RLIMIT_SIGPENDING] = {"Max pending signals", "signals"},
        [RLIMIT_MSGQUEUE] = {"Max msgqueue size", "bytes"},
        [RLIMIT_NICE] = {"Max nice priority", NULL},
        [RLIMIT_RTPRIO] = {"Max realtime priority", NULL},
        [RLIMIT_RTTIME] = {"Max realtime timeout", "us"},
    };
    vb_printf(b, "%-25s %-20s %-20s %-10s\n", "Limit", "Soft Limit",
              "Hard Limit", "Units");
    for (int i = 0; i < RLIM_NLIMITS; i++) {
        vb_printf(b, "%-25s ", names[i].name);
        put_limit(b, p->rlimits[i].rlim_cur);
        put_limit(b, p->rlimits[i].rlim_max);
        if (names[i].unit)
            vb_printf(b, "%-10s", names[i].unit);
        vb_printf(b, "\n");
    }
    return 0;
}

static void vma_name(const struct proxy_process *p, const struct vmm_vma *v,
                     char *out, size_t cap)
{
    out[0] = '\0';
    if (v->flags & VMM_VMA_HEAP)
        snprintf(out, cap, "[heap]");
    else if (v->flags & VMM_VMA_STACK)
        snprintf(out, cap, "[stack]");
    else if (v->name)
        snprintf(out, cap, "%s", v->name);
    /* The program's mappings are named as execve was ("./prog"); Linux
     * names the file by its path (d_path), as for every other mapping. */
    if ((v->flags & VMM_VMA_FILE) && out[0] && out[0] != '/' &&
        v->dev == p->exe_dev && v->ino == p->exe_ino)
        snprintf(out, cap, "%s", p->exe_path);
    if (!(v->flags & VMM_VMA_FILE) || out[0] != '/')
        return;
    long n = proxy_vfs_link_fixup(p, "/proc/self/fd/", out, (long)strlen(out),
                                  cap - 1);
    out[n] = '\0';
}

/* task_mmu.c show_map_vma: one line for v (up to end, past merged lazy
 * stretches); the name starts at column 73. */
/* A mapped file's device number as stat shows it to the guest: the
 * canonical one, or the host's when metadata is not virtualised. */
static uint64_t mapped_dev(struct proxy_process *p, const struct vmm_vma *v)
{
    if (!(v->flags & VMM_VMA_FILE))
        return 0;
    return proxy_meta_on(p) ? det_dev(p->det, v->dev) : v->dev;
}

static void maps_line(struct proxy_process *p, struct vbuf *b,
                      const struct vmm_vma *v, gva_t end)
{
    char name[PROXY_PATH_MAX];
    bool is_file = v->flags & VMM_VMA_FILE;
    uint64_t dev = mapped_dev(p, v);
    uint64_t ino = is_file ? det_ino(p->det, v->dev, v->ino) : 0;
    size_t line_start = b->len;
    vb_printf(b, "%08llx-%08llx %c%c%c%c %08llx %02x:%02x %llu ",
              (unsigned long long)v->start, (unsigned long long)end,
              v->prot & PROT_READ ? 'r' : '-',
              v->prot & PROT_WRITE ? 'w' : '-',
              v->prot & PROT_EXEC ? 'x' : '-',
              v->flags & VMM_VMA_SHARED ? 's' : 'p',
              (unsigned long long)(is_file ? v->file_off : 0),
              major((dev_t)dev), minor((dev_t)dev), (unsigned long long)ino);
    vma_name(p, v, name, sizeof(name));
    if (name[0]) {
        size_t width = b->len - line_start;
        for (; width < 72; width++)
            vb_put(b, " ", 1);
        vb_printf(b, " %s", name);
    }
    vb_put(b, "\n", 1);
}

/* The VMAs [*i, returned index] that make one mapping of Linux's (a lazy
 * VMA and its backed stretches, a heap grown by brk, neighbours Linux
 * would have merged: vmm_vma_linux_joins); *end its end, *backed the
 * bytes backed. */
static size_t one_mapping(const struct vmm_aspace *as, size_t i, gva_t *end,
                          uint64_t *backed)
{
    *end = as->vmas[i]->end;
    *backed = (as->vmas[i]->flags & VMM_VMA_LAZY)
                  ? 0
                  : as->vmas[i]->end - as->vmas[i]->start;
    while (i + 1 < as->nr_vmas &&
           vmm_vma_linux_joins(as->vmas[i], as->vmas[i + 1])) {
        const struct vmm_vma *w = as->vmas[++i];
        *end = w->end;
        if (!(w->flags & VMM_VMA_LAZY))
            *backed += w->end - w->start;
    }
    return i;
}

size_t proxy_procfs_mapping(struct proxy_process *p, size_t i,
                            struct proxy_mapping *m)
{
    const struct vmm_aspace *as = p->as;
    if (i >= as->nr_vmas)
        return 0;
    const struct vmm_vma *v = as->vmas[i];
    uint64_t backed;
    size_t last = one_mapping(as, i, &m->end, &backed);
    bool is_file = v->flags & VMM_VMA_FILE;
    uint64_t dev = mapped_dev(p, v);
    m->start = v->start;
    m->prot = v->prot;
    m->shared = v->flags & VMM_VMA_SHARED;
    m->is_file = is_file;
    m->file_off = is_file ? v->file_off : 0;
    m->dev_major = major((dev_t)dev);
    m->dev_minor = minor((dev_t)dev);
    m->ino = is_file ? det_ino(p->det, v->dev, v->ino) : 0;
    vma_name(p, v, m->name, sizeof(m->name));
    m->backed = v->prot == PROT_NONE ? 0 : backed;
    return last + 1;
}

/* "START-END" as proc_map_files_lookup reads it (dname_to_vma_addr: hex,
 * no leading zero, nothing after). */
static bool map_files_name(const char *s, uint64_t *start, uint64_t *end)
{
    uint64_t *v[2] = {start, end};
    for (int k = 0; k < 2; k++) {
        if (s[0] == '0' && s[1] != (k ? '\0' : '-'))
            return false;
        const char *digits = s;
        *v[k] = 0;
        for (; isxdigit((unsigned char)*s); s++) {
            if (*v[k] >> 60)
                return false;
            *v[k] = *v[k] << 4 | (uint64_t)(isdigit((unsigned char)*s)
                                                ? *s - '0'
                                                : (tolower((unsigned char)*s) - 'a' + 10));
        }
        if (s == digits || *s != (k ? '\0' : '-'))
            return false;
        s++;
    }
    return true;
}

bool proxy_procfs_map_file(struct proxy_process *q, const char *entry,
                           struct proxy_mapping *m)
{
    uint64_t start, end;
    if (!q->as || !map_files_name(entry, &start, &end))
        return false;
    for (size_t i = 0; (i = proxy_procfs_mapping(q, i, m)) != 0;) {
        if (m->start == start && m->end == end)
            return proxy_procfs_map_file_shown(m);
        if (m->start > start)
            break;
    }
    return false;
}

bool proxy_procfs_map_file_shown(const struct proxy_mapping *m)
{
    return m->is_file && m->name[0] == '/';
}

static int gen_self_maps(struct proxy_process *p, struct vbuf *b)
{
    const struct vmm_aspace *as = p->as;
    for (size_t i = 0; i < as->nr_vmas; i++) {
        const struct vmm_vma *v = as->vmas[i];
        gva_t end;
        uint64_t backed;
        i = one_mapping(as, i, &end, &backed);
        maps_line(p, b, v, end);
    }
    return 0;
}

/* show_smap_vma_flags: the mnemonics of the flags hvrun keeps, in
 * Linux's bit order. */
static void smaps_vmflags(struct vbuf *b, const struct vmm_vma *v)
{
    bool shared = v->flags & VMM_VMA_SHARED;
    vb_printf(b, "VmFlags:");
    if (v->prot & PROT_READ)
        vb_printf(b, " rd");
    if (v->prot & PROT_WRITE)
        vb_printf(b, " wr");
    if (v->prot & PROT_EXEC)
        vb_printf(b, " ex");
    if (shared)
        vb_printf(b, " sh");
    if (!(v->flags & VMM_VMA_SPECIAL)) {
        vb_printf(b, " mr");
        if (!(v->flags & VMM_VMA_NOMAYWRITE))
            vb_printf(b, " mw");
        if (!(v->flags & VMM_VMA_NOMAYEXEC))
            vb_printf(b, " me");
    }
    if (shared)
        vb_printf(b, " ms");
    if (v->flags & (VMM_VMA_GROWSDOWN | VMM_VMA_STACK))
        vb_printf(b, " gd");
    if (v->flags & VMM_VMA_SPECIAL)
        vb_printf(b, " pf io");
    if (v->flags & VMM_VMA_LOCKED)
        vb_printf(b, " lo");
    if (v->flags & VMM_VMA_DONTFORK)
        vb_printf(b, " dc");
    if (v->flags & VMM_VMA_ACCOUNT)
        vb_printf(b, " ac");
    if (v->flags & VMM_VMA_NORESERVE)
        vb_printf(b, " nr");
    if (v->flags & VMM_VMA_WIPEONFORK)
        vb_printf(b, " wf");
    if (v->flags & VMM_VMA_SEALED)
        vb_printf(b, " sl");
    vb_printf(b, "\n");
}

/*
 * /proc/self/smaps (task_mmu.c show_smap, Linux 6.1's fields): each
 * mapping's maps line and its sizes in kB, from hvrun's own VMAs, so the
 * same in every run: memory is backed when mapped (a lazy mapping's
 * untouched rest is not), so Rss is the backed size; no page is shared
 * with another process's count (Pss is Rss; Shared_* are for pages
 * another process maps too, which hvrun does not count: 0), swapped or
 * huge; anonymous memory is Private_Dirty (and Anonymous when private), a
 * file's pages Private_Clean; Locked is Rss for an mlock'd mapping.
 */
/* One mapping's sizes in smaps' terms, in KiB (hvrun's model: every
 * backed page resident and private, anonymous memory dirty). */
struct smaps_kb {
    uint64_t rss, anon_dirty, file_clean, anonymous, shmem, locked;
};

static void mapping_kb(const struct vmm_vma *v, uint64_t rss,
                       struct smaps_kb *k)
{
    uint64_t kb = rss >> 10;
    bool anon = !(v->flags & VMM_VMA_FILE);
    bool shared = v->flags & VMM_VMA_SHARED;
    k->rss = kb;
    k->anon_dirty = anon ? kb : 0;
    k->file_clean = anon ? 0 : kb;
    k->anonymous = anon && !shared ? kb : 0;
    k->shmem = anon && shared ? kb : 0;
    k->locked = (v->flags & VMM_VMA_LOCKED) ? kb : 0;
}

struct smaps_row {
    const char *label;
    uint64_t kb;
};

static void put_smaps_rows(struct vbuf *b, const struct smaps_row *rows,
                           size_t n)
{
    for (size_t r = 0; r < n; r++)
        vb_printf(b, "%-16s%8llu kB\n", rows[r].label,
                  (unsigned long long)rows[r].kb);
}

static int gen_self_smaps(struct proxy_process *p, struct vbuf *b)
{
    const struct vmm_aspace *as = p->as;
    for (size_t i = 0; i < as->nr_vmas; i++) {
        const struct vmm_vma *v = as->vmas[i];
        gva_t end;
        uint64_t rss;
        i = one_mapping(as, i, &end, &rss);
        maps_line(p, b, v, end);
        struct smaps_kb k;
        mapping_kb(v, rss, &k);
        const struct smaps_row rows[] = {
            {"Size:", (end - v->start) >> 10},
            {"KernelPageSize:", 4},
            {"MMUPageSize:", 4},
            {"Rss:", k.rss},
            {"Pss:", k.rss},
            {"Pss_Dirty:", k.anon_dirty},
            {"Shared_Clean:", 0},
            {"Shared_Dirty:", 0},
            {"Private_Clean:", k.file_clean},
            {"Private_Dirty:", k.anon_dirty},
            {"Referenced:", k.rss},
            {"Anonymous:", k.anonymous},
            {"LazyFree:", 0},
            {"AnonHugePages:", 0},
            {"ShmemPmdMapped:", 0},
            {"FilePmdMapped:", 0},
            {"Shared_Hugetlb:", 0},
            {"Private_Hugetlb:", 0},
            {"Swap:", 0},
            {"SwapPss:", 0},
            {"Locked:", k.locked},
        };
        put_smaps_rows(b, rows, sizeof(rows) / sizeof(rows[0]));
        vb_printf(b, "THPeligible:    0\n");
        smaps_vmflags(b, v);
    }
    return 0;
}

/* smaps summed, as Linux's show_smaps_rollup: the first mapping's start to
 * the last one's end, then the totals (ps, smem and psutil read it; hvrun
 * refused it as hvrun's own file). */
static int gen_self_smaps_rollup(struct proxy_process *p, struct vbuf *b)
{
    const struct vmm_aspace *as = p->as;
    struct smaps_kb sum = {0};
    gva_t first = 0, last = 0;
    for (size_t i = 0; i < as->nr_vmas; i++) {
        const struct vmm_vma *v = as->vmas[i];
        uint64_t rss;
        if (i == 0)
            first = v->start;
        i = one_mapping(as, i, &last, &rss);
        struct smaps_kb k;
        mapping_kb(v, rss, &k);
        sum.rss += k.rss;
        sum.anon_dirty += k.anon_dirty;
        sum.file_clean += k.file_clean;
        sum.anonymous += k.anonymous;
        sum.shmem += k.shmem;
        sum.locked += k.locked;
    }
    size_t line_start = b->len;
    vb_printf(b, "%08llx-%08llx ---p 00000000 00:00 0 ",
              (unsigned long long)first, (unsigned long long)last);
    for (size_t width = b->len - line_start; width < 72; width++)
        vb_put(b, " ", 1);
    vb_printf(b, " [rollup]\n");
    const struct smaps_row rows[] = {
        {"Rss:", sum.rss},
        {"Pss:", sum.rss},
        {"Pss_Dirty:", sum.anon_dirty},
        {"Pss_Anon:", sum.anonymous},
        {"Pss_File:", sum.file_clean},
        {"Pss_Shmem:", sum.shmem},
        {"Shared_Clean:", 0},
        {"Shared_Dirty:", 0},
        {"Private_Clean:", sum.file_clean},
        {"Private_Dirty:", sum.anon_dirty},
        {"Referenced:", sum.rss},
        {"Anonymous:", sum.anonymous},
        {"KSM:", 0},
        {"LazyFree:", 0},
        {"AnonHugePages:", 0},
        {"ShmemPmdMapped:", 0},
        {"FilePmdMapped:", 0},
        {"Shared_Hugetlb:", 0},
        {"Private_Hugetlb:", 0},
        {"Swap:", 0},
        {"SwapPss:", 0},
        {"Locked:", sum.locked},
    };
    put_smaps_rows(b, rows, sizeof(rows) / sizeof(rows[0]));
    return 0;
}

/* Its CPU time on the CPU (the clock stat's utime comes from, in ns), no
 * wait for a CPU, no timeslices counted (status: no context switches),
 * as Linux's schedstat's three fields. */
static int gen_self_schedstat(struct proxy_process *p, struct vbuf *b)
{
    vb_printf(b, "%llu 0 0\n",
              (unsigned long long)proxy_cpu_clock_ns(
                  p, CLOCK_PROCESS_CPUTIME_ID));
    return 0;
}

/* I/O accounting is not modelled: none counted (as status's context
 * switches), in Linux's layout; iotop, pidstat -d and psutil read it. */
static int gen_self_io(struct proxy_process *p, struct vbuf *b)
{
    (void)p;
    vb_printf(b, "rchar: 0\nwchar: 0\nsyscr: 0\nsyscw: 0\n"
                 "read_bytes: 0\nwrite_bytes: 0\n"
                 "cancelled_write_bytes: 0\n");
    return 0;
}

/* Where it sleeps in the kernel: "0", what Linux shows a reader without
 * kallsyms access (ps -o wchan prints "-"). */
static int gen_self_wchan(struct proxy_process *p, struct vbuf *b)
{
    (void)p;
    vb_printf(b, "0");
    return 0;
}

/* Appends guest memory [start, end); stops quietly at an unreadable part
 * (the guest may have unmapped its initial stack). */
static void put_guest_range(struct proxy_process *p, struct vbuf *b,
                            gva_t start, gva_t end)
{
    char chunk[GUEST_COPY_CHUNK_BYTES];
    for (gva_t at = start; at < end;) {
        size_t n =
            end - at < sizeof(chunk) ? (size_t)(end - at) : sizeof(chunk);
        if (proxy_copy_in(p, chunk, at, n) < 0)
            return;
        vb_put(b, chunk, n);
        at += n;
    }
}

/*
 * Linux's get_mm_cmdline: the argv strings; when the last argv byte is no
 * longer NUL the program rewrote its title (setproctitle), and the title
 * is read up to its first NUL, at most a page, into the env area.
 */
static int gen_self_cmdline(struct proxy_process *p, struct vbuf *b)
{
    if (p->zombie || p->mm.arg_end <= p->mm.arg_start)
        return 0;
    char last = 0;
    if (proxy_copy_in(p, &last, p->mm.arg_end - 1, 1) < 0)
        return 0;
    if (last == 0) {
        put_guest_range(p, b, p->mm.arg_start, p->mm.arg_end);
        return 0;
    }
    gva_t end = p->mm.env_end > p->mm.arg_start ? p->mm.env_end : p->mm.arg_end;
    if (end - p->mm.arg_start > PROCTITLE_MAX_BYTES)
        end = p->mm.arg_start + PROCTITLE_MAX_BYTES;
    struct vbuf t = {0};
    put_guest_range(p, &t, p->mm.arg_start, end);
    if (t.s) {
        size_t len = strnlen(t.s, t.len);
        vb_put(b, t.s, len < t.len ? len + 1 : len);
    }
    free(t.s);
    return 0;
}

static int gen_self_environ(struct proxy_process *p, struct vbuf *b)
{
    if (p->mm.env_end > p->mm.env_start)
        put_guest_range(p, b, p->mm.env_start, p->mm.env_end);
    return 0;
}

/* The auxiliary vector the loader put above envp (Linux keeps a copy in
 * mm->saved_auxv; the initial stack's is the same unless the program
 * overwrote it). Up to and with AT_NULL. */
static int gen_self_auxv(struct proxy_process *p, struct vbuf *b)
{
    uint64_t argc, w;
    if (!p->mm.start_stack || proxy_copy_in(p, &argc, p->mm.start_stack, 8) < 0)
        return 0;
    gva_t at = p->mm.start_stack + 8 * (argc + 2); /* past argv and its NULL */
    for (int i = 0; i < 4096; i++, at += 8) { /* past envp and its NULL */
        if (proxy_copy_in(p, &w, at, 8) < 0)
            return 0;
        if (w == 0)
            break;
    }
    at += 8;
    for (int i = 0; i < 64; i++, at += 16) {
        uint64_t pair[2];
        if (proxy_copy_in(p, pair, at, sizeof(pair)) < 0)
            return 0;
        vb_put(b, (const char *)pair, sizeof(pair));
        if (pair[0] == 0)
            break;
    }
    return 0;
}

/* The same bytes for a core file's NT_AUXV (coredump.c). */
size_t proxy_fs_saved_auxv(struct proxy_process *p, void *out, size_t len)
{
    struct vbuf b = {0};
    size_t n = 0;
    if (gen_self_auxv(p, &b) == 0 && !b.failed && b.s) {
        n = b.len < len ? b.len : len;
        memcpy(out, b.s, n);
    }
    free(b.s);
    return n;
}

/* ---- the table ----------------------------------------------------------- */

static long open_mem(struct proxy_process *p, struct proxy_process *of,
                     const char *name, int flags)
{
    (void)name;
    return proxy_procfile_open_mem(p, of, flags);
}

static long open_pagemap(struct proxy_process *p, struct proxy_process *of,
                         const char *name, int flags)
{
    (void)name;
    return proxy_procfile_open_pagemap(p, of, flags);
}

static long open_syscall(struct proxy_process *p, struct proxy_process *of,
                         const char *name, int flags)
{
    (void)name;
    return proxy_procfile_open_syscall(p, of, flags);
}

static long open_kept(struct proxy_process *p, struct proxy_process *of,
                      const char *name, int flags)
{
    return proxy_procfile_open_kept(
        p, of, proxy_procfile_kept_index(name + strlen("/proc/self/")), flags);
}

/* uid_map, gid_map, setgroups (kernel/namespace.c's rules). */
static long open_nsfile(struct proxy_process *p, struct proxy_process *of,
                        const char *name, int flags)
{
    const char *base = name + strlen("/proc/self/");
    int which = strcmp(base, "uid_map") == 0   ? PROXY_NSFILE_UID_MAP
                : strcmp(base, "gid_map") == 0 ? PROXY_NSFILE_GID_MAP
                                               : PROXY_NSFILE_SETGROUPS;
    return proxy_procfile_open_nsfile(p, of, which, flags);
}

/* /proc/self/ns/NAME: the guest's namespace, not hvrun's. */
long proxy_vfs_open_ns(struct proxy_process *p, struct proxy_process *of,
                       const char *name, int flags)
{
    int type = proxy_ns_type_of_name(name + strlen("/proc/self/ns/"));
    return proxy_procfile_open_ns(p, proxy_vfs_ns_owner(p, of), type, flags);
}

#define NS_FILE(name) \
    {"/proc/self/ns/" name, GATE_ALWAYS, DET_SRC_IDS, NULL, proxy_vfs_open_ns}

#define SELF_FILE(name, gen) \
    {"/proc/self/" name, GATE_ALWAYS, DET_SRC_IDS, gen, NULL}

#define KEPT_FILE(name) \
    {"/proc/self/" name, GATE_ALWAYS, DET_SRC_IDS, NULL, open_kept}

const struct vfile proxy_vfs_files[] = {
    {"/proc/self/stat", GATE_ALWAYS, DET_SRC_IDS, gen_self_stat, NULL},
    {"/proc/self/status", GATE_ALWAYS, DET_SRC_IDS, gen_self_status, NULL},
    {"/proc/self/maps", GATE_ALWAYS, DET_SRC_IDS, gen_self_maps, NULL},
    {"/proc/self/smaps", GATE_ALWAYS, DET_SRC_IDS, gen_self_smaps, NULL},
    {"/proc/self/smaps_rollup", GATE_ALWAYS, DET_SRC_IDS,
     gen_self_smaps_rollup, NULL},
    {"/proc/self/schedstat", GATE_ALWAYS, DET_SRC_IDS, gen_self_schedstat,
     NULL},
    {"/proc/self/io", GATE_ALWAYS, DET_SRC_IDS, gen_self_io, NULL},
    {"/proc/self/wchan", GATE_ALWAYS, DET_SRC_IDS, gen_self_wchan, NULL},
    {"/proc/self/cmdline", GATE_ALWAYS, DET_SRC_IDS, gen_self_cmdline, NULL},
    {"/proc/self/environ", GATE_ALWAYS, DET_SRC_IDS, gen_self_environ, NULL},
    {"/proc/self/auxv", GATE_ALWAYS, DET_SRC_IDS, gen_self_auxv, NULL},
    {"/proc/self/statm", GATE_ALWAYS, DET_SRC_IDS, gen_self_statm, NULL},
    {"/proc/self/limits", GATE_ALWAYS, DET_SRC_IDS, gen_self_limits, NULL},
    {"/proc/self/mem", GATE_ALWAYS, DET_SRC_IDS, NULL, open_mem},
    {"/proc/self/syscall", GATE_ALWAYS, DET_SRC_IDS, NULL, open_syscall},
    {"/proc/self/pagemap", GATE_ALWAYS, DET_SRC_IDS, NULL, open_pagemap},
    SELF_FILE("sched", proxy_procfs_gen_sched),
    SELF_FILE("stack", proxy_procfs_gen_stack),
    SELF_FILE("numa_maps", proxy_procfs_gen_numa_maps),
    SELF_FILE("timers", proxy_procfs_gen_timers),
    SELF_FILE("cpuset", proxy_procfs_gen_cpuset),
    SELF_FILE("arch_status", proxy_procfs_gen_arch_status),
    SELF_FILE("projid_map", proxy_procfs_gen_projid_map),
    SELF_FILE("ksm_stat", proxy_procfs_gen_ksm_stat),
    SELF_FILE("ksm_merging_pages", proxy_procfs_gen_ksm_merging_pages),
    SELF_FILE("timens_offsets", proxy_procfs_gen_timens_offsets),
    KEPT_FILE("comm"),
    KEPT_FILE("oom_score_adj"),
    KEPT_FILE("oom_adj"),
    KEPT_FILE("coredump_filter"),
    KEPT_FILE("timerslack_ns"),
    KEPT_FILE("loginuid"),
    KEPT_FILE("clear_refs"),
    KEPT_FILE("sessionid"),
    KEPT_FILE("oom_score"),
    KEPT_FILE("personality"),
    KEPT_FILE("cgroup"),
    KEPT_FILE("autogroup"),
    {"/proc/self/uid_map", GATE_ALWAYS, DET_SRC_IDS, NULL, open_nsfile},
    {"/proc/self/gid_map", GATE_ALWAYS, DET_SRC_IDS, NULL, open_nsfile},
    {"/proc/self/setgroups", GATE_ALWAYS, DET_SRC_IDS, NULL, open_nsfile},
    NS_FILE("cgroup"),
    NS_FILE("ipc"),
    NS_FILE("mnt"),
    NS_FILE("net"),
    NS_FILE("pid"),
    NS_FILE("pid_for_children"),
    NS_FILE("time"),
    NS_FILE("time_for_children"),
    NS_FILE("user"),
    NS_FILE("uts"),
    {"/proc/cpuinfo", GATE_HOST, DET_SRC_HOST, gen_cpuinfo, NULL},
    {"/proc/meminfo", GATE_HOST, DET_SRC_HOST, gen_meminfo, NULL},
    {"/proc/stat", GATE_HOST, DET_SRC_HOST, gen_stat, NULL},
    {"/proc/uptime", GATE_TIME, DET_SRC_TIME, gen_uptime, NULL},
    {"/proc/loadavg", GATE_HOST, DET_SRC_HOST, gen_loadavg, NULL},
    {"/proc/version", GATE_HOST, DET_SRC_HOST, gen_version, NULL},
    {"/proc/vmstat", GATE_HOST, DET_SRC_HOST, proxy_procfs_gen_vmstat, NULL},
    {"/proc/buddyinfo", GATE_HOST, DET_SRC_HOST, proxy_procfs_gen_buddyinfo,
     NULL},
    {"/proc/zoneinfo", GATE_HOST, DET_SRC_HOST, proxy_procfs_gen_zoneinfo,
     NULL},
    {"/proc/interrupts", GATE_HOST, DET_SRC_HOST, proxy_procfs_gen_interrupts,
     NULL},
    {"/proc/softirqs", GATE_HOST, DET_SRC_HOST, proxy_procfs_gen_softirqs,
     NULL},
    {"/proc/slabinfo", GATE_HOST, DET_SRC_HOST, proxy_procfs_gen_slabinfo,
     NULL},
    {"/proc/pagetypeinfo", GATE_HOST, DET_SRC_HOST,
     proxy_procfs_gen_pagetypeinfo, NULL},
    {"/proc/diskstats", GATE_HOST, DET_SRC_HOST, proxy_procfs_gen_diskstats,
     NULL},
    {"/proc/sys/fs/file-nr", GATE_HOST, DET_SRC_HOST, proxy_procfs_gen_file_nr,
     NULL},
    {"/proc/sys/fs/inode-nr", GATE_HOST, DET_SRC_HOST,
     proxy_procfs_gen_inode_nr, NULL},
    {"/proc/sys/fs/inode-state", GATE_HOST, DET_SRC_HOST,
     proxy_procfs_gen_inode_state, NULL},
    {"/proc/sys/fs/dentry-state", GATE_HOST, DET_SRC_HOST,
     proxy_procfs_gen_dentry_state, NULL},
    {"/proc/pressure/cpu", GATE_HOST, DET_SRC_HOST, proxy_procfs_gen_pressure,
     NULL},
    {"/proc/pressure/memory", GATE_HOST, DET_SRC_HOST,
     proxy_procfs_gen_pressure, NULL},
    {"/proc/pressure/io", GATE_HOST, DET_SRC_HOST, proxy_procfs_gen_pressure,
     NULL},
    {"/proc/sys/kernel/ns_last_pid", GATE_ALWAYS, DET_SRC_IDS,
     proxy_procfs_gen_ns_last_pid, NULL},
    {"/proc/timer_list", GATE_HOST, DET_SRC_HOST, proxy_procfs_gen_timer_list,
     NULL},
    {"/proc/locks", GATE_ALWAYS, DET_SRC_IDS, proxy_plock_gen_locks, NULL},
    {"/proc/sys/fs/aio-nr", GATE_ALWAYS, DET_SRC_IDS, proxy_aio_gen_nr, NULL},
    {"/proc/sys/fs/aio-max-nr", GATE_ALWAYS, DET_SRC_IDS, proxy_aio_gen_max_nr,
     NULL},
    {"/proc/sys/kernel/random/uuid", GATE_RANDOM, DET_SRC_RANDOM, gen_uuid, NULL},
    {"/proc/sys/kernel/random/boot_id", GATE_RANDOM, DET_SRC_RANDOM,
     gen_boot_id, NULL},
    {"/proc/sys/kernel/hostname", GATE_HOST, DET_SRC_HOST, gen_hostname, NULL},
    {"/proc/sys/kernel/domainname", GATE_HOST, DET_SRC_HOST, gen_domainname, NULL},
    {"/proc/sys/kernel/osrelease", GATE_HOST, DET_SRC_HOST, gen_osrelease, NULL},
    {"/proc/sys/kernel/ostype", GATE_HOST, DET_SRC_HOST, gen_ostype, NULL},
    {"/proc/sys/kernel/version", GATE_HOST, DET_SRC_HOST, gen_kversion, NULL},
    {"/proc/sys/vm/max_map_count", GATE_HOST, DET_SRC_HOST, gen_max_map_count,
     NULL},
    {"/sys/devices/system/cpu/online", GATE_HOST, DET_SRC_HOST, gen_cpu_list, NULL},
    {"/sys/devices/system/cpu/possible", GATE_HOST, DET_SRC_HOST, gen_cpu_list, NULL},
    {"/sys/devices/system/cpu/present", GATE_HOST, DET_SRC_HOST, gen_cpu_list, NULL},
    {"/sys/devices/system/node/online", GATE_HOST, DET_SRC_HOST, gen_cpu_list, NULL},
    {"/sys/devices/system/node/possible", GATE_HOST, DET_SRC_HOST, gen_cpu_list, NULL},
    {"/sys/devices/system/node/has_cpu", GATE_HOST, DET_SRC_HOST, gen_cpu_list, NULL},
    {"/sys/devices/system/node/has_memory", GATE_HOST, DET_SRC_HOST, gen_cpu_list, NULL},
    {"/sys/devices/system/node/has_normal_memory", GATE_HOST, DET_SRC_HOST, gen_cpu_list, NULL},
    {"/sys/devices/system/node/node0/cpulist", GATE_HOST, DET_SRC_HOST, gen_cpu_list, NULL},
    {"/sys/devices/system/node/node0/meminfo", GATE_HOST, DET_SRC_HOST, gen_node_meminfo, NULL},
    {"/etc/nsswitch.conf", GATE_HOST, DET_SRC_HOST, gen_nsswitch, NULL},
    {"/etc/hosts", GATE_HOST, DET_SRC_HOST, gen_etc_hosts, NULL},
    {"/proc/sysvipc/shm", GATE_ALWAYS, DET_SRC_IDS, gen_sysvipc_shm, NULL},
    {"/proc/sysvipc/sem", GATE_ALWAYS, DET_SRC_IDS, gen_sysvipc_sem, NULL},
    {"/proc/sysvipc/msg", GATE_ALWAYS, DET_SRC_IDS, gen_sysvipc_msg, NULL},
    {"/proc/keys", GATE_ALWAYS, DET_SRC_IDS, gen_proc_keys, NULL},
    {"/proc/key-users", GATE_ALWAYS, DET_SRC_IDS, gen_key_users, NULL},
};
const size_t proxy_vfs_nr_files =
    sizeof(proxy_vfs_files) / sizeof(proxy_vfs_files[0]);

int proxy_vfs_may_open(const struct proxy_process *reader,
                       const struct proxy_process *of, const struct vfile *v)
{
    if (v->gen == proxy_procfs_gen_slabinfo ||
        v->gen == proxy_procfs_gen_pagetypeinfo ||
        v->gen == proxy_procfs_gen_timer_list)
        return proxy_procfs_root_only(reader, of);
    if (v->gen == proxy_procfs_gen_stack)
        return proxy_procfs_stack_access(reader, of);
    if (v->gen == gen_self_environ || v->gen == gen_self_auxv)
        return proxy_procfs_owner_only(reader, of);
    return 0;
}

bool proxy_vfs_gate_open(const struct proxy_process *p, enum vfs_gate g)
{
    const struct det_config *c = &p->det->cfg;
    switch (g) {
    case GATE_HOST:
        return c->virtualize_host;
    case GATE_RANDOM:
        return c->virtualize_random;
    /* uptime is a clock, and a machine figure: either switch hides it. */
    case GATE_TIME:
        return c->virtualize_time || c->virtualize_host;
    default:
        return true;
    }
}

/* The last component of every virtual file: a cheap first test, so most
 * opens never build a full name. */
bool proxy_vfs_maybe_virtual_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (size_t i = 0; i < proxy_vfs_nr_files; i++) {
        const char *vb = strrchr(proxy_vfs_files[i].path, '/') + 1;
        if (strcmp(base, vb) == 0)
            return true;
    }
    return false;
}

/* ---- the virtual init's /proc/1 ------------------------------------------ */

/*
 * Outside --as-init pid 1 is a virtual init (proxy_virtual_process): no
 * guest process, but /proc/1 is there, as in a container whose init is
 * tini or sh. It holds the entries of proxy_vfs_init_entries, made here the same in
 * every run (none holds a host value). Its directories are the host's
 * /proc/1, /proc/1/task, /proc/1/task/1 and /proc/1/fd, opened by hvrun,
 * so that fstat, fchdir and relative lookups under them work (readlink of
 * such an fd names /proc/1/...); they are never listed or looked into on
 * the host: every name under /proc/1 is decided here
 * (proxy_vfs_init_route) before a host lookup, so none of the host
 * init's files is read. Its links are a real init's: exe reads as
 * /sbin/init and leads to the guest's /sbin/init (ENOENT where there is
 * none: the virtual init runs no file), cwd and root read and lead to "/"
 * (the guest's root is the host's); to a reader that may not ptrace root's
 * init they are EACCES, read or followed, as Linux's proc_fd_access_allowed
 * answers. The fd directory is root's (EACCES to others) and empty; there
 * is no ns directory; anything else under /proc/1 is ENOENT.
 */

/* A container init's figures: a small static binary, asleep. start_code
 * and end_code are 1: the address fields are hidden (put_stat). */
static const struct vm_figures init_vm = {
    .total = 264, .rss = 132, .anon = 20, .file = 112, .data = 36,
    .stack = 33, .exe = 160, .start_code = 1, .end_code = 1,
};

/* The virtual init as reader sees it: root's, its own group and session
 * (sys.c's parent_ids), no terminal, never scheduled. */
static void init_view(const struct proxy_process *reader, struct proc_view *v)
{
    memset(v, 0, sizeof(*v));
    v->tgid = v->pid = PROXY_INIT_PID;
    v->comm = "init";
    v->state = 'S';
    v->pgrp = v->sid = PROXY_INIT_PID;
    v->tty_fg_pgrp = -1;
    v->threads = 1;
    v->rsslim = RLIM_INFINITY;
    v->vm = init_vm;
    v->umask = 022;
    for (int i = 0; i < 4; i++) {
        v->uids[i] = proxy_ns_uid_seen(reader, 0);
        v->gids[i] = proxy_ns_gid_seen(reader, 0);
    }
    v->fd_slots = 64;
    v->pid_levels = 1;
    v->nspids[0] = PROXY_INIT_PID;
    v->thp_enabled = true;
    v->sigq_limit = reader->rlimits[RLIMIT_SIGPENDING].rlim_cur;
    v->caps = v->cap_eff = v->cap_bnd = CAP_FULL_SET;
}

static int gen_init_stat(struct proxy_process *reader, struct vbuf *b)
{
    struct proc_view v;
    init_view(reader, &v);
    put_stat(b, &v);
    return 0;
}

static int gen_init_status(struct proxy_process *reader, struct vbuf *b)
{
    struct proc_view v;
    init_view(reader, &v);
    put_status(b, &v);
    return 0;
}

/* top and ps read a process's sizes here (top showed init's as 0) */
static int gen_init_statm(struct proxy_process *reader, struct vbuf *b)
{
    (void)reader;
    put_statm(b, &init_vm);
    return 0;
}

static int gen_init_comm(struct proxy_process *reader, struct vbuf *b)
{
    (void)reader;
    vb_printf(b, "init\n");
    return 0;
}

static int gen_init_cmdline(struct proxy_process *reader, struct vbuf *b)
{
    (void)reader;
    vb_put(b, "/sbin/init", sizeof("/sbin/init")); /* with its NUL */
    return 0;
}

/* In the order Linux lists them (fs/proc/base.c, tgid_base_stuff);
 * /proc/1/task/1 has them all but task. */
const struct init_entry proxy_vfs_init_entries[] = {
    {"task", DT_DIR, NULL, NULL},
    {"fd", DT_DIR, NULL, NULL},
    {"status", DT_REG, gen_init_status, NULL},
    {"comm", DT_REG, gen_init_comm, NULL},
    {"cmdline", DT_REG, gen_init_cmdline, NULL},
    {"stat", DT_REG, gen_init_stat, NULL},
    {"statm", DT_REG, gen_init_statm, NULL},
    {"cwd", DT_LNK, NULL, "/"},
    {"root", DT_LNK, NULL, "/"},
    {"exe", DT_LNK, NULL, "/sbin/init"},
};

#define NR_INIT_ENTRIES (sizeof(proxy_vfs_init_entries) / sizeof(proxy_vfs_init_entries[0]))
const size_t proxy_vfs_nr_init_entries = NR_INIT_ENTRIES;

/* s past the component c when s starts with it, else NULL. */
static const char *past_component(const char *s, const char *c)
{
    size_t n = strlen(c);
    return strncmp(s, c, n) == 0 && (s[n] == '/' || s[n] == '\0') ? s + n
                                                                   : NULL;
}

bool proxy_vfs_ends_dir(const char *s)
{
    return s[0] == '\0' || strcmp(s, "/") == 0;
}

/* Names only: whether the caller sees the virtual init is init_shown's. */
void proxy_vfs_parse_init_name(const char *name, struct init_name *in)
{
    memset(in, 0, sizeof(*in));
    const char *s = past_component(name, "/proc/1");
    if (!s) {
        in->place = INIT_OUTSIDE;
        return;
    }
    in->place = INIT_PID_DIR;
    const char *t = *s ? past_component(s + 1, "task") : NULL;
    if (t && proxy_vfs_ends_dir(t)) {
        in->place = INIT_TASK_DIR;
        return;
    }
    if (t) {
        s = past_component(t + 1, "1");
        if (!s) {
            in->place = INIT_MISSING;
            return;
        }
        in->in_task = true;
    }
    if (proxy_vfs_ends_dir(s))
        return;
    in->place = INIT_MISSING;
    /* task is the first entry, and task/1 has none */
    for (size_t i = in->in_task ? 1 : 0; i < NR_INIT_ENTRIES; i++) {
        const char *r = past_component(s + 1, proxy_vfs_init_entries[i].name);
        if (r) {
            in->place = INIT_ENTRY;
            in->entry = &proxy_vfs_init_entries[i];
            in->rest = r;
            return;
        }
    }
}

/* Where hvrun itself is the host's pid 1 (a container's entry point),
 * /proc/1 is hvrun's own, which the guest reads as its /proc/self
 * (self_pid_component): there is no /proc/1 of the virtual init then. */
bool proxy_vfs_host_pid1_is_hvrun(void)
{
    return vmm_host_self_pid() == PROXY_INIT_PID;
}

static bool init_shown(const struct proxy_process *p)
{
    return p->world && !proxy_vfs_host_pid1_is_hvrun() &&
           proxy_virtual_process(p, PROXY_INIT_PID, NULL, NULL);
}

bool proxy_vfs_init_shown(const struct proxy_process *p)
{
    return init_shown(p);
}

/* The virtual init's fd directory is root's, mode 0500 (DAC with the
 * filesystem ids; capabilities follow the euid here). */
bool proxy_vfs_init_fd_dir_readable(const struct proxy_process *p)
{
    return p->cred.euid == 0 && p->cred.fsuid == 0;
}

/* Whether p may read or follow the virtual init's links: Linux's
 * ptrace_may_access(PTRACE_MODE_READ_FSCREDS) of root's init, with
 * capabilities following the euid: root, or filesystem ids that are all
 * of init's (uid and gid 0). */
static bool init_links_allowed(const struct proxy_process *p)
{
    return p->cred.euid == 0 || (p->cred.fsuid == 0 && p->cred.fsgid == 0);
}

/* The canonical name of (dirfd, path) under the virtual init's /proc/1. */
bool proxy_vfs_init_name_of(const struct proxy_process *p, int dirfd,
                            const char *path, char *name, size_t cap,
                            struct init_name *in)
{
    if (!init_shown(p) || !path[0] ||
        (path[0] == '/' && !strstr(path, "proc")))
        return false;
    if (!proxy_vfs_full_name(p, dirfd, path, name, cap))
        return false;
    proxy_vfs_parse_init_name(name, in);
    return in->place != INIT_OUTSIDE;
}

/* route, with prefix and s in out. */
static int routed_to(char *out, size_t cap, int route, const char *prefix,
                     const char *s)
{
    int n = snprintf(out, cap, "%s%s", prefix, s);
    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : route;
}

/* An entry of /proc/1 (in->place == INIT_ENTRY): see proxy_vfs_init_route. */
static int route_init_entry(const struct proxy_process *p,
                            const struct init_name *in, const char *name,
                            bool follow_last, char *out, size_t cap)
{
    const struct init_entry *e = in->entry;
    switch (e->type) {
    case DT_REG:
        return in->rest[0] ? -ENOTDIR
                           : routed_to(out, cap, PROXY_INIT_ROUTE_HOST, "",
                                       name);
    case DT_LNK:
        if (!in->rest[0] && !follow_last)
            return routed_to(out, cap, PROXY_INIT_ROUTE_HOST, "", name);
        if (!init_links_allowed(p))
            return -EACCES;
        /* where the link leads, then what follows it ("/" and "/x": "/x") */
        if (!in->rest[0])
            return routed_to(out, cap, PROXY_INIT_ROUTE_AGAIN, e->link, "");
        return routed_to(out, cap, PROXY_INIT_ROUTE_AGAIN,
                         strcmp(e->link, "/") == 0 ? "" : e->link, in->rest);
    default: /* fd: its entries would be the open fds, and it has none */
        if (proxy_vfs_ends_dir(in->rest))
            return routed_to(out, cap, PROXY_INIT_ROUTE_HOST, "", name);
        return proxy_vfs_init_fd_dir_readable(p) ? -ENOENT : -EACCES;
    }
}

int proxy_vfs_init_route(struct proxy_process *p, int dirfd, const char *path,
                         bool follow_last, char *out, size_t cap)
{
    char name[PROXY_PATH_MAX];
    struct init_name in;
    if (!proxy_vfs_init_name_of(p, dirfd, path, name, sizeof(name), &in))
        return PROXY_INIT_ROUTE_NONE;
    switch (in.place) {
    case INIT_PID_DIR:
    case INIT_TASK_DIR:
        return routed_to(out, cap, PROXY_INIT_ROUTE_HOST, "", name);
    case INIT_ENTRY:
        return route_init_entry(p, &in, name, follow_last, out, cap);
    default:
        return -ENOENT;
    }
}

bool proxy_vfs_init_host_entry(const struct proxy_process *p,
                               const char *host_name)
{
    struct init_name in;
    proxy_vfs_parse_init_name(host_name, &in);
    return init_shown(p) &&
           (in.place == INIT_PID_DIR || in.place == INIT_TASK_DIR ||
            (in.place == INIT_ENTRY && proxy_vfs_ends_dir(in.rest)));
}

bool proxy_vfs_init_stat_fix(const struct proxy_process *p, int host_fd,
                             uint64_t *nlink, uint32_t *uid, uint32_t *gid)
{
    char link[64], name[PROXY_PATH_MAX];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", host_fd);
    ssize_t n = init_shown(p) ? readlink(link, name, sizeof(name) - 1) : -1;
    if (n <= 0)
        return false;
    name[n] = '\0';
    if (!proxy_vfs_init_host_entry(p, name))
        return false;
    struct init_name in;
    proxy_vfs_parse_init_name(name, &in);
    if (in.place == INIT_TASK_DIR)
        *nlink = 3; /* ".", ".." and its one thread (the host init's has
                     * as many as it runs) */
    *uid = *gid = 0;
    return true;
}

long proxy_vfs_init_link(struct proxy_process *p, int dirfd, const char *path,
                         char *out, size_t cap)
{
    char name[PROXY_PATH_MAX];
    struct init_name in;
    /* the empty path: an O_PATH fd of the link itself (readlinkat(fd, "")),
     * whose host fd is the host init's link */
    if (!proxy_vfs_init_name_of(p, dirfd, path[0] ? path : ".", name,
                                sizeof(name), &in) ||
        in.place != INIT_ENTRY || in.entry->type != DT_LNK || in.rest[0])
        return 0;
    if (!init_links_allowed(p))
        return -EACCES;
    size_t n = strlen(in.entry->link);
    if (n > cap)
        n = cap;
    memcpy(out, in.entry->link, n);
    return (long)n;
}
