/*
 * kcmp.c - kcmp(2) as Linux answers it, printed as "equal" or "different"
 * (the order of two different objects is the kernel's obfuscated pointers'
 * natively, so only its consistency is printed: a pair compared both ways
 * gives 1 one way and 2 the other):
 *  - KCMP_FILE: dup, F_DUPFD and dup'd fds both added to an epoll set
 *    share one open file description; two opens of a file do not; a
 *    fork child's fds share the parent's; the index is an unsigned int;
 *    EBADF for a closed fd and a zombie's;
 *  - KCMP_VM, KCMP_FILES, KCMP_FS, KCMP_SIGHAND: the caller with itself,
 *    with a thread of its own (all shared), with a fork child (none
 *    shared), with a clone(CLONE_VM) child and a vfork child (the memory
 *    shared, not the fd table); a zombie's memory is gone (NULL: equal to
 *    another zombie's, not to a live one's), its signal handlers not;
 *  - KCMP_SYSVSEM: two fork children without an undo list are equal (two
 *    NULLs); one is made by pthread_create (CLONE_SYSVSEM) and by a
 *    semop with SEM_UNDO, even one that fails for want of the set;
 *    KCMP_IO of the caller with itself;
 *  - errors in Linux's order: ESRCH for pids no task has (0, -1,
 *    INT_MAX) before anything else, EPERM for a task another uid owns or
 *    one not dumpable (checked by a child that gives up root) before the
 *    type, EINVAL for a bad type.
 * Run natively and under hvrun, the output must match
 * (tests/run-guest-tests.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/kcmp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

static long kcmp(pid_t a, pid_t b, int type, unsigned long i1,
                 unsigned long i2)
{
    return syscall(SYS_kcmp, a, b, type, i1, i2);
}

static const char *verdict(long rc)
{
    if (rc < 0)
        return strerrorname_np(errno);
    return rc == 0 ? "equal" : rc == 1 || rc == 2 ? "different" : "other";
}

/* Both ways: the verdict, and whether the order is reversed. */
static void both_ways(const char *what, pid_t a, pid_t b, int type,
                      unsigned long i1, unsigned long i2)
{
    long ab = kcmp(a, b, type, i1, i2);
    const char *v = verdict(ab);
    long ba = kcmp(b, a, type, i2, i1);
    const char *consistent = ab == 0 ? (ba == 0 ? "" : " (not back)")
                             : ab > 0 ? (ab + ba == 3 ? " (reversed back)"
                                                      : " (not reversed)")
                                      : "";
    printf("%s: %s%s\n", what, v, consistent);
}

static const int shared_types[] = {KCMP_VM, KCMP_FILES, KCMP_FS,
                                   KCMP_SIGHAND};
static const char *const shared_names[] = {"VM", "FILES", "FS", "SIGHAND"};

static void each_type(const char *with, pid_t a, pid_t b)
{
    for (size_t i = 0; i < sizeof(shared_types) / sizeof(shared_types[0]);
         i++) {
        char what[96];
        snprintf(what, sizeof(what), "%s %s", with, shared_names[i]);
        both_ways(what, a, b, shared_types[i], 0, 0);
    }
}

static int file_a1, file_a2;

static void files(void)
{
    char path[] = "/tmp/hvrun-kcmp-XXXXXX";
    file_a1 = mkstemp(path);
    CHECK(file_a1 >= 0);
    file_a2 = open(path, O_RDONLY);
    CHECK(file_a2 >= 0);
    CHECK(unlink(path) == 0);
    pid_t me = getpid();
    int d = dup(file_a1), f = fcntl(file_a1, F_DUPFD_CLOEXEC, 20);
    CHECK(d >= 0 && f >= 0);
    both_ways("dup", me, me, KCMP_FILE, (unsigned long)file_a1,
              (unsigned long)d);
    both_ways("F_DUPFD", me, me, KCMP_FILE, (unsigned long)file_a1,
              (unsigned long)f);
    both_ways("two opens", me, me, KCMP_FILE, (unsigned long)file_a1,
              (unsigned long)file_a2);
    printf("index + 2^32: %s\n",
           verdict(kcmp(me, me, KCMP_FILE, (1UL << 32) + (unsigned)file_a1,
                        (unsigned long)d)));
    CHECK(close(f) == 0);
    printf("closed fd: %s\n",
           verdict(kcmp(me, me, KCMP_FILE, (unsigned long)file_a1,
                        (unsigned long)f)));
    printf("fd 9999: %s\n",
           verdict(kcmp(me, me, KCMP_FILE, 9999, (unsigned long)file_a1)));
    CHECK(close(d) == 0);

    /* two numbers of one pipe end in one epoll set */
    int pfd[2], ep = epoll_create1(0);
    CHECK(pipe(pfd) == 0 && ep >= 0);
    int pd = dup(pfd[0]);
    struct epoll_event ev = {.events = EPOLLIN};
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, pfd[0], &ev) == 0);
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, pd, &ev) == 0);
    both_ways("dup'd pipe ends in one epoll set", me, me, KCMP_FILE,
              (unsigned long)pfd[0], (unsigned long)pd);
    both_ways("a pipe's two ends", me, me, KCMP_FILE, (unsigned long)pfd[0],
              (unsigned long)pfd[1]);
    close(pd);
    close(pfd[0]);
    close(pfd[1]);
    close(ep);
}

static void self(void)
{
    pid_t me = getpid();
    each_type("itself", me, me);
    both_ways("itself SYSVSEM", me, me, KCMP_SYSVSEM, 0, 0);
    both_ways("itself IO", me, me, KCMP_IO, 0, 0);
}

/* ---- a thread of its own ---------------------------------------------- */

static int thread_ready[2], thread_done[2];
static pid_t thread_tid;

static void *thread_main(void *arg)
{
    (void)arg;
    thread_tid = (pid_t)syscall(SYS_gettid);
    char c = 1;
    CHECK(write(thread_ready[1], &c, 1) == 1);
    CHECK(read(thread_done[0], &c, 1) == 1); /* the main thread is done */
    return NULL;
}

static void thread(void)
{
    pthread_t t;
    CHECK(pipe(thread_ready) == 0 && pipe(thread_done) == 0);
    CHECK(pthread_create(&t, NULL, thread_main, NULL) == 0);
    char c;
    CHECK(read(thread_ready[0], &c, 1) == 1);
    pid_t me = getpid();
    each_type("its thread", me, thread_tid);
    both_ways("its thread SYSVSEM", me, thread_tid, KCMP_SYSVSEM, 0, 0);
    both_ways("its thread's fd", me, thread_tid, KCMP_FILE,
              (unsigned long)file_a1, (unsigned long)file_a1);
    CHECK(write(thread_done[1], &c, 1) == 1);
    CHECK(pthread_join(t, NULL) == 0);
    for (int i = 0; i < 2; i++) {
        close(thread_ready[i]);
        close(thread_done[i]);
    }
}

/* ---- fork children, then a zombie ------------------------------------- */

enum child_kind { CHILD_PLAIN, CHILD_UNDO, CHILD_UNDO_FAILED };

/* A fork child that does what kind says, tells ready, and exits when go
 * is closed. */
static pid_t waiting_child(const int go[2], int ready, enum child_kind kind,
                           int sem)
{
    pid_t c = fork();
    CHECK(c >= 0);
    if (c > 0)
        return c;
    close(go[1]);
    struct sembuf up = {.sem_num = 0, .sem_op = 1, .sem_flg = SEM_UNDO};
    if (kind == CHILD_UNDO)
        CHECK(semop(sem, &up, 1) == 0);
    if (kind == CHILD_UNDO_FAILED) /* no such set: the list is made first */
        CHECK(semop(INT_MAX, &up, 1) < 0 && errno == EINVAL);
    char x = 1;
    CHECK(write(ready, &x, 1) == 1);
    _exit(read(go[0], &x, 1) == 0 ? 0 : 1);
}

static void fork_children(void)
{
    int go[2], ready[2];
    CHECK(pipe(go) == 0 && pipe(ready) == 0);
    int sem = semget(IPC_PRIVATE, 1, 0600);
    CHECK(sem >= 0);
    pid_t plain = waiting_child(go, ready[1], CHILD_PLAIN, sem);
    pid_t plain2 = waiting_child(go, ready[1], CHILD_PLAIN, sem);
    pid_t undo = waiting_child(go, ready[1], CHILD_UNDO, sem);
    pid_t failed = waiting_child(go, ready[1], CHILD_UNDO_FAILED, sem);
    close(go[0]);
    char x[4];
    CHECK(read(ready[0], x, 1) == 1 && read(ready[0], x, 1) == 1 &&
          read(ready[0], x, 1) == 1 && read(ready[0], x, 1) == 1);
    pid_t me = getpid();
    each_type("fork child", me, plain);
    both_ways("fork child with itself VM", plain, plain, KCMP_VM, 0, 0);
    both_ways("fork child's copy of an fd", me, plain, KCMP_FILE,
              (unsigned long)file_a1, (unsigned long)file_a1);
    both_ways("fork child's copy of another open", me, plain, KCMP_FILE,
              (unsigned long)file_a1, (unsigned long)file_a2);
    both_ways("two fork children without undo lists, SYSVSEM", plain, plain2,
              KCMP_SYSVSEM, 0, 0);
    both_ways("fork child and the parent (pthread_create made one) SYSVSEM",
              me, plain, KCMP_SYSVSEM, 0, 0);
    both_ways("fork child after a SEM_UNDO semop, SYSVSEM", plain, undo,
              KCMP_SYSVSEM, 0, 0);
    both_ways("fork child after a failed SEM_UNDO semop, SYSVSEM", plain,
              failed, KCMP_SYSVSEM, 0, 0);
    CHECK(semctl(sem, 0, IPC_RMID) == 0);

    close(go[1]); /* they exit; plain stays a zombie (WNOWAIT) */
    siginfo_t si;
    CHECK(waitid(P_PID, (id_t)plain, &si, WEXITED | WNOWAIT) == 0);
    both_ways("zombie with itself VM", plain, plain, KCMP_VM, 0, 0);
    both_ways("zombie VM", me, plain, KCMP_VM, 0, 0);
    both_ways("zombie with itself SIGHAND", plain, plain, KCMP_SIGHAND, 0, 0);
    both_ways("zombie SIGHAND", me, plain, KCMP_SIGHAND, 0, 0);
    printf("zombie's fd: %s\n",
           verdict(kcmp(me, plain, KCMP_FILE, (unsigned long)file_a1,
                        (unsigned long)file_a1)));
    pid_t all[] = {plain, plain2, undo, failed};
    for (int i = 0; i < 4; i++) {
        int status;
        CHECK(waitpid(all[i], &status, 0) == all[i] && WIFEXITED(status) &&
              WEXITSTATUS(status) == 0);
    }
    printf("reaped: %s\n", verdict(kcmp(me, plain, KCMP_VM, 0, 0)));
    close(ready[0]);
    close(ready[1]);
}

/* ---- children on the caller's memory ----------------------------------- */

static int clone_go[2];

static int clone_main(void *arg)
{
    (void)arg;
    char x;
    /* raw calls only: this child runs on its parent's memory and stack */
    syscall(SYS_read, clone_go[0], &x, 1);
    syscall(SYS_exit, 0);
    return 0;
}

static long vfork_vm, vfork_files;

static void shared_memory_children(void)
{
    CHECK(pipe(clone_go) == 0);
    size_t stack_bytes = 256 * 1024;
    char *stack = malloc(stack_bytes);
    CHECK(stack != NULL);
    pid_t c = clone(clone_main, stack + stack_bytes, CLONE_VM | SIGCHLD, NULL);
    CHECK(c > 0);
    pid_t me = getpid();
    each_type("clone(CLONE_VM) child", me, c);
    CHECK(write(clone_go[1], "x", 1) == 1);
    int status;
    CHECK(waitpid(c, &status, 0) == c && WIFEXITED(status));
    free(stack);
    close(clone_go[0]);
    close(clone_go[1]);

    pid_t v = vfork();
    CHECK(v >= 0);
    if (v == 0) { /* the parent waits; the memory is its */
        pid_t self = (pid_t)syscall(SYS_getpid);
        pid_t parent = (pid_t)syscall(SYS_getppid);
        vfork_vm = kcmp(parent, self, KCMP_VM, 0, 0);
        vfork_files = kcmp(parent, self, KCMP_FILES, 0, 0);
        _exit(0);
    }
    CHECK(waitpid(v, &status, 0) == v && WIFEXITED(status));
    printf("vfork child VM: %s\n", verdict(vfork_vm));
    printf("vfork child FILES: %s\n", verdict(vfork_files));
}

/* ---- errors ------------------------------------------------------------- */

static void bad_ids_and_types(void)
{
    pid_t me = getpid();
    printf("pid INT_MAX: %s\n", verdict(kcmp(INT_MAX, me, KCMP_VM, 0, 0)));
    printf("second pid INT_MAX: %s\n",
           verdict(kcmp(me, INT_MAX, KCMP_VM, 0, 0)));
    printf("pid 0: %s\n", verdict(kcmp(0, me, KCMP_VM, 0, 0)));
    printf("pid -1: %s\n", verdict(kcmp(me, -1, KCMP_VM, 0, 0)));
    printf("pid INT_MAX, bad type: %s\n",
           verdict(kcmp(INT_MAX, me, 99, 0, 0)));
    printf("type 8: %s\n", verdict(kcmp(me, me, KCMP_TYPES, 0, 0)));
    printf("type -1: %s\n", verdict(kcmp(me, me, -1, 0, 0)));
}

/* In a child that gave up root: the root parent is another uid's, and a
 * grandchild of its own uid that is not dumpable may not be looked at. */
static void unprivileged_child(pid_t root_parent)
{
    pid_t me = getpid();
    printf("unprivileged, the root parent: %s\n",
           verdict(kcmp(root_parent, me, KCMP_VM, 0, 0)));
    printf("unprivileged, the root parent, bad type: %s\n",
           verdict(kcmp(root_parent, me, 99, 0, 0)));
    printf("unprivileged, the root parent and pid INT_MAX: %s\n",
           verdict(kcmp(root_parent, INT_MAX, KCMP_VM, 0, 0)));
    printf("unprivileged, itself: %s\n", verdict(kcmp(me, me, KCMP_VM, 0, 0)));
    int ready[2], done[2];
    CHECK(pipe(ready) == 0 && pipe(done) == 0);
    pid_t g = fork();
    CHECK(g >= 0);
    if (g == 0) {
        char x = 1;
        close(done[1]);
        CHECK(prctl(PR_SET_DUMPABLE, 0) == 0);
        CHECK(write(ready[1], &x, 1) == 1);
        _exit(read(done[0], &x, 1) == 0 ? 0 : 1);
    }
    char x;
    close(done[0]);
    CHECK(read(ready[0], &x, 1) == 1);
    printf("unprivileged, a child not dumpable: %s\n",
           verdict(kcmp(me, g, KCMP_VM, 0, 0)));
    close(done[1]);
    int status;
    CHECK(waitpid(g, &status, 0) == g && WIFEXITED(status) &&
          WEXITSTATUS(status) == 0);
}

static void permissions(void)
{
    if (getuid() != 0) {
        printf("permissions: not root, not checked\n");
        return;
    }
    fflush(stdout);
    pid_t root_parent = getpid();
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        CHECK(setresgid(65534, 65534, 65534) == 0);
        CHECK(setresuid(65534, 65534, 65534) == 0);
        unprivileged_child(root_parent);
        fflush(stdout);
        _exit(0);
    }
    int status;
    CHECK(waitpid(c, &status, 0) == c && WIFEXITED(status) &&
          WEXITSTATUS(status) == 0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    files();
    self();
    thread();
    fork_children();
    shared_memory_children();
    bad_ids_and_types();
    permissions();
    return 0;
}
