/*
 * test_scratch.c - hvrun's scratch directories in /tmp (syscall-proxy/
 * fs/scratch.c: made 0700 with a held lock; the sweep removes only those of
 * runs that are gone) and --verify's binary journal (journal.c: any name,
 * newlines included, round-trips; a torn last record is dropped).
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "journal.h"
#include "fs.h"

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

Test(scratch, made_private_and_locked)
{
    char dir[] = "/tmp/hvrun-verify.XXXXXX";
    int lock;
    cr_assert_eq(proxy_scratch_make(dir, &lock), 0);
    struct stat st;
    cr_assert_eq(lstat(dir, &st), 0);
    cr_expect_eq(st.st_mode & 07777, 0700);
    cr_expect_eq(st.st_uid, geteuid());
    char path[128];
    snprintf(path, sizeof(path), "%s/lock", dir);
    cr_expect(exists(path));
    proxy_scratch_sweep(); /* ours, live: kept */
    cr_expect(exists(dir));
    proxy_scratch_remove(dir, lock);
    cr_expect(!exists(dir));
}

/* A directory whose run died (the lock holder exited) goes; a symlink of
 * the pattern and a directory that is not 0700 stay. */
Test(scratch, sweep_removes_only_abandoned)
{
    char dead[] = "/tmp/hvrun-tmp.XXXXXX";
    pid_t pid = fork();
    if (pid == 0) {
        int lock;
        if (proxy_scratch_make(dead, &lock) < 0)
            _exit(1);
        char f[128];
        snprintf(f, sizeof(f), "%s/tmp", dead);
        mkdir(f, 0700);
        int fd = open("/tmp/hvrun-test-scratch-name",
                      O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || write(fd, dead, sizeof(dead)) != (ssize_t)sizeof(dead))
            _exit(1);
        _exit(0); /* as if SIGKILLed: nothing cleaned */
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert_eq(status, 0);
    int fd = open("/tmp/hvrun-test-scratch-name", O_RDONLY);
    cr_assert_geq(fd, 0);
    cr_assert_eq(read(fd, dead, sizeof(dead)), (ssize_t)sizeof(dead));
    close(fd);
    unlink("/tmp/hvrun-test-scratch-name");
    cr_assert(exists(dead));

    char target[] = "/tmp/hvrun-test-target.XXXXXX";
    cr_assert_not_null(mkdtemp(target));
    char link[] = "/tmp/hvrun-verify.LnKtst";
    unlink(link);
    cr_assert_eq(symlink(target, link), 0);
    char lockpath[128];
    snprintf(lockpath, sizeof(lockpath), "%s/lock", target);
    close(open(lockpath, O_WRONLY | O_CREAT, 0600));

    char open_mode[] = "/tmp/hvrun-verify.XXXXXX";
    int lock;
    cr_assert_eq(proxy_scratch_make(open_mode, &lock), 0);
    close(lock); /* abandoned, but 0755: not what hvrun makes */
    chmod(open_mode, 0755);

    proxy_scratch_sweep();
    cr_expect(!exists(dead), "%s: abandoned, removed", dead);
    cr_expect(exists(lockpath), "the symlink was not followed");
    cr_expect(exists(open_mode), "%s: not 0700, kept", open_mode);
    unlink(link);
    unlink(lockpath);
    rmdir(target);
    chmod(open_mode, 0700);
    proxy_scratch_remove(open_mode, -1);
}

Test(journal, names_with_newlines_round_trip)
{
    char dir[] = "/tmp/hvrun-test-journal.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    int fd = openat(dfd, JOURNAL_FILE, O_WRONLY | O_CREAT | O_APPEND, 0600);
    cr_assert_geq(fd, 0);
    const char *a = "/w/x\nvictim.txt", *b = "/w/y\nsrc", *c = "/w/\n";
    struct journal_head h = {.magic = JOURNAL_MAGIC, .kind = JOURNAL_CREATED,
                             .dev = 1, .ino = 2,
                             .len = (uint32_t)strlen(a)};
    cr_assert_eq(journal_append(fd, &h, a, NULL), 0);
    h.kind = JOURNAL_RENAMED;
    h.len = (uint32_t)strlen(b);
    h.len2 = (uint32_t)strlen(c);
    cr_assert_eq(journal_append(fd, &h, b, c), 0);
    /* a torn record (a run killed mid-write) and a bad one */
    cr_assert_eq(write(fd, &h, 10), 10);
    close(fd);
    struct journal_entry *e;
    size_t n;
    cr_assert_eq(journal_load(dfd, &e, &n), 0);
    cr_assert_eq(n, 2);
    cr_expect_str_eq(e[0].path, a);
    cr_expect_eq(e[0].h.ino, 2);
    cr_expect_str_eq(e[1].path, b);
    cr_expect_str_eq(e[1].path2, c);
    journal_free(e, n);
    unlinkat(dfd, JOURNAL_FILE, 0);
    close(dfd);
    rmdir(dir);
}

Test(journal, relative_or_nul_paths_end_it)
{
    char dir[] = "/tmp/hvrun-test-journal.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    int fd = openat(dfd, JOURNAL_FILE, O_WRONLY | O_CREAT | O_APPEND, 0600);
    struct journal_head h = {.magic = JOURNAL_MAGIC, .kind = JOURNAL_CREATED,
                             .len = 5};
    cr_assert_eq(journal_append(fd, &h, "/ok/a", NULL), 0);
    cr_assert_eq(journal_append(fd, &h, "rel/a", NULL), 0);
    cr_assert_eq(journal_append(fd, &h, "/ok/b", NULL), 0);
    close(fd);
    struct journal_entry *e;
    size_t n;
    cr_assert_eq(journal_load(dfd, &e, &n), 0);
    cr_expect_eq(n, 1);
    journal_free(e, n);
    unlinkat(dfd, JOURNAL_FILE, 0);
    close(dfd);
    rmdir(dir);
}
