/*
 * sysv_stat_any.c - SHM_STAT_ANY, MSG_STAT_ANY and SEM_STAT_ANY read an
 * object's data by index whatever its mode, as /proc/sysvipc shows it to
 * anyone; SHM_STAT, MSG_STAT, SEM_STAT and IPC_STAT need read permission
 * (EACCES). hvrun checked read permission for SHM_STAT_ANY too (LTP's
 * shmctl04). Objects of mode 0600 made as root, read as "nobody" (euid
 * 65534); other objects on the host are skipped by id.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <unistd.h>

#include "guest_check.h"

#ifndef SHM_STAT_ANY
#define SHM_STAT_ANY 15
#endif
#ifndef MSG_STAT_ANY
#define MSG_STAT_ANY 13
#endif
#ifndef SEM_STAT_ANY
#define SEM_STAT_ANY 20
#endif

/* The index whose *_STAT_ANY names id, or -1 (the highest index in use
 * is what *_INFO returns). */
static int shm_index_of(int id)
{
    struct shm_info info;
    struct shmid_ds ds;
    int top = shmctl(0, SHM_INFO, (struct shmid_ds *)&info);
    CHECK(top >= 0);
    for (int i = 0; i <= top; i++)
        if (shmctl(i, SHM_STAT_ANY, &ds) == id)
            return i;
    return -1;
}

static int msg_index_of(int id)
{
    struct msginfo info;
    struct msqid_ds ds;
    int top = msgctl(0, MSG_INFO, (struct msqid_ds *)&info);
    CHECK(top >= 0);
    for (int i = 0; i <= top; i++)
        if (msgctl(i, MSG_STAT_ANY, &ds) == id)
            return i;
    return -1;
}

union semun {
    int val;
    struct semid_ds *buf;
    unsigned short *array;
    struct seminfo *__buf;
};

static int sem_index_of(int id)
{
    struct seminfo info;
    struct semid_ds ds;
    union semun arg = {.__buf = &info};
    int top = semctl(0, 0, SEM_INFO, arg);
    CHECK(top >= 0);
    arg.buf = &ds;
    for (int i = 0; i <= top; i++)
        if (semctl(i, 0, SEM_STAT_ANY, arg) == id)
            return i;
    return -1;
}

int main(void)
{
    if (geteuid() != 0) {
        printf("not root: nothing to check\n");
        return 0;
    }
    int shm = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
    int msg = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
    int sem = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
    CHECK(shm >= 0 && msg >= 0 && sem >= 0);
    CHECK(seteuid(65534) == 0);

    struct shmid_ds sds;
    int si = shm_index_of(shm);
    printf("shm: found by SHM_STAT_ANY: %d\n", si >= 0);
    printf("shm: SHM_STAT: %s\n",
           si >= 0 ? result_text(shmctl(si, SHM_STAT, &sds)) : "-");
    printf("shm: IPC_STAT: %s\n", result_text(shmctl(shm, IPC_STAT, &sds)));

    struct msqid_ds mds;
    int mi = msg_index_of(msg);
    printf("msg: found by MSG_STAT_ANY: %d\n", mi >= 0);
    printf("msg: MSG_STAT: %s\n",
           mi >= 0 ? result_text(msgctl(mi, MSG_STAT, &mds)) : "-");
    printf("msg: IPC_STAT: %s\n", result_text(msgctl(msg, IPC_STAT, &mds)));

    struct semid_ds semds;
    union semun arg = {.buf = &semds};
    int ei = sem_index_of(sem);
    printf("sem: found by SEM_STAT_ANY: %d\n", ei >= 0);
    printf("sem: SEM_STAT: %s\n",
           ei >= 0 ? result_text(semctl(ei, 0, SEM_STAT, arg)) : "-");
    printf("sem: IPC_STAT: %s\n",
           result_text(semctl(sem, 0, IPC_STAT, arg)));

    CHECK(seteuid(0) == 0);
    CHECK(shmctl(shm, IPC_RMID, NULL) == 0 && msgctl(msg, IPC_RMID, NULL) == 0 &&
          semctl(sem, 0, IPC_RMID) == 0);
    return 0;
}
