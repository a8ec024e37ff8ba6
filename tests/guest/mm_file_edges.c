/*
 * mm_file_edges.c - file mappings at their edges, as Linux has them: a page
 * wholly past the file's end is SIGBUS (BUS_ADRERR, si_addr the address),
 * -EFAULT to a system call, valid once the file grows over it and past
 * it again once truncated (private pages written before too); the
 * partial last page reads zeros past the end (and shared anonymous
 * memory ends where it was mapped: mremap does not grow it);
 * mremap growing a private or shared file mapping (in place or moved)
 * maps more of the file, not zeros, and keeps the private copies of the
 * pages it had. Each fact is printed; the runner compares the output with
 * a native run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define PAGE 4096UL

/* A file of `pages` pages, 'a' 'b' 'c' ..., then `tail` bytes of 'z'. */
static int make_file(int pages, size_t tail)
{
    char path[] = "/tmp/mm_file_edges.XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    unlink(path);
    char buf[PAGE];
    for (int i = 0; i < pages; i++) {
        memset(buf, 'a' + i, PAGE);
        CHECK(write(fd, buf, PAGE) == (ssize_t)PAGE);
    }
    memset(buf, 'z', tail);
    CHECK(write(fd, buf, tail) == (ssize_t)tail);
    return fd;
}

/* A free range of `pages` pages (mapped and unmapped again). */
static char *free_range(size_t pages)
{
    char *r = mmap(NULL, pages * PAGE, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(r != MAP_FAILED && munmap(r, pages * PAGE) == 0);
    return r;
}

static void show(const char *what, const char *p, int pages)
{
    printf("%s:", what);
    for (int i = 0; i < pages; i++)
        printf(" %c", p[i * PAGE]);
    printf("\n");
}

static sigjmp_buf fault_jmp;
static volatile int fault_code;
static void *volatile fault_addr;

static void on_fault(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    fault_code = sig == SIGBUS ? si->si_code : -si->si_code;
    fault_addr = si->si_addr;
    siglongjmp(fault_jmp, 1);
}

/* Touches p (a read, or a write of 'w'): "ok", or the signal it got. */
static void touch(const char *what, volatile char *p, int write)
{
    struct sigaction sa = {.sa_sigaction = on_fault, .sa_flags = SA_SIGINFO};
    struct sigaction old_bus, old_segv;
    sigaction(SIGBUS, &sa, &old_bus);
    sigaction(SIGSEGV, &sa, &old_segv);
    if (sigsetjmp(fault_jmp, 1) == 0) {
        if (write)
            *p = 'w';
        else
            (void)*p;
        printf("%s: ok\n", what);
    } else if (fault_code > 0) {
        printf("%s: SIGBUS %s at the address: %d\n", what,
               fault_code == BUS_ADRERR ? "BUS_ADRERR" : "other",
               fault_addr == (void *)p);
    } else {
        printf("%s: SIGSEGV code %d\n", what, -fault_code);
    }
    sigaction(SIGBUS, &old_bus, NULL);
    sigaction(SIGSEGV, &old_segv, NULL);
}

/* What write(2) of n bytes from p to a file gives. */
static void write_from(const char *what, const char *p, size_t n)
{
    char path[] = "/tmp/mm_file_edges.out.XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    unlink(path);
    ssize_t r = write(fd, p, n);
    if (r < 0)
        printf("%s: %s\n", what, strerrorname_np(errno));
    else
        printf("%s: %zd bytes\n", what, r);
    close(fd);
}

static void check_past_eof(int type, const char *kind)
{
    char what[96];
    int fd = make_file(1, 100); /* 'a' page, then 100 bytes of 'z' */
    char *p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, type, fd, 0);
    CHECK(p != MAP_FAILED);
    printf("%s last page: %c %c %d %d\n", kind, p[PAGE], p[PAGE + 99],
           p[PAGE + 100], p[2 * PAGE - 1]);
    snprintf(what, sizeof(what), "%s read past the end", kind);
    touch(what, p + 2 * PAGE + 8, 0);
    snprintf(what, sizeof(what), "%s write past the end", kind);
    touch(what, p + 3 * PAGE, 1);
    snprintf(what, sizeof(what), "%s write(2) from past the end", kind);
    write_from(what, p + 2 * PAGE, 10);
    snprintf(what, sizeof(what), "%s write(2) into past the end", kind);
    write_from(what, p + 2 * PAGE - 96, 200);
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        signal(SIGBUS, SIG_DFL);
        _exit(p[2 * PAGE]);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    printf("%s child past the end: %s\n", kind,
           WIFSIGNALED(st) ? sigabbrev_np(WTERMSIG(st)) : "exited");

    /* The file grows over the third page. */
    CHECK(pwrite(fd, "q", 1, 2 * PAGE + 5) == 1);
    snprintf(what, sizeof(what), "%s read after the file grew", kind);
    touch(what, p + 2 * PAGE + 5, 0);
    printf("%s grown page: %c %d %d\n", kind, p[2 * PAGE + 5], p[2 * PAGE],
           p[2 * PAGE + 6]);
    printf("%s old tail: %d\n", kind, p[PAGE + 100]);
    snprintf(what, sizeof(what), "%s fourth page still past it", kind);
    touch(what, p + 3 * PAGE, 0);
    p[2 * PAGE + 4] = 'r';
    char back = 0;
    CHECK(pread(fd, &back, 1, 2 * PAGE + 4) == 1);
    printf("%s write reaches the file: %d\n", kind, back == 'r');
    /* Grown again: a system call reads the page before the guest did. */
    CHECK(pwrite(fd, "Q", 1, 3 * PAGE + 1) == 1);
    snprintf(what, sizeof(what), "%s write(2) from a page the file grew over",
             kind);
    write_from(what, p + 3 * PAGE, 2);
    printf("%s that page: %c\n", kind, p[3 * PAGE + 1]);

    /* mremap growing past the end. */
    char *q = mremap(p, 4 * PAGE, 6 * PAGE, MREMAP_MAYMOVE);
    CHECK(q != MAP_FAILED);
    snprintf(what, sizeof(what), "%s grown by mremap, past the end", kind);
    touch(what, q + 5 * PAGE, 0);
    printf("%s grown by mremap keeps: %c\n", kind, q[2 * PAGE + 5]);
    CHECK(munmap(q, 6 * PAGE) == 0);

    /* Mapped wholly past the end. */
    p = mmap(NULL, PAGE, PROT_READ, type, fd, 8 * PAGE);
    CHECK(p != MAP_FAILED);
    snprintf(what, sizeof(what), "%s mapped wholly past the end", kind);
    touch(what, p, 0);
    CHECK(munmap(p, PAGE) == 0);
    close(fd);
}

static void check_truncate(int type, const char *kind)
{
    char what[96];
    int fd = make_file(3, 0);
    char *p = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, type, fd, 0);
    CHECK(p != MAP_FAILED);
    printf("%s before truncation: %c %c\n", kind, p[PAGE], p[2 * PAGE]);
    p[2 * PAGE + 1] = 'W';
    CHECK(ftruncate(fd, PAGE) == 0);
    snprintf(what, sizeof(what), "%s read past a truncated end", kind);
    touch(what, p + PAGE, 0);
    snprintf(what, sizeof(what), "%s written page past a truncated end", kind);
    touch(what, p + 2 * PAGE + 1, 0);
    snprintf(what, sizeof(what), "%s write(2) from past a truncated end",
             kind);
    write_from(what, p + PAGE, 10);
    printf("%s below the truncated end: %c\n", kind, p[0]);
    CHECK(ftruncate(fd, 3 * PAGE) == 0);
    printf("%s grown back: %d %d\n", kind, p[PAGE], p[2 * PAGE + 1]);

    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    int again = open(path, O_RDWR | O_TRUNC);
    CHECK(again >= 0);
    snprintf(what, sizeof(what), "%s read after O_TRUNC", kind);
    touch(what, p, 0);
    close(again);
    CHECK(munmap(p, 3 * PAGE) == 0);
    close(fd);
}

/* MAP_SHARED|MAP_ANONYMOUS memory is a shmem object of the mapping's
 * size: mremap growing the mapping does not grow the object. */
static void check_shared_anon_grow(void)
{
    char *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    p[0] = 'k';
    char *q = mremap(p, PAGE, 3 * PAGE, MREMAP_MAYMOVE);
    CHECK(q != MAP_FAILED);
    touch("shared anonymous grown by mremap, the old page", q, 0);
    touch("shared anonymous grown by mremap, the new page", q + PAGE, 1);
    printf("shared anonymous grown keeps: %c\n", q[0]);
    CHECK(munmap(q, 3 * PAGE) == 0);
}

static void check_mremap_grow(int fd, int type, const char *kind)
{
    char what[64];
    /* In place: the range after the mapping is free. */
    char *r = free_range(4);
    char *p = mmap(r, PAGE, PROT_READ | PROT_WRITE, type | MAP_FIXED, fd, 0);
    CHECK(p == r);
    p[1] = 'X';
    char *q = mremap(p, PAGE, 3 * PAGE, 0);
    snprintf(what, sizeof(what), "%s grown in place", kind);
    printf("%s: %s\n", what, q == p ? "same address" : strerror(errno));
    if (q == p) {
        show(what, q, 3);
        printf("%s keeps its write: %c\n", what, q[1]);
        q[1] = 'a';
        CHECK(munmap(q, 3 * PAGE) == 0);
    }

    /* Moved: the page after it is taken. */
    r = mmap(NULL, 3 * PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(r != MAP_FAILED);
    p = mmap(r, 2 * PAGE, PROT_READ | PROT_WRITE, type | MAP_FIXED, fd, 0);
    CHECK(p == r);
    char *block = r + 2 * PAGE;
    p[PAGE + 1] = 'Y';
    q = mremap(p, 2 * PAGE, 4 * PAGE, MREMAP_MAYMOVE);
    CHECK(q != MAP_FAILED);
    snprintf(what, sizeof(what), "%s grown and moved", kind);
    printf("%s: %s\n", what, q != p ? "moved" : "in place");
    show(what, q, 4);
    printf("%s keeps its write: %c\n", what, q[PAGE + 1]);
    q[PAGE + 1] = 'b';
    CHECK(munmap(q, 4 * PAGE) == 0);
    munmap(block, PAGE);

    /* Read-only, grown into the partial last page. */
    p = mmap(NULL, 3 * PAGE, PROT_READ, type, fd, 2 * PAGE);
    CHECK(p != MAP_FAILED);
    q = mremap(p, 3 * PAGE, 4 * PAGE, MREMAP_MAYMOVE);
    CHECK(q != MAP_FAILED);
    snprintf(what, sizeof(what), "%s read-only grown", kind);
    show(what, q, 4);
    printf("%s last page: %c %d\n", what, q[3 * PAGE + 99], q[3 * PAGE + 100]);
    CHECK(munmap(q, 4 * PAGE) == 0);
}

int main(void)
{
    check_past_eof(MAP_PRIVATE, "private");
    check_past_eof(MAP_SHARED, "shared");
    check_truncate(MAP_PRIVATE, "private");
    check_truncate(MAP_SHARED, "shared");
    check_shared_anon_grow();
    int fd = make_file(5, 100);
    check_mremap_grow(fd, MAP_PRIVATE, "private");
    check_mremap_grow(fd, MAP_SHARED, "shared");
    close(fd);
    return 0;
}
