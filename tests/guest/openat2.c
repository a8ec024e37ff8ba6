/*
 * openat2 - openat2(2): struct open_how's size (EINVAL below VER0, E2BIG
 * over a page or with a non-zero tail), build_open_flags's refusals, and
 * the resolve flags on a small tree: NO_SYMLINKS and NO_MAGICLINKS
 * (ELOOP), BENEATH (EXDEV for "..", absolute paths and symlinks out),
 * IN_ROOT (the dirfd is "/": "..", absolute paths and symlinks stay
 * inside), NO_XDEV (EXDEV into /proc), CACHED (EAGAIN for O_CREAT).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest_check.h"

static long openat2_sized(int dirfd, const char *path, const void *how,
                          size_t size)
{
    return syscall(SYS_openat2, dirfd, path, how, size);
}

static long do_openat2(int dirfd, const char *path, uint64_t flags,
                       uint64_t mode, uint64_t resolve)
{
    struct open_how how = {.flags = flags, .mode = mode, .resolve = resolve};
    return openat2_sized(dirfd, path, &how, sizeof(how));
}

/* Prints the result as "fd" (closed again) or the errno's name. */
static void show(const char *what, long r)
{
    if (r >= 0) {
        printf("%s: fd\n", what);
        close((int)r);
    } else {
        printf("%s: %s\n", what, strerrorname_np(errno));
    }
}

static void check_sizes(int d)
{
    struct {
        struct open_how how;
        uint64_t tail;
    } big = {{.flags = O_RDONLY}, 0};
    show("size 0", openat2_sized(d, "f", &big, 0));
    show("size 23", openat2_sized(d, "f", &big, 23));
    show("size 24", openat2_sized(d, "f", &big, 24));
    show("size 32, zero tail", openat2_sized(d, "f", &big, sizeof(big)));
    big.tail = 1;
    show("size 32, tail set", openat2_sized(d, "f", &big, sizeof(big)));
    show("size 4097", openat2_sized(d, "f", &big, 4097));
    show("bad how", openat2_sized(d, "f", (void *)8, 24));
}

static void check_flags(int d)
{
    show("unknown flag bit", do_openat2(d, "f", 1ULL << 40, 0, 0));
    show("unknown resolve bit", do_openat2(d, "f", O_RDONLY, 0, 0x40));
    show("BENEATH|IN_ROOT",
         do_openat2(d, "f", O_RDONLY, 0, RESOLVE_BENEATH | RESOLVE_IN_ROOT));
    show("mode without O_CREAT", do_openat2(d, "f", O_RDONLY, 0644, 0));
    show("mode 010000", do_openat2(d, "g", O_CREAT | O_WRONLY, 010000, 0));
    show("O_CREAT|O_DIRECTORY",
         do_openat2(d, "g", O_CREAT | O_DIRECTORY, 0644, 0));
    show("O_TMPFILE read-only", do_openat2(d, ".", O_TMPFILE, 0600, 0));
    show("O_PATH|O_RDWR", do_openat2(d, "f", O_PATH | O_RDWR, 0, 0));
    show("O_PATH|O_NOFOLLOW", do_openat2(d, "lnk", O_PATH | O_NOFOLLOW, 0, 0));
    show("CACHED|O_CREAT",
         do_openat2(d, "g", O_CREAT | O_WRONLY, 0600, RESOLVE_CACHED));
    long r = do_openat2(d, "f", O_RDONLY, 0, RESOLVE_CACHED);
    printf("CACHED on f: %s\n", r >= 0 || errno == EAGAIN ? "fd or EAGAIN"
                                                           : strerrorname_np(errno));
    if (r >= 0)
        close((int)r);
    r = do_openat2(d, "made", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600, 0);
    CHECK(r >= 0);
    struct stat st;
    CHECK(fstat((int)r, &st) == 0);
    printf("created: mode %o cloexec %d\n", (unsigned)st.st_mode & 07777,
           fcntl((int)r, F_GETFD) == FD_CLOEXEC);
    close((int)r);
}

static void check_symlinks(int d)
{
    show("NO_SYMLINKS f", do_openat2(d, "f", O_RDONLY, 0, RESOLVE_NO_SYMLINKS));
    show("NO_SYMLINKS lnk",
         do_openat2(d, "lnk", O_RDONLY, 0, RESOLVE_NO_SYMLINKS));
    show("NO_SYMLINKS s/../lnk",
         do_openat2(d, "s/../lnk", O_RDONLY, 0, RESOLVE_NO_SYMLINKS));
    show("NO_SYMLINKS lnk O_PATH|O_NOFOLLOW",
         do_openat2(d, "lnk", O_PATH | O_NOFOLLOW, 0, RESOLVE_NO_SYMLINKS));
    show("NO_SYMLINKS /proc/self/status",
         do_openat2(AT_FDCWD, "/proc/self/status", O_RDONLY, 0,
                    RESOLVE_NO_SYMLINKS));
    int f = openat(d, "f", O_RDONLY);
    CHECK(f >= 0);
    char magic[64];
    snprintf(magic, sizeof(magic), "/proc/self/fd/%d", f);
    show("magic link", do_openat2(AT_FDCWD, magic, O_RDONLY, 0, 0));
    show("NO_MAGICLINKS magic link",
         do_openat2(AT_FDCWD, magic, O_RDONLY, 0, RESOLVE_NO_MAGICLINKS));
    close(f);
}

static void check_beneath(int d)
{
    uint64_t b = RESOLVE_BENEATH;
    show("BENEATH f", do_openat2(d, "f", O_RDONLY, 0, b));
    show("BENEATH s/../f", do_openat2(d, "s/../f", O_RDONLY, 0, b));
    show("BENEATH ../x", do_openat2(d, "../x", O_RDONLY, 0, b));
    show("BENEATH /etc/passwd", do_openat2(d, "/etc/passwd", O_RDONLY, 0, b));
    show("BENEATH up/x", do_openat2(d, "up/x", O_RDONLY, 0, b));
    show("BENEATH abs", do_openat2(d, "abs", O_RDONLY, 0, b));
    show("BENEATH lnk", do_openat2(d, "lnk", O_RDONLY, 0, b));
    show("BENEATH bad dirfd", do_openat2(99, "f", O_RDONLY, 0, b));
}

/* Whether fd is the tree's file f. */
static int is_f(int d, long fd)
{
    struct stat a, b;
    if (fd < 0)
        return 0;
    int same = fstat((int)fd, &a) == 0 && fstatat(d, "f", &b, 0) == 0 &&
               a.st_ino == b.st_ino && a.st_dev == b.st_dev;
    close((int)fd);
    return same;
}

static void check_in_root(int d)
{
    uint64_t r = RESOLVE_IN_ROOT;
    printf("IN_ROOT /f is f: %d\n", is_f(d, do_openat2(d, "/f", O_RDONLY, 0, r)));
    printf("IN_ROOT ../../f is f: %d\n",
           is_f(d, do_openat2(d, "../../f", O_RDONLY, 0, r)));
    printf("IN_ROOT up/up/f is f: %d\n",
           is_f(d, do_openat2(d, "up/up/f", O_RDONLY, 0, r)));
    printf("IN_ROOT rootlnk is f: %d\n",
           is_f(d, do_openat2(d, "rootlnk", O_RDONLY, 0, r)));
    show("IN_ROOT abs (no etc inside)", do_openat2(d, "abs/passwd", O_RDONLY, 0, r));
}

/* Scoped walks under a /proc dirfd reach the guest's /proc/self. */
static void check_proc_dirfd(void)
{
    int proc = open("/proc", O_PATH | O_DIRECTORY);
    CHECK(proc >= 0);
    char want[64], got[64];
    snprintf(want, sizeof(want), "Pid:\t%d\n", getpid());
    long fd = do_openat2(proc, "self/status", O_RDONLY, 0, RESOLVE_BENEATH);
    CHECK(fd >= 0);
    FILE *f = fdopen((int)fd, "r");
    int seen = 0;
    while (fgets(got, sizeof(got), f))
        seen |= strcmp(got, want) == 0;
    fclose(f);
    printf("BENEATH /proc + self/status is mine: %d\n", seen);
    show("BENEATH /proc + self/../..",
         do_openat2(proc, "self/../..", O_PATH, 0, RESOLVE_BENEATH));
    show("NO_SYMLINKS /proc + self/status",
         do_openat2(proc, "self/status", O_RDONLY, 0,
                    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS));
    show("IN_ROOT /proc + /self/stat",
         do_openat2(proc, "/self/stat", O_RDONLY, 0, RESOLVE_IN_ROOT));
    close(proc);
}

static void check_xdev(void)
{
    int root = open("/", O_PATH | O_DIRECTORY);
    CHECK(root >= 0);
    show("NO_XDEV proc/version",
         do_openat2(root, "proc/version", O_RDONLY, 0, RESOLVE_NO_XDEV));
    show("NO_XDEV proc", do_openat2(root, "proc", O_PATH, 0, RESOLVE_NO_XDEV));
    close(root);
}

/* The tree: f, s/, lnk -> f, up -> .., abs -> /etc, rootlnk -> /f. */
static int make_tree(char *dir)
{
    CHECK(mkdtemp(dir) != NULL);
    int d = open(dir, O_PATH | O_DIRECTORY);
    CHECK(d >= 0);
    int f = openat(d, "f", O_CREAT | O_WRONLY, 0644);
    CHECK(f >= 0);
    close(f);
    CHECK(mkdirat(d, "s", 0755) == 0);
    CHECK(symlinkat("f", d, "lnk") == 0);
    CHECK(symlinkat("..", d, "up") == 0);
    CHECK(symlinkat("/etc", d, "abs") == 0);
    CHECK(symlinkat("/f", d, "rootlnk") == 0);
    return d;
}

static void remove_tree(int d, const char *dir)
{
    const char *names[] = {"f", "lnk", "up", "abs", "rootlnk", "made"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        unlinkat(d, names[i], 0);
    unlinkat(d, "s", AT_REMOVEDIR);
    close(d);
    CHECK(rmdir(dir) == 0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    char dir[] = "/tmp/openat2.XXXXXX";
    int d = make_tree(dir);
    check_sizes(d);
    check_flags(d);
    check_symlinks(d);
    check_beneath(d);
    check_in_root(d);
    check_xdev();
    check_proc_dirfd();
    remove_tree(d, dir);
    return 0;
}
