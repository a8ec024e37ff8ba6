/*
 * sigcall.c - glibc's sigprocmask/pthread_sigmask and sigaction, which
 * hvrun answers in the guest (mm/cpuid_patch.c, "signal calls": the
 * wrapper's `mov $14 (or $13), %eax; syscall` becomes a jmp to a stub
 * reading and writing the thread's signal state), agree with the
 * kernel's answer (syscall(2), which no stub takes) and deliver as Linux
 * does wherever the mask matters:
 * - SIG_BLOCK, SIG_UNBLOCK, SIG_SETMASK; SIGKILL and SIGSTOP never
 *   blocked; a bad how (EINVAL, mask unchanged); a bad oset (EFAULT, the
 *   new mask in place, as Linux orders it);
 * - a pending signal unblocked is delivered before the call returns, one
 *   sent by another process while blocked too;
 * - a handler runs with its sa_mask and the signal blocked, and the mask
 *   is back after it returns; sigsuspend's mask is only for its wait;
 * - a thread, a fork child and a vfork child have their own masks (the
 *   vfork child shares its parent's memory); exec keeps the mask;
 * - sigaction's queries agree with the kernel's for every signal after
 *   sets; a set's mask never holds SIGKILL or SIGSTOP, a set of either
 *   is EINVAL; the handler set is the one delivered; a thread's set is
 *   its process's, a vfork child's resets leave its parent's alone; a
 *   set of SIG_IGN discards a pending instance;
 * - under a seccomp filter that refuses rt_sigprocmask and rt_sigaction
 *   the wrappers fail as the filter says (the filter sees the calls);
 * - after the process unmaps [vvar] (where the stubs find the state) the
 *   calls are made and agree.
 */
#define _GNU_SOURCE
#include "guest_check.h"
#include "guest_maps.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t got_usr1, got_usr2;
static volatile uint64_t mask_in_handler;

/* The thread's mask as the kernel (hvrun's syscall path) has it. */
static uint64_t kernel_mask(void)
{
    uint64_t m = 0;
    CHECK(syscall(SYS_rt_sigprocmask, SIG_SETMASK, NULL, &m, 8) == 0);
    return m;
}

/* The mask through glibc's wrapper (a stub under hvrun). */
static uint64_t wrapper_mask(void)
{
    sigset_t o;
    CHECK(sigprocmask(SIG_SETMASK, NULL, &o) == 0);
    uint64_t m;
    memcpy(&m, &o, sizeof(m));
    return m;
}

static sigset_t set_of(int a, int b)
{
    sigset_t s;
    sigemptyset(&s);
    if (a)
        sigaddset(&s, a);
    if (b)
        sigaddset(&s, b);
    return s;
}

#define BIT(sig) (1ULL << ((sig) - 1))

static void on_usr1(int sig)
{
    (void)sig;
    got_usr1++;
    mask_in_handler = wrapper_mask();
}

static void on_usr2(int sig)
{
    (void)sig;
    got_usr2++;
}

static void masks_agree(const char *where)
{
    uint64_t w = wrapper_mask(), k = kernel_mask();
    printf("%s: mask %#llx, wrapper and kernel %s\n", where,
           (unsigned long long)w, w == k ? "agree" : "DIFFER");
}

static void block_unblock(void)
{
    sigset_t s = set_of(SIGUSR1, SIGKILL), o;
    CHECK(sigprocmask(SIG_BLOCK, &s, &o) == 0);
    masks_agree("blocked USR1 (and KILL asked)");
    s = set_of(SIGSTOP, SIGUSR2);
    CHECK(sigprocmask(SIG_SETMASK, &s, NULL) == 0);
    masks_agree("set USR2 (and STOP asked)");
    s = set_of(SIGUSR2, 0);
    CHECK(sigprocmask(SIG_UNBLOCK, &s, &o) == 0);
    masks_agree("unblocked USR2");
    s = set_of(SIGHUP, 0);
    errno = 0;
    int rc = sigprocmask(7, &s, &o);
    printf("bad how: %s\n", result_text(rc));
    masks_agree("after the bad how");
    rc = sigprocmask(SIG_BLOCK, &s, (sigset_t *)16);
    printf("bad oset: %s\n", result_text(rc));
    masks_agree("after the bad oset (HUP blocked all the same)");
    CHECK(sigprocmask(SIG_SETMASK, &(sigset_t){0}, NULL) == 0);
}

static void pending_unblocked(void)
{
    sigset_t s = set_of(SIGUSR1, 0);
    CHECK(sigprocmask(SIG_BLOCK, &s, NULL) == 0);
    got_usr1 = 0;
    CHECK(raise(SIGUSR1) == 0);
    printf("raised while blocked: handled %d\n", got_usr1);
    CHECK(sigprocmask(SIG_UNBLOCK, &s, NULL) == 0);
    printf("unblocked: handled %d, mask in the handler has USR1 %d, "
           "USR2 (its sa_mask) %d\n",
           got_usr1, !!(mask_in_handler & BIT(SIGUSR1)),
           !!(mask_in_handler & BIT(SIGUSR2)));
    masks_agree("after the handler");

    /* sent by another process while blocked */
    CHECK(sigprocmask(SIG_BLOCK, &s, NULL) == 0);
    got_usr1 = 0;
    pid_t parent = getpid(), pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        kill(parent, SIGUSR1);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    printf("sent by a child while blocked: handled %d\n", got_usr1);
    CHECK(sigprocmask(SIG_SETMASK, &(sigset_t){0}, NULL) == 0);
    printf("set to none: handled %d\n", got_usr1);
}

static void suspend_mask(void)
{
    sigset_t s = set_of(SIGUSR2, 0), wait_mask = set_of(SIGHUP, 0);
    CHECK(sigprocmask(SIG_BLOCK, &s, NULL) == 0);
    got_usr2 = 0;
    CHECK(raise(SIGUSR2) == 0);
    int rc = sigsuspend(&wait_mask);
    printf("sigsuspend: %s, handled %d\n", result_text(rc), got_usr2);
    masks_agree("after sigsuspend (USR2 blocked again)");
    CHECK(sigprocmask(SIG_SETMASK, &(sigset_t){0}, NULL) == 0);
}

static void *thread_main(void *arg)
{
    (void)arg;
    CHECK(signal(SIGVTALRM, on_usr2) != SIG_ERR); /* the process's */
    uint64_t at_start = wrapper_mask();
    sigset_t s = set_of(SIGTERM, 0);
    CHECK(pthread_sigmask(SIG_BLOCK, &s, NULL) == 0);
    printf("thread: started with the creator's mask %d, now %#llx, "
           "agree %d\n",
           at_start == BIT(SIGHUP), (unsigned long long)wrapper_mask(),
           wrapper_mask() == kernel_mask());
    return NULL;
}

static void own_masks(void)
{
    sigset_t s = set_of(SIGHUP, 0);
    CHECK(sigprocmask(SIG_SETMASK, &s, NULL) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, thread_main, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    masks_agree("main after its thread");
    struct sigaction vt;
    CHECK(sigaction(SIGVTALRM, NULL, &vt) == 0);
    printf("the thread's handler seen by main: %d\n", vt.sa_handler == on_usr2);

    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        s = set_of(SIGINT, 0);
        CHECK(sigprocmask(SIG_BLOCK, &s, NULL) == 0);
        _exit(wrapper_mask() == (BIT(SIGHUP) | BIT(SIGINT)) &&
                      kernel_mask() == wrapper_mask()
                  ? 0
                  : 1);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    printf("fork child: inherited and changed its own: %d\n",
           WIFEXITED(st) && WEXITSTATUS(st) == 0);
    masks_agree("parent after the fork child");

    volatile int child_ok = 0;
    pid = vfork();
    CHECK(pid >= 0);
    if (pid == 0) {
        sigset_t all;
        sigfillset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        child_ok = kernel_mask() == wrapper_mask();
        _exit(0);
    }
    CHECK(waitpid(pid, &st, 0) == pid);
    printf("vfork child: its own mask agreed %d\n", child_ok);
    masks_agree("parent after the vfork child");
    CHECK(sigprocmask(SIG_SETMASK, &(sigset_t){0}, NULL) == 0);
}

static void exec_keeps(const char *self)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        sigset_t s = set_of(SIGQUIT, SIGWINCH);
        CHECK(sigprocmask(SIG_SETMASK, &s, NULL) == 0);
        execl(self, self, "exec-child", (char *)NULL);
        _exit(127);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void actions_agree(void)
{
    struct sigaction sa = {.sa_handler = on_usr2};
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGALRM);
    sa.sa_flags = SA_RESTART | SA_NODEFER;
    CHECK(sigaction(SIGTERM, &sa, NULL) == 0);
    CHECK(signal(SIGPIPE, SIG_IGN) != SIG_ERR);
    int differ = 0, queried = 0;
    for (int sig = 1; sig <= 64; sig++) {
        struct sigaction w;
        struct {
            uint64_t handler, flags, restorer, mask;
        } k;
        if (sigaction(sig, NULL, &w) != 0)
            continue; /* glibc's own (32, 33) say EINVAL */
        CHECK(syscall(SYS_rt_sigaction, sig, NULL, &k, 8) == 0);
        uint64_t wmask;
        memcpy(&wmask, &w.sa_mask, sizeof(wmask));
        queried++;
        if ((uint64_t)(uintptr_t)w.sa_handler != k.handler ||
            (uint64_t)w.sa_flags != k.flags || wmask != k.mask)
            differ++;
    }
    printf("sigaction queries: %d signals, %d differ from the kernel's\n",
           queried, differ);
    struct sigaction w;
    CHECK(sigaction(SIGTERM, NULL, &w) == 0);
    printf("TERM: our handler %d, RESTART %d, NODEFER %d, ALRM in mask %d\n",
           w.sa_handler == on_usr2, !!(w.sa_flags & SA_RESTART),
           !!(w.sa_flags & SA_NODEFER), sigismember(&w.sa_mask, SIGALRM));
    errno = 0;
    printf("query of 0: %s; ", result_text(sigaction(0, NULL, &w)));
    printf("of 65: %s; ", result_text(sigaction(65, NULL, &w)));
    printf("of KILL: %s\n", result_text(sigaction(SIGKILL, NULL, &w)));

    /* a set's mask never holds KILL or STOP; the handler set is the one
     * delivered */
    struct sigaction full = {.sa_handler = on_usr2};
    sigfillset(&full.sa_mask);
    CHECK(sigaction(SIGUSR2, &full, NULL) == 0);
    CHECK(sigaction(SIGUSR2, NULL, &w) == 0);
    printf("USR2's mask: KILL %d, STOP %d, INT %d; ",
           sigismember(&w.sa_mask, SIGKILL), sigismember(&w.sa_mask, SIGSTOP),
           sigismember(&w.sa_mask, SIGINT));
    got_usr2 = 0;
    CHECK(raise(SIGUSR2) == 0);
    printf("raised: handled %d\n", got_usr2);
    printf("set KILL: %s; ", result_text(sigaction(SIGKILL, &full, NULL)));
    printf("set STOP: %s\n", result_text(sigaction(SIGSTOP, &full, NULL)));

    /* a vfork child's resets (posix_spawn's) leave its parent's alone */
    pid_t pid = vfork();
    CHECK(pid >= 0);
    if (pid == 0) {
        signal(SIGUSR2, SIG_DFL);
        signal(SIGTERM, SIG_IGN);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    struct sigaction k2;
    CHECK(sigaction(SIGUSR2, NULL, &k2) == 0);
    CHECK(sigaction(SIGTERM, NULL, &w) == 0);
    printf("after a vfork child's resets: USR2 ours %d, TERM ours %d\n",
           k2.sa_handler == on_usr2, w.sa_handler == on_usr2);

    /* SIG_IGN discards a pending instance */
    sigset_t s = set_of(SIGURG, 0), pend;
    CHECK(sigprocmask(SIG_BLOCK, &s, NULL) == 0);
    struct sigaction h = {.sa_handler = on_usr2};
    CHECK(sigaction(SIGURG, &h, NULL) == 0);
    CHECK(raise(SIGURG) == 0);
    CHECK(sigpending(&pend) == 0);
    printf("URG pending %d; ", sigismember(&pend, SIGURG));
    CHECK(signal(SIGURG, SIG_IGN) != SIG_ERR);
    CHECK(sigpending(&pend) == 0);
    printf("after SIG_IGN %d\n", sigismember(&pend, SIGURG));
    CHECK(sigprocmask(SIG_SETMASK, &(sigset_t){0}, NULL) == 0);
}

static void under_seccomp(void)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        struct sock_filter f[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                     offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigprocmask, 1, 0),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigaction, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog fp = {sizeof(f) / sizeof(f[0]), f};
        CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
        CHECK(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp) == 0);
        sigset_t o;
        errno = 0;
        int rc = sigprocmask(SIG_SETMASK, NULL, &o);
        printf("rt_sigprocmask refused by a seccomp filter: %s; ",
               result_text(rc));
        struct sigaction q;
        errno = 0;
        rc = sigaction(SIGINT, NULL, &q);
        printf("rt_sigaction: %s\n", result_text(rc));
        fflush(stdout);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
}

/* A child that unmaps [vvar] (where the stubs find the state's address):
 * its calls are made, and agree. */
static void without_vvar(void)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        CHECK(unmap_named("[vvar]") == 0);
        sigset_t s = set_of(SIGHUP, 0);
        CHECK(sigprocmask(SIG_BLOCK, &s, NULL) == 0);
        struct sigaction q, k = {.sa_handler = on_usr2};
        CHECK(sigaction(SIGWINCH, &k, NULL) == 0);
        CHECK(sigaction(SIGWINCH, NULL, &q) == 0);
        errno = 0;
        int bad = sigaction(65, NULL, &q);
        _exit(wrapper_mask() == kernel_mask() &&
                      wrapper_mask() == BIT(SIGHUP) &&
                      q.sa_handler == on_usr2 && bad == -1 &&
                      errno == EINVAL
                  ? 0
                  : 1);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    printf("after unmapping [vvar]: %s\n",
           WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "agree" : "DIFFER");
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1) { /* exec_keeps' child */
        masks_agree("after exec (QUIT and WINCH kept)");
        return 0;
    }
    struct sigaction sa = {.sa_handler = on_usr1};
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGUSR2);
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    CHECK(signal(SIGUSR2, on_usr2) != SIG_ERR);
    CHECK(sigprocmask(SIG_SETMASK, &(sigset_t){0}, NULL) == 0);
    block_unblock();
    pending_unblocked();
    suspend_mask();
    own_masks();
    exec_keeps(argv[0]);
    actions_agree();
    under_seccomp();
    without_vvar();
    return 0;
}
