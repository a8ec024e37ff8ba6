/*
 * code_access.c - guest code read and written by the rewriters of mm/
 * (cpuid_patch.c's CPUID/RDTSC sites, progress.c's loop back edges).
 */
#include "internal.h"

#include <string.h>
#include <sys/uio.h>

bool proxy_code_poke(struct proxy_process *p, gva_t gva, const void *src,
                     size_t len)
{
    const uint8_t *b = src;
    while (len > 0) {
        size_t room = VMM_PAGE_SIZE - (gva & (VMM_PAGE_SIZE - 1));
        size_t n = len < room ? len : room;
        if (vmm_as_poke_text(p->as, gva, b, n) < 0)
            return false;
        gva += n;
        b += n;
        len -= n;
    }
    return true;
}

/* The guest's bytes whatever their protection (vmm_as_peek: a file's own
 * pages are read from the file, not through hvrun's view). */
bool proxy_code_read(const struct proxy_process *p, gva_t gva, uint8_t *dst,
                     size_t len)
{
    return len > 0 && vmm_as_peek(p->as, dst, gva, len) == 0;
}

bool proxy_code_is_hvruns(const struct proxy_process *p, gva_t gva)
{
    const struct vmm_vma *v = vmm_as_find_vma(p->as, gva);
    return v && (v->flags & VMM_VMA_SPECIAL) && v->name &&
           (!strcmp(v->name, "[hvrun-progress]") ||
            !strcmp(v->name, "[hvrun-tsc]"));
}

bool proxy_code_maps_file_at(const struct proxy_process *p, gva_t gva,
                             uint64_t dev, uint64_t ino, uint64_t off)
{
    const struct vmm_vma *v = vmm_as_find_vma(p->as, gva);
    return v && (v->flags & VMM_VMA_FILE) && !(v->flags & VMM_VMA_SHARED) &&
           !v->shared && v->dev == dev && v->ino == ino &&
           v->file_off + (gva - v->start) == off;
}
