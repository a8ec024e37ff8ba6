/*
 * rseq_test.c - restartable sequences: glibc's registration at start
 * (__rseq_size > 0; glibc 2.36 registers 32 bytes), rseq(2)'s errors (EBUSY, EINVAL, EPERM), unregistering and
 * registering an area of one's own, cpu_id kept valid, a fork keeping the
 * registration, and a critical section a signal interrupts left for its
 * abort handler (the handler's return lands there, not in the loop).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/rseq.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(c)                                                               \
    do {                                                                       \
        if (!(c)) {                                                            \
            printf("FAIL line %d: %s (errno %d)\n", __LINE__, #c, errno);      \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

#define SIG RSEQ_SIG

static long rseq_call(void *area, uint32_t len, int flags, uint32_t sig)
{
    errno = 0;
    long rc = syscall(SYS_rseq, area, len, flags, sig);
    return rc < 0 ? -errno : rc;
}

static struct rseq own __attribute__((aligned(32)));
static volatile sig_atomic_t alarms;

static void on_alarm(int s)
{
    (void)s;
    alarms++;
}

/* Spins inside a critical section until a preemption or a signal's
 * delivery moves it to the abort label; returns 1 when it left that way. */
static int spin_in_section(void)
{
    int aborted = 0;
    __asm__ volatile(
        "lea 3f(%%rip), %%rax\n\t"
        "mov %%rax, %[cs]\n\t"
        "1:\n\t"
        "jmp 1b\n\t"
        "2:\n\t"
        ".pushsection .data\n\t"
        ".balign 32\n\t"
        "3:\n\t"
        ".long 0, 0\n\t"
        ".quad 1b, 2b - 1b, 5f\n\t"
        ".popsection\n\t"
        ".long 0x53053053\n\t"
        "5:\n\t"
        "movl $1, %[ab]\n\t"
        : [cs] "=m"(own.rseq_cs), [ab] "+m"(aborted)
        :
        : "rax", "memory");
    return aborted;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("glibc registered: %d\n", __rseq_size > 0);
    struct rseq *glibc = (struct rseq *)((char *)__builtin_thread_pointer() +
                                         __rseq_offset);
    printf("cpu_id valid: %d\n", (int)glibc->cpu_id >= 0);
    printf("again: %ld\n", rseq_call(glibc, 32, 0, SIG));
    printf("another area: %ld\n", rseq_call(&own, 32, 0, SIG));
    printf("wrong sig: %ld\n", rseq_call(glibc, 32, 0, SIG + 1));
    printf("bad flags: %ld\n", rseq_call(glibc, 32, 2, SIG));
    printf("unregister, wrong sig: %ld\n",
           rseq_call(glibc, 32, RSEQ_FLAG_UNREGISTER, SIG + 1));
    printf("unregister, wrong area: %ld\n",
           rseq_call(&own, 32, RSEQ_FLAG_UNREGISTER, SIG));
    printf("unregister: %ld\n",
           rseq_call(glibc, 32, RSEQ_FLAG_UNREGISTER, SIG));
    printf("cpu_id after: %d\n", (int)glibc->cpu_id);
    printf("unaligned: %ld\n", rseq_call((char *)&own + 4, 32, 0, SIG));
    printf("short: %ld\n", rseq_call(&own, 16, 0, SIG));
    printf("bad address: %ld\n", rseq_call((void *)32, 32, 0, SIG));
    printf("own area: %ld\n", rseq_call(&own, 32, 0, SIG));
    printf("own cpu_id valid: %d\n", (int)own.cpu_id >= 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        _exit(rseq_call(&own, 32, 0, SIG) == -EBUSY ? 0 : 1);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    printf("fork keeps it: %d\n", WIFEXITED(st) && WEXITSTATUS(st) == 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_alarm;
    CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
    struct itimerval it = {{0, 0}, {0, 20000}};
    CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
    int aborted = spin_in_section();
    /* natively a preemption may abort it before the alarm does: the
     * count of alarms taken is not printed */
    printf("critical section aborted: %d, rseq_cs cleared %d\n", aborted,
           own.rseq_cs == 0);
    return 0;
}
