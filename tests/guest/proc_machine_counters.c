/*
 * proc_machine_counters.c - the machine's counter files in /proc agree
 * with each other and with the process's own view, as on Linux; under
 * hvrun they were the host's live counters (a run read other figures each
 * time) while /proc/meminfo and the pids are the run's:
 * - /proc/vmstat's LRU counts are /proc/meminfo's Active/Inactive figures
 *   in pages, and the sum of /proc/zoneinfo's "pages free" is vmstat's
 *   nr_free_pages (each read again until the figures hold still between
 *   two reads: natively other processes move them);
 * - /proc/sys/kernel/ns_last_pid, read after a fork, is the child's pid
 *   (natively unless another process forked in between: tried again);
 * - /proc/pagetypeinfo's free counts are buddyinfo's, split by type;
 * - /proc/buddyinfo, /proc/diskstats, /proc/interrupts, /proc/softirqs,
 *   /proc/pressure/*, /proc/sys/fs/file-nr, inode-nr, inode-state and
 *   dentry-state have Linux's layouts.
 * Prints what holds, no value. That two runs read the same bytes is
 * tests/determinism's (proc-vmstat and the rest).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"
#include "guest_slurp.h"

#define TRIES 200

static char buf[1 << 20];

/* The whole file into buf; its length, or -1 (errno set). */
static ssize_t slurp(const char *path)
{
    return slurp_into(path, buf, sizeof(buf));
}

/* The number after the first line starting with label in buf, or -1. */
static long long field(const char *label)
{
    size_t n = strlen(label);
    for (const char *line = buf; *line;) {
        if (strncmp(line, label, n) == 0)
            return strtoll(line + n, NULL, 10);
        const char *nl = strchr(line, '\n');
        if (!nl)
            break;
        line = nl + 1;
    }
    return -1;
}

/* meminfo's LRU figures in kB, one number. */
static long long meminfo_lru(void)
{
    CHECK(slurp("/proc/meminfo") > 0);
    return field("Active(anon):") + 1000003 * field("Inactive(anon):") +
           1000033 * field("Active(file):") +
           1000037 * field("Inactive(file):");
}

/* The same of vmstat (in buf), in kB. */
static long long vmstat_lru(void)
{
    return 4 * (field("nr_active_anon ") +
                1000003 * field("nr_inactive_anon ") +
                1000033 * field("nr_active_file ") +
                1000037 * field("nr_inactive_file "));
}

/* The sum of each zone's "pages free" in zoneinfo (in buf). */
static long long zones_free(void)
{
    long long sum = 0;
    for (const char *s = buf; (s = strstr(s, "\n  pages free ")); s++)
        sum += strtoll(s + 14, NULL, 10);
    return sum;
}

/* Every line of buf is "name value": a lowercase name, a decimal. */
static bool name_value_lines(void)
{
    int lines = 0;
    for (const char *line = buf; *line; lines++) {
        const char *c = line;
        while (islower((unsigned char)*c) || isdigit((unsigned char)*c) ||
               *c == '_')
            c++;
        if (c == line || *c++ != ' ' || !isdigit((unsigned char)*c))
            return false;
        while (isdigit((unsigned char)*c))
            c++;
        if (*c != '\n')
            return false;
        line = c + 1;
    }
    return lines > 100;
}

static void vmstat_and_zoneinfo(void)
{
    CHECK(slurp("/proc/vmstat") > 0);
    printf("vmstat: name value lines: %d\n", name_value_lines());
    printf("vmstat: has pgfault, nr_dirty_threshold: %d\n",
           field("pgfault ") >= 0 && field("nr_dirty_threshold ") >= 0);
    int agree = 0;
    for (int i = 0; i < TRIES && !agree; i++) {
        long long before = meminfo_lru();
        CHECK(slurp("/proc/vmstat") > 0);
        long long vm = vmstat_lru();
        long long after = meminfo_lru();
        agree = before == after && vm == before;
    }
    printf("vmstat's LRU counts are meminfo's: %d\n", agree);
    agree = 0;
    for (int i = 0; i < TRIES && !agree; i++) {
        CHECK(slurp("/proc/vmstat") > 0);
        long long before = field("nr_free_pages ");
        CHECK(slurp("/proc/zoneinfo") > 0);
        long long zone_free = zones_free();
        CHECK(slurp("/proc/vmstat") > 0);
        agree = before == field("nr_free_pages ") && zone_free == before;
    }
    printf("zoneinfo's free pages are vmstat's: %d\n", agree);
}

/* buddyinfo's counts (in buf) of each zone by order, summed over zones. */
static void buddy_counts(unsigned long long out[11])
{
    memset(out, 0, 11 * sizeof(out[0]));
    for (char *line = buf; *line;) {
        char *c = strstr(line, "zone");
        char *end = strchrnul(line, '\n');
        if (c && c < end) {
            c += 4;
            while (*c == ' ')
                c++;
            while (*c && *c != ' ')
                c++; /* the zone's name */
            for (int o = 0; o < 11; o++)
                out[o] += strtoull(c, &c, 10);
        }
        line = *end ? end + 1 : end;
    }
}

/* pagetypeinfo's free counts (in buf) by order, summed over zones and
 * types. */
static void pagetype_counts(unsigned long long out[11])
{
    memset(out, 0, 11 * sizeof(out[0]));
    char *end = strstr(buf, "\nNumber of blocks");
    for (char *s = buf; (s = strstr(s, ", type ")) && (!end || s < end); s++) {
        char *c = s + 7;
        while (*c == ' ')
            c++;
        while (*c && *c != ' ')
            c++;
        for (int o = 0; o < 11; o++)
            out[o] += strtoull(c, &c, 10);
    }
}

/* pagetypeinfo (root's) splits buddyinfo's free blocks by type; diskstats
 * has a line of 17 counts per block device. */
static void pagetypes_and_disks(void)
{
    int agree = 0;
    for (int i = 0; i < TRIES && !agree; i++) {
        unsigned long long buddy[11], typed[11], again[11];
        CHECK(slurp("/proc/buddyinfo") > 0);
        buddy_counts(buddy);
        CHECK(slurp("/proc/pagetypeinfo") > 0);
        pagetype_counts(typed);
        CHECK(slurp("/proc/buddyinfo") > 0);
        buddy_counts(again);
        agree = memcmp(buddy, again, sizeof(buddy)) == 0 &&
                memcmp(buddy, typed, sizeof(buddy)) == 0;
    }
    printf("pagetypeinfo's free counts are buddyinfo's: %d\n", agree);
    CHECK(slurp("/proc/diskstats") >= 0);
    bool layout = true;
    for (char *line = buf; *line;) {
        char *end = strchrnul(line, '\n');
        int fields = 0;
        for (char *c = line; c < end;) {
            while (c < end && *c == ' ')
                c++;
            if (c < end)
                fields++;
            while (c < end && *c != ' ')
                c++;
        }
        layout = layout && fields == 20;
        line = *end ? end + 1 : end;
    }
    printf("diskstats: major minor name and 17 counts a line: %d\n", layout);
}

static void last_pid(void)
{
    int agree = 0;
    for (int i = 0; i < TRIES && !agree; i++) {
        pid_t child = fork();
        CHECK(child >= 0);
        if (child == 0)
            _exit(0);
        CHECK(slurp("/proc/sys/kernel/ns_last_pid") > 0);
        agree = atol(buf) == child;
        CHECK(waitpid(child, NULL, 0) == child);
    }
    printf("ns_last_pid is the child just forked: %d\n", agree);
}

static void layouts(void)
{
    CHECK(slurp("/proc/buddyinfo") > 0);
    printf("buddyinfo: Node 0, 11 orders: %d\n",
           strncmp(buf, "Node 0, zone ", 13) == 0 &&
               strlen(buf) > 13 + 8 + 11 * 7 - 1);
    CHECK(slurp("/proc/interrupts") > 0);
    printf("interrupts: CPU0 header, NMI and LOC rows: %d\n",
           strncmp(buf, "           CPU0", 15) == 0 &&
               strstr(buf, "\nNMI: ") && strstr(buf, "\nLOC: ") &&
               strstr(buf, "\nERR: "));
    CHECK(slurp("/proc/softirqs") > 0);
    printf("softirqs: CPU0 header, rows: %d\n",
           strncmp(buf, "                    CPU0", 24) == 0 &&
               strstr(buf, "\n          HI:") &&
               strstr(buf, "\n         RCU:"));
    unsigned long long a, b, c;
    CHECK(slurp("/proc/sys/fs/file-nr") > 0);
    printf("file-nr: three fields, 0 free, max above open: %d\n",
           sscanf(buf, "%llu\t%llu\t%llu\n", &a, &b, &c) == 3 && b == 0 &&
               c >= a);
    CHECK(slurp("/proc/sys/fs/inode-nr") > 0);
    printf("inode-nr: two fields: %d\n",
           sscanf(buf, "%llu\t%llu\n", &a, &b) == 2);
    CHECK(slurp("/proc/sys/fs/dentry-state") > 0);
    unsigned long long d[6];
    printf("dentry-state: six fields: %d\n",
           sscanf(buf, "%llu\t%llu\t%llu\t%llu\t%llu\t%llu\n", &d[0], &d[1],
                  &d[2], &d[3], &d[4], &d[5]) == 6);
    static const char *const psi[] = {"/proc/pressure/cpu",
                                      "/proc/pressure/memory",
                                      "/proc/pressure/io"};
    for (size_t i = 0; i < 3; i++) {
        CHECK(slurp(psi[i]) > 0);
        printf("%s: some and full lines: %d\n", psi[i],
               strncmp(buf, "some avg10=", 11) == 0 &&
                   strstr(buf, "\nfull avg10=") != NULL);
    }
    CHECK(slurp("/proc/sys/fs/inode-state") > 0);
    int fields = 0;
    for (char *s = strtok(buf, "\t\n"); s; s = strtok(NULL, "\t\n"))
        fields++;
    printf("inode-state: seven fields: %d\n", fields == 7);
}

int main(void)
{
    vmstat_and_zoneinfo();
    pagetypes_and_disks();
    last_pid();
    layouts();
    return 0;
}
