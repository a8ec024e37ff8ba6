/*
 * procself.c - the rarer /proc/PID files procfs.c's table serves from the
 * process model: sched, stack, numa_maps, timers, cpuset, arch_status,
 * projid_map, ksm_stat, ksm_merging_pages and timens_offsets.
 *
 * The host's are hvrun's own (procguard.c refuses them: EACCES, where
 * Linux serves them), so each is made here in Linux 6.1's layout, from
 * what the run keeps of the process (its name, pid, threads, CPU time,
 * nice value, mappings, POSIX timers, user namespace) and, where the run
 * keeps nothing (the scheduler's load averages, a kernel stack's frames),
 * a fixed value that docs/DETERMINISM.md names.
 */
#include "proxy.h"
#include "kernel.h"
#include "vfs.h"
#include "det.h"

#include <errno.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* ---- sched --------------------------------------------------------------- */

/* kernel/sched/core.c's sched_prio_to_weight, nice -20 to 19. */
static const unsigned sched_weight[40] = {
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
    9548,  7620,  6100,  4904,  3906,  3121,  2501,  1991,  1586,  1277,
    1024,  820,   655,   526,   423,   335,   272,   215,   172,   137,
    110,   87,    70,    56,    45,    36,    29,    23,    18,    15,
};

static void sched_int(struct vbuf *b, const char *name, long long v)
{
    vb_printf(b, "%-45s:%21lld\n", name, v);
}

/* A time as the scheduler prints one: ms, then the ns within it. */
static void sched_ns(struct vbuf *b, const char *name, long long ns)
{
    vb_printf(b, "%-45s:%14lld.%06lld\n", name, ns / 1000000, ns % 1000000);
}

static int live_threads_of(const struct proxy_process *p)
{
    int n = 0;
    for (int i = 0; i < p->nr_threads; i++)
        n += p->threads[i].state != PROXY_THREAD_EXITED;
    return n > 0 ? n : 1;
}

/* Linux 6.1's proc_sched_show_task without schedstats (off by default):
 * the run time is the process's CPU clock, it never waited for the one
 * CPU (no switches, as status says), its weight and prio its nice value's
 * and policy; the load averages are 0 (the run keeps none). */
int proxy_procfs_gen_sched(struct proxy_process *p, struct vbuf *b)
{
    struct timespec ts = {0};
    det_clock_gettime(p->det, CLOCK_BOOTTIME, &ts);
    long long now = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    long long run = (long long)proxy_cpu_clock_ns(p, CLOCK_PROCESS_CPUTIME_ID);
    int nice = p->prctl.nice;
    if (nice < -20 || nice > 19)
        nice = 0;
    unsigned weight = sched_weight[nice + 20];
    int policy = p->prctl.sched_policy;
    int prio = policy == SCHED_FIFO || policy == SCHED_RR
                   ? 99 - p->prctl.sched_priority
                   : 120 + nice;
    vb_printf(b, "%s (%d, #threads: %d)\n", p->comm, p->pid,
              live_threads_of(p));
    vb_printf(b, "-----------------------------------------------------------"
                 "--------\n");
    sched_ns(b, "se.exec_start", now);
    sched_ns(b, "se.vruntime", run * 1024 / weight);
    sched_ns(b, "se.sum_exec_runtime", run);
    sched_int(b, "se.nr_migrations", 0);
    sched_int(b, "nr_switches", 0);
    sched_int(b, "nr_voluntary_switches", 0);
    sched_int(b, "nr_involuntary_switches", 0);
    sched_int(b, "se.load.weight", (long long)weight << 10);
    static const char *const averages[] = {
        "se.avg.load_sum",      "se.avg.runnable_sum", "se.avg.util_sum",
        "se.avg.load_avg",      "se.avg.runnable_avg", "se.avg.util_avg",
        "se.avg.last_update_time", "se.avg.util_est.ewma",
        "se.avg.util_est.enqueued"};
    for (size_t i = 0; i < sizeof(averages) / sizeof(averages[0]); i++)
        sched_int(b, averages[i], 0);
    sched_int(b, "policy", policy);
    sched_int(b, "prio", prio);
    sched_int(b, "clock-delta", 0);
    sched_int(b, "mm->numa_scan_seq", 0);
    sched_int(b, "numa_pages_migrated", 0);
    sched_int(b, "numa_preferred_nid", -1);
    sched_int(b, "total_numa_faults", 0);
    vb_printf(b, "current_node=0, numa_group_id=0\n"
                 "numa_faults node=0 task_private=0 task_shared=0 "
                 "group_private=0 group_shared=0\n");
    return 0;
}

/* ---- stack --------------------------------------------------------------- */

/* ---- access ---------------------------------------------------------------- */

int proxy_procfs_root_only(const struct proxy_process *reader,
                           const struct proxy_process *of)
{
    (void)of;
    return reader->cred.fsuid == 0 ||
                   proxy_ns_capable_cap(reader, CAP_DAC_OVERRIDE)
               ? 0
               : -EACCES;
}

/* A 0400 file of of's /proc/PID (environ, auxv): its owner's, root's
 * once of is not dumpable (task_dump_owner), so another user, or of
 * itself after a setuid, reads it only with CAP_DAC_OVERRIDE. */
int proxy_procfs_owner_only(const struct proxy_process *reader,
                            const struct proxy_process *of)
{
    uint32_t owner = of->prctl.dumpable == 1 ? of->cred.euid : 0;
    return reader->cred.fsuid == owner ||
                   proxy_ns_capable_cap(reader, CAP_DAC_OVERRIDE)
               ? 0
               : -EACCES;
}

/* proc_pid_stack: CAP_SYS_ADMIN (Linux refuses at the read, here at the
 * open) and ptrace access to the process (lock_trace). */
int proxy_procfs_stack_access(const struct proxy_process *reader,
                              const struct proxy_process *of)
{
    if (!proxy_ns_capable_cap(reader, CAP_SYS_ADMIN))
        return -EACCES;
    return proxy_ptrace_may_access(reader, of) ? 0 : -EACCES;
}

/* Linux 6.1's proc_pid_stack (proxy_procfs_stack_access says who reads
 * it). The run has no kernel stack to unwind: the frames are a fixed
 * trace of a task in a system call (a reader of its own file sees its
 * read's), with the addresses hidden as Linux prints them ("[<0>]"). */
int proxy_procfs_gen_stack(struct proxy_process *p, struct vbuf *b)
{
    (void)p;
    vb_printf(b, "[<0>] do_syscall_64+0x55/0xb0\n"
                 "[<0>] entry_SYSCALL_64_after_hwframe+0x64/0xce\n");
    return 0;
}

/* ---- numa_maps ----------------------------------------------------------- */

/* Linux 6.1's show_numa_map for each mapping: the default policy, what
 * it maps, and its resident pages, all on node 0 (the model's one node):
 * anonymous ones anon and dirty, file ones mapped. */
int proxy_procfs_gen_numa_maps(struct proxy_process *p, struct vbuf *b)
{
    struct proxy_mapping m;
    for (size_t i = 0, next; (next = proxy_procfs_mapping(p, i, &m)); i = next) {
        vb_printf(b, "%08llx default", (unsigned long long)m.start);
        if (m.is_file)
            vb_printf(b, " file=%s", m.name);
        else if (strcmp(m.name, "[heap]") == 0)
            vb_printf(b, " heap");
        else if (strcmp(m.name, "[stack]") == 0)
            vb_printf(b, " stack");
        unsigned long long pages = m.backed / 4096;
        bool special = strcmp(m.name, "[vvar]") == 0;
        if (pages && !special) {
            if (m.is_file || strcmp(m.name, "[vdso]") == 0)
                vb_printf(b, " mapped=%llu", pages);
            else
                vb_printf(b, " anon=%llu dirty=%llu", pages, pages);
            vb_printf(b, " N0=%llu kernelpagesize_kB=4", pages);
        }
        vb_printf(b, "\n");
    }
    return 0;
}

/* ---- timers -------------------------------------------------------------- */

/* Linux 6.1's show_timer for each timer_create timer, the newest first
 * (the list it walks is pushed at its head); sigev_value as %px prints a
 * pointer. */
int proxy_procfs_gen_timers(struct proxy_process *p, struct vbuf *b)
{
    const struct proxy_timers *t = &p->timers;
    int last = -1;
    for (;;) {
        const struct proxy_timer *best = NULL;
        for (int i = 0; i < t->posix_top && i < PROXY_MAX_POSIX_TIMERS; i++) {
            const struct proxy_timer *c = &t->posix[i];
            if (c->used && (last < 0 || c->id < last) &&
                (!best || c->id > best->id))
                best = c;
        }
        if (!best)
            return 0;
        last = best->id;
        vb_printf(b,
                  "ID: %d\n"
                  "signal: %d/%016llx\n"
                  "notify: %s/pid.%d\n"
                  "ClockID: %d\n",
                  best->id, best->signo, (unsigned long long)best->sigval,
                  best->notify == SIGEV_NONE ? "none" : "signal", p->pid,
                  best->clockid);
        if (best->id == 0)
            return 0;
    }
}

/* ---- small fixed files ----------------------------------------------------- */

/* The cgroup v2 root, as /proc/PID/cgroup says ("0::/"). */
int proxy_procfs_gen_cpuset(struct proxy_process *p, struct vbuf *b)
{
    (void)p;
    vb_printf(b, "/\n");
    return 0;
}

/* x86's arch_status: on a CPU with AVX-512 (the model's CPUID says), how
 * long ago the task last used it; -1, never, as the run keeps no such
 * time (Linux's for a task that has not). Empty without AVX-512. */
int proxy_procfs_gen_arch_status(struct proxy_process *p, struct vbuf *b)
{
    if (p->cpu.leaf7_ebx & (1u << 16)) /* avx512f */
        vb_printf(b, "AVX512_elapsed_ms:\t-1\n");
    return 0;
}

/* The initial user namespace's project id map is the identity; one a
 * guest made has none (projid_map is not written in the run). */
int proxy_procfs_gen_projid_map(struct proxy_process *p, struct vbuf *b)
{
    char uid_map[8192];
    static const char identity[] = "         0          0 4294967295\n";
    proxy_ns_file_content(p, p, PROXY_NSFILE_UID_MAP, uid_map,
                          sizeof(uid_map));
    if (strcmp(uid_map, identity) == 0)
        vb_printf(b, "%s", identity);
    return 0;
}

/* KSM never merges the run's pages (madvise MADV_MERGEABLE is taken and
 * does nothing): Linux 6.1's ksm_stat and ksm_merging_pages say 0. */
int proxy_procfs_gen_ksm_stat(struct proxy_process *p, struct vbuf *b)
{
    (void)p;
    vb_printf(b, "ksm_rmap_items 0\n");
    return 0;
}

/* The run models no time namespace offsets: Linux 6.1's layout of a
 * process in the initial time namespace (read-only here: writing them is
 * EACCES, as for a namespace that already has processes). */
int proxy_procfs_gen_timens_offsets(struct proxy_process *p, struct vbuf *b)
{
    (void)p;
    vb_printf(b, "%-10s %10lld %9ld\n%-10s %10lld %9ld\n", "monotonic", 0LL,
              0L, "boottime", 0LL, 0L);
    return 0;
}

int proxy_procfs_gen_ksm_merging_pages(struct proxy_process *p,
                                       struct vbuf *b)
{
    (void)p;
    vb_printf(b, "0\n");
    return 0;
}
