/*
 * fcntl_queries: F_CREATED_QUERY (Linux 6.12: did the open that made
 * this description create the file) and F_DUPFD_QUERY (6.10: is another
 * fd the same description), compared with a native run: a file made by
 * O_CREAT and O_CREAT|O_EXCL, one opened again, a dup and a fork child's
 * copy keep the answer, another fd and a closed one (EBADF).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define CREATED_QUERY 1028 /* F_CREATED_QUERY */
#define DUPFD_QUERY 1027   /* F_DUPFD_QUERY */

static void show(const char *what, long r) { printf("%s: %s\n", what, result_text(r)); }

int main(void)
{
    char dir[] = "fcntl_queries.XXXXXX";
    CHECK(mkdtemp(dir) && chdir(dir) == 0);
    int null_fd = open("/dev/null", O_RDONLY);
    show("/dev/null", fcntl(null_fd, CREATED_QUERY, 0));
    int made = open("a", O_CREAT | O_RDWR, 0600);
    show("made with O_CREAT", fcntl(made, CREATED_QUERY, 0));
    int again = open("a", O_CREAT | O_RDWR, 0600);
    show("O_CREAT of an existing file", fcntl(again, CREATED_QUERY, 0));
    int plain = open("a", O_RDONLY);
    show("opened again", fcntl(plain, CREATED_QUERY, 0));
    int excl = open("b", O_CREAT | O_EXCL | O_WRONLY, 0600);
    show("made with O_EXCL", fcntl(excl, CREATED_QUERY, 0));
    int dup_fd = dup(made);
    show("a dup of the made one", fcntl(dup_fd, CREATED_QUERY, 0));
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        show("the child's copy", fcntl(made, CREATED_QUERY, 0));
        show("child: same description as the parent's dup", fcntl(made, DUPFD_QUERY, dup_fd));
        exit(0);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid && status == 0);
    show("dup query, same description", fcntl(made, DUPFD_QUERY, dup_fd));
    show("dup query, itself", fcntl(made, DUPFD_QUERY, made));
    show("dup query, same file opened again", fcntl(made, DUPFD_QUERY, again));
    show("dup query, a closed fd", fcntl(made, DUPFD_QUERY, 999));
    show("dup query, -1", fcntl(made, DUPFD_QUERY, -1));
    show("created query, a closed fd", fcntl(999, CREATED_QUERY, 0));
    CHECK(unlink("a") == 0 && unlink("b") == 0 && chdir("..") == 0 && rmdir(dir) == 0);
    return 0;
}
