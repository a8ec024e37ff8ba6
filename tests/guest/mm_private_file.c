/*
 * mm_private_file.c - private read-only file mappings as Linux has them:
 * their untouched pages are the file's (a later write(2) to the file shows
 * there, in a forked child too), and what is written there becomes the
 * process's own copy: after mprotect adds write, after a FOLL_FORCE write
 * (/proc/self/mem), in a forked child apart from its parent; the file
 * keeps its bytes, MADV_DONTNEED gives the file's back, and /proc/self/maps
 * shows such a mapping as one line however much of it was copied. Each
 * fact is printed; the runner compares the output with a native run.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define PAGE 4096UL
#define PAGES 40

/* A file of PAGES pages: page i holds 'A' + i % 26. */
static int make_file(void)
{
    char path[] = "/tmp/mm_private_file.XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    unlink(path);
    char buf[PAGE];
    for (int i = 0; i < PAGES; i++) {
        memset(buf, 'A' + i % 26, PAGE);
        CHECK(write(fd, buf, PAGE) == (ssize_t)PAGE);
    }
    return fd;
}

static char file_byte(int fd, size_t off)
{
    char c = 0;
    CHECK(pread(fd, &c, 1, (off_t)off) == 1);
    return c;
}

/* The first byte of each page, as one string. */
static void show(const char *what, const char *m)
{
    char s[PAGES + 1];
    for (int i = 0; i < PAGES; i++)
        s[i] = m[i * PAGE];
    s[PAGES] = 0;
    printf("%s: %s\n", what, s);
}

/* Lines of /proc/self/maps naming addresses inside [m, m+len). */
static int maps_lines(const char *m, size_t len)
{
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 &&
            lo < (unsigned long)m + len && hi > (unsigned long)m)
            n++;
    }
    fclose(f);
    return n;
}

int main(void)
{
    int fd = make_file();
    size_t len = PAGES * PAGE;
    char *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    CHECK(m != MAP_FAILED);
    show("mapped", m);

    /* The file written after the mapping: untouched pages show it. */
    CHECK(pwrite(fd, "x", 1, 3 * PAGE) == 1);
    show("file written", m);

    /* A FOLL_FORCE write (as a debugger's) into the read-only mapping:
     * the process's copy of that page; the file keeps its byte. */
    int mem = open("/proc/self/mem", O_RDWR);
    CHECK(mem >= 0);
    CHECK(pwrite(mem, "y", 1, (off_t)(unsigned long)(m + 5 * PAGE)) == 1);
    close(mem);
    show("forced write", m);
    printf("file at page 5: %c\n", file_byte(fd, 5 * PAGE));
    /* ... and a later write to the file shows only where it is the file's */
    CHECK(pwrite(fd, "zz", 2, 5 * PAGE + 1) == 2);
    CHECK(pwrite(fd, "w", 1, 6 * PAGE) == 1);
    printf("page 5 after the file changed: %.3s\n", m + 5 * PAGE);
    show("file written again", m);
    printf("maps lines: %d\n", maps_lines(m, len));

    /* A child: the same pages; its writes stay its own. */
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        show("child sees", m);
        CHECK(mprotect(m + 10 * PAGE, 2 * PAGE, PROT_READ | PROT_WRITE) == 0);
        m[10 * PAGE] = 'c';
        m[11 * PAGE] = 'c';
        show("child wrote", m);
        fflush(stdout);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
    show("parent after child", m);

    /* mprotect adding write: the parent's own copies. */
    CHECK(mprotect(m + 20 * PAGE, 4 * PAGE, PROT_READ | PROT_WRITE) == 0);
    memset(m + 21 * PAGE, 'p', PAGE);
    show("parent wrote", m);
    printf("file at page 21: %c\n", file_byte(fd, 21 * PAGE));
    printf("maps lines after mprotect: %d\n", maps_lines(m, len));

    /* MADV_DONTNEED drops the copies: the file's bytes again. */
    CHECK(madvise(m, len, MADV_DONTNEED) == 0);
    show("after DONTNEED", m);

    /* Read through a system call (the kernel's copy from the mapping). */
    int p[2];
    CHECK(pipe(p) == 0);
    CHECK(write(p[1], m + 3 * PAGE, 4) == 4);
    char got[5] = {0};
    CHECK(read(p[0], got, 4) == 4);
    printf("write(2) from the mapping: %s\n", got);

    CHECK(munmap(m, len) == 0);
    close(fd);
    return 0;
}
