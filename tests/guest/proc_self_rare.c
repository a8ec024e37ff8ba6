/*
 * proc_self_rare.c - the rarer /proc/self files Linux serves and hvrun
 * refused (EACCES: hvrun's own files) or answered with a fixed value:
 * sched (its header names the process, prio follows nice), stack (root's;
 * EACCES to others), numa_maps (a line per mapping of maps), timers (each
 * timer_create timer), cpuset, arch_status, projid_map, ksm_stat,
 * ksm_merging_pages, timens_offsets, clear_refs (write-only), and oom_score (Linux's formula: about 666 for a small
 * process, about 1333 at oom_score_adj 1000) with oom_adj the same setting as
 * oom_score_adj on its old scale. Prints what holds and the fixed texts.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"
#include "guest_slurp.h"

static char buf[1 << 20], other[1 << 20];

static ssize_t slurp(const char *path)
{
    return slurp_into(path, buf, sizeof(buf));
}

/* A write of text to path: 0 or -1 (errno set). */
static int try_put(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    int saved = errno;
    close(fd);
    errno = saved;
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

static void put(const char *path, const char *text)
{
    CHECK(try_put(path, text) == 0);
}

/* The number after "label" and spaces and ':' on its line in buf. */
static long long sched_field(const char *label)
{
    char *s = strstr(buf, label);
    if (!s)
        return -1;
    s = strchr(s, ':');
    return s ? strtoll(s + 1, NULL, 10) : -1;
}

static void sched(void)
{
    CHECK(slurp("/proc/self/sched") > 0);
    char head[64];
    snprintf(head, sizeof(head), "proc_self_rare (%d, #threads: 1)\n",
             (int)getpid());
    printf("sched: header names it: %d\n", strncmp(buf, head, strlen(head)) == 0);
    printf("sched: dashes: %d\n",
           strncmp(buf + strlen(head), "------------------------------", 30) == 0);
    /* prio less the nice the test started with: natively that is the
     * caller's (a `nice make test`), under hvrun the guest's own 0 */
    printf("sched: sum_exec_runtime line: %d, policy %lld, prio - nice %lld\n",
           strstr(buf, "\nse.sum_exec_runtime ") != NULL,
           sched_field("\npolicy "),
           sched_field("\nprio ") - getpriority(PRIO_PROCESS, 0));
    CHECK(setpriority(PRIO_PROCESS, 0, 5) == 0);
    CHECK(slurp("/proc/self/sched") > 0);
    printf("sched: nice 5: prio %lld\n", sched_field("\nprio "));
}

static void stack(void)
{
    ssize_t n = slurp("/proc/self/stack");
    printf("stack as root: %s, [<0>] frames: %d\n", result_text(n < 0 ? -1 : 0),
           n > 0 && strncmp(buf, "[<0>] ", 6) == 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        CHECK(setuid(65534) == 0);
        n = slurp("/proc/self/stack");
        printf("stack as nobody: %s\n", result_text(n < 0 ? -1 : 0));
        fflush(stdout);
        _exit(0);
    }
    CHECK(waitpid(child, NULL, 0) == child);
}

static void numa_maps(void)
{
    CHECK(slurp("/proc/self/numa_maps") > 0);
    CHECK(slurp_into("/proc/self/maps", other, sizeof(other)) > 0);
    int lines = 0;
    bool same = true;
    char *m = other;
    for (char *l = buf; *l; lines++) {
        char *end = strchr(l, '\n');
        char *mend = strchr(m, '\n');
        if (mend && strstr(m, "[vsyscall]") && strstr(m, "[vsyscall]") < mend) {
            m = mend + 1; /* the gate area is no VMA: numa_maps skips it */
            mend = strchr(m, '\n');
        }
        if (!end || !mend)
            break;
        unsigned long long a = strtoull(l, NULL, 16), b = strtoull(m, NULL, 16);
        same = same && a == b && strstr(l, " default") == strchr(l, ' ');
        l = end + 1;
        m = mend + 1;
    }
    if (strncmp(m, "ffffffffff600000-", 17) == 0)
        m += strlen(m);
    printf("numa_maps: a line per maps line, its start, default policy: %d\n",
           same && lines > 5 && *m == '\0');
}

static void timers(void)
{
    CHECK(slurp("/proc/self/timers") >= 0);
    printf("timers before any: [%s]\n", buf);
    timer_t t[2];
    struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1};
    sev.sigev_value.sival_ptr = (void *)0x1234;
    CHECK(timer_create(CLOCK_MONOTONIC, &sev, &t[0]) == 0);
    sev.sigev_notify = SIGEV_NONE;
    sev.sigev_value.sival_ptr = (void *)0x5678;
    CHECK(timer_create(CLOCK_REALTIME, &sev, &t[1]) == 0);
    CHECK(slurp("/proc/self/timers") > 0);
    char pid[32];
    snprintf(pid, sizeof(pid), "pid.%d\n", (int)getpid());
    for (char *s; (s = strstr(buf, pid));)
        memcpy(s, "pid.P", 5), memmove(s + 5, s + strlen(pid) - 1,
                                       strlen(s + strlen(pid) - 1) + 1);
    printf("timers:\n%s", buf);
}

static void small_files(void)
{
    static const char *const names[] = {"cpuset", "projid_map",
                                        "ksm_merging_pages"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/self/%s", names[i]);
        ssize_t n = slurp(path);
        printf("%s: %s [%s]\n", names[i], result_text(n < 0 ? -1 : 0), buf);
    }
    ssize_t n = slurp("/proc/self/timens_offsets");
    printf("timens_offsets: %s [%s]\n", result_text(n < 0 ? -1 : 0), buf);
    n = slurp("/proc/self/clear_refs");
    printf("clear_refs read as root: %s\n", result_text(n < 0 ? -1 : 0));
    n = slurp("/proc/self/ksm_stat");
    printf("ksm_stat: %s, first line [%.*s]\n", result_text(n < 0 ? -1 : 0),
           (int)strcspn(buf, "\n"), buf);
    n = slurp("/proc/self/arch_status");
    printf("arch_status: %s, empty or AVX512_elapsed_ms: %d\n",
           result_text(n < 0 ? -1 : 0),
           n == 0 || strncmp(buf, "AVX512_elapsed_ms:\t", 19) == 0);
}

static long read_long(const char *path)
{
    CHECK(slurp(path) > 0);
    return atol(buf);
}

/* oom_adj and oom_score_adj as a writer without CAP_SYS_RESOURCE
 * changes them: oom_adj only up, oom_score_adj not below the least a
 * privileged writer set (0 here). */
static void oom_unprivileged(void)
{
    pid_t parent = getpid();
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        CHECK(setuid(65534) == 0);
        /* (Linux makes it undumpable: its files are root's until this) */
        CHECK(prctl(PR_SET_DUMPABLE, 1) == 0);
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)parent);
        printf("nobody: root's oom_score_adj opened to write: %s\n",
               result_text(open(path, O_WRONLY)));
        snprintf(path, sizeof(path), "/proc/%d/timerslack_ns", (int)parent);
        printf("nobody: root's timerslack_ns written: %s\n",
               result_text(try_put(path, "60000")));
        printf("nobody: clear_refs opened to read: %s\n",
               result_text(open("/proc/self/clear_refs", O_RDONLY)));
        printf("nobody: oom_score_adj 600: %s\n",
               result_text(try_put("/proc/self/oom_score_adj", "600")));
        printf("nobody: oom_adj 4 (lower): %s\n",
               result_text(try_put("/proc/self/oom_adj", "4")));
        printf("nobody: oom_adj 12 (higher): %s",
               result_text(try_put("/proc/self/oom_adj", "12")));
        printf("; oom_score_adj %ld\n", read_long("/proc/self/oom_score_adj"));
        printf("nobody: oom_score_adj 100: %s\n",
               result_text(try_put("/proc/self/oom_score_adj", "100")));
        printf("nobody: oom_score_adj -5: %s",
               result_text(try_put("/proc/self/oom_score_adj", "-5")));
        printf("; oom_score_adj %ld\n", read_long("/proc/self/oom_score_adj"));
        _exit(0);
    }
    CHECK(waitpid(child, NULL, 0) == child);
}

static void oom(void)
{
    long score = read_long("/proc/self/oom_score");
    printf("oom_score at adj 0 in [666, 700]: %d\n", score >= 666 && score <= 700);
    put("/proc/self/oom_score_adj", "1000");
    score = read_long("/proc/self/oom_score");
    printf("oom_score at adj 1000 in [1332, 1366]: %d; oom_adj %ld\n",
           score >= 1332 && score <= 1366, read_long("/proc/self/oom_adj"));
    put("/proc/self/oom_score_adj", "500");
    printf("oom_adj at oom_score_adj 500: %ld\n", read_long("/proc/self/oom_adj"));
    /* (nothing below 0: that takes CAP_SYS_RESOURCE, which a container's
     * root may lack, where hvrun's root has every capability) */
    put("/proc/self/oom_adj", "15");
    printf("oom_score_adj at oom_adj 15: %ld\n",
           read_long("/proc/self/oom_score_adj"));
    put("/proc/self/oom_score_adj", "0");
    oom_unprivileged();
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    sched();
    stack();
    numa_maps();
    timers();
    small_files();
    oom();
    return 0;
}
