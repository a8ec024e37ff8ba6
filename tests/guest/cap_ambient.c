/*
 * cap_ambient.c - prctl(PR_CAP_AMBIENT): a capability is raised only when
 * it is permitted and inheritable and SECBIT_NO_CAP_AMBIENT_RAISE is off
 * (EPERM), raising twice and lowering one not raised are no errors,
 * IS_SET reads it, CLEAR_ALL empties the set, bad arguments are EINVAL;
 * capset shrinks the set with the inheritable one; /proc/self/status's
 * CapAmb shows it and a fork keeps it. hvrun once answered EINVAL to all
 * of it (LTP's prctl07 said TCONF). Run as root.
 */
#define _GNU_SOURCE
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#ifndef SECBIT_NO_CAP_AMBIENT_RAISE
#define SECBIT_NO_CAP_AMBIENT_RAISE (1 << 6)
#endif

#define BIT(c) (1u << (c))

static void set_caps(unsigned eff, unsigned perm, unsigned inh)
{
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2] = {{eff, perm, inh}, {0, 0, 0}};
    CHECK(syscall(SYS_capset, &hdr, d) == 0);
}

static void show_amb(const char *when)
{
    FILE *f = fopen("/proc/self/status", "r");
    CHECK(f != NULL);
    char line[256];
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "CapAmb:", 7) == 0)
            printf("%s: %s", when, line);
    fclose(f);
}

static long amb(long op, long cap) { return prctl(PR_CAP_AMBIENT, op, cap, 0, 0); }

static void say(const char *what, long rc) { printf("%s: %s\n", what, result_text(rc)); }

int main(void)
{
    if (geteuid() != 0) {
        printf("not root: nothing to check\n");
        return 0;
    }
    show_amb("at start");
    say("CLEAR_ALL with a cap", prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 1, 0, 0));
    say("IS_SET of cap 64", amb(PR_CAP_AMBIENT_IS_SET, 64));
    say("RAISE with arg4", prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_RAW, 1, 0));
    say("op 99", amb(99, CAP_NET_RAW));

    unsigned three = BIT(CAP_NET_RAW) | BIT(CAP_NET_BIND_SERVICE) | BIT(CAP_SETPCAP);
    set_caps(three, three, 0);
    say("RAISE, not inheritable", amb(PR_CAP_AMBIENT_RAISE, CAP_NET_BIND_SERVICE));
    set_caps(three, three, three | BIT(CAP_CHOWN));
    say("RAISE, inheritable, not permitted", amb(PR_CAP_AMBIENT_RAISE, CAP_CHOWN));
    CHECK(prctl(PR_SET_SECUREBITS, SECBIT_NO_CAP_AMBIENT_RAISE) == 0);
    say("RAISE with NO_CAP_AMBIENT_RAISE", amb(PR_CAP_AMBIENT_RAISE, CAP_NET_BIND_SERVICE));
    CHECK(prctl(PR_SET_SECUREBITS, 0) == 0);
    say("RAISE", amb(PR_CAP_AMBIENT_RAISE, CAP_NET_BIND_SERVICE));
    say("RAISE again", amb(PR_CAP_AMBIENT_RAISE, CAP_NET_BIND_SERVICE));
    show_amb("raised");
    say("IS_SET raised", amb(PR_CAP_AMBIENT_IS_SET, CAP_NET_BIND_SERVICE));
    say("IS_SET other", amb(PR_CAP_AMBIENT_IS_SET, CAP_NET_RAW));
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        show_amb("in a child");
        fflush(stdout);
        _exit(0);
    }
    CHECK(waitpid(pid, NULL, 0) == pid);
    say("LOWER other", amb(PR_CAP_AMBIENT_LOWER, CAP_NET_RAW));
    say("LOWER raised", amb(PR_CAP_AMBIENT_LOWER, CAP_NET_BIND_SERVICE));
    show_amb("lowered");
    say("RAISE two", amb(PR_CAP_AMBIENT_RAISE, CAP_NET_BIND_SERVICE) |
                         amb(PR_CAP_AMBIENT_RAISE, CAP_NET_RAW));
    show_amb("two raised");
    set_caps(three, three, BIT(CAP_NET_RAW));
    show_amb("after capset without one inheritable");
    say("CLEAR_ALL", amb(PR_CAP_AMBIENT_CLEAR_ALL, 0));
    show_amb("cleared");
    return 0;
}
