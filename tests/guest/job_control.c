/* job_control: a paused child is stopped (SIGSTOP), continued (SIGCONT) and
 * killed (SIGTERM); wait reports each change once (WUNTRACED, WCONTINUED),
 * waitid reports CLD_STOPPED, and a stopped child's SIGTERM waits for
 * SIGCONT. Prints the same lines natively and under hvrun. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(c)                                                               \
    do {                                                                       \
        if (!(c)) {                                                            \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);               \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

int main(void)
{
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        for (;;)
            pause();
    }
    int st;
    CHECK(kill(c, SIGSTOP) == 0);
    CHECK(waitpid(c, &st, WUNTRACED) == c);
    CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
    printf("stopped by %d\n", WSTOPSIG(st));
    CHECK(waitpid(c, &st, WUNTRACED | WNOHANG) == 0); /* told once */
    CHECK(kill(c, SIGTERM) == 0);                      /* waits for CONT */
    CHECK(kill(c, SIGCONT) == 0);
    CHECK(waitpid(c, &st, WCONTINUED | WUNTRACED) == c);
    /* Either order is Linux: the continue is reported, or the child ran
     * and died of the pending SIGTERM first. */
    if (WIFCONTINUED(st))
        CHECK(waitpid(c, &st, 0) == c);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
    printf("killed by %d\n", WTERMSIG(st));

    c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        for (;;)
            pause();
    }
    CHECK(kill(c, SIGTSTP) == 0);
    siginfo_t si = {0};
    CHECK(waitid(P_PID, c, &si, WSTOPPED) == 0);
    CHECK(si.si_code == CLD_STOPPED && si.si_status == SIGTSTP);
    printf("waitid: stopped by %d\n", si.si_status);
    CHECK(kill(c, SIGKILL) == 0); /* kills a stopped child */
    CHECK(waitpid(c, &st, 0) == c && WIFSIGNALED(st) && WTERMSIG(st) == 9);
    printf("killed by %d\n", WTERMSIG(st));
    return 0;
}
