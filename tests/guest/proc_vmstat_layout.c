/*
 * proc_vmstat_layout.c - /proc/vmstat and /proc/zoneinfo are laid out as
 * Linux 6.12's (and later kernels') are; hvrun's followed Linux 6.1:
 * - the demotion counts are node items (after pgpromote_candidate,
 *   before nr_dirty_threshold), not events;
 * - nr_memmap_pages and nr_memmap_boot_pages follow the dirty thresholds;
 * - nr_iommu_pages follows nr_sec_page_table_pages;
 * - the khugepaged reclaim counts, thp_underused_split_page, swpin_zero,
 *   swpout_zero and zswpwb are there, each after its neighbour;
 * - zoneinfo shows the promo watermark after high, and each pageset's
 *   high_min and high_max.
 * Prints what holds, no value.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_check.h"
#include "guest_slurp.h"

static char buf[1 << 20];

/* The line number of "name value" in buf, or -1. */
static int line_of(const char *name)
{
    size_t n = strlen(name);
    int line = 0;
    for (const char *s = buf; *s; line++) {
        if (strncmp(s, name, n) == 0 && s[n] == ' ')
            return line;
        const char *nl = strchr(s, '\n');
        if (!nl)
            break;
        s = nl + 1;
    }
    return -1;
}

/* a comes right after b (there may be items between only where a kernel
 * option adds them: gap lines at most). */
static void follows(const char *a, const char *b, int gap)
{
    int la = line_of(a), lb = line_of(b);
    printf("%s after %s: %d\n", a, b, la > lb && lb >= 0 && la - lb <= gap);
}

int main(void)
{
    CHECK(slurp_into("/proc/vmstat", buf, sizeof(buf)) > 0);
    follows("pgdemote_kswapd", "pgpromote_candidate", 2);
    follows("pgdemote_khugepaged", "pgdemote_direct", 1);
    follows("nr_dirty_threshold", "pgdemote_khugepaged", 5);
    follows("nr_memmap_pages", "nr_dirty_background_threshold", 1);
    follows("nr_memmap_boot_pages", "nr_memmap_pages", 1);
    follows("nr_iommu_pages", "nr_sec_page_table_pages", 1);
    follows("pgsteal_khugepaged", "pgsteal_direct", 1);
    follows("pgscan_khugepaged", "pgscan_direct", 1);
    follows("thp_underused_split_page", "thp_deferred_split_page", 1);
    follows("swpin_zero", "swap_ra_hit", 1);
    follows("swpout_zero", "swpin_zero", 1);
    follows("zswpwb", "zswpout", 1);
    printf("pgdemote_kswapd before pgpgin: %d\n",
           line_of("pgdemote_kswapd") < line_of("pgpgin"));
    CHECK(slurp_into("/proc/zoneinfo", buf, sizeof(buf)) > 0);
    printf("zoneinfo: promo after high: %d\n",
           strstr(buf, "\n        high     ") &&
               strstr(strstr(buf, "\n        high     "),
                      "\n        promo    ") != NULL);
    printf("zoneinfo: pagesets with high_min and high_max: %d\n",
           strstr(buf, "\n              batch:    ") &&
               strstr(buf, "\n              high_min: ") &&
               strstr(buf, "\n              high_max: "));
    return 0;
}
