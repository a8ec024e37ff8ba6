/*
 * mm_advice.c - madvise, mprotect and mlock as Linux applies them: what
 * each advice does to the contents (private anonymous, private file,
 * shared), to a forked child (DONTFORK, WIPEONFORK and their undoing),
 * which mappings refuse which advice (mlocked, private, file), and the
 * mapped head of a range with a hole changed before -ENOMEM. Each answer
 * is printed; the runner compares the output with a native run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define PAGE 4096UL

static void report(const char *what, int r)
{
    printf("%s: %s\n", what, r ? strerrorname_np(errno) : "ok");
}

static sigjmp_buf probe_jmp;

static void on_segv(int sig)
{
    (void)sig;
    siglongjmp(probe_jmp, 1);
}

/* 1 when a byte at p can be written (and is left as it was). */
static int writable(volatile char *p)
{
    struct sigaction sa = {.sa_handler = on_segv}, old;
    sigaction(SIGSEGV, &sa, &old);
    int ok = 0;
    if (sigsetjmp(probe_jmp, 1) == 0) {
        char c = *p;
        *p = c;
        ok = 1;
    }
    sigaction(SIGSEGV, &old, NULL);
    return ok;
}

static char *map_anon(size_t pages, int flags)
{
    char *p = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE,
                   flags | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    return p;
}

/* A file of two pages, 'a' then 'b', opened read-write. */
static int make_file(void)
{
    char path[] = "/tmp/mm_advice.XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    unlink(path);
    char buf[2 * PAGE];
    memset(buf, 'a', PAGE);
    memset(buf + PAGE, 'b', PAGE);
    CHECK(write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf));
    return fd;
}

static void check_mprotect_hole(void)
{
    char *b = map_anon(3, MAP_PRIVATE);
    CHECK(munmap(b + PAGE, PAGE) == 0);
    report("mprotect over a hole", mprotect(b, 3 * PAGE, PROT_READ));
    printf("head writable after: %d\n", writable(b));
    printf("tail writable after: %d\n", writable(b + 2 * PAGE));
    report("mprotect from the hole", mprotect(b + PAGE, 2 * PAGE, PROT_READ));
    printf("tail writable then: %d\n", writable(b + 2 * PAGE));
    report("munmap over a hole", munmap(b, 3 * PAGE));
}

static void check_dontneed(int fd)
{
    char *anon = map_anon(1, MAP_PRIVATE);
    anon[0] = 'x';
    report("dontneed private anon", madvise(anon, PAGE, MADV_DONTNEED));
    printf("private anon then: %d\n", anon[0]);

    char *file = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE,
                      fd, 0);
    CHECK(file != MAP_FAILED);
    file[0] = 'x';
    file[PAGE] = 'y';
    report("dontneed private file page 1",
           madvise(file + PAGE, PAGE, MADV_DONTNEED));
    printf("private file then: %c %c\n", file[0], file[PAGE]);
    report("dontneed private file", madvise(file, 2 * PAGE, MADV_DONTNEED));
    printf("private file after all: %c %c\n", file[0], file[PAGE]);

    char *ro = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, PAGE);
    CHECK(ro != MAP_FAILED);
    report("dontneed read-only private file", madvise(ro, PAGE, MADV_DONTNEED));
    printf("read-only private file then: %c\n", ro[0]);

    char *shared = map_anon(1, MAP_SHARED);
    shared[0] = 's';
    report("dontneed shared anon", madvise(shared, PAGE, MADV_DONTNEED));
    printf("shared anon then: %c\n", shared[0]);

    char *sfile = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(sfile != MAP_FAILED);
    sfile[1] = 'S';
    report("dontneed shared file", madvise(sfile, PAGE, MADV_DONTNEED));
    printf("shared file then: %c\n", sfile[1]);
    sfile[1] = 'a';
    munmap(anon, PAGE);
    munmap(file, 2 * PAGE);
    munmap(ro, PAGE);
    munmap(shared, PAGE);
    munmap(sfile, PAGE);
}

/* Forks; the child reads p[0] and exits with it (or dies). */
static void child_reads(const char *what, volatile char *p)
{
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        _exit(p[0]);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    if (WIFSIGNALED(st))
        printf("%s: child killed by %s\n", what, sigabbrev_np(WTERMSIG(st)));
    else
        printf("%s: child read %d\n", what, WEXITSTATUS(st));
}

static void check_fork_advice(int fd)
{
    char *b = map_anon(2, MAP_PRIVATE);
    b[0] = 7;
    b[PAGE] = 9;
    report("dontfork", madvise(b, PAGE, MADV_DONTFORK));
    child_reads("dontfork", b);
    child_reads("next to dontfork", b + PAGE);
    report("dofork", madvise(b, PAGE, MADV_DOFORK));
    child_reads("dofork", b);

    report("wipeonfork", madvise(b, 2 * PAGE, MADV_WIPEONFORK));
    child_reads("wipeonfork", b);
    printf("parent keeps: %d\n", b[0]);
    report("keeponfork", madvise(b + PAGE, PAGE, MADV_KEEPONFORK));
    child_reads("keeponfork", b + PAGE);
    child_reads("still wipeonfork", b);

    char *shared = map_anon(1, MAP_SHARED);
    report("wipeonfork shared", madvise(shared, PAGE, MADV_WIPEONFORK));
    char *file = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
    CHECK(file != MAP_FAILED);
    report("wipeonfork private file", madvise(file, PAGE, MADV_WIPEONFORK));
    report("dontfork shared", madvise(shared, PAGE, MADV_DONTFORK));
    shared[0] = 5;
    child_reads("dontfork shared", shared);
    munmap(b, 2 * PAGE);
    munmap(shared, PAGE);
    munmap(file, PAGE);
}

static void check_free_remove(int fd)
{
    char *anon = map_anon(1, MAP_PRIVATE);
    anon[0] = 1;
    report("free private anon", madvise(anon, PAGE, MADV_FREE));
    char *shared = map_anon(1, MAP_SHARED);
    shared[0] = 1;
    report("free shared anon", madvise(shared, PAGE, MADV_FREE));
    char *file = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    CHECK(file != MAP_FAILED);
    report("free private file", madvise(file, PAGE, MADV_FREE));

    report("remove private anon", madvise(anon, PAGE, MADV_REMOVE));
    report("remove private file", madvise(file, PAGE, MADV_REMOVE));
    report("remove shared anon", madvise(shared, PAGE, MADV_REMOVE));
    printf("shared anon after remove: %d\n", shared[0]);

    int mfd = memfd_create("mm_advice", 0);
    CHECK(mfd >= 0 && ftruncate(mfd, 2 * PAGE) == 0);
    char *m = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    CHECK(m != MAP_FAILED);
    m[0] = 'm';
    m[PAGE] = 'n';
    report("remove memfd page 0", madvise(m, PAGE, MADV_REMOVE));
    char back[2] = {0};
    CHECK(pread(mfd, back, 1, 0) == 1 && pread(mfd, back + 1, 1, PAGE) == 1);
    printf("memfd after remove: %d %c\n", back[0], back[1]);
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", mfd);
    int mro = open(path, O_RDONLY);
    CHECK(mro >= 0);
    char *r = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, mro, 0);
    CHECK(r != MAP_FAILED);
    report("remove read-only shared", madvise(r, PAGE, MADV_REMOVE));
    munmap(anon, PAGE);
    munmap(shared, PAGE);
    munmap(file, PAGE);
    munmap(m, 2 * PAGE);
    munmap(r, PAGE);
    close(mfd);
    close(mro);
}

static void check_locked(void)
{
    char *b = map_anon(3, MAP_PRIVATE);
    b[0] = 3;
    report("mlock", mlock(b, PAGE));
    report("dontneed mlocked", madvise(b, PAGE, MADV_DONTNEED));
    report("free mlocked", madvise(b, PAGE, MADV_FREE));
    report("dontneed over mlocked and not", madvise(b, 2 * PAGE, MADV_DONTNEED));
    report("dontneed past mlocked", madvise(b + PAGE, PAGE, MADV_DONTNEED));
    printf("mlocked keeps: %d\n", b[0]);
    report("munlock", munlock(b, PAGE));
    report("dontneed unlocked", madvise(b, PAGE, MADV_DONTNEED));
    printf("unlocked then: %d\n", b[0]);
    /* MADV_DONTNEED_LOCKED (Linux 5.18): DONTNEED that mlock'd memory
     * takes too */
    b[0] = 4;
    report("mlock for dontneed_locked", mlock(b, PAGE));
    report("dontneed_locked mlocked", madvise(b, PAGE, 24));
    printf("dontneed_locked then: %d\n", b[0]);
    report("munlock after dontneed_locked", munlock(b, PAGE));
    report("mlock again", mlock(b, PAGE));
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        _exit(madvise(b, PAGE, MADV_DONTNEED) == 0 ? 0 : errno);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
    printf("child's dontneed of the parent's mlocked page: %s\n",
           WEXITSTATUS(st) ? strerrorname_np(WEXITSTATUS(st)) : "ok");
    report("munlock again", munlock(b, PAGE));

    CHECK(munmap(b + PAGE, PAGE) == 0);
    report("mlock over a hole", mlock(b, 3 * PAGE));
    report("dontneed head of it", madvise(b, PAGE, MADV_DONTNEED));
    report("dontneed tail of it", madvise(b + 2 * PAGE, PAGE, MADV_DONTNEED));
    report("munlock over a hole", munlock(b, 3 * PAGE));
    report("dontneed head then", madvise(b, PAGE, MADV_DONTNEED));
    report("mlockall current", mlockall(MCL_CURRENT));
    report("dontneed after mlockall", madvise(b, PAGE, MADV_DONTNEED));
    report("munlockall", munlockall());
    report("dontneed after munlockall", madvise(b, PAGE, MADV_DONTNEED));
    report("mlockall future", mlockall(MCL_FUTURE));
    char *later = map_anon(1, MAP_PRIVATE);
    report("dontneed mapped after future", madvise(later, PAGE, MADV_DONTNEED));
    report("dontneed mapped before future", madvise(b, PAGE, MADV_DONTNEED));
    report("munlockall again", munlockall());
    report("dontneed future then", madvise(later, PAGE, MADV_DONTNEED));
    char *locked = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED, -1, 0);
    CHECK(locked != MAP_FAILED);
    report("dontneed MAP_LOCKED", madvise(locked, PAGE, MADV_DONTNEED));
    char *moved = mremap(locked, PAGE, 2 * PAGE, MREMAP_MAYMOVE);
    CHECK(moved != MAP_FAILED);
    report("dontneed MAP_LOCKED grown by mremap",
           madvise(moved, 2 * PAGE, MADV_DONTNEED));
    munmap(b, 3 * PAGE);
    munmap(later, PAGE);
    munmap(moved, 2 * PAGE);
}

static void check_populate(int fd)
{
    char *none = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                      0);
    char *ro = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *rw = map_anon(1, MAP_PRIVATE);
    CHECK(none != MAP_FAILED && ro != MAP_FAILED);
    report("populate read, PROT_NONE", madvise(none, PAGE, MADV_POPULATE_READ));
    report("populate write, PROT_NONE",
           madvise(none, PAGE, MADV_POPULATE_WRITE));
    report("populate read, read-only", madvise(ro, PAGE, MADV_POPULATE_READ));
    report("populate write, read-only", madvise(ro, PAGE, MADV_POPULATE_WRITE));
    report("populate write", madvise(rw, PAGE, MADV_POPULATE_WRITE));
    char *f = mmap(NULL, 3 * PAGE, PROT_READ, MAP_SHARED, fd, 0);
    CHECK(f != MAP_FAILED);
    report("populate read, file", madvise(f, 2 * PAGE, MADV_POPULATE_READ));
    report("populate read, past the file's end",
           madvise(f, 3 * PAGE, MADV_POPULATE_READ));
    report("willneed, past the file's end",
           madvise(f, 3 * PAGE, MADV_WILLNEED));
    munmap(none, PAGE);
    munmap(ro, PAGE);
    munmap(rw, PAGE);
    munmap(f, 3 * PAGE);
}

static void check_vdso(void)
{
    char *vdso = (char *)getauxval(AT_SYSINFO_EHDR);
    CHECK(vdso != NULL);
    report("dontneed the vdso", madvise(vdso, PAGE, MADV_DONTNEED));
    struct timespec ts;
    report("clock_gettime after it", clock_gettime(CLOCK_MONOTONIC, &ts));
    printf("the vdso's ELF magic: %d\n", memcmp(vdso, "\177ELF", 4) == 0);
}

static void check_edges(void)
{
    char *b = map_anon(3, MAP_PRIVATE);
    report("unknown advice", madvise(b, PAGE, 999));
    report("misaligned start", madvise(b + 1, PAGE, MADV_NORMAL));
    CHECK(munmap(b + PAGE, PAGE) == 0);
    b[0] = b[2 * PAGE] = 4;
    report("dontfork over a hole", madvise(b, 3 * PAGE, MADV_DONTFORK));
    child_reads("dontfork head of hole", b);
    child_reads("dontfork tail of hole", b + 2 * PAGE);
    report("wipeonfork from a hole", madvise(b + PAGE, 2 * PAGE,
                                             MADV_WIPEONFORK));
    report("dofork all", madvise(b, 3 * PAGE, MADV_DOFORK));
    child_reads("tail after wipeonfork from a hole", b + 2 * PAGE);
    munmap(b, 3 * PAGE);
}

int main(void)
{
    int fd = make_file();
    check_mprotect_hole();
    check_dontneed(fd);
    check_fork_advice(fd);
    check_free_remove(fd);
    check_locked();
    check_populate(fd);
    check_vdso();
    check_edges();
    close(fd);
    return 0;
}
