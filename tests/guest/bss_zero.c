/*
 * bss_zero.c - a program's bss reads zero, in the page its data ends in
 * and in the whole pages after it. hvrun's loader does not write those
 * whole pages (their backing is fresh: syscall-proxy/mm/loader.c,
 * bss_written), so this checks that the fresh backing is zero. Also a
 * child made after the parent wrote its bss sees the parent's bytes, and
 * a fresh exec of the program sees zeros again.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static int initialised[300] = {1, 2, 3}; /* .data, before the bss */
static unsigned char big[5 * 4096 + 123];
static long tail;

static size_t nonzero(void)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof(big); i++)
        n += big[i] != 0;
    return n + (tail != 0);
}

int main(int argc, char **argv)
{
    CHECK(initialised[0] == 1 && initialised[2] == 3 && initialised[299] == 0);
    CHECK(nonzero() == 0);
    if (argc > 1) { /* the exec'd copy */
        printf("exec'd copy: bss zero\n");
        return 0;
    }
    memset(big, 0x5a, sizeof(big));
    tail = 7;
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        CHECK(nonzero() == sizeof(big) + 1);
        execl("/proc/self/exe", argv[0], "again", (char *)NULL);
        _exit(3);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    printf("bss zero, %zu bytes, written and inherited\n", sizeof(big) + 8);
    return 0;
}
