/*
 * mprotect_shared_ro.c - Linux's VM_MAYWRITE rule: a MAP_SHARED mapping
 * of a file opened O_RDONLY can never become writable (mprotect adding
 * PROT_WRITE is EACCES, on the whole mapping, a part of it, after mremap
 * and in a fork child), mmap MAP_SHARED|PROT_WRITE of such an fd is
 * EACCES, any mapping of an O_WRONLY fd is EACCES; a MAP_PRIVATE mapping
 * of the same fd, and a shared one of an O_RDWR fd, may become writable.
 * hvrun once let the mprotect succeed and ended the run at the first
 * write (kvm) or at the stub's mapping (ptrace), exit 125. Run natively
 * and under hvrun, the output must match.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096

static void report(const char *what, long rc)
{
    printf("%s: %s\n", what, rc < 0 ? strerror(errno) : "ok");
}

static void map_report(const char *what, void *m)
{
    report(what, m == MAP_FAILED ? -1 : 0);
}

int main(void)
{
    char path[] = "/tmp/hvrun-mprotect-ro-XXXXXX";
    int rw = mkstemp(path);
    char page[2 * PAGE];
    memset(page, 'a', sizeof(page));
    if (rw < 0 || write(rw, page, sizeof(page)) != (ssize_t)sizeof(page))
        return 1;
    int ro = open(path, O_RDONLY);
    int wo = open(path, O_WRONLY);

    char *s = mmap(NULL, 2 * PAGE, PROT_READ, MAP_SHARED, ro, 0);
    map_report("shared read-only map", s);
    report("mprotect RW", mprotect(s, 2 * PAGE, PROT_READ | PROT_WRITE));
    report("mprotect RW 2nd page", mprotect(s + PAGE, PAGE, PROT_READ | PROT_WRITE));
    report("mprotect W", mprotect(s, PAGE, PROT_WRITE));
    report("mprotect RX", mprotect(s, 2 * PAGE, PROT_READ | PROT_EXEC));
    report("mprotect NONE", mprotect(s, PAGE, PROT_NONE));
    report("mprotect R", mprotect(s, 2 * PAGE, PROT_READ));
    printf("reads '%c'\n", s[PAGE]);

    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        report("child mprotect RW", mprotect(s, PAGE, PROT_READ | PROT_WRITE));
        fflush(stdout);
        _exit(0);
    }
    int st;
    waitpid(c, &st, 0);

    char *moved = mremap(s, 2 * PAGE, 3 * PAGE, MREMAP_MAYMOVE);
    map_report("mremap", moved);
    if (moved != MAP_FAILED) {
        report("moved mprotect RW",
               mprotect(moved, PAGE, PROT_READ | PROT_WRITE));
        munmap(moved, 3 * PAGE);
    }

    map_report("shared RW map of O_RDONLY",
               mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0));
    map_report("private map of O_WRONLY",
               mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, wo, 0));
    map_report("shared map of O_WRONLY",
               mmap(NULL, PAGE, PROT_READ, MAP_SHARED, wo, 0));

    char *pv = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, ro, 0);
    map_report("private read-only map", pv);
    report("private mprotect RW", mprotect(pv, PAGE, PROT_READ | PROT_WRITE));
    pv[0] = 'p';
    char b = 0;
    printf("private wrote '%c', file has '%c'\n", pv[0],
           pread(ro, &b, 1, 0) == 1 ? b : '?');

    char *sw = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, rw, 0);
    map_report("shared map of O_RDWR", sw);
    report("shared O_RDWR mprotect RW", mprotect(sw, PAGE, PROT_READ | PROT_WRITE));
    sw[1] = 's';
    printf("shared wrote '%c', file has '%c'\n", sw[1],
           pread(ro, &b, 1, 1) == 1 ? b : '?');
    unlink(path);
    return 0;
}
