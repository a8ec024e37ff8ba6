/*
 * sysv_shm.c - System V shared memory between processes as Linux gives
 * it: a segment a child writes through its inherited attachment and the
 * parent reads, one attached after fork by key, the attach counts
 * (fork, shmdt, execve and exit detach), IPC_STAT, IPC_CREAT|IPC_EXCL,
 * IPC_RMID (the key goes private; freed at the last detach), bad
 * arguments. Run natively and under hvrun, the output must match
 * (tests/run-guest-tests.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *err(long rc)
{
    return rc < 0 ? strerrorname_np(errno) : "ok";
}

static int nattch(int id)
{
    struct shmid_ds ds;
    return shmctl(id, IPC_STAT, &ds) < 0 ? -1 : (int)ds.shm_nattch;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* A key of the test's own, so that a native run's other segments do
     * not matter; removed first in case an earlier run left it. */
    key_t key = 0x68767275; /* "hvru" */
    int old = shmget(key, 0, 0);
    if (old >= 0)
        shmctl(old, IPC_RMID, NULL);
    int id = shmget(key, 10000, IPC_CREAT | IPC_EXCL | 0600);
    printf("create: %s", err(id));
    printf(", again with IPC_EXCL: %s",
           err(shmget(key, 100, IPC_CREAT | IPC_EXCL | 0600)));
    printf(", bigger: %s\n", err(shmget(key, 20000, 0600)));
    /* SHM_LOCK and SHM_UNLOCK: the SHM_LOCKED bit IPC_STAT shows */
    struct shmid_ds lk = {0};
    int lock_rc = shmctl(id, SHM_LOCK, NULL);
    shmctl(id, IPC_STAT, &lk);
    printf("SHM_LOCK: %s, locked %d", err(lock_rc),
           (lk.shm_perm.mode & SHM_LOCKED) != 0);
    lock_rc = shmctl(id, SHM_UNLOCK, NULL);
    shmctl(id, IPC_STAT, &lk);
    printf(", SHM_UNLOCK: %s, locked %d\n", err(lock_rc),
           (lk.shm_perm.mode & SHM_LOCKED) != 0);
    printf("same key finds it: %d\n", shmget(key, 0, 0) == id);
    char *mem = shmat(id, NULL, 0);
    printf("attach: %s, nattch %d\n", mem == (void *)-1 ? err(-1) : "ok",
           nattch(id));
    struct shmid_ds ds;
    shmctl(id, IPC_STAT, &ds);
    printf("stat: size %zu, mode %o, creator is me %d\n", (size_t)ds.shm_segsz,
           ds.shm_perm.mode & 0777, ds.shm_cpid == getpid());
    pid_t pid = fork();
    if (pid == 0) {
        printf("child: nattch %d\n", nattch(id));
        strcpy(mem, "written by the child");
        mem[9999] = 'z';
        char *again = shmat(id, NULL, SHM_RDONLY);
        printf("child: second attach sees it: %d, nattch %d\n",
               again != (void *)-1 && again[9999] == 'z', nattch(id));
        shmdt(again);
        execl("/bin/true", "true", (char *)NULL);
        _exit(99);
    }
    waitpid(pid, NULL, 0);
    printf("parent reads: %s, last byte %c, nattch %d\n", mem, mem[9999],
           nattch(id));
    const char *dt = err(shmdt(mem));
    int n = nattch(id);
    printf("detach: %s, nattch %d", dt, n);
    printf(", detach again: %s\n", err(shmdt(mem)));
    char *m2 = shmat(id, NULL, 0);
    printf("reattach keeps the bytes: %s\n", m2 != (void *)-1 ? m2 : "?");
    printf("rmid: %s", err(shmctl(id, IPC_RMID, NULL)));
    printf(", key now private: %s", err(shmget(key, 0, 0)));
    shmctl(id, IPC_STAT, &ds);
    printf(", marked %d\n", (ds.shm_perm.mode & SHM_DEST) != 0);
    shmdt(m2);
    printf("after the last detach: stat %s\n", err(shmctl(id, IPC_STAT, &ds)));
    int priv = shmget(IPC_PRIVATE, 4096, 0600);
    printf("bad: shmat of no id %s",
           err((long)shmat(-1, NULL, 0) == -1 ? -1 : 0));
    printf(", unaligned %s",
           err((long)shmat(priv, (void *)0x12345, 0) == -1 ? -1 : 0));
    printf(", zero size %s", err(shmget(IPC_PRIVATE, 0, 0600)));
    printf(", no key %s\n", err(shmget(key + 1, 10, 0600)));
    shmctl(priv, IPC_RMID, NULL);
    return 0;
}
