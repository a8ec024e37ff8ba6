/*
 * ptrace_dr_kernel_addr.c - PTRACE_POKEUSER of a debug address register
 * (DR0-DR3) with an address at or past the end of user space is EINVAL
 * (hw_breakpoint_parse refuses a user breakpoint in kernel space); one
 * below it is taken and reads back (LTP's ptrace08). hvrun said EIO.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *res(long rc, int err)
{
    return rc == 0 ? "ok" : strerrorname_np(err);
}

int main(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        ptrace(PTRACE_TRACEME, 0, 0, 0);
        raise(SIGSTOP);
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    const unsigned long addrs[] = {0x7fffffffe000UL, 0x7ffffffff000UL,
                                   0xffffffff81000000UL, 0x800000000000UL};
    for (int dr = 0; dr < 4; dr += 3) {
        for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
            size_t off = offsetof(struct user, u_debugreg[dr]);
            long rc = ptrace(PTRACE_POKEUSER, pid, off, addrs[i]);
            int err = errno;
            errno = 0;
            long back = ptrace(PTRACE_PEEKUSER, pid, off, 0);
            printf("DR%d = %#lx: %s, reads %#lx\n", dr, addrs[i], res(rc, err),
                   (unsigned long)back);
        }
    }
    ptrace(PTRACE_CONT, pid, 0, 0);
    waitpid(pid, &st, 0);
    return 0;
}
