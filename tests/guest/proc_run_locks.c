/*
 * proc_run_locks.c - /proc/locks, /proc/sys/fs/aio-nr, /proc/timer_list
 * and the block devices' sysfs counters say what Linux's do about the
 * reader's own machine. Under hvrun they were the host's: /proc/locks
 * listed the host's locks (other processes', with host pids) and none of
 * the run's POSIX locks by the inode stat shows; aio-nr stayed 0 whatever
 * the run set up; timer_list and /sys/block/DEV/stat moved between runs.
 * - the POSIX locks of this process and of its child are listed with
 *   their pids and the file's device and inode as fstat shows them,
 *   adjacent ranges of one type as one lock, "EOF" for a lock to the end;
 * - aio-nr grows by io_setup's nr_events and falls at io_destroy;
 * - timer_list has Linux's header and is root's (EACCES to others);
 * - /sys/block/DEV/stat has 17 counters, inflight 2.
 * Prints what holds, no pid, inode or time. That two runs read the same
 * bytes is tests/determinism's proc-io-timers.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"
#include "guest_slurp.h"

static char buf[1 << 20];

static void lock_range(int fd, short type, off_t start, off_t len)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET,
                       .l_start = start, .l_len = len};
    CHECK(fcntl(fd, F_SETLK, &fl) == 0);
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* /proc/locks' lines of the file (dev:ino), each as
 * "TYPE ADVISORY KIND OWNER START END", OWNER parent or child, sorted
 * (Linux lists the newest first, per CPU). */
static void show_locks(const struct stat *st, pid_t parent, pid_t child)
{
    char id[64];
    snprintf(id, sizeof(id), " %02x:%02x:%llu ", major(st->st_dev),
             minor(st->st_dev), (unsigned long long)st->st_ino);
    CHECK(slurp_into("/proc/locks", buf, sizeof(buf)) >= 0);
    char *lines[64];
    int n = 0, ours_elsewhere = 0;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        char cls[16], adv[16], kind[16], dev[64], start[32], end[32];
        int pid, colon;
        if (sscanf(line, "%d: %15s %15s %15s %d %63s %31s %31s", &colon, cls,
                   adv, kind, &pid, dev, start, end) != 8) {
            printf("unparsed: %s\n", line);
            continue;
        }
        if (!strstr(line, id)) {
            ours_elsewhere += pid == parent || pid == child;
            continue;
        }
        const char *owner = pid == parent ? "parent"
                            : pid == child ? "child"
                                           : "other";
        CHECK(n < 64);
        CHECK(asprintf(&lines[n++], "%s %s %s %s %s %s", cls, adv, kind,
                       owner, start, end) > 0);
    }
    qsort(lines, (size_t)n, sizeof(lines[0]), by_text);
    for (int i = 0; i < n; i++) {
        printf("lock: %s\n", lines[i]);
        free(lines[i]);
    }
    printf("locks of ours on other files: %d\n", ours_elsewhere);
}

static void locks(void)
{
    int fd = open("proc_run_locks.file", O_RDWR | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    lock_range(fd, F_RDLCK, 0, 10);
    lock_range(fd, F_RDLCK, 10, 10); /* joins [0, 10): one lock 0 19 */
    lock_range(fd, F_WRLCK, 40, 5);
    int ready[2], done[2];
    CHECK(pipe(ready) == 0 && pipe(done) == 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        lock_range(fd, F_RDLCK, 5, 10); /* shares the parent's read lock */
        lock_range(fd, F_WRLCK, 100, 0);
        CHECK(write(ready[1], "r", 1) == 1);
        char c;
        CHECK(read(done[0], &c, 1) == 1);
        _exit(0);
    }
    char c;
    CHECK(read(ready[0], &c, 1) == 1);
    show_locks(&st, getpid(), child);
    CHECK(write(done[1], "d", 1) == 1);
    int status;
    CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status));
    printf("after the child's exit:\n");
    show_locks(&st, getpid(), child);
    lock_range(fd, F_UNLCK, 0, 0);
    printf("after unlocking:\n");
    show_locks(&st, getpid(), child);
    close(fd);
    unlink("proc_run_locks.file");
}

static long long aio_nr(void)
{
    CHECK(slurp_into("/proc/sys/fs/aio-nr", buf, sizeof(buf)) > 0);
    return atoll(buf);
}

static void aio(void)
{
    /* another process of the host may set up contexts meanwhile: tried
     * until one round sees only this one's */
    int held = 0;
    for (int tries = 0; tries < 20 && !held; tries++) {
        aio_context_t a = 0, b = 0;
        long long before = aio_nr();
        CHECK(syscall(SYS_io_setup, 10, &a) == 0);
        CHECK(syscall(SYS_io_setup, 1, &b) == 0);
        long long both = aio_nr();
        CHECK(syscall(SYS_io_destroy, a) == 0);
        long long one = aio_nr();
        CHECK(syscall(SYS_io_destroy, b) == 0);
        held = both - before == 11 && one - before == 1 && aio_nr() == before;
    }
    printf("aio-nr counts io_setup's nr_events: %d\n", held);
    CHECK(slurp_into("/proc/sys/fs/aio-max-nr", buf, sizeof(buf)) > 0);
    printf("aio-max-nr is a number over 11: %d\n", atoll(buf) > 11);
}

static void timer_list(void)
{
    CHECK(slurp_into("/proc/timer_list", buf, sizeof(buf)) > 0);
    unsigned long long now;
    int bases;
    printf("timer_list header: %d\n",
           sscanf(buf, "Timer List Version: v0.10\n"
                       "HRTIMER_MAX_CLOCK_BASES: %d\nnow at %llu nsecs\n",
                  &bases, &now) == 2 && bases == 8);
    printf("timer_list has cpu 0 and jiffies: %d\n",
           strstr(buf, "\ncpu: 0\n clock 0:\n") && strstr(buf, "\njiffies: "));
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        CHECK(setuid(65534) == 0);
        int fd = open("/proc/timer_list", O_RDONLY);
        printf("timer_list as nobody: %s\n", fd < 0 ? strerror(errno) : "opened");
        _exit(0);
    }
    int status;
    CHECK(waitpid(child, &status, 0) == child);
}

/* "N N ... N\n", n unsigned numbers, each right-aligned in 8 columns or
 * wider. */
static int counters(const char *s, int n)
{
    for (int i = 0; i < n; i++) {
        const char *start = s;
        while (*s == ' ')
            s++;
        const char *digits = s;
        while (*s >= '0' && *s <= '9')
            s++;
        if (s == digits || s - start < 8 + (i > 0))
            return 0;
    }
    return strcmp(s, "\n") == 0;
}

static void block_counters(void)
{
    DIR *d = opendir("/sys/block");
    CHECK(d);
    int disks = 0, good = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[512];
        disks++;
        snprintf(path, sizeof(path), "/sys/block/%s/stat", e->d_name);
        int ok = slurp_into(path, buf, sizeof(buf)) > 0 && counters(buf, 17);
        snprintf(path, sizeof(path), "/sys/block/%s/inflight", e->d_name);
        good += ok && slurp_into(path, buf, sizeof(buf)) > 0 &&
                counters(buf, 2);
    }
    closedir(d);
    printf("block devices with Linux's stat and inflight: %d\n",
           disks > 0 && good == disks);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    locks();
    aio();
    if (getuid() == 0)
        timer_list();
    else
        printf("timer_list: not root, skipped\n");
    block_counters();
    return 0;
}
