/*
 * groups_switch.c - two guests that dropped root with different
 * supplementary groups take turns opening the same files, and their root
 * parent opens them between: each open is decided by the opener's own
 * groups, as natively. hvrun serves them all on one thread, which takes
 * each guest's groups only when they differ from the ones it has
 * (syscall-proxy/kernel/fscred.c keeps a guest's list after its call).
 * A file mode 0040 owned by root and group 4242 is readable through that
 * group alone. As non-root there is nothing to drop: it says so.
 */
#define _GNU_SOURCE
#include "guest_check.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROUNDS 4

static const char *try_open(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return strerror(errno);
    close(fd);
    return "ok";
}

/* A child with the groups given, uid/gid 65534; it opens the file each
 * time a byte comes on go, and says what it saw on done. */
static pid_t start_child(const char *name, const gid_t *groups, int n,
                         const char *path, int go, int done, int keep_lo)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid > 0)
        return pid;
    /* Only its own ends: the others' write ends would keep its read open. */
    for (int fd = keep_lo; fd < 64; fd++)
        if (fd != go && fd != done)
            close(fd);
    CHECK(setgroups((size_t)n, groups) == 0);
    CHECK(setgid(65534) == 0);
    CHECK(setuid(65534) == 0);
    char c;
    while (read(go, &c, 1) == 1) {
        char line[128];
        int len = snprintf(line, sizeof(line), "%s: open %s\n", name,
                           try_open(path));
        CHECK(write(done, line, (size_t)len) == len);
    }
    _exit(0);
}

int main(void)
{
    if (geteuid() != 0) {
        puts("not root: nothing to drop");
        return 0;
    }
    char dir[] = "/tmp/groups_switch.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    CHECK(chmod(dir, 0755) == 0);
    char path[64];
    snprintf(path, sizeof(path), "%s/g4242", dir);
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    CHECK(fd >= 0);
    close(fd);
    CHECK(chown(path, 0, 4242) == 0);
    CHECK(chmod(path, 0040) == 0);

    int go_a[2], go_b[2], done[2];
    CHECK(pipe(go_a) == 0 && pipe(go_b) == 0 && pipe(done) == 0);
    const gid_t in_group[] = {4242, 100};
    int lo = go_a[0];
    pid_t a = start_child("in group 4242", in_group, 2, path, go_a[0],
                          done[1], lo);
    pid_t b = start_child("no groups", NULL, 0, path, go_b[0], done[1], lo);
    close(go_a[0]);
    close(go_b[0]);
    close(done[1]);
    for (int i = 0; i < ROUNDS; i++) {
        char line[128];
        ssize_t n;
        CHECK(write(go_a[1], "x", 1) == 1);
        CHECK((n = read(done[0], line, sizeof(line) - 1)) > 0);
        line[n] = '\0';
        fputs(line, stdout);
        CHECK(write(go_b[1], "x", 1) == 1);
        CHECK((n = read(done[0], line, sizeof(line) - 1)) > 0);
        line[n] = '\0';
        fputs(line, stdout);
        printf("root: open %s\n", try_open(path));
    }
    close(go_a[1]);
    close(go_b[1]);
    CHECK(waitpid(a, NULL, 0) == a);
    CHECK(waitpid(b, NULL, 0) == b);
    CHECK(unlink(path) == 0);
    CHECK(rmdir(dir) == 0);
    return 0;
}
