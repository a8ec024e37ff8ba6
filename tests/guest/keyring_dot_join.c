/*
 * keyring_dot_join.c - KEYCTL_JOIN_SESSION_KEYRING refuses a name that
 * begins with a dot (EPERM: such keyrings are the kernel's own, as
 * .builtin_trusted_keys; CVE-2016-9604), before it looks for or makes a
 * keyring; hvrun made a keyring of that name (LTP keyctl08). An ordinary
 * name is still joined. Run natively and under hvrun, the output must match.
 */
#define _GNU_SOURCE
#include <linux/keyctl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest_check.h"

static long join(const char *name)
{
    return syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, name);
}

int main(void)
{
    printf("join .builtin_trusted_keys: %s\n",
           result_text(join(".builtin_trusted_keys")));
    printf("join .hvrun-test: %s\n", result_text(join(".hvrun-test")));
    printf("join .: %s\n", result_text(join(".")));
    printf("join empty name: %s\n", result_text(join("")));
    long k = join("hvrun-dot-test");
    printf("join hvrun-dot-test: %s\n", k > 0 ? "a keyring" : result_text(k));
    return 0;
}
