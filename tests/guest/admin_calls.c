/*
 * admin_calls.c - modify_ldt, acct and quotactl as Linux answers them here:
 * modify_ldt's reads (no LDT, the default one of 128 zero bytes, the int
 * result zero-extended) and the checks of a write; acct refused (EPERM) for
 * a caller without CAP_SYS_PACCT; quotactl's answers for paths that are no
 * block device, a missing one, a NULL device, a bad type, and the queries
 * and refused changes on the root filesystem's device when there is one
 * (ext4 without quotas: ESRCH). What a caller without privilege gets runs in
 * a child that gave up root, so nothing on the host can change. Run
 * natively and under hvrun, the output must match
 * (tests/run-guest-tests.sh).
 */
#define _GNU_SOURCE
#include <asm/ldt.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/acct.h>
#include <sys/quota.h>
#include <linux/dqblk_xfs.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define ROOT_DEV "/dev/vda"

/* modify_ldt returns an int zero-extended: an error is 2^32 - errno. */
static const char *ldt_res(long rc)
{
    static char buf[32];
    if (rc > 0xfffff000L && rc <= 0xffffffffL)
        snprintf(buf, sizeof(buf), "-%s",
                 strerrorname_np((int)(0x100000000L - rc)));
    else
        snprintf(buf, sizeof(buf), "%ld", rc);
    return buf;
}

static void ldt(void)
{
    unsigned char buf[256];
    memset(buf, 0x55, sizeof(buf));
    printf("ldt read: %s, untouched %d\n",
           ldt_res(syscall(SYS_modify_ldt, 0, buf, sizeof(buf))), buf[0] == 0x55);
    printf("ldt read, bad pointer: %s\n",
           ldt_res(syscall(SYS_modify_ldt, 0, (void *)8, 16)));
    long rc = syscall(SYS_modify_ldt, 2, buf, sizeof(buf));
    int zeros = 1;
    for (int i = 0; i < 128; i++)
        zeros &= buf[i] == 0;
    printf("default ldt: %s, zeros %d, past it untouched %d\n", ldt_res(rc),
           zeros, buf[128] == 0x55);
    printf("default ldt, 10 bytes: %s\n",
           ldt_res(syscall(SYS_modify_ldt, 2, buf, 10)));
    printf("default ldt, bad pointer: %s\n",
           ldt_res(syscall(SYS_modify_ldt, 2, (void *)8, 10)));
    printf("func 7: %s\n", ldt_res(syscall(SYS_modify_ldt, 7, buf, 16)));
    struct user_desc d;
    memset(&d, 0, sizeof(d));
    printf("write, wrong size: %s\n",
           ldt_res(syscall(SYS_modify_ldt, 1, &d, sizeof(d) - 1)));
    printf("write, bad pointer: %s\n",
           ldt_res(syscall(SYS_modify_ldt, 0x11, (void *)8, sizeof(d))));
    d.entry_number = 8192;
    printf("write, entry 8192: %s\n",
           ldt_res(syscall(SYS_modify_ldt, 0x11, &d, sizeof(d))));
    d.entry_number = 1;
    d.contents = 3;
    printf("write, old mode contents 3: %s\n",
           ldt_res(syscall(SYS_modify_ldt, 1, &d, sizeof(d))));
    d.seg_not_present = 0;
    printf("write, contents 3 present: %s\n",
           ldt_res(syscall(SYS_modify_ldt, 0x11, &d, sizeof(d))));
    printf("ldt read after: %s\n",
           ldt_res(syscall(SYS_modify_ldt, 0, buf, sizeof(buf))));
}

static void quota_paths(void)
{
    struct dqblk q;
    printf("quota NULL device: %s\n",
           result_text(quotactl(QCMD(Q_GETQUOTA, USRQUOTA), NULL, 0, (caddr_t)&q)));
    printf("quota sync, NULL device: %s\n",
           result_text(quotactl(QCMD(Q_SYNC, USRQUOTA), NULL, 0, NULL)));
    printf("quota type 3: %s\n",
           result_text(quotactl(QCMD(Q_GETQUOTA, 3), "/", 0, (caddr_t)&q)));
    printf("quota on a directory: %s\n",
           result_text(quotactl(QCMD(Q_GETQUOTA, USRQUOTA), "/", 0, (caddr_t)&q)));
    printf("quota on /dev/null: %s\n",
           result_text(quotactl(QCMD(Q_GETINFO, USRQUOTA), "/dev/null", 0, (caddr_t)&q)));
    printf("quota missing: %s\n",
           result_text(quotactl(QCMD(Q_GETQUOTA, USRQUOTA), "/nonexistent/dev", 0,
                        (caddr_t)&q)));
    printf("quota bad path pointer: %s\n",
           result_text(quotactl(QCMD(Q_GETQUOTA, USRQUOTA), (char *)8, 0, (caddr_t)&q)));
}

static void quota_root_dev(int as_nobody)
{
    struct stat st;
    if (stat(ROOT_DEV, &st) < 0 || !S_ISBLK(st.st_mode))
        return;
    char buf[512];
    unsigned me = (unsigned)geteuid();
    const char *who = as_nobody ? "nobody" : "root";
    printf("%s: getfmt: %s\n", who,
           result_text(quotactl(QCMD(Q_GETFMT, USRQUOTA), ROOT_DEV, 0, buf)));
    printf("%s: getinfo: %s\n", who,
           result_text(quotactl(QCMD(Q_GETINFO, GRPQUOTA), ROOT_DEV, 0, buf)));
    printf("%s: own getquota: %s\n", who,
           result_text(quotactl(QCMD(Q_GETQUOTA, USRQUOTA), ROOT_DEV, (int)me, buf)));
    printf("%s: xgetqstat: %s\n", who,
           result_text(quotactl(QCMD(Q_XGETQSTAT, USRQUOTA), ROOT_DEV, 0, buf)));
    int fd = open("/", O_RDONLY | O_DIRECTORY);
    printf("%s: fd getfmt: %s\n", who,
           result_text(syscall(SYS_quotactl_fd, fd, QCMD(Q_GETFMT, USRQUOTA), 0, buf)));
    printf("%s: fd own getquota: %s\n", who,
           result_text(syscall(SYS_quotactl_fd, fd, QCMD(Q_GETQUOTA, USRQUOTA), me, buf)));
    printf("%s: fd type 3: %s\n", who,
           result_text(syscall(SYS_quotactl_fd, fd, QCMD(Q_GETQUOTA, 3), me, buf)));
    printf("%s: bad fd: %s\n", who,
           result_text(syscall(SYS_quotactl_fd, 99, QCMD(Q_GETQUOTA, 3), me, buf)));
    if (as_nobody)
        printf("%s: fd quotaoff: %s\n", who,
               result_text(syscall(SYS_quotactl_fd, fd, QCMD(Q_QUOTAOFF, USRQUOTA), 0,
                           NULL)));
    close(fd);
    if (!as_nobody)
        return;
    printf("%s: another's getquota: %s\n", who,
           result_text(quotactl(QCMD(Q_GETQUOTA, USRQUOTA), ROOT_DEV, 0, buf)));
    printf("%s: getnextquota: %s\n", who,
           result_text(quotactl(QCMD(Q_GETNEXTQUOTA, USRQUOTA), ROOT_DEV, 0, buf)));
    printf("%s: quotaoff: %s\n", who,
           result_text(quotactl(QCMD(Q_QUOTAOFF, USRQUOTA), ROOT_DEV, 0, NULL)));
    printf("%s: setinfo: %s\n", who,
           result_text(quotactl(QCMD(Q_SETINFO, USRQUOTA), ROOT_DEV, 0, buf)));
    printf("%s: unknown command: %s\n", who,
           result_text(quotactl(QCMD(0x77, USRQUOTA), ROOT_DEV, 0, buf)));
}

static void unprivileged(void)
{
    pid_t c = fork();
    if (c == 0) {
        if (setuid(65534) < 0 || geteuid() != 65534)
            _exit(1);
        printf("acct off: %s\n", result_text(acct(NULL)));
        printf("acct on a file: %s\n", result_text(acct("/nonexistent/acct")));
        printf("acct bad pointer: %s\n", result_text(acct((char *)8)));
        quota_paths();
        quota_root_dev(1);
        _exit(0);
    }
    int st;
    waitpid(c, &st, 0);
    printf("child status %d\n", WEXITSTATUS(st));
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    ldt();
    quota_paths();
    quota_root_dev(0);
    unprivileged();
    return 0;
}
