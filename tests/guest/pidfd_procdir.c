/* pidfd_send_signal on a /proc/<pid> directory fd: Linux takes it as a
 * pidfd of that process (stress-ng's pidfd stressor signals so). Other
 * pidfd calls do not; a directory outside /proc is EBADF. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long send_sig(int fd, int sig)
{
    return syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
}

static void show(const char *what, long r)
{
    printf("%s: %ld%s%s\n", what, r, r < 0 ? " " : "",
           r < 0 ? strerror(errno) : "");
}

int main(void)
{
    pid_t child = fork();
    if (child == 0) {
        for (;;)
            pause();
    }
    char name[64];
    snprintf(name, sizeof(name), "/proc/%d", (int)child);
    int dir = open(name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    show("open /proc/<child>", dir < 0 ? -1 : 0);
    struct stat st;
    show("fstat is a directory", fstat(dir, &st) == 0 && S_ISDIR(st.st_mode));
    show("open /proc/<child> O_WRONLY", open(name, O_WRONLY));
    show("signal 0", send_sig(dir, 0));
    show("pidfd_getfd", syscall(SYS_pidfd_getfd, dir, 0, 0));
    int dup_fd = dup(dir);
    show("SIGTERM by a dup", send_sig(dup_fd, SIGTERM));
    int status;
    show("waitpid", waitpid(child, &status, 0) == child);
    printf("killed by signal %d\n", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    show("signal 0 after the reap", send_sig(dir, 0));
    int self = open("/proc/self", O_RDONLY | O_DIRECTORY);
    show("signal 0 to /proc/self", send_sig(self, 0));
    int root = open("/", O_RDONLY | O_DIRECTORY);
    show("signal 0 by /", send_sig(root, 0));
    snprintf(name, sizeof(name), "/proc/%d/task", (int)getpid());
    int task = open(name, O_RDONLY | O_DIRECTORY);
    show("signal 0 by /proc/<self>/task", send_sig(task, 0));
    return 0;
}
