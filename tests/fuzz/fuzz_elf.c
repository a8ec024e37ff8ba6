/*
 * fuzz_elf.c - libFuzzer target for the ELF loader: each input is written
 * to a memfd and loaded by proxy_elf_load (syscall-proxy/mm/loader.c) into a
 * fresh guest address space over a small host reservation (no VM, no
 * KVM), once as a main program and once as an interpreter. Built with
 * clang and ASan+UBSan (make fuzz); any crash, sanitizer report, leak or
 * hang is a finding. Seeds: the guest test binaries and the host's ld.so.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "aspace.h"
#include "loader.h"

#define RESERVE_BYTES (64ULL << 20)
#define FIRST_GPA 0x10000ULL

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int elf_fd = -1;

static void load_once(bool is_interp)
{
    uint8_t *hva = mmap(NULL, RESERVE_BYTES, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (hva == MAP_FAILED)
        abort();
    struct vmm_physmem pm;
    struct vmm_aspace as;
    if (vmm_phys_init(&pm, hva, RESERVE_BYTES, FIRST_GPA) != 0 ||
        vmm_as_init(&as, &pm) != 0)
        abort();
    struct proxy_elf_image im;
    char why[512];
    (void)proxy_elf_load(&as, NULL, PROXY_MMAP_BASE, elf_fd, "fuzz.elf",
                         is_interp, &im, why, sizeof(why));
    proxy_elf_image_free(&im);
    vmm_as_destroy(&as);
    vmm_phys_destroy(&pm);
    munmap(hva, RESERVE_BYTES);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (elf_fd < 0 && (elf_fd = memfd_create("fuzz.elf", 0)) < 0)
        abort();
    if (ftruncate(elf_fd, 0) != 0 ||
        (size && pwrite(elf_fd, data, size, 0) != (ssize_t)size))
        abort();
    load_once(false);
    load_once(true);
    return 0;
}
