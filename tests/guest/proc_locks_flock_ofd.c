/*
 * proc_locks_flock_ofd.c - /proc/locks lists the run's flock and OFD locks
 * with its POSIX ones, in Linux's order. Under hvrun only the POSIX locks
 * (fcntl F_SETLK, modelled per process) were listed: flock and
 * F_OFD_SETLK locks, which the host takes on hvrun's open file
 * descriptions, were missing.
 * - FLOCK lines (READ for LOCK_SH, WRITE for LOCK_EX, "0 EOF") with the
 *   taker's pid, OFDLCK lines with pid -1, POSIX lines with the owner's;
 * - newest first: a flock lock that changes type is a new lock; an OFD
 *   lock cut in two by an unlock keeps its right part where it was, its
 *   left part is new; a lock of the same type next to one held grows it
 *   in place;
 * - a flock lock taken through one fd of a description stays while a dup
 *   made before the lock is open, and goes with the last fd; a fork
 *   child's flock on its own description shows the child's pid.
 * Lines are printed in /proc/locks' order with their number, pid, device
 * and inode replaced by names (natively the host's other locks come
 * between); a line that names the file by another device or inode than
 * fstat's is not ours and not printed. Linux keeps its list of locks per
 * CPU and prints CPU by CPU, so a native run that moved between CPUs
 * printed the same locks in another order: the program keeps to one CPU.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"
#include "guest_slurp.h"

static char buf[1 << 20];

struct named_file {
    const char *name;
    char id[64]; /* "MAJ:MIN:INO" as /proc/locks prints it */
};

static struct named_file files[2] = {{"A", ""}, {"B", ""}};
static pid_t child_pid;

static void name_file(struct named_file *f, int fd)
{
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    snprintf(f->id, sizeof(f->id), "%02x:%02x:%llu", major(st.st_dev),
             minor(st.st_dev), (unsigned long long)st.st_ino);
}

static const char *pid_name(long pid)
{
    static char other[32];
    if (pid == getpid())
        return "self";
    if (pid == child_pid && pid > 0)
        return "child";
    if (pid == -1)
        return "-1";
    snprintf(other, sizeof(other), "other(%ld)", pid);
    return other;
}

/* Our lines of /proc/locks as "kind type pid file range". */
static void print_locks(const char *when)
{
    printf("[%s]\n", when);
    CHECK(slurp_into("/proc/locks", buf, sizeof(buf)) >= 0);
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        char kind[16], adv[16], type[16], id[64], start[32], end[32];
        long pid;
        if (strstr(line, "->") ||
            sscanf(line, "%*d: %15s %15s %15s %ld %63s %31s %31s", kind, adv,
                   type, &pid, id, start, end) != 7)
            continue;
        for (size_t i = 0; i < 2; i++) {
            if (strcmp(id, files[i].id) == 0)
                printf("  %-6s %s %-5s %-5s %s %s %s\n", kind, adv, type,
                       pid_name(pid), files[i].name, start, end);
        }
    }
}

static void ofd_lock(int fd, short type, off_t start, off_t len)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET,
                       .l_start = start, .l_len = len};
    CHECK(fcntl(fd, F_OFD_SETLK, &fl) == 0);
}

static void child_flocks(void)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    fflush(stdout);
    child_pid = fork();
    CHECK(child_pid >= 0);
    if (child_pid == 0) {
        int b = open("proc_locks_flock_ofd.B", O_RDWR);
        CHECK(b >= 0 && flock(b, LOCK_SH) == 0);
        CHECK(write(fds[1], "x", 1) == 1);
        for (;;)
            pause();
        _exit(0);
    }
    char c;
    CHECK(read(fds[0], &c, 1) == 1);
    print_locks("a child took LOCK_SH on its own description of B");
    CHECK(kill(child_pid, SIGKILL) == 0);
    int st;
    CHECK(waitpid(child_pid, &st, 0) == child_pid);
    print_locks("the child was killed and reaped");
}

/* The lowest CPU this process may use becomes the only one, for it and
 * for the child it forks. */
static void keep_to_one_cpu(void)
{
    cpu_set_t allowed, one;
    CHECK(sched_getaffinity(0, sizeof(allowed), &allowed) == 0);
    int cpu = 0;
    while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &allowed))
        cpu++;
    CHECK(cpu < CPU_SETSIZE);
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    CHECK(sched_setaffinity(0, sizeof(one), &one) == 0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    keep_to_one_cpu();
    int a = open("proc_locks_flock_ofd.A", O_RDWR | O_CREAT | O_TRUNC, 0644);
    int b = open("proc_locks_flock_ofd.B", O_RDWR | O_CREAT | O_TRUNC, 0644);
    CHECK(a >= 0 && b >= 0);
    name_file(&files[0], a);
    name_file(&files[1], b);

    CHECK(flock(a, LOCK_SH) == 0);
    print_locks("LOCK_SH on A");
    ofd_lock(b, F_WRLCK, 10, 20);
    print_locks("OFD write lock on B 10-29");
    struct flock posix = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
    CHECK(fcntl(a, F_SETLK, &posix) == 0);
    print_locks("POSIX read lock on A from 0");
    CHECK(flock(a, LOCK_SH) == 0);
    print_locks("LOCK_SH on A again");
    CHECK(flock(a, LOCK_EX) == 0);
    print_locks("LOCK_EX on A");
    ofd_lock(b, F_UNLCK, 15, 5);
    print_locks("OFD unlock of B 15-19");
    ofd_lock(b, F_WRLCK, 30, 5);
    print_locks("OFD write lock on B 30-34 (next to 20-29)");
    ofd_lock(b, F_RDLCK, 100, 0);
    print_locks("OFD read lock on B from 100");
    ofd_lock(b, F_UNLCK, 0, 0);
    print_locks("OFD unlock of all of B");

    int d = dup(a);
    CHECK(d >= 0);
    CHECK(flock(d, LOCK_UN) == 0);
    print_locks("LOCK_UN on a dup of A");
    int a2 = open("proc_locks_flock_ofd.A", O_RDWR);
    int a2dup = dup(a2);
    CHECK(a2 >= 0 && a2dup >= 0 && flock(a2, LOCK_EX) == 0);
    close(a2);
    print_locks("LOCK_EX on a new description of A, its first fd closed");
    close(a2dup);
    print_locks("its dup closed too");

    child_flocks();
    close(a);
    close(d);
    close(b);
    print_locks("all closed");
    CHECK(unlink("proc_locks_flock_ofd.A") == 0);
    CHECK(unlink("proc_locks_flock_ofd.B") == 0);
    return 0;
}
