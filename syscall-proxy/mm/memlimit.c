/*
 * memlimit.c - the guest machine's memory (--memory, 8 GiB by default) is
 * also the limit of what the run's guests may use, so a guest that goes
 * past what sysinfo and /proc/meminfo tell it gets what Linux would give
 * it, not the host's memory.
 *
 * Two rules, documented in docs/DETERMINISM.md:
 *
 *  1. Commit accounting, deterministic: the memory Linux charges
 *     (VM_ACCOUNT: private writable mappings, brk, stacks, private file
 *     mappings made writable, shared anonymous memory; not MAP_NORESERVE,
 *     not read-only or PROT_NONE reservations until made writable) is
 *     counted per address space (vmm_as account_bytes). A call that would
 *     take the run's total past --memory fails with ENOMEM: mmap, brk (the
 *     break stays), mremap growing, mprotect adding write. A single request
 *     larger than the machine is what Linux's default heuristic refuses;
 *     the total is stricter than that heuristic (closer to
 *     overcommit_memory=2 with CommitLimit = --memory), and it stands for
 *     "resident memory would exceed the machine": charged memory can all
 *     be touched. fork does not check (Linux's heuristic practically never
 *     refuses one; the child's copy counts from then on).
 *  2. The OOM backstop, for what is not charged (MAP_NORESERVE memory,
 *     glibc's per-thread arenas): after events, at most every
 *     OOM_CHECK_NS of host time (or a hundred times what the last check
 *     took, with many processes: it asks the host about each), hvrun's
 *     resident anonymous memory (/proc/self/statm) above what it was at
 *     the start is compared with --memory plus a margin for hvrun's own
 *     bookkeeping; past it, the guest process with the most resident
 *     memory is killed with SIGKILL, as Linux's OOM killer would. When
 *     that happens depends on host timing: such a run is not
 *     deterministic (it is out of memory). A guest that touches memory
 *     without any exit is seen at its next one.
 */
#include "proxy.h"
#include "kernel.h"
#include "mm.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "det.h"

#define OOM_CHECK_NS 10000000LL /* 10 ms */
/* A check costs a host call per guest process (an fstat of its memfd,
 * ~2 us here): with 1000 of them every 10 ms it was a fifth of hvrun's
 * time. The next check waits this many times what the last one took. */
#define OOM_CHECK_COST_FACTOR 100
#define OOM_MARGIN_BYTES (64ULL << 20)

/* Passes over the run's processes that count each address space once
 * (vmm_aspace.counted_pass); a new pass marks no space yet. One counter for
 * every run of this hvrun: a pass number is never reused. */
static uint64_t last_count_pass;

/* Whether as is counted in this pass already; marks it counted. */
static bool counted_before(struct vmm_aspace *as, uint64_t pass)
{
    if (as->counted_pass == pass)
        return true;
    as->counted_pass = pass;
    return false;
}

uint64_t proxy_mem_committed(const struct proxy_world *w)
{
    uint64_t pass = ++last_count_pass, total = 0;
    for (int i = 0; i < w->nr_procs; i++)
        if (w->procs[i]->as && !counted_before(w->procs[i]->as, pass))
            total += w->procs[i]->as->account_bytes;
    return total;
}

int proxy_mem_charge(struct proxy_process *p, uint64_t bytes)
{
    uint64_t limit = p->det->cfg.mem_total_bytes;
    if (bytes == 0)
        return 0;
    if (bytes > limit)
        return -ENOMEM;
    uint64_t committed = p->world ? proxy_mem_committed(p->world)
                                  : p->as->account_bytes;
    return committed > limit - bytes ? -ENOMEM : 0;
}

/* hvrun's resident anonymous memory: statm's resident minus shared. The
 * file is opened once, at the first call (proxy_world_init). */
static int64_t host_anon_bytes(void)
{
    static int fd = -2;
    if (fd == -2)
        fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    char buf[128];
    ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;
    if (n <= 0)
        return -1;
    buf[n] = 0;
    unsigned long long size, resident, shared;
    if (sscanf(buf, "%llu %llu %llu", &size, &resident, &shared) != 3)
        return -1;
    return (int64_t)((resident - shared) * (uint64_t)sysconf(_SC_PAGESIZE));
}

static int64_t host_clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t host_now_ns(void)
{
    return host_clock_ns(CLOCK_MONOTONIC_COARSE);
}

/* The guest memory hvrun holds in memfds (the ptrace backend), each
 * address space once: not anonymous memory of hvrun's. Pushes the next
 * check back as far as this one cost. */
static uint64_t memfd_bytes(struct proxy_world *w)
{
    int64_t started = host_clock_ns(CLOCK_MONOTONIC);
    uint64_t pass = ++last_count_pass, bytes = 0;
    for (int i = 0; i < w->nr_procs; i++)
        if (w->procs[i]->as && !w->procs[i]->exited &&
            !counted_before(w->procs[i]->as, pass))
            bytes += vmm_phys_memfd_bytes(w->procs[i]->as->pm);
    int64_t spent = host_clock_ns(CLOCK_MONOTONIC) - started;
    if (spent * OOM_CHECK_COST_FACTOR > OOM_CHECK_NS)
        w->oom_next_check_ns = host_now_ns() + spent * OOM_CHECK_COST_FACTOR;
    return bytes;
}

/* The live guest with the most resident memory not already being killed. */
static struct proxy_process *oom_victim(struct proxy_world *w,
                                        uint64_t *resident_out)
{
    struct proxy_process *victim = NULL;
    uint64_t most = 0;
    for (int i = 0; i < w->nr_procs; i++) {
        struct proxy_process *q = w->procs[i];
        if (!q->as || q->exited || q->zombie ||
            (q->sig.pending_mask & (1ULL << (SIGKILL - 1))))
            continue;
        uint64_t r = vmm_phys_resident_bytes(q->as->pm);
        if (!victim || r > most) {
            victim = q;
            most = r;
        }
    }
    *resident_out = most;
    return victim;
}

void proxy_mem_check_oom(struct proxy_world *w)
{
    int64_t now = host_now_ns();
    if (w->oom_baseline_set && now < w->oom_next_check_ns)
        return;
    w->oom_next_check_ns = now + OOM_CHECK_NS;
    int64_t anon = host_anon_bytes();
    if (anon < 0)
        return;
    if (!w->oom_baseline_set || anon < w->oom_baseline) {
        w->oom_baseline_set = true;
        w->oom_baseline = anon;
        return;
    }
    uint64_t limit = w->procs[0]->det->cfg.mem_total_bytes;
    uint64_t used = (uint64_t)(anon - w->oom_baseline);
    used += memfd_bytes(w);
    if (used <= limit + limit / 16 + OOM_MARGIN_BYTES)
        return;
    uint64_t resident;
    struct proxy_process *victim = oom_victim(w, &resident);
    if (!victim)
        return;
    proxy_log(victim, 1,
              "out of memory (guest memory %llu MiB, --memory %llu MiB): "
              "killed process %d (%s), %llu MiB resident",
              (unsigned long long)(used >> 20),
              (unsigned long long)(limit >> 20), victim->pid, victim->comm,
              (unsigned long long)(resident >> 20));
    siginfo_t info = {.si_signo = SIGKILL, .si_code = SI_KERNEL};
    proxy_signal_raise(victim, SIGKILL, &info);
}
