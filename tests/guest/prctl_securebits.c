/*
 * prctl's securebits and machine-check kill policy as Linux keeps them:
 * PR_GET/SET_SECUREBITS (KEEP_CAPS shared with PR_SET_KEEPCAPS, locks that
 * refuse changes, unknown bits EPERM) and PR_MCE_KILL/PR_MCE_KILL_GET
 * (argument checks; a bad policy still sets PF_MCE_PROCESS), in a child
 * so the test's own process keeps its bits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/securebits.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static void show(const char *what, long r)
{
    if (r < 0)
        printf("%-36s -1 %s\n", what, strerrorname_np(errno));
    else
        printf("%-36s %ld\n", what, r);
}

int main(void)
{
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        show("GET_SECUREBITS", prctl(PR_GET_SECUREBITS, 0, 0, 0, 0));
        show("SET_KEEPCAPS 1", prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0));
        show("GET_SECUREBITS", prctl(PR_GET_SECUREBITS, 0, 0, 0, 0));
        show("SET_SECUREBITS noroot", prctl(PR_SET_SECUREBITS, SECBIT_NOROOT, 0, 0, 0));
        show("GET_KEEPCAPS", prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0));
        show("SET_SECUREBITS unknown", prctl(PR_SET_SECUREBITS, 1 << 12, 0, 0, 0));
        show("SET_SECUREBITS keepcaps locked", prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_KEEP_CAPS_LOCKED, 0, 0, 0));
        show("SET_KEEPCAPS 1 (locked)", prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0));
        show("SET_SECUREBITS unlock", prctl(PR_SET_SECUREBITS, SECBIT_NOROOT, 0, 0, 0));
        show("GET_SECUREBITS", prctl(PR_GET_SECUREBITS, 0, 0, 0, 0));
        show("MCE_KILL_GET", prctl(PR_MCE_KILL_GET, 0, 0, 0, 0));
        show("MCE_KILL_GET extra arg", prctl(PR_MCE_KILL_GET, 1, 0, 0, 0));
        show("MCE_KILL set early", prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_EARLY, 0, 0));
        show("MCE_KILL_GET", prctl(PR_MCE_KILL_GET, 0, 0, 0, 0));
        show("MCE_KILL set late", prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_LATE, 0, 0));
        show("MCE_KILL_GET", prctl(PR_MCE_KILL_GET, 0, 0, 0, 0));
        show("MCE_KILL clear with arg3", prctl(PR_MCE_KILL, PR_MCE_KILL_CLEAR, 1, 0, 0));
        show("MCE_KILL clear", prctl(PR_MCE_KILL, PR_MCE_KILL_CLEAR, 0, 0, 0));
        show("MCE_KILL_GET", prctl(PR_MCE_KILL_GET, 0, 0, 0, 0));
        show("MCE_KILL set bad policy", prctl(PR_MCE_KILL, PR_MCE_KILL_SET, 7, 0, 0));
        show("MCE_KILL_GET", prctl(PR_MCE_KILL_GET, 0, 0, 0, 0));
        show("MCE_KILL bad op", prctl(PR_MCE_KILL, 5, 0, 0, 0));
        show("MCE_KILL arg4", prctl(PR_MCE_KILL, PR_MCE_KILL_CLEAR, 0, 1, 0));
        fflush(stdout);
        pid_t g = fork();
        if (g == 0) {
            show("child: MCE_KILL_GET", prctl(PR_MCE_KILL_GET, 0, 0, 0, 0));
            show("child: GET_SECUREBITS", prctl(PR_GET_SECUREBITS, 0, 0, 0, 0));
            _exit(0);
        }
        waitpid(g, NULL, 0);
        _exit(0);
    }
    waitpid(c, NULL, 0);
    if (getuid() == 0) {
        fflush(stdout);
        c = fork();
        if (c == 0) {
            if (setuid(65534) == 0)
                show("nobody: SET_SECUREBITS", prctl(PR_SET_SECUREBITS, SECBIT_NOROOT, 0, 0, 0));
            _exit(0);
        }
        waitpid(c, NULL, 0);
    }
    return 0;
}
