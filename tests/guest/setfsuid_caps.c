/*
 * setfsuid_caps.c - the effective capabilities follow the filesystem uid
 * (Linux's cap_task_fix_setuid for setfsuid), as root:
 *  - an fsuid going from 0 to another id drops CAP_CHOWN,
 *    CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER, CAP_FSETID,
 *    CAP_LINUX_IMMUTABLE, CAP_MAC_OVERRIDE and CAP_MKNOD from the
 *    effective set (capget and /proc/self/status's CapEff show it), the
 *    permitted set stays;
 *  - back to 0 raises again those of them that are permitted (a
 *    capability capset took from the permitted set stays out);
 *  - the checks follow: a 0600 file of another owner does not open, and
 *    neither does the process's own /proc/self/environ (0400, root's once
 *    the changed fsuid made it not dumpable); both open again at fsuid 0.
 * Prints one line per check; run natively and under hvrun, the output
 * must match. Not root: prints SKIP and exits 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define DATA_FILE "setfsuid_caps.data"

static void get_caps(uint64_t *eff, uint64_t *perm)
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    CHECK(syscall(SYS_capget, &h, d) == 0);
    *eff = d[0].effective | (uint64_t)d[1].effective << 32;
    *perm = d[0].permitted | (uint64_t)d[1].permitted << 32;
}

/* The sets as what the effective one lacks of the permitted one (the
 * sets themselves are the host's bounding set's, which a container
 * narrows), from capget and from /proc/self/status. */
static void print_caps(const char *when)
{
    uint64_t eff, perm;
    get_caps(&eff, &perm);
    printf("%s: capget permitted but not effective %016llx, "
           "DAC_OVERRIDE effective %d\n",
           when, (unsigned long long)(perm & ~eff),
           (int)(eff >> CAP_DAC_OVERRIDE & 1));
    FILE *f = fopen("/proc/self/status", "r");
    CHECK(f != NULL);
    char line[256];
    unsigned long long st_eff = 0, st_perm = 0;
    while (fgets(line, sizeof(line), f)) {
        (void)sscanf(line, "CapEff: %llx", &st_eff);
        (void)sscanf(line, "CapPrm: %llx", &st_perm);
    }
    fclose(f);
    printf("%s: status permitted but not effective %016llx, same as "
           "capget %d\n",
           when, st_perm & ~st_eff, st_eff == eff && st_perm == perm);
}

static void print_open(const char *what, const char *path)
{
    int fd = open(path, O_RDONLY);
    printf("open %s: %s\n", what, fd >= 0 ? "ok" : strerror(errno));
    if (fd >= 0)
        close(fd);
}

static void print_checks(const char *when)
{
    printf("[%s]\n", when);
    print_open("another owner's 0600 file", DATA_FILE);
    print_open("/proc/self/environ", "/proc/self/environ");
}

/* A capability capset took from the permitted set is not raised back. */
static void permitted_bounds_the_raise(void)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        uint64_t eff, perm;
        get_caps(&eff, &perm);
        uint64_t keep = perm & ~(1ULL << CAP_DAC_OVERRIDE);
        struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
        struct __user_cap_data_struct d[2] = {
            {(uint32_t)keep, (uint32_t)keep, 0},
            {(uint32_t)(keep >> 32), (uint32_t)(keep >> 32), 0}};
        CHECK(syscall(SYS_capset, &h, d) == 0);
        CHECK(setfsuid(1000) == 0);
        print_caps("child, DAC_OVERRIDE not permitted, fsuid 1000");
        CHECK(setfsuid(0) == 1000);
        print_caps("child, DAC_OVERRIDE not permitted, fsuid 0 again");
        print_open("another owner's 0600 file (child)", DATA_FILE);
        fflush(stdout);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
          WEXITSTATUS(st) == 0);
}

int main(void)
{
    if (geteuid() != 0) {
        printf("SKIP setfsuid_caps: needs root (CAP_SETUID)\n");
        return 0;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    unlink(DATA_FILE);
    int fd = open(DATA_FILE, O_CREAT | O_EXCL | O_WRONLY, 0600);
    CHECK(fd >= 0);
    CHECK(write(fd, "x", 1) == 1);
    close(fd);
    CHECK(chown(DATA_FILE, 2000, 2000) == 0);

    print_caps("fsuid 0");
    print_checks("fsuid 0");
    CHECK(setfsuid(1000) == 0);
    print_caps("fsuid 1000");
    print_checks("fsuid 1000");
    CHECK(setfsuid(1001) == 1000);
    print_caps("fsuid 1001");
    CHECK(setfsuid(0) == 1001);
    print_caps("fsuid 0 again");
    print_checks("fsuid 0 again");
    permitted_bounds_the_raise();
    CHECK(unlink(DATA_FILE) == 0);
    return 0;
}
