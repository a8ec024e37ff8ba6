/*
 * init_signal_perm: signals to pid 1 (kill, and pidfd_send_signal on a
 * /proc/1 directory fd) pass kill's permission check as root and fail
 * with EPERM for a process that dropped to nobody (init is root's).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void){
  int fd=open("/proc/1",O_DIRECTORY|O_RDONLY);
  printf("root kill(1,0): %d\n", kill(1,0));
  printf("root pidfd(/proc/1, 0): %ld\n", syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0));
  fflush(stdout);
  if(fork()==0){ setuid(65534);
    int r=kill(1,0); printf("nobody kill(1,0): %d %s\n", r, r?strerrorname_np(errno):"");
    long q=syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0); printf("nobody pidfd(/proc/1,0): %ld %s\n", q, q?strerrorname_np(errno):""); fflush(stdout); _exit(0);}
  wait(NULL); return 0;}
