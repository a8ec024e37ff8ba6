/*
 * progress.h - counted progress without a PMU (progress.c): back edges of
 * the guest's loops decrement a counter in guest memory and trap at zero,
 * a deterministic preemption point; logical time follows the count.
 */
#ifndef PROXY_MM_PROGRESS_H
#define PROXY_MM_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "hooks.h"

struct proxy_process;
struct proxy_progress;

/* [gva, gva+len) was just filled from host_fd and will be executable:
 * before cpuid_patch.c's sites, the texts there that the run's image of
 * their back edges serves are mapped from it (progress.c, "images"). */
void proxy_progress_image_fresh(struct proxy_process *p, int host_fd,
                                uint64_t gva, uint64_t len);
/* The same, after cpuid_patch.c's sites (whose hashes need the file's
 * bytes): rewrites the back edges of the rest in this process's copy.
 * Both no-ops unless proxy_config.progress_count. */
void proxy_progress_patch_fresh(struct proxy_process *p, int host_fd,
                                uint64_t gva, uint64_t len);

/* A #UD: PROXY_TRAP_PROGRESS at a trampoline's trap (the thread then
 * resumes at the loop's target), else PROXY_TRAP_NONE. */
enum proxy_trap_kind proxy_progress_trap(struct proxy_process *p);

/* mremap moved [old, old+old_len) to new_gva: spans there are put back. */
void proxy_progress_remapped(struct proxy_process *p, uint64_t old,
                             uint64_t old_len, uint64_t new_gva);

/* fork's copy (the child's memory is a copy at the same addresses), and
 * the end of an address space's state. */
struct proxy_progress *proxy_progress_copy(const struct proxy_progress *s);
/* After the copy is the child's (child->cpuid_patched->progress): its
 * counter pages get an object of their own. 0 or -errno. */
int proxy_progress_forked(struct proxy_process *child);
void proxy_progress_free(struct proxy_progress *s);

/* cpuid_patch.c keeps the state with its own, per address space: the
 * slot, made when create (NULL when out of memory or none). */
struct proxy_progress **proxy_cpuid_progress_slot(struct proxy_process *p,
                                                  bool create);

#endif
