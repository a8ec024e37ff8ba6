/*
 * openat2_links: RESOLVE_NO_MAGICLINKS and RESOLVE_NO_SYMLINKS refuse (ELOOP)
 * /proc/self/exe and a symlink to a /proc file, with and without O_CREAT,
 * and a /proc/self/fd link (the LTP openat202 cases).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
static void t(const char *p, int fl, unsigned long long res){struct open_how h={.flags=fl,.mode=(fl&O_CREAT)?0400:0,.resolve=res};long r=syscall(SYS_openat2,AT_FDCWD,p,&h,sizeof h);printf("%-20s fl %o res %llx: %s\n",p,fl,res,r<0?strerrorname_np(errno):"ok");if(r>=0)close(r);}
int main(void){unlink("ln_ver");symlink("/proc/version","ln_ver");
t("/proc/self/exe",O_RDONLY,RESOLVE_NO_MAGICLINKS);t("/proc/self/exe",O_RDONLY|O_CREAT,RESOLVE_NO_MAGICLINKS);
t("ln_ver",O_RDONLY,RESOLVE_NO_SYMLINKS);t("ln_ver",O_RDONLY|O_CREAT,RESOLVE_NO_SYMLINKS);t("/proc/self/fd/0",O_RDONLY,RESOLVE_NO_MAGICLINKS);unlink("ln_ver");return 0;}
