/*
 * proc_map_files.c - /proc/PID/map_files: one symlink per mapping of a
 * file, named START-END (lowercase hex, no 0x: maps' first column), to the
 * file. Under hvrun the directory was EACCES (hvrun's own map_files, which
 * describes hvrun's memory, is refused to the guest).
 * - as root: the directory (0500) lists "." and ".." and links (DT_LNK) in
 *   address order, each a mapping maps shows with a path, none for an
 *   anonymous mapping; the link of a mapping of a file opened read-only is
 *   0400, of a shared writable one 0600, size 64; readlink names the file, stat and open
 *   reach the file itself; a name no mapping has (or with a leading zero)
 *   is ENOENT;
 * - another process's (a fork child's) lists the mappings it inherited;
 * - as a non-root process its own: listed, lstat and readlink work, stat
 *   and open are EPERM (following needs CAP_SYS_ADMIN).
 * Prints what holds, no address or inode number.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"
#include "guest_slurp.h"

#define DATA_FILE "proc_map_files.data"

static char maps[1 << 20];

static const char *base_of(const char *s)
{
    const char *slash = strrchr(s, '/');
    return slash ? slash + 1 : s;
}

static void entry_of(const void *addr, size_t len, char *out, size_t cap)
{
    snprintf(out, cap, "%lx-%lx", (unsigned long)addr,
             (unsigned long)addr + (unsigned long)len);
}

/* Whether maps has a line for entry whose name is a path. */
static bool maps_has_file_line(const char *entry)
{
    size_t n = strlen(entry);
    for (char *line = maps; *line;) {
        char *nl = strchr(line, '\n');
        if (strncmp(line, entry, n) == 0 && line[n] == ' ') {
            char *path = strchr(line, '/');
            return path && (!nl || path < nl);
        }
        if (!nl)
            break;
        line = nl + 1;
    }
    return false;
}

/* The listing of dir: its checks, and whether it has each of want. */
static void print_listing(const char *dir, const char *const want[],
                          const char *const want_names[], size_t n_want)
{
    CHECK(slurp_into("/proc/self/maps", maps, sizeof(maps)) >= 0);
    DIR *d = opendir(dir);
    if (!d) {
        printf("  opendir: %s\n", strerror(errno));
        return;
    }
    int dots = 0, links = 0, not_link = 0, not_in_maps = 0, unordered = 0;
    bool found[8] = {false};
    unsigned long last = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) {
            dots += e->d_type == DT_DIR;
            continue;
        }
        links++;
        not_link += e->d_type != DT_LNK;
        unsigned long start = strtoul(e->d_name, NULL, 16);
        unordered += start < last;
        last = start;
        if (strcmp(dir, "/proc/self/map_files") == 0)
            not_in_maps += !maps_has_file_line(e->d_name);
        for (size_t i = 0; i < n_want; i++)
            found[i] |= strcmp(e->d_name, want[i]) == 0;
    }
    closedir(d);
    printf("  dots %d, links %s, not DT_LNK %d, out of order %d, "
           "not a file line of maps %d\n",
           dots, links > 0 ? "some" : "none", not_link, unordered,
           not_in_maps);
    for (size_t i = 0; i < n_want; i++)
        printf("  lists %s: %d\n", want_names[i], found[i]);
}

static void print_link(const char *dir, const char *entry, const char *what)
{
    char path[128], target[256];
    snprintf(path, sizeof(path), "%s/%s", dir, entry);
    struct stat st;
    printf("  %s:", what);
    if (lstat(path, &st) == 0)
        printf(" lstat %s %04o size %lld;", S_ISLNK(st.st_mode) ? "link" : "?",
               (unsigned)(st.st_mode & 07777), (long long)st.st_size);
    else
        printf(" lstat %s;", strerror(errno));
    ssize_t n = readlink(path, target, sizeof(target) - 1);
    if (n >= 0) {
        target[n] = '\0';
        printf(" readlink .../%s;", base_of(target));
    } else {
        printf(" readlink %s;", strerror(errno));
    }
    struct stat data;
    CHECK(stat(DATA_FILE, &data) == 0);
    if (stat(path, &st) == 0)
        printf(" stat the file itself %d;",
               st.st_ino == data.st_ino && st.st_dev == data.st_dev);
    else
        printf(" stat %s;", strerror(errno));
    int fd = open(path, O_RDONLY);
    char c = 0;
    if (fd >= 0) {
        printf(" open reads %c\n", read(fd, &c, 1) == 1 ? c : '?');
        close(fd);
    } else {
        printf(" open %s\n", strerror(errno));
    }
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (geteuid() != 0) {
        printf("SKIP proc_map_files: needs root\n");
        return 0;
    }
    int fd = open(DATA_FILE, O_RDWR | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && write(fd, "M", 1) == 1 && ftruncate(fd, 8192) == 0);
    long page = sysconf(_SC_PAGESIZE);
    int rd = open(DATA_FILE, O_RDONLY);
    CHECK(rd >= 0);
    void *ro = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE, rd, 0);
    void *rw = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED,
                    fd, 0);
    void *anon = mmap(NULL, 3 * (size_t)page, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(ro != MAP_FAILED && rw != MAP_FAILED && anon != MAP_FAILED);
    char e_ro[40], e_rw[40], e_anon[40];
    entry_of(ro, (size_t)page, e_ro, sizeof(e_ro));
    entry_of(rw, 2 * (size_t)page, e_rw, sizeof(e_rw));
    entry_of(anon, 3 * (size_t)page, e_anon, sizeof(e_anon));
    const char *want[] = {e_ro, e_rw, e_anon};
    const char *names[] = {"the read-only mapping", "the shared mapping",
                           "the anonymous mapping"};

    struct stat st;
    CHECK(stat("/proc/self/map_files", &st) == 0);
    printf("[own, root] directory %04o %s\n", (unsigned)(st.st_mode & 07777),
           S_ISDIR(st.st_mode) ? "dir" : "?");
    print_listing("/proc/self/map_files", want, names, 3);
    print_link("/proc/self/map_files", e_ro, "read-only");
    print_link("/proc/self/map_files", e_rw, "shared writable");
    print_link("/proc/self/map_files", e_anon, "anonymous");
    print_link("/proc/self/map_files", "1000-2000", "no such mapping");
    char zero[48];
    snprintf(zero, sizeof(zero), "0%s", e_ro);
    print_link("/proc/self/map_files", zero, "a leading zero");

    int ready[2], done[2];
    CHECK(pipe(ready) == 0 && pipe(done) == 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        char c;
        CHECK(write(ready[1], "x", 1) == 1);
        CHECK(read(done[0], &c, 1) == 1);
        CHECK(setresuid(65534, 65534, 65534) == 0);
        printf("[own, not root]\n");
        print_listing("/proc/self/map_files", want, names, 2);
        print_link("/proc/self/map_files", e_ro, "read-only");
        fflush(stdout);
        _exit(0);
    }
    char c;
    CHECK(read(ready[0], &c, 1) == 1);
    char dir[64];
    snprintf(dir, sizeof(dir), "/proc/%d/map_files", (int)child);
    printf("[a child's, read by root]\n");
    print_listing(dir, want, names, 2);
    print_link(dir, e_rw, "its shared writable");
    CHECK(write(done[1], "x", 1) == 1);
    int status;
    CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) &&
          WEXITSTATUS(status) == 0);
    CHECK(unlink(DATA_FILE) == 0);
    return 0;
}
