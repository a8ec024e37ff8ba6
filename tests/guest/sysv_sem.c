/*
 * sysv_sem.c - System V semaphores as Linux gives them: a producer and a
 * consumer process over a shared memory slot and two semaphores, a waiter
 * counted by GETNCNT and woken by EIDRM when the set is removed, SEM_UNDO
 * applied at exit, IPC_NOWAIT and a semtimedop timeout (EAGAIN), values
 * (SETALL, GETALL, SETVAL range), bad arguments. Run natively and under
 * hvrun, the output must match (tests/run-guest-tests.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

union semun {
    int val;
    struct semid_ds *buf;
    unsigned short *array;
};

static const char *err(long rc)
{
    return rc < 0 ? strerrorname_np(errno) : "ok";
}

static int op(int id, int num, int delta, int flags)
{
    struct sembuf b = {(unsigned short)num, (short)delta, (short)flags};
    return semop(id, &b, 1);
}

static void producer_consumer(void)
{
    int sem = semget(IPC_PRIVATE, 2, 0600); /* 0: items, 1: free slots */
    int shm = shmget(IPC_PRIVATE, 4096, 0600);
    int *slot = shmat(shm, NULL, 0);
    unsigned short init[2] = {0, 1};
    semctl(sem, 0, SETALL, (union semun){.array = init});
    pid_t pid = fork();
    if (pid == 0) {
        int sum = 0;
        for (int i = 0; i < 5; i++) {
            op(sem, 0, -1, 0);
            printf("consumer: got %d\n", *slot);
            sum += *slot;
            op(sem, 1, +1, 0);
        }
        _exit(sum);
    }
    for (int i = 1; i <= 5; i++) {
        op(sem, 1, -1, 0);
        *slot = i * 10;
        op(sem, 0, +1, 0);
    }
    int st;
    waitpid(pid, &st, 0);
    unsigned short now[2];
    semctl(sem, 0, GETALL, (union semun){.array = now});
    printf("producer: consumer's sum %d, values now %u %u\n",
           WEXITSTATUS(st), now[0], now[1]);
    shmdt(slot);
    shmctl(shm, IPC_RMID, NULL);
    semctl(sem, 0, IPC_RMID);
}

static void removed_while_waiting(void)
{
    int sem = semget(IPC_PRIVATE, 1, 0600);
    pid_t pid = fork();
    if (pid == 0) {
        int rc = op(sem, 0, -1, 0);
        _exit(rc < 0 && errno == EIDRM ? 42 : 1);
    }
    int n = 0;
    for (int tries = 0; tries < 100000 && n == 0; tries++) {
        n = semctl(sem, 0, GETNCNT);
        if (n == 0)
            sched_yield();
    }
    printf("waiting: GETNCNT %d", n);
    printf(", GETZCNT %d\n", semctl(sem, 0, GETZCNT));
    semctl(sem, 0, IPC_RMID);
    int st;
    waitpid(pid, &st, 0);
    printf("removed: the waiter's semop said EIDRM %d\n",
           WEXITSTATUS(st) == 42);
}

static void undo_and_waits(void)
{
    int sem = semget(IPC_PRIVATE, 1, 0600);
    pid_t pid = fork();
    if (pid == 0) {
        op(sem, 0, +3, SEM_UNDO);
        op(sem, 0, +1, 0);
        printf("child: value %d before exit\n", semctl(sem, 0, GETVAL));
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    printf("after exit: value %d (SEM_UNDO gave back 3)\n",
           semctl(sem, 0, GETVAL));
    printf("IPC_NOWAIT on 1 for -2: %s\n", err(op(sem, 0, -2, IPC_NOWAIT)));
    struct sembuf b = {0, -2, 0};
    struct timespec ts = {0, 20000000};
    printf("semtimedop 20 ms: %s\n", err(semtimedop(sem, &b, 1, &ts)));
    struct sembuf two[2] = {{0, -1, 0}, {0, -1, IPC_NOWAIT}};
    printf("two ops, the second cannot: %s", err(semop(sem, two, 2)));
    printf(", value still %d\n", semctl(sem, 0, GETVAL));
    printf("SETVAL 40000: %s",
           err(semctl(sem, 0, SETVAL, (union semun){.val = 40000})));
    printf(", SETVAL 7: %s",
           err(semctl(sem, 0, SETVAL, (union semun){.val = 7})));
    printf(", GETVAL %d", semctl(sem, 0, GETVAL));
    printf(", GETPID mine %d\n", semctl(sem, 0, GETPID) == getpid());
    printf("bad: sem_num 5 %s", err(op(sem, 5, 1, 0)));
    printf(", no ops %s", err(semop(sem, &b, 0)));
    printf(", nsems 0 %s\n", err(semget(IPC_PRIVATE, 0, 0600)));
    semctl(sem, 0, IPC_RMID);
    printf("after IPC_RMID: %s\n", err(op(sem, 0, 1, 0)));
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    producer_consumer();
    removed_while_waiting();
    undo_and_waits();
    return 0;
}
