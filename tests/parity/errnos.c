/*
 * errnos.c - what a guest sees for calls hvrun does not implement and for
 * bad pointers: the errno values must be the same under both backends
 * (tests/parity/run.sh compares the bytes).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

static void show(const char *what, long rc)
{
    printf("%-28s %ld %s\n", what, rc, rc < 0 ? strerrorname_np(errno) : "-");
}

int main(void)
{
    show("syscall 999", syscall(999));
    show("kexec_load", syscall(SYS_kexec_load, 0, 0, NULL, 0));
    show("write from NULL", syscall(SYS_write, 1, NULL, 5));
    show("write from kernel half", syscall(SYS_write, 1, (void *)-4096L, 5));
    show("uname into NULL", syscall(SYS_uname, NULL));
    show("open bad path ptr", syscall(SYS_openat, -100, (void *)8, 0));
    show("bad fd", syscall(SYS_close, 12345));
    struct perf_event_attr pe = {.type = PERF_TYPE_HARDWARE,
                                 .size = sizeof(pe),
                                 .config = PERF_COUNT_HW_CPU_CYCLES};
    show("perf_event_open cycles",
         syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0));
    fflush(stdout);
    return 0;
}
