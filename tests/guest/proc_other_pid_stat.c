/*
 * proc_other_pid_stat.c - stat, lstat, readlink and access of another
 * process's /proc/PID entries describe that process. Under hvrun those
 * that no virtual file or link rule serves (the directory, stat, status,
 * fdinfo/N, task, ...) reached the host's /proc/PID, PID a virtual pid:
 * some host process with that number, or none (ENOENT), so the answer
 * depended on the host; and a cwd link (its own too) lstat'ed as an fd's
 * (mode 0) where Linux's is 0777.
 * - a running child (its cwd a directory of its own, fd 40 a file): each
 *   entry's type and mode, whether stat, access and open find it (mounts,
 *   mountinfo, net/dev opened ENOENT: the host's process N's), the owner,
 *   the link targets' last component;
 * - the same child as a zombie: its directory, stat and status remain, its
 *   exe and cwd links are there (lstat) but lead nowhere, fd/N is gone;
 * - the caller's own /proc/self/cwd lstat'ed.
 * Prints what holds, no pid or inode number.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static const char *const entries[] = {
    "",         "/",        "/exe",     "/cwd",      "/root",   "/fd",
    "/fd/0",    "/fd/40",   "/fdinfo",  "/fdinfo/40", "/fdinfo/41", "/stat",
    "/status",  "/cmdline", "/task",    "/environ",  "/maps",   "/comm",
    "/ns",      "/limits",  "/mountinfo",
    /* (a zombie's are its own matter: not asked of it) */
    "/mounts",  "/mountstats", "/net/dev",
};
#define ZOMBIE_ENTRIES 21

static const char *base_of(const char *s)
{
    const char *slash = strrchr(s, '/');
    return slash && slash[1] ? slash + 1 : s;
}

static const char *type_of(mode_t m)
{
    return S_ISDIR(m) ? "dir" : S_ISLNK(m) ? "link" : S_ISREG(m) ? "file" : "other";
}

static void print_entry(pid_t pid, const char *entry, bool with_open)
{
    char path[64], target[256];
    snprintf(path, sizeof(path), "/proc/%d%s", (int)pid, entry);
    struct stat st, st2;
    int l = lstat(path, &st);
    int l_err = errno;
    printf("  %-11s lstat ", *entry ? entry : "(dir)");
    if (l == 0)
        printf("%s %04o uid %u", type_of(st.st_mode),
               (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
    else
        printf("%s", strerror(l_err));
    if (l == 0 && lstat(path, &st2) == 0)
        printf(" same-ino %d", st.st_ino == st2.st_ino);
    if (l == 0 && strcmp(entry, "/task") == 0) /* 2 and one per thread */
        printf(" nlink %lu", (unsigned long)st.st_nlink);
    int s = stat(path, &st2);
    printf("; stat %s", s == 0 ? type_of(st2.st_mode) : strerror(errno));
    ssize_t n = readlink(path, target, sizeof(target) - 1);
    if (n >= 0) {
        target[n] = '\0';
        printf("; readlink .../%s", base_of(target));
    } else {
        printf("; readlink %s", strerror(errno));
    }
    printf("; access R %s", access(path, R_OK) == 0 ? "ok" : strerror(errno));
    int fd = with_open ? open(path, O_RDONLY) : -1;
    if (with_open)
        printf("; open %s", fd >= 0 ? "ok" : strerror(errno));
    printf("\n");
    if (fd >= 0)
        close(fd);
}

static void print_all(const char *when, pid_t pid, bool zombie)
{
    printf("[%s]\n", when);
    size_t n = zombie ? ZOMBIE_ENTRIES : sizeof(entries) / sizeof(entries[0]);
    for (size_t i = 0; i < n; i++)
        print_entry(pid, entries[i], !zombie);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    (void)mkdir("proc_other_pid_stat.d", 0755);
    int file = open("proc_other_pid_stat.file", O_RDWR | O_CREAT, 0644);
    CHECK(file >= 0);
    int ready[2];
    CHECK(pipe(ready) == 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        CHECK(chdir("proc_other_pid_stat.d") == 0);
        CHECK(dup2(file, 40) == 40);
        CHECK(write(ready[1], "x", 1) == 1);
        for (;;)
            pause();
    }
    char c;
    CHECK(read(ready[0], &c, 1) == 1);
    print_all("a running child", child, false);
    CHECK(kill(child, SIGKILL) == 0);
    siginfo_t si;
    CHECK(waitid(P_PID, (id_t)child, &si, WEXITED | WNOWAIT) == 0);
    print_all("the child a zombie", child, true);
    CHECK(waitpid(child, NULL, 0) == child);
    printf("[reaped]\n");
    print_entry(child, "", false);
    print_entry(child, "/stat", false);
    struct stat st;
    CHECK(lstat("/proc/self/cwd", &st) == 0);
    printf("own cwd link: %s %04o\n", type_of(st.st_mode),
           (unsigned)(st.st_mode & 07777));
    CHECK(unlink("proc_other_pid_stat.file") == 0);
    CHECK(rmdir("proc_other_pid_stat.d") == 0);
    return 0;
}
