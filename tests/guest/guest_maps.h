/*
 * guest_maps.h - what the guest test programs share about their own
 * mappings: unmap_named, which finds a mapping by its name in
 * /proc/self/maps ("[vvar]") and unmaps it (as a checkpointing tool
 * may unmap [vvar]).
 */
#ifndef GUEST_MAPS_H
#define GUEST_MAPS_H

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

/* 0 once the first mapping whose line holds name is unmapped, else -1. */
static inline int unmap_named(const char *name)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return -1;
    char line[512];
    unsigned long lo = 0, hi = 0;
    while (fgets(line, sizeof(line), f))
        if (strstr(line, name) && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
            break;
    fclose(f);
    return hi > lo ? munmap((void *)lo, hi - lo) : -1;
}

#endif
