/*
 * procfile.c - the /proc/<pid> files a guest writes, and its mem file.
 *
 * These would act on hvrun itself if they reached the host's procfs:
 * /proc/self/mem is hvrun's memory (a write there is code execution as
 * hvrun's user), comm renames hvrun, oom_score_adj and coredump_filter
 * change hvrun's. So they are the guest's: mem reads and writes the guest
 * process's memory through the checked copy path, as Linux's does through
 * the target's mm; the small settings files are kept per guest process
 * (inherited by fork as Linux inherits them) and validated as Linux
 * validates them.
 *
 * The guest's fd has a host memfd behind it: a snapshot of the content for
 * reads (a kept file) or nothing (mem), and its host file offset is the
 * guest's (lseek needs nothing special). Transfers on such an fd come here
 * (io.c) through its context, shared by dups and fork like an open file
 * description.
 *
 * Writes are FOLL_FORCE's, as Linux's: read-only private mappings (text)
 * take them, so a debugger can plant a breakpoint; shared mappings the
 * process may not write and [vvar] do not (EIO). Reads are FOLL_FORCE's
 * too: PROT_NONE pages read.
 */
#include "proxy.h"
#include "fdtable.h"
#include "kernel.h"
#include "mm.h"
#include "fs.h"
#include "procfile.h"
#include "vfs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

struct proxy_vfd {
    unsigned refs;
    /* NSFILE: uid_map, gid_map, setgroups (kernel/namespace.c writes
     * them); NS: a /proc/PID/ns link opened, setns's argument */
    enum {
        VFD_MEM,
        VFD_PAGEMAP,
        VFD_KEPT,
        VFD_NSFILE,
        VFD_NS,
        VFD_SYSCALL /* /proc/PID/syscall: made at each read */
    } kind;
    int pid;  /* the guest process whose file it is */
    int kept; /* VFD_KEPT: index in kept_files; NSFILE: which; NS: type */
    int tid;  /* VFD_KEPT comm: the thread's (task/TID/comm), 0: process */
    struct proxy_ns *ns; /* VFD_NS: the namespace (NULL: the initial) */
};

/* ---- kept settings ------------------------------------------------------- */

static int parse_long(const char *in, size_t len, int base, long min, long max,
                      long *out)
{
    char buf[32];
    if (len == 0 || len >= sizeof(buf))
        return -EINVAL;
    memcpy(buf, in, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    long v = strtol(buf, &end, base);
    while (*end == ' ' || *end == '\n' || *end == '\t')
        end++;
    if (errno || end == buf || *end || v < min || v > max)
        return -EINVAL;
    *out = v;
    return 0;
}

static int kept_oom_score_adj(const char *in, size_t len, char *out, size_t cap)
{
    long v;
    int rc = parse_long(in, len, 10, -1000, 1000, &v);
    return rc < 0 ? rc : snprintf(out, cap, "%ld\n", v);
}

static int kept_oom_adj(const char *in, size_t len, char *out, size_t cap)
{
    long v;
    int rc = parse_long(in, len, 10, -17, 15, &v);
    return rc < 0 ? rc : snprintf(out, cap, "%ld\n", v);
}

static int kept_coredump_filter(const char *in, size_t len, char *out,
                                size_t cap)
{
    long v;
    int rc = parse_long(in, len, 16, 0, 0xffffffffL, &v);
    return rc < 0 ? rc : snprintf(out, cap, "%08lx\n", v);
}

static int kept_timerslack(const char *in, size_t len, char *out, size_t cap)
{
    long v;
    int rc = parse_long(in, len, 10, 0, LONG_MAX, &v);
    return rc < 0 ? rc : snprintf(out, cap, "%ld\n", v); /* 0: the default */
}

static int kept_loginuid(const char *in, size_t len, char *out, size_t cap)
{
    long v;
    int rc = parse_long(in, len, 10, 0, 0xffffffffL, &v);
    return rc < 0 ? rc : snprintf(out, cap, "%ld", v);
}

/* clear_refs takes 1-5 and keeps nothing to read back. */
static int kept_clear_refs(const char *in, size_t len, char *out, size_t cap)
{
    long v;
    int rc = parse_long(in, len, 10, 1, 5, &v);
    return rc < 0 ? rc : snprintf(out, cap, "%s", "");
}

struct kept_file {
    const char *name; /* under /proc/self/ */
    const char *initial;
    /* Canonical content for what was written, its length, or -EINVAL;
     * NULL for a read-only file. */
    int (*parse)(const char *in, size_t len, char *out, size_t cap);
};

/* The values a fresh Linux process shows; PROXY_KEPT_* index this. */
static const struct kept_file kept_files[PROXY_NR_KEPT] = {
    [PROXY_KEPT_OOM_SCORE_ADJ] = {"oom_score_adj", "0\n", kept_oom_score_adj},
    [PROXY_KEPT_OOM_ADJ] = {"oom_adj", "0\n", kept_oom_adj},
    [PROXY_KEPT_COREDUMP_FILTER] = {"coredump_filter", "00000033\n",
                                    kept_coredump_filter},
    [PROXY_KEPT_TIMERSLACK] = {"timerslack_ns", "50000\n", kept_timerslack},
    [PROXY_KEPT_LOGINUID] = {"loginuid", "4294967295", kept_loginuid},
    [PROXY_KEPT_CLEAR_REFS] = {"clear_refs", "", kept_clear_refs},
    [PROXY_KEPT_SESSIONID] = {"sessionid", "4294967295", NULL},
    [PROXY_KEPT_OOM_SCORE] = {"oom_score", "0\n", NULL},
    [PROXY_KEPT_PERSONALITY] = {"personality", "00000000\n", NULL},
    [PROXY_KEPT_CGROUP] = {"cgroup", "0::/\n", NULL},
    [PROXY_KEPT_AUTOGROUP] = {"autogroup", "/autogroup-1 nice 0\n", NULL},
};

int proxy_procfile_kept_index(const char *name)
{
    if (strcmp(name, "comm") == 0)
        return PROXY_KEPT_COMM;
    for (int i = 0; i < PROXY_NR_KEPT; i++) {
        if (kept_files[i].name && strcmp(name, kept_files[i].name) == 0)
            return i;
    }
    return -1;
}

/* oom_adj is oom_score_adj on the old scale (-17 to 15), one setting:
 * Linux's oom_adj_write and oom_adj_read convert so. */
static long oom_score_adj_of_adj(long adj)
{
    return adj == 15 ? 1000 : adj * 1000 / 17;
}

static long oom_score_adj_value(const struct proxy_process *q)
{
    return q->kept[PROXY_KEPT_OOM_SCORE_ADJ][0]
               ? strtol(q->kept[PROXY_KEPT_OOM_SCORE_ADJ], NULL, 10)
               : 0;
}

static long oom_adj_of_score_adj(long score_adj)
{
    return score_adj == 1000 ? 15 : score_adj * 17 / 1000;
}

/* Linux 6.1's proc_oom_score: oom_badness (resident pages, plus
 * oom_score_adj thousandths of the memory; -1000 exempts) over the
 * memory (no swap), shown as (1000 + badness * 1000 / total) * 2 / 3.
 * The virtual init is not a guest; pid 1 under --as-init is unkillable
 * init: 0, as Linux's oom_unkillable_task. */
static void oom_score_of(struct proxy_process *q, char *out, size_t cap)
{
    long adj = oom_score_adj_value(q);
    long total = (long)(q->det->cfg.mem_total_bytes / VMM_PAGE_SIZE);
    unsigned long points = 0;
    if (adj != -1000 && q->pid != PROXY_INIT_PID) {
        long badness = (long)proxy_procfs_rss_pages(q) + adj * (total / 1000);
        points = (unsigned long)((1000 + badness * 1000 / total) * 2 / 3);
    }
    snprintf(out, cap, "%lu\n", points);
}

/* The current content of a kept file of q. */
static void kept_content(struct proxy_process *q, int k, int tid, char *out,
                         size_t cap)
{
    if (k == PROXY_KEPT_COMM)
        snprintf(out, cap, "%s\n", proxy_thread_comm_of(q, tid));
    else if (k == PROXY_KEPT_OOM_SCORE)
        oom_score_of(q, out, cap);
    else if (k == PROXY_KEPT_OOM_ADJ)
        snprintf(out, cap, "%ld\n",
                 oom_adj_of_score_adj(oom_score_adj_value(q)));
    else if (k == PROXY_KEPT_PERSONALITY)
        snprintf(out, cap, "%08x\n", q->personality);
    else if (k == PROXY_KEPT_TIMERSLACK) /* PR_SET_TIMERSLACK's value */
        snprintf(out, cap, "%llu\n",
                 (unsigned long long)q->prctl.timerslack_ns);
    else if (q->kept[k][0] || !kept_files[k].parse)
        snprintf(out, cap, "%s", q->kept[k][0] ? q->kept[k] : kept_files[k].initial);
    else
        snprintf(out, cap, "%s", kept_files[k].initial);
}

/* Linux's comm write (comm_write): at most 15 bytes, up to a NUL; a
 * newline is kept (`echo x > comm` names the task "x\n"). */
static int kept_write_comm(struct proxy_process *q, int tid, const char *in,
                           size_t len)
{
    char *comm = proxy_thread_comm_of(q, tid);
    size_t n = 0;
    while (n < len && n < sizeof(q->comm) - 1 && in[n] != '\0')
        n++;
    memcpy(comm, in, n);
    comm[n] = '\0';
    return 0;
}

/* Linux 6.1's __set_oom_adj: without CAP_SYS_RESOURCE oom_adj (legacy)
 * only raises the setting and oom_score_adj goes no lower than the
 * least a privileged writer set; a privileged oom_score_adj write sets
 * that least. The setting's new value on the oom_score_adj scale, or
 * -EACCES. */
static long oom_setting_written(struct proxy_process *writer,
                                struct proxy_process *q, bool legacy,
                                long value)
{
    long score_adj = legacy ? oom_score_adj_of_adj(value) : value;
    bool privileged = proxy_ns_capable_cap(writer, CAP_SYS_RESOURCE);
    long floor = legacy ? oom_score_adj_value(q) : q->oom_score_adj_min;
    if (score_adj < floor && !privileged)
        return -EACCES;
    if (!legacy && privileged)
        q->oom_score_adj_min = (int)score_adj;
    snprintf(q->kept[PROXY_KEPT_OOM_SCORE_ADJ],
             sizeof(q->kept[PROXY_KEPT_OOM_SCORE_ADJ]), "%ld\n", score_adj);
    return 0;
}

static long kept_write(struct proxy_process *writer, struct proxy_process *q,
                       int k, const char *in, size_t len)
{
    if (!kept_files[k].parse)
        return -EINVAL;
    char canon[sizeof(q->kept[0])];
    int rc = kept_files[k].parse(in, len, canon, sizeof(canon));
    if (rc < 0)
        return rc;
    if (k == PROXY_KEPT_OOM_ADJ || k == PROXY_KEPT_OOM_SCORE_ADJ) {
        long r = oom_setting_written(writer, q, k == PROXY_KEPT_OOM_ADJ,
                                     strtol(canon, NULL, 10));
        if (r < 0)
            return r;
    } else if (k == PROXY_KEPT_TIMERSLACK) { /* PR_GET_TIMERSLACK's value */
        /* another process's takes CAP_SYS_NICE (timerslack_ns_write) */
        if (writer != q && !proxy_ns_capable_cap(writer, CAP_SYS_NICE))
            return -EPERM;
        uint64_t v = strtoull(canon, NULL, 10);
        uint64_t dflt = q->prctl.timerslack_default_ns;
        q->prctl.timerslack_ns = v ? v : dflt ? dflt : 50000;
    }
    else if (k != PROXY_KEPT_CLEAR_REFS)
        snprintf(q->kept[k], sizeof(q->kept[k]), "%s", canon);
    return (long)len;
}

/* ---- opening ------------------------------------------------------------- */

static int memfd_with(const char *name, const char *content, int flags)
{
    int mfd = memfd_create(name, MFD_CLOEXEC);
    if (mfd < 0)
        return -errno;
    size_t len = strlen(content);
    if (len && write(mfd, content, len) != (ssize_t)len) {
        close(mfd);
        return -EIO;
    }
    char link[64];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", mfd);
    int acc = flags & O_ACCMODE;
    int fd = open(link, (acc == O_WRONLY ? O_WRONLY : acc == O_RDWR ? O_RDWR
                                                                     : O_RDONLY) |
                            O_CLOEXEC | (flags & O_NONBLOCK));
    int rc = fd < 0 ? -errno : fd;
    close(mfd);
    return rc;
}

static long install_vfd(struct proxy_process *p, int host_fd, int flags,
                        int kind, int pid, int kept)
{
    struct proxy_vfd *v = calloc(1, sizeof(*v));
    if (!v) {
        close(host_fd);
        return -ENOMEM;
    }
    *v = (struct proxy_vfd){.refs = 1, .kind = kind, .pid = pid, .kept = kept};
    long gfd = proxy_fd_install(&p->fds, host_fd, (flags & O_CLOEXEC) != 0, 0);
    if (gfd < 0) {
        free(v);
        return gfd;
    }
    proxy_fd_get(&p->fds, (int)gfd)->vfd = v;
    return gfd;
}

static long open_checks(int flags)
{
    if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
        return -EEXIST;
    if (flags & O_DIRECTORY)
        return -ENOTDIR;
    return 0;
}

/* The writable settings are 0644 files of the process's owner (its euid;
 * root's when it is not dumpable, as Linux's task_dump_owner): another
 * user writes them with CAP_DAC_OVERRIDE only. timerslack_ns is 0666
 * (its write checks CAP_SYS_NICE: kept_write). */
static bool may_write_kept(const struct proxy_process *p,
                           const struct proxy_process *of, int k)
{
    if (k == PROXY_KEPT_TIMERSLACK)
        return true;
    uint32_t owner = of->prctl.dumpable == 1 ? of->cred.euid : 0;
    return p->cred.fsuid == owner ||
           proxy_ns_capable_cap(p, CAP_DAC_OVERRIDE);
}

long proxy_procfile_open_kept(struct proxy_process *p, struct proxy_process *of,
                              int k, int flags)
{
    long rc = open_checks(flags);
    if (rc < 0)
        return rc;
    bool writes = (flags & O_ACCMODE) != O_RDONLY;
    if (writes && k != PROXY_KEPT_COMM && !kept_files[k].parse)
        return -EACCES;
    if (writes && !may_write_kept(p, of, k))
        return -EACCES;
    /* clear_refs is 0200: read only with CAP_DAC_OVERRIDE */
    if (k == PROXY_KEPT_CLEAR_REFS && (flags & O_ACCMODE) != O_WRONLY &&
        !proxy_ns_capable_cap(p, CAP_DAC_OVERRIDE))
        return -EACCES;
    char content[64], name[64];
    kept_content(of, k, of->proc_tid, content, sizeof(content));
    snprintf(name, sizeof(name), "hvrun-vfs:/proc/%d/%s", of->pid,
             k == PROXY_KEPT_COMM ? "comm" : kept_files[k].name);
    int host_fd = memfd_with(name, content, flags);
    if (host_fd < 0)
        return host_fd;
    long gfd = install_vfd(p, host_fd, flags, VFD_KEPT, of->pid, k);
    if (gfd >= 0)
        proxy_fd_get(&p->fds, (int)gfd)->vfd->tid = of->proc_tid;
    return gfd;
}

/* /proc/PID/<file> of process `of` whose reads and writes hvrun serves
 * from of's memory (kind: VFD_MEM, VFD_PAGEMAP), over an empty memfd. */
static long open_memory_file(struct proxy_process *p, struct proxy_process *of,
                             int flags, const char *file, int kind)
{
    long rc = open_checks(flags);
    if (rc < 0)
        return rc;
    char name[64];
    snprintf(name, sizeof(name), "hvrun-vfs:/proc/%d/%s", of->pid, file);
    int host_fd = memfd_with(name, "", flags);
    if (host_fd < 0)
        return host_fd;
    return install_vfd(p, host_fd, flags, kind, of->pid, 0);
}

long proxy_procfile_open_mem(struct proxy_process *p, struct proxy_process *of,
                             int flags)
{
    return open_memory_file(p, of, flags, "mem", VFD_MEM);
}

long proxy_procfile_open_pagemap(struct proxy_process *p,
                                 struct proxy_process *of, int flags)
{
    return open_memory_file(p, of, flags, "pagemap", VFD_PAGEMAP);
}

/*
 * /proc/PID/syscall (proc_pid_syscall, Linux 6.12): 0400, the process's
 * owner's (task_dump_owner: root's when it is not dumpable); the read
 * asks ptrace access (lock_trace: EPERM). Its text is made at each read,
 * as a seq_file's is: what the thread is doing then.
 */
long proxy_procfile_open_syscall(struct proxy_process *p,
                                 struct proxy_process *of, int flags)
{
    long rc = open_checks(flags);
    if (rc < 0)
        return rc;
    if ((flags & O_ACCMODE) != O_RDONLY || proxy_procfs_owner_only(p, of) < 0)
        return -EACCES;
    char name[64];
    snprintf(name, sizeof(name), "hvrun-vfs:/proc/%d/syscall", of->pid);
    int host_fd = memfd_with(name, "", flags);
    if (host_fd < 0)
        return host_fd;
    long gfd = install_vfd(p, host_fd, flags, VFD_SYSCALL, of->pid, 0);
    if (gfd >= 0)
        proxy_fd_get(&p->fds, (int)gfd)->vfd->tid = of->proc_tid;
    return gfd;
}

static struct proxy_process *vfd_owner(struct proxy_process *p,
                                       const struct proxy_vfd *v);

/* The thread of q a /proc/PID[/task/TID]/syscall names: TID's, else the
 * leader's (the thread whose tid is the pid), NULL when gone. */
static struct proxy_thread *syscall_thread(struct proxy_process *q, int tid)
{
    int want = tid ? tid : q->pid;
    for (int k = 0; k < q->nr_threads; k++) {
        struct proxy_thread *t = &q->threads[k];
        int t_tid = k == q->cur ? q->tid : t->tid;
        if (t->state != PROXY_THREAD_EXITED && t_tid == want)
            return t;
    }
    return NULL;
}

/*
 * task_current_syscall as proc_pid_syscall prints it: the call the thread
 * is in (its number, six arguments, sp, and the pc it returns to), as it
 * entered it (proxy_thread's call). The reader's own thread is in its
 * read; a thread blocked in a call (a futex, a sleep, a wait, a stop at a
 * call) shows that call; one stopped for its tracer outside a call
 * "-1 sp pc"; a runnable one "running" (Linux's answer for a task that is
 * not off its CPU).
 */
static void syscall_text(struct proxy_process *reader, struct proxy_process *q,
                         int tid, struct vbuf *b)
{
    struct proxy_thread *t = syscall_thread(q, tid);
    bool reading = t && q == reader && t == &q->threads[q->cur];
    if (!t || (!reading && t->state == PROXY_THREAD_RUNNABLE)) {
        vb_printf(b, "running\n");
        return;
    }
    if (t->state == PROXY_THREAD_PTRACE_STOP && t->pt.orig_rax < 0) {
        const struct vmm_regs *r =
            t == &q->threads[q->cur] ? vmm_vm_regs(q->vm) : &t->regs;
        vb_printf(b, "-1 0x%llx 0x%llx\n", (unsigned long long)r->rsp,
                  (unsigned long long)r->rip);
        return;
    }
    const struct proxy_thread_call *c = &t->call;
    vb_printf(b, "%lld", (long long)c->nr);
    for (int i = 0; i < 6; i++)
        vb_printf(b, " 0x%llx", (unsigned long long)c->args[i]);
    vb_printf(b, " 0x%llx 0x%llx\n", (unsigned long long)c->sp,
              (unsigned long long)c->pc);
}

static long syscall_read(struct proxy_process *p, const struct proxy_vfd *v,
                         uint64_t pos, const struct iovec *iov, int n)
{
    struct proxy_process *q = vfd_owner(p, v);
    if (q && !proxy_ptrace_may_access(p, q))
        return -EPERM; /* lock_trace */
    struct vbuf b = {0};
    if (q)
        syscall_text(p, q, v->tid, &b);
    else
        vb_printf(&b, "0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0\n"); /* no stack */
    if (b.failed) {
        free(b.s);
        return -ENOMEM;
    }
    long total = 0;
    for (int i = 0; i < n && pos + (uint64_t)total < b.len; i++) {
        size_t left = b.len - (size_t)(pos + (uint64_t)total);
        size_t c = iov[i].iov_len < left ? iov[i].iov_len : left;
        memcpy(iov[i].iov_base, b.s + pos + total, c);
        total += (long)c;
    }
    free(b.s);
    return total;
}

/* /proc/PID/{uid_map,gid_map,setgroups}: the content as p reads it. */
long proxy_procfile_open_nsfile(struct proxy_process *p,
                                struct proxy_process *of, int which,
                                int flags)
{
    static const char *const names[] = {"uid_map", "gid_map", "setgroups"};
    long rc = open_checks(flags);
    if (rc < 0)
        return rc;
    char content[8192], name[64];
    proxy_ns_file_content(p, of, which, content, sizeof(content));
    snprintf(name, sizeof(name), "hvrun-vfs:/proc/%d/%s", of->pid,
             names[which]);
    int host_fd = memfd_with(name, content, flags);
    if (host_fd < 0)
        return host_fd;
    return install_vfd(p, host_fd, flags, VFD_NSFILE, of->pid, which);
}

/* /proc/PID/ns/NAME opened: an fd whose link reads "type:[inum]" and
 * that setns takes. */
/* An fd of namespace ns of type, named by its link "type:[inum]". */
static long open_ns_fd(struct proxy_process *p, int pid, int type,
                       struct proxy_ns *ns, int flags)
{
    char link[64];
    proxy_ns_link_of(type, ns, link, sizeof(link));
    char name[80];
    snprintf(name, sizeof(name), "hvrun-vfs:%s", link);
    int host_fd = memfd_with(name, "", O_RDONLY | (flags & O_NONBLOCK));
    if (host_fd < 0)
        return host_fd;
    long gfd = install_vfd(p, host_fd, flags, VFD_NS, pid, type);
    if (gfd >= 0)
        proxy_fd_get(&p->fds, (int)gfd)->vfd->ns = ns;
    return gfd;
}

long proxy_procfile_open_ns(struct proxy_process *p, struct proxy_process *of,
                            int type, int flags)
{
    if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
        return -EEXIST;
    if ((flags & O_ACCMODE) != O_RDONLY)
        return -EACCES;
    return open_ns_fd(p, of->pid, type, proxy_ns_of(of, type), flags);
}

long proxy_procfile_ns_ioctl(struct proxy_process *p, const struct proxy_fd *f,
                             unsigned int req, gva_t arg)
{
    int type, rel_type;
    struct proxy_ns *ns, *rel = NULL;
    if (!proxy_procfile_ns(f, &type, &ns))
        return -ENOTTY;
    long r = proxy_ns_ioctl(p, type, ns, req, arg, &rel, &rel_type);
    if (r < 0 || rel_type < 0)
        return r;
    /* open_related_ns: a new fd, close-on-exec */
    return open_ns_fd(p, p->pid, rel_type, rel, O_RDONLY | O_CLOEXEC);
}

bool proxy_procfile_ns(const struct proxy_fd *f, int *type,
                       struct proxy_ns **ns)
{
    if (!f->vfd || f->vfd->kind != VFD_NS)
        return false;
    *type = f->vfd->kept;
    *ns = f->vfd->ns;
    return true;
}

/* ---- transfers ----------------------------------------------------------- */

static struct proxy_process *vfd_owner(struct proxy_process *p,
                                       const struct proxy_vfd *v)
{
    if (v->pid == p->pid)
        return p;
    struct proxy_process *q = p->world ? proxy_world_find(p->world, v->pid)
                                       : NULL;
    return q && !q->zombie && q->as ? q : NULL;
}

/* Moves up to len bytes between guest address addr of q and host buf, one
 * page at a time, so a transfer that reaches an unmapped page is partial. */
static long mem_copy(struct proxy_process *q, uint64_t addr, char *buf,
                     size_t len, bool into_caller)
{
    size_t done = 0;
    while (done < len) {
        uint64_t at = addr + done;
        if (at < addr || at >= VMM_USER_END)
            break;
        size_t n = VMM_PAGE_SIZE - (at & (VMM_PAGE_SIZE - 1));
        if (n > len - done)
            n = len - done;
        if (proxy_secretmem_page(q, at))
            break; /* get_user_pages finds no secret page */
        /* Writes as FOLL_FORCE: read-only text too (a debugger's
         * breakpoint, a JIT's patch). */
        int rc = into_caller ? proxy_mem_read_forced(q, at, buf + done, n)
                             : proxy_mem_write_forced(q, at, buf + done, n);
        if (rc < 0)
            break;
        done += n;
    }
    return done ? (long)done : -EIO;
}

static long mem_xfer(struct proxy_process *p, const struct proxy_vfd *v,
                     bool into_guest, uint64_t pos, const struct iovec *iov,
                     int n)
{
    struct proxy_process *q = vfd_owner(p, v);
    if (!q)
        return 0; /* Linux: the process's memory is gone */
    long total = 0;
    for (int i = 0; i < n; i++) {
        if (iov[i].iov_len == 0)
            continue;
        long r = mem_copy(q, pos + (uint64_t)total, iov[i].iov_base,
                          iov[i].iov_len, into_guest);
        if (r < 0)
            return total ? total : r;
        total += r;
        if ((size_t)r < iov[i].iov_len)
            break;
    }
    return total;
}

/*
 * pagemap's entry for the page at addr. A page of guest memory is present
 * once backed, as mincore says (mm.c): all but lazy VMAs never touched and
 * a file mapping's pages past its file's end; PM_FILE for pages of a file
 * or of shared memory. No page frame number (host memory's, different in
 * every run: Linux too shows 0 to a reader without CAP_SYS_ADMIN), nor the
 * soft-dirty, exclusive and swap bits.
 */
#define PM_PRESENT (1ULL << 63)
#define PM_FILE (1ULL << 61)
#define PM_ENTRY_BYTES 8

static uint64_t pagemap_entry(const struct proxy_process *q, gva_t addr)
{
    const struct vmm_vma *v = vmm_as_find_vma(q->as, addr);
    if (!v || (v->flags & VMM_VMA_LAZY) || (v->eof_at && addr >= v->eof_at))
        return 0;
    return PM_PRESENT | (v->file || v->shared ? PM_FILE : 0);
}

/* pagemap_read: whole entries at an aligned offset (else EINVAL), the
 * entry at offset 8n being page n's; none past the user address space. */
static long pagemap_read(struct proxy_process *p, const struct proxy_vfd *v,
                         uint64_t pos, const struct iovec *iov, int n)
{
    size_t asked = 0;
    for (int i = 0; i < n; i++)
        asked += iov[i].iov_len;
    if (pos % PM_ENTRY_BYTES || asked % PM_ENTRY_BYTES)
        return -EINVAL;
    struct proxy_process *q = vfd_owner(p, v);
    if (!q || !q->as)
        return 0;
    long total = 0;
    uint64_t e = 0, e_page = UINT64_MAX; /* the entry being copied out */
    for (int i = 0; i < n; i++) {
        char *out = iov[i].iov_base;
        for (size_t off = 0; off < iov[i].iov_len; off++) {
            uint64_t at = pos + (uint64_t)total;
            uint64_t page = at / PM_ENTRY_BYTES;
            if (page >= VMM_USER_END / VMM_PAGE_SIZE)
                return total;
            if (page != e_page)
                e = pagemap_entry(q, (e_page = page) * VMM_PAGE_SIZE);
            out[off] = (char)(e >> (8 * (at % PM_ENTRY_BYTES)));
            total++;
        }
    }
    return total;
}

/* A write to a kept setting of q's (comm, oom_score_adj, ...). */
static long kept_write_iov(struct proxy_process *writer,
                           struct proxy_process *q, const struct proxy_vfd *v,
                           const struct iovec *iov, int n)
{
    char buf[64];
    size_t len = 0;
    for (int i = 0; i < n && len < sizeof(buf); i++) {
        size_t c = iov[i].iov_len < sizeof(buf) - len ? iov[i].iov_len
                                                      : sizeof(buf) - len;
        memcpy(buf + len, iov[i].iov_base, c);
        len += c;
    }
    size_t asked = 0;
    for (int i = 0; i < n; i++)
        asked += iov[i].iov_len;
    if (v->kept == PROXY_KEPT_COMM && writer != q)
        return -EINVAL; /* comm_write: only a thread of the same group */
    if (v->kept == PROXY_KEPT_COMM) /* a longer name is cut, not refused */
        return kept_write_comm(q, v->tid, buf, len) < 0 ? -EINVAL
                                                        : (long)asked;
    if (asked >= sizeof(buf))
        return -EINVAL; /* longer than any value these files take */
    return kept_write(writer, q, v->kept, buf, len);
}

/* A write goes to the namespace code whole, at offset 0 only (map_write:
 * one write of less than a page). */
static long nsfile_write(struct proxy_process *p, struct proxy_process *q,
                         const struct proxy_vfd *v, int host_fd,
                         bool at_offset, int64_t offset,
                         const struct iovec *iov, int n)
{
    off_t pos = at_offset ? offset : lseek(host_fd, 0, SEEK_CUR);
    size_t asked = 0;
    for (int i = 0; i < n; i++)
        asked += iov[i].iov_len;
    if (pos != 0 || asked >= 4096)
        return -EINVAL;
    char buf[4096];
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        memcpy(buf + len, iov[i].iov_base, iov[i].iov_len);
        len += iov[i].iov_len;
    }
    return proxy_ns_file_write(p, q, v->kept, buf, len);
}

long proxy_procfile_xfer(struct proxy_process *p, int guest_fd, bool into_guest,
                         bool at_offset, int64_t offset,
                         const struct iovec *iov, int n)
{
    struct proxy_fd *f = proxy_fd_get(&p->fds, guest_fd);
    int fl = fcntl(f->host_fd, F_GETFL);
    int acc = fl < 0 ? O_RDWR : fl & O_ACCMODE;
    if ((into_guest && acc == O_WRONLY) || (!into_guest && acc == O_RDONLY))
        return -EBADF;
    if (f->vfd->kind == VFD_NS)
        return -EINVAL; /* Linux's nsfs has no read or write */
    if (f->vfd->kind == VFD_NSFILE || f->vfd->kind == VFD_KEPT) {
        if (into_guest && f->vfd->kind == VFD_KEPT &&
            f->vfd->kept == PROXY_KEPT_CLEAR_REFS)
            return -EINVAL; /* write-only: Linux's has no read */
        if (into_guest) { /* the text made at open */
            long r = at_offset ? preadv(f->host_fd, iov, n, offset)
                               : readv(f->host_fd, iov, n);
            return r < 0 ? -errno : r;
        }
        struct proxy_process *q = vfd_owner(p, f->vfd);
        if (!q)
            return -ESRCH;
        return f->vfd->kind == VFD_NSFILE
                   ? nsfile_write(p, q, f->vfd, f->host_fd, at_offset, offset,
                                  iov, n)
                   : kept_write_iov(p, q, f->vfd, iov, n);
    }
    off_t pos = at_offset ? offset : lseek(f->host_fd, 0, SEEK_CUR);
    if (pos < 0)
        return -errno;
    if ((f->vfd->kind == VFD_PAGEMAP || f->vfd->kind == VFD_SYSCALL) &&
        !into_guest)
        return -EINVAL; /* pagemap and syscall have no write */
    long r = f->vfd->kind == VFD_PAGEMAP
                 ? pagemap_read(p, f->vfd, (uint64_t)pos, iov, n)
             : f->vfd->kind == VFD_SYSCALL
                 ? syscall_read(p, f->vfd, (uint64_t)pos, iov, n)
                 : mem_xfer(p, f->vfd, into_guest, (uint64_t)pos, iov, n);
    if (r > 0 && !at_offset)
        (void)lseek(f->host_fd, pos + r, SEEK_SET);
    return r;
}

/* ---- the fd table's hooks ------------------------------------------------ */

void proxy_procfile_share(struct proxy_fd *to, const struct proxy_fd *from)
{
    if (!from->vfd || to->vfd == from->vfd)
        return;
    proxy_procfile_put(to->vfd);
    from->vfd->refs++;
    to->vfd = from->vfd;
}

void proxy_procfile_put(struct proxy_vfd *v)
{
    if (v && --v->refs == 0)
        free(v);
}
