/*
 * vfork_chain_unwind.c - a chain of 1000 vforks (each child vforks again,
 * as stress-ng's vforkmany does) that comes apart by itself: the deepest
 * link exits, and each parent, released, exits after it.
 *
 * Under hvrun each scheduling decision looked up every waiting link's
 * child by a look at every process (proxy_world_find), and each exit
 * walked up every ancestor the same way looking for a subreaper: a chain
 * of n links cost O(n^3). vforkmany's chain of ~3000 did not come apart
 * in 300 s (a chain of 2000 like this one: 14.8 s, 7.3 s after). Now a
 * pid is found by a binary search and the walk is made only once a
 * subreaper exists. A second chain, below a subreaper, checks that the
 * orphan its deepest link leaves is still reparented to the subreaper
 * (the walk's answer).
 *
 * Run natively and under hvrun, the output must match.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define CHAIN_DEPTH 1000
#define SUBREAPER_DEPTH 50

/* Shared with every link (MAP_SHARED, so also across the fork below). */
struct chain_record {
    int deepest;
    int subreaper_pid; /* the orphan's parent to be */
};

static struct chain_record *rec;

/* Each link vforks the next one and exits once it is released (its
 * child exited); the deepest, at `limit`, exits at once. */
static void chain(int limit)
{
    for (int depth = 1;; depth++) {
        rec->deepest = depth;
        if (depth == limit)
            _exit(0);
        pid_t pid = vfork();
        if (pid < 0)
            _exit(2);
        if (pid > 0)
            _exit(0);
    }
}

/* A chain whose first link was started by a subreaper, and an orphan
 * forked at its deepest link: when the chain has come apart, the
 * orphan's parent is the subreaper (getppid), found by the walk up the
 * ancestors at each link's exit. */
static void subreaper_chain(void)
{
    CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
    int pfd[2];
    CHECK(pipe(pfd) == 0);
    pid_t first = fork();
    CHECK(first >= 0);
    if (first == 0) {
        close(pfd[0]);
        for (int depth = 1;; depth++) {
            if (depth == SUBREAPER_DEPTH) {
                pid_t orphan = fork(); /* a real fork: it outlives the link */
                if (orphan == 0) {
                    /* wait until every link exited, then report the parent */
                    while (getppid() != rec->subreaper_pid)
                        usleep(1000);
                    char ok = 1;
                    (void)!write(pfd[1], &ok, 1);
                    _exit(0);
                }
                _exit(orphan > 0 ? 0 : 2);
            }
            pid_t pid = vfork();
            if (pid < 0)
                _exit(2);
            if (pid > 0)
                _exit(0);
        }
    }
    close(pfd[1]);
    rec->subreaper_pid = getpid();
    int st;
    CHECK(waitpid(first, &st, 0) == first);
    char ok = 0;
    CHECK(read(pfd[0], &ok, 1) == 1);
    /* the orphan is this process's child now: reap it */
    CHECK(wait(&st) > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    printf("subreaper chain of %d: the orphan's parent became the "
           "subreaper: %s\n",
           SUBREAPER_DEPTH, ok ? "yes" : "no");
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    rec = mmap(NULL, sizeof(*rec), PROT_READ | PROT_WRITE,
               MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(rec != MAP_FAILED);
    pid_t first = fork();
    CHECK(first >= 0);
    if (first == 0)
        chain(CHAIN_DEPTH);
    int st;
    CHECK(waitpid(first, &st, 0) == first);
    printf("chain of %d vforks: deepest %d, first link exited %d\n",
           CHAIN_DEPTH, rec->deepest, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    subreaper_chain();
    return 0;
}
