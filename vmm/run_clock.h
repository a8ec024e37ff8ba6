/*
 * run_clock.h - where a run's host time goes, for `--summary`: set-up,
 * the guest's runs (each ending at a stop: a syscall, a fault, a host
 * interruption), VM or stub creation and teardown, fork's copy, exec's
 * image, and what is left of the run loop (the proxy's emulation).
 *
 * Host time (CLOCK_MONOTONIC), read around those phases only: it is
 * never seen by a guest, never in the detlog, and changes nothing of
 * what a run does. One process-wide record: one run per hvrun process
 * (--verify's two runs are two processes).
 */
#ifndef VMM_RUN_CLOCK_H
#define VMM_RUN_CLOCK_H

#include <stdint.h>

enum vmm_clock_phase {
    VMM_CLOCK_GUEST,      /* in the backend's run: guest code and its stop */
    VMM_CLOCK_MAP_SYNC,   /* of that, the ptrace stub's mapping sync */
    VMM_CLOCK_GUEST_CPU,  /* the ptrace stubs' own CPU time, at their end */
    VMM_CLOCK_VM_CREATE,  /* a VM (kvm) or a stub spawned and seized */
    VMM_CLOCK_VM_DESTROY, /* a VM or stub torn down */
    VMM_CLOCK_FORK_COPY,  /* fork: the parent's memory copied */
    VMM_CLOCK_EXEC_LOAD,  /* execve: the new image built */
    VMM_CLOCK_NR
};

struct vmm_run_clock {
    uint64_t ns[VMM_CLOCK_NR];
    uint64_t count[VMM_CLOCK_NR];
};

extern struct vmm_run_clock vmm_run_clock;

/* CLOCK_MONOTONIC in ns. */
uint64_t vmm_clock_now(void);

/* Adds the time since `since` (a vmm_clock_now) to phase. */
static inline void vmm_clock_add(enum vmm_clock_phase phase, uint64_t since)
{
    vmm_run_clock.ns[phase] += vmm_clock_now() - since;
    vmm_run_clock.count[phase]++;
}

#endif
