/*
 * sysfs_call.c - sysfs(2), the obsolete filesystem-type query, against
 * /proc/filesystems: option 3's count is its number of lines, and every
 * index's name (option 2) is its line's name in order and goes back to
 * that index (option 1), "proc" among them; the option is an int and
 * option 2's index an unsigned int (higher bits dropped); EINVAL for
 * options 0, 4 and -1, an unknown name and an index past the end; ENOENT
 * for an empty name and ENAMETOOLONG for one of PATH_MAX bytes (getname's
 * answers); EFAULT for a bad name and a bad buffer. Run natively and
 * under hvrun, the output must match (tests/run-guest-tests.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest_check.h"

#define MAX_TYPES 256

static char names[MAX_TYPES][64];

static long fs_index(const void *name)
{
    return syscall(SYS_sysfs, 1, name);
}

static long fs_name(unsigned long index, void *buf)
{
    return syscall(SYS_sysfs, 2, index, buf);
}

/* The names of /proc/filesystems ("nodev\tproc" or "\text4"), in order. */
static int read_proc_filesystems(void)
{
    FILE *f = fopen("/proc/filesystems", "r");
    CHECK(f != NULL);
    char line[256];
    int n = 0;
    while (n < MAX_TYPES && fgets(line, sizeof(line), f)) {
        char *tab = strchr(line, '\t');
        CHECK(tab != NULL);
        tab[strcspn(tab, "\n")] = 0;
        snprintf(names[n++], sizeof(names[0]), "%s", tab + 1);
    }
    fclose(f);
    return n;
}

static void against_proc(void)
{
    int lines = read_proc_filesystems();
    long count = syscall(SYS_sysfs, 3);
    printf("count is /proc/filesystems' line count: %s\n",
           count == lines ? "yes" : "no");
    int agree = 0;
    for (int i = 0; i < lines; i++) {
        char buf[64] = "";
        if (fs_name((unsigned long)i, buf) == 0 && !strcmp(buf, names[i]) &&
            fs_index(buf) == i)
            agree++;
    }
    printf("indexes whose name is their line's and goes back: %s\n",
           agree == lines ? "all" : "not all");
    long proc = fs_index("proc");
    char buf[64] = "";
    printf("index of proc: %s\n", proc >= 0 ? "found" : result_text(proc));
    long named = fs_name((unsigned long)proc, buf);
    printf("its name: %s (%s)\n", result_text(named), buf);
    memset(buf, 0, sizeof(buf));
    printf("index + 2^32: %s (%s)\n",
           result_text(fs_name((1UL << 32) + (unsigned long)proc, buf)), buf);
    printf("option 3 + 2^32: %s\n",
           syscall(SYS_sysfs, (1L << 32) + 3) == count ? "the count" : "other");
    printf("index past the end: %s\n",
           result_text(fs_name((unsigned long)count, buf)));
}

static void refusals(void)
{
    char buf[64];
    static char long_name[PATH_MAX + 1];
    memset(long_name, 'a', PATH_MAX);
    printf("option 0: %s\n", result_text(syscall(SYS_sysfs, 0, "proc")));
    printf("option 4: %s\n", result_text(syscall(SYS_sysfs, 4, 0, buf)));
    printf("option -1: %s\n", result_text(syscall(SYS_sysfs, -1)));
    printf("unknown name: %s\n", result_text(fs_index("hvrun-no-such-fs")));
    printf("empty name: %s\n", result_text(fs_index("")));
    printf("PATH_MAX-byte name: %s\n", result_text(fs_index(long_name)));
    printf("name at a bad address: %s\n", result_text(fs_index((void *)8)));
    printf("NULL name: %s\n", result_text(fs_index(NULL)));
    printf("buffer at a bad address: %s\n",
           result_text(fs_name(0, (void *)8)));
}

int main(void)
{
    against_proc();
    refusals();
    return 0;
}
