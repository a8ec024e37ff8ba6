/*
 * coredump.c - the core file a signal whose default action dumps core
 * leaves behind, as Linux's do_coredump and binfmt_elf's elf_core_dump
 * write it, so that `gdb PROGRAM core` debugs a crash seen under hvrun.
 *
 * When: RLIMIT_CORE of at least a page (the run starts with 0, as a shell
 * does; `ulimit -c unlimited` in the guest turns it on), a dumpable
 * process, and a core_pattern naming a file (the host's
 * /proc/sys/kernel/core_pattern, which is also what the guest reads; a
 * "|program" pattern would run a host program on the guest's behalf: no
 * dump then, and no core flag). The name: the pattern's %p %P %i %I %u %g
 * %s %t %e %E %c %% expanded with the run's values (virtual pids and ids,
 * logical time), ".PID" added under core_uses_pid, a relative name under
 * the process's cwd; an existing file is removed first and the core made
 * O_EXCL, mode 0600 less the umask, with the process's filesystem ids.
 *
 * What: an ELF core (ET_CORE): a PT_NOTE with, for the thread that took
 * the signal first, NT_PRSTATUS, NT_PRPSINFO, NT_SIGINFO, NT_AUXV, NT_FILE
 * and NT_PRFPREG, then NT_PRSTATUS and NT_PRFPREG for each other thread;
 * then one PT_LOAD per mapping, its bytes written where coredump_filter's
 * default (0x33) has Linux write them: anonymous and shared anonymous
 * memory whole, a private file mapping whole when it is writable or was
 * written (a read-only one hvrun has not kept clean: RELRO), code never,
 * else only a first page holding an ELF header; [vdso] always;
 * PROT_NONE anonymous memory (a reservation never touched, as Linux sees
 * one without anon_vma), secret memory and [vvar] not at all. Pages of
 * zeros are left as holes. A dump whose written bytes (holes not counted,
 * as dump_emit counts) pass RLIMIT_CORE stops there; it still counts as
 * dumped (the core flag), as Linux's does once it began.
 */
#include "proxy.h"
#include "kernel.h"
#include "ptrace.h"
#include "fs.h"
#include "internal.h"
#include "vfs.h"

#include "cpu_x86_64.h"
#include "det.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/procfs.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <time.h>
#include <unistd.h>

#define CORE_PAGE 4096ULL
#define NOTE_NAME "CORE"
#define FXSAVE_BYTES 512

/* Notes go into a vfs.h byte buffer, each part padded to 4 bytes. */
static void notes_put(struct vbuf *n, const void *data, size_t len)
{
    static const char pad[4];
    vb_put(n, data, len);
    vb_put(n, pad, ((len + 3) & ~(size_t)3) - len);
}

static void note_add(struct vbuf *n, uint32_t type, const void *desc,
                     size_t len)
{
    Elf64_Nhdr h = {sizeof(NOTE_NAME), (Elf64_Word)len, type};
    notes_put(n, &h, sizeof(h));
    notes_put(n, NOTE_NAME, sizeof(NOTE_NAME));
    notes_put(n, desc, len);
}

static void note_prstatus(struct vbuf *n, struct proxy_process *p,
                          struct proxy_thread *t, int signo, bool first)
{
    struct elf_prstatus st;
    memset(&st, 0, sizeof(st));
    st.pr_info.si_signo = st.pr_cursig = (short)signo;
    st.pr_sigpend = p->sig.pending_mask;
    st.pr_sighold = first ? p->sig.sigmask : t->sigmask;
    st.pr_pid = t->tid;
    st.pr_ppid = p->ppid;
    st.pr_pgrp = p->pgid;
    st.pr_sid = p->sid;
    struct user_regs_struct u;
    proxy_ptrace_get_user_regs(p, t, &u);
    _Static_assert(sizeof(st.pr_reg) == sizeof(u), "elf_gregset_t layout");
    memcpy(&st.pr_reg, &u, sizeof(u));
    st.pr_fpvalid = 1;
    note_add(n, NT_PRSTATUS, &st, sizeof(st));
}

static void note_fpregs(struct vbuf *n, struct proxy_process *p,
                        struct proxy_thread *t)
{
    uint8_t *xs = malloc(VMM_XSAVE_MAX_BYTES);
    if (xs && proxy_ptrace_get_xstate(p, t, xs) == 0)
        note_add(n, NT_PRFPREG, xs, FXSAVE_BYTES); /* the legacy area */
    free(xs);
}

static void note_prpsinfo(struct vbuf *n, struct proxy_process *p)
{
    struct elf_prpsinfo ps;
    memset(&ps, 0, sizeof(ps));
    ps.pr_sname = 'R';
    ps.pr_nice = (char)p->prctl.nice;
    ps.pr_uid = p->cred.ruid;
    ps.pr_gid = p->cred.rgid;
    ps.pr_pid = p->pid;
    ps.pr_ppid = p->ppid;
    ps.pr_pgrp = p->pgid;
    ps.pr_sid = p->sid;
    memcpy(ps.pr_fname, p->comm, sizeof(ps.pr_fname));
    size_t len = p->mm.arg_end > p->mm.arg_start
                     ? p->mm.arg_end - p->mm.arg_start
                     : 0;
    if (len > sizeof(ps.pr_psargs) - 1)
        len = sizeof(ps.pr_psargs) - 1;
    if (proxy_copy_in(p, ps.pr_psargs, p->mm.arg_start, len) == 0)
        for (size_t i = 0; i + 1 < len; i++) /* arguments apart by spaces */
            if (!ps.pr_psargs[i])
                ps.pr_psargs[i] = ' ';
    note_add(n, NT_PRPSINFO, &ps, sizeof(ps));
}

static void note_siginfo(struct vbuf *n, int signo)
{
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    si.si_signo = signo;
    si.si_code = SI_KERNEL;
    note_add(n, NT_SIGINFO, &si, sizeof(si));
}

static void note_auxv(struct vbuf *n, struct proxy_process *p)
{
    uint8_t auxv[64 * 16];
    size_t len = proxy_fs_saved_auxv(p, auxv, sizeof(auxv));
    if (len)
        note_add(n, NT_AUXV, auxv, len);
}

/* NT_FILE: count, page size, (start, end, file offset in pages) per file
 * mapping, then their names, as gdb reads it to find the libraries. */
static void note_file(struct vbuf *n, struct proxy_process *p)
{
    struct vbuf f = {0};
    uint64_t count = 0, page = CORE_PAGE;
    for (struct vmm_vma *v = vmm_as_next_vma(p->as, 0); v;
         v = vmm_as_next_vma(p->as, v->end))
        count += (v->flags & VMM_VMA_FILE) && v->name && v->name[0] == '/';
    notes_put(&f, &count, sizeof(count));
    notes_put(&f, &page, sizeof(page));
    for (struct vmm_vma *v = vmm_as_next_vma(p->as, 0); v;
         v = vmm_as_next_vma(p->as, v->end))
        if ((v->flags & VMM_VMA_FILE) && v->name && v->name[0] == '/') {
            uint64_t e[3] = {v->start, v->end, v->file_off / CORE_PAGE};
            notes_put(&f, e, sizeof(e));
        }
    /* the names, NUL-terminated one after another, unpadded */
    for (struct vmm_vma *v = vmm_as_next_vma(p->as, 0); v && !f.failed;
         v = vmm_as_next_vma(p->as, v->end))
        if ((v->flags & VMM_VMA_FILE) && v->name && v->name[0] == '/') {
            vb_put(&f, v->name, strlen(v->name) + 1);
        }
    if (!f.failed)
        note_add(n, NT_FILE, f.s, f.len);
    free(f.s);
}

/* Bytes of v the core holds (coredump_filter 0x33, above). */
static uint64_t dump_size(struct proxy_process *p, const struct vmm_vma *v)
{
    uint64_t size = v->end - v->start;
    if (v->flags & VMM_VMA_SECRET)
        return 0;
    if (v->flags & VMM_VMA_SPECIAL)
        return v->name && !strcmp(v->name, "[vdso]") ? size : 0;
    if (!(v->flags & VMM_VMA_FILE)) /* anonymous, private or shared */
        return v->prot == PROT_NONE ? 0 : size;
    if (v->flags & VMM_VMA_SHARED)
        return 0; /* a shared file mapping: the file has it */
    /* written pages (anon_vma): writable data, and a read-only part that
     * was written first (RELRO); code is never written, so not dumped */
    if ((v->prot & PROT_WRITE) ||
        (!(v->prot & PROT_EXEC) && !(v->flags & VMM_VMA_DIRECT)))
        return size;
    unsigned char head[SELFMAG];
    if (v->file_off == 0 && (v->prot & PROT_READ) &&
        proxy_copy_in(p, head, v->start, sizeof(head)) == 0 &&
        !memcmp(head, ELFMAG, SELFMAG))
        return CORE_PAGE;
    return 0;
}

static int core_flags(int prot)
{
    return ((prot & PROT_READ) ? PF_R : 0) | ((prot & PROT_WRITE) ? PF_W : 0) |
           ((prot & PROT_EXEC) ? PF_X : 0);
}

/* Writes len bytes of v's memory at file offset off: a page that cannot
 * be read is left as zeros, a page of zeros as a hole (Linux leaves pages
 * never touched so). *budget is what RLIMIT_CORE still allows: only bytes
 * written count against it, as dump_emit counts them (a hole does not). */
static bool write_memory(struct proxy_process *p, int fd, gva_t at,
                         uint64_t len, uint64_t off, uint64_t *budget)
{
    static const uint8_t zero[CORE_PAGE];
    uint8_t page[CORE_PAGE];
    for (uint64_t done = 0; done < len; done += CORE_PAGE) {
        if (proxy_copy_in(p, page, at + done, CORE_PAGE) < 0 ||
            !memcmp(page, zero, CORE_PAGE))
            continue;
        if (*budget < CORE_PAGE)
            return false;
        if (pwrite(fd, page, CORE_PAGE, (off_t)(off + done)) != CORE_PAGE)
            return false;
        *budget -= CORE_PAGE;
    }
    return true;
}

/* The core into fd, cut where RLIMIT_CORE's limit falls (only written
 * bytes count). As Linux's elf_core_dump, the process has dumped core once
 * its notes were gathered, whether or not all of it fit: true then. */
static bool write_core(struct proxy_process *p, int fd, int signo,
                       uint64_t limit)
{
    struct vbuf n = {0};
    struct proxy_thread *first = &p->threads[p->cur];
    note_prstatus(&n, p, first, signo, true);
    note_prpsinfo(&n, p);
    note_siginfo(&n, signo);
    note_auxv(&n, p);
    note_file(&n, p);
    note_fpregs(&n, p, first);
    for (int i = 0; i < p->nr_threads; i++) {
        struct proxy_thread *t = &p->threads[i];
        if (i == p->cur || t->state == PROXY_THREAD_EXITED)
            continue;
        note_prstatus(&n, p, t, signo, false);
        note_fpregs(&n, p, t);
    }
    size_t nvmas = 0;
    for (struct vmm_vma *v = vmm_as_next_vma(p->as, 0); v;
         v = vmm_as_next_vma(p->as, v->end))
        nvmas++;
    Elf64_Phdr *ph = calloc(nvmas + 1, sizeof(*ph));
    bool ok = ph && !n.failed;
    uint64_t off = sizeof(Elf64_Ehdr) + (nvmas + 1) * sizeof(Elf64_Phdr);
    if (ok) {
        ph[0] = (Elf64_Phdr){.p_type = PT_NOTE, .p_offset = off,
                             .p_filesz = n.len, .p_align = 4};
        off = (off + n.len + CORE_PAGE - 1) & ~(CORE_PAGE - 1);
        size_t i = 1;
        for (struct vmm_vma *v = vmm_as_next_vma(p->as, 0); v;
             v = vmm_as_next_vma(p->as, v->end), i++) {
            uint64_t size = dump_size(p, v);
            ph[i] = (Elf64_Phdr){.p_type = PT_LOAD, .p_flags = core_flags(v->prot),
                                 .p_offset = off, .p_vaddr = v->start,
                                 .p_filesz = size, .p_memsz = v->end - v->start,
                                 .p_align = CORE_PAGE};
            off += size;
        }
    }
    if (ok) {
        /* The headers and notes as one blob, cut where RLIMIT_CORE cuts. */
        size_t phbytes = (nvmas + 1) * sizeof(Elf64_Phdr);
        size_t head = sizeof(Elf64_Ehdr) + phbytes + n.len;
        uint8_t *blob = calloc(1, head);
        if (blob) {
            Elf64_Ehdr *eh = (Elf64_Ehdr *)blob;
            *eh = (Elf64_Ehdr){.e_type = ET_CORE, .e_machine = EM_X86_64,
                               .e_version = EV_CURRENT, .e_phoff = sizeof(*eh),
                               .e_ehsize = sizeof(*eh),
                               .e_phentsize = sizeof(Elf64_Phdr),
                               .e_phnum = (Elf64_Half)(nvmas + 1)};
            memcpy(eh->e_ident, ELFMAG, SELFMAG);
            eh->e_ident[EI_CLASS] = ELFCLASS64;
            eh->e_ident[EI_DATA] = ELFDATA2LSB;
            eh->e_ident[EI_VERSION] = EV_CURRENT;
            eh->e_ident[EI_OSABI] = ELFOSABI_NONE;
            memcpy(blob + sizeof(*eh), ph, phbytes);
            memcpy(blob + sizeof(*eh) + phbytes, n.s, n.len);
            size_t put = head < limit ? head : (size_t)limit;
            uint64_t budget = limit - put;
            bool whole = pwrite(fd, blob, put, 0) == (ssize_t)put && put == head;
            size_t i = 1;
            for (struct vmm_vma *v = vmm_as_next_vma(p->as, 0); whole && v;
                 v = vmm_as_next_vma(p->as, v->end), i++)
                whole = write_memory(p, fd, v->start, ph[i].p_filesz,
                                     ph[i].p_offset, &budget);
            if (whole && ftruncate(fd, (off_t)off) < 0)
                whole = false;
            free(blob);
        }
    }
    free(ph);
    free(n.s);
    return ok;
}

/* ---- the name ------------------------------------------------------------ */

static bool read_host_line(const char *path, char *out, size_t len)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    bool ok = fgets(out, (int)len, f) != NULL;
    fclose(f);
    out[strcspn(out, "\n")] = '\0';
    return ok;
}

static void put_str(char *out, size_t len, size_t *at, const char *s)
{
    for (; *s && *at + 1 < len; s++)
        out[(*at)++] = *s;
    out[*at] = '\0';
}

/* core_pattern expanded (format_corename); false for a pipe or nothing. */
static bool core_name(struct proxy_process *p, int signo, char *out,
                      size_t len)
{
    char pat[256], num[64];
    if (!read_host_line("/proc/sys/kernel/core_pattern", pat, sizeof(pat)) ||
        !pat[0] || pat[0] == '|')
        return false;
    size_t at = 0;
    bool has_pid = false;
    out[0] = '\0';
    for (const char *c = pat; *c; c++) {
        if (*c != '%' || !c[1]) {
            char one[2] = {*c, 0};
            put_str(out, len, &at, one);
            continue;
        }
        num[0] = '\0';
        switch (*++c) {
        case '%': snprintf(num, sizeof(num), "%%"); break;
        case 'p': case 'P': snprintf(num, sizeof(num), "%d", p->pid); has_pid = true; break;
        case 'i': case 'I': snprintf(num, sizeof(num), "%d", p->threads[p->cur].tid); break;
        case 'u': snprintf(num, sizeof(num), "%u", p->cred.euid); break;
        case 'g': snprintf(num, sizeof(num), "%u", p->cred.egid); break;
        case 's': snprintf(num, sizeof(num), "%d", signo); break;
        case 'c': snprintf(num, sizeof(num), "%llu", (unsigned long long)p->rlimits[RLIMIT_CORE].rlim_cur); break;
        case 't': {
            struct timespec ts;
            det_clock_gettime(p->det, CLOCK_REALTIME, &ts);
            snprintf(num, sizeof(num), "%lld", (long long)ts.tv_sec);
            break;
        }
        case 'e': snprintf(num, sizeof(num), "%.16s", p->comm); break;
        case 'E': {
            put_str(out, len, &at, p->exe_path);
            for (size_t k = at - strlen(p->exe_path); k < at; k++)
                if (out[k] == '/')
                    out[k] = '!';
            break;
        }
        default: break; /* unknown: dropped, as Linux does */
        }
        put_str(out, len, &at, num);
    }
    char uses_pid[8];
    if (!has_pid && read_host_line("/proc/sys/kernel/core_uses_pid", uses_pid,
                                   sizeof(uses_pid)) && uses_pid[0] == '1') {
        snprintf(num, sizeof(num), ".%d", p->pid);
        put_str(out, len, &at, num);
    }
    return out[0] != '\0';
}

bool proxy_core_dump(struct proxy_process *p, int signo)
{
    uint64_t limit = p->rlimits[RLIMIT_CORE].rlim_cur;
    char name[PROXY_PATH_MAX];
    if (limit < CORE_PAGE || !p->prctl.dumpable || !p->as || !p->nr_threads ||
        !core_name(p, signo, name, sizeof(name)))
        return false;
    const struct proxy_process *was = proxy_fscred_suspend();
    proxy_fscred_enter(p);
    struct host_path hp;
    bool dumped = false;
    if (proxy_fs_host_path_str(p, name, false, &hp) == 0) {
        unlinkat(hp.dirfd, hp.path, 0);
        int fd = openat(hp.dirfd, hp.path,
                        O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC,
                        0600 & ~p->fs.umask);
        if (fd >= 0) {
            proxy_meta_note_created(p, hp.dirfd, hp.path);
            dumped = write_core(p, fd, signo, limit);
            close(fd);
        }
    }
    proxy_fscred_leave();
    proxy_fscred_resume(was);
    return dumped;
}
