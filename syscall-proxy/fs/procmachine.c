/*
 * procmachine.c - the machine's counter files of /proc that procfs.c's
 * table serves: vmstat, buddyinfo, zoneinfo, pagetypeinfo, interrupts,
 * softirqs, slabinfo, diskstats, pressure/, and the /proc/sys counters
 * (fs/file-nr, fs/inode-nr, fs/inode-state, fs/dentry-state,
 * kernel/ns_last_pid).
 *
 * The host's are live counters of the whole host (free pages, faults,
 * interrupts, open files, the last host pid): they differ from one read to
 * the next, so a guest that reads them differs between runs. These are the
 * run's machine instead: the figures /proc/meminfo gives (an idle machine
 * of --memory, procfs.c's model) in the unit each file counts, one CPU
 * (DET_NR_CPUS), and 0 for every event count the model does not keep
 * (faults, reclaim, interrupts: a machine that has done nothing), in Linux
 * 6.12's layouts (mm/vmstat.c, kernel/irq/proc.c, fs/proc/softirqs.c).
 * docs/DETERMINISM.md names each.
 */
#include "proxy.h"
#include "vfs.h"
#include "det.h"

#include <stdio.h>
#include <string.h>

#define PAGE_KB 4ULL

static unsigned long long pages_of(const struct proxy_process *p,
                                   const char *meminfo_name)
{
    return proxy_procfs_model_kb(p, meminfo_name) / PAGE_KB;
}

static unsigned long long free_pages(const struct proxy_process *p)
{
    return det_mem_free_bytes(&p->det->cfg) / 4096;
}

/* What the zone and node counters of vmstat say, from meminfo's figures. */
struct vm_pages {
    unsigned long long free, inactive_anon, active_anon, inactive_file,
        active_file, unevictable, write_pending, mlock, bounce, slab_r,
        slab_u, anon, mapped, file, dirty, writeback, writeback_tmp, shmem,
        misc_reclaimable, kernel_stack_kb, page_tables, swapcached;
};

static void vm_pages_of(const struct proxy_process *p, struct vm_pages *v)
{
    memset(v, 0, sizeof(*v));
    v->free = free_pages(p);
    v->inactive_anon = pages_of(p, "Inactive(anon)");
    v->active_anon = pages_of(p, "Active(anon)");
    v->inactive_file = pages_of(p, "Inactive(file)");
    v->active_file = pages_of(p, "Active(file)");
    v->unevictable = pages_of(p, "Unevictable");
    v->dirty = pages_of(p, "Dirty");
    v->writeback = pages_of(p, "Writeback");
    v->write_pending = v->dirty + v->writeback;
    v->mlock = pages_of(p, "Mlocked");
    v->bounce = pages_of(p, "Bounce");
    v->slab_r = pages_of(p, "SReclaimable");
    v->slab_u = pages_of(p, "SUnreclaim");
    v->anon = pages_of(p, "AnonPages");
    v->mapped = pages_of(p, "Mapped");
    /* meminfo's Cached is file pages less buffers and swap cache */
    v->file = pages_of(p, "Cached") + pages_of(p, "Buffers") +
              pages_of(p, "SwapCached");
    v->writeback_tmp = pages_of(p, "WritebackTmp");
    v->shmem = pages_of(p, "Shmem");
    /* KReclaimable is slab's reclaimable part plus this */
    v->misc_reclaimable =
        pages_of(p, "KReclaimable") > v->slab_r
            ? pages_of(p, "KReclaimable") - v->slab_r
            : 0;
    v->kernel_stack_kb = proxy_procfs_model_kb(p, "KernelStack");
    v->page_tables = pages_of(p, "PageTables");
    v->swapcached = pages_of(p, "SwapCached");
}

/* The event counters of Linux 6.12's vmstat_text after the zone, NUMA,
 * node and system-wide items, in its order (the options of a Debian
 * kernel for amd64: NUMA, NUMA balancing, swap, THP with PUD splits,
 * migration, compaction, hugetlb, CMA, balloon with compaction,
 * ZONE_DMA/DMA32/DEVICE, zswap, KSM, x86's direct map; no DEBUG_TLBFLUSH,
 * PER_VMA_LOCK_STATS or DEBUG_STACK_USAGE): all 0, no event counted. */
static const char *const vm_events[] = {
    "pgpgin", "pgpgout", "pswpin", "pswpout",
    "pgalloc_dma", "pgalloc_dma32", "pgalloc_normal", "pgalloc_movable",
    "pgalloc_device",
    "allocstall_dma", "allocstall_dma32", "allocstall_normal",
    "allocstall_movable", "allocstall_device",
    "pgskip_dma", "pgskip_dma32", "pgskip_normal", "pgskip_movable",
    "pgskip_device",
    "pgfree", "pgactivate", "pgdeactivate", "pglazyfree", "pgfault",
    "pgmajfault", "pglazyfreed", "pgrefill", "pgreuse", "pgsteal_kswapd",
    "pgsteal_direct", "pgsteal_khugepaged", "pgscan_kswapd",
    "pgscan_direct", "pgscan_khugepaged", "pgscan_direct_throttle",
    "pgscan_anon", "pgscan_file", "pgsteal_anon", "pgsteal_file",
    "zone_reclaim_failed", "pginodesteal", "slabs_scanned",
    "kswapd_inodesteal", "kswapd_low_wmark_hit_quickly",
    "kswapd_high_wmark_hit_quickly", "pageoutrun", "pgrotated",
    "drop_pagecache", "drop_slab", "oom_kill",
    "numa_pte_updates", "numa_huge_pte_updates", "numa_hint_faults",
    "numa_hint_faults_local", "numa_pages_migrated",
    "pgmigrate_success", "pgmigrate_fail", "thp_migration_success",
    "thp_migration_fail", "thp_migration_split",
    "compact_migrate_scanned", "compact_free_scanned", "compact_isolated",
    "compact_stall", "compact_fail", "compact_success", "compact_daemon_wake",
    "compact_daemon_migrate_scanned", "compact_daemon_free_scanned",
    "htlb_buddy_alloc_success", "htlb_buddy_alloc_fail",
    "cma_alloc_success", "cma_alloc_fail",
    "unevictable_pgs_culled", "unevictable_pgs_scanned",
    "unevictable_pgs_rescued", "unevictable_pgs_mlocked",
    "unevictable_pgs_munlocked", "unevictable_pgs_cleared",
    "unevictable_pgs_stranded",
    "thp_fault_alloc", "thp_fault_fallback", "thp_fault_fallback_charge",
    "thp_collapse_alloc", "thp_collapse_alloc_failed", "thp_file_alloc",
    "thp_file_fallback", "thp_file_fallback_charge", "thp_file_mapped",
    "thp_split_page", "thp_split_page_failed", "thp_deferred_split_page",
    "thp_underused_split_page", "thp_split_pmd", "thp_scan_exceed_none_pte",
    "thp_scan_exceed_swap_pte", "thp_scan_exceed_share_pte", "thp_split_pud",
    "thp_zero_page_alloc", "thp_zero_page_alloc_failed", "thp_swpout",
    "thp_swpout_fallback",
    "balloon_inflate", "balloon_deflate", "balloon_migrate",
    "swap_ra", "swap_ra_hit", "swpin_zero", "swpout_zero", "ksm_swpin_copy",
    "cow_ksm",
    "zswpin", "zswpout", "zswpwb",
    "direct_map_level2_splits", "direct_map_level3_splits",
};

static void vm_line(struct vbuf *b, const char *name, unsigned long long v)
{
    vb_printf(b, "%s %llu\n", name, v);
}

struct vm_item {
    const char *name;
    unsigned long long value;
};

/* Linux 6.12's zone stat items (enum zone_stat_item: ZSMALLOC and
 * UNACCEPTED_MEMORY configured), then the NUMA events; *n is how many. */
static void zone_items(const struct vm_pages *v, struct vm_item *out,
                       size_t *n)
{
    const struct vm_item items[] = {
        {"nr_free_pages", v->free},
        {"nr_zone_inactive_anon", v->inactive_anon},
        {"nr_zone_active_anon", v->active_anon},
        {"nr_zone_inactive_file", v->inactive_file},
        {"nr_zone_active_file", v->active_file},
        {"nr_zone_unevictable", v->unevictable},
        {"nr_zone_write_pending", v->write_pending},
        {"nr_mlock", v->mlock},
        {"nr_bounce", v->bounce},
        {"nr_zspages", 0},
        {"nr_free_cma", 0},
        {"nr_unaccepted", 0},
        {"numa_hit", 0},
        {"numa_miss", 0},
        {"numa_foreign", 0},
        {"numa_interleave", 0},
        {"numa_local", 0},
        {"numa_other", 0},
    };
    *n = sizeof(items) / sizeof(items[0]);
    memcpy(out, items, sizeof(items));
}

/* Linux 6.12's node stat items (enum node_stat_item: IOMMU_SUPPORT,
 * SWAP and NUMA_BALANCING configured; the demotion counts are node items
 * since 6.10). */
static void node_items(const struct vm_pages *v, struct vm_item *out,
                       size_t *n)
{
    const struct vm_item items[] = {
        {"nr_inactive_anon", v->inactive_anon},
        {"nr_active_anon", v->active_anon},
        {"nr_inactive_file", v->inactive_file},
        {"nr_active_file", v->active_file},
        {"nr_unevictable", v->unevictable},
        {"nr_slab_reclaimable", v->slab_r},
        {"nr_slab_unreclaimable", v->slab_u},
        {"nr_isolated_anon", 0},
        {"nr_isolated_file", 0},
        {"workingset_nodes", 0},
        {"workingset_refault_anon", 0},
        {"workingset_refault_file", 0},
        {"workingset_activate_anon", 0},
        {"workingset_activate_file", 0},
        {"workingset_restore_anon", 0},
        {"workingset_restore_file", 0},
        {"workingset_nodereclaim", 0},
        {"nr_anon_pages", v->anon},
        {"nr_mapped", v->mapped},
        {"nr_file_pages", v->file},
        {"nr_dirty", v->dirty},
        {"nr_writeback", v->writeback},
        {"nr_writeback_temp", v->writeback_tmp},
        {"nr_shmem", v->shmem},
        {"nr_shmem_hugepages", 0},
        {"nr_shmem_pmdmapped", 0},
        {"nr_file_hugepages", 0},
        {"nr_file_pmdmapped", 0},
        {"nr_anon_transparent_hugepages", 0},
        {"nr_vmscan_write", 0},
        {"nr_vmscan_immediate_reclaim", 0},
        {"nr_dirtied", 0},
        {"nr_written", 0},
        {"nr_throttled_written", 0},
        {"nr_kernel_misc_reclaimable", v->misc_reclaimable},
        {"nr_foll_pin_acquired", 0},
        {"nr_foll_pin_released", 0},
        {"nr_kernel_stack", v->kernel_stack_kb}, /* in kB, as Linux's */
        {"nr_page_table_pages", v->page_tables},
        {"nr_sec_page_table_pages", 0},
        {"nr_iommu_pages", 0},
        {"nr_swapcached", v->swapcached},
        {"pgpromote_success", 0},
        {"pgpromote_candidate", 0},
        {"pgdemote_kswapd", 0},
        {"pgdemote_direct", 0},
        {"pgdemote_khugepaged", 0},
    };
    *n = sizeof(items) / sizeof(items[0]);
    memcpy(out, items, sizeof(items));
}

#define VM_ITEMS_MAX 64

/* The pages holding the machine's struct pages: 64 bytes for each of its
 * 4 KiB pages. */
static unsigned long long memmap_pages(const struct proxy_process *p)
{
    unsigned long long pages = p->det->cfg.mem_total_bytes / 4096;
    return (pages * 64 + 4095) / 4096;
}

int proxy_procfs_gen_vmstat(struct proxy_process *p, struct vbuf *b)
{
    struct vm_pages v;
    struct vm_item items[VM_ITEMS_MAX];
    size_t n;
    vm_pages_of(p, &v);
    zone_items(&v, items, &n); /* the one zone holding the machine */
    for (size_t i = 0; i < n; i++)
        vm_line(b, items[i].name, items[i].value);
    node_items(&v, items, &n);
    for (size_t i = 0; i < n; i++)
        vm_line(b, items[i].name, items[i].value);
    /* writeback thresholds: vm.dirty_ratio 20 and dirty_background_ratio
     * 10 of what is dirtyable (free and file pages), as
     * global_dirty_limits computes them */
    unsigned long long dirtyable = v.free + v.inactive_file + v.active_file;
    vm_line(b, "nr_dirty_threshold", dirtyable * 20 / 100);
    vm_line(b, "nr_dirty_background_threshold", dirtyable * 10 / 100);
    /* the struct pages of the machine's memory (64 bytes a 4 KiB page):
     * all allocated at boot, none since (no memory was hot-added) */
    vm_line(b, "nr_memmap_pages", 0);
    vm_line(b, "nr_memmap_boot_pages", memmap_pages(p));
    for (size_t i = 0; i < sizeof(vm_events) / sizeof(vm_events[0]); i++)
        vm_line(b, vm_events[i], 0);
    vm_line(b, "nr_unstable", 0); /* kept for old tools, always 0 */
    return 0;
}

/* The one zone's free pages split by order (0 to 10) as buddyinfo and
 * zoneinfo show them: an idle machine's free memory in the largest
 * blocks, the pages that do not fill one at the smaller orders. */
static void free_by_order(const struct proxy_process *p,
                          unsigned long long counts[11])
{
    unsigned long long left = free_pages(p);
    for (int order = 10; order >= 0; order--) {
        counts[order] = left >> order;
        left -= counts[order] << order;
    }
}

/* Linux 6.1's buddyinfo: a line per populated zone; the run's machine has
 * one, Normal (DMA and DMA32 would hold the first 4 GiB of a host). */
int proxy_procfs_gen_buddyinfo(struct proxy_process *p, struct vbuf *b)
{
    unsigned long long counts[11];
    free_by_order(p, counts);
    vb_printf(b, "Node 0, zone %8s ", "Normal");
    for (int order = 0; order < 11; order++)
        vb_printf(b, "%6llu ", counts[order]);
    vb_printf(b, "\n");
    return 0;
}

/* fls(): the 1-based index of the highest set bit, 0 for none. */
static int fls_of(unsigned long long v)
{
    int n = 0;
    for (; v; v >>= 1)
        n++;
    return n;
}

/* Linux 6.12's zoneinfo (zoneinfo_show_print) of the one zone: the
 * node's items, the watermarks init_per_zone_wmark_min and
 * __setup_per_zone_wmarks give a machine of this size (promo a step above
 * high), the zone's items and each CPU's pageset (idle: empty, high at
 * high_min; high_min and high_max as zone_highsize gives them,
 * percpu_pagelist_high_fraction 0 and 8) with its stat threshold
 * (calculate_normal_threshold). */
int proxy_procfs_gen_zoneinfo(struct proxy_process *p, struct vbuf *b)
{
    struct vm_pages v;
    struct vm_item items[VM_ITEMS_MAX];
    size_t n;
    vm_pages_of(p, &v);
    unsigned long long total = p->det->cfg.mem_total_bytes / 4096;
    unsigned long long min_kb = 128;
    while ((min_kb + 1) * (min_kb + 1) <= (total * PAGE_KB) * 16)
        min_kb++; /* int_sqrt(lowmem_kbytes * 16) */
    if (min_kb > 262144)
        min_kb = 262144;
    unsigned long long min = min_kb / PAGE_KB;
    unsigned long long step = total * 10 / 10000; /* watermark_scale_factor */
    if (step < min / 4)
        step = min / 4;
    vb_printf(b, "Node 0, zone %8s", "Normal");
    vb_printf(b, "\n  per-node stats");
    node_items(&v, items, &n);
    for (size_t i = 0; i < n; i++)
        vb_printf(b, "\n      %-12s %llu", items[i].name, items[i].value);
    vb_printf(b,
              "\n  pages free     %llu"
              "\n        boost    %d"
              "\n        min      %llu"
              "\n        low      %llu"
              "\n        high     %llu"
              "\n        promo    %llu"
              "\n        spanned  %llu"
              "\n        present  %llu"
              "\n        managed  %llu"
              "\n        cma      %d"
              "\n        protection: (0, 0, 0, 0, 0)",
              v.free, 0, min, min + step, min + 2 * step, min + 3 * step,
              total, total, total, 0);
    zone_items(&v, items, &n);
    for (size_t i = 0; i < n; i++)
        vb_printf(b, "\n      %-12s %llu", items[i].name, items[i].value);
    const int batch = 63;
    unsigned long long high_min = (min + step) / DET_NR_CPUS;
    unsigned long long high_max = total / 8 / DET_NR_CPUS;
    if (high_min < 4 * batch)
        high_min = 4 * batch;
    if (high_max < 4 * batch)
        high_max = 4 * batch;
    int threshold = 2 * fls_of(DET_NR_CPUS) * (1 + fls_of(total >> 15));
    if (threshold > 125)
        threshold = 125;
    vb_printf(b, "\n  pagesets");
    for (int cpu = 0; cpu < DET_NR_CPUS; cpu++)
        vb_printf(b,
                  "\n    cpu: %i"
                  "\n              count:    %i"
                  "\n              high:     %llu"
                  "\n              batch:    %i"
                  "\n              high_min: %llu"
                  "\n              high_max: %llu"
                  "\n  vm stats threshold: %d",
                  cpu, 0, high_min, batch, high_min, high_max, threshold);
    vb_printf(b,
              "\n  node_unreclaimable:  %u"
              "\n  start_pfn:           %lu\n",
              0u, 0x100000UL); /* at 4 GiB, where Normal starts */
    return 0;
}

/* Linux 6.1's slabinfo is root's (0400: proxy_procfs_root_only). The run's
 * machine shows no cache (its kernel memory is meminfo's Slab figure,
 * not lines of the host's allocator). */
int proxy_procfs_gen_slabinfo(struct proxy_process *p, struct vbuf *b)
{
    (void)p;
    vb_printf(b, "slabinfo - version: 2.1\n"
                 "# name            <active_objs> <num_objs> <objsize> "
                 "<objperslab> <pagesperslab> : tunables <limit> "
                 "<batchcount> <sharedfactor> : slabdata <active_slabs> "
                 "<num_slabs> <sharedavail>\n");
    return 0;
}

/* Linux 6.1's pagetypeinfo (root's, 0400: proxy_procfs_root_only): the one zone's free pages
 * (free_by_order), all of the Movable type, and its page blocks, all
 * Movable: the run has no allocator whose types it could show. */
int proxy_procfs_gen_pagetypeinfo(struct proxy_process *p, struct vbuf *b)
{
    static const char *const types[] = {"Unmovable", "Movable",
                                        "Reclaimable", "HighAtomic", "CMA",
                                        "Isolate"};
    const size_t nr_types = sizeof(types) / sizeof(types[0]);
    unsigned long long counts[11];
    free_by_order(p, counts);
    vb_printf(b, "Page block order: %d\nPages per block:  %d\n\n", 9, 512);
    vb_printf(b, "%-43s ", "Free pages count per migrate type at order");
    for (int order = 0; order < 11; order++)
        vb_printf(b, "%6d ", order);
    vb_printf(b, "\n");
    for (size_t t = 0; t < nr_types; t++) {
        vb_printf(b, "Node %4d, zone %8s, type %12s ", 0, "Normal", types[t]);
        for (int order = 0; order < 11; order++)
            vb_printf(b, "%6llu ", t == 1 ? counts[order] : 0ULL);
        vb_printf(b, "\n");
    }
    vb_printf(b, "\n%-23s", "Number of blocks type ");
    for (size_t t = 0; t < nr_types; t++)
        vb_printf(b, "%12s ", types[t]);
    vb_printf(b, "\nNode %d, zone %8s ", 0, "Normal");
    unsigned long long blocks = p->det->cfg.mem_total_bytes / 4096 / 512;
    for (size_t t = 0; t < nr_types; t++)
        vb_printf(b, "%12llu ", t == 1 ? blocks : 0ULL);
    vb_printf(b, "\n");
    return 0;
}

/* Linux 6.1's diskstats: the host's block devices (their numbers and
 * names, as /proc/partitions and /sys/block show them) with nothing
 * counted: their I/O counts are the host's other work, which moves. */
int proxy_procfs_gen_diskstats(struct proxy_process *p, struct vbuf *b)
{
    (void)p;
    FILE *f = fopen("/proc/diskstats", "re");
    if (!f)
        return 0;
    char line[512], name[64];
    unsigned major, minor;
    while (fgets(line, sizeof(line), f)) {
        if (sscanf(line, "%u %u %63s", &major, &minor, name) != 3)
            continue;
        vb_printf(b, "%4u %7u %s", major, minor, name);
        for (int i = 0; i < 17; i++)
            vb_printf(b, " 0");
        vb_printf(b, "\n");
    }
    fclose(f);
    return 0;
}

/* Linux 6.1's interrupts for one CPU: the x86 rows of arch_show_interrupts
 * with nothing counted (a device's rows name host hardware). */
int proxy_procfs_gen_interrupts(struct proxy_process *p, struct vbuf *b)
{
    (void)p;
    static const struct {
        const char *name, *what;
    } rows[] = {
        {"NMI", "Non-maskable interrupts"},
        {"LOC", "Local timer interrupts"},
        {"SPU", "Spurious interrupts"},
        {"PMI", "Performance monitoring interrupts"},
        {"IWI", "IRQ work interrupts"},
        {"RTR", "APIC ICR read retries"},
        {"RES", "Rescheduling interrupts"},
        {"CAL", "Function call interrupts"},
        {"TLB", "TLB shootdowns"},
        {"TRM", "Thermal event interrupts"},
        {"THR", "Threshold APIC interrupts"},
        {"DFR", "Deferred Error APIC interrupts"},
        {"MCE", "Machine check exceptions"},
        {"MCP", "Machine check polls"},
        {"HYP", "Hypervisor callback interrupts"},
    };
    vb_printf(b, "%*s", 11, ""); /* the name's 3 columns, 8 more */
    for (int cpu = 0; cpu < DET_NR_CPUS; cpu++)
        vb_printf(b, "CPU%-8d", cpu);
    vb_printf(b, "\n");
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        vb_printf(b, "%3s: ", rows[i].name);
        for (int cpu = 0; cpu < DET_NR_CPUS; cpu++)
            vb_printf(b, "%10u ", 0u);
        vb_printf(b, "  %s\n", rows[i].what);
    }
    vb_printf(b, "ERR:%11u\nMIS:%11u\n", 0u, 0u);
    return 0;
}

/* Linux 6.1's softirqs (fs/proc/softirqs.c) for one CPU, nothing counted. */
int proxy_procfs_gen_softirqs(struct proxy_process *p, struct vbuf *b)
{
    (void)p;
    static const char *const names[] = {"HI",      "TIMER",   "NET_TX",
                                        "NET_RX",  "BLOCK",   "IRQ_POLL",
                                        "TASKLET", "SCHED",   "HRTIMER",
                                        "RCU"};
    vb_printf(b, "%*s", 20, "");
    for (int cpu = 0; cpu < DET_NR_CPUS; cpu++)
        vb_printf(b, "CPU%-8d", cpu);
    vb_printf(b, "\n");
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        vb_printf(b, "%12s:", names[i]);
        for (int cpu = 0; cpu < DET_NR_CPUS; cpu++)
            vb_printf(b, " %10u", 0u);
        vb_printf(b, "\n");
    }
    return 0;
}

/* /proc/sys/fs/file-nr: allocated files, 0 (always, since 2.6) and
 * file-max. file-max is what files_maxfiles_init gives the machine (a
 * tenth of its memory in kB); the allocated count is a fixed figure of an
 * idle machine, not the run's open files (docs/DETERMINISM.md). */
int proxy_procfs_gen_file_nr(struct proxy_process *p, struct vbuf *b)
{
    unsigned long long max = (p->det->cfg.mem_total_bytes >> 10) / 10;
    vb_printf(b, "%u\t%u\t%llu\n", 1024u, 0u, max);
    return 0;
}

/* /proc/sys/fs/inode-nr and inode-state: inodes in use and free; the
 * state's last five fields are unused and 0. Fixed (as file-nr). */
int proxy_procfs_gen_inode_nr(struct proxy_process *p, struct vbuf *b)
{
    (void)p;
    vb_printf(b, "%u\t%u\n", 65536u, 0u);
    return 0;
}

int proxy_procfs_gen_inode_state(struct proxy_process *p, struct vbuf *b)
{
    (void)p;
    vb_printf(b, "%u\t%u\t0\t0\t0\t0\t0\n", 65536u, 0u);
    return 0;
}

/* /proc/sys/fs/dentry-state: dentries, unused ones, age_limit 45,
 * want_pages 0, negative ones, 0. Fixed (as inode-nr). */
int proxy_procfs_gen_dentry_state(struct proxy_process *p, struct vbuf *b)
{
    (void)p;
    vb_printf(b, "%u\t%u\t%u\t%u\t%u\t%u\n", 65536u, 32768u, 45u, 0u, 0u,
              0u);
    return 0;
}

/* /proc/pressure/{cpu,memory,io} (PSI, kernel/sched/psi.c): no task of
 * the run's machine is counted as stalled (the host's are the host's
 * other work), so both lines are 0. */
int proxy_procfs_gen_pressure(struct proxy_process *p, struct vbuf *b)
{
    (void)p;
    for (int i = 0; i < 2; i++)
        vb_printf(b, "%s avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
                  i ? "full" : "some");
    return 0;
}

/* /proc/sys/kernel/ns_last_pid: the last pid handed out in the run (the
 * figure /proc/loadavg's last field shows). */
int proxy_procfs_gen_ns_last_pid(struct proxy_process *p, struct vbuf *b)
{
    vb_printf(b, "%d\n", proxy_procfs_last_pid(p));
    return 0;
}

static long long clock_ns_of(struct proxy_process *p, int clockid)
{
    struct timespec ts;
    if (det_clock_gettime(p->det, clockid, &ts) < 0)
        return 0;
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#define KTIME_MAX 9223372036854775807LL
#define INITIAL_JIFFIES 4294892296ULL /* (unsigned int)(-300 * HZ), HZ 250 */
#define NS_PER_JIFFY 4000000LL

/*
 * /proc/timer_list (kernel/time/timer_list.c, Linux 6.12; root's, 0400):
 * the run's one CPU, its 8 hrtimer clock bases (MONOTONIC, REALTIME,
 * BOOTTIME, TAI and their soft twins) with the offsets of the run's
 * clocks and no active timer listed, an idle tick that has counted
 * nothing, and no clock event device (the run's machine has no local
 * APIC whose figures it could show). now and jiffies are the run's
 * CLOCK_MONOTONIC. The host's lists its own timers and counters.
 */
int proxy_procfs_gen_timer_list(struct proxy_process *p, struct vbuf *b)
{
    long long now = clock_ns_of(p, CLOCK_MONOTONIC);
    long long real_off = clock_ns_of(p, CLOCK_REALTIME) - now;
    long long boot_off = clock_ns_of(p, CLOCK_BOOTTIME) - now;
    const long long offsets[4] = {0, real_off, boot_off, real_off};
    unsigned long long jiffies =
        INITIAL_JIFFIES + (unsigned long long)(now / NS_PER_JIFFY);
    vb_printf(b, "Timer List Version: v0.10\nHRTIMER_MAX_CLOCK_BASES: %d\n"
                 "now at %lld nsecs\n\n", 8, now);
    for (int cpu = 0; cpu < DET_NR_CPUS; cpu++) {
        vb_printf(b, "cpu: %d\n", cpu);
        for (int i = 0; i < 8; i++)
            vb_printf(b, " clock %d:\n  .base:       %016x\n"
                         "  .index:      %d\n  .resolution: %u nsecs\n"
                         "  .offset:     %llu nsecs\nactive timers:\n",
                      i, 0u, i, 1u, (unsigned long long)offsets[i % 4]);
        const struct {
            const char *name;
            long long value;
            bool ns;
        } fields[] = {
            {"expires_next", KTIME_MAX, true}, {"hres_active", 1, false},
            {"nr_events", 0, false}, {"nr_retries", 0, false},
            {"nr_hangs", 0, false}, {"max_hang_time", 0, false},
            {"nohz", 1, false}, {"highres", 1, false},
            {"last_tick", 0, true}, {"tick_stopped", 0, false},
            {"idle_jiffies", 0, false}, {"idle_calls", 0, false},
            {"idle_sleeps", 0, false}, {"idle_entrytime", 0, true},
            {"idle_waketime", 0, true}, {"idle_exittime", 0, true},
            {"idle_sleeptime", 0, true}, {"iowait_sleeptime", 0, true},
            {"last_jiffies", (long long)jiffies, false},
            {"next_timer", KTIME_MAX, false}, {"idle_expires", 0, true},
        };
        for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
            vb_printf(b, "  .%-15s: %llu%s\n", fields[i].name,
                      (unsigned long long)fields[i].value,
                      fields[i].ns ? " nsecs" : "");
        vb_printf(b, "jiffies: %llu\n\n", jiffies);
    }
    vb_printf(b, "Tick Device: mode:     1\nBroadcast device\n"
                 "Clock Event Device: <NULL>\ntick_broadcast_mask: 0\n"
                 "tick_broadcast_oneshot_mask: 0\n\n");
    for (int cpu = 0; cpu < DET_NR_CPUS; cpu++)
        vb_printf(b, "Tick Device: mode:     1\nPer CPU device: %d\n"
                     "Clock Event Device: <NULL>\n\n", cpu);
    return 0;
}

/* /sys/block/DEV/stat and DEV/PART/stat (block/genhd.c's part_stat_show,
 * Linux 6.12): nothing counted, as diskstats. */
int proxy_sysfs_gen_block_stat(struct proxy_process *p, struct vbuf *b)
{
    (void)p;
    for (int i = 0; i < 17; i++)
        vb_printf(b, "%8u%s", 0u, i < 16 ? " " : "\n");
    return 0;
}

/* .../inflight (part_inflight_show): nothing in flight. */
int proxy_sysfs_gen_block_inflight(struct proxy_process *p, struct vbuf *b)
{
    (void)p;
    vb_printf(b, "%8u %8u\n", 0u, 0u);
    return 0;
}
