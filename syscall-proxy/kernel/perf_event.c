/*
 * perf_event.c - perf_event_open(2) for software events, counted in the
 * run's logical terms so that every run reads the same values.
 *
 * The guest CPU has no PMU (neither has this host): PERF_TYPE_HARDWARE,
 * HW_CACHE and RAW are ENOENT, as Linux answers there. Tracepoints,
 * breakpoints and the dynamic PMUs (kprobe, uprobe, msr) are ENOENT too:
 * the guest's kernel has none of them (they would observe the host's).
 * CPU-wide events (pid -1) need root of the run, and everyone else also
 * exclude_kernel, as under Linux's default perf_event_paranoid 2.
 * PERF_TYPE_SOFTWARE events open and count:
 *
 *   task-clock, cpu-clock   the counted threads' logical CPU time: each of
 *                           their events (syscall, trapped TSC read) is
 *                           DET_EVENT_NS, as the logical clock charges it
 *   context-switches        the scheduler's switches of those threads off
 *                           the vCPU (to another thread, or into a wait);
 *                           none with exclude_kernel (Linux counts them
 *                           in the kernel's scheduler)
 *   page-faults, -min       the page faults they take (hvrun backs memory
 *                           when it is mapped, so an ordinary program
 *                           takes none; a lazy mapping's first touch, a
 *                           file grown under a mapping, a SIGSEGV do)
 *   the others              0 (one CPU: no migrations; no alignment or
 *                           emulation faults; dummy, bpf-output and
 *                           cgroup-switches count nothing)
 *
 * Time enabled and time running are the same logical CPU time (a software
 * event is never multiplexed). Nothing runs in the background: the world
 * loop pushes each event, switch and fault to the counters that count its
 * thread (proxy_perf_on_*), so a counter keeps its value after its thread
 * exits (perf stat reads its child's counters after the wait). inherit
 * adds the threads and processes the counted ones create later; pid -1
 * (a CPU-wide event, root only) counts every thread of the run.
 *
 * The fd's host object is the read end of a pipe whose write end is
 * closed: poll, select and epoll see POLLHUP and nothing else, which is
 * what Linux's perf_poll answers for an event without a ring buffer;
 * reads and writes never reach it (write is EINVAL, lseek ESPIPE, F_GETFL
 * says O_RDWR, as Linux). There is no ring buffer: mmap of the fd is
 * ENODEV (the host's answer for a pipe), so a sampling event opens but
 * delivers no samples; overflow signals (REFRESH, sigtrap) are not made.
 */
#include "proxy.h"
#include "fdtable.h"
#include "kernel.h"
#include "internal.h"

#include <asm/perf_regs.h>
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "det.h"

/* Linux's page: an attr larger than this is E2BIG. */
#define ATTR_SIZE_MAX 4096
/* Linux 6.x's struct (PERF_ATTR_SIZE_VER8, config3 last): what E2BIG
 * writes back, and where the bytes that must be zero start. config3 is
 * only read by hardware PMUs, so past our header's struct it is skipped. */
#define ATTR_SIZE_KERNEL 136
_Static_assert(sizeof(struct perf_event_attr) <= ATTR_SIZE_KERNEL,
               "the header's attr is no larger than Linux's");
/* kernel.perf_event_max_sample_rate's default. */
#define MAX_SAMPLE_RATE 100000
#define PERF_FLAG_ALL (PERF_FLAG_FD_NO_GROUP | PERF_FLAG_FD_OUTPUT | \
                       PERF_FLAG_PID_CGROUP | PERF_FLAG_FD_CLOEXEC)
/* The guest has one CPU (getcpu answers CPU 0). */
#define GUEST_NR_CPUS 1

struct proxy_perf {
    int refs;
    struct proxy_world *world;
    uint64_t config;      /* PERF_COUNT_SW_* */
    uint64_t read_format;
    uint64_t id;          /* PERF_EVENT_IOC_ID, PERF_FORMAT_ID */
    uint64_t sample_period;
    bool sampling;
    bool enabled, enable_on_exec, remove_on_exec, inherit;
    bool all_threads;     /* pid -1: a CPU-wide event */
    bool exclude_kernel;
    uint64_t count, time_ns;
    int *tids;            /* the threads it counts (run ids) */
    int nr_tids, cap_tids;
    struct proxy_perf *leader;    /* NULL: it leads its own group */
    struct proxy_perf **siblings; /* a leader's members, open order */
    int nr_siblings, cap_siblings;
};

/* ---- lists ---------------------------------------------------------------- */

static int grow(void **v, int *cap, int need, size_t each)
{
    if (need <= *cap)
        return 0;
    int n = *cap ? *cap * 2 : 4;
    while (n < need)
        n *= 2;
    void *q = realloc(*v, (size_t)n * each);
    if (!q)
        return -ENOMEM;
    *v = q;
    *cap = n;
    return 0;
}

static void remove_ptr(struct proxy_perf **v, int *n, const struct proxy_perf *e)
{
    for (int i = 0; i < *n; i++) {
        if (v[i] != e)
            continue;
        memmove(&v[i], &v[i + 1], (size_t)(*n - i - 1) * sizeof(*v));
        (*n)--;
        return;
    }
}

static int add_tid(struct proxy_perf *e, int tid)
{
    if (grow((void **)&e->tids, &e->cap_tids, e->nr_tids + 1,
             sizeof(*e->tids)) < 0)
        return -ENOMEM;
    e->tids[e->nr_tids++] = tid;
    return 0;
}

static bool counts_tid(const struct proxy_perf *e, int tid)
{
    if (e->all_threads)
        return true;
    for (int i = 0; i < e->nr_tids; i++)
        if (e->tids[i] == tid)
            return true;
    return false;
}

void proxy_perf_world_gone(struct proxy_world *w)
{
    for (int i = 0; i < w->nr_perfs; i++)
        w->perfs[i]->world = NULL;
    free(w->perfs);
    w->perfs = NULL;
    w->nr_perfs = w->cap_perfs = 0;
}

void proxy_perf_put(struct proxy_perf *e)
{
    if (!e || --e->refs > 0)
        return;
    if (e->world)
        remove_ptr(e->world->perfs, &e->world->nr_perfs, e);
    if (e->leader)
        remove_ptr(e->leader->siblings, &e->leader->nr_siblings, e);
    /* Linux makes a closed leader's members singletons. */
    for (int i = 0; i < e->nr_siblings; i++)
        e->siblings[i]->leader = NULL;
    free(e->siblings);
    free(e->tids);
    free(e);
}

void proxy_perf_share(struct proxy_fd *to, const struct proxy_fd *from)
{
    if (!from->perf || to->perf == from->perf)
        return;
    proxy_perf_put(to->perf);
    from->perf->refs++;
    to->perf = from->perf;
}

/* ---- counting --------------------------------------------------------------- */

/* A member counts while it and its leader are enabled (a group is
 * scheduled as one). */
static bool counting(const struct proxy_perf *e)
{
    return e->enabled && (!e->leader || e->leader->enabled);
}

static bool is_clock(const struct proxy_perf *e)
{
    return e->config == PERF_COUNT_SW_TASK_CLOCK ||
           e->config == PERF_COUNT_SW_CPU_CLOCK;
}

static bool is_fault(const struct proxy_perf *e)
{
    return e->config == PERF_COUNT_SW_PAGE_FAULTS ||
           e->config == PERF_COUNT_SW_PAGE_FAULTS_MIN;
}

void proxy_perf_on_event(struct proxy_world *w, int tid)
{
    for (int i = 0; i < w->nr_perfs; i++) {
        struct proxy_perf *e = w->perfs[i];
        if (!counting(e) || !counts_tid(e, tid))
            continue;
        e->time_ns += DET_EVENT_NS;
        if (is_clock(e))
            e->count += DET_EVENT_NS;
    }
}

void proxy_perf_on_switch(struct proxy_world *w, int tid)
{
    for (int i = 0; i < w->nr_perfs; i++) {
        struct proxy_perf *e = w->perfs[i];
        if (e->config == PERF_COUNT_SW_CONTEXT_SWITCHES &&
            !e->exclude_kernel && counting(e) && counts_tid(e, tid))
            e->count++;
    }
}

void proxy_perf_on_fault(struct proxy_world *w, int tid)
{
    for (int i = 0; w && i < w->nr_perfs; i++) {
        struct proxy_perf *e = w->perfs[i];
        if (is_fault(e) && counting(e) && counts_tid(e, tid))
            e->count++;
    }
}

/* A thread or process created by parent_tid: counted by the inheriting
 * events that count its creator. */
void proxy_perf_on_clone(struct proxy_world *w, int parent_tid, int child_tid)
{
    for (int i = 0; w && i < w->nr_perfs; i++) {
        struct proxy_perf *e = w->perfs[i];
        if (e->inherit && !e->all_threads && counts_tid(e, parent_tid))
            (void)add_tid(e, child_tid);
    }
}

/* execve by tid: enable_on_exec events start, remove_on_exec ones stop
 * counting it. */
void proxy_perf_on_exec(struct proxy_world *w, int tid)
{
    for (int i = 0; w && i < w->nr_perfs; i++) {
        struct proxy_perf *e = w->perfs[i];
        if (e->all_threads || !counts_tid(e, tid))
            continue;
        if (e->enable_on_exec)
            e->enabled = true;
        if (e->remove_on_exec)
            e->enabled = false;
    }
}

/* ---- read ------------------------------------------------------------------ */

#define READ_WORDS_MAX 4096

struct read_out {
    uint64_t v[READ_WORDS_MAX];
    int n;
};

static void put_word(struct read_out *o, uint64_t w)
{
    if (o->n < READ_WORDS_MAX)
        o->v[o->n++] = w;
}

static void put_value(struct read_out *o, const struct proxy_perf *e,
                      uint64_t rf)
{
    put_word(o, e->count);
    if (rf & PERF_FORMAT_ID)
        put_word(o, e->id);
    if (rf & PERF_FORMAT_LOST)
        put_word(o, 0);
}

static void put_times(struct read_out *o, const struct proxy_perf *e,
                      uint64_t rf)
{
    if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
        put_word(o, e->time_ns);
    if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
        put_word(o, e->time_ns);
}

/* Linux's layouts: { value, enabled, running, id, lost }, or with GROUP
 * { nr, enabled, running, { value, id, lost } per member, leader first }. */
static void build_read(const struct proxy_perf *e, struct read_out *o)
{
    uint64_t rf = e->read_format;
    o->n = 0;
    if (!(rf & PERF_FORMAT_GROUP)) {
        put_word(o, e->count);
        put_times(o, e, rf);
        if (rf & PERF_FORMAT_ID)
            put_word(o, e->id);
        if (rf & PERF_FORMAT_LOST)
            put_word(o, 0);
        return;
    }
    const struct proxy_perf *l = e->leader ? e->leader : e;
    put_word(o, (uint64_t)l->nr_siblings + 1);
    put_times(o, l, rf);
    put_value(o, l, rf);
    for (int i = 0; i < l->nr_siblings; i++)
        put_value(o, l->siblings[i], rf);
}

static long perf_read(struct proxy_perf *e, const struct iovec *iov, int n)
{
    struct read_out *o = malloc(sizeof(*o));
    if (!o)
        return -ENOMEM;
    build_read(e, o);
    size_t want = (size_t)o->n * sizeof(uint64_t), room = 0;
    for (int i = 0; i < n; i++)
        room += iov[i].iov_len;
    if (room < want) {
        free(o);
        return -ENOSPC;
    }
    size_t done = 0;
    for (int i = 0; i < n && done < want; i++) {
        size_t k = iov[i].iov_len < want - done ? iov[i].iov_len : want - done;
        memcpy(iov[i].iov_base, (const char *)o->v + done, k);
        done += k;
    }
    free(o);
    return (long)done;
}

long proxy_perf_xfer(struct proxy_process *p, struct proxy_perf *e,
                     bool into_guest, bool positional, const struct iovec *iov,
                     int n)
{
    if (positional)
        return -ESPIPE; /* an anon inode file: no pread/pwrite */
    if (!into_guest)
        return -EINVAL; /* perf's file has no write */
    return perf_read(e, iov, n);
}

/* ---- ioctl ------------------------------------------------------------------ */

static void each_of_group(struct proxy_perf *e, bool group,
                          void (*fn)(struct proxy_perf *))
{
    struct proxy_perf *l = group && e->leader ? e->leader : e;
    fn(l);
    for (int i = 0; group && i < l->nr_siblings; i++)
        fn(l->siblings[i]);
}

static void do_enable(struct proxy_perf *e) { e->enabled = true; }
static void do_disable(struct proxy_perf *e) { e->enabled = false; }
/* RESET zeroes the count, not the times (perf_event_reset). */
static void do_reset(struct proxy_perf *e) { e->count = 0; }

static bool perf_fd(struct proxy_process *p, int fd)
{
    const struct proxy_fd *f = proxy_fd_get(&p->fds, fd);
    return f && f->perf;
}

static long ioctl_period(struct proxy_process *p, struct proxy_perf *e,
                         uint64_t arg)
{
    uint64_t period;
    if (proxy_copy_in(p, &period, arg, sizeof(period)) < 0)
        return -EFAULT;
    if (!e->sampling || !period || (period & (1ULL << 63)))
        return -EINVAL;
    e->sample_period = period;
    return 0;
}

static long ioctl_filter(struct proxy_process *p, uint64_t arg)
{
    char c;
    /* The string is copied before the event is looked at. */
    if (proxy_copy_in(p, &c, arg, 1) < 0)
        return -EFAULT;
    return -EINVAL; /* filters are for tracepoints and address filters */
}

static long ioctl_modify(struct proxy_process *p, uint64_t arg)
{
    uint32_t size;
    if (proxy_copy_in(p, &size, arg + offsetof(struct perf_event_attr, size),
                      sizeof(size)) < 0)
        return -EFAULT;
    return -EINVAL; /* only breakpoints may be modified */
}

static long perf_ioctl(struct proxy_process *p, struct proxy_perf *e,
                       unsigned int req, uint64_t arg)
{
    bool group = arg & PERF_IOC_FLAG_GROUP;
    switch (req) {
    case PERF_EVENT_IOC_ENABLE:
        each_of_group(e, group, do_enable);
        return 0;
    case PERF_EVENT_IOC_DISABLE:
        each_of_group(e, group, do_disable);
        return 0;
    case PERF_EVENT_IOC_RESET:
        each_of_group(e, group, do_reset);
        return 0;
    case PERF_EVENT_IOC_REFRESH:
        return -EINVAL; /* no overflow to refresh: no sampling is done */
    case PERF_EVENT_IOC_PERIOD:
        return ioctl_period(p, e, arg);
    case PERF_EVENT_IOC_ID:
        return proxy_copy_out(p, arg, &e->id, sizeof(e->id)) < 0 ? -EFAULT : 0;
    case PERF_EVENT_IOC_SET_OUTPUT:
        /* ~0UL: no output; else an fd (its low 32 bits), a perf one */
        if (arg == UINT64_MAX)
            return 0;
        return !proxy_fd_get(&p->fds, (int)arg) ? -EBADF
               : perf_fd(p, (int)arg)           ? 0
                                                : -EINVAL;
    case PERF_EVENT_IOC_SET_FILTER:
        return ioctl_filter(p, arg);
    case PERF_EVENT_IOC_SET_BPF:
        return !proxy_fd_get(&p->fds, (int)arg) ? -EBADF : -EINVAL;
    case PERF_EVENT_IOC_PAUSE_OUTPUT:
        return -EINVAL; /* no ring buffer */
    case PERF_EVENT_IOC_QUERY_BPF:
        return -EINVAL;
    case PERF_EVENT_IOC_MODIFY_ATTRIBUTES:
        return ioctl_modify(p, arg);
    default:
        return -ENOTTY;
    }
}

/* 1: not a perf ioctl (the VFS's own, FIONBIO and the rest, go on). */
long proxy_perf_ioctl(struct proxy_process *p, struct proxy_perf *e,
                      unsigned int req, uint64_t arg)
{
    if (_IOC_TYPE(req) != '$')
        return 1;
    return perf_ioctl(p, e, req, arg);
}

/* ---- perf_event_open ---------------------------------------------------------- */

/* perf_copy_attr: the size word, then the struct (zeros past what is
 * known), then the fields' checks. E2BIG writes back the size known. */
static long copy_attr(struct proxy_process *p, gva_t uattr,
                      struct perf_event_attr *attr)
{
    uint32_t size;
    memset(attr, 0, sizeof(*attr));
    if (proxy_copy_in(p, &size, uattr + offsetof(struct perf_event_attr, size),
                      sizeof(size)) < 0)
        return -EFAULT;
    if (size == 0)
        size = PERF_ATTR_SIZE_VER0;
    if (size < PERF_ATTR_SIZE_VER0 || size > ATTR_SIZE_MAX)
        goto too_big;
    size_t known = size < sizeof(*attr) ? size : sizeof(*attr);
    if (proxy_copy_in(p, attr, uattr, known) < 0)
        return -EFAULT;
    for (size_t off = ATTR_SIZE_KERNEL; off < size; off += 8) {
        uint8_t rest[8] = {0}, zero[8] = {0};
        size_t k = size - off < 8 ? size - off : 8;
        if (proxy_copy_in(p, rest, uattr + off, k) < 0)
            return -EFAULT;
        if (memcmp(rest, zero, k))
            goto too_big;
    }
    attr->size = size;
    return 0;
too_big:;
    uint32_t ours = ATTR_SIZE_KERNEL;
    (void)proxy_copy_out(p, uattr + offsetof(struct perf_event_attr, size),
                         &ours, sizeof(ours));
    return -E2BIG;
}

static long check_regs(uint64_t mask)
{
    /* x86-64's registers, less DS, ES, FS and GS (not sampled). */
    const uint64_t nosupport = (1ULL << PERF_REG_X86_DS) |
                               (1ULL << PERF_REG_X86_ES) |
                               (1ULL << PERF_REG_X86_FS) |
                               (1ULL << PERF_REG_X86_GS);
    if (!mask || (mask & (nosupport | ~((1ULL << PERF_REG_X86_64_MAX) - 1))))
        return -EINVAL;
    return 0;
}

static long check_attr(const struct perf_event_attr *a)
{
    if (a->__reserved_1 || a->__reserved_2 || a->__reserved_3)
        return -EINVAL;
    if (a->sample_type & ~((uint64_t)PERF_SAMPLE_MAX - 1))
        return -EINVAL;
    if (a->read_format & ~((uint64_t)PERF_FORMAT_MAX - 1))
        return -EINVAL;
    if ((a->sample_type & PERF_SAMPLE_BRANCH_STACK) &&
        (a->branch_sample_type & ~((uint64_t)PERF_SAMPLE_BRANCH_MAX - 1)))
        return -EINVAL;
    if ((a->sample_type & PERF_SAMPLE_REGS_USER) &&
        check_regs(a->sample_regs_user) < 0)
        return -EINVAL;
    if ((a->sample_type & PERF_SAMPLE_STACK_USER) &&
        (a->sample_stack_user >= USHRT_MAX || a->sample_stack_user % 8))
        return -EINVAL;
    if ((a->sample_type & PERF_SAMPLE_REGS_INTR) &&
        check_regs(a->sample_regs_intr) < 0)
        return -EINVAL;
    if ((a->sample_type & PERF_SAMPLE_WEIGHT) &&
        (a->sample_type & PERF_SAMPLE_WEIGHT_STRUCT))
        return -EINVAL;
    if (!a->inherit && a->inherit_thread)
        return -EINVAL;
    if (a->remove_on_exec && a->enable_on_exec)
        return -EINVAL;
    if (a->sigtrap && !a->remove_on_exec)
        return -EINVAL;
    return 0;
}

/* CAP_PERFMON: root of the run. Others are under Linux's default
 * perf_event_paranoid 2: their own threads, user space only. */
static bool perfmon_capable(const struct proxy_process *p)
{
    return p->cred.euid == 0;
}

static long check_access(struct proxy_process *p,
                         const struct perf_event_attr *a)
{
    if ((!a->exclude_kernel || a->namespaces ||
         (a->sample_type & PERF_SAMPLE_PHYS_ADDR)) &&
        !perfmon_capable(p))
        return -EACCES;
    if (a->freq && a->sample_freq > MAX_SAMPLE_RATE)
        return -EINVAL;
    if (!a->freq && (a->sample_period & (1ULL << 63)))
        return -EINVAL;
    return 0;
}

/* The PMU behind (type, config): only the software one exists. */
static long find_pmu(const struct perf_event_attr *a)
{
    if (a->type != PERF_TYPE_SOFTWARE || a->config >= PERF_COUNT_SW_MAX)
        return -ENOENT;
    if (a->sample_type & PERF_SAMPLE_BRANCH_STACK)
        return -EOPNOTSUPP;
    return 0;
}

struct open_args {
    struct perf_event_attr attr;
    int tid;          /* run id of the thread; 0: CPU-wide */
    int cpu;
    struct proxy_perf *leader;
    unsigned long flags;
};

static long find_leader(struct proxy_process *p, int group_fd,
                        struct open_args *o)
{
    if (group_fd == -1)
        return 0;
    const struct proxy_fd *f = proxy_fd_get(&p->fds, group_fd);
    if (!f || !f->perf)
        return -EBADF;
    if (!(o->flags & PERF_FLAG_FD_NO_GROUP))
        o->leader = f->perf;
    return 0;
}

static long find_target(struct proxy_process *p, int pid, struct open_args *o)
{
    if (pid == -1) {
        o->tid = 0;
        return 0;
    }
    if (pid == 0) {
        o->tid = p->threads[p->cur].tid;
        return 0;
    }
    int id = proxy_ns_global_nr(p, pid);
    if (id <= 0 || !proxy_world_find_tid(p->world, id))
        return -ESRCH;
    o->tid = id;
    return 0;
}

/* Linux refuses a member whose group's read would pass 16 KiB. */
#define GROUP_READ_MAX (16 * 1024)

static size_t group_read_bytes(uint64_t rf, int nr_siblings)
{
    size_t header = 1 + !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
                    !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
    size_t entry = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
    return 8 * (header + entry * (size_t)(nr_siblings + 1));
}

/* perf_event_alloc's and find_get_context's checks, in Linux's order. */
static long check_placement(struct proxy_process *p, const struct open_args *o)
{
    if (o->cpu < -1 || o->cpu >= GUEST_NR_CPUS)
        return -EINVAL;
    if (!o->tid && o->cpu == -1)
        return -EINVAL;
    long rc = find_pmu(&o->attr);
    if (rc < 0)
        return rc;
    if (!o->tid && !perfmon_capable(p))
        return -EACCES; /* a CPU-wide event under perf_event_paranoid 2 */
    const struct proxy_perf *l = o->leader;
    if (!l)
        return 0;
    if (l->leader || o->attr.exclusive || o->attr.pinned)
        return -EINVAL; /* a member's leader leads; only leaders pin */
    if (group_read_bytes(o->attr.read_format, l->nr_siblings + 1) >
        GROUP_READ_MAX)
        return -EINVAL; /* perf_event_validate_size: the group is full */
    if (l->all_threads != !o->tid ||
        (o->tid && (l->nr_tids == 0 || l->tids[0] != o->tid)))
        return -EINVAL; /* a group counts one task (or one CPU) */
    return 0;
}

static long parse_open(struct proxy_process *p, const uint64_t a[6],
                       struct open_args *o)
{
    memset(o, 0, sizeof(*o));
    o->flags = a[4];
    o->cpu = (int)a[2];
    if (o->flags & ~(unsigned long)PERF_FLAG_ALL)
        return -EINVAL;
    long rc = copy_attr(p, a[0], &o->attr);
    if (rc == 0)
        rc = check_attr(&o->attr);
    if (rc == 0)
        rc = check_access(p, &o->attr);
    if (rc < 0)
        return rc;
    int pid = (int)a[1];
    if ((o->flags & PERF_FLAG_PID_CGROUP) && (pid == -1 || o->cpu == -1))
        return -EINVAL;
    if (o->flags & PERF_FLAG_PID_CGROUP)
        return -EBADF; /* no cgroup directory fd of the guest's is one */
    if ((rc = find_leader(p, (int)a[3], o)) < 0 ||
        (rc = find_target(p, pid, o)) < 0)
        return rc;
    if (o->tid && o->leader && o->leader->inherit != o->attr.inherit)
        return -EINVAL;
    return check_placement(p, o);
}

static struct proxy_perf *perf_new(struct proxy_process *p,
                                   const struct open_args *o)
{
    struct proxy_perf *e = calloc(1, sizeof(*e));
    if (!e)
        return NULL;
    const struct perf_event_attr *at = &o->attr;
    *e = (struct proxy_perf){
        .refs = 1, .world = p->world, .config = at->config,
        .read_format = at->read_format, .id = ++p->world->perf_ids,
        .sample_period = at->sample_period, .sampling = at->sample_period != 0,
        .enabled = !at->disabled, .enable_on_exec = at->enable_on_exec,
        .remove_on_exec = at->remove_on_exec, .inherit = at->inherit,
        .all_threads = o->tid == 0, .exclude_kernel = at->exclude_kernel};
    if ((o->tid && add_tid(e, o->tid) < 0) ||
        grow((void **)&p->world->perfs, &p->world->cap_perfs,
             p->world->nr_perfs + 1, sizeof(*p->world->perfs)) < 0 ||
        (o->leader && grow((void **)&o->leader->siblings,
                           &o->leader->cap_siblings,
                           o->leader->nr_siblings + 1,
                           sizeof(*o->leader->siblings)) < 0)) {
        free(e->tids);
        free(e);
        return NULL;
    }
    p->world->perfs[p->world->nr_perfs++] = e;
    if (o->leader) {
        e->leader = o->leader;
        o->leader->siblings[o->leader->nr_siblings++] = e;
    }
    return e;
}

static long sys_perf_event_open(struct proxy_process *p, const uint64_t a[6])
{
    struct open_args o;
    long rc = parse_open(p, a, &o);
    if (rc < 0)
        return rc;
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) < 0)
        return -errno;
    close(ends[1]); /* no writer: POLLHUP, as perf_poll without a buffer */
    int host_fd = ends[0];
    struct proxy_perf *e = perf_new(p, &o);
    if (!e) {
        close(host_fd);
        return -ENOMEM;
    }
    int fd = proxy_fd_install(&p->fds, host_fd,
                              (o.flags & PERF_FLAG_FD_CLOEXEC) != 0, 0);
    if (fd < 0) {
        proxy_perf_put(e);
        return fd;
    }
    proxy_fd_get(&p->fds, fd)->perf = e;
    return fd;
}

const struct proxy_syscall proxy_perf_syscalls[] = {
    {SYS_perf_event_open, "perf_event_open", sys_perf_event_open},
    {-1, NULL, NULL},
};
