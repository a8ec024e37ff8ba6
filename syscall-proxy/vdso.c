/*
 * vdso.c - the guest's vDSO (guestkernel/vdso.c) and its [vvar] page: the
 * clock reads glibc makes through the vDSO are answered inside the guest,
 * from the logical clock, with no exit (an exit costs ~105 us on kvm_pvm;
 * a JVM makes tens of thousands of clock reads).
 *
 * Before the guest runs, hvrun writes detcore's clock into the page; when
 * the run stops it folds the reads the vDSO counted into detcore: each one
 * is an event, as the syscall it replaces would have been, so every clock
 * value is the one the syscall path gives.
 */
#include "proxy.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "det.h"
#include "vdso_abi.h"

extern const uint8_t gk_vdso_start[], gk_vdso_end[];

int proxy_vdso_map(struct proxy_process *p, gva_t *ehdr_out)
{
    size_t image = (size_t)(gk_vdso_end - gk_vdso_start);
    if (image == 0 || image > VMM_PAGE_SIZE)
        return -ENOEXEC;
    gva_t vvar;
    int rc = vmm_as_find_free(p->as, 2 * VMM_PAGE_SIZE, p->mmap_base, &vvar);
    if (rc < 0)
        return rc;
    gva_t vdso = vvar + VMM_PAGE_SIZE;
    if ((rc = vmm_as_map(p->as, vvar, VMM_PAGE_SIZE, PROT_READ | PROT_WRITE,
                         0, "[vvar]")) < 0 ||
        (rc = vmm_as_map(p->as, vdso, VMM_PAGE_SIZE, PROT_READ | PROT_EXEC,
                         0, "[vdso]")) < 0 ||
        (rc = vmm_as_poke(p->as, vdso, gk_vdso_start, image)) < 0)
        return rc;
    p->vvar_gva = vvar;
    *ehdr_out = vdso;
    return 0;
}

void proxy_vdso_enter(struct proxy_process *p)
{
    if (!p->vvar_gva)
        return;
    struct det_clock_page c;
    det_clock_page(p->det, &c);
    struct gk_vvar v = {.magic = GK_VDSO_MAGIC,
                        .virtual_time = c.virtual_time,
                        .now_ns = c.now_ns, .epoch_ns = c.epoch_ns,
                        .boot_ns = c.boot_ns, .event_ns = c.event_ns,
                        .coarse_ns = c.coarse_ns, .events = 0};
    /* A guest that unmapped or protected the page only loses the fast path
     * (the vDSO checks the magic). */
    (void)vmm_as_copy_out(p->as, p->vvar_gva, &v, sizeof(v));
}

void proxy_vdso_leave(struct proxy_process *p)
{
    uint64_t events;
    if (!p->vvar_gva ||
        vmm_as_copy_in(p->as, &events,
                       p->vvar_gva + offsetof(struct gk_vvar, events),
                       sizeof(events)) < 0 ||
        events == 0)
        return;
    det_clock_fold(p->det, events);
}
