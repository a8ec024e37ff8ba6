/*
 * cpuid_probe.h - running CPUID in a probe VM: what the guest really sees.
 */
#ifndef VMM_CPUID_PROBE_H
#define VMM_CPUID_PROBE_H

#include <stdbool.h>
#include <stddef.h>

#include "backend.h"
#include "cpu_x86_64.h"

/* Leaves 0, 1, 7.0 and 0x80000000-0x80000004. */
#define VMM_CPUID_PROBE_LEAVES 8

/* The most pairs one probe runs (its data page: the pairs below
 * PROBE_OUT_OFF, the answers above). */
#define VMM_CPUID_PROBE_MAX VMM_CPUID_MAX_ENTRIES

/* Runs the probe in a fresh VM of host; seen gets VMM_CPUID_PROBE_LEAVES
 * entries. Returns 0, or -errno with why filled in. */
int vmm_cpuid_probe(struct vmm_host *host, struct vmm_cpuid_entry *seen,
                    char *why, size_t why_len);
/* The answers a VM of host gives for each of the nr entries of model
 * (leaf and subleaf; at most VMM_CPUID_PROBE_MAX): seen[i] is entry i's
 * leaf and subleaf, its VMM_CPUID_INDEXED flag, and what CPUID returned
 * there, run in a fresh VM. Returns 0, or -errno with why filled in. */
int vmm_cpuid_probe_answers(struct vmm_host *host,
                            const struct vmm_cpuid_entry *model, int nr,
                            struct vmm_cpuid_entry *seen, char *why,
                            size_t why_len);
/* True when what the probe saw is the model (vendor, signature, brand,
 * and the feature words of leaves 1, 7 and 0x80000001). */
bool vmm_cpuid_probe_matches(const struct vmm_cpuid_entry *seen,
                             const struct vmm_cpuid_entry *model, int nr);
/* True when the probe saw the model's vendor, signature and brand: the
 * hypervisor answers CPUID (its APIC ids are the vCPU's), whatever feature
 * bits it shows. */
bool vmm_cpuid_probe_answered(const struct vmm_cpuid_entry *seen,
                              const struct vmm_cpuid_entry *model, int nr);
/* The probe's leaves as the model answers them: what seen would hold on
 * a host whose CPUID is the model (--cpuid-rewrite makes it so). */
void vmm_cpuid_model_view(const struct vmm_cpuid_entry *model, int nr,
                          struct vmm_cpuid_entry *seen);
/* The CPU identity those leaves describe. */
void vmm_cpuid_identity_of(const struct vmm_cpuid_entry *seen,
                           struct vmm_cpu_identity *id);

#endif
