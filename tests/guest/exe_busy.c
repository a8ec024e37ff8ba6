/*
 * exe_busy: a program a live process runs cannot be written (ETXTBSY):
 * open for writing or with O_TRUNC, and truncate, of the test's own
 * program and of a copy a child runs; once the child is gone the copy is
 * writable again. Reading stays allowed. The copy lives in the working
 * directory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void show(const char *what, long r)
{
    printf("%-40s %s\n", what, r < 0 ? strerrorname_np(errno) : "ok");
}

static void try_open(const char *what, const char *path, int flags)
{
    int fd = open(path, flags);
    show(what, fd);
    if (fd >= 0)
        close(fd);
}

int main(int argc, char **argv)
{
    if (argc > 1) { /* the child: run until its stdin closes */
        char c;
        while (read(0, &c, 1) > 0)
            ;
        return 0;
    }
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        return 1;
    self[n] = '\0';
    try_open("own program O_RDONLY", self, O_RDONLY);
    try_open("own program O_WRONLY", self, O_WRONLY);
    try_open("own program O_RDWR", self, O_RDWR);
    try_open("own program O_RDONLY|O_TRUNC", self, O_RDONLY | O_TRUNC);
    try_open("/proc/self/exe O_WRONLY", "/proc/self/exe", O_WRONLY);
    show("truncate own program", truncate(self, 0));

    const char *copy = "exe_busy.copy";
    int in = open(self, O_RDONLY), out = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    struct stat st;
    if (in < 0 || out < 0 || fstat(in, &st) < 0 ||
        sendfile(out, in, NULL, (size_t)st.st_size) != st.st_size)
        return 1;
    close(in);
    close(out);
    int p[2];
    if (pipe(p) < 0)
        return 1;
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        dup2(p[0], 0);
        close(p[1]);
        execl(copy, copy, "child", (char *)NULL);
        _exit(127);
    }
    close(p[0]);
    /* the child has exec'd once it reads: wait for its program to run */
    for (int i = 0; i < 1000; i++) {
        char link[64], target[4096];
        snprintf(link, sizeof(link), "/proc/%d/exe", (int)c);
        ssize_t k = readlink(link, target, sizeof(target) - 1);
        if (k > 0 && (target[k] = '\0', strstr(target, copy)))
            break;
        usleep(1000);
    }
    try_open("child's program O_WRONLY", copy, O_WRONLY);
    show("truncate child's program", truncate(copy, 0));
    close(p[1]);
    int status;
    waitpid(c, &status, 0);
    try_open("child gone: O_WRONLY", copy, O_WRONLY);
    show("child gone: truncate", truncate(copy, 0));
    unlink(copy);
    return 0;
}
