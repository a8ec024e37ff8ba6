/*
 * request_key_dest.c - request_key with callout info for a key that is
 * not there checks, before any upcall, that the key could be made: a
 * keyring never is (EPERM), and the default destination keyring must be
 * writable (EACCES for a session keyring whose permissions allow only
 * search, read and view: CVE-2017-17807). hvrun answered ENOKEY for both
 * (LTP request_key04). No upcall is reached, natively either. Run natively
 * and under hvrun, the output must match.
 */
#define _GNU_SOURCE
#include <linux/keyctl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest_check.h"

#define KEY_POS_VIEW 0x01000000
#define KEY_POS_READ 0x02000000
#define KEY_POS_SEARCH 0x08000000

static long request(const char *type, const char *desc, const char *info)
{
    return syscall(SYS_request_key, type, desc, info, 0);
}

int main(void)
{
    CHECK(syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) > 0);
    CHECK(syscall(SYS_keyctl, KEYCTL_SET_REQKEY_KEYRING,
                  KEY_REQKEY_DEFL_SESSION_KEYRING) >= 0);
    printf("request keyring with callout: %s\n",
           result_text(request("keyring", "hvrun-ring", "info")));
    CHECK(syscall(SYS_keyctl, KEYCTL_SETPERM, KEY_SPEC_SESSION_KEYRING,
                  KEY_POS_SEARCH | KEY_POS_READ | KEY_POS_VIEW) == 0);
    printf("request user key with callout, session not writable: %s\n",
           result_text(request("user", "hvrun-desc", "callout_info")));
    printf("request user key without callout: %s\n",
           result_text(request("user", "hvrun-desc", NULL)));
    int keyid;
    printf("session keyring bytes: %s\n",
           result_text(syscall(SYS_keyctl, KEYCTL_READ,
                               KEY_SPEC_SESSION_KEYRING, &keyid,
                               sizeof(keyid))));
    return 0;
}
