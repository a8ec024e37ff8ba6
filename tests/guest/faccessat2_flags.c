/*
 * faccessat2_flags.c - faccessat2 and faccessat with flag and mode words
 * Linux refuses (negative, high bits, unknown bits): EINVAL before the
 * path is looked up (a missing path gives EINVAL, not ENOENT), and the
 * known flags still work. The debug build once aborted on a negative
 * flags word (UBSan: left shift of a negative value). Run natively and
 * under hvrun, the output must match.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void check(const char *what, long rc)
{
    printf("%s: %ld %s\n", what, rc, rc < 0 ? strerror(errno) : "");
}

int main(void)
{
    const char *ok = "/", *missing = "/hvrun-no-such-file";
    check("flags -1", syscall(SYS_faccessat2, AT_FDCWD, ok, R_OK, -1));
    check("flags INT_MIN", syscall(SYS_faccessat2, AT_FDCWD, ok, R_OK, INT_MIN));
    check("flags 0x80000000 missing",
          syscall(SYS_faccessat2, AT_FDCWD, missing, R_OK, 0x80000000u));
    check("flags 1", syscall(SYS_faccessat2, AT_FDCWD, ok, R_OK, 1));
    check("mode -1", syscall(SYS_faccessat2, AT_FDCWD, ok, -1, 0));
    check("mode 8 missing", syscall(SYS_faccessat2, AT_FDCWD, missing, 8, 0));
    check("faccessat mode INT_MIN", syscall(SYS_faccessat, AT_FDCWD, ok, INT_MIN));
    check("access mode 0x10", syscall(SYS_access, ok, 0x10));
    check("AT_EACCESS", syscall(SYS_faccessat2, AT_FDCWD, ok, R_OK, AT_EACCESS));
    check("AT_SYMLINK_NOFOLLOW",
          syscall(SYS_faccessat2, AT_FDCWD, ok, F_OK, AT_SYMLINK_NOFOLLOW));
    check("AT_EMPTY_PATH",
          syscall(SYS_faccessat2, AT_FDCWD, "", F_OK, AT_EMPTY_PATH));
    check("missing", syscall(SYS_faccessat2, AT_FDCWD, missing, F_OK, 0));
    return 0;
}
