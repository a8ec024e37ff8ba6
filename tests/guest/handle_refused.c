/*
 * handle_refused: name_to_handle_at on a file system without export
 * operations (/proc: no handles on Linux, nor under hvrun, fs/handle.c):
 * the flags (EINVAL) and the path's lookup (EBADF, ENOTDIR, EFAULT,
 * ENOENT; AT_SYMLINK_FOLLOW follows) come first, then EOPNOTSUPP. The
 * runner compares with a native run. file_handles covers a file system
 * with handles.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "guest_check.h"

static void try(const char *what, int dfd, const char *path, int flags)
{
    struct file_handle *fh = malloc(sizeof(*fh) + 128);
    CHECK(fh);
    fh->handle_bytes = 128;
    int mount_id;
    printf("%s: %s\n", what,
           result_text(name_to_handle_at(dfd, path, fh, &mount_id, flags)));
    free(fh);
}

int main(void)
{
    int proc = open("/proc/self", O_RDONLY | O_DIRECTORY);
    int file = open("/proc/self/stat", O_RDONLY);
    CHECK(proc >= 0 && file >= 0);
    try("a file", AT_FDCWD, "/proc/self/stat", 0);
    try("bad flags", AT_FDCWD, "/proc/self/stat", 0x4);
    try("bad dfd", -1, "stat", 0);
    try("dfd not a directory", file, "stat", 0);
    try("missing", proc, "no-such-file", 0);
    try("bad path pointer", AT_FDCWD, (const char *)8, 0);
    try("empty without AT_EMPTY_PATH", proc, "", 0);
    try("empty with AT_EMPTY_PATH", file, "", AT_EMPTY_PATH);
    try("through a link", AT_FDCWD, "/proc/self", AT_SYMLINK_FOLLOW);
    return 0;
}
