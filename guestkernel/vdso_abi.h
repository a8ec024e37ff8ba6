/*
 * vdso_abi.h - the page shared between hvrun and the guest's vDSO
 * (guestkernel/vdso.c): the logical clock as of the last exit, and the
 * count of clock reads the vDSO answered since. Mapped read-write at the
 * page just below the vDSO image ("[vvar]").
 *
 * The clock rule is detcore's (detcore/clock.c): every guest event
 * advances logical time by DET_EVENT_NS; a vDSO call is an event like the
 * syscall it replaces, so each one adds 1 to `events` and sees
 * now_ns + events * event_ns. At the next exit hvrun folds the events into
 * detcore and writes the page afresh before the guest runs again.
 */
#ifndef GK_VDSO_ABI_H
#define GK_VDSO_ABI_H

#include <stdint.h>

#define GK_VDSO_MAGIC 0x6876727576766172ULL /* "hvruvvar" */

struct gk_vvar {
    uint64_t magic;
    uint64_t virtual_time; /* 0: every call goes to the kernel (host time) */
    int64_t now_ns;        /* logical time elapsed at the last exit */
    int64_t epoch_ns;      /* CLOCK_REALTIME = epoch_ns + elapsed */
    int64_t boot_ns;       /* CLOCK_MONOTONIC = boot_ns + elapsed */
    int64_t event_ns;      /* what one event adds */
    int64_t coarse_ns;     /* resolution of the _COARSE clocks */
    uint64_t events;       /* vDSO calls since the last exit (guest adds) */
};

#endif
