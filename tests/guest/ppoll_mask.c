/* ppoll_mask: the ppoll signal mask unblocks a pending signal for the
 * wait only: the handler runs, ppoll fails with EINTR (SA_RESTART or not)
 * and the caller's mask is back afterwards. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/wait.h>
static volatile int got;
static void h(int s){(void)s; got++;}
int main(void){ signal(SIGUSR1,h); sigset_t b, empty, cur; sigemptyset(&b); sigaddset(&b,SIGUSR1); sigprocmask(SIG_BLOCK,&b,0); sigemptyset(&empty);
 int fd[2]; pipe(fd); pid_t c=fork(); if(!c){ kill(getppid(),SIGUSR1); _exit(0);} waitpid(c,0,0);
 struct pollfd p={fd[0],POLLIN,0}; int r=ppoll(&p,1,NULL,&empty); printf("ppoll r=%d errno=EINTR:%d got=%d\n", r, errno==EINTR, got);
 sigprocmask(SIG_BLOCK,0,&cur); printf("usr1 still blocked: %d\n", sigismember(&cur,SIGUSR1)); return 0; }
