/*
 * tmp_symlink.c - names in /tmp as a program sees them: an absolute
 * symlink to a path in /tmp resolves (followed at the end, in the middle,
 * through a link to a link, from a relative path), readlink gives the text
 * written, ".." after a link climbs from where the link led, and a #!
 * script in /tmp is handed to its interpreter under the name exec was
 * given (hvrun's private /tmp once gave the host's names here).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static char dir[64];

static void put(const char *name, const char *text, int mode)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    CHECK(fd >= 0);
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    CHECK(close(fd) == 0);
}

static void link_to(const char *target_in_dir, const char *name)
{
    char target[PATH_MAX], path[PATH_MAX];
    snprintf(target, sizeof(target), "%s/%s", dir, target_in_dir);
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    CHECK(symlink(target, path) == 0);
}

/* The first line of what path holds, or the errno's name. */
static void show(const char *label, const char *path)
{
    char buf[128] = "";
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        printf("%s: %s\n", label, strerrorname_np(errno));
        return;
    }
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    printf("%s: %s\n", label, buf);
}

static void in_dir(char *out, const char *rel)
{
    snprintf(out, PATH_MAX, "%s/%s", dir, rel);
}

static void links(void)
{
    char p[PATH_MAX], text[PATH_MAX], want[PATH_MAX];
    put("a", "file a\n", 0644);
    link_to("a", "b");
    link_to("b", "c"); /* a link to a link */
    CHECK(mkdir(strcat(strcpy(p, dir), "/d"), 0755) == 0);
    put("d/f", "file d/f\n", 0644);
    link_to("d", "dl");
    in_dir(p, "b"), show("absolute link", p);
    in_dir(p, "c"), show("link to a link", p);
    in_dir(p, "dl/f"), show("link in the middle", p);
    in_dir(p, "dl/../a"), show("dotdot after a link", p);
    in_dir(p, "dl/f/"), show("trailing slash on a file", p);
    in_dir(p, "b");
    ssize_t n = readlink(p, text, sizeof(text) - 1);
    CHECK(n > 0);
    text[n] = '\0';
    in_dir(want, "a");
    printf("readlink is the text written: %d\n", strcmp(text, want) == 0);
    struct stat st;
    CHECK(lstat(p, &st) == 0);
    printf("lstat sees a link: %d\n", S_ISLNK(st.st_mode));
    CHECK(stat(p, &st) == 0);
    printf("stat sees the file: %d size %lld\n", S_ISREG(st.st_mode),
           (long long)st.st_size);
    CHECK(chdir(dir) == 0);
    show("relative name of the link", "b");
    show("relative path through the link", "dl/f");
    /* A link that does not resolve yet creates its target. */
    link_to("new", "dangling");
    int fd = open("dangling", O_WRONLY | O_CREAT, 0644);
    CHECK(fd >= 0 && write(fd, "made\n", 5) == 5 && close(fd) == 0);
    show("created through a dangling link", "new");
    CHECK(chdir("/") == 0);
}

/* Runs path (a #! script) and prints whether its $0 is path. */
static void script(void)
{
    char path[PATH_MAX], out[PATH_MAX + 8] = "";
    put("s.sh", "#!/bin/sh\necho \"$0\"\n", 0755);
    in_dir(path, "s.sh");
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 1);
        char *argv[] = {path, NULL};
        execv(path, argv);
        _exit(127);
    }
    close(fds[1]);
    ssize_t n, got = 0;
    while ((n = read(fds[0], out + got, sizeof(out) - 1 - got)) > 0)
        got += n;
    out[got] = '\0';
    out[strcspn(out, "\n")] = '\0';
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    printf("script exit %d, $0 is the name exec was given: %d\n",
           WEXITSTATUS(status), strcmp(out, path) == 0);
}

int main(void)
{
    snprintf(dir, sizeof(dir), "/tmp/tmp_symlink.XXXXXX");
    CHECK(mkdtemp(dir));
    links();
    script();
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    return 0;
}
