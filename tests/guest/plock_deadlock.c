/*
 * plock_deadlock.c - F_SETLKW's deadlock detection between processes:
 * children 1, 2 and 3 hold write locks on bytes 2-6, 9-13 and 17-21;
 * child 2 waits for child 3's range; child 3 then asks for 2-15, which
 * child 1 blocks (no cycle: it waits); when child 1 unlocks, child 2's
 * lock is what child 3 waits for, and child 2 waits for child 3: child 3's
 * F_SETLKW is EDEADLK, and once child 3 exits child 2 gets its lock. A
 * direct cycle of two is EDEADLK at once. hvrun once let the cycle wait
 * forever (LTP's fcntl17).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"

static int fd;

static long lock(int cmd, short type, off_t start, off_t len)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET,
                       .l_start = start, .l_len = len};
    return fcntl(fd, cmd, &fl);
}

static void nap_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* A child that takes [start, start+len) and then, told by a byte on its
 * pipe, runs `then` and reports its result on `out`. */
static pid_t child(off_t start, off_t len, int in, int out,
                   long (*then)(void))
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid)
        return pid;
    char c;
    CHECK(lock(F_SETLK, F_WRLCK, start, len) == 0);
    CHECK(write(out, "L", 1) == 1);
    while (read(in, &c, 1) == 1) {
        long rc = then();
        char msg[32];
        int n = snprintf(msg, sizeof(msg), "%s\n", result_text(rc));
        CHECK(write(out, msg, (size_t)n) == n);
    }
    _exit(0);
}

static long unlock_all(void) { return lock(F_SETLK, F_UNLCK, 0, 0); }
static long wait_for_3(void) { return lock(F_SETLKW, F_WRLCK, 17, 5); }
static long wait_for_1_and_2(void) { return lock(F_SETLKW, F_WRLCK, 2, 14); }

static void expect_ack(int from)
{
    char c;
    CHECK(read(from, &c, 1) == 1 && c == 'L');
}

static void print_line(const char *who, int from)
{
    char buf[32];
    int n = 0;
    while (n < (int)sizeof(buf) - 1 && read(from, buf + n, 1) == 1 && buf[n] != '\n')
        n++;
    buf[n] = 0;
    printf("%s: %s\n", who, buf);
}

int main(void)
{
    char path[] = "/tmp/plockXXXXXX";
    fd = mkstemp(path);
    CHECK(fd >= 0 && ftruncate(fd, 64) == 0);
    int go[3][2], out[3][2];
    for (int i = 0; i < 3; i++)
        CHECK(pipe(go[i]) == 0 && pipe(out[i]) == 0);
    pid_t c1 = child(2, 5, go[0][0], out[0][1], unlock_all);
    expect_ack(out[0][0]);
    pid_t c2 = child(9, 5, go[1][0], out[1][1], wait_for_3);
    expect_ack(out[1][0]);
    pid_t c3 = child(17, 5, go[2][0], out[2][1], wait_for_1_and_2);
    expect_ack(out[2][0]);

    CHECK(write(go[1][1], "g", 1) == 1); /* child 2 waits for child 3 */
    nap_ms(100);
    CHECK(write(go[2][1], "g", 1) == 1); /* child 3 waits for child 1 */
    nap_ms(100);
    CHECK(write(go[0][1], "g", 1) == 1); /* child 1 unlocks */
    print_line("child 1 unlocks", out[0][0]);
    print_line("child 3 asks for 2-15", out[2][0]);
    kill(c3, SIGKILL); /* its locks go with it */
    CHECK(waitpid(c3, NULL, 0) == c3);
    print_line("child 2, after child 3 died", out[1][0]);
    kill(c1, SIGKILL);
    kill(c2, SIGKILL);
    CHECK(waitpid(c1, NULL, 0) == c1 && waitpid(c2, NULL, 0) == c2);

    /* A cycle of two: the parent holds 0-9 and waits for the child's
     * 10-19; the child, holding 10-19, asks for 0-9. */
    CHECK(lock(F_SETLK, F_WRLCK, 0, 10) == 0);
    int ready[2], res[2];
    CHECK(pipe(ready) == 0 && pipe(res) == 0);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        CHECK(lock(F_SETLK, F_WRLCK, 10, 10) == 0);
        CHECK(write(ready[1], "r", 1) == 1);
        nap_ms(100); /* the parent waits for 10-19 meanwhile */
        long rc = lock(F_SETLKW, F_WRLCK, 0, 10);
        const char *t = result_text(rc);
        CHECK(write(res[1], t, strlen(t)) == (ssize_t)strlen(t));
        _exit(0);
    }
    char r;
    CHECK(read(ready[0], &r, 1) == 1);
    long rc = lock(F_SETLKW, F_WRLCK, 10, 10); /* waits until the child exits */
    printf("parent waits for the child's range: %s\n", result_text(rc));
    char buf[32] = {0};
    CHECK(read(res[0], buf, sizeof(buf) - 1) > 0);
    printf("the child closing the cycle: %s\n", buf);
    CHECK(waitpid(c, NULL, 0) == c);
    unlink(path);
    return 0;
}
