/*
 * ro_backing_write.c - guest writes to memory whose host backing is
 * read-only, each the way Linux refuses it: mprotect adding write is
 * EACCES/EPERM where the mapping may never be written (VM_MAYWRITE), and
 * the write itself is a catchable SIGSEGV SEGV_ACCERR (SIGBUS BUS_ADRERR
 * past a shared file's end) at the address written. Ways in: a shared
 * mapping of an O_RDONLY reopen through /proc/self/fd, of a memfd sealed
 * F_SEAL_WRITE or F_SEAL_FUTURE_WRITE, SysV shm attached SHM_RDONLY,
 * PROT_NONE then write, mremap of such a mapping, MADV_DONTNEED on it,
 * [vvar] and [vdso], a shared file shrunk by fallocate
 * (FALLOC_FL_COLLAPSE_RANGE) under its mapping. hvrun once ended the run with "KVM_RUN failed: Bad
 * address" (exit 125) when a guest write reached a read-only host page.
 * Run natively and under hvrun, the output must match.
 */
#define _GNU_SOURCE
#include "guest_check.h"

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

#define PAGE 4096

static sigjmp_buf env;
static volatile sig_atomic_t got_sig, got_code;
static void *volatile got_addr;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    got_sig = sig;
    got_code = si->si_code;
    got_addr = si->si_addr;
    siglongjmp(env, 1);
}

/* Writes one byte at p and prints what happened. */
static void try_write(const char *what, volatile char *p)
{
    got_sig = 0;
    if (sigsetjmp(env, 1) == 0) {
        *p = 'w';
        printf("%s: wrote\n", what);
        return;
    }
    printf("%s: signal %d code %d at %s\n", what, (int)got_sig,
           (int)got_code, got_addr == (void *)p ? "the address" : "elsewhere");
}

static void try_protect(const char *what, void *p, size_t len, int prot)
{
    int rc = mprotect(p, len, prot);
    printf("%s: %s\n", what, rc < 0 ? strerror(errno) : "ok");
}

static void map_result(const char *what, void *m)
{
    printf("%s: %s\n", what, m == MAP_FAILED ? strerror(errno) : "ok");
}

static void reopened_read_only(int rw)
{
    char link[64];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", rw);
    int ro = open(link, O_RDONLY);
    CHECK(ro >= 0);
    char *s = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, ro, 0);
    CHECK(s != MAP_FAILED);
    try_protect("reopen O_RDONLY mprotect RW", s, PAGE, PROT_READ | PROT_WRITE);
    try_write("reopen O_RDONLY write", s);
    try_protect("reopen PROT_NONE", s, PAGE, PROT_NONE);
    try_protect("reopen NONE->W", s, PAGE, PROT_WRITE);
    try_protect("reopen NONE->R", s, PAGE, PROT_READ);
    CHECK(madvise(s, PAGE, MADV_DONTNEED) == 0);
    printf("after DONTNEED reads '%c'\n", s[0]);
    try_write("after DONTNEED write", s);
    char *m = mremap(s, PAGE, 2 * PAGE, MREMAP_MAYMOVE);
    CHECK(m != MAP_FAILED);
    try_protect("mremapped mprotect RW", m, PAGE, PROT_READ | PROT_WRITE);
    try_write("mremapped write", m);
    munmap(m, 2 * PAGE);
    close(ro);
}

static void past_eof(int rw)
{
    char *s = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, rw, 0);
    CHECK(s != MAP_FAILED);
    try_write("shared write in file", s);
    try_write("shared write past EOF", s + PAGE);
    munmap(s, 2 * PAGE);
}

/* FALLOC_FL_COLLAPSE_RANGE shrinks the file under a shared mapping:
 * the pages past the new end are SIGBUS (hvrun once did not look at the
 * size again, and KVM_RUN failed with EFAULT at the write). */
static void collapsed(void)
{
    char path[] = "/tmp/hvrun-ro-collapse-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    unlink(path);
    char buf[3 * PAGE];
    memset(buf, 'c', sizeof(buf));
    CHECK(write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf));
    char *s = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(s != MAP_FAILED);
    s[2 * PAGE] = 'x';
    int rc = fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, 0, 2 * PAGE);
    printf("collapse: %s\n", rc < 0 ? strerror(errno) : "ok");
    try_write("write past collapsed end", s + 2 * PAGE);
    try_write("write past collapsed end 2", s + PAGE);
    try_write("write in collapsed file", s);
    munmap(s, 3 * PAGE);
    close(fd);
}

static void sealed(const char *what, unsigned seal)
{
    char name[64];
    int fd = memfd_create("ro_backing", MFD_ALLOW_SEALING);
    CHECK(fd >= 0);
    CHECK(ftruncate(fd, PAGE) == 0);
    CHECK(fcntl(fd, F_ADD_SEALS, seal) == 0);
    snprintf(name, sizeof(name), "%s mmap RW", what);
    map_result(name, mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    char *s = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 0);
    snprintf(name, sizeof(name), "%s mmap R", what);
    map_result(name, s);
    if (s != MAP_FAILED) {
        snprintf(name, sizeof(name), "%s mprotect RW", what);
        try_protect(name, s, PAGE, PROT_READ | PROT_WRITE);
        snprintf(name, sizeof(name), "%s write", what);
        try_write(name, s);
        munmap(s, PAGE);
    }
    char *pv = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
    CHECK(pv != MAP_FAILED);
    snprintf(name, sizeof(name), "%s private mprotect RW", what);
    try_protect(name, pv, PAGE, PROT_READ | PROT_WRITE);
    snprintf(name, sizeof(name), "%s private write", what);
    try_write(name, pv);
    munmap(pv, PAGE);
    close(fd);
}

static void shm_read_only(void)
{
    int id = shmget(IPC_PRIVATE, PAGE, IPC_CREAT | 0600);
    CHECK(id >= 0);
    char *s = shmat(id, NULL, SHM_RDONLY);
    CHECK(s != (void *)-1);
    try_protect("shm SHM_RDONLY mprotect RW", s, PAGE, PROT_READ | PROT_WRITE);
    try_write("shm SHM_RDONLY write", s);
    CHECK(shmdt(s) == 0);
    CHECK(shmctl(id, IPC_RMID, NULL) == 0);
}

/* The [vvar]/[vdso] mappings' addresses from /proc/self/maps. */
static char *find_mapping(const char *name)
{
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL);
    char line[512];
    unsigned long lo = 0;
    while (fgets(line, sizeof(line), f))
        if (strstr(line, name)) {
            lo = strtoul(line, NULL, 16);
            break;
        }
    fclose(f);
    return (char *)lo;
}

static void specials(void)
{
    char *vvar = find_mapping("[vvar]");
    char *vdso = find_mapping("[vdso]");
    CHECK(vvar && vdso);
    try_write("vvar write", vvar);
    try_protect("vvar mprotect RW", vvar, PAGE, PROT_READ | PROT_WRITE);
    try_write("vdso write", vdso);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    struct sigaction sa = {.sa_sigaction = on_fault, .sa_flags = SA_SIGINFO};
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);

    char path[] = "/tmp/hvrun-ro-backing-XXXXXX";
    int rw = mkstemp(path);
    CHECK(rw >= 0);
    char page[PAGE];
    memset(page, 'a', sizeof(page));
    CHECK(write(rw, page, sizeof(page)) == (ssize_t)sizeof(page));
    reopened_read_only(rw);
    past_eof(rw);
    unlink(path);
    close(rw);
    collapsed();
    sealed("F_SEAL_WRITE", F_SEAL_WRITE);
    sealed("F_SEAL_FUTURE_WRITE", F_SEAL_FUTURE_WRITE);
    shm_read_only();
    specials();
    return 0;
}
