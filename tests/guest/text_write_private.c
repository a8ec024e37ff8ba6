/*
 * text_write_private.c - a write into a process's own library text
 * (/proc/self/mem, a FOLL_FORCE write, as a debugger's breakpoint) stays
 * that process's: its parent, a sibling forked before and one forked
 * after all read the library's own bytes there, and so does the writer's
 * next exec. Under hvrun a library's text in every process of a run may
 * be the same host pages (the run's page store, which kvm maps shared
 * and writable so that its shadow MMU fills neighbouring entries): a
 * write must become the writer's own copy first, never reach those pages.
 * The output is the same natively.
 */
#define _GNU_SOURCE
#include "guest_check.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* A libc function this program never calls: its first bytes are the
 * place written. */
static unsigned char *target(void)
{
    return (unsigned char *)(uintptr_t)&strverscmp;
}

static int write_own(unsigned char *at, unsigned char byte)
{
    int fd = open("/proc/self/mem", O_RDWR);
    if (fd < 0)
        return -1;
    ssize_t n = pwrite(fd, &byte, 1, (off_t)(uintptr_t)at);
    close(fd);
    return n == 1 ? 0 : -1;
}

/* Whether the byte at the target is the original: printed by each
 * process in turn (the order is fixed by the waits). */
static void report(const char *who, unsigned char original)
{
    printf("%s: %s\n", who, *target() == original ? "original" : "changed");
    fflush(stdout);
}

static void wait_child(pid_t pid)
{
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(int argc, char **argv)
{
    unsigned char original = *target();
    if (argc > 1 && strcmp(argv[1], "exec") == 0) {
        report("exec'd writer", (unsigned char)strtoul(argv[2], NULL, 0));
        return 0;
    }
    int go[2];
    CHECK(pipe(go) == 0);
    pid_t before = fork();
    CHECK(before >= 0);
    if (before == 0) { /* forked before the write: waits for it */
        char c;
        close(go[1]);
        CHECK(read(go[0], &c, 1) == 1);
        report("sibling forked before", original);
        _exit(0);
    }
    close(go[0]);
    pid_t writer = fork();
    CHECK(writer >= 0);
    if (writer == 0) {
        unsigned char other = (unsigned char)(original ^ 0xff);
        CHECK(write_own(target(), other) == 0);
        printf("writer: %s\n", *target() == other ? "its write" : "lost");
        fflush(stdout);
        char arg[8];
        snprintf(arg, sizeof(arg), "%u", original);
        execl("/proc/self/exe", argv[0], "exec", arg, (char *)NULL);
        _exit(2);
    }
    wait_child(writer);
    report("parent", original);
    CHECK(write(go[1], "x", 1) == 1);
    wait_child(before);
    pid_t after = fork();
    CHECK(after >= 0);
    if (after == 0) {
        report("child forked after", original);
        _exit(0);
    }
    wait_child(after);
    return 0;
}
