/*
 * exe_link.c - /proc/PID/exe names the program's file by its full path:
 * - read by another process of the run (a child reading its parent's
 *   link: hvrun answered EACCES, from the host's link of the stub);
 * - after an exec by a relative name from another directory (hvrun took
 *   the name through realpath against its own working directory, so the
 *   link read "./exe_link");
 * - followed, the link opens the program (its first bytes are ELF's).
 * Prints no path: the program may live anywhere; it compares the links.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static void link_of(const char *proc, char *out, size_t cap)
{
    ssize_t n = readlink(proc, out, cap - 1);
    CHECK(n > 0);
    out[n] = '\0';
}

/* The exec'd copy: its own link is the same full path as its parent's. */
static int exec_side(const char *want)
{
    char self[PATH_MAX], by_pid[PATH_MAX], proc[64];
    link_of("/proc/self/exe", self, sizeof(self));
    snprintf(proc, sizeof(proc), "/proc/%d/exe", (int)getpid());
    link_of(proc, by_pid, sizeof(by_pid));
    CHECK(self[0] == '/');
    CHECK(strcmp(self, want) == 0);
    CHECK(strcmp(by_pid, want) == 0);
    printf("exec'd by a relative name: the link is the full path\n");
    return 0;
}

int main(int argc, char **argv)
{
    char self[PATH_MAX];
    link_of("/proc/self/exe", self, sizeof(self));
    if (argc > 2 && strcmp(argv[1], "exec") == 0)
        return exec_side(argv[2]);
    CHECK(self[0] == '/');

    int fd = open("/proc/self/exe", O_RDONLY);
    char magic[4];
    CHECK(fd >= 0 && read(fd, magic, 4) == 4);
    CHECK(memcmp(magic, "\177ELF", 4) == 0);
    close(fd);
    printf("own link: a full path to an ELF file\n");

    pid_t parent = getpid();
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        char proc[64], theirs[PATH_MAX];
        snprintf(proc, sizeof(proc), "/proc/%d/exe", (int)parent);
        link_of(proc, theirs, sizeof(theirs));
        CHECK(strcmp(theirs, self) == 0);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
          WEXITSTATUS(st) == 0);
    printf("a child reads its parent's link\n");

    /* From the program's directory, by "./name". */
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", self);
    char *slash = strrchr(dir, '/');
    CHECK(slash != NULL);
    char rel[PATH_MAX];
    snprintf(rel, sizeof(rel), "./%s", slash + 1);
    *slash = '\0';
    CHECK(chdir(dir[0] ? dir : "/") == 0);
    fflush(stdout);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        execl(rel, rel, "exec", self, (char *)NULL);
        _exit(127);
    }
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
          WEXITSTATUS(st) == 0);
    return 0;
}
