/*
 * proc_fds_passed.c - /proc/<pid> descriptors passed over SCM_RIGHTS to
 * another process are still the sender's files, as Linux's descriptions
 * are: /proc/self/mem reads the sender's memory, a /proc/self directory
 * fd opens the sender's entries, and a /proc/self/comm fd written by the
 * receiver is EINVAL (only the process's own threads rename it). hvrun's
 * such fds are memfds or its own directories with a note of whose they
 * are, and the note did not travel: the receiver read nothing from mem,
 * its own comm under the directory, and renamed nobody. (exe_link_passed
 * covers an exe link's O_PATH fd.)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"
#include "guest_scm.h"

static char value[16] = "child-value";

static void receiver(int sock)
{
    int mem = recv_fd(sock);
    char got[16] = {0};
    ssize_t n = pread(mem, got, 12, (off_t)(uintptr_t)value);
    printf("mem fd: pread %s [%s]\n", result_text(n), n > 0 ? got : "");
    int dir = recv_fd(sock);
    int comm = openat(dir, "comm", O_RDONLY);
    n = comm < 0 ? -1 : read(comm, got, sizeof(got) - 1);
    got[n > 0 ? n : 0] = '\0';
    printf("dir fd: openat(fd, \"comm\") reads %s [%s]\n", result_text(n),
           n > 0 ? got : "");
    int wcomm = recv_fd(sock);
    printf("comm fd: write %s\n", result_text(write(wcomm, "renamed", 7)));
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int sock;
    pid_t child = fork_receiver(receiver, &sock);
    strcpy(value, "sender-value");
    CHECK(prctl(PR_SET_NAME, "the-sender") == 0);
    int fds[3] = {open("/proc/self/mem", O_RDONLY),
                  open("/proc/self", O_RDONLY | O_DIRECTORY),
                  open("/proc/self/comm", O_WRONLY)};
    for (int i = 0; i < 3; i++) {
        CHECK(fds[i] >= 0);
        send_fd(sock, fds[i]);
    }
    int st;
    CHECK(waitpid(child, &st, 0) == child && WIFEXITED(st) &&
          WEXITSTATUS(st) == 0);
    char comm[32] = {0};
    int fd = open("/proc/self/comm", O_RDONLY);
    CHECK(fd >= 0 && read(fd, comm, sizeof(comm) - 1) > 0);
    printf("the sender's comm after: %s", comm);
    return 0;
}
