/*
 * futex.h - what thread.c's futexes share with futex_pi.c: the key a
 * futex word is named by, the timeout reader, and the PI operations
 * thread.c's sys_futex hands on.
 */
#ifndef HVRUN_FUTEX_H
#define HVRUN_FUTEX_H

#include "proxy.h"

#include <stdbool.h>
#include <stdint.h>

/* (process, address) for a private futex; (dev, ino, offset) for one in
 * MAP_SHARED memory (thread.c). */
struct futex_key {
    uint64_t k[3];
    bool shared;
};

void futex_key_of(struct proxy_process *p, gva_t uaddr, int op,
                  struct futex_key *key);
/* A timespec at uts as a CLOCK_MONOTONIC deadline: relative, or absolute
 * on clk (CLOCK_REALTIME is converted). -EFAULT, -EINVAL as Linux. */
int futex_read_timeout(struct proxy_process *p, gva_t uts, bool absolute,
                       int clk, uint64_t *deadline);

/* FUTEX_LOCK_PI, LOCK_PI2, TRYLOCK_PI, UNLOCK_PI, WAIT_REQUEUE_PI,
 * CMP_REQUEUE_PI (cmd is op & FUTEX_CMD_MASK); -ENOSYS for another. */
long futex_pi_op(struct proxy_process *p, const uint64_t a[6], int cmd);
/* A dying thread's PI futexes that others wait on go to their first
 * waiter with FUTEX_OWNER_DIED (Linux's exit_pi_state_list); waiters in
 * dying (NULL: none) are passed over. */
void futex_pi_owner_exit(struct proxy_process *p, int tid,
                         const struct proxy_process *dying);

#endif
