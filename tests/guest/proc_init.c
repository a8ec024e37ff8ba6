/*
 * proc_init.c - /proc/1 of hvrun's virtual init (issue 27's pid model:
 * the first process is pid 2, pid 1 is an init that is no guest process).
 * Self-checking, run under hvrun only (natively pid 1 is the host's init;
 * tests/run-guest-tests.sh, HVRUN_ONLY_PROGRAMS): prints one "ok" line per
 * check, or "FAIL ..." and exits 1 at the first mismatch. Checks:
 *  - /proc lists 1, before the program's own pid 2;
 *  - stat("/proc/1") is a directory; its listing names the entries;
 *  - readlink of exe is /sbin/init, of cwd and root "/" (also by
 *    readlinkat(fd, "") of an O_PATH|O_NOFOLLOW fd of the link); followed,
 *    exe leads to /sbin/init (stat: the same file, or ENOENT for both),
 *    cwd and root to "/" (hvrun: EACCES for exe, so lsof -p 1 printed
 *    "stat: Permission denied");
 *  - to a caller that dropped root the links are EACCES, read or
 *    followed, lstat still a link (hvrun read them);
 *  - comm is "init\n", cmdline "/sbin/init\0";
 *  - statm's size and resident are stat's vsize and rss (hvrun had no
 *    statm: top showed init's sizes as 0);
 *  - stat's pid, comm, state, ppid, pgrp and session are 1 (init) S 0 1 1;
 *  - status's Name, State, Tgid, Pid, PPid and Uid lines;
 *  - task/ lists 1, and task/1/comm reads as comm;
 *  - fd/ is EACCES to a non-root caller and empty to root;
 *  - /proc/1/nonexistent and /proc/1/ns are ENOENT; comm opened for
 *    writing is EACCES.
 * Run as pid 1 (--as-init) there is no virtual init: prints SKIP.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <grp.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define SHELL_PID 32767 /* hvrun's virtual shell, the first process's parent */

static void expect(bool ok, const char *what, const char *got)
{
    if (!ok) {
        printf("FAIL %s: got \"%s\"\n", what, got);
        exit(1);
    }
    printf("ok %s\n", what);
}

static void expect_errno(long rc, int want, const char *what)
{
    int got = rc < 0 ? errno : 0;
    expect(rc < 0 && got == want, what,
           rc < 0 ? strerrorname_np(got) : "success");
}

/* The whole of a small file, NULs kept; its length. */
static size_t read_file(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    ssize_t n = read(fd, buf, cap - 1);
    CHECK(n >= 0);
    close(fd);
    buf[n] = '\0';
    return (size_t)n;
}

/* The names of a directory, space separated, without "." and "..". */
static void list_dir(const char *path, char *out, size_t cap)
{
    DIR *d = opendir(path);
    CHECK(d != NULL);
    size_t len = 0;
    out[0] = '\0';
    for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        int n = snprintf(out + len, cap - len, "%s%s", len ? " " : "",
                         e->d_name);
        CHECK(n > 0 && (size_t)n < cap - len);
        len += (size_t)n;
    }
    closedir(d);
}

/* The position of word in a space-separated list, or -1. */
static int word_index(const char *list, const char *word)
{
    int i = 0;
    for (const char *s = list; *s; i++) {
        size_t n = strcspn(s, " ");
        if (n == strlen(word) && strncmp(s, word, n) == 0)
            return i;
        s += n;
        s += *s == ' ';
    }
    return -1;
}

static void check_listing(void)
{
    static char names[65536];
    list_dir("/proc", names, sizeof(names));
    int init_at = word_index(names, "1"), self_at = word_index(names, "2");
    expect(init_at >= 0, "/proc lists 1", names);
    expect(self_at >= 0, "/proc lists the first process, 2", names);
    expect(init_at < self_at, "/proc lists 1 before 2", names);
    struct stat st;
    CHECK(stat("/proc/1", &st) == 0);
    expect(S_ISDIR(st.st_mode), "stat /proc/1 is a directory", "not one");
    list_dir("/proc/1", names, sizeof(names));
    expect(strcmp(names,
                  "task fd status comm cmdline stat statm cwd root exe") == 0,
           "/proc/1 lists its entries", names);
}

static void check_links(void)
{
    static const struct {
        const char *path, *target;
    } links[] = {{"/proc/1/exe", "/sbin/init"},
                 {"/proc/1/cwd", "/"},
                 {"/proc/1/root", "/"}};
    for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
        char buf[256], what[64];
        ssize_t n = readlink(links[i].path, buf, sizeof(buf) - 1);
        CHECK(n >= 0);
        buf[n] = '\0';
        snprintf(what, sizeof(what), "readlink %s is %s", links[i].path,
                 links[i].target);
        expect(strcmp(buf, links[i].target) == 0, what, buf);
    }
    struct stat st, want;
    int rc = stat("/proc/1/exe", &st), want_rc = stat("/sbin/init", &want);
    expect(rc == want_rc &&
               (rc < 0 ? errno == ENOENT
                       : st.st_ino == want.st_ino && st.st_dev == want.st_dev),
           "stat /proc/1/exe (followed) is stat /sbin/init",
           rc < 0 ? strerrorname_np(errno) : "another file");
    CHECK(stat("/", &want) == 0);
    CHECK(stat("/proc/1/cwd", &st) == 0);
    expect(st.st_ino == want.st_ino && st.st_dev == want.st_dev,
           "stat /proc/1/cwd (followed) is stat /", "another file");
    CHECK(stat("/proc/1/root/.", &st) == 0);
    expect(st.st_ino == want.st_ino && st.st_dev == want.st_dev,
           "stat /proc/1/root/. is stat /", "another file");
    int fd = open("/proc/1/exe", O_PATH | O_NOFOLLOW);
    CHECK(fd >= 0);
    char buf[256];
    ssize_t n = readlinkat(fd, "", buf, sizeof(buf) - 1);
    buf[n > 0 ? n : 0] = '\0';
    expect(n > 0 && strcmp(buf, "/sbin/init") == 0,
           "readlinkat of an O_PATH fd of /proc/1/exe is /sbin/init", buf);
    close(fd);
}

/* A caller that dropped root may not ptrace root's init: its links are
 * EACCES, read or followed (an fd opened before the drop too), but lstat
 * shows them. */
static void check_links_unprivileged(void)
{
    int held = open("/proc/1/exe", O_PATH | O_NOFOLLOW);
    CHECK(held >= 0);
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        CHECK(setgroups(0, NULL) == 0);
        CHECK(setresgid(65534, 65534, 65534) == 0);
        CHECK(setresuid(65534, 65534, 65534) == 0);
        static const char *const links[] = {"/proc/1/exe", "/proc/1/cwd",
                                            "/proc/1/root"};
        char buf[256], what[96];
        struct stat st;
        for (size_t i = 0; i < 3; i++) {
            snprintf(what, sizeof(what), "readlink %s dropped root is EACCES",
                     links[i]);
            expect_errno(readlink(links[i], buf, sizeof(buf)), EACCES, what);
            snprintf(what, sizeof(what), "stat %s dropped root is EACCES",
                     links[i]);
            expect_errno(stat(links[i], &st), EACCES, what);
            snprintf(what, sizeof(what), "lstat %s dropped root is a link",
                     links[i]);
            expect(lstat(links[i], &st) == 0 && S_ISLNK(st.st_mode), what,
                   strerrorname_np(errno));
        }
        expect_errno(stat("/proc/1/root/etc", &st), EACCES,
                     "stat /proc/1/root/etc dropped root is EACCES");
        expect_errno(readlinkat(held, "", buf, sizeof(buf)), EACCES,
                     "readlinkat of a held O_PATH fd of /proc/1/exe dropped "
                     "root is EACCES");
        fflush(stdout);
        _exit(0);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(held);
}

static void check_comm_cmdline(void)
{
    char buf[512];
    read_file("/proc/1/comm", buf, sizeof(buf));
    expect(strcmp(buf, "init\n") == 0, "/proc/1/comm is init", buf);
    size_t n = read_file("/proc/1/cmdline", buf, sizeof(buf));
    expect(n == sizeof("/sbin/init") && memcmp(buf, "/sbin/init", n) == 0,
           "/proc/1/cmdline is /sbin/init and its NUL", buf);
    read_file("/proc/1/task/1/comm", buf, sizeof(buf));
    expect(strcmp(buf, "init\n") == 0, "/proc/1/task/1/comm is init", buf);
}

static void check_stat(void)
{
    char buf[1024], comm[32], state;
    read_file("/proc/1/stat", buf, sizeof(buf));
    int pid, ppid, pgrp, sid;
    int got = sscanf(buf, "%d %31s %c %d %d %d", &pid, comm, &state, &ppid,
                     &pgrp, &sid);
    buf[strcspn(buf, "\n")] = '\0';
    expect(got == 6 && pid == 1 && strcmp(comm, "(init)") == 0 &&
               state == 'S' && ppid == 0 && pgrp == 1 && sid == 1,
           "/proc/1/stat starts 1 (init) S 0 1 1", buf);
}

/* statm's sizes are stat's (vsize in bytes, rss in pages): ps and top
 * read either */
static void check_statm(void)
{
    char buf[1024];
    read_file("/proc/1/statm", buf, sizeof(buf));
    unsigned long size, resident, shared, text, lib, data, dt;
    int got = sscanf(buf, "%lu %lu %lu %lu %lu %lu %lu", &size, &resident,
                     &shared, &text, &lib, &data, &dt);
    char stat[1024];
    read_file("/proc/1/stat", stat, sizeof(stat));
    const char *s = strrchr(stat, ')');
    unsigned long vsize = 0;
    long rss = 0;
    CHECK(s && sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
                             "%*u %*u %*d %*d %*d %*d %*d %*d %*u %lu %ld",
                      &vsize, &rss) == 2);
    buf[strcspn(buf, "\n")] = '\0';
    expect(got == 7 && size > 0 && size * 4096 == vsize &&
               resident == (unsigned long)rss && resident <= size,
           "/proc/1/statm's size and resident are stat's", buf);
}

static void check_status(void)
{
    static const char *const lines[] = {
        "Name:\tinit\n", "State:\tS (sleeping)\n", "Tgid:\t1\n",
        "Pid:\t1\n",     "PPid:\t0\n",             "Uid:\t0\t0\t0\t0\n",
    };
    char buf[8192];
    read_file("/proc/1/status", buf, sizeof(buf));
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        char what[64];
        snprintf(what, sizeof(what), "/proc/1/status has %.*s",
                 (int)strcspn(lines[i], "\n"), lines[i]);
        for (char *c = what; *c; c++)
            if (*c == '\t')
                *c = ' ';
        expect(strstr(buf, lines[i]) != NULL, what, "(no such line)");
    }
}

static void check_dirs(void)
{
    char names[256];
    list_dir("/proc/1/task", names, sizeof(names));
    expect(strcmp(names, "1") == 0, "/proc/1/task lists 1", names);
    int fd = open("/proc/1/fd", O_RDONLY | O_DIRECTORY);
    if (geteuid() != 0) {
        expect_errno(fd, EACCES, "/proc/1/fd is EACCES to a non-root caller");
        return;
    }
    CHECK(fd >= 0);
    close(fd);
    list_dir("/proc/1/fd", names, sizeof(names));
    expect(names[0] == '\0', "/proc/1/fd is empty to root", names);
}

static void check_absent(void)
{
    expect_errno(open("/proc/1/nonexistent", O_RDONLY), ENOENT,
                 "open /proc/1/nonexistent is ENOENT");
    expect_errno(open("/proc/1/environ", O_RDONLY), ENOENT,
                 "open /proc/1/environ is ENOENT");
    struct stat st;
    expect_errno(stat("/proc/1/ns", &st), ENOENT, "stat /proc/1/ns is ENOENT");
    expect_errno(open("/proc/1/comm", O_WRONLY), EACCES,
                 "open /proc/1/comm for writing is EACCES");
}

int main(void)
{
    if (getpid() == 1) {
        printf("SKIP proc_init: this process is pid 1 (--as-init)\n");
        return 0;
    }
    char ppid[16];
    snprintf(ppid, sizeof(ppid), "%d", (int)getppid());
    expect(getpid() == 2 && getppid() == SHELL_PID,
           "the first process is pid 2, the virtual shell's child", ppid);
    check_listing();
    check_links();
    if (geteuid() == 0)
        check_links_unprivileged();
    check_comm_cmdline();
    check_stat();
    check_statm();
    check_status();
    check_dirs();
    check_absent();
    return 0;
}
