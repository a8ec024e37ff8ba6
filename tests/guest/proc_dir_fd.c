/*
 * proc_dir_fd.c - names relative to an fd of another process's /proc/N
 * directory (and of its task and fd directories) are that process's, as
 * killall and pgrep-like tools read them (openat(fd, "stat")): hvrun
 * answered the caller's own files, so killall found no process; and an
 * O_PATH open of /proc/N (hvrun: ENOENT, the host's /proc/N) works as a
 * directory fd too; /proc/N/ and /proc/N/task/ with their "/" list N's. Each relative read is compared with the same file
 * read by its absolute name; prints no pid, name or inode number.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

/* The first bytes of (dir, path), NUL-terminated; -1 when it cannot be
 * opened or read. */
static ssize_t slurp(int dir, const char *path, char *buf, size_t cap)
{
    int fd = openat(dir, path, O_RDONLY);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return n;
}

/* (dir, rel) read as file (or link) must be what abs reads; printed as
 * shown (rel without its pid). */
static void same(const char *label, int dir, const char *rel,
                 const char *shown, const char *abs, bool link)
{
    char got[PATH_MAX], want[PATH_MAX];
    ssize_t g, w;
    if (link) {
        g = readlinkat(dir, rel, got, sizeof(got) - 1);
        got[g > 0 ? g : 0] = '\0';
        w = readlink(abs, want, sizeof(want) - 1);
        want[w > 0 ? w : 0] = '\0';
    } else {
        /* what names the process, not its state (it may be on its way
         * to pause): stat to its comm's ")", the other files' first line */
        g = slurp(dir, rel, got, sizeof(got));
        w = slurp(AT_FDCWD, abs, want, sizeof(want));
        const char *end = strstr(rel, "stat") && !strstr(rel, "status")
                              ? ")" : "\n";
        got[strcspn(got, end)] = want[strcspn(want, end)] = '\0';
        g = g < 0 ? g : (ssize_t)strlen(got);
        w = w < 0 ? w : (ssize_t)strlen(want);
    }
    printf("%s %s: %s\n", label, shown,
           g < 0      ? result_text(g)
           : w <= 0   ? "(the absolute name fails)"
           : g == w && strcmp(got, want) == 0 ? "the process's"
                                               : "another file's");
}

/* Whether directory path lists want ("yes", "no"), or the error. */
static const char *lists(const char *path, const char *want)
{
    DIR *d = opendir(path);
    if (!d)
        return result_text(-1);
    bool found = false;
    for (struct dirent *e; (e = readdir(d));)
        found |= strcmp(e->d_name, want) == 0;
    closedir(d);
    return found ? "yes" : "no";
}

static void reads_under(const char *label, int dir, pid_t pid)
{
    char abs[PATH_MAX], rel[64];
    struct stat st;
    CHECK(fstat(dir, &st) == 0);
    printf("%s: a directory %d\n", label, S_ISDIR(st.st_mode));
    static const char *const files[] = {"stat", "status", "cmdline", "comm"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(abs, sizeof(abs), "/proc/%d/%s", (int)pid, files[i]);
        same(label, dir, files[i], files[i], abs, false);
    }
    snprintf(abs, sizeof(abs), "/proc/%d/exe", (int)pid);
    same(label, dir, "exe", "exe", abs, true);
    snprintf(abs, sizeof(abs), "/proc/%d/fd/1", (int)pid);
    same(label, dir, "fd/1", "fd/1", abs, true);
    snprintf(rel, sizeof(rel), "task/%d/comm", (int)pid);
    snprintf(abs, sizeof(abs), "/proc/%d/task/%d/comm", (int)pid, (int)pid);
    same(label, dir, rel, "task/PID/comm", abs, false);

    int task = openat(dir, "task", O_RDONLY | O_DIRECTORY);
    CHECK(task >= 0);
    snprintf(rel, sizeof(rel), "%d/stat", (int)pid);
    snprintf(abs, sizeof(abs), "/proc/%d/task/%d/stat", (int)pid, (int)pid);
    same(label, task, rel, "task fd, PID/stat", abs, false);
    close(task);
    int fds = openat(dir, "fd", O_RDONLY | O_DIRECTORY);
    CHECK(fds >= 0);
    snprintf(abs, sizeof(abs), "/proc/%d/fd/1", (int)pid);
    same(label, fds, "1", "fd fd, 1", abs, true);
    close(fds);
}

int main(void)
{
    int ready[2];
    CHECK(pipe(ready) == 0);
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        /* another name and another stdout than its parent's */
        CHECK(prctl(PR_SET_NAME, "proc_dir_kid") == 0);
        dup2(ready[1], 1);
        CHECK(write(ready[1], "", 1) == 1);
        pause();
        _exit(0);
    }
    char c;
    CHECK(read(ready[0], &c, 1) == 1);
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d", (int)pid);
    int dir = open(path, O_RDONLY | O_DIRECTORY);
    CHECK(dir >= 0);
    reads_under("/proc/N fd", dir, pid);
    close(dir);
    dir = open(path, O_PATH | O_DIRECTORY);
    printf("O_PATH open of /proc/N: %s\n", result_text(dir < 0 ? -1 : 0));
    if (dir >= 0) {
        reads_under("/proc/N O_PATH fd", dir, pid);
        close(dir);
    }
    /* with a trailing "/" (LeakSanitizer's tracer opens its parent's
     * task/ so): the same directories */
    char name[32];
    snprintf(name, sizeof(name), "%d", (int)pid);
    snprintf(path, sizeof(path), "/proc/%d/task/", (int)pid);
    printf("/proc/N/task/ lists N: %s\n", lists(path, name));
    snprintf(path, sizeof(path), "/proc/%d/", (int)pid);
    printf("/proc/N/ lists task: %s\n", lists(path, "task"));
    CHECK(kill(pid, SIGKILL) == 0);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    return 0;
}
