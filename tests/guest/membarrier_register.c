/*
 * membarrier_register.c - a private expedited membarrier needs the
 * process's registration first (EPERM without it), for plain and
 * SYNC_CORE barriers alike; a global expedited one needs none. What a
 * fork and an execve keep of the registration is printed too. hvrun once
 * let an unregistered barrier succeed (LTP's membarrier01 then reported
 * nothing for its case 3: TBROK).
 */
#define _GNU_SOURCE
#include <linux/membarrier.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static long membarrier(int cmd) { return syscall(SYS_membarrier, cmd, 0, 0); }

static void show(const char *who)
{
    printf("%s: private %s", who,
           result_text(membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)));
    printf(", sync-core %s",
           result_text(membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE)));
    printf(", global %s\n",
           result_text(membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED)));
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc > 1) { /* after execve */
        show("after execve");
        return 0;
    }
    long q = membarrier(MEMBARRIER_CMD_QUERY);
    int need = MEMBARRIER_CMD_PRIVATE_EXPEDITED |
               MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED |
               MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE |
               MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE |
               MEMBARRIER_CMD_GLOBAL_EXPEDITED;
    printf("query has the expedited commands: %d\n", q >= 0 && (q & need) == need);
    show("unregistered");
    printf("register private: %s\n",
           result_text(membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED)));
    show("private registered");
    printf("register sync-core: %s\n",
           result_text(membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE)));
    show("both registered");
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        show("forked child");
        execl("/proc/self/exe", argv[0], "exec", (char *)NULL);
        _exit(1);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return 0;
}
