/*
 * ro_backing_poke.c - writes into another process's read-only memory on
 * its behalf, each as Linux answers it. ptrace PTRACE_POKEDATA and
 * /proc/PID/mem are FOLL_FORCE writes: a private read-only mapping takes
 * them (a breakpoint into text: the tracee's copy changes, the file does
 * not), a shared mapping the tracee may not write does not (EIO), nor
 * [vvar]; FOLL_FORCE reads PROT_NONE. process_vm_writev does not force: EFAULT on any page the target
 * may not write. hvrun once wrote through a read-only host page there and
 * faulted itself. A tracer and its stopped child; run natively and under
 * hvrun, the output must match.
 */
#define _GNU_SOURCE
#include "guest_check.h"

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096

__attribute__((noinline)) int text_function(int x)
{
    return x * 3 + 1;
}

struct target {
    const char *name;
    char *at;
};

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

static char *map_file(int fd, int prot, int flags)
{
    char *m = mmap(NULL, PAGE, prot, flags, fd, 0);
    CHECK(m != MAP_FAILED);
    return m;
}

static const char *errname(int e)
{
    return e == EIO ? "EIO" : e == EFAULT ? "EFAULT" : strerror(e);
}

static void poke(pid_t child, const struct target *t)
{
    errno = 0;
    long word = 0x4141414141414141L;
    long rc = ptrace(PTRACE_POKEDATA, child, t->at, (void *)word);
    if (rc < 0) {
        printf("POKEDATA %s: %s\n", t->name, errname(errno));
        return;
    }
    errno = 0;
    long back = ptrace(PTRACE_PEEKDATA, child, t->at, NULL);
    printf("POKEDATA %s: ok, reads back %s\n", t->name,
           errno == 0 && back == word ? "the word" : "something else");
}

static void vm_write(pid_t child, const struct target *t)
{
    char buf[8] = "BBBBBBBB";
    struct iovec local = {buf, sizeof(buf)}, remote = {t->at, sizeof(buf)};
    ssize_t n = process_vm_writev(child, &local, 1, &remote, 1, 0);
    if (n < 0)
        printf("process_vm_writev %s: %s\n", t->name, errname(errno));
    else
        printf("process_vm_writev %s: %zd bytes\n", t->name, n);
}

static void mem_write(int mem, const struct target *t)
{
    char buf[8] = "CCCCCCCC";
    ssize_t n = pwrite(mem, buf, sizeof(buf), (off_t)(uintptr_t)t->at);
    if (n < 0)
        printf("mem write %s: %s\n", t->name, errname(errno));
    else
        printf("mem write %s: %zd bytes\n", t->name, n);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    char path[] = "/tmp/hvrun-ro-poke-XXXXXX";
    int rw = mkstemp(path);
    CHECK(rw >= 0);
    char page[PAGE];
    memset(page, 'f', sizeof(page));
    CHECK(write(rw, page, sizeof(page)) == (ssize_t)sizeof(page));
    int ro = open(path, O_RDONLY);
    CHECK(ro >= 0);
    unlink(path);

    char *none = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(none != MAP_FAILED);
    struct target targets[] = {
        {"text", (char *)(uintptr_t)text_function},
        {"private file read-only", map_file(ro, PROT_READ, MAP_PRIVATE)},
        {"shared O_RDONLY file", map_file(ro, PROT_READ, MAP_SHARED)},
        {"shared O_RDWR file read-only", map_file(rw, PROT_READ, MAP_SHARED)},
        {"shared O_RDWR file writable",
         map_file(rw, PROT_READ | PROT_WRITE, MAP_SHARED)},
        {"private PROT_NONE", none},
        {"vvar", find_mapping("[vvar]")},
    };
    size_t nt = sizeof(targets) / sizeof(targets[0]);
    CHECK(targets[nt - 1].at != NULL);

    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        CHECK(ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0);
        raise(SIGSTOP);
        _exit(text_function(2) == 7 ? 0 : 3);
    }
    int st;
    CHECK(waitpid(child, &st, 0) == child && WIFSTOPPED(st));

    for (size_t i = 0; i < nt; i++)
        vm_write(child, &targets[i]);
    char mem_path[64];
    snprintf(mem_path, sizeof(mem_path), "/proc/%d/mem", (int)child);
    int mem = open(mem_path, O_RDWR);
    CHECK(mem >= 0);
    for (size_t i = 1; i < nt; i++) /* not text: the child runs it */
        mem_write(mem, &targets[i]);
    char got[9] = {0};
    ssize_t n = pread(mem, got, 8, (off_t)(uintptr_t)none);
    printf("mem read private PROT_NONE: %zd '%s'\n", n, n == 8 ? got : "");
    close(mem);
    for (size_t i = 0; i < nt; i++)
        poke(child, &targets[i]);

    char b = 0;
    CHECK(pread(ro, &b, 1, 0) == 1);
    printf("file starts with '%c'\n", b);
    printf("parent's text unchanged: %s\n", text_function(2) == 7 ? "yes" : "no");
    /* The child would run the poked text: it is killed, not resumed. */
    CHECK(kill(child, SIGKILL) == 0);
    CHECK(waitpid(child, &st, 0) == child);
    printf("child: %s %d\n", WIFSIGNALED(st) ? "signal" : "exit",
           WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));

    /* /proc/self/mem into this process's own read-only mappings. */
    int self = open("/proc/self/mem", O_RDWR);
    CHECK(self >= 0);
    for (size_t i = 1; i < nt; i++)
        mem_write(self, &targets[i]);
    close(self);
    printf("own private read-only copy: '%c'\n", targets[1].at[0]);
    return 0;
}
