/*
 * internal.h - what the files of mm/ share among themselves.
 */
#ifndef PROXY_MM_INTERNAL_H
#define PROXY_MM_INTERNAL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "proxy.h"
#include "mm.h"

struct iovec;
struct proxy_world;

/* ---- guest code the rewriters read and write (mm/code_access.c) --------- */
/* Writes guest code whatever the host backing's protection (a VMA that
 * lost a permission has a read-only one), page by page. */
bool proxy_code_poke(struct proxy_process *p, gva_t gva, const void *src,
                     size_t len);
/* Reads len bytes of guest memory; false unless all are mapped. */
bool proxy_code_read(const struct proxy_process *p, gva_t gva, uint8_t *dst,
                     size_t len);
/* Whether gva lies in a private mapping of file (dev, ino) at offset off:
 * hvrun's own copy of the file's bytes. */
bool proxy_code_maps_file_at(const struct proxy_process *p, gva_t gva,
                             uint64_t dev, uint64_t ino, uint64_t off);

/* ---- the vDSO (mm/vdso.c) ------------------------------------------------ */
/* Maps [vvar] and [vdso] below mmap_base; *ehdr_out is AT_SYSINFO_EHDR. */
int proxy_vdso_map(struct proxy_process *p, gva_t *ehdr_out);

/* ---- memfd_secret files (mm/secretmem.c) --------------------------------- */
/* A new mapping of a secret file is named as Linux names it in maps. */
void proxy_secretmem_name_mapping(struct proxy_process *p, int host_fd,
                                  gva_t gva, uint64_t len, uint64_t off);

/* mmap of guest_fd: 0 not secret, 1 secret (*vflags marked locked and
 * secret), or -EINVAL for a private mapping. */
int proxy_secretmem_mmap(struct proxy_process *p, int guest_fd, int map_type,
                         int *vflags);

/* ---- the memory family, file mappings (mm/mm.c) -------------------------- */
/* preadv of fd into guest memory (iov from vmm_as_host_iov); a regular
 * file into memfd-backed memory goes through the memfd (mm.c). */
ssize_t proxy_mm_read_file_into(const struct vmm_aspace *as, int fd,
                                bool regular, const struct iovec *iov, int n,
                                uint64_t off);

/* ---- --memory and the OOM backstop (mm/memlimit.c) ----------------------- */
/* Committed guest memory of the whole run (every live process's charged
 * VMAs, vmm_as account_bytes). */
uint64_t proxy_mem_committed(const struct proxy_world *w);

/* Whether bytes more may be committed: -ENOMEM past --memory. */
int proxy_mem_charge(struct proxy_process *p, uint64_t bytes);

#endif
