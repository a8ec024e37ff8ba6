/*
 * test_hermetic.c - the private /tmp's path mapping, the files-only
 * nsswitch.conf and the blocked name-service sockets
 * (syscall-proxy/fs/hermetic.c, API in vfs.h), and the link fix-ups of vfs.c.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "det.h"
#include "proxy.h"
#include "fs.h"
#include "vfs.h"

static struct proxy_process *proc_with_tmp(const char *tmp_host)
{
    struct proxy_process *p = calloc(1, sizeof(*p));
    cr_assert_not_null(p);
    snprintf(p->fs.tmp_host, sizeof(p->fs.tmp_host), "%s", tmp_host);
    p->pid = 1;
    return p;
}

static void expect_map(struct proxy_process *p, const char *in, int want_rc,
                       const char *want)
{
    char out[PROXY_PATH_MAX] = "untouched";
    int rc = proxy_tmp_map(p, in, out, sizeof(out));
    cr_expect_eq(rc, want_rc, "%s: rc %d", in, rc);
    cr_expect_str_eq(out, want, "%s -> %s", in, out);
}

Test(tmp, maps_tmp_and_below)
{
    struct proxy_process *p = proc_with_tmp("/tmp/hvrun-tmp.abc");
    expect_map(p, "/tmp", 1, "/tmp/hvrun-tmp.abc");
    expect_map(p, "/tmp/", 1, "/tmp/hvrun-tmp.abc/");
    expect_map(p, "/tmp/x/y", 1, "/tmp/hvrun-tmp.abc/x/y");
    expect_map(p, "//tmp/x", 1, "/tmp/hvrun-tmp.abc/x");
    expect_map(p, "/tmpfoo", 0, "untouched");
    expect_map(p, "/var/tmp/x", 0, "untouched");
    expect_map(p, "tmp/x", 0, "untouched");
    free(p);
}

Test(tmp, dotdot_leaves_tmp_by_name)
{
    struct proxy_process *p = proc_with_tmp("/tmp/hvrun-tmp.abc");
    expect_map(p, "/tmp/..", 1, "/");
    expect_map(p, "/tmp/../etc/passwd", 1, "/etc/passwd");
    expect_map(p, "/tmp/a/../../etc", 1, "/etc");
    expect_map(p, "/tmp/a/../b", 1, "/tmp/hvrun-tmp.abc/a/../b");
    expect_map(p, "/tmp/../tmp/x", 1, "/tmp/hvrun-tmp.abc/x");
    free(p);
}

Test(tmp, nothing_without_a_private_tmp)
{
    struct proxy_process *p = proc_with_tmp("");
    expect_map(p, "/tmp/x", 0, "untouched");
    char s[] = "/tmp/x";
    cr_expect_eq(proxy_tmp_unmap(p, s, strlen(s), sizeof(s)), strlen(s));
    free(p);
}

Test(tmp, unmap_whole_components_only)
{
    struct proxy_process *p = proc_with_tmp("/tmp/hvrun-tmp.abc");
    char a[64] = "/tmp/hvrun-tmp.abc/x/y";
    size_t n = proxy_tmp_unmap(p, a, strlen(a), sizeof(a));
    a[n] = '\0';
    cr_expect_str_eq(a, "/tmp/x/y");
    char b[64] = "/tmp/hvrun-tmp.abc";
    n = proxy_tmp_unmap(p, b, strlen(b), sizeof(b));
    b[n] = '\0';
    cr_expect_str_eq(b, "/tmp");
    char c[64] = "/tmp/hvrun-tmp.abcd/x";
    cr_expect_eq(proxy_tmp_unmap(p, c, strlen(c), sizeof(c)), strlen(c));
    free(p);
}

Test(tmp, unmap_to_a_longer_name_needs_room)
{
    struct proxy_process *p = proc_with_tmp("/t");
    char a[8] = "/t/abc";
    cr_expect_eq(proxy_tmp_unmap(p, a, 6, 7), 6, "does not fit: unchanged");
    char b[16] = "/t/abc";
    size_t n = proxy_tmp_unmap(p, b, 6, sizeof(b));
    b[n] = '\0';
    cr_expect_str_eq(b, "/tmp/abc");
    free(p);
}

Test(tmp, setup_and_cleanup_of_an_owned_dir)
{
    struct proxy_process *p = proc_with_tmp("");
    char why[256];
    cr_assert_eq(proxy_tmp_setup(p, NULL, why, sizeof(why)), 0, "%s", why);
    char dir[256];
    snprintf(dir, sizeof(dir), "%.200s", p->fs.tmp_host);
    struct stat st;
    /* Named at set-up, made at the guest's first use of /tmp. */
    cr_assert_neq(stat(dir, &st), 0, "%s made before /tmp was named", dir);
    char mapped[512];
    cr_assert_eq(proxy_tmp_map(p, "/tmp/x", mapped, sizeof(mapped)), 1);
    cr_assert_eq(stat(dir, &st), 0);
    cr_expect_eq(st.st_mode & 07777, 01777);
    cr_expect(p->fs.tmp_owned);
    /* A tree the guest may leave: unreadable directories, deep nesting. */
    char path[512];
    snprintf(path, sizeof(path), "%s/locked", dir);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/locked/f", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fclose(f);
    snprintf(path, sizeof(path), "%s/locked", dir);
    chmod(path, 0);
    cr_assert_eq(chdir(dir), 0);
    for (int i = 0; i < 100; i++) {
        cr_assert_eq(mkdir("d", 0700), 0);
        cr_assert_eq(chdir("d"), 0);
    }
    cr_assert_eq(chdir("/"), 0);
    char top[256];
    snprintf(top, sizeof(top), "%s", dir);
    *strrchr(top, '/') = '\0'; /* the scratch dir holding it (and its lock) */
    proxy_tmp_cleanup(p);
    cr_expect_neq(stat(dir, &st), 0, "%s removed", dir);
    cr_expect_neq(stat(top, &st), 0, "%s removed", top);
    cr_expect_eq(p->fs.tmp_host[0], '\0');
    free(p);
}

Test(tmp, an_owned_dir_never_named_is_never_made)
{
    struct proxy_process *p = proc_with_tmp("");
    char why[256];
    cr_assert_eq(proxy_tmp_setup(p, NULL, why, sizeof(why)), 0, "%s", why);
    char top[256];
    snprintf(top, sizeof(top), "%.200s", p->fs.tmp_top);
    cr_assert_eq(strncmp(top, "/tmp/hvrun-tmp.", 15), 0, "%s", top);
    char mapped[512];
    cr_expect_eq(proxy_tmp_map(p, "/etc/passwd", mapped, sizeof(mapped)), 0);
    struct stat st;
    cr_expect_neq(stat(top, &st), 0, "%s made", top);
    proxy_tmp_cleanup(p);
    cr_expect_neq(stat(top, &st), 0, "%s made by the cleanup", top);
    /* After the cleanup a late name is ENOENT, not a new directory. */
    struct proxy_process *child = proc_with_tmp("");
    snprintf(child->fs.tmp_host, sizeof(child->fs.tmp_host), "%s/tmp", top);
    snprintf(child->fs.tmp_top, sizeof(child->fs.tmp_top), "%s", top);
    cr_expect_eq(proxy_tmp_map(child, "/tmp/x", mapped, sizeof(mapped)),
                 -ENOENT);
    cr_expect_neq(stat(top, &st), 0, "%s made after the cleanup", top);
    free(child);
    free(p);
}

Test(tmp, a_given_dir_is_kept)
{
    struct proxy_process *p = proc_with_tmp("");
    char why[256];
    char dir[] = "/tmp/hvrun-test-given.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(proxy_tmp_setup(p, dir, why, sizeof(why)), 0, "%s", why);
    cr_expect_not(p->fs.tmp_owned);
    proxy_tmp_cleanup(p);
    struct stat st;
    cr_expect_eq(stat(dir, &st), 0, "a --tmp DIR survives");
    rmdir(dir);
    cr_expect_eq(proxy_tmp_setup(p, "/nonexistent/hvrun", why, sizeof(why)),
                 -ENOENT);
    cr_expect(strstr(why, "/nonexistent/hvrun") != NULL, "%s", why);
    free(p);
}

static char *files_only(const char *in)
{
    size_t len = 0;
    char *out = proxy_nsswitch_files_only(in, in ? strlen(in) : 0, &len);
    cr_assert_not_null(out);
    cr_assert_eq(strlen(out), len);
    return out;
}

Test(nsswitch, sources_become_files)
{
    char *out = files_only("# comment: kept\n"
                           "\n"
                           "passwd:         files systemd\n"
                           "hosts: files mdns4_minimal [NOTFOUND=return] dns\n"
                           "netgroup:nis\n"
                           "  group :\tsss files\n"
                           "junk line\n"
                           "services: db files");
    cr_expect_str_eq(out, "# comment: kept\n"
                          "\n"
                          "passwd:         files\n"
                          "hosts: files\n"
                          "netgroup: files\n"
                          "  group :\tfiles\n"
                          "junk line\n"
                          "services: files");
    free(out);
}

Test(nsswitch, no_host_file_lists_glibc_databases)
{
    char *out = files_only(NULL);
    cr_expect(strstr(out, "passwd:         files\n") != NULL);
    cr_expect(strstr(out, "hosts:          files\n") != NULL);
    cr_expect(strstr(out, "dns") == NULL);
    free(out);
}

Test(nsswitch, daemon_sockets_are_blocked_with_the_host_virtualised)
{
    struct det_state det;
    memset(&det, 0, sizeof(det));
    det.cfg.virtualize_host = true;
    struct proxy_process *p = proc_with_tmp("");
    p->det = &det;
    static const char nscd[] = "/var/run/nscd/socket";
    cr_expect(proxy_hermetic_socket_blocked(p, nscd, sizeof(nscd)));
    cr_expect(proxy_hermetic_socket_blocked(p, "/run/nscd/socket", 16),
              "no NUL inside the length");
    cr_expect(proxy_hermetic_socket_blocked(
        p, "/run/systemd/userdb/io.systemd.Multiplexer", 108));
    cr_expect_not(proxy_hermetic_socket_blocked(p, "/run/systemd/userdb/", 20));
    cr_expect_not(proxy_hermetic_socket_blocked(p, "/run/dbus/socket", 16));
    det.cfg.virtualize_host = false;
    cr_expect_not(proxy_hermetic_socket_blocked(p, nscd, sizeof(nscd)));
    free(p);
}

Test(links, virtual_files_and_tmp_read_in_guest_terms)
{
    struct proxy_process *p = proc_with_tmp("/tmp/hvrun-tmp.abc");
    char t[PROXY_PATH_MAX];
    const char *memfd = "/memfd:hvrun-vfs:/proc/cpuinfo (deleted)";
    strcpy(t, memfd);
    long n = proxy_vfs_link_fixup(p, "/proc/self/fd/7", t, (long)strlen(t),
                                  sizeof(t));
    t[n] = '\0';
    cr_expect_str_eq(t, "/proc/cpuinfo");
    strcpy(t, "/tmp/hvrun-tmp.abc/x");
    n = proxy_vfs_link_fixup(p, "/proc/self/fd/7", t, (long)strlen(t),
                             sizeof(t));
    t[n] = '\0';
    cr_expect_str_eq(t, "/tmp/x");
    snprintf(t, sizeof(t), "/proc/%d/fd", (int)getpid());
    n = proxy_vfs_link_fixup(p, "/proc/self/fd/7", t, (long)strlen(t),
                             sizeof(t));
    t[n] = '\0';
    cr_expect_str_eq(t, "/proc/1/fd");
    /* Other symlinks keep their targets. */
    strcpy(t, "/tmp/hvrun-tmp.abc/x");
    n = proxy_vfs_link_fixup(p, "/home/link", t, (long)strlen(t), sizeof(t));
    cr_expect_eq(n, (long)strlen("/tmp/hvrun-tmp.abc/x"));
    free(p);
}
