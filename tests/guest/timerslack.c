/*
 * timerslack: PR_SET_TIMERSLACK and /proc/self/timerslack_ns are one
 * value: each shows what the other set; 0 restores the default (50 us,
 * and in a child the parent's slack at fork).
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static void show(const char *after)
{
    char b[64] = {0};
    int fd = open("/proc/self/timerslack_ns", O_RDONLY);
    if (fd >= 0) {
        if (read(fd, b, sizeof(b) - 1) < 0)
            b[0] = '\0';
        close(fd);
    }
    printf("%-28s file %.*s prctl %d\n", after, (int)sizeof(b), b,
           prctl(PR_GET_TIMERSLACK));
}

static void write_file(const char *v)
{
    int fd = open("/proc/self/timerslack_ns", O_WRONLY);
    if (fd >= 0) {
        if (write(fd, v, 4) < 0)
            perror("write");
        close(fd);
    }
}

int main(void)
{
    show("at start:");
    prctl(PR_SET_TIMERSLACK, 1);
    show("after PR_SET_TIMERSLACK 1:");
    write_file("7000");
    show("after writing 7000:");
    prctl(PR_SET_TIMERSLACK, 0);
    show("after PR_SET_TIMERSLACK 0:");
    /* a child's default slack is its parent's slack at fork */
    prctl(PR_SET_TIMERSLACK, 70000);
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        prctl(PR_SET_TIMERSLACK, 123);
        prctl(PR_SET_TIMERSLACK, 0);
        show("child, after 123 then 0:");
        write_file("0\n\0");
        show("child, after writing 0:");
        fflush(stdout);
        _exit(0);
    }
    waitpid(c, NULL, 0);
    return 0;
}
