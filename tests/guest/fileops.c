/*
 * fileops: the file-system syscalls a program uses, in a scratch directory
 * (argv[1], or a fresh mkdtemp under the cwd, removed at the end). Each
 * step prints one line; the first failure prints FAIL and exits 1. Nothing
 * printed depends on the host (paths, inode numbers, times of day).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "guest_check.h"

/* The call fails with exactly this errno. */
#define CHECK_ERR(call, want)                                              \
    do {                                                                   \
        errno = 0;                                                         \
        long rc_ = (long)(call);                                           \
        if (rc_ != -1 || errno != (want)) {                                \
            printf("FAIL %s:%d: %s returned %ld errno %d (%s), want %s\n", \
                   __FILE__, __LINE__, #call, rc_, errno, strerror(errno), \
                   #want);                                                 \
            exit(1);                                                       \
        }                                                                  \
    } while (0)

static off_t size_of(const char *path)
{
    struct stat st;
    CHECK(stat(path, &st) == 0);
    return st.st_size;
}

static void write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    CHECK(close(fd) == 0);
}

static void test_rw(void)
{
    int fd = open("data", O_RDWR | O_CREAT | O_EXCL, 0644);
    CHECK(fd >= 0);
    CHECK(write(fd, "hello world", 11) == 11);
    CHECK(lseek(fd, 0, SEEK_CUR) == 11);
    char buf[32] = {0};
    CHECK(pread(fd, buf, 5, 6) == 5);
    CHECK(memcmp(buf, "world", 5) == 0);
    CHECK(lseek(fd, 0, SEEK_CUR) == 11); /* pread leaves the offset */
    CHECK(pwrite(fd, "WORLD", 5, 6) == 5);
    CHECK(lseek(fd, 0, SEEK_SET) == 0);
    CHECK(read(fd, buf, sizeof(buf)) == 11);
    CHECK(memcmp(buf, "hello WORLD", 11) == 0);
    CHECK(read(fd, buf, sizeof(buf)) == 0); /* EOF */
    CHECK(lseek(fd, -5, SEEK_END) == 6);
    CHECK(lseek(fd, 100, SEEK_SET) == 100);
    CHECK(write(fd, "!", 1) == 1); /* leaves a hole */
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    CHECK(st.st_size == 101);
    CHECK(S_ISREG(st.st_mode));
    CHECK(st.st_nlink == 1);
    CHECK(pread(fd, buf, 4, 50) == 4);
    CHECK(buf[0] == 0 && buf[3] == 0);
    CHECK_ERR(lseek(fd, -1, SEEK_SET), EINVAL);
    CHECK(close(fd) == 0);
    CHECK_ERR(close(fd), EBADF);
    CHECK_ERR(open("data", O_RDWR | O_CREAT | O_EXCL, 0644), EEXIST);
    printf("open/write/pread/pwrite/lseek/fstat: ok\n");
}

static void test_names(void)
{
    write_file("a", "aaaa");
    CHECK(rename("a", "b") == 0);
    CHECK_ERR(access("a", F_OK), ENOENT);
    CHECK(size_of("b") == 4);
    CHECK(link("b", "c") == 0);
    struct stat sb, sc;
    CHECK(stat("b", &sb) == 0 && stat("c", &sc) == 0);
    CHECK(sb.st_ino == sc.st_ino && sb.st_dev == sc.st_dev);
    CHECK(sb.st_nlink == 2);
    CHECK_ERR(link("b", "c"), EEXIST);
    CHECK(symlink("b", "s") == 0);
    char target[64] = {0};
    CHECK(readlink("s", target, sizeof(target)) == 1);
    CHECK(strcmp(target, "b") == 0);
    struct stat sl;
    CHECK(lstat("s", &sl) == 0 && S_ISLNK(sl.st_mode));
    CHECK(stat("s", &sl) == 0 && S_ISREG(sl.st_mode) && sl.st_size == 4);
    CHECK_ERR(readlink("b", target, sizeof(target)), EINVAL);
    /* rename over an existing file replaces it. */
    write_file("d", "dd");
    CHECK(rename("d", "c") == 0);
    CHECK(size_of("c") == 2);
    CHECK(stat("b", &sb) == 0 && sb.st_nlink == 1);
    CHECK(unlink("s") == 0);
    CHECK(unlink("c") == 0);
    CHECK_ERR(unlink("c"), ENOENT);
    printf("rename/link/symlink/readlink/unlink: ok\n");
}

static void test_dirs(void)
{
    CHECK(mkdir("sub", 0755) == 0);
    CHECK_ERR(mkdir("sub", 0755), EEXIST);
    struct stat st;
    CHECK(stat("sub", &st) == 0 && S_ISDIR(st.st_mode));
    write_file("sub/f", "x");
    CHECK_ERR(rmdir("sub"), ENOTEMPTY);
    CHECK_ERR(unlink("sub"), EISDIR);
    CHECK(mkdir("sub/inner", 0700) == 0);
    CHECK(rmdir("sub/inner") == 0);
    CHECK_ERR(rmdir("sub/inner"), ENOENT);
    printf("mkdir/rmdir: ok\n");
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_getdents(void)
{
    CHECK(mkdir("list", 0755) == 0);
    static const char *const names[] = {"zeta", "alpha", "mid", "Beta",
                                        "a.long.file.name.with.dots"};
    char path[128];
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(path, sizeof(path), "list/%s", names[i]);
        write_file(path, names[i]);
    }
    CHECK(mkdir("list/dir", 0755) == 0);
    DIR *d = opendir("list");
    CHECK(d != NULL);
    char *seen[32];
    int n = 0, dirs = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        CHECK(n < 32);
        seen[n++] = strdup(e->d_name);
        if (e->d_type == DT_DIR)
            dirs++;
    }
    CHECK(closedir(d) == 0);
    qsort(seen, (size_t)n, sizeof(seen[0]), cmp_str);
    printf("getdents: %d entries (%d dirs):", n, dirs);
    for (int i = 0; i < n; i++) {
        printf(" %s", seen[i]);
        free(seen[i]);
    }
    printf("\n");
}

static void test_modes_and_times(void)
{
    write_file("m", "mode");
    CHECK(chmod("m", 0600) == 0);
    struct stat st;
    CHECK(stat("m", &st) == 0);
    CHECK((st.st_mode & 07777) == 0600);
    int fd = open("m", O_RDONLY);
    CHECK(fd >= 0);
    CHECK(fchmod(fd, 0640) == 0);
    CHECK(fstat(fd, &st) == 0 && (st.st_mode & 07777) == 0640);
    CHECK(close(fd) == 0);
    /* umask applies to creation. */
    mode_t old = umask(027);
    write_file("u", "");
    CHECK(stat("u", &st) == 0 && (st.st_mode & 0777) == 0640);
    umask(old);

    struct timespec ts[2] = {{1000000000, 123456789}, {1234567890, 5000}};
    CHECK(utimensat(AT_FDCWD, "m", ts, 0) == 0);
    CHECK(stat("m", &st) == 0);
    CHECK(st.st_atim.tv_sec == 1000000000 && st.st_atim.tv_nsec == 123456789);
    CHECK(st.st_mtim.tv_sec == 1234567890 && st.st_mtim.tv_nsec == 5000);
    struct timespec keep[2] = {{0, UTIME_OMIT}, {42, 0}};
    CHECK(utimensat(AT_FDCWD, "m", keep, 0) == 0);
    CHECK(stat("m", &st) == 0);
    CHECK(st.st_atim.tv_sec == 1000000000 && st.st_mtim.tv_sec == 42);
    printf("chmod/fchmod/umask/utimensat: ok\n");

    CHECK(access("m", R_OK) == 0);
    CHECK(access("m", F_OK) == 0);
    CHECK_ERR(access("m", X_OK), EACCES); /* no x bit: even root */
    CHECK_ERR(access("missing", F_OK), ENOENT);
    CHECK(faccessat(AT_FDCWD, "sub", X_OK, 0) == 0);
    printf("access: ok\n");
}

static void test_truncate(void)
{
    write_file("t", "0123456789");
    CHECK(truncate("t", 4) == 0);
    CHECK(size_of("t") == 4);
    CHECK(truncate("t", 8192) == 0);
    CHECK(size_of("t") == 8192);
    int fd = open("t", O_RDWR);
    CHECK(fd >= 0);
    char buf[8];
    CHECK(pread(fd, buf, 8, 2) == 8);
    CHECK(memcmp(buf, "23\0\0\0\0\0\0", 8) == 0);
    CHECK(ftruncate(fd, 1) == 0);
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && st.st_size == 1);
    CHECK_ERR(ftruncate(fd, -1), EINVAL);
    CHECK(close(fd) == 0);
    fd = open("t", O_RDONLY);
    CHECK(fd >= 0);
    CHECK_ERR(ftruncate(fd, 0), EINVAL); /* not open for writing */
    CHECK(close(fd) == 0);
    CHECK_ERR(truncate("missing", 0), ENOENT);
    printf("truncate/ftruncate: ok\n");
}

static void test_cwd(void)
{
    char base[PATH_MAX], now[PATH_MAX], want[PATH_MAX + 8];
    CHECK(getcwd(base, sizeof(base)) != NULL);
    CHECK(base[0] == '/');
    CHECK(chdir("sub") == 0);
    CHECK(getcwd(now, sizeof(now)) != NULL);
    snprintf(want, sizeof(want), "%s/sub", base);
    CHECK(strcmp(now, want) == 0);
    /* Relative paths now resolve from sub. */
    CHECK(access("f", F_OK) == 0);
    CHECK(chdir("..") == 0);
    CHECK(getcwd(now, sizeof(now)) != NULL && strcmp(now, base) == 0);
    int dfd = open("sub", O_RDONLY | O_DIRECTORY);
    CHECK(dfd >= 0);
    CHECK(fchdir(dfd) == 0);
    CHECK(getcwd(now, sizeof(now)) != NULL && strcmp(now, want) == 0);
    CHECK(close(dfd) == 0);
    CHECK(chdir(base) == 0);
    CHECK_ERR(chdir("b"), ENOTDIR);
    errno = 0;
    CHECK(getcwd(now, 2) == NULL && errno == ERANGE);
    printf("chdir/fchdir/getcwd: ok\n");
}

static void test_fds(void)
{
    int fd = open("fds", O_RDWR | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    CHECK(dup2(fd, 10) == 10);
    CHECK(write(fd, "abc", 3) == 3);
    CHECK(lseek(10, 0, SEEK_CUR) == 3); /* dup shares the offset */
    CHECK(write(10, "def", 3) == 3);
    CHECK(lseek(fd, 0, SEEK_CUR) == 6);
    CHECK(dup2(10, 10) == 10);
    CHECK_ERR(dup2(99, 11), EBADF);
    int low = dup(fd);
    CHECK(low > 2 && low < 10);
    CHECK(close(low) == 0);

    CHECK(fcntl(fd, F_GETFD) == 0);
    CHECK(fcntl(fd, F_SETFD, FD_CLOEXEC) == 0);
    CHECK(fcntl(fd, F_GETFD) == FD_CLOEXEC);
    CHECK(fcntl(10, F_GETFD) == 0); /* per-descriptor flag */
    int d3 = fcntl(fd, F_DUPFD_CLOEXEC, 20);
    CHECK(d3 >= 20 && fcntl(d3, F_GETFD) == FD_CLOEXEC);
    int fl = fcntl(fd, F_GETFL);
    CHECK(fl >= 0 && (fl & O_ACCMODE) == O_RDWR);
    CHECK(close(d3) == 0 && close(10) == 0 && close(fd) == 0);
    CHECK_ERR(fcntl(10, F_GETFD), EBADF);
    printf("dup/dup2/fcntl: ok\n");

    int p[2];
    CHECK(pipe(p) == 0);
    CHECK(write(p[1], "through the pipe", 16) == 16);
    char buf[32] = {0};
    CHECK(read(p[0], buf, sizeof(buf)) == 16);
    CHECK(strcmp(buf, "through the pipe") == 0);
    CHECK(close(p[1]) == 0);
    CHECK(read(p[0], buf, sizeof(buf)) == 0); /* EOF once the writer is gone */
    CHECK(close(p[0]) == 0);
    printf("pipe: ok\n");

    fd = open("app", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && write(fd, "12345", 5) == 5 && close(fd) == 0);
    fd = open("app", O_WRONLY | O_APPEND);
    CHECK(fd >= 0);
    CHECK(lseek(fd, 0, SEEK_SET) == 0);
    CHECK(write(fd, "67", 2) == 2);
    CHECK(lseek(fd, 0, SEEK_CUR) == 7);
    CHECK(close(fd) == 0);
    fd = open("app", O_RDONLY);
    CHECK(fd >= 0 && read(fd, buf, sizeof(buf)) == 7);
    CHECK(memcmp(buf, "1234567", 7) == 0);
    CHECK(close(fd) == 0);
    printf("O_APPEND: ok\n");
}

static void test_errnos(void)
{
    CHECK_ERR(open("nope/nothing", O_RDONLY), ENOENT);
    CHECK_ERR(open("b/x", O_RDONLY), ENOTDIR);
    CHECK_ERR(open("sub", O_WRONLY), EISDIR);
    CHECK_ERR(mkdir("b", 0755), EEXIST);
    CHECK_ERR(rename("sub", "b"), ENOTDIR);
    CHECK_ERR(rmdir("b"), ENOTDIR);
    CHECK_ERR(open("", O_RDONLY), ENOENT);
    CHECK_ERR(open("b", O_RDONLY | O_DIRECTORY), ENOTDIR);
    char longname[300];
    memset(longname, 'n', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = 0;
    CHECK_ERR(open(longname, O_RDONLY), ENAMETOOLONG);
    printf("errno values: ok\n");
}

static void cleanup(void)
{
    static const char *const files[] = {
        "data", "b", "m", "u", "t", "fds", "app", "sub/f",
        "list/zeta", "list/alpha", "list/mid", "list/Beta",
        "list/a.long.file.name.with.dots"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
        CHECK(unlink(files[i]) == 0);
    CHECK(rmdir("list/dir") == 0);
    CHECK(rmdir("list") == 0);
    CHECK(rmdir("sub") == 0);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    char tmpl[] = "fileops-XXXXXX";
    const char *dir = argc > 1 ? argv[1] : mkdtemp(tmpl);
    CHECK(dir != NULL);
    CHECK(chdir(dir) == 0);
    umask(022);
    test_rw();
    test_names();
    test_dirs();
    test_getdents();
    test_modes_and_times();
    test_truncate();
    test_cwd();
    test_fds();
    test_errnos();
    cleanup();
    if (argc <= 1) {
        CHECK(chdir("..") == 0);
        CHECK(rmdir(dir) == 0);
    }
    printf("fileops: all ok\n");
    return 0;
}
