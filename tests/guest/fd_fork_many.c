/*
 * fd_fork_many: a process with 3000 open fds (500 pipes, 2000 opens of
 * /dev/null) forks 8 children, all alive at once; released one at a
 * time, each checks that every pipe it inherited still carries a byte
 * from its write end to its read end and every other fd is still
 * /dev/null, then exits 0. (Not 1500 pipes: past 1024 pipes of a user
 * without CAP_SYS_RESOURCE, hvrun's case, Linux gives that user's new
 * pipes 8 KiB instead of 64, fs.pipe-user-pages-soft, so runs beside
 * this one would see other pipes: docs/DETERMINISM.md.) Under hvrun a fork's copy of the fd table
 * shares the parent's host fds, so this needs no extra host fds (it used
 * to need 3000 per child: 27000 in all, past hvrun's 20000 here).
 */
#include "guest_check.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define NR_PIPES 500
#define NR_OTHERS 2000
#define NR_CHILDREN 8

static int pipes[NR_PIPES][2];
static int others[NR_OTHERS];
static struct stat dev_null;

/* Every pipe moves one byte: a broken copy shows as a failed transfer. */
static int check_pipes(char tag)
{
    for (int i = 0; i < NR_PIPES; i++) {
        char c = tag, got = 0;
        if (write(pipes[i][1], &c, 1) != 1 || read(pipes[i][0], &got, 1) != 1 ||
            got != tag)
            return i + 1;
    }
    for (int i = 0; i < NR_OTHERS; i++) {
        struct stat st;
        if (fstat(others[i], &st) != 0 || st.st_rdev != dev_null.st_rdev ||
            write(others[i], &tag, 1) != 1)
            return NR_PIPES + i + 1;
    }
    return 0;
}

int main(void)
{
    struct rlimit rl = {4096, 4096};
    CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
    CHECK(rl.rlim_max >= 4096);
    rl.rlim_cur = 4096;
    CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
    for (int i = 0; i < NR_PIPES; i++)
        CHECK(pipe(pipes[i]) == 0);
    CHECK(stat("/dev/null", &dev_null) == 0);
    for (int i = 0; i < NR_OTHERS; i++)
        CHECK((others[i] = open("/dev/null", O_WRONLY)) >= 0);
    printf("opened %d fds\n", 2 * NR_PIPES + NR_OTHERS);
    int go[NR_CHILDREN][2];
    pid_t pids[NR_CHILDREN];
    for (int k = 0; k < NR_CHILDREN; k++) {
        CHECK(pipe(go[k]) == 0);
        pids[k] = fork();
        CHECK(pids[k] >= 0);
        if (pids[k] == 0) {
            char c; /* the parent's go: one child at a time uses the pipes */
            if (read(go[k][0], &c, 1) != 1)
                _exit(2);
            _exit(check_pipes((char)('a' + k)) == 0 ? 0 : 3);
        }
    }
    for (int k = 0; k < NR_CHILDREN; k++) {
        CHECK(write(go[k][1], "g", 1) == 1);
        int status;
        CHECK(waitpid(pids[k], &status, 0) == pids[k]);
        printf("child %d: exited %d\n", k,
               WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    CHECK(check_pipes('z') == 0);
    printf("parent: pipes still work\n");
    return 0;
}
