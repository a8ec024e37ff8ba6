/*
 * mmap_pseudo: files whose mmap Linux refuses by their own file
 * operations: a process's /proc entries (no mmap: ENODEV), /proc's seq
 * files (proc_reg_mmap: EIO), sysfs attributes (kernfs: ENODEV), and
 * /dev/null; beside a regular file that maps. hvrun fills a private
 * mapping by reading the file, so it asks the host's mmap (or knows its
 * own /proc files) first. Output compared with native.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void try(const char *path, int type)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        printf("%-34s open: %s\n", path, strerrorname_np(errno));
        return;
    }
    void *m = mmap(NULL, 4096, PROT_READ, type, fd, 0);
    printf("%-34s %s: %s\n", path,
           type == MAP_PRIVATE ? "private" : "shared",
           m == MAP_FAILED ? strerrorname_np(errno) : "mapped");
    if (m != MAP_FAILED)
        munmap(m, 4096);
    close(fd);
}

int main(void)
{
    static const char *const paths[] = {
        "/proc/self/status", "/proc/self/maps", "/proc/self/stat",
        "/proc/cpuinfo",     "/proc/meminfo",   "/proc/version",
        "/sys/devices/system/cpu/online", "/dev/null", "/etc/passwd",
    };
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        try(paths[i], MAP_PRIVATE);
        try(paths[i], MAP_SHARED);
    }
    return 0;
}
