/*
 * clone_share: what a process made with clone(CLONE_FS) or
 * clone(CLONE_SYSVSEM) (no CLONE_THREAD) shares with its parent (LTP
 * kcmp03), compared with a native run:
 *   CLONE_FS:      the child's chdir and umask are its parent's too, kcmp
 *                  KCMP_FS says equal; a fork child's are its own; after
 *                  unshare(CLONE_FS) a child's are its own again
 *   CLONE_SYSVSEM: one SEM_UNDO list: the child's SEM_UNDO adjustment is
 *                  not undone at its exit while the parent holds the list,
 *                  and is when the parent lets it go (unshare); kcmp
 *                  KCMP_SYSVSEM says equal, for a fork child different
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/kcmp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static int go[2], done[2];

static long kcmp(pid_t a, pid_t b, int type)
{
    return syscall(SYS_kcmp, a, b, type, 0, 0);
}

/* A child of clone(flags) that runs fn, then waits for the parent's word
 * before it exits (so kcmp sees it alive). */
static pid_t spawn(unsigned long flags, void (*fn)(void))
{
    fflush(stdout);
    long pid = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
    CHECK(pid >= 0);
    if (pid == 0) {
        char c;
        fn();
        fflush(stdout);
        CHECK(write(done[1], "d", 1) == 1);
        CHECK(read(go[0], &c, 1) == 1);
        _exit(0);
    }
    char c;
    CHECK(read(done[0], &c, 1) == 1);
    return (pid_t)pid;
}

static void finish(pid_t pid)
{
    int st;
    CHECK(write(go[1], "g", 1) == 1);
    CHECK(waitpid(pid, &st, 0) == pid);
}

static void to_root(void)
{
    CHECK(chdir("/") == 0);
    umask(077);
}

static void unshare_then_to_proc(void)
{
    CHECK(unshare(CLONE_FS) == 0);
    CHECK(chdir("/proc") == 0);
    umask(0);
}

static void report_fs(const char *what)
{
    char cwd[4096];
    mode_t m = umask(0);
    umask(m);
    printf("%s: cwd %s, umask %03o\n", what,
           getcwd(cwd, sizeof(cwd)) ? cwd : "?", (unsigned)m);
}

static int semid;

static void sem_up_undo(void)
{
    struct sembuf op = {0, 1, SEM_UNDO};
    CHECK(semop(semid, &op, 1) == 0);
}

static void fs_cases(void)
{
    char start[4096];
    CHECK(getcwd(start, sizeof(start)));
    umask(022);
    pid_t c = spawn(0, to_root);
    printf("fork: kcmp FS %ld\n", kcmp(getpid(), c, KCMP_FS) != 0);
    finish(c);
    printf("fork child changed: %s\n",
           strcmp(start, "/") && chdir(".") == 0 ? "nothing" : "?");
    c = spawn(CLONE_FS, to_root);
    printf("CLONE_FS: kcmp FS %ld\n", kcmp(getpid(), c, KCMP_FS));
    finish(c);
    report_fs("after a CLONE_FS child's chdir");
    c = spawn(CLONE_FS, unshare_then_to_proc);
    printf("CLONE_FS, unshared: kcmp FS %ld\n",
           kcmp(getpid(), c, KCMP_FS) != 0);
    finish(c);
    report_fs("after an unshared child's chdir");
    CHECK(chdir(start) == 0);
}

static void sem_cases(void)
{
    semid = semget(IPC_PRIVATE, 1, 0600);
    CHECK(semid >= 0);
    pid_t c = spawn(CLONE_SYSVSEM, sem_up_undo);
    printf("CLONE_SYSVSEM: kcmp SYSVSEM %ld\n",
           kcmp(getpid(), c, KCMP_SYSVSEM));
    finish(c);
    printf("after the child's exit: value %d\n", semctl(semid, 0, GETVAL));
    c = spawn(0, sem_up_undo);
    printf("fork: kcmp SYSVSEM %ld\n", kcmp(getpid(), c, KCMP_SYSVSEM) != 0);
    finish(c);
    printf("after a fork child's exit: value %d\n",
           semctl(semid, 0, GETVAL));
    CHECK(unshare(CLONE_SYSVSEM) == 0);
    printf("after the parent let the list go: value %d\n",
           semctl(semid, 0, GETVAL));
    semctl(semid, 0, IPC_RMID);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    CHECK(pipe(go) == 0 && pipe(done) == 0);
    fs_cases();
    sem_cases();
    return 0;
}
