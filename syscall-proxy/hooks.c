/*
 * hooks.c - fills hooks.h's table of upward calls with the higher
 * folders' functions. At the top level, above every folder, so it may
 * include them all.
 */
#include "hooks.h"
#include "fs.h"
#include "vfs.h"
#include "io.h"
#include "mm.h"
#include "net.h"

const struct proxy_hooks proxy_hooks = {
    .vdso_enter = proxy_vdso_enter,
    .vdso_leave = proxy_vdso_leave,
    .vdso_unfolded = proxy_vdso_unfolded,
    .vdso_unlogged = proxy_vdso_unlogged,
    .progress_enter = proxy_progress_enter,
    .progress_leave = proxy_progress_leave,
    .progress_unfolded = proxy_progress_unfolded,
    .progress_home = proxy_progress_home,
    .progress_written = proxy_progress_written,
    .vdso_count_spent = proxy_vdso_count_spent,
    .cpuid_trap = proxy_cpuid_trap,
    .cpuid_tsc_faulting = proxy_cpuid_tsc_faulting,
    .cpuid_traced = proxy_cpuid_traced,
    .cpuid_call_site = proxy_cpuid_call_site,
    .cpuid_sig_stub_fault = proxy_cpuid_sig_stub_fault,
    .vdso_signals_back = proxy_vdso_signals_back,
    .cpuid_join_texts = proxy_cpuid_join_texts,
    .cpuid_fork = proxy_cpuid_fork,
    .cpuid_share = proxy_cpuid_share,
    .cpuid_exec_begin = proxy_cpuid_exec_begin,
    .cpuid_exec_end = proxy_cpuid_exec_end,
    .exec_missing = proxy_exec_missing,
    .mm_grow_down = proxy_mm_grow_down,
    .vfs_virtual_path = proxy_vfs_virtual_path,
    .exec_load = proxy_exec_load,
    .mem_check_oom = proxy_mem_check_oom,
    .core_dump = proxy_core_dump,
    .aio_release = proxy_aio_release,
    .tty_world_init = proxy_tty_world_init,
    .tty_world_free = proxy_tty_world_free,
    .tty_setsid = proxy_tty_setsid,
    .tty_exit = proxy_tty_exit,
    .outside_pump = proxy_outside_pump,
    .outside_idle_feed = proxy_outside_idle_feed,
    .outside_poll_fds = proxy_outside_poll_fds,
    .outside_await = proxy_outside_await,
    .outside_free = proxy_outside_free,
    .inet_ports_free = proxy_net_inet_ports_free,
    .path_rewrite = proxy_path_rewrite,
    .procfile_ns = proxy_procfile_ns,
    .file_tap_replayed = proxy_file_tap_replayed,
    .file_tap_note = proxy_file_tap_note,
    .file_tap_restat = proxy_file_tap_restat,
    .fifo_end_in_run = proxy_fifo_end_in_run,
    .fifo_writer_opened = proxy_fifo_writer_opened,
    .lease_break = proxy_lease_break,
    .tty_opened = proxy_tty_opened,
    .tty_open_current = proxy_tty_open_current,
    .tty_nr = proxy_tty_nr,
    .tty_fg_pgrp = proxy_tty_fg_pgrp,
    .outside_fifo_maybe = proxy_outside_fifo_maybe,
    .outside_fifo_open = proxy_outside_fifo_open,
    .netdev_ioctl_is = proxy_netdev_ioctl_is,
    .netdev_ioctl = proxy_netdev_ioctl,
};
