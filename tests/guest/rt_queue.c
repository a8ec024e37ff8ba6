/* rt_queue: real-time signals queue every instance, in order, with their
 * values (sigqueue three times, sigwaitinfo three times). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
int main(void){ sigset_t s; sigemptyset(&s); sigaddset(&s, SIGRTMIN); sigprocmask(SIG_BLOCK,&s,0);
 for (int i=0;i<3;i++){ union sigval v={.sival_int=i}; sigqueue(getpid(), SIGRTMIN, v);} 
 for (int i=0;i<3;i++){ siginfo_t si; sigwaitinfo(&s,&si); printf("got %d\n", si.si_value.sival_int);} 
 struct timespec z={0,0}; siginfo_t si; printf("more: %d\n", sigtimedwait(&s,&si,&z)); return 0; }
