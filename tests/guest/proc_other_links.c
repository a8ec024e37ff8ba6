/*
 * proc_other_links.c - a child reads its parent's /proc/PID entries as
 * Linux lets a process of the same user (ptrace_may_access): the cwd,
 * root and fd links read (readlink: hvrun failed them, only followed
 * names of another guest's cwd and root were served), the fd directory
 * listed (hvrun: ENOENT), and limits, which are the process's own rlimits
 * (hvrun showed its own, from the host's file, for /proc/self too, and
 * nothing for another process). Prints only what any run shows alike.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static void link_of(const char *proc, char *out, size_t cap)
{
    ssize_t n = readlink(proc, out, cap - 1);
    CHECK(n > 0);
    out[n] = '\0';
}

/* The soft limit of "Max open files" in a limits file, or -1. */
static long open_files_limit(const char *path)
{
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    char line[256];
    long v = -1;
    CHECK(fgets(line, sizeof(line), f) != NULL);
    CHECK(strncmp(line, "Limit", 5) == 0);
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "Max open files", 14) == 0)
            sscanf(line + 25, "%ld", &v);
    fclose(f);
    return v;
}

static int listed(const char *dir, const char *want)
{
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        found |= strcmp(e->d_name, want) == 0;
    closedir(d);
    return found;
}

int main(void)
{
    struct rlimit rl = {123, 456};
    CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
    CHECK(open_files_limit("/proc/self/limits") == 123);
    printf("own limits: the process's rlimits\n");

    char cwd[PATH_MAX], own_fd[PATH_MAX];
    CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
    int fd = open("/proc/self/limits", O_RDONLY);
    CHECK(fd >= 0);
    char fdpath[64];
    snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
    link_of(fdpath, own_fd, sizeof(own_fd));

    pid_t parent = getpid();
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        struct rlimit mine = {77, 456};
        CHECK(setrlimit(RLIMIT_NOFILE, &mine) == 0);
        char path[128], got[PATH_MAX];
        snprintf(path, sizeof(path), "/proc/%d/cwd", (int)parent);
        link_of(path, got, sizeof(got));
        CHECK(strcmp(got, cwd) == 0);
        snprintf(path, sizeof(path), "/proc/%d/root", (int)parent);
        link_of(path, got, sizeof(got));
        CHECK(strcmp(got, "/") == 0);
        snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)parent, fd);
        link_of(path, got, sizeof(got));
        CHECK(strcmp(got, own_fd) == 0);
        snprintf(path, sizeof(path), "/proc/%d/fd", (int)parent);
        char name[16];
        snprintf(name, sizeof(name), "%d", fd);
        CHECK(listed(path, name));
        snprintf(path, sizeof(path), "/proc/%d/limits", (int)parent);
        CHECK(open_files_limit(path) == 123);
        CHECK(open_files_limit("/proc/self/limits") == 77);
        printf("the child reads its parent's cwd, root, fd links, fd "
               "directory and limits\n");
        fflush(stdout);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
          WEXITSTATUS(st) == 0);
    return 0;
}
