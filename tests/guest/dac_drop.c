/*
 * dac_drop.c - a guest that drops root gets the file access of the ids it
 * took, as natively: hvrun serves its file calls, as root, and the thread
 * doing so takes the guest's filesystem ids while it does
 * (syscall-proxy/kernel/fscred.c). A child of a root parent makes files in
 * a directory of its own, takes uid and gid 65534 with no supplementary
 * groups, and tries them: a root-only file and directory, a read-only one
 * for writing, unlink and mkdir in a directory it cannot write, access(2)
 * (real ids), /tmp (sticky, world-writable), running /bin/true. The root
 * parent then removes everything. As non-root there is nothing to drop:
 * it says so (natively and under hvrun alike).
 */
#define _GNU_SOURCE
#include "guest_check.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *res(int r) { return r >= 0 ? "ok" : strerror(errno); }

static int *shared_word;
static int clone_child(void *arg)
{
    (void)arg;
    *shared_word = 42;
    return 0;
}

/* Memory shared with a fork child and a CLONE_VM child after the drop
 * (hvrun's own work for them is done with its own ids). */
static void share_after_drop(void)
{
    shared_word = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(shared_word != MAP_FAILED);
    static char stack[65536];
    int st;
    pid_t c = clone(clone_child, stack + sizeof(stack), CLONE_VM | SIGCHLD,
                    NULL);
    CHECK(c > 0 && waitpid(c, &st, 0) == c);
    printf("a CLONE_VM child wrote %d\n", *shared_word);
    fflush(stdout);
    if ((c = fork()) == 0) {
        *shared_word = 7;
        _exit(0);
    }
    CHECK(c > 0 && waitpid(c, &st, 0) == c);
    printf("a fork child wrote %d through the shared mapping\n", *shared_word);
}

static void try_all(void)
{
    struct stat st;
    printf("open /etc/shadow: %s\n", res(open("/etc/shadow", O_RDONLY)));
    printf("open a 0600 root file in a 0700 directory: %s\n",
           res(open("private/secret", O_RDONLY)));
    printf("stat it: %s\n", res(stat("private/secret", &st)));
    printf("open a 0644 root file for writing: %s\n",
           res(open("ro_file", O_WRONLY)));
    printf("open it for reading: %s\n", res(open("ro_file", O_RDONLY)));
    printf("unlink it (0755 root directory): %s\n", res(unlink("ro_file")));
    printf("mkdir there: %s\n", res(mkdir("newdir", 0755)));
    printf("access /etc/shadow R_OK: %s\n", res(access("/etc/shadow", R_OK)));
    printf("access ro_file W_OK: %s\n", res(access("ro_file", W_OK)));
    printf("faccessat AT_EACCESS ro_file R_OK: %s\n",
           res(faccessat(AT_FDCWD, "ro_file", R_OK, AT_EACCESS)));
    int fd = open("/tmp/dac_drop_file", O_CREAT | O_RDWR | O_EXCL, 0600);
    printf("create a file in /tmp: %s\n", res(fd));
    if (fd >= 0) {
        close(fd);
        printf("remove it: %s\n", res(unlink("/tmp/dac_drop_file")));
    }
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    int s;
    CHECK(waitpid(c, &s, 0) == c);
    printf("run /bin/true: exit %d\n", WIFEXITED(s) ? WEXITSTATUS(s) : -1);
    share_after_drop();
}

int main(void)
{
    if (geteuid() != 0) {
        printf("not root: nothing to drop\n");
        return 0;
    }
    char dir[] = "/var/tmp/dac_drop.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    CHECK(chmod(dir, 0755) == 0);
    CHECK(chdir(dir) == 0);
    CHECK(mkdir("private", 0700) == 0);
    int fd = open("private/secret", O_CREAT | O_WRONLY, 0600);
    CHECK(fd >= 0 && write(fd, "s", 1) == 1);
    close(fd);
    CHECK((fd = open("ro_file", O_CREAT | O_WRONLY, 0644)) >= 0);
    close(fd);
    fflush(stdout);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
            _exit(2);
        try_all();
        fflush(stdout);
        _exit(0);
    }
    int s;
    CHECK(waitpid(c, &s, 0) == c);
    printf("child: exit %d\n", WIFEXITED(s) ? WEXITSTATUS(s) : -1);
    unlink("private/secret");
    rmdir("private");
    unlink("ro_file");
    rmdir("newdir");
    CHECK(chdir("/") == 0);
    CHECK(rmdir(dir) == 0);
    return 0;
}
