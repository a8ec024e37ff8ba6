/*
 * proc_self_counters.c - /proc/self files that tools read for a
 * process's memory and scheduling figures: smaps_rollup (ps, smem,
 * psutil), schedstat, io (iotop, pidstat -d, psutil) and wchan (ps -o
 * wchan), for the caller and for a child, and attr/current (ps -Z): each opens and has Linux's
 * layout (hvrun refused them: EACCES, hvrun's own files), and the
 * child's smaps_rollup's Rss is the sum of its smaps' Rss. Prints the
 * layouts, no value.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"
#include "guest_slurp.h"

static char buf[1 << 20];

/* The whole file into buf; its length, or -1 (errno set). */
static ssize_t slurp(const char *path)
{
    return slurp_into(path, buf, sizeof(buf));
}

/* The sum of "Rss:" lines in buf, in kB. */
static unsigned long long rss_sum(void)
{
    unsigned long long sum = 0;
    for (char *s = buf; (s = strstr(s, "\nRss:")); s++)
        sum += strtoull(s + 5, NULL, 10);
    return sum;
}

/* Each line's label (what precedes ':'), space separated, from line
 * `from` (0: the first). */
static void labels(const char *what, int from)
{
    printf("%s:", what);
    char *line = buf;
    for (int i = 0; i < from && *line; i++)
        line = strchrnul(line, '\n') + (strchr(line, '\n') != NULL);
    while (*line) {
        char *end = strchrnul(line, '\n');
        char *colon = memchr(line, ':', (size_t)(end - line));
        if (colon)
            printf(" %.*s", (int)(colon - line), line);
        line = *end ? end + 1 : end;
    }
    printf("\n");
}

static void counters(const char *who, const char *dir)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/smaps", dir);
    CHECK(slurp(path) > 0);
    unsigned long long smaps_rss = rss_sum();
    snprintf(path, sizeof(path), "%s/smaps_rollup", dir);
    ssize_t n = slurp(path);
    printf("%s smaps_rollup: %s\n", who, result_text(n < 0 ? -1 : 0));
    if (n > 0) {
        printf("%s smaps_rollup's first line ends [rollup]: %d\n", who,
               strstr(buf, " [rollup]\n") == strchr(buf, '\n') - 9);
        /* (its own memory grows as buf is read into: only another's) */
        if (strcmp(who, "self") != 0)
            printf("%s smaps_rollup's Rss is smaps' sum: %d\n", who,
                   rss_sum() == smaps_rss);
        labels("  labels", 1);
    }
    snprintf(path, sizeof(path), "%s/schedstat", dir);
    n = slurp(path);
    unsigned long long run, wait, slices;
    printf("%s schedstat: %s, %d fields\n", who, result_text(n < 0 ? -1 : 0),
           n > 0 ? sscanf(buf, "%llu %llu %llu", &run, &wait, &slices) : 0);
    snprintf(path, sizeof(path), "%s/io", dir);
    n = slurp(path);
    printf("%s io: %s\n", who, result_text(n < 0 ? -1 : 0));
    if (n > 0)
        labels("  labels", 0);
    snprintf(path, sizeof(path), "%s/wchan", dir);
    n = slurp(path);
    printf("%s wchan: %s\n", who, result_text(n < 0 ? -1 : 0));
}

int main(void)
{
    counters("self", "/proc/self");
    /* the LSM's label: the host's answer (EINVAL without an LSM), hvrun
     * refused it as its own file (EACCES) */
    printf("self attr/current: %s\n",
           result_text(slurp("/proc/self/attr/current") < 0 ? -1 : 0));
    int ready[2];
    CHECK(pipe(ready) == 0);
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        CHECK(write(ready[1], "", 1) == 1);
        pause();
        _exit(0);
    }
    char c;
    CHECK(read(ready[0], &c, 1) == 1);
    char dir[64];
    snprintf(dir, sizeof(dir), "/proc/%d", (int)pid);
    counters("child", dir);
    CHECK(kill(pid, SIGKILL) == 0);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    return 0;
}
