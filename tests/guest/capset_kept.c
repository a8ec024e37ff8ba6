/*
 * capset_kept: the sets capset gives are kept and checked as Linux keeps
 * them (in a child, as root): capget reads them back, /proc/self/status
 * shows them, a later capset may not raise the permitted set nor, without
 * CAP_SETPCAP, the inheritable one past the old permitted and inheritable
 * ones; PR_CAPBSET_DROP needs CAP_SETPCAP and PR_CAPBSET_READ sees it.
 * Only sets the test chose are printed (the host's bounding set may lack
 * capabilities natively).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define BIT(c) (1u << (c))

static struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};

static long set(unsigned eff, unsigned perm, unsigned inh)
{
    struct __user_cap_data_struct d[2] = {{eff, perm, inh}, {0, 0, 0}};
    return syscall(SYS_capset, &hdr, d);
}

static void show(const char *what, long r)
{
    printf("%-40s %s\n", what, r < 0 ? strerrorname_np(errno) : "ok");
}

static void status_caps(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, "CapInh", 6) || !strncmp(line, "CapPrm", 6) ||
            !strncmp(line, "CapEff", 6))
            printf("  %s", line);
    if (f)
        fclose(f);
}

int main(void)
{
    if (getuid() != 0) {
        printf("not root: nothing checked\n");
        return 0;
    }
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        unsigned all = BIT(CAP_KILL) | BIT(CAP_NET_RAW) | BIT(CAP_SETPCAP) |
                       BIT(CAP_CHOWN);
        show("keep kill, net_raw, setpcap, chown", set(all, all, BIT(CAP_KILL)));
        struct __user_cap_data_struct d[2];
        syscall(SYS_capget, &hdr, d);
        printf("  capget: eff %08x perm %08x inh %08x\n", d[0].effective,
               d[0].permitted, d[0].inheritable);
        status_caps();
        show("raise permitted (sys_admin)", set(all, all | BIT(CAP_SYS_ADMIN), 0));
        show("effective beyond permitted", set(all | BIT(CAP_FOWNER), all, 0));
        show("inheritable net_raw (setpcap)", set(all, all, BIT(CAP_NET_RAW)));
        show("drop CAP_KILL from the bounding set",
             prctl(PR_CAPBSET_DROP, CAP_KILL, 0, 0, 0));
        printf("  PR_CAPBSET_READ kill %d, net_raw %d\n",
               (int)prctl(PR_CAPBSET_READ, CAP_KILL, 0, 0, 0),
               (int)prctl(PR_CAPBSET_READ, CAP_NET_RAW, 0, 0, 0));
        show("inheritable kill, out of the bounding set",
             set(all, all, BIT(CAP_KILL) | BIT(CAP_NET_RAW)));
        unsigned less = BIT(CAP_KILL) | BIT(CAP_NET_RAW) | BIT(CAP_CHOWN);
        show("drop setpcap", set(less, less, BIT(CAP_NET_RAW)));
        show("inheritable chown without setpcap", set(less, less, BIT(CAP_CHOWN)));
        show("inheritable within old: net_raw", set(less, less, BIT(CAP_NET_RAW)));
        show("PR_CAPBSET_DROP without setpcap",
             prctl(PR_CAPBSET_DROP, CAP_CHOWN, 0, 0, 0));
        show("PR_CAPBSET_READ 99", prctl(PR_CAPBSET_READ, 99, 0, 0, 0));
        syscall(SYS_capget, &hdr, d);
        printf("  capget: eff %08x perm %08x inh %08x\n", d[0].effective,
               d[0].permitted, d[0].inheritable);
        fflush(stdout);
        _exit(0);
    }
    waitpid(c, NULL, 0);
    return 0;
}
