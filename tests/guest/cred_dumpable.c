/*
 * cred_dumpable.c - a change of a root process's effective or filesystem
 * ids makes it non-dumpable, as Linux's commit_creds does: PR_GET_DUMPABLE
 * reads 0, its /proc/PID files are root's (its /proc/PID directory stays
 * its euid's), a tracer of its new uid cannot attach, its parent-death
 * signal is cleared, its own 0400 files (environ) are EACCES to it; an
 * execve with equal effective and real ids makes it
 * dumpable again, one of a set-user-ID file (effective id the file's)
 * does not (and its auxv says AT_SECURE, AT_EUID the file's owner).
 * Under hvrun every such process stayed dumpable, and a set-ID file ran
 * with the caller's ids.
 * Run as root (as the guest suite runs); otherwise it says so.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/auxv.h>
#include <sys/ptrace.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define OTHER_UID 1000

extern char **environ;

/* What this process shows: dumpable, its status file's and its /proc/PID
 * directory's owner. */
static void show(const char *when)
{
    struct stat file, dir;
    CHECK(stat("/proc/self/status", &file) == 0);
    CHECK(stat("/proc/self/", &dir) == 0);
    printf("%s: dumpable %d, status uid %u, /proc/self uid %u\n", when,
           prctl(PR_GET_DUMPABLE), (unsigned)file.st_uid,
           (unsigned)dir.st_uid);
}

/* A process of OTHER_UID tries to attach to pid. */
static void attach_as_other(pid_t pid)
{
    pid_t a = fork();
    CHECK(a >= 0);
    if (a == 0) {
        CHECK(setuid(OTHER_UID) == 0);
        long r = ptrace(PTRACE_ATTACH, pid, 0, 0);
        printf("  attach as %d: %s\n", OTHER_UID, r == 0 ? "attached"
                                                       : strerror(errno));
        if (r == 0) { /* its attach stop, then let it go on */
            CHECK(waitpid(pid, NULL, __WALL) == pid);
            CHECK(ptrace(PTRACE_DETACH, pid, 0, 0) == 0);
        }
        _exit(0);
    }
    CHECK(waitpid(a, NULL, 0) == a);
}

static int ready[2], done[2];
static char ready_fd[16], done_fd[16];

/* What the changed process shows, then it waits for its parent's look. */
static void report(const char *name, int ready_w, int done_r)
{
    show(name);
    int sig = -1;
    CHECK(prctl(PR_GET_PDEATHSIG, &sig) == 0);
    printf("  pdeathsig %d, euid %d, ruid %d, AT_SECURE %lu, AT_EUID %lu\n",
           sig, (int)geteuid(), (int)getuid(), getauxval(AT_SECURE),
           getauxval(AT_EUID));
    if (geteuid() != 0) { /* (root's CAP_DAC_OVERRIDE would open it) */
        int fd = open("/proc/self/environ", O_RDONLY);
        printf("  its own environ (0400): %s\n",
               fd < 0 ? strerror(errno) : "opened");
        if (fd >= 0)
            close(fd);
    }
    CHECK(write(ready_w, "r", 1) == 1);
    char x;
    CHECK(read(done_r, &x, 1) == 1);
}

/* In a child: how, then what it shows, and whether another process of
 * its uid attaches. (Its parent's stat of /proc/<child>/status is not
 * asked: under hvrun it reaches the host's /proc/<child>, ENOENT where
 * the host has no such pid.) */
static void case_of(const char *name, void (*change)(void))
{
    CHECK(pipe(ready) == 0 && pipe(done) == 0);
    snprintf(ready_fd, sizeof(ready_fd), "%d", ready[1]);
    snprintf(done_fd, sizeof(done_fd), "%d", done[0]);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        CHECK(prctl(PR_SET_PDEATHSIG, SIGTERM) == 0);
        change();
        report(name, ready[1], done[0]);
        _exit(0);
    }
    close(ready[1]); /* a child that fails ends the read (EOF) */
    close(done[0]);
    char x;
    CHECK(read(ready[0], &x, 1) == 1);
    attach_as_other(c);
    CHECK(write(done[1], "d", 1) == 1);
    CHECK(waitpid(c, NULL, 0) == c);
    close(ready[0]), close(done[1]);
}

static void by_setuid(void) { CHECK(setuid(OTHER_UID) == 0); }
static void by_setresuid(void)
{
    CHECK(setresuid(OTHER_UID, OTHER_UID, OTHER_UID) == 0);
}
static void by_setfsuid(void) { setfsuid(OTHER_UID); }
static void by_seteuid_and_back(void)
{
    CHECK(seteuid(OTHER_UID) == 0);
    CHECK(seteuid(0) == 0);
}
static void by_setgid(void) { CHECK(setgid(OTHER_UID) == 0); }
static void by_same_uid(void) { CHECK(setuid(0) == 0); }
static void by_setuid_then_dumpable(void)
{
    CHECK(setuid(OTHER_UID) == 0);
    CHECK(prctl(PR_SET_DUMPABLE, 1) == 0);
}

static int self_exe_fd;

/* After setuid(OTHER_UID), execve of this program: dumpable again. By
 * its fd (execveat AT_EMPTY_PATH): OTHER_UID may not reach its path (the
 * suite's work directory is root's, 0700). */
static void by_setuid_then_exec(void)
{
    CHECK(setuid(OTHER_UID) == 0);
    char *argv[] = {"cred_dumpable", "--show", "setuid then execve", ready_fd,
                    done_fd, NULL};
    syscall(SYS_execveat, self_exe_fd, "", argv, environ, AT_EMPTY_PATH);
    CHECK(0);
}

/* execve of a set-user-ID copy of this program (owner OTHER_UID), by
 * root: its effective id is the file's, its real one root's. */
static void by_setuid_file(void)
{
    execl("./cred_dumpable.setuid", "cred_dumpable.setuid", "--show",
          "set-user-ID execve", ready_fd, done_fd, NULL);
    CHECK(0);
}

static void copy_setuid(void)
{
    int in = open("/proc/self/exe", O_RDONLY);
    int out = open("./cred_dumpable.setuid", O_WRONLY | O_CREAT | O_TRUNC, 0755);
    CHECK(in >= 0 && out >= 0);
    struct stat st;
    CHECK(fstat(in, &st) == 0);
    CHECK(sendfile(out, in, NULL, (size_t)st.st_size) == st.st_size);
    close(in);
    CHECK(fchown(out, OTHER_UID, OTHER_UID) == 0);
    CHECK(fchmod(out, 04755) == 0);
    close(out);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc == 5 && strcmp(argv[1], "--show") == 0) {
        report(argv[2], atoi(argv[3]), atoi(argv[4]));
        return 0;
    }
    if (getuid() != 0) {
        printf("not root: nothing to try\n");
        return 0;
    }
    self_exe_fd = open("/proc/self/exe", O_RDONLY);
    CHECK(self_exe_fd >= 0);
    show("start");
    case_of("setuid", by_setuid);
    case_of("setresuid", by_setresuid);
    case_of("setfsuid", by_setfsuid);
    case_of("seteuid and back", by_seteuid_and_back);
    case_of("setgid", by_setgid);
    case_of("setuid to the same uid", by_same_uid);
    case_of("setuid, PR_SET_DUMPABLE 1", by_setuid_then_dumpable);
    case_of("setuid then execve", by_setuid_then_exec);
    copy_setuid();
    case_of("set-user-ID execve", by_setuid_file);
    unlink("./cred_dumpable.setuid");
    return 0;
}
