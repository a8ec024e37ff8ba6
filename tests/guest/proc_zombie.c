/*
 * proc_zombie.c - a child that exited and is not reaped keeps its
 * /proc/PID until the reap, as on Linux: stat says state Z with no memory
 * (vsize and rss 0), one thread and its wait status in the last field;
 * status says "Z (zombie)" and, its mm, files and fs gone, has no Umask
 * and no memory lines and FDSize 0; cmdline is empty. LTP's
 * TST_PROCESS_STATE_WAIT(pid, 'Z') (semctl01) polls that stat. Once reaped,
 * /proc/PID/stat is ENOENT.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int read_file(pid_t pid, const char *what, char *buf, size_t cap)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    if (n < 0)
        return -errno;
    buf[n] = 0;
    return (int)n;
}

/* stat's field number `field` (1-based; the comm is field 2). */
static const char *stat_field(char *stat, int field, char *out, size_t cap)
{
    char *p = strrchr(stat, ')');
    if (!p)
        return "?";
    p += 2; /* field 3 */
    for (int f = 3; f < field && p; f++) {
        p = strchr(p, ' ');
        if (p)
            p++;
    }
    if (!p)
        return "?";
    size_t len = strcspn(p, " \n");
    snprintf(out, cap, "%.*s", (int)(len < cap ? len : cap - 1), p);
    return out;
}

static void show_stat(pid_t pid)
{
    char buf[2048], f[6][64];
    int n = read_file(pid, "stat", buf, sizeof(buf));
    if (n < 0) {
        printf("  stat: %s\n", strerrorname_np(-n));
        return;
    }
    printf("  stat: state %s ppid is parent %d threads %s vsize %s rss %s "
           "exit_code %s\n",
           stat_field(buf, 3, f[0], sizeof(f[0])),
           atoi(stat_field(buf, 4, f[1], sizeof(f[1]))) == (int)getpid(),
           stat_field(buf, 20, f[2], sizeof(f[2])),
           stat_field(buf, 23, f[3], sizeof(f[3])),
           stat_field(buf, 24, f[4], sizeof(f[4])),
           stat_field(buf, 52, f[5], sizeof(f[5])));
}

/* fd_size: the FDSize line too (a live process's depends on the fds its
 * parent had, a shell's 255 among them natively). */
static void show_status(pid_t pid, int fd_size)
{
    char buf[8192];
    int n = read_file(pid, "status", buf, sizeof(buf));
    if (n < 0) {
        printf("  status: %s\n", strerrorname_np(-n));
        return;
    }
    printf("  status:");
    const char *shown[] = {"State:", "Threads:", "FDSize:"};
    const char *present[] = {"Umask:", "VmRSS:", "THP_enabled:", "SigCgt:"};
    for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]) - !fd_size; i++) {
        char *l = strstr(buf, shown[i]);
        int len = l ? (int)strcspn(l, "\n") : 0;
        printf(" [%.*s]", len, l ? l : "");
    }
    for (size_t i = 0; i < sizeof(present) / sizeof(present[0]); i++)
        printf(" %s%s", present[i], strstr(buf, present[i]) ? "yes" : "no");
    printf("\n");
}

static void show_zombie(const char *what, pid_t pid)
{
    printf("%s:\n", what);
    char dir[32];
    struct stat st;
    snprintf(dir, sizeof(dir), "/proc/%d", (int)pid);
    printf("  dir: %s\n", stat(dir, &st) == 0 ? "0" : strerrorname_np(errno));
    show_stat(pid);
    show_status(pid, 1);
    char buf[256];
    int n = read_file(pid, "cmdline", buf, sizeof(buf));
    printf("  cmdline: %d%s%s\n", n < 0 ? -1 : n, n < 0 ? " " : "",
           n < 0 ? strerrorname_np(-n) : "");
}

/* A child that ends with `how` (exit 3 or SIGKILL), left a zombie. */
static pid_t zombie_child(int how)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (how == SIGKILL)
            raise(SIGKILL);
        _exit(3);
    }
    siginfo_t si;
    if (pid < 0 || waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) != 0) {
        perror("fork/waitid");
        exit(1);
    }
    return pid;
}

static void reap(pid_t pid)
{
    int st;
    if (waitpid(pid, &st, 0) != pid) {
        perror("waitpid");
        exit(1);
    }
    char buf[2048];
    int n = read_file(pid, "stat", buf, sizeof(buf));
    printf("reaped: status %#x, stat %s\n", st,
           n < 0 ? strerrorname_np(-n) : "still there");
}

int main(void)
{
    pid_t exited = zombie_child(0);
    show_zombie("exit(3)", exited);
    reap(exited);
    pid_t killed = zombie_child(SIGKILL);
    show_zombie("SIGKILL", killed);
    reap(killed);
    /* A live process's status for contrast: memory lines and a Umask. */
    printf("self:\n");
    show_status(getpid(), 0);
    return 0;
}
