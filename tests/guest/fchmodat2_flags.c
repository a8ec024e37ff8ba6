/*
 * fchmodat2_flags.c - fchmodat2 (Linux 6.6; glibc's fchmodat with
 * AT_SYMLINK_NOFOLLOW calls it first): flags other than
 * AT_SYMLINK_NOFOLLOW and AT_EMPTY_PATH are EINVAL, before the fd is
 * looked at; AT_EMPTY_PATH with "" changes the fd's own file (an O_PATH
 * one too); AT_SYMLINK_NOFOLLOW on a symlink is EOPNOTSUPP (a link's mode
 * cannot change) and on a file changes it; without it a link is followed.
 * hvrun once said ENOSYS (LTP's fchmodat2_02). A host kernel before 6.6
 * has no fchmodat2: the test then says so and stops.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest_check.h"

#define NR_FCHMODAT2 452

static long fchmodat2(int dirfd, const char *path, mode_t mode, int flags)
{
    return syscall(NR_FCHMODAT2, dirfd, path, mode, flags);
}

static unsigned mode_of(const char *path)
{
    struct stat st;
    CHECK(lstat(path, &st) == 0);
    return st.st_mode & 07777;
}

/* A call's result, then the mode of what it should have changed. */
static void try(const char *what, long rc, const char *changed)
{
    printf("%s: %s", what, result_text(rc));
    if (changed)
        printf(", %s %o", changed, mode_of(changed));
    printf("\n");
}

int main(void)
{
    char dir[] = "/tmp/fchmodat2XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    CHECK(chdir(dir) == 0);
    int fd = open("file", O_CREAT | O_WRONLY, 0640);
    CHECK(fd >= 0);
    close(fd);
    CHECK(symlink("file", "link") == 0);
    CHECK(mkdir("sub", 0750) == 0);
    int dfd = open(".", O_PATH | O_DIRECTORY);
    CHECK(dfd >= 0);

    if (fchmodat2(dfd, "file", 0600, 0) < 0 && errno == ENOSYS) {
        printf("no fchmodat2 on this kernel\n");
        return 0;
    }
    printf("plain: mode %o\n", mode_of("file"));
    try("bad fd", fchmodat2(-1, "file", 0777, 0), NULL);
    try("bad fd, bad flags", fchmodat2(-1, "file", 0777, -1), NULL);
    try("flag AT_REMOVEDIR", fchmodat2(dfd, "file", 0777, AT_REMOVEDIR),
        NULL);
    try("missing", fchmodat2(dfd, "none", 0777, 0), NULL);
    try("empty path, no flag", fchmodat2(dfd, "", 0777, 0), NULL);
    try("link followed", fchmodat2(dfd, "link", 0604, 0), "file");
    printf("  the link itself: %o\n", mode_of("link"));
    try("link not followed",
        fchmodat2(dfd, "link", 0640, AT_SYMLINK_NOFOLLOW), "file");
    try("file not followed",
        fchmodat2(dfd, "file", 0620, AT_SYMLINK_NOFOLLOW), "file");
    int sfd = open("sub", O_PATH | O_DIRECTORY);
    CHECK(sfd >= 0);
    try("O_PATH fd, empty path", fchmodat2(sfd, "", 0705, AT_EMPTY_PATH),
        "sub");
    try("AT_FDCWD, empty path",
        fchmodat2(AT_FDCWD, "", 0700, AT_EMPTY_PATH), ".");
    CHECK(unlink("link") == 0 && unlink("file") == 0 && rmdir("sub") == 0);
    CHECK(chdir("/") == 0 && rmdir(dir) == 0);
    return 0;
}
