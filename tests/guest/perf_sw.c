/*
 * perf_sw.c - software perf events: each opens and its fd works; a
 * counter moves forward; disabled=1, ENABLE, DISABLE and RESET behave;
 * read_format's times, id and group layouts; hardware events fail as on a
 * host without a PMU; Linux's errnos for bad attributes and arguments.
 * Only what is the same natively is printed (no counts, no times).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long perf_open(struct perf_event_attr *a, int pid, int cpu, int group,
                      unsigned long flags)
{
    return syscall(SYS_perf_event_open, a, pid, cpu, group, flags);
}

/* A software event of this thread, user space only (allowed under
 * perf_event_paranoid 2 as any user). */
static struct perf_event_attr sw_attr(uint64_t config)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.type = PERF_TYPE_SOFTWARE;
    a.size = sizeof(a);
    a.config = config;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    return a;
}

static void show_rc(const char *what, long rc)
{
    printf("%-36s %s\n", what, rc < 0 ? strerrorname_np(errno) : "ok");
    if (rc >= 0 && rc > 2)
        close((int)rc);
}

/* The call's result and errno, the call made before errno is read. */
static void show_ret(const char *what, long rc)
{
    const char *e = rc < 0 ? strerrorname_np(errno) : "-";
    printf("%-28s %ld %s\n", what, rc, e);
}

static uint64_t read1(int fd)
{
    uint64_t v = 0;
    if (read(fd, &v, sizeof(v)) != sizeof(v))
        printf("read of fd %d failed: %s\n", fd, strerrorname_np(errno));
    return v;
}

static void work(int n)
{
    for (int i = 0; i < n; i++)
        (void)syscall(SYS_getppid);
}

static void each_software_event(void)
{
    static const char *const names[] = {
        "cpu-clock", "task-clock", "page-faults", "context-switches",
        "cpu-migrations", "minor-faults", "major-faults", "alignment-faults",
        "emulation-faults", "dummy", "bpf-output", "cgroup-switches"};
    for (uint64_t c = 0; c < PERF_COUNT_SW_MAX; c++) {
        struct perf_event_attr a = sw_attr(c);
        int fd = (int)perf_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
        uint64_t v = 0;
        ssize_t r = fd < 0 ? -1 : read(fd, &v, sizeof(v));
        printf("%-18s open %s read %zd\n", names[c],
               fd < 0 ? strerrorname_np(errno) : "ok", r);
        if (fd >= 0)
            close(fd);
    }
}

static void counter_moves(uint64_t config, const char *name)
{
    struct perf_event_attr a = sw_attr(config);
    int fd = (int)perf_open(&a, 0, -1, -1, 0);
    uint64_t v1 = read1(fd);
    work(200);
    uint64_t v2 = read1(fd);
    printf("%s grows: %s\n", name, v2 > v1 ? "yes" : "no");
    close(fd);
}

static void enable_disable_reset(void)
{
    struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK);
    a.disabled = 1;
    int fd = (int)perf_open(&a, 0, -1, -1, 0);
    work(50);
    printf("disabled at open reads 0: %s\n", read1(fd) == 0 ? "yes" : "no");
    printf("ENABLE: %d\n", ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
    work(200);
    printf("DISABLE: %d\n", ioctl(fd, PERF_EVENT_IOC_DISABLE, 0));
    uint64_t v1 = read1(fd);
    work(200);
    uint64_t v2 = read1(fd);
    printf("counted while enabled: %s\n", v1 > 0 ? "yes" : "no");
    printf("held while disabled: %s\n", v1 == v2 ? "yes" : "no");
    printf("RESET: %d\n", ioctl(fd, PERF_EVENT_IOC_RESET, 0));
    printf("after RESET reads 0: %s\n", read1(fd) == 0 ? "yes" : "no");
    close(fd);
}

static void read_formats(void)
{
    struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK);
    a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
                    PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
    int fd = (int)perf_open(&a, 0, -1, -1, 0);
    uint64_t id = 0, v[4] = {0};
    printf("IOC_ID: %d\n", ioctl(fd, PERF_EVENT_IOC_ID, &id));
    work(100);
    printf("read 4 words: %zd\n", read(fd, v, sizeof(v)));
    printf("running <= enabled: %s, running > 0: %s, id matches: %s\n",
           v[2] <= v[1] ? "yes" : "no", v[2] > 0 ? "yes" : "no",
           v[3] == id ? "yes" : "no");
    show_ret("read 1 word", read(fd, v, 8));
    close(fd);
}

static void group_read(void)
{
    struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK);
    a.disabled = 1;
    a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
    int leader = (int)perf_open(&a, 0, -1, -1, 0);
    struct perf_event_attr b = sw_attr(PERF_COUNT_SW_CPU_CLOCK);
    b.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
    int member = (int)perf_open(&b, 0, -1, leader, 0);
    uint64_t id_l = 0, id_m = 0;
    ioctl(leader, PERF_EVENT_IOC_ID, &id_l);
    ioctl(member, PERF_EVENT_IOC_ID, &id_m);
    work(50);
    uint64_t v[5] = {0};
    printf("group read: %zd\n", read(leader, v, sizeof(v)));
    printf("group nr %llu, disabled leader holds its member: %s\n",
           (unsigned long long)v[0], v[1] == 0 && v[3] == 0 ? "yes" : "no");
    printf("group ids in order: %s\n",
           v[2] == id_l && v[4] == id_m ? "yes" : "no");
    printf("ENABLE group: %d\n",
           ioctl(leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP));
    work(100);
    read(member, v, sizeof(v));
    printf("member's read is the group's: nr %llu, both count: %s\n",
           (unsigned long long)v[0], v[1] > 0 && v[3] > 0 ? "yes" : "no");
    printf("member as a leader: ");
    show_rc("", perf_open(&b, 0, -1, member, 0));
    close(member);
    close(leader);
}

/* Linux counts switches in the kernel's scheduler: none for a user-only
 * event; root's full event sees each sleep's. */
static void context_switches(void)
{
    struct perf_event_attr a = sw_attr(PERF_COUNT_SW_CONTEXT_SWITCHES);
    int user_only = (int)perf_open(&a, 0, -1, -1, 0);
    a.exclude_kernel = 0;
    int full = geteuid() == 0 ? (int)perf_open(&a, 0, -1, -1, 0) : -1;
    struct timespec ts = {0, 2000000};
    for (int i = 0; i < 3; i++)
        nanosleep(&ts, NULL);
    printf("user-only context switches: %llu\n",
           (unsigned long long)read1(user_only));
    if (full >= 0)
        printf("root: a sleep switches: %s\n", read1(full) >= 3 ? "yes" : "no");
    close(user_only);
    if (full >= 0)
        close(full);
}

static void zero_events(void)
{
    static const uint64_t zero[] = {PERF_COUNT_SW_ALIGNMENT_FAULTS,
                                    PERF_COUNT_SW_EMULATION_FAULTS,
                                    PERF_COUNT_SW_DUMMY,
                                    PERF_COUNT_SW_PAGE_FAULTS_MAJ};
    for (size_t i = 0; i < sizeof(zero) / sizeof(zero[0]); i++) {
        struct perf_event_attr a = sw_attr(zero[i]);
        int fd = (int)perf_open(&a, 0, -1, -1, 0);
        work(20);
        printf("config %llu counts 0: %s\n", (unsigned long long)zero[i],
               read1(fd) == 0 ? "yes" : "no");
        close(fd);
    }
}

static void inherit_fork(void)
{
    struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK);
    a.inherit = 1;
    int fd = (int)perf_open(&a, 0, -1, -1, 0);
    pid_t c = fork();
    if (c == 0) {
        work(100);
        _exit(0);
    }
    int st;
    waitpid(c, &st, 0);
    printf("inherit: opened %s, child exit %d, reads: %s\n",
           fd >= 0 ? "yes" : "no", WEXITSTATUS(st),
           read1(fd) > 0 ? "yes" : "no");
    close(fd);
}

static void fd_behaviour(void)
{
    struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK);
    int fd = (int)perf_open(&a, 0, -1, -1, 0);
    struct pollfd pfd = {.fd = fd, .events = POLLIN | POLLOUT};
    int n = poll(&pfd, 1, 0);
    printf("poll: %d revents %#x\n", n, pfd.revents);
    char b[8] = {0};
    show_ret("write", write(fd, b, 8));
    show_ret("lseek", lseek(fd, 0, SEEK_SET));
    printf("F_GETFL accmode O_RDWR: %s\n",
           (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR ? "yes" : "no");
    printf("F_SETFD: %d\n", fcntl(fd, F_SETFD, FD_CLOEXEC));
    show_ret("unknown ioctl", ioctl(fd, _IO('$', 0x7f), 0));
    show_ret("IOC_ID to NULL", ioctl(fd, PERF_EVENT_IOC_ID, NULL));
    show_ret("REFRESH", ioctl(fd, PERF_EVENT_IOC_REFRESH, 1));
    show_ret("PERIOD of a counting event",
             ioctl(fd, PERF_EVENT_IOC_PERIOD, &(uint64_t){1000}));
    show_ret("SET_FILTER", ioctl(fd, PERF_EVENT_IOC_SET_FILTER, "x"));
    show_ret("F_GETPIPE_SZ", fcntl(fd, F_GETPIPE_SZ));
    int d = dup(fd);
    close(fd);
    uint64_t v = 0;
    printf("dup reads after close: %zd\n", read(d, &v, sizeof(v)));
    close(d);
}

static void hardware_and_errors(void)
{
    struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK);
    a.type = PERF_TYPE_HARDWARE;
    a.config = PERF_COUNT_HW_CPU_CYCLES;
    show_rc("hardware cycles", perf_open(&a, 0, -1, -1, 0));
    a.config = PERF_COUNT_HW_INSTRUCTIONS;
    show_rc("hardware instructions", perf_open(&a, 0, -1, -1, 0));
    a.type = PERF_TYPE_HW_CACHE;
    a.config = 0;
    show_rc("hw-cache L1D read access", perf_open(&a, 0, -1, -1, 0));
    a.type = PERF_TYPE_RAW;
    a.config = 0x3c;
    show_rc("raw 0x3c", perf_open(&a, 0, -1, -1, 0));
    a = sw_attr(PERF_COUNT_SW_MAX);
    show_rc("software config past the last", perf_open(&a, 0, -1, -1, 0));
    a = sw_attr(PERF_COUNT_SW_TASK_CLOCK);
    show_rc("bad flags", perf_open(&a, 0, -1, -1, 0x100));
    a.size = 1;
    show_rc("size 1", perf_open(&a, 0, -1, -1, 0));
    printf("size written back >= 128: %s\n", a.size >= 128 ? "yes" : "no");
    a = sw_attr(PERF_COUNT_SW_TASK_CLOCK);
    a.size = 0;
    show_rc("size 0 (first version)", perf_open(&a, 0, -1, -1, 0));
    a.size = PERF_ATTR_SIZE_VER0;
    show_rc("size 64", perf_open(&a, 0, -1, -1, 0));
    a = sw_attr(PERF_COUNT_SW_TASK_CLOCK);
    a.read_format = 1ULL << 20;
    show_rc("unknown read_format", perf_open(&a, 0, -1, -1, 0));
    a = sw_attr(PERF_COUNT_SW_TASK_CLOCK);
    a.inherit_thread = 1;
    show_rc("inherit_thread without inherit", perf_open(&a, 0, -1, -1, 0));
    a = sw_attr(PERF_COUNT_SW_TASK_CLOCK);
    show_rc("pid -1 cpu -1", perf_open(&a, -1, -1, -1, 0));
    show_rc("cpu 4096", perf_open(&a, 0, 4096, -1, 0));
    show_rc("pid that does not exist", perf_open(&a, 999999, -1, -1, 0));
    show_rc("group fd not perf", perf_open(&a, 0, -1, 1, 0));
    show_rc("group fd closed", perf_open(&a, 0, -1, 999, 0));
    show_rc("attr NULL", perf_open(NULL, 0, -1, -1, 0));
    show_rc("pid of self", perf_open(&a, getpid(), -1, -1, 0));
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    each_software_event();
    counter_moves(PERF_COUNT_SW_TASK_CLOCK, "task-clock");
    counter_moves(PERF_COUNT_SW_CPU_CLOCK, "cpu-clock");
    enable_disable_reset();
    read_formats();
    group_read();
    context_switches();
    zero_events();
    inherit_fork();
    fd_behaviour();
    hardware_and_errors();
    return 0;
}
