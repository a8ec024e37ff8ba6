/*
 * cpu_x86_64.h - x86-64 descriptor tables and the fixed virtual CPU model.
 * Pure code: no KVM, so the unit tests exercise it without /dev/kvm.
 */
#ifndef VMM_CPU_X86_64_H
#define VMM_CPU_X86_64_H

#include <stddef.h>
#include <stdint.h>

/* Builds the GDT (incl. the 16-byte TSS descriptor) into gdt (one page). */
void vmm_cpu_build_gdt(uint64_t *gdt, uint64_t tss_va, uint32_t tss_limit);
/* Builds the IDT (256 gates) for stubs at stubs_va, GK_EXC_STUB_STRIDE apart. */
void vmm_cpu_build_idt(void *idt, uint64_t stubs_va);
/* Builds a 64-bit TSS; returns its limit. */
uint32_t vmm_cpu_build_tss(void *tss, uint64_t rsp0, uint64_t ist1);

/* A CPUID leaf as KVM_SET_CPUID2 wants it, without including KVM headers. */
struct vmm_cpuid_entry {
    uint32_t function, index, flags; /* flags: VMM_CPUID_INDEXED */
    uint32_t eax, ebx, ecx, edx;
};
#define VMM_CPUID_INDEXED 0x1

#define VMM_CPUID_MAX_ENTRIES 64

/*
 * The XSAVE state the guest really has. The model asks for x87|SSE|AVX
 * (VMM_MODEL_XCR0, 832 bytes); on kvm_pvm the guest runs with the host's
 * XCR0, which it cannot change, so leaf 0xd and signal frames must describe
 * that instead (a documented difference between hosts).
 */
#define VMM_XSTATE_MAX_COMPONENTS 10
struct vmm_xstate_layout {
    uint64_t xcr0;
    uint32_t bytes; /* standard-format XSAVE size for xcr0 */
    struct {
        uint32_t size, offset;
    } comp[VMM_XSTATE_MAX_COMPONENTS];
};

/* Fills a layout for xcr0 from native leaf 0xd sub-leaves 2..9. */
void vmm_cpu_xstate_layout(uint64_t xcr0, const struct vmm_cpuid_entry *n0xd,
                           int nr, struct vmm_xstate_layout *out);

/*
 * Builds the fixed model from what the host supports. Returns the number of
 * entries, or -1 with *missing naming the first baseline feature the host
 * lacks (hvrun then refuses to start: the same CPU everywhere, or nothing).
 */
int vmm_cpu_build_model(const struct vmm_cpuid_entry *host, int nr_host,
                        const struct vmm_xstate_layout *xl,
                        struct vmm_cpuid_entry *out, int max_out,
                        const char **missing);

/* Looks up a leaf in a table; NULL if absent. */
const struct vmm_cpuid_entry *vmm_cpuid_find(const struct vmm_cpuid_entry *t,
                                             int n, uint32_t function,
                                             uint32_t index);

/*
 * What CPUID(leaf, subleaf) returns on a vCPU given the model, as KVM
 * answers it (kvm_cpuid): the entry for the leaf (and subleaf where the
 * leaf is indexed); a leaf within the range its class announces but not in
 * the table reads zeros; a leaf past that range reads the highest basic
 * leaf (Intel's rule). regs: eax, ebx, ecx, edx. For --cpuid-rewrite,
 * which answers trapped CPUID instructions itself.
 */
void vmm_cpu_model_cpuid(const struct vmm_cpuid_entry *model, int n,
                         uint32_t leaf, uint32_t subleaf, uint32_t regs[4]);

/* A host CPUID leaf with the model's APIC ids (CPU 0's): see backend.h. */
void vmm_cpu_model_apic_ids(uint32_t leaf, uint32_t regs[4]);

/* XCR0 the model asks for (x87|SSE|AVX), its XSAVE size, and the largest
 * XSAVE image hvrun handles (KVM's struct kvm_xsave region). */
#define VMM_MODEL_XCR0 0x7ULL
#define VMM_MODEL_XSAVE_BYTES 832
#define VMM_XSAVE_MAX_BYTES 4096
/* DR6 with no debug exception recorded (its reserved bits set); DR7's
 * always-one bit. */
#define VMM_DR6_RESET 0xffff0ff0ULL
#define VMM_DR7_FIXED 0x400ULL
/* AT_HWCAP and AT_HWCAP2 for the model. */
uint64_t vmm_cpu_model_hwcap(const struct vmm_cpuid_entry *model, int n);
uint64_t vmm_cpu_model_hwcap2(const struct vmm_cpuid_entry *model, int n);

#define VMM_MODEL_BRAND "hvrun virtual x86-64 CPU (deterministic model)"

#endif
