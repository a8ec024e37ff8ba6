/*
 * capget_other.c - capget of another process (stress-ng's cap stressor
 * reads pid 1's sets): a live child's sets are readable and are what the
 * child reads of itself; pid 1's are readable (natively the host's init,
 * under hvrun the run's virtual init: before, ESRCH failed the stressor);
 * a pid no process has is ESRCH, a negative one EINVAL. Prints one line per check; run natively and under hvrun, the
 * output must match.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static long capget_of(int pid, struct __user_cap_data_struct d[2])
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, pid};
    memset(d, 0, 2 * sizeof(*d));
    return syscall(SYS_capget, &h, d);
}

int main(void)
{
    struct __user_cap_data_struct mine[2], child[2];
    CHECK(capget_of(0, mine) == 0);
    int go[2];
    CHECK(pipe(go) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) { /* waits until the parent has looked */
        char c;
        close(go[1]);
        _exit(read(go[0], &c, 1) == 0 ? 0 : 1);
    }
    close(go[0]);
    printf("capget child: %s\n", result_text(capget_of(pid, child)));
    printf("child's sets are the parent's: %d\n",
           memcmp(mine, child, sizeof(mine)) == 0);
    close(go[1]);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
    printf("capget reaped child: %s\n", result_text(capget_of(pid, child)));
    printf("capget pid 1: %s\n", result_text(capget_of(1, child)));
    printf("capget pid -1: %s\n", result_text(capget_of(-1, child)));
    return 0;
}
