/*
 * ptrace_stops.c - a tracer and its tracee, compared with native: the
 * stops a PTRACE_TRACEME child makes under PTRACE_SYSCALL (entry, exit,
 * PTRACE_EVENT_EXEC, the legacy SIGTRAP), what PTRACE_GET_SYSCALL_INFO
 * and the registers say at each, a changed argument, a cancelled call,
 * PEEKDATA/POKEDATA, a suppressed and an injected signal, TRACEFORK's
 * event and auto-attached child, and the exit the tracer is told.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <elf.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(c)                                                               \
    do {                                                                       \
        if (!(c)) {                                                            \
            printf("FAIL %s:%d %s (errno %d)\n", __FILE__, __LINE__, #c,       \
                   errno);                                                     \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static volatile long shared_word = 0x1111;

static const char *stop_name(int status)
{
    static char buf[64];
    if (WIFEXITED(status))
        snprintf(buf, sizeof(buf), "exited %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, sizeof(buf), "killed by %d", WTERMSIG(status));
    else if (WIFSTOPPED(status))
        snprintf(buf, sizeof(buf), "stopped sig %#x event %d",
                 WSTOPSIG(status), status >> 16);
    else
        snprintf(buf, sizeof(buf), "status %#x", status);
    return buf;
}

static int wait_stop(pid_t pid)
{
    int status;
    CHECK(waitpid(pid, &status, __WALL) == pid);
    return status;
}

static long syscall_info(pid_t pid, struct __ptrace_syscall_info *si)
{
    memset(si, 0, sizeof(*si));
    return ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof(*si), si);
}

/* The child: stops, makes a few calls the tracer watches, then execs. */
static void child_body(void)
{
    CHECK(ptrace(PTRACE_TRACEME, 0, 0, 0) == 0);
    CHECK(ptrace(PTRACE_TRACEME, 0, 0, 0) == -1 && errno == EPERM);
    raise(SIGSTOP);
    syscall(SYS_getppid);
    /* the tracer shortens this write to 3 bytes */
    long n = syscall(SYS_write, 1, "abcdefgh\n", 9);
    printf("\nchild: write returned %ld\n", n);
    fflush(stdout);
    /* the tracer cancels this one; it returns 42 */
    long r = syscall(SYS_getuid);
    printf("child: cancelled getuid returned %ld\n", r);
    printf("child: shared_word %#lx\n", (long)shared_word);
    fflush(stdout);
    signal(SIGUSR1, SIG_DFL);
    raise(SIGUSR1); /* suppressed by the tracer */
    printf("child: survived SIGUSR1\n");
    fflush(stdout);
    execl("/bin/true", "true", (char *)NULL);
    _exit(99);
}

static void syscall_tracing(void)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        child_body();
    int st = wait_stop(pid);
    printf("first stop: %s\n", stop_name(st));
    CHECK(ptrace(PTRACE_SETOPTIONS, pid, 0,
                 PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC) == 0);
    CHECK(ptrace(PTRACE_SETOPTIONS, pid, 0, 0x80000000) == -1 &&
          errno == EINVAL);
    CHECK(ptrace(PTRACE_SETOPTIONS, pid, 0,
                 PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC) == 0);
    unsigned long msg = 7;
    CHECK(ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg) == 0);
    int stops = 0, execs = 0, sig = 0;
    bool seen_getppid = false, after_exec = false;
    for (;;) {
        CHECK(ptrace(PTRACE_SYSCALL, pid, 0, sig) == 0);
        sig = 0;
        st = wait_stop(pid);
        if (WIFEXITED(st) || WIFSIGNALED(st)) {
            printf("tracee: %s\n", stop_name(st));
            break;
        }
        CHECK(WIFSTOPPED(st));
        stops++;
        struct __ptrace_syscall_info si;
        long size = syscall_info(pid, &si);
        struct user_regs_struct regs;
        CHECK(ptrace(PTRACE_GETREGS, pid, 0, &regs) == 0);
        if (WSTOPSIG(st) == (SIGTRAP | 0x80)) {
            CHECK(si.op == PTRACE_SYSCALL_INFO_ENTRY ||
                  si.op == PTRACE_SYSCALL_INFO_EXIT);
            CHECK(si.arch == 0xc000003e);
            CHECK(si.instruction_pointer == regs.rip);
            CHECK(si.stack_pointer == regs.rsp);
            if (si.op == PTRACE_SYSCALL_INFO_ENTRY) {
                CHECK(size == 80);
                CHECK(si.entry.nr == regs.orig_rax);
                CHECK((long)regs.rax == -ENOSYS);
                CHECK(si.entry.args[0] == regs.rdi);
                if (si.entry.nr == SYS_getppid)
                    seen_getppid = true;
                if (!seen_getppid || after_exec)
                    continue; /* raise's, the loader's: glibc's business */
                printf("entry %llu\n", (unsigned long long)si.entry.nr);
                if (si.entry.nr == SYS_write && regs.rdi == 1 &&
                    regs.rdx == 9) {
                    regs.rdx = 3;
                    CHECK(ptrace(PTRACE_SETREGS, pid, 0, &regs) == 0);
                }
                if (si.entry.nr == SYS_getuid) {
                    regs.orig_rax = -1;
                    regs.rax = 42;
                    CHECK(ptrace(PTRACE_SETREGS, pid, 0, &regs) == 0);
                    /* and memory: POKEDATA the child's copy of shared_word */
                    errno = 0;
                    long w = ptrace(PTRACE_PEEKDATA, pid, &shared_word, 0);
                    CHECK(errno == 0);
                    printf("peek shared_word %#lx\n", w);
                    CHECK(ptrace(PTRACE_POKEDATA, pid, &shared_word,
                                 (void *)0x2222) == 0);
                }
            } else {
                CHECK(size == 33);
                CHECK(si.exit.rval == (long)regs.rax);
                CHECK(si.exit.is_error == (si.exit.rval < 0 &&
                                           si.exit.rval > -4096));
                if (!seen_getppid || (after_exec && regs.orig_rax != SYS_execve))
                    continue;
                if (regs.orig_rax == SYS_write || regs.orig_rax == SYS_getuid ||
                    regs.orig_rax == SYS_execve)
                    printf("exit %llu = %lld\n",
                           (unsigned long long)regs.orig_rax,
                           (long long)si.exit.rval);
                else
                    printf("exit %llu\n", (unsigned long long)regs.orig_rax);
            }
            continue;
        }
        if (st >> 16 == PTRACE_EVENT_EXEC) {
            execs++;
            after_exec = true;
            CHECK(ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg) == 0);
            printf("exec event, former tid is the pid: %d, orig_rax %lld\n",
                   msg == (unsigned long)pid, (long long)regs.orig_rax);
            continue;
        }
        siginfo_t info;
        CHECK(ptrace(PTRACE_GETSIGINFO, pid, 0, &info) == 0);
        printf("signal stop %d (si_code %d)\n", WSTOPSIG(st), info.si_code);
        if (WSTOPSIG(st) == SIGUSR1)
            sig = 0; /* suppressed */
    }
    printf("stops > 10: %d, execs %d\n", stops > 10, execs);
}

/* int3 in the tracee: a SIGTRAP stop after the breakpoint; single steps. */
static void breakpoint_and_step(void)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        CHECK(ptrace(PTRACE_TRACEME, 0, 0, 0) == 0);
        raise(SIGSTOP);
        __asm__ volatile("int3\n\tnop\n\tnop\n\tnop" ::: "memory");
        _exit(5);
    }
    int st = wait_stop(pid);
    CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
    CHECK(ptrace(PTRACE_CONT, pid, 0, 0) == 0);
    st = wait_stop(pid);
    printf("breakpoint: %s\n", stop_name(st));
    siginfo_t info;
    CHECK(ptrace(PTRACE_GETSIGINFO, pid, 0, &info) == 0);
    printf("si_code %#x\n", info.si_code);
    struct user_regs_struct regs;
    CHECK(ptrace(PTRACE_GETREGS, pid, 0, &regs) == 0);
    errno = 0;
    long text = ptrace(PTRACE_PEEKTEXT, pid, regs.rip - 1, 0);
    CHECK(errno == 0);
    printf("byte before rip %#lx, next %#lx\n", text & 0xff,
           (text >> 8) & 0xff);
    printf("orig_rax %lld\n", (long long)regs.orig_rax);
    unsigned long long rip0 = regs.rip;
    for (int i = 0; i < 3; i++) {
        CHECK(ptrace(PTRACE_SINGLESTEP, pid, 0, 0) == 0);
        st = wait_stop(pid);
        CHECK(ptrace(PTRACE_GETREGS, pid, 0, &regs) == 0);
        CHECK(ptrace(PTRACE_GETSIGINFO, pid, 0, &info) == 0);
        errno = 0;
        long dr6 = ptrace(PTRACE_PEEKUSER, pid,
                          offsetof(struct user, u_debugreg[6]), 0);
        printf("step %d: %s si_code %d advanced %llu tf %d bs %d\n", i,
               stop_name(st), info.si_code, regs.rip - rip0,
               (int)((regs.eflags >> 8) & 1), (int)((dr6 >> 14) & 1));
    }
    /* a breakpoint written into read-only text with POKETEXT */
    errno = 0;
    long word = ptrace(PTRACE_PEEKTEXT, pid, regs.rip, 0);
    CHECK(errno == 0);
    CHECK(ptrace(PTRACE_POKETEXT, pid, regs.rip, (word & ~0xffL) | 0xcc) == 0);
    CHECK(ptrace(PTRACE_CONT, pid, 0, 0) == 0);
    st = wait_stop(pid);
    unsigned long long at = regs.rip;
    CHECK(ptrace(PTRACE_GETREGS, pid, 0, &regs) == 0);
    printf("poked breakpoint: %s, rip past it %d\n", stop_name(st),
           regs.rip == at + 1);
    /* put the instruction back, step back to it, go on */
    CHECK(ptrace(PTRACE_POKETEXT, pid, at, word) == 0);
    regs.rip = at;
    CHECK(ptrace(PTRACE_SETREGS, pid, 0, &regs) == 0);
    CHECK(ptrace(PTRACE_CONT, pid, 0, 0) == 0);
    st = wait_stop(pid);
    printf("end: %s\n", stop_name(st));
}

/* A signal the tracer passes on kills; TRACEFORK attaches the grandchild. */
static void fork_events(void)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        CHECK(ptrace(PTRACE_TRACEME, 0, 0, 0) == 0);
        raise(SIGSTOP);
        pid_t g = fork();
        if (g == 0) {
            printf("grandchild runs\n");
            fflush(stdout);
            _exit(3);
        }
        int gs;
        waitpid(g, &gs, 0);
        printf("child: grandchild %s\n", stop_name(gs));
        fflush(stdout);
        raise(SIGTERM);
        _exit(0);
    }
    int st = wait_stop(pid);
    CHECK(ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACEFORK) == 0);
    CHECK(ptrace(PTRACE_CONT, pid, 0, 0) == 0);
    st = wait_stop(pid);
    printf("fork event: %s\n", stop_name(st));
    unsigned long g = 0;
    CHECK(ptrace(PTRACE_GETEVENTMSG, pid, 0, &g) == 0);
    int gst = wait_stop((pid_t)g);
    printf("grandchild first stop: %s\n", stop_name(gst));
    /* a request on a tracee that is running: ESRCH */
    CHECK(ptrace(PTRACE_CONT, (pid_t)g, 0, 0) == 0);
    CHECK(ptrace(PTRACE_GETREGS, (pid_t)g, 0, &st) == -1);
    gst = wait_stop((pid_t)g);
    printf("grandchild to its tracer: %s\n", stop_name(gst));
    /* each signal stop passed on: SIGCHLD (ignored), then SIGTERM kills */
    int sig = 0;
    for (;;) {
        CHECK(ptrace(PTRACE_CONT, pid, 0, sig) == 0);
        st = wait_stop(pid);
        printf("child: %s\n", stop_name(st));
        if (!WIFSTOPPED(st))
            break;
        sig = WSTOPSIG(st);
    }
    CHECK(waitpid(-1, &st, WNOHANG) == -1 && errno == ECHILD);
    CHECK(ptrace(PTRACE_CONT, pid, 0, 0) == -1 && errno == ESRCH);
}

/* ATTACH to a child waiting in pause(): its SIGSTOP stop; DETACH; SEIZE
 * with EXITKILL, INTERRUPT (PTRACE_EVENT_STOP where it waits), the FPU
 * state, PTRACE_KILL. */
static void attach_seize(void)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        for (;;)
            pause();
    }
    usleep(20000); /* let it reach pause() */
    CHECK(ptrace(PTRACE_ATTACH, pid, 0, 0) == 0);
    CHECK(ptrace(PTRACE_ATTACH, pid, 0, 0) == -1 && errno == EPERM);
    int st = wait_stop(pid);
    printf("attach: %s\n", stop_name(st));
    CHECK(ptrace(PTRACE_DETACH, pid, 0, 0) == 0);
    CHECK(ptrace(PTRACE_GETREGS, pid, 0, &st) == -1 && errno == ESRCH);
    CHECK(ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_EXITKILL) == 0);
    CHECK(ptrace(PTRACE_INTERRUPT, pid, 0, 0) == 0);
    st = wait_stop(pid);
    printf("interrupt: %s\n", stop_name(st));
    siginfo_t info;
    printf("siginfo at interrupt: %d\n",
           (int)ptrace(PTRACE_GETSIGINFO, pid, 0, &info));
    struct user_fpregs_struct fp;
    CHECK(ptrace(PTRACE_GETFPREGS, pid, 0, &fp) == 0);
    printf("fpu cwd %#x mxcsr %#x\n", fp.cwd, fp.mxcsr);
    unsigned char xs[4096];
    struct iovec iov = {xs, sizeof(xs)};
    CHECK(ptrace(PTRACE_GETREGSET, pid, NT_X86_XSTATE, &iov) == 0);
    unsigned long long xcr0;
    memcpy(&xcr0, xs + 464, 8);
    unsigned eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    /* AMX's tile state (bits 17-18) is dynamic: in XCR0 on a host that
     * has it, usable only after ARCH_REQ_XCOMP_PERM, which hvrun does not
     * offer; its regset (like its CPUID) leaves it out, while XGETBV,
     * which nothing traps, still shows the host's. Compared without it. */
    const unsigned long long dynamic = 3ULL << 17;
    printf("xstate regset: xcr0 matches %d, size %d\n",
           (xcr0 & ~dynamic) ==
               (((unsigned long long)edx << 32 | eax) & ~dynamic),
           iov.iov_len >= 576 && iov.iov_len <= sizeof(xs));
    struct user_regs_struct regs;
    iov = (struct iovec){&regs, 40};
    CHECK(ptrace(PTRACE_GETREGSET, pid, 1 /* NT_PRSTATUS */, &iov) == 0);
    printf("short regset: %zu\n", iov.iov_len);
    CHECK(ptrace(PTRACE_KILL, pid, 0, 0) == 0);
    st = wait_stop(pid);
    printf("after PTRACE_KILL: %s\n", stop_name(st));
}

/* A signal interrupting a traced call that blocks: the call's exit stop
 * (-ERESTARTSYS), the signal's stop, the handler's calls, and the call
 * again (SA_RESTART), which then completes. */
static void on_usr1(int sig)
{
    (void)sig;
    syscall(SYS_getpid);
}

static void interrupted_call(void)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_usr1;
        sa.sa_flags = SA_RESTART;
        sigaction(SIGUSR1, &sa, NULL);
        CHECK(ptrace(PTRACE_TRACEME, 0, 0, 0) == 0);
        raise(SIGSTOP);
        char c;
        long n = syscall(SYS_read, fds[0], &c, 1);
        syscall(SYS_exit_group, n == 1 && c == 'r' ? 0 : 1);
    }
    int st = wait_stop(pid);
    CHECK(ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACESYSGOOD) == 0);
    bool signalled = false, wrote = false;
    int sig = 0;
    for (int i = 0; i < 40; i++) {
        CHECK(ptrace(PTRACE_SYSCALL, pid, 0, sig) == 0);
        sig = 0;
        if (signalled && !wrote) {
            usleep(20000); /* let the restarted read block again */
        }
        st = wait_stop(pid);
        if (!WIFSTOPPED(st)) {
            printf("interrupted call: tracee %s\n", stop_name(st));
            return;
        }
        struct user_regs_struct regs;
        CHECK(ptrace(PTRACE_GETREGS, pid, 0, &regs) == 0);
        if (WSTOPSIG(st) != (SIGTRAP | 0x80)) {
            printf("  signal stop %d\n", WSTOPSIG(st));
            sig = WSTOPSIG(st);
            continue;
        }
        struct __ptrace_syscall_info si;
        syscall_info(pid, &si);
        bool entry = si.op == PTRACE_SYSCALL_INFO_ENTRY;
        if (regs.orig_rax != SYS_read && regs.orig_rax != SYS_getpid &&
            regs.orig_rax != SYS_rt_sigreturn && regs.orig_rax != -1ULL)
            continue;
        printf("  %s %lld", entry ? "entry" : "exit", (long long)regs.orig_rax);
        if (!entry && regs.orig_rax != SYS_getpid)
            printf(" = %lld", (long long)regs.rax);
        printf("\n");
        if (entry && regs.orig_rax == SYS_read && !signalled) {
            /* let it block, then interrupt it */
            CHECK(ptrace(PTRACE_SYSCALL, pid, 0, 0) == 0);
            usleep(20000);
            CHECK(kill(pid, SIGUSR1) == 0);
            signalled = true;
            st = wait_stop(pid);
            CHECK(ptrace(PTRACE_GETREGS, pid, 0, &regs) == 0);
            syscall_info(pid, &si);
            printf("  %s %lld = %lld (rip after the insn %d)\n",
                   si.op == PTRACE_SYSCALL_INFO_EXIT ? "exit" : "entry?",
                   (long long)regs.orig_rax, (long long)regs.rax,
                   si.instruction_pointer == regs.rip);
            continue;
        }
        if (entry && regs.orig_rax == SYS_read && signalled && !wrote) {
            CHECK(ptrace(PTRACE_SYSCALL, pid, 0, 0) == 0);
            usleep(20000);
            CHECK(write(fds[1], "r", 1) == 1);
            wrote = true;
            st = wait_stop(pid);
            CHECK(ptrace(PTRACE_GETREGS, pid, 0, &regs) == 0);
            printf("  exit %lld = %lld\n", (long long)regs.orig_rax,
                   (long long)regs.rax);
        }
    }
    printf("interrupted call: too many stops\n");
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    syscall_tracing();
    breakpoint_and_step();
    fork_events();
    attach_seize();
    interrupted_call();
    printf("done\n");
    return 0;
}
