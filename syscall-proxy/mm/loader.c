/*
 * loader.c - execve's image builder: ELF (static, PIE, non-PIE) with the
 * checks and errors of Linux's binfmt_elf, its PT_INTERP, `#!` scripts, and the initial stack.
 *
 * Layout without randomisation, as Linux gives it: a PIE at 0x555555554000,
 * a non-PIE at its link address, the interpreter top-down below
 * 0x7ffff7fff000, the stack ending at 0x7ffffffff000, brk right after the
 * program's highest segment.
 */
#include "proxy.h"
#include "fdtable.h"
#include "hooks.h"
#include "kernel.h"
#include "mm.h"
#include "internal.h"
#include "config.h"
#include "cpuid_patch.h"
#include "loader.h"
#include "run_clock.h"

#include <errno.h>
#include <fcntl.h>
#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "det.h"

#define STACK_BUILD_BYTES (2ULL << 20) /* argv+envp limit: 8 MiB stack / 4 */
/* exec_binprm allows 5 rewrites (#! scripts) before the final image. */
#define MAX_SCRIPT_DEPTH 5
#define ELF_MAX_PHDR_BYTES 65536 /* load_elf_phdrs' bound on e_phnum */

struct why {
    char *buf;
    size_t len;
};

static int say(struct why *w, int err, const char *path, const char *what)
{
    if (w->buf && w->len)
        snprintf(w->buf, w->len, "%s: %s", path, what);
    return err;
}

static int prot_of(uint32_t pflags)
{
    return ((pflags & PF_R) ? PROT_READ : 0) |
           ((pflags & PF_W) ? PROT_WRITE : 0) |
           ((pflags & PF_X) ? PROT_EXEC : 0);
}

/* pread of exactly len bytes: a short read is -EIO (binfmt_elf's elf_read). */
static int read_exact(int fd, void *buf, size_t len, uint64_t off)
{
    if (off > (uint64_t)INT64_MAX - len)
        return -EIO;
    ssize_t n = pread(fd, buf, len, (off_t)off);
    if (n < 0)
        return -errno;
    return (size_t)n == len ? 0 : -EIO;
}

/* Reads [off, off+len) of fd into guest memory at gva (loader writes
 * ignore PROT_WRITE: the segment is not yet protected). */
static int read_segment(struct vmm_aspace *as, int fd, gva_t gva,
                        uint64_t off, uint64_t len)
{
    if (off > (uint64_t)INT64_MAX - len)
        return -EIO;
    while (len > 0) {
        struct iovec iov[8];
        size_t covered;
        int n = vmm_as_host_iov(as, gva, len, 0, iov, 8, &covered);
        if (n == 0)
            return -EFAULT;
        ssize_t got = proxy_mm_read_file_into(as, fd, true, iov, n, off);
        if (got < 0)
            return -errno;
        if (got == 0)
            return -EIO; /* file shorter than p_filesz */
        gva += (uint64_t)got;
        off += (uint64_t)got;
        len -= (uint64_t)got;
    }
    return 0;
}

/* The checks load_elf_binary makes of a main program's header, in its
 * order; all fail with -ENOEXEC. (Linux does not look at EI_CLASS; hvrun
 * runs only 64-bit images and says so.) */
static int check_ehdr(const Elf64_Ehdr *eh, struct why *w, const char *path)
{
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
        return say(w, -ENOEXEC, path, "not an ELF executable");
    if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
        return say(w, -ENOEXEC, path,
                   "ELF is not an executable or shared object");
    if (eh->e_machine != EM_X86_64)
        return say(w, -ENOEXEC, path,
                   "ELF for another architecture (not x86-64)");
    if (eh->e_ident[EI_CLASS] != ELFCLASS64)
        return say(w, -ENOEXEC, path,
                   "not a 64-bit ELF (hvrun runs x86-64 programs)");
    return 0;
}

/* The program headers (load_elf_phdrs): exactly Elf64_Phdr sized, at
 * least one and at most 64 KiB of them, all in the file. */
static int read_phdrs(int fd, const Elf64_Ehdr *eh, struct proxy_elf_image *im,
                      struct why *w, const char *path)
{
    size_t bytes = (size_t)eh->e_phnum * sizeof(Elf64_Phdr);
    if (eh->e_phentsize != sizeof(Elf64_Phdr))
        return say(w, -ENOEXEC, path, "e_phentsize is not 56");
    if (bytes == 0 || bytes > ELF_MAX_PHDR_BYTES)
        return say(w, -ENOEXEC, path, "no or too many program headers");
    im->ph = malloc(bytes);
    if (!im->ph)
        return -ENOMEM;
    im->phnum = eh->e_phnum;
    if (read_exact(fd, im->ph, bytes, eh->e_phoff) < 0)
        return say(w, -ENOEXEC, path, "program headers past the end of file");
    return 0;
}

/* The first PT_INTERP's path: 2..PATH_MAX bytes, NUL-terminated. */
static int read_interp_path(int fd, struct proxy_elf_image *im, struct why *w,
                            const char *path)
{
    for (size_t i = 0; i < im->phnum; i++) {
        const Elf64_Phdr *ph = &im->ph[i];
        if (ph->p_type != PT_INTERP)
            continue;
        if (ph->p_filesz > PROXY_PATH_MAX || ph->p_filesz < 2)
            return say(w, -ENOEXEC, path, "PT_INTERP of a bad size");
        int rc = read_exact(fd, im->interp, ph->p_filesz, ph->p_offset);
        if (rc < 0)
            return say(w, rc, path, "PT_INTERP past the end of file");
        if (im->interp[ph->p_filesz - 1] != 0) {
            im->interp[0] = 0;
            return say(w, -ENOEXEC, path, "PT_INTERP not NUL-terminated");
        }
        return 0;
    }
    return 0;
}

/* The PT_LOADs in address order (Linux maps them in any order). */
static int by_vaddr(const void *a, const void *b)
{
    const Elf64_Phdr *x = *(const Elf64_Phdr *const *)a;
    const Elf64_Phdr *y = *(const Elf64_Phdr *const *)b;
    return x->p_vaddr < y->p_vaddr ? -1 : x->p_vaddr > y->p_vaddr;
}

static size_t sorted_loads(const struct proxy_elf_image *im,
                           const Elf64_Phdr **out)
{
    size_t n = 0;
    for (size_t i = 0; i < im->phnum; i++)
        if (im->ph[i].p_type == PT_LOAD)
            out[n++] = &im->ph[i];
    qsort(out, n, sizeof(*out), by_vaddr);
    return n;
}

/* Span of PT_LOAD segments: [lo, hi) page aligned, and the max alignment. */
static int load_span(const struct proxy_elf_image *im, gva_t *lo, gva_t *hi,
                     uint64_t *align)
{
    *lo = UINT64_MAX;
    *hi = 0;
    *align = VMM_PAGE_SIZE;
    for (size_t i = 0; i < im->phnum; i++) {
        const Elf64_Phdr *ph = &im->ph[i];
        if (ph->p_type != PT_LOAD)
            continue;
        if (ph->p_memsz < ph->p_filesz ||
            ph->p_vaddr + ph->p_memsz < ph->p_vaddr ||
            ph->p_vaddr + ph->p_memsz > PROXY_STACK_TOP)
            return -ENOEXEC;
        gva_t s = ph->p_vaddr & VMM_PAGE_MASK;
        gva_t e = VMM_PAGE_ALIGN_UP(ph->p_vaddr + ph->p_memsz);
        if (s < *lo)
            *lo = s;
        if (e > *hi)
            *hi = e;
        /* Non-powers of two are ignored (maximum_alignment). */
        if (ph->p_align > *align && (ph->p_align & (ph->p_align - 1)) == 0 &&
            ph->p_align <= PROXY_PIE_BASE)
            *align = ph->p_align;
    }
    return *hi > *lo ? 0 : -ENOEXEC;
}

static int choose_bias(struct vmm_aspace *as, gva_t mmap_base,
                       const Elf64_Ehdr *eh, bool is_interp, bool has_interp,
                       gva_t lo, gva_t hi, uint64_t align, gva_t *bias)
{
    if (eh->e_type == ET_EXEC) {
        *bias = 0;
        return 0;
    }
    if (!is_interp && has_interp) {
        /* ELF_ET_DYN_BASE, aligned to the largest p_align like Linux. */
        *bias = (PROXY_PIE_BASE & ~(align - 1)) - lo;
        return 0;
    }
    /* The interpreter (or a PIE without one) goes where mmap would. */
    if (hi - lo > PROXY_STACK_TOP - align)
        return -ENOMEM;
    gva_t at;
    int rc = vmm_as_find_free(as, hi - lo + align, mmap_base, &at);
    if (rc < 0)
        return rc;
    at = (at + align - 1) & ~(align - 1);
    *bias = at - lo;
    return 0;
}

/* A segment whose pages map its file as they are (VMM_VMA_DIRECT), not
 * read into guest memory: one the program may not write, all file (no
 * bss), sharing no page with another segment (where the later one's
 * bytes win). */
static bool maps_file_itself(const struct proxy_elf_image *im,
                             const Elf64_Phdr *ph)
{
    if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W) ||
        ph->p_memsz != ph->p_filesz || ph->p_filesz == 0 ||
        ((ph->p_vaddr ^ ph->p_offset) & ~VMM_PAGE_MASK))
        return false;
    gva_t s = ph->p_vaddr & VMM_PAGE_MASK;
    gva_t e = VMM_PAGE_ALIGN_UP(ph->p_vaddr + ph->p_memsz);
    for (size_t j = 0; j < im->phnum; j++) {
        const Elf64_Phdr *o = &im->ph[j];
        if (o == ph || o->p_type != PT_LOAD)
            continue;
        gva_t os = o->p_vaddr & VMM_PAGE_MASK;
        gva_t oe = VMM_PAGE_ALIGN_UP(o->p_vaddr + o->p_memsz);
        if (os < e && s < oe)
            return false;
    }
    return true;
}

/*
 * Whether a PT_LOAD's bss, [va + filesz, va + memsz), may hold bytes: the
 * span's backing is fresh (vmm_as_map: zeroed), so only an earlier
 * segment's file bytes read there can be in it. Zeroing what is zero
 * already would be hvrun's first write of each bss page (a host page
 * fault of ~20-45 us each on a host with shadowed page tables; /bin/sh's
 * bss is two whole pages), for pages the guest may never touch.
 */
static bool bss_written(const struct proxy_elf_image *im, size_t i)
{
    const Elf64_Phdr *ph = &im->ph[i];
    gva_t z0 = ph->p_vaddr + ph->p_filesz, z1 = ph->p_vaddr + ph->p_memsz;
    for (size_t j = 0; j < i; j++) {
        const Elf64_Phdr *o = &im->ph[j];
        if (o->p_type != PT_LOAD || maps_file_itself(im, o))
            continue;
        if (o->p_vaddr < z1 && z0 < o->p_vaddr + o->p_filesz)
            return true;
    }
    return false;
}

/* Maps [lo, hi) and unmaps the holes between segments (in address order),
 * fills each PT_LOAD from the file and zeroes its bss where an earlier
 * segment put bytes (the rest is fresh), in header order (a
 * later segment overlapping an earlier one wins, as with Linux's
 * MAP_FIXED mappings), then applies the protections, again in order. */
static int map_segments(struct vmm_aspace *as, struct proxy_process *p,
                        int fd, const char *path, const struct stat *st,
                        struct proxy_elf_image *im, gva_t lo, gva_t hi)
{
    gva_t base = im->bias + lo, end = im->bias + hi;
    if (base < lo || end < base || end > PROXY_STACK_TOP)
        return -ENOMEM;
    int rc = vmm_as_map(as, base, hi - lo, PROT_READ | PROT_WRITE, 0, NULL);
    if (rc < 0)
        return rc;
    const Elf64_Phdr **loads = malloc(im->phnum * sizeof(*loads));
    if (!loads)
        return -ENOMEM;
    size_t n = sorted_loads(im, loads);
    gva_t covered_to = base;
    for (size_t i = 0; i < n; i++) {
        gva_t s = (im->bias + loads[i]->p_vaddr) & VMM_PAGE_MASK;
        gva_t e = VMM_PAGE_ALIGN_UP(im->bias + loads[i]->p_vaddr +
                                    loads[i]->p_memsz);
        /* A hole between segments is not mapped, as with the kernel. */
        if (s > covered_to)
            vmm_as_unmap(as, covered_to, s - covered_to);
        if (e > covered_to)
            covered_to = e;
    }
    free(loads);
    for (size_t i = 0; rc == 0 && i < im->phnum; i++) {
        const Elf64_Phdr *ph = &im->ph[i];
        if (ph->p_type != PT_LOAD || maps_file_itself(im, ph))
            continue;
        gva_t va = im->bias + ph->p_vaddr;
        rc = read_segment(as, fd, va, ph->p_offset, ph->p_filesz);
        if (rc == 0 && ph->p_memsz > ph->p_filesz && bss_written(im, i))
            rc = vmm_as_fill_zero(as, va + ph->p_filesz,
                                  ph->p_memsz - ph->p_filesz);
    }
    for (size_t i = 0; rc == 0 && i < im->phnum; i++) {
        const Elf64_Phdr *ph = &im->ph[i];
        if (ph->p_type != PT_LOAD)
            continue;
        gva_t va = im->bias + ph->p_vaddr;
        gva_t s = va & VMM_PAGE_MASK, e = VMM_PAGE_ALIGN_UP(va + ph->p_memsz);
        vmm_as_set_file(as, s, e - s, ph->p_offset & VMM_PAGE_MASK,
                        st->st_dev, st->st_ino, path);
        /* A segment all of whose pages come from the file keeps it, as a
         * private mmap does (MADV_DONTNEED reads them again); one with
         * bss pages of its own is not all file (Linux maps those
         * anonymous). */
        if (VMM_PAGE_ALIGN_UP(va + ph->p_filesz) >= e &&
            (rc = vmm_as_keep_file(as, s, e - s, fd)) < 0)
            break;
        rc = vmm_as_protect(as, s, e - s, prot_of(ph->p_flags));
        /* Not read above: its file's pages, or a copy if the view
         * cannot map the file. */
        if (rc == 0 && maps_file_itself(im, ph) &&
            vmm_as_map_direct(as, s, e - s) < 0)
            rc = read_segment(as, fd, va, ph->p_offset, ph->p_filesz);
        if (rc == 0 && p && (ph->p_flags & PF_X))
            proxy_cpuid_patch_fresh(p, fd, s, e - s);
    }
    return rc;
}

static void read_headers(const Elf64_Ehdr *eh, struct proxy_elf_image *im)
{
    im->exec_stack = true; /* no PT_GNU_STACK: executable, as Linux */
    im->phent = sizeof(Elf64_Phdr);
    for (size_t i = 0; i < im->phnum; i++) {
        const Elf64_Phdr *ph = &im->ph[i];
        if (ph->p_type == PT_PHDR)
            im->phdr = im->bias + ph->p_vaddr;
        if (ph->p_type == PT_GNU_STACK)
            im->exec_stack = (ph->p_flags & PF_X) != 0;
        if (ph->p_type == PT_LOAD && !im->phdr && ph->p_offset <= eh->e_phoff &&
            eh->e_phoff - ph->p_offset < ph->p_filesz)
            im->phdr = im->bias + ph->p_vaddr + (eh->e_phoff - ph->p_offset);
    }
}

static bool has_interp(const struct proxy_elf_image *im)
{
    for (size_t i = 0; i < im->phnum; i++)
        if (im->ph[i].p_type == PT_INTERP)
            return true;
    return false;
}

/* An interpreter's own header (after open_exec): shorter than an ELF
 * header is -EIO, not an x86-64 ELF -ELIBBAD (load_elf_binary). */
static int check_interp_ehdr(int fd, const char *path, struct why *w)
{
    Elf64_Ehdr eh;
    int rc = read_exact(fd, &eh, sizeof(eh), 0);
    if (rc < 0)
        return say(w, rc, path, "ELF interpreter shorter than an ELF header");
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_machine != EM_X86_64)
        return say(w, -ELIBBAD, path, "ELF interpreter is not an x86-64 ELF");
    return 0;
}

void proxy_elf_image_free(struct proxy_elf_image *im)
{
    free(im->ph);
    im->ph = NULL;
}

int proxy_elf_load(struct vmm_aspace *as, struct proxy_process *p,
                   gva_t mmap_base, int fd, const char *path, bool is_interp,
                   struct proxy_elf_image *im, char *why, size_t why_len)
{
    struct why wh = {why, why_len}, *w = &wh;
    memset(im, 0, sizeof(*im));
    struct stat st;
    if (fstat(fd, &st) < 0)
        return say(w, -errno, path, strerror(errno));
    if (p)
        /* a replay's copy: as recorded */
        proxy_hooks.file_tap_restat(p, &st);
    Elf64_Ehdr eh;
    memset(&eh, 0, sizeof(eh)); /* a short file: zeros, as bprm->buf */
    if (pread(fd, &eh, sizeof(eh), 0) < 0)
        return say(w, -errno, path, strerror(errno));
    int rc = check_ehdr(&eh, w, path);
    if (rc == 0)
        rc = read_phdrs(fd, &eh, im, w, path);
    if (rc == 0 && !is_interp)
        rc = read_interp_path(fd, im, w, path);
    gva_t lo = 0, hi = 0;
    uint64_t align = VMM_PAGE_SIZE;
    if (rc == 0 && load_span(im, &lo, &hi, &align) < 0)
        rc = say(w, -ENOEXEC, path, "no loadable segments");
    if (rc == 0)
        rc = choose_bias(as, mmap_base, &eh, is_interp, has_interp(im), lo,
                         hi, align, &im->bias);
    if (rc == 0) {
        rc = map_segments(as, p, fd, path, &st, im, lo, hi);
        if (rc < 0)
            say(w, rc, path, "cannot map its segments");
    }
    if (rc == 0) {
        im->entry = im->bias + eh.e_entry;
        im->end = im->bias + hi;
        read_headers(&eh, im);
    }
    return rc;
}

/*
 * Whether a live guest process of the run holds the file (dev, ino) open
 * for writing: exec then fails ETXTBSY (deny_write_access, as
 * i_writecount > 0). hvrun loads the program itself, so the host kernel
 * never makes that check; the run's own descriptions are the ones hvrun
 * can see (a writer outside the run is not, a named host leak).
 */
static bool open_for_write(struct proxy_world *world, dev_t dev, ino_t ino)
{
    for (int i = 0; world && i < world->nr_procs; i++) {
        struct proxy_process *q = world->procs[i];
        if (q->zombie || q->exited)
            continue;
        for (int fd = 0; fd < q->fds.cap; fd++) {
            struct proxy_fd *f = &q->fds.fds[fd];
            /* The identity first: fstat'ed once per open file (kept in
             * the fd), where the access mode costs a host call each time. */
            if (f->kind != PROXY_FD_HOST || !proxy_fd_identity(f) ||
                f->host_dev != dev || f->host_ino != ino)
                continue;
            int fl = fcntl(f->host_fd, F_GETFL);
            if (fl >= 0 && (fl & O_ACCMODE) != O_RDONLY && !(fl & O_PATH))
                return true;
        }
    }
    return false;
}

static int open_exec(struct proxy_process *p, const char *path, struct why *w)
{
    /* O_NONBLOCK: a FIFO must not wait for a writer (it is then refused as
     * not a regular file, EACCES as Linux); a regular file ignores it. */
    int fd = proxy_hooks.file_tap_replayed(p, p->fs.cwd_fd, path, O_RDONLY);
    if (fd >= 0)
        return fd; /* a replay's recorded program: it was executable */
    fd = openat(p->fs.cwd_fd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno == EACCES &&
        faccessat(p->fs.cwd_fd, path, X_OK, AT_EACCESS) == 0) {
        /* Executable but not readable by the guest (mode 0711): the
         * kernel reads such a program for it natively; hvrun reads it
         * with its own ids (kernel/fscred.c). */
        const struct proxy_process *as_guest = proxy_fscred_suspend();
        fd = openat(p->fs.cwd_fd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        int err = errno;
        proxy_fscred_resume(as_guest);
        errno = err;
    }
    if (fd < 0)
        return say(w, -errno, path, strerror(errno));
    proxy_hooks.file_tap_note(p, p->fs.cwd_fd, path, O_RDONLY, fd);
    struct stat st;
    if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
        close(fd);
        return say(w, S_ISDIR(st.st_mode) ? -EACCES : -EACCES, path,
                   S_ISDIR(st.st_mode) ? "is a directory"
                                       : "not a regular file");
    }
    if (faccessat(p->fs.cwd_fd, path, X_OK, AT_EACCESS) < 0) {
        int err = errno;
        close(fd);
        return say(w, -err, path, "not executable (permission denied)");
    }
    if (open_for_write(p->world, st.st_dev, st.st_ino)) {
        close(fd);
        return say(w, -ETXTBSY, path, "open for writing by the run");
    }
    return fd;
}

/* ---- #! scripts ---------------------------------------------------------- */

/* Parses "#!interp [arg]" from the first line, as binfmt_script does. */
static int parse_shebang(const char *buf, size_t n, char *interp,
                         char *arg)
{
    char line[256];
    size_t len = n < sizeof(line) - 1 ? n : sizeof(line) - 1;
    memcpy(line, buf, len);
    line[len] = 0;
    char *nl = strchr(line, '\n');
    if (nl)
        *nl = 0;
    char *s = line + 2;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!*s)
        return -ENOEXEC;
    char *e = s + strcspn(s, " \t");
    char *a = e;
    if (*a) {
        *a++ = 0;
        while (*a == ' ' || *a == '\t')
            a++;
        size_t al = strlen(a);
        while (al > 0 && (a[al - 1] == ' ' || a[al - 1] == '\t'))
            a[--al] = 0;
    }
    snprintf(interp, PROXY_PATH_MAX, "%s", s);
    snprintf(arg, PROXY_PATH_MAX, "%s", a);
    return 0;
}

static char **script_argv(const char *interp, const char *arg,
                          const char *path, char *const argv[])
{
    size_t argc = 0;
    while (argv && argv[argc])
        argc++;
    char **v = calloc(argc + 4, sizeof(char *));
    if (!v)
        return NULL;
    size_t n = 0;
    v[n++] = (char *)interp;
    if (*arg)
        v[n++] = (char *)arg;
    v[n++] = (char *)path;
    for (size_t i = 1; i < argc; i++)
        v[n++] = argv[i];
    return v;
}

/* ---- the whole image ----------------------------------------------------- */

/* Where stack.c put the argv and envp strings: contiguous, argv lowest,
 * envp next, then execfn and the 8 zero bytes at the top. /proc/self/stat,
 * cmdline and environ read these ranges (Linux's mm->arg_start...). */
static void note_arg_env(struct proxy_process *p, const char *execfn,
                         char *const argv[], char *const envp[], gva_t sp)
{
    uint64_t arg_bytes = 0, env_bytes = 0;
    for (size_t i = 0; argv && argv[i]; i++)
        arg_bytes += strlen(argv[i]) + 1;
    for (size_t i = 0; envp && envp[i]; i++)
        env_bytes += strlen(envp[i]) + 1;
    p->mm.env_end = PROXY_STACK_TOP - 8 - (strlen(execfn) + 1);
    p->mm.env_start = p->mm.env_end - env_bytes;
    p->mm.arg_end = p->mm.env_start;
    p->mm.arg_start = p->mm.arg_end - arg_bytes;
    p->mm.start_stack = sp;
}

static int build_stack(struct proxy_process *p, const struct proxy_elf_image *main,
                       const struct proxy_elf_image *interp, const char *execfn,
                       char *const argv[], char *const envp[], gva_t *sp)
{
    uint64_t stack_bytes = p->rlimits[RLIMIT_STACK].rlim_cur;
    if (stack_bytes > (256ULL << 20) || stack_bytes < (128ULL << 10))
        stack_bytes = 8ULL << 20;
    int prot = PROT_READ | PROT_WRITE | (main->exec_stack ? PROT_EXEC : 0);
    int rc = vmm_as_map(p->as, PROXY_STACK_TOP - stack_bytes, stack_bytes,
                        prot, VMM_VMA_STACK, "[stack]");
    if (rc < 0)
        return rc;
    /* Below the interpreter, as Linux places it; without it (no room) the
     * clock calls go to the kernel as syscalls. */
    gva_t vdso = 0;
    if (proxy_vdso_map(p, &vdso) < 0)
        vdso = 0;
    struct proxy_auxv_input ai = {
        .sysinfo_ehdr = vdso,
        .phdr = main->phdr, .phent = main->phent, .phnum = main->phnum,
        .entry = main->entry, .base = interp ? interp->bias : 0,
        .hwcap = p->hwcap, .hwcap2 = p->hwcap2,
        .minsigstksz = PROXY_MINSIGSTKSZ(vmm_vm_xsave_bytes(p->vm)),
        .uid = proxy_ns_uid_seen(p, p->cred.ruid),
        .euid = proxy_ns_uid_seen(p, p->cred.euid),
        .gid = proxy_ns_gid_seen(p, p->cred.rgid),
        .egid = proxy_ns_gid_seen(p, p->cred.egid),
        .secure = 0, .platform = "x86_64", .execfn = execfn};
    det_random_fill(p->det, ai.random, sizeof(ai.random));
    uint8_t *buf = malloc(STACK_BUILD_BYTES);
    if (!buf)
        return -ENOMEM;
    rc = proxy_stack_build(buf, STACK_BUILD_BYTES, PROXY_STACK_TOP, argv,
                           envp, &ai, sp);
    if (rc == 0)
        rc = vmm_as_poke(p->as, *sp,
                         buf + (*sp - (PROXY_STACK_TOP - STACK_BUILD_BYTES)),
                         PROXY_STACK_TOP - *sp);
    if (rc == 0)
        note_arg_env(p, execfn, argv, envp, *sp);
    free(buf);
    return rc;
}

static void set_entry_regs(struct proxy_process *p, gva_t rip, gva_t sp)
{
    struct vmm_regs *r = vmm_vm_regs(p->vm);
    memset(r, 0, sizeof(*r));
    r->rip = rip;
    r->rsp = sp;
    r->rflags = 0x202;
    vmm_vm_set_fs_base(p->vm, 0);
    vmm_vm_set_gs_base(p->vm, 0);
    vmm_vm_enter_user(p->vm);
}

static void set_comm(struct proxy_process *p, const char *path)
{
    const char *base = strrchr(path, '/');
    snprintf(p->comm, sizeof(p->comm), "%s", base ? base + 1 : path);
}

/* /proc/self/exe's target: the opened file's own name, as the kernel
 * records it (one readlink of our fd, where realpath took one a component,
 * and resolved a relative path against hvrun's working directory rather
 * than the guest's). A replay's program comes from its recording: the
 * name it was run by, as that run resolved it. */
static void set_exe_path(struct proxy_process *p, int fd, const char *path)
{
    char link[64];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = p->cfg->file_tap
                    ? -1
                    : readlink(link, p->exe_path, sizeof(p->exe_path) - 1);
    static const char deleted[] = " (deleted)";
    if (n > 0 && p->exe_path[0] == '/' &&
        !((size_t)n >= sizeof(deleted) - 1 &&
          memcmp(p->exe_path + n - (sizeof(deleted) - 1), deleted,
                 sizeof(deleted) - 1) == 0)) {
        p->exe_path[n] = '\0';
        return;
    }
    char *abs = realpath(path, NULL);
    snprintf(p->exe_path, sizeof(p->exe_path), "%s", abs ? abs : path);
    free(abs);
}

/* The main program's interpreter: opened as an executable (open_exec:
 * ENOENT, EACCES), its header checked (EIO, ELIBBAD), then loaded; a
 * header the loader refuses is -ELIBBAD too. */
static int load_interp(struct proxy_process *p, const char *interp_path,
                       struct proxy_elf_image *im, struct why *w)
{
    int ifd = open_exec(p, interp_path, w);
    if (ifd < 0)
        return ifd;
    int rc = check_interp_ehdr(ifd, interp_path, w);
    if (rc == 0)
        rc = proxy_elf_load(p->as, p, p->mm.mmap_base, ifd, interp_path, true,
                            im, w->buf, w->len);
    close(ifd);
    return rc == -ENOEXEC ? -ELIBBAD : rc;
}

static int exec_elf(struct proxy_process *p, int fd, const char *path,
                    const char *execfn, char *const argv[],
                    char *const envp[], struct why *w)
{
    struct proxy_elf_image main_elf, interp_elf;
    memset(&interp_elf, 0, sizeof(interp_elf));
    p->mm.mmap_base = PROXY_MMAP_BASE;
    p->mm.vvar_gva = 0;
    int rc = proxy_elf_load(p->as, p, p->mm.mmap_base, fd, path, false,
                            &main_elf, w->buf, w->len);
    const struct proxy_elf_image *interp = NULL;
    if (rc == 0 && main_elf.interp[0]) {
        rc = load_interp(p, main_elf.interp, &interp_elf, w);
        interp = &interp_elf;
    }
    gva_t sp;
    if (rc == 0) {
        p->mm.brk_start = p->mm.brk_end = main_elf.end;
        rc = build_stack(p, &main_elf, interp, execfn, argv, envp, &sp);
        if (rc < 0)
            say(w, rc, path,
                rc == -E2BIG ? "argument list too long"
                             : "cannot build the initial stack");
    }
    if (rc == 0)
        set_entry_regs(p, interp ? interp->entry : main_elf.entry, sp);
    proxy_elf_image_free(&main_elf);
    proxy_elf_image_free(&interp_elf);
    return rc;
}

/* An interpreter named by a #! line, a guest path: the host's name for it
 * (the private /tmp, /proc/self/...), as execve's own path is rewritten. */
static int interp_host_path(struct proxy_process *p, const char *interp,
                            char *host, struct why *w)
{
    int rc = proxy_hooks.path_rewrite(p, interp, host, PROXY_PATH_MAX);
    return rc < 0 ? say(w, rc, interp, strerror(-rc)) : 0;
}

/* path is the host's name of the file to run, name the guest's (what a
 * script's interpreter is handed in argv, as binfmt_script passes
 * bprm->filename: the guest cannot open hvrun's host-side name). */
static int exec_depth(struct proxy_process *p, const char *path,
                      const char *name, const char *execfn,
                      char *const argv[], char *const envp[], struct why *w,
                      int depth)
{
    if (depth > MAX_SCRIPT_DEPTH)
        return say(w, -ELOOP, path, "too many levels of #! interpreters");
    int fd = open_exec(p, path, w);
    if (fd < 0)
        return fd;
    char head[256];
    ssize_t n = pread(fd, head, sizeof(head), 0);
    int rc;
    if (n >= 2 && head[0] == '#' && head[1] == '!') {
        char *interp = malloc(PROXY_PATH_MAX), *arg = malloc(PROXY_PATH_MAX);
        char *host = malloc(PROXY_PATH_MAX);
        char **v = NULL;
        rc = -ENOMEM;
        if (interp && arg && host) {
            rc = parse_shebang(head, (size_t)n, interp, arg);
            if (rc < 0)
                say(w, rc, path, "empty #! line");
        }
        if (rc == 0)
            rc = interp_host_path(p, interp, host, w);
        if (rc == 0 && !(v = script_argv(interp, arg, name, argv)))
            rc = -ENOMEM;
        if (rc == 0)
            rc = exec_depth(p, host, interp, execfn, v, envp, w, depth + 1);
        free(v);
        free(interp);
        free(arg);
        free(host);
    } else if (n < 4 || memcmp(head, ELFMAG, SELFMAG) != 0) {
        rc = say(w, -ENOEXEC, path,
                 n < 4 ? "not an executable (file too short for ELF)"
                       : "not an ELF executable (no ELF magic, no #!)");
    } else {
        set_comm(p, path);
        set_exe_path(p, fd, path);
        struct stat exe;
        if (fstat(fd, &exe) == 0) {
            p->exe_dev = exe.st_dev;
            p->exe_ino = exe.st_ino;
        }
        rc = exec_elf(p, fd, path, execfn, argv, envp, w);
    }
    close(fd);
    return rc;
}

int proxy_exec_missing(struct proxy_process *p, const char *path)
{
    if (p->cfg->file_tap)
        return 0; /* a replay's program need not be on this host */
    /* O_PATH: the same walk as open_exec's open, with the same errors for
     * the path itself, and nothing opened (no device or FIFO opens). */
    int fd = openat(p->fs.cwd_fd, path, O_PATH | O_CLOEXEC);
    if (fd >= 0) {
        close(fd);
        return 0;
    }
    int err = errno;
    return err == ENOENT || err == ENOTDIR || err == ELOOP ||
                   err == ENAMETOOLONG || err == EACCES
               ? -err
               : 0;
}

int proxy_exec_load(struct proxy_process *p, const char *path,
                    const char *guest_path, char *const argv[],
                    char *const envp[], char *why, size_t why_len)
{
    struct why w = {why, why_len};
    uint64_t t = vmm_clock_now();
    /* AT_EXECFN is the name execve was given (bprm->filename), a script's
     * own too, never the host path it was rewritten to (a private /tmp's
     * random directory). */
    const char *name = guest_path ? guest_path : path;
    int rc = exec_depth(p, path, name, name, argv, envp, &w, 0);
    vmm_clock_add(VMM_CLOCK_EXEC_LOAD, t);
    return rc;
}
