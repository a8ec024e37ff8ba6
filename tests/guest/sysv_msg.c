/*
 * sysv_msg.c - System V message queues as Linux gives them: messages of
 * several types between a parent and a child (a receiver that waits),
 * selection by type (0, a type, MSG_EXCEPT, the lowest up to a bound),
 * MSG_NOERROR and E2BIG, MSG_COPY (LTP msgrcv07), IPC_NOWAIT (ENOMSG, and
 * EAGAIN on a full queue),
 * IPC_STAT counts, a waiter woken by EIDRM. Run natively and under hvrun,
 * the output must match (tests/run-guest-tests.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/wait.h>
#include <unistd.h>

struct message {
    long type;
    char text[64];
};

static const char *err(long rc)
{
    return rc < 0 ? strerrorname_np(errno) : "ok";
}

static int send(int q, long type, const char *text, int flags)
{
    struct message m = {.type = type};
    snprintf(m.text, sizeof(m.text), "%s", text);
    return msgsnd(q, &m, strlen(text) + 1, flags);
}

static void receive(int q, long type, int flags, size_t cap)
{
    struct message m;
    memset(&m, 0, sizeof(m));
    long n = msgrcv(q, &m, cap, type, flags);
    if (n < 0)
        printf("  recv(%ld): %s\n", type, strerrorname_np(errno));
    else
        printf("  recv(%ld): type %ld, %ld bytes, '%.*s'\n", type, m.type, n,
               (int)n, m.text);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int q = msgget(IPC_PRIVATE, 0600);
    pid_t pid = fork();
    if (pid == 0) {
        struct message m;
        long n = msgrcv(q, &m, sizeof(m.text), 7, 0); /* waits */
        printf("child: got type %ld '%s' (%ld bytes)\n", m.type, m.text, n);
        send(q, 8, "reply", 0);
        _exit(0);
    }
    send(q, 7, "hello child", 0);
    receive(q, 8, 0, sizeof(((struct message *)0)->text));
    waitpid(pid, NULL, 0);

    send(q, 3, "three", 0);
    send(q, 1, "one", 0);
    send(q, 2, "two", 0);
    send(q, 5, "a longer message", 0);
    struct msqid_ds ds;
    msgctl(q, IPC_STAT, &ds);
    printf("queued: %lu messages, %lu bytes\n", (unsigned long)ds.msg_qnum,
           (unsigned long)ds.__msg_cbytes);
    printf("MSG_COPY (the message of an index, left queued):\n");
    receive(q, 0, MSG_COPY | IPC_NOWAIT, 64);
    receive(q, 2, MSG_COPY | IPC_NOWAIT, 64);
    receive(q, 4, MSG_COPY | IPC_NOWAIT, 64);
    receive(q, 3, MSG_COPY | IPC_NOWAIT, 4);
    receive(q, 3, MSG_COPY | IPC_NOWAIT | MSG_NOERROR, 4);
    receive(q, 0, MSG_COPY, 64);
    receive(q, 0, MSG_COPY | IPC_NOWAIT | MSG_EXCEPT, 64);
    msgctl(q, IPC_STAT, &ds);
    printf("still queued: %lu messages\n", (unsigned long)ds.msg_qnum);
    printf("selection:\n");
    receive(q, 5, 0, 4);
    receive(q, 5, MSG_NOERROR, 4);
    receive(q, 2, MSG_EXCEPT, 64);
    receive(q, -2, 0, 64);
    receive(q, 0, 0, 64);
    receive(q, 9, IPC_NOWAIT, 64);
    printf("bad type 0: %s", err(send(q, 0, "x", 0)));
    printf(", too big: %s\n", err(msgsnd(q, &ds, 9000, 0)));
    char big[8000];
    memset(big, 'b', sizeof(big));
    struct {
        long type;
        char text[8000];
    } bm = {.type = 1};
    memcpy(bm.text, big, sizeof(big));
    int r1 = msgsnd(q, &bm, sizeof(bm.text), IPC_NOWAIT);
    int r2 = msgsnd(q, &bm, sizeof(bm.text), IPC_NOWAIT);
    int r3 = msgsnd(q, &bm, sizeof(bm.text), IPC_NOWAIT);
    printf("full queue: %s %s %s\n", err(r1), err(r2), r3 < 0 ? err(r3) : "ok");
    msgctl(q, IPC_RMID, NULL);

    int q2 = msgget(IPC_PRIVATE, 0600);
    pid = fork();
    if (pid == 0) {
        struct message m;
        long n = msgrcv(q2, &m, sizeof(m.text), 0, 0);
        _exit(n < 0 && errno == EIDRM ? 42 : 1);
    }
    usleep(100000); /* the child is waiting in msgrcv by then */
    msgctl(q2, IPC_RMID, NULL);
    int st;
    waitpid(pid, &st, 0);
    printf("removed while waiting: EIDRM %d\n", WEXITSTATUS(st) == 42);
    return 0;
}
