/*
 * internal.h - what the files of net/ share among themselves.
 */
#ifndef PROXY_NET_INTERNAL_H
#define PROXY_NET_INTERNAL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "proxy.h"
#include "net.h"

struct ucred;

/* ---- peer credentials (net/peercred.c) ----------------------------------- */
/* Host credentials of the peer of host socket host_fd (SO_PEERCRED, an
 * SCM_CREDENTIALS message) rewritten in guest terms, in place. */
void proxy_peercred_to_guest(struct proxy_process *p, int host_fd,
                             struct ucred *uc);

#endif
