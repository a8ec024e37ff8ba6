/*
 * file_handles: name_to_handle_at and open_by_handle_at on a file system
 * with handles (the runner's working directory). The handle's bytes are
 * not printed (Linux's carry the host's inode numbers, hvrun's its own),
 * only what a program can rely on: the size probe, a handle that opens
 * the same file (after a rename too), the same handle for the same file,
 * ELOOP for a symlink's, ESTALE for a changed handle, another file
 * system's mount fd and a deleted file, EPERM without
 * CAP_DAC_READ_SEARCH, and the argument errors in Linux's order. A FIFO
 * opens by handle only O_PATH here: hvrun serves a device's, FIFO's or
 * socket's open by path alone (EOPNOTSUPP otherwise, fs/handle.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define ROOM 128 /* MAX_HANDLE_SZ */

static struct file_handle *new_handle(unsigned int bytes)
{
    struct file_handle *fh = calloc(1, sizeof(*fh) + ROOM);
    CHECK(fh);
    fh->handle_bytes = bytes;
    return fh;
}

/* A handle of path (flags for name_to_handle_at), or NULL with errno. */
static struct file_handle *handle_of(int dfd, const char *path, int flags)
{
    struct file_handle *fh = new_handle(ROOM);
    int mount_id;
    if (name_to_handle_at(dfd, path, fh, &mount_id, flags) < 0) {
        free(fh);
        return NULL;
    }
    return fh;
}

static bool same_handle(const struct file_handle *a, const struct file_handle *b)
{
    return a->handle_bytes == b->handle_bytes && a->handle_type == b->handle_type &&
           memcmp(a->f_handle, b->f_handle, a->handle_bytes) == 0;
}

/* Opens fh and says whether it is the file at path, and its first line. */
static void open_and_compare(const char *what, struct file_handle *fh,
                             const char *path, int flags)
{
    int fd = open_by_handle_at(AT_FDCWD, fh, flags);
    if (fd < 0) {
        printf("%s: %s\n", what, result_text(fd));
        return;
    }
    struct stat by_fd, by_path;
    CHECK(fstat(fd, &by_fd) == 0 && stat(path, &by_path) == 0);
    char text[32] = "";
    if (S_ISREG(by_fd.st_mode) && (flags & O_ACCMODE) != O_WRONLY) {
        ssize_t n = read(fd, text, sizeof(text) - 1);
        CHECK(n >= 0);
        text[n] = 0;
        text[strcspn(text, "\n")] = 0;
    }
    printf("%s: opened, same file %s, %s%s\n", what,
           by_fd.st_dev == by_path.st_dev && by_fd.st_ino == by_path.st_ino ? "yes" : "no",
           S_ISDIR(by_fd.st_mode) ? "a directory" : "text: ", text);
    close(fd);
}

static void size_probe(void)
{
    struct file_handle *fh = new_handle(0);
    int mount_id = -1;
    int r = name_to_handle_at(AT_FDCWD, "file", fh, &mount_id, 0);
    printf("size probe: %s, size given %s, mount id given %s\n", result_text(r),
           fh->handle_bytes > 0 && fh->handle_bytes <= ROOM ? "yes" : "no",
           mount_id >= 0 ? "yes" : "no");
    free(fh);
}

static void argument_errors(void)
{
    struct file_handle *fh = new_handle(ROOM);
    int mount_id;
    printf("bad flags: %s\n", result_text(name_to_handle_at(AT_FDCWD, "file", fh, &mount_id, 0x4)));
    printf("empty path without AT_EMPTY_PATH: %s\n", result_text(name_to_handle_at(AT_FDCWD, "", fh, &mount_id, 0)));
    printf("missing file: %s\n", result_text(name_to_handle_at(AT_FDCWD, "nothing", fh, &mount_id, 0)));
    printf("bad handle pointer: %s\n", result_text(name_to_handle_at(AT_FDCWD, "file", (void *)8, &mount_id, 0)));
    printf("bad mount id pointer: %s\n", result_text(name_to_handle_at(AT_FDCWD, "file", fh, (void *)8, 0)));
    fh->handle_bytes = ROOM + 1;
    printf("size over MAX_HANDLE_SZ: %s\n", result_text(name_to_handle_at(AT_FDCWD, "file", fh, &mount_id, 0)));
    int pipefd[2];
    CHECK(pipe(pipefd) == 0);
    fh->handle_bytes = ROOM;
    printf("a pipe: %s\n", result_text(name_to_handle_at(pipefd[0], "", fh, &mount_id, AT_EMPTY_PATH)));
    printf("/proc/self/stat: %s\n", result_text(name_to_handle_at(AT_FDCWD, "/proc/self/stat", fh, &mount_id, 0)));

    struct file_handle *good = handle_of(AT_FDCWD, "file", 0);
    CHECK(good);
    printf("open, mount fd -1: %s\n", result_text(open_by_handle_at(-1, good, O_RDONLY)));
    printf("open, mount fd not open: %s\n", result_text(open_by_handle_at(999, good, O_RDONLY)));
    printf("open, bad handle pointer: %s\n", result_text(open_by_handle_at(AT_FDCWD, (void *)8, O_RDONLY)));
    fh->handle_bytes = 0;
    printf("open, size 0: %s\n", result_text(open_by_handle_at(AT_FDCWD, fh, O_RDONLY)));
    fh->handle_bytes = ROOM + 1;
    printf("open, size over MAX_HANDLE_SZ: %s\n", result_text(open_by_handle_at(AT_FDCWD, fh, O_RDONLY)));
    int proc = open("/proc", O_RDONLY | O_DIRECTORY);
    CHECK(proc >= 0);
    printf("open, mount fd on /proc: %s\n", result_text(open_by_handle_at(proc, good, O_RDONLY)));
    close(proc);
    struct file_handle *changed = handle_of(AT_FDCWD, "file", 0);
    CHECK(changed);
    changed->f_handle[changed->handle_bytes - 1] ^= 0x5a;
    printf("open, changed handle: %s\n", result_text(open_by_handle_at(AT_FDCWD, changed, O_RDONLY)));
    close(pipefd[0]);
    close(pipefd[1]);
    free(fh);
    free(good);
    free(changed);
}

/* Without CAP_DAC_READ_SEARCH (a child drops it): EPERM. */
static void without_capability(void)
{
    struct file_handle *fh = handle_of(AT_FDCWD, "file", 0);
    CHECK(fh);
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
        struct __user_cap_data_struct data[2];
        CHECK(syscall(SYS_capget, &hdr, data) == 0);
        data[0].effective &= ~(1U << CAP_DAC_READ_SEARCH);
        CHECK(syscall(SYS_capset, &hdr, data) == 0);
        printf("open without CAP_DAC_READ_SEARCH: %s\n",
               result_text(open_by_handle_at(AT_FDCWD, fh, O_RDONLY)));
        exit(0);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid && status == 0);
    free(fh);
}

int main(void)
{
    char dir[] = "file_handles.XXXXXX";
    CHECK(mkdtemp(dir));
    CHECK(chdir(dir) == 0);
    int fd = open("file", O_CREAT | O_WRONLY, 0600);
    CHECK(fd >= 0 && write(fd, "first line\n", 11) == 11 && close(fd) == 0);
    CHECK(mkdir("sub", 0700) == 0 && symlink("file", "link") == 0);

    size_probe();
    struct file_handle *file = handle_of(AT_FDCWD, "file", 0);
    CHECK(file);
    open_and_compare("file, read", file, "file", O_RDONLY);
    open_and_compare("file, write", file, "file", O_WRONLY);
    open_and_compare("file, O_CREAT", file, "file", O_RDONLY | O_CREAT);
    open_and_compare("file, O_CREAT|O_EXCL", file, "file", O_RDONLY | O_CREAT | O_EXCL);
    struct file_handle *again = handle_of(AT_FDCWD, "file", 0);
    struct file_handle *followed = handle_of(AT_FDCWD, "link", AT_SYMLINK_FOLLOW);
    int cwd = open(".", O_RDONLY | O_DIRECTORY);
    CHECK(cwd >= 0);
    int file_fd = open("file", O_RDONLY);
    CHECK(file_fd >= 0);
    struct file_handle *by_fd = handle_of(file_fd, "", AT_EMPTY_PATH);
    CHECK(again && followed && by_fd);
    printf("same handle again: %s, through the link: %s, by fd: %s\n",
           same_handle(file, again) ? "yes" : "no", same_handle(file, followed) ? "yes" : "no",
           same_handle(file, by_fd) ? "yes" : "no");
    int r = open_by_handle_at(cwd, file, O_RDONLY);
    printf("mount fd a directory of it: %s\n", r >= 0 ? "opened" : result_text(r));
    if (r >= 0)
        close(r);

    struct file_handle *sub = handle_of(AT_FDCWD, "sub", 0);
    CHECK(sub);
    open_and_compare("directory, read", sub, "sub", O_RDONLY | O_DIRECTORY);
    open_and_compare("directory, write", sub, "sub", O_RDWR);

    struct file_handle *link = handle_of(AT_FDCWD, "link", 0);
    CHECK(link);
    printf("symlink's own handle is the file's: %s\n", same_handle(file, link) ? "yes" : "no");
    printf("symlink, open: %s\n", result_text(open_by_handle_at(AT_FDCWD, link, O_RDONLY)));
    r = open_by_handle_at(AT_FDCWD, link, O_PATH);
    struct stat st;
    printf("symlink, O_PATH: %s\n",
           r < 0 ? result_text(r) : fstat(r, &st) == 0 && S_ISLNK(st.st_mode) ? "the link" : "other");

    CHECK(mkfifo("fifo", 0600) == 0);
    struct file_handle *fifo = handle_of(AT_FDCWD, "fifo", 0);
    CHECK(fifo);
    r = open_by_handle_at(AT_FDCWD, fifo, O_PATH);
    printf("FIFO, O_PATH: %s\n",
           r < 0 ? result_text(r) : fstat(r, &st) == 0 && S_ISFIFO(st.st_mode) ? "the FIFO" : "other");
    CHECK(unlink("fifo") == 0);

    CHECK(rename("file", "renamed") == 0);
    open_and_compare("after a rename", file, "renamed", O_RDONLY);
    CHECK(unlink("renamed") == 0 && close(file_fd) == 0);
    printf("after unlink: %s\n", result_text(open_by_handle_at(AT_FDCWD, file, O_RDONLY)));
    CHECK(rmdir("sub") == 0);
    printf("directory after rmdir: %s\n", result_text(open_by_handle_at(AT_FDCWD, sub, O_RDONLY)));

    fd = open("file", O_CREAT | O_WRONLY, 0600);
    CHECK(fd >= 0 && write(fd, "second file\n", 12) == 12 && close(fd) == 0);
    argument_errors();
    without_capability();

    CHECK(unlink("file") == 0 && unlink("link") == 0 && close(cwd) == 0);
    CHECK(chdir("..") == 0 && rmdir(dir) == 0);
    return 0;
}
