/*
 * ldt.c - modify_ldt: the local descriptor table of a guest, which is
 * always empty.
 *
 * Reads are Linux's: func 0 copies the LDT, and a process that never wrote
 * one has none (0 bytes); func 2 gives the default LDT, 128 zero bytes on
 * x86-64 (at most bytecount). Writes (func 1, 0x11) are checked as
 * Linux's write_ldt checks them (EINVAL for a size other than struct
 * user_desc, EFAULT, EINVAL for an entry past LDT_ENTRIES or a
 * code segment marked not present in the new mode), then refused with
 * ENOSYS, as a kernel built without CONFIG_MODIFY_LDT_SYSCALL answers:
 * neither backend installs a guest LDT (the KVM guest kernel has no LDT
 * descriptor in its GDT; a ptrace'd process's LDT would be the host's),
 * so a segment a program set up could never be loaded. Programs that
 * probe (Wine, DOS emulators, old thread libraries) take that as "no
 * LDT". The result is truncated to an int and zero-extended, as Linux's
 * modify_ldt returns it (an error is a large positive value to
 * syscall(2)).
 */
#include "proxy.h"
#include "mm.h"

#include <asm/ldt.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>

#define DEFAULT_LDT_BYTES 128UL

static long read_default_ldt(struct proxy_process *p, gva_t ptr,
                             unsigned long bytecount)
{
    static const uint8_t zeros[DEFAULT_LDT_BYTES];
    if (bytecount > DEFAULT_LDT_BYTES)
        bytecount = DEFAULT_LDT_BYTES;
    if (bytecount && proxy_copy_out(p, ptr, zeros, bytecount) < 0)
        return -EFAULT;
    return (long)bytecount;
}

static long write_ldt(struct proxy_process *p, gva_t ptr,
                      unsigned long bytecount, bool oldmode)
{
    struct user_desc d;
    if (bytecount != sizeof(d))
        return -EINVAL;
    if (proxy_copy_in(p, &d, ptr, sizeof(d)) < 0)
        return -EFAULT;
    if (d.entry_number >= LDT_ENTRIES)
        return -EINVAL;
    if (d.contents == 3 && (oldmode || !d.seg_not_present))
        return -EINVAL;
    return -ENOSYS; /* no LDT either backend could load */
}

static long sys_modify_ldt(struct proxy_process *p, const uint64_t a[6])
{
    int func = (int)a[0];
    long rc = -ENOSYS;
    switch (func) {
    case 0:
        rc = 0; /* no LDT: nothing to copy */
        break;
    case 1:
        rc = write_ldt(p, a[1], a[2], true);
        break;
    case 2:
        rc = read_default_ldt(p, a[1], a[2]);
        break;
    case 0x11:
        rc = write_ldt(p, a[1], a[2], false);
        break;
    }
    return (long)(unsigned int)rc;
}

const struct proxy_syscall proxy_ldt_syscalls[] = {
    {SYS_modify_ldt, "modify_ldt", sys_modify_ldt},
    {-1, NULL, NULL},
};
