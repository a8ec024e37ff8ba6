/*
 * secretmem - memfd_secret(2): flags (O_CLOEXEC only), the file's
 * operations (read/write EINVAL, lseek ESPIPE, fallocate EOPNOTSUPP, a
 * size set once), fstat's mode, MAP_PRIVATE refused, a shared mapping
 * locked and shared with a fork child, and the pages out of reach of
 * process_vm_readv/writev and /proc/PID/mem (EFAULT, EIO) while the
 * owner's own syscalls on them work. Skips (prints so, exits 0) where the
 * kernel has no secretmem: then hvrun's output must say the same.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define PAGE 4096

static void show(const char *what, long r)
{
    printf("%s: %ld errno %d\n", what, r, r < 0 ? errno : 0);
}

static int secret_fd(unsigned flags)
{
    return (int)syscall(447, flags);
}

static void check_file(int fd)
{
    char b[8] = {0};
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    printf("mode %o size %lld nlink %lu\n", (unsigned)st.st_mode,
           (long long)st.st_size, (unsigned long)st.st_nlink);
    char link[64], name[256];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, name, sizeof(name) - 1);
    name[n > 0 ? n : 0] = '\0';
    printf("fd link: %s\n", name);
    printf("status flags rdwr: %d\n", (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR);
    show("read", read(fd, b, sizeof(b)));
    show("write", write(fd, b, sizeof(b)));
    show("pread", pread(fd, b, sizeof(b), 0));
    struct iovec v = {b, sizeof(b)};
    show("writev", writev(fd, &v, 1));
    show("lseek", lseek(fd, 0, SEEK_SET));
    show("fallocate", fallocate(fd, 0, 0, PAGE));
    show("ftruncate", ftruncate(fd, 2 * PAGE));
    show("ftruncate again", ftruncate(fd, PAGE));
    CHECK(fstat(fd, &st) == 0);
    printf("size now %lld\n", (long long)st.st_size);
}

static void check_remote_reads(char *s)
{
    char b[4] = {0};
    struct iovec local = {b, 1}, remote = {s, 1};
    show("process_vm_readv", process_vm_readv(getpid(), &local, 1, &remote, 1, 0));
    show("process_vm_writev",
         process_vm_writev(getpid(), &local, 1, &remote, 1, 0));
    int mem = open("/proc/self/mem", O_RDWR);
    CHECK(mem >= 0);
    show("/proc/self/mem read", pread(mem, b, 1, (off_t)(uintptr_t)s));
    show("/proc/self/mem write", pwrite(mem, b, 1, (off_t)(uintptr_t)s));
    close(mem);
    /* The process's own syscalls copy from it as from any memory. */
    int pfd[2];
    CHECK(pipe(pfd) == 0);
    show("write from secret memory", write(pfd[1], s, 3));
    CHECK(read(pfd[0], b, 3) == 3);
    printf("pipe got %.3s\n", b);
    close(pfd[0]);
    close(pfd[1]);
}

/* A tracer's PEEKDATA of the tracee's secret page: EIO (no page). */
static void check_peek(char *s)
{
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        ptrace(PTRACE_TRACEME, 0, NULL, NULL);
        raise(SIGSTOP);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFSTOPPED(st));
    errno = 0;
    long w = ptrace(PTRACE_PEEKDATA, pid, s, NULL);
    printf("PEEKDATA: %s errno %d\n", w == -1 && errno ? "-1" : "a word", errno);
    errno = 0;
    long r = ptrace(PTRACE_POKEDATA, pid, s, (void *)1L);
    printf("POKEDATA: %ld errno %d\n", r, r < 0 ? errno : 0);
    CHECK(ptrace(PTRACE_CONT, pid, NULL, NULL) == 0);
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
}

/* Unprivileged (no CAP_IPC_LOCK), the mappings count against
 * RLIMIT_MEMLOCK: past it mmap is EAGAIN. */
static void memlock_child(void)
{
    struct rlimit rl = {2 * PAGE, 2 * PAGE};
    CHECK(setrlimit(RLIMIT_MEMLOCK, &rl) == 0);
    CHECK(setresuid(65534, 65534, 65534) == 0);
    int fd = secret_fd(0);
    CHECK(fd >= 0 && ftruncate(fd, 4 * PAGE) == 0);
    void *a = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    printf("2 pages under a 2-page limit: %s\n", a == MAP_FAILED ? strerrorname_np(errno) : "mapped");
    void *b = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    printf("1 more: %s\n", b == MAP_FAILED ? strerrorname_np(errno) : "mapped");
    fflush(stdout);
    _exit(0);
}

static void check_memlock(void)
{
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        memlock_child();
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
}

/* The maps line of the mapping at s: its name (the last column). */
static void show_maps_name(const char *s)
{
    char line[512], want[32];
    snprintf(want, sizeof(want), "%lx-", (unsigned long)(uintptr_t)s);
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL);
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, want, strlen(want)) == 0) {
            const char *name = strchr(line, '/');
            printf("maps: %s %s", strstr(line, " rw-s ") ? "rw-s" : "?",
                   name ? name : "(none)\n");
        }
    fclose(f);
}

static void check_mappings(int fd)
{
    void *m = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    show("private mmap", m == MAP_FAILED ? -1 : 0);
    char *s = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(s != MAP_FAILED);
    memcpy(s, "abc", 4);
    show_maps_name(s);
    check_remote_reads(s);
    check_peek(s);
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        s[0] = 'X'; /* shared: the parent sees it */
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
    printf("after the child: %s\n", s);
    CHECK(munmap(s, 2 * PAGE) == 0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int fd = secret_fd(0);
    if (fd < 0) {
        printf("no secretmem: errno %d\n", errno);
        return 0;
    }
    show("flags 1", secret_fd(1));
    int cfd = secret_fd(O_CLOEXEC);
    CHECK(cfd >= 0);
    printf("O_CLOEXEC gives FD_CLOEXEC: %d\n", fcntl(cfd, F_GETFD) == FD_CLOEXEC);
    close(cfd);
    check_file(fd);
    check_mappings(fd);
    if (getuid() == 0)
        check_memlock();
    int dup_fd = dup(fd);
    char b[1];
    show("read of a dup", read(dup_fd, b, 1));
    return 0;
}
