/*
 * shm_ipc_info.c - shmctl(IPC_INFO) says what /proc/sys/kernel/shmmax,
 * shmmni and shmall say (Linux's defaults on 64 bits: SHMMAX and SHMALL
 * are ULONG_MAX - 2^24, SHMMNI 4096), and shmmin is 1 (LTP's shmctl03).
 * hvrun said 2^47 - 2^24 and that over the page size.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/ipc.h>
#include <sys/shm.h>

static unsigned long proc_value(const char *name)
{
    char path[64];
    unsigned long v = 0;
    snprintf(path, sizeof(path), "/proc/sys/kernel/%s", name);
    FILE *f = fopen(path, "r");
    if (!f || fscanf(f, "%lu", &v) != 1)
        v = 0;
    if (f)
        fclose(f);
    return v;
}

int main(void)
{
    struct shminfo info;
    if (shmctl(0, IPC_INFO, (struct shmid_ds *)(void *)&info) < 0) {
        perror("shmctl");
        return 1;
    }
    printf("shmmin %lu\n", info.shmmin);
    printf("shmmax %lu (as /proc: %d)\n", info.shmmax,
           info.shmmax == proc_value("shmmax"));
    printf("shmmni %lu (as /proc: %d)\n", info.shmmni,
           info.shmmni == proc_value("shmmni"));
    printf("shmall %lu (as /proc: %d)\n", info.shmall,
           info.shmall == proc_value("shmall"));
    return 0;
}
