/*
 * fd_emfile_fork: stress-ng sockpair's pattern, scaled down. The soft
 * RLIMIT_NOFILE goes to the hard limit (at most 65536, to bound the run),
 * socket pairs are opened until EMFILE, then a child is forked that
 * closes every fd and exits 0. How many pairs fit depends on the host
 * (natively its limit; under hvrun, hvrun's own limit less its reserve),
 * so only the EMFILE is printed. Under hvrun the fork used to fail for
 * want of host fds, and stress-ng retried it forever.
 */
#include "guest_check.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_SOFT 65536

int main(void)
{
    struct rlimit rl;
    CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
    rl.rlim_cur = rl.rlim_max > MAX_SOFT ? MAX_SOFT : rl.rlim_max;
    CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
    int sv[2], last = -1, pairs = 0;
    for (;;) {
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
            break;
        last = sv[1];
        pairs++;
    }
    printf("socketpair: %s\n", errno == EMFILE ? "EMFILE" : strerror(errno));
    CHECK(pairs > 100);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        for (int fd = 3; fd <= last; fd++)
            close(fd);
        _exit(0);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    printf("child: exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    for (int fd = 3; fd <= last; fd++)
        close(fd);
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    printf("socketpair after closing: ok\n");
    return 0;
}
