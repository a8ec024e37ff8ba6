/*
 * robust_offset_wrap.c - a robust list whose futex_offset added to an
 * entry's address wraps around. Linux adds them as unsigned longs at the
 * thread's exit, finds no memory there and goes on. hvrun added them as
 * signed 64-bit values: undefined behaviour, which the debug build's
 * UBSan stopped the run on (found by trinity: set_robust_list with a
 * garbage head, then exit). A child sets such a list (an empty list, a
 * pending entry near the top of the address space, a large negative
 * offset) and exits; its parent sees it exit normally.
 */
#include <linux/futex.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static struct robust_list_head head;

int main(void)
{
    for (int round = 0; round < 2; round++) {
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            head.list.next = &head.list; /* empty */
            /* pending + offset: past INT64_MIN as signed values */
            head.list_op_pending =
                (struct robust_list *)(uintptr_t)0xab00000000000000ULL;
            head.futex_offset = round ? INT64_MIN + 12345 : -0x5600000000000000LL;
            CHECK(syscall(SYS_set_robust_list, &head, sizeof(head)) == 0);
            _exit(7);
        }
        int st;
        CHECK(waitpid(pid, &st, 0) == pid);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7);
    }
    printf("robust lists whose offsets wrap: exits as usual\n");
    return 0;
}
