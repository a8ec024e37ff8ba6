/*
 * fs_state.h - fs/'s part of struct proxy_process (proxy.h): the guest's
 * cwd and umask, the fdinfo name being opened, and its private /tmp. A
 * field of it is added here, and only here. Part of the core proxy.h
 * builds on, so it includes nothing of syscall-proxy but other part
 * headers (tests/lint/include_graph.py).
 */
#ifndef PROXY_FS_STATE_H
#define PROXY_FS_STATE_H

#include <stdbool.h>
#include <sys/types.h>

#define PROXY_PATH_MAX 4096

struct proxy_fs_state {
    int cwd_fd;                 /* host O_PATH fd of the guest cwd */
    /* The guest fd the last /proc/self/fdinfo/N path named (fs.c's
     * rewrite to the host fd): dups share a host fd, so the host number
     * alone does not say whose close-on-exec bit fdinfo shows (vfs.c). */
    int fdinfo_guest_fd;
    /* The guest process whose /proc/N/ns/NAME the last path named (fs.c
     * rewrites it to /proc/self/ns/NAME, which the host has): the ns file
     * is that process's (vfs.c), 0 for the caller's own. */
    int ns_of_pid;
    /* The guest process whose /proc/N/exe the last path named, not
     * followed (fs.c's PATH_GUEST_EXE): readlink answers its program. */
    int exe_of_pid;
    /* The guest process and entry ("START-END") of the /proc/N/map_files
     * link the last path named, not followed (fs.c's PATH_MAP_FILE_LINK):
     * readlink answers the mapped file's name, lstat the link's mode. */
    int map_file_pid;
    /* The guest process whose /proc/N/cwd the last path named, not
     * followed (fs.c's PATH_CWD_LINK): stat names its link, not the host
     * fd standing for it, whose number differs between runs. */
    int cwd_link_pid;
    char map_file_entry[40];
    mode_t umask;
    /* Which fs_struct: processes made with clone(CLONE_FS) share the cwd
     * and umask (kernel/procsys.c keeps them in step), as their threads
     * do; 0 for the first process's, then one more for each made (a
     * fork without CLONE_FS, an unshare(CLONE_FS) of a shared one) in the
     * run's order (kcmp's KCMP_FS order). */
    uint64_t fs_id;
    /* the private /tmp (hermetic.c): guest /tmp is this host directory;
     * empty when there is none. tmp_owned: hvrun made it and deletes it. */
    char tmp_host[PROXY_PATH_MAX];
    bool tmp_owned;
    char tmp_top[PROXY_PATH_MAX]; /* owned: the scratch dir holding it */
    int tmp_lock_fd;              /* owned: its lock (scratch.c) */
};

#endif
