/* gdb_ckpt_hold.c MODE FILE [FIFO] - holds one thing a gdb checkpoint
 * cannot copy, or one it must not share with the run, at mark() (where
 * gdb/checkpoint-hold takes `monitor checkpoint`):
 *   flock, plock  a lock on FILE (flock; fcntl F_SETLK): refused, a
 *                 restored copy would not hold it
 *   fifo, memfd, pidfd  a named FIFO (FIFO), a memfd, a pidfd: refused
 *   shm-attached  a System V segment attached: refused
 *   close         FILE opened before mark(), flock'd and closed after it:
 *                 the lock goes with the close (the checkpoint holds no
 *                 description of the run's), so a new open's
 *                 LOCK_EX|LOCK_NB gets it
 *   shm           a segment written "before" and detached, then 200
 *                 calls (a checkpoint there), then read into `seen` and
 *                 written "after" before mark2(): restored, the segment
 *                 holds "before" again (its memory copied, not shared)
 * Prints what it saw; the same as without gdb. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

char seen[16];

void __attribute__((noinline)) mark(void) { (void)syscall(SYS_getppid); /* an event; glibc's getppid() is none */ }
void __attribute__((noinline)) mark2(void) { (void)syscall(SYS_getppid); /* an event; glibc's getppid() is none */ }

static int shm_write(int id, const char *text)
{
    char *at = shmat(id, NULL, 0);
    if (at == (void *)-1)
        return -1;
    memcpy(seen, at, sizeof(seen) - 1);
    strcpy(at, text);
    return shmdt(at);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    const char *mode = argv[1];
    int fd = open(argv[2], O_RDONLY);
    if (fd < 0)
        return 3;
    if (!strcmp(mode, "flock")) {
        flock(fd, LOCK_EX);
    } else if (!strcmp(mode, "plock")) {
        struct flock l = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
        fcntl(fd, F_SETLK, &l);
    } else if (!strcmp(mode, "fifo")) {
        if (argc < 4 || open(argv[3], O_RDONLY | O_NONBLOCK) < 0)
            return 4;
    } else if (!strcmp(mode, "memfd")) {
        syscall(SYS_memfd_create, "held", 0);
    } else if (!strcmp(mode, "pidfd")) {
        syscall(SYS_pidfd_open, getpid(), 0);
    }
    int id = -1;
    if (!strncmp(mode, "shm", 3)) {
        id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
        if (id < 0 || shm_write(id, "before") < 0)
            return 5;
        for (int i = 0; i < 200; i++) /* (where a goto stops, detached) */
            (void)syscall(SYS_getppid); /* an event; glibc's getppid() is none */
        if (!strcmp(mode, "shm-attached") && shmat(id, NULL, SHM_RDONLY) ==
                                                 (void *)-1)
            return 6;
    }
    mark();
    if (!strcmp(mode, "close")) {
        flock(fd, LOCK_EX);
        close(fd);
        int again = open(argv[2], O_RDONLY);
        printf("flock after close: %d\n", flock(again, LOCK_EX | LOCK_NB));
    } else if (!strcmp(mode, "shm")) {
        if (shm_write(id, "after") < 0)
            return 7;
        mark2();
        printf("the segment held '%s'\n", seen);
    }
    if (id >= 0)
        shmctl(id, IPC_RMID, NULL);
    printf("%s: done\n", mode);
    return 0;
}
