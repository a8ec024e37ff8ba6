/*
 * iface_edges.c - less common interfaces answer as Linux does: prctl's
 * PR_SET_KEEPCAPS and a thread's own PR_SET_NAME;
 * setgroups then getgroups; set_mempolicy then get_mempolicy; fexecve
 * (execveat with AT_EMPTY_PATH) of an fd; RNDGETENTCNT on /dev/urandom;
 * mmap's MAP_32BIT; personality(PER_LINUX32) (uname's machine, kept by
 * execve).
 * Prints one line per check; run natively and under hvrun, the output
 * must match (tests/run-guest-tests.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/random.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/utsname.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

/* The main thread's name is the process's comm; another thread's is its
 * own (PR_GET_NAME), starting as its creator's. */
static void read_comm(char *out, size_t len)
{
    FILE *f = fopen("/proc/self/comm", "r");
    out[0] = 0;
    if (f) {
        if (!fgets(out, (int)len, f))
            out[0] = 0;
        fclose(f);
    }
    out[strcspn(out, "\n")] = 0;
}

static void *thread_name(void *arg)
{
    (void)arg;
    char first[32] = "", mine[32] = "", comm[32];
    prctl(PR_GET_NAME, first);
    prctl(PR_SET_NAME, "worker");
    prctl(PR_GET_NAME, mine);
    read_comm(comm, sizeof(comm));
    printf("name: thread started as %s, now %s, process comm %s\n", first,
           mine, comm);
    return NULL;
}

static void prctls(void)
{
    printf("keepcaps: get %s", result_text(prctl(PR_GET_KEEPCAPS)));
    printf(", set %s", result_text(prctl(PR_SET_KEEPCAPS, 1)));
    printf(", get %s", result_text(prctl(PR_GET_KEEPCAPS)));
    printf(", set 2 %s\n", result_text(prctl(PR_SET_KEEPCAPS, 2)));
    prctl(PR_SET_NAME, "iface-main");
    pthread_t t;
    pthread_create(&t, NULL, thread_name, NULL);
    pthread_join(t, NULL);
    char mine[32] = "", comm[32];
    prctl(PR_GET_NAME, mine);
    read_comm(comm, sizeof(comm));
    printf("name: main %s, process comm %s\n", mine, comm);
}

static void groups(void)
{
    gid_t set[] = {7, 3, 5};
    printf("groups: set %s", result_text(setgroups(3, set)));
    gid_t got[16];
    int n = getgroups(16, got);
    printf(", get %s:", result_text(n));
    for (int i = 0; i < n; i++)
        printf(" %u", (unsigned)got[i]);
    printf(", count %d", getgroups(0, NULL));
    printf(", small %s\n", result_text(getgroups(1, got)));
    pid_t pid = fork();
    if (pid == 0) {
        printf("groups: child count %d\n", getgroups(0, NULL));
        _exit(0);
    }
    waitpid(pid, NULL, 0);
}

static void mempolicy(void)
{
    unsigned long mask = 1;
    int mode = -1;
    printf("mempolicy: get %s", result_text(syscall(SYS_get_mempolicy, &mode, NULL,
                                            0, NULL, 0)));
    printf(" mode %d", mode);
    printf(", set bind %s", result_text(syscall(SYS_set_mempolicy, 2 /* MPOL_BIND */,
                                        &mask, 64)));
    mask = 0;
    printf(", get %s", result_text(syscall(SYS_get_mempolicy, &mode, &mask, 64,
                                   NULL, 0)));
    printf(" mode %d mask %lu", mode, mask);
    printf(", set default %s", result_text(syscall(SYS_set_mempolicy, 0, NULL, 0)));
    printf(", get %s", result_text(syscall(SYS_get_mempolicy, &mode, NULL, 0, NULL,
                                   0)));
    printf(" mode %d\n", mode);
}

static void entropy(void)
{
    int fd = open("/dev/urandom", O_RDONLY);
    int count = -1;
    long rc = ioctl(fd, RNDGETENTCNT, &count);
    /* The count is the kernel's (256 once the pool is initialised, on 5.18
     * and later); what matters is that the call works and is full. */
    printf("entropy: RNDGETENTCNT %s full %d\n", result_text(rc), count >= 256);
    close(fd);
}

static void map_32bit(void)
{
    size_t len = 1 << 20;
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
    uintptr_t a = (uintptr_t)m;
    printf("map_32bit: %s, in [1 GiB, 2 GiB) %d\n",
           m == MAP_FAILED ? strerrorname_np(errno) : "mapped",
           m != MAP_FAILED && a >= (1UL << 30) && a + len <= (1UL << 31));
    if (m != MAP_FAILED) {
        memset(m, 1, len);
        munmap(m, len);
    }
}

static void personas(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        long old = personality(PER_LINUX32);
        struct utsname u;
        uname(&u);
        printf("personality: old %#lx, now %#lx, machine %s, exec sees ",
               old, (long)personality(0xffffffff), u.machine);
        fflush(stdout);
        execl("/bin/cat", "cat", "/proc/self/personality", (char *)NULL);
        _exit(99);
    }
    waitpid(pid, NULL, 0);
    printf("personality: parent's still %#lx\n", (long)personality(0xffffffff));
}

static void fexec(void)
{
    int fd = open("/bin/true", O_RDONLY | O_CLOEXEC);
    pid_t pid = fork();
    if (pid == 0) {
        char *argv[] = {"true", NULL};
        char *envp[] = {NULL};
        syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
        printf("fexecve: execveat %s\n", strerrorname_np(errno));
        fflush(stdout);
        _exit(99);
    }
    int st;
    waitpid(pid, &st, 0);
    printf("fexecve: child exit %d\n", WEXITSTATUS(st));
    close(fd);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    prctls();
    groups();
    mempolicy();
    entropy();
    map_32bit();
    personas();
    fexec();
    return 0;
}
