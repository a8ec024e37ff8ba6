/*
 * keys.c - add_key, request_key, keyctl: ENOSYS, as a kernel built
 * without CONFIG_KEYS answers.
 *
 * The host's keyrings are not the guest's to see or change (a session or
 * user keyring of the host would leak into the run, and key serials are
 * random), and no in-run keyring model is built yet. ENOSYS is an answer
 * Linux gives, and programs that use keys (ssh, kinit, keyutils, systemd
 * tools) take it as "no key retention service" and go on without one. The
 * calls are answered here, not left unsupported, so a run under
 * --fail-closed goes on too.
 */
#include "proxy.h"

#include <errno.h>
#include <sys/syscall.h>

static long sys_no_keys(struct proxy_process *p, const uint64_t a[6])
{
    (void)p;
    (void)a;
    return -ENOSYS;
}

const struct proxy_syscall proxy_keys_syscalls[] = {
    {SYS_add_key, "add_key", sys_no_keys},
    {SYS_request_key, "request_key", sys_no_keys},
    {SYS_keyctl, "keyctl", sys_no_keys},
    {-1, NULL, NULL},
};
