/*
 * vfork_share: a child made with CLONE_VM and without CLONE_THREAD (vfork,
 * posix_spawn, clone(CLONE_VM)) runs on its parent's memory: its writes,
 * its mmap and its brk are the parent's; CLONE_PARENT_SETTID and
 * CLONE_CHILD_SETTID land in the one memory; CLONE_CHILD_CLEARTID is
 * cleared and its futex woken when the child exits or execs; a private
 * futex wake by the child wakes the parent waiting on the same word.
 * posix_spawn of a missing program reports ENOENT (its child writes the
 * error into the parent's memory). The memory outlives the process that
 * made it: a clone(CLONE_VM) child whose parent exited still maps,
 * writes and unmaps. During a vfork only the calling thread waits: the
 * parent's other thread wakes the child's futex wait. A robust futex held
 * by a CLONE_VM child that dies is marked FUTEX_OWNER_DIED and its waiter
 * in the parent woken. The child's mprotect and munmap of pages the
 * parent had touched are the parent's too: its next access faults. A
 * System V segment the vfork child attached stays attached in the one
 * memory after it exits, and the parent detaches it. Code the child maps
 * (the program's own page again, with an RDTSC hvrun rewrites into a
 * trap) runs in the parent too. One line per value; exits 1 at the first failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stddef.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest_check.h"

#define STACK_BYTES (256 * 1024)

extern char **environ;

static volatile int written, unshare_err;
static volatile char *volatile child_map;
static volatile uint32_t flag_word;

static void wait_exit0(pid_t pid)
{
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static long futex(volatile uint32_t *w, int op, uint32_t val)
{
    return syscall(SYS_futex, w, op, val, NULL, NULL, 0);
}

static void vfork_write(void)
{
    written = 1;
    fflush(stdout);
    pid_t pid = vfork();
    CHECK(pid >= 0);
    if (pid == 0) {
        written = 42;
        /* current_is_single_threaded: its memory is its parent's too */
        unshare_err = unshare(CLONE_VM) < 0 ? errno : 0;
        _exit(0);
    }
    wait_exit0(pid);
    printf("vfork child's write: %d\n", written);
    CHECK(written == 42);
    printf("unshare(CLONE_VM) in the vfork child: %s\n",
           strerror(unshare_err));
    CHECK(unshare_err == EINVAL);
    CHECK(unshare(CLONE_VM) == 0); /* alone on its memory: nothing to do */
}

static void vfork_mmap_and_brk(void)
{
    uintptr_t brk0 = (uintptr_t)syscall(SYS_brk, 0);
    fflush(stdout);
    pid_t pid = vfork();
    CHECK(pid >= 0);
    if (pid == 0) {
        char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            _exit(2);
        strcpy(m + 4096, "mapped by the child");
        child_map = m;
        syscall(SYS_brk, brk0 + 16384);
        _exit(0);
    }
    wait_exit0(pid);
    CHECK(child_map != NULL);
    printf("child's mapping: %s\n", (const char *)child_map + 4096);
    CHECK(strcmp((const char *)child_map + 4096, "mapped by the child") == 0);
    CHECK(munmap((void *)child_map, 8192) == 0);
    uintptr_t brk1 = (uintptr_t)syscall(SYS_brk, 0);
    printf("brk moved by the child: %lu\n", (unsigned long)(brk1 - brk0));
    CHECK(brk1 >= brk0 + 16384);
    CHECK(syscall(SYS_brk, brk0) == (long)brk0);
}

static void spawn_missing(void)
{
    pid_t pid = 0;
    char *argv[] = {"nope", NULL};
    int rc = posix_spawn(&pid, "/nonexistent/nope", NULL, NULL, argv,
                         environ);
    printf("posix_spawn of a missing program: %s\n", strerror(rc));
    CHECK(rc == ENOENT);
}

static void spawn_true(void)
{
    pid_t pid = 0;
    char *argv[] = {"true", NULL};
    int rc = posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ);
    printf("posix_spawn of /bin/true: %d\n", rc);
    CHECK(rc == 0 && pid > 0);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    printf("its status: exited %d code %d\n", WIFEXITED(status),
           WEXITSTATUS(status));
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static int child_writes(void *arg)
{
    *(volatile int *)arg = 7;
    return 0;
}

static void clone_vm_write(void)
{
    char *stack = malloc(STACK_BYTES);
    CHECK(stack != NULL);
    volatile int value = 0;
    fflush(stdout);
    pid_t pid = clone(child_writes, stack + STACK_BYTES, CLONE_VM | SIGCHLD,
                      (void *)&value);
    CHECK(pid > 0);
    wait_exit0(pid);
    printf("clone(CLONE_VM) child's write: %d\n", value);
    CHECK(value == 7);
    free(stack);
}

/* Runs beside its parent: wakes the parent's private futex wait, then
 * exits, which clears its CLONE_CHILD_CLEARTID word. */
static volatile pid_t child_saw_tid;
static volatile pid_t ctid, ptid;

static int child_wakes(void *arg)
{
    (void)arg;
    child_saw_tid = ctid; /* CLONE_CHILD_SETTID wrote it before it ran */
    flag_word = 1;
    futex(&flag_word, FUTEX_WAKE_PRIVATE, 1);
    return 0;
}

static void clone_vm_futex_and_cleartid(void)
{
    char *stack = malloc(STACK_BYTES);
    CHECK(stack != NULL);
    flag_word = 0;
    fflush(stdout);
    pid_t pid = clone(child_wakes, stack + STACK_BYTES,
                      CLONE_VM | CLONE_PARENT_SETTID | CLONE_CHILD_SETTID |
                          CLONE_CHILD_CLEARTID | SIGCHLD,
                      NULL, (pid_t *)&ptid, NULL, (pid_t *)&ctid);
    CHECK(pid > 0);
    printf("CLONE_PARENT_SETTID is the pid: %d\n", ptid == pid);
    CHECK(ptid == pid);
    while (flag_word == 0)
        futex(&flag_word, FUTEX_WAIT_PRIVATE, 0);
    printf("woken by the child's futex wake: %u\n", flag_word);
    /* The exit clears ctid and wakes its futex (not a private one). */
    for (pid_t seen; (seen = ctid) != 0;)
        futex((volatile uint32_t *)&ctid, FUTEX_WAIT, (uint32_t)seen);
    printf("CLONE_CHILD_CLEARTID cleared: %d\n", ctid);
    printf("CLONE_CHILD_SETTID was the pid: %d\n", child_saw_tid == pid);
    CHECK(child_saw_tid == pid);
    wait_exit0(pid);
    free(stack);
}

/* A vfork child that execs clears its CLONE_CHILD_CLEARTID word in the
 * parent's memory too: clone(CLONE_VM|CLONE_VFORK) as posix_spawn does. */
static int child_execs(void *arg)
{
    (void)arg;
    char *argv[] = {"true", NULL};
    execve("/bin/true", argv, environ);
    _exit(127);
}

static void vfork_exec_cleartid(void)
{
    char *stack = malloc(STACK_BYTES);
    CHECK(stack != NULL);
    ctid = -1;
    fflush(stdout);
    pid_t pid = clone(child_execs, stack + STACK_BYTES,
                      CLONE_VM | CLONE_VFORK | CLONE_CHILD_CLEARTID | SIGCHLD,
                      NULL, NULL, NULL, (pid_t *)&ctid);
    CHECK(pid > 0);
    printf("cleared at the vfork child's exec: %d\n", ctid);
    CHECK(ctid == 0);
    wait_exit0(pid);
    free(stack);
}

/* The grandchild: waits for its parent to be gone (it becomes ours, the
 * subreaper's), then uses the memory that parent made. */
static pid_t reaper_pid;

static int orphan_uses_memory(void *arg)
{
    (void)arg;
    while (getppid() != reaper_pid)
        sched_yield();
    char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return 2;
    strcpy(m, "still there");
    int ok = strcmp(m, "still there") == 0 && munmap(m, 4096) == 0;
    written = 99;
    return ok && written == 99 ? 0 : 3;
}

static void memory_outlives_its_maker(void)
{
    reaper_pid = getpid();
    CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
    fflush(stdout);
    pid_t mid = fork();
    CHECK(mid >= 0);
    if (mid == 0) {
        char *stack = malloc(STACK_BYTES);
        if (!stack ||
            clone(orphan_uses_memory, stack + STACK_BYTES,
                  CLONE_VM | SIGCHLD, NULL) < 0)
            _exit(1);
        _exit(0); /* its memory stays the grandchild's */
    }
    wait_exit0(mid);
    int status;
    pid_t orphan = wait(&status);
    CHECK(orphan > 0);
    printf("the orphan on its late parent's memory: exited %d code %d\n",
           WIFEXITED(status), WEXITSTATUS(status));
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(prctl(PR_SET_CHILD_SUBREAPER, 0) == 0);
}

/* The parent's second thread: runs while the main thread is in vfork,
 * and wakes the child waiting on go_word. */
static volatile uint32_t go_word;

static void *waker_thread(void *arg)
{
    (void)arg;
    while (flag_word == 0) /* the child waits from now on */
        sched_yield();
    go_word = 1;
    futex(&go_word, FUTEX_WAKE_PRIVATE, 1);
    return NULL;
}

static void vfork_beside_a_thread(void)
{
    flag_word = 0;
    go_word = 0;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, waker_thread, NULL) == 0);
    fflush(stdout);
    pid_t pid = vfork();
    CHECK(pid >= 0);
    if (pid == 0) {
        flag_word = 1;
        while (go_word == 0)
            futex(&go_word, FUTEX_WAIT_PRIVATE, 0);
        _exit(0);
    }
    wait_exit0(pid);
    CHECK(pthread_join(t, NULL) == 0);
    printf("the vfork child was woken by the parent's thread: %u\n",
           go_word);
}

/* A robust futex held by a CLONE_VM child: its exit walks its robust
 * list in the one memory (Linux's exit_robust_list). */
struct robust_entry {
    struct robust_list list;
    volatile uint32_t word;
};
static struct robust_list_head robust_head;
static struct robust_entry robust_lock;

static int child_holds_robust_lock(void *arg)
{
    (void)arg;
    robust_head.list.next = &robust_lock.list;
    robust_head.futex_offset = offsetof(struct robust_entry, word);
    robust_head.list_op_pending = NULL;
    robust_lock.list.next = &robust_head.list;
    if (syscall(SYS_set_robust_list, &robust_head, sizeof(robust_head)) < 0)
        return 2;
    robust_lock.word = (uint32_t)syscall(SYS_gettid);
    while (!(robust_lock.word & FUTEX_WAITERS)) /* the parent waits */
        sched_yield();
    return 0; /* dies holding it */
}

static void robust_lock_of_a_dead_child(void)
{
    char *stack = malloc(STACK_BYTES);
    CHECK(stack != NULL);
    robust_lock.word = 0;
    fflush(stdout);
    pid_t pid = clone(child_holds_robust_lock, stack + STACK_BYTES,
                      CLONE_VM | SIGCHLD, NULL);
    CHECK(pid > 0);
    while (robust_lock.word == 0)
        sched_yield();
    uint32_t w = __atomic_or_fetch(&robust_lock.word, FUTEX_WAITERS,
                                   __ATOMIC_SEQ_CST);
    while (!(w & FUTEX_OWNER_DIED)) {
        futex(&robust_lock.word, FUTEX_WAIT, w);
        w = robust_lock.word;
    }
    printf("robust lock of the dead child: owner died %d waiters %d "
           "owner %d\n",
           !!(w & FUTEX_OWNER_DIED), !!(w & FUTEX_WAITERS),
           (int)(w & FUTEX_TID_MASK));
    CHECK((w & FUTEX_TID_MASK) == 0);
    wait_exit0(pid);
    free(stack);
}

static sigjmp_buf fault_jmp;

static void on_segv(int sig)
{
    (void)sig;
    siglongjmp(fault_jmp, 1);
}

/* Whether writing (or reading) *at faults. */
static int access_faults(volatile char *at, int write)
{
    struct sigaction sa = {.sa_handler = on_segv}, old;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGSEGV, &sa, &old) == 0);
    int faulted = 1;
    if (sigsetjmp(fault_jmp, 1) == 0) {
        if (write)
            *at = 'w';
        else
            (void)*at;
        faulted = 0;
    }
    CHECK(sigaction(SIGSEGV, &old, NULL) == 0);
    return faulted;
}

static void vfork_protects_and_unmaps(void)
{
    char *m = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    m[0] = m[4096] = 'p'; /* both pages touched by the parent */
    fflush(stdout);
    pid_t pid = vfork();
    CHECK(pid >= 0);
    if (pid == 0) {
        if (mprotect(m, 4096, PROT_READ) < 0 || munmap(m + 4096, 4096) < 0)
            _exit(2);
        _exit(0);
    }
    wait_exit0(pid);
    printf("write after the child's mprotect faults: %d\n",
           access_faults(m, 1));
    printf("read after the child's munmap faults: %d\n",
           access_faults(m + 4096, 0));
    printf("read of the protected page: %c\n", m[0]);
    CHECK(munmap(m, 4096) == 0);
}

/* A mapping bigger than the memory the parent had, made by the child:
 * the guest-physical memory behind the one space grows under it. */
static void vfork_maps_big(void)
{
    size_t len = 600UL << 20;
    fflush(stdout);
    pid_t pid = vfork();
    CHECK(pid >= 0);
    if (pid == 0) {
        char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED)
            _exit(2);
        m[0] = 'a';
        m[len - 1] = 'z';
        child_map = m;
        _exit(0);
    }
    wait_exit0(pid);
    printf("the child's 600 MiB mapping: %c..%c\n", child_map[0],
           child_map[len - 1]);
    child_map[len / 2] = 'm';
    CHECK(munmap((void *)child_map, len) == 0);
}

static void vfork_attaches_sysv_shm(void)
{
    int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
    CHECK(id >= 0);
    child_map = NULL;
    fflush(stdout);
    pid_t pid = vfork();
    CHECK(pid >= 0);
    if (pid == 0) {
        char *m = shmat(id, NULL, 0);
        if (m == (char *)-1)
            _exit(2);
        strcpy(m, "attached by the child");
        child_map = m;
        _exit(0);
    }
    wait_exit0(pid);
    struct shmid_ds ds;
    CHECK(shmctl(id, IPC_STAT, &ds) == 0);
    printf("segment attached after the child's exit: %lu\n",
           (unsigned long)ds.shm_nattch);
    CHECK(child_map != NULL);
    printf("its bytes: %s\n", (const char *)child_map);
    printf("shmdt by the parent: %d\n", shmdt((const void *)child_map));
    CHECK(shmctl(id, IPC_STAT, &ds) == 0);
    printf("attached after shmdt: %lu\n", (unsigned long)ds.shm_nattch);
    CHECK(shmctl(id, IPC_RMID, NULL) == 0);
}

/* A leaf function without relocations, so a copy of its page runs too. */
__attribute__((noinline)) static int tsc_goes_forward(void)
{
    uint32_t lo0, hi0, lo1, hi1;
    __asm__ volatile("rdtsc" : "=a"(lo0), "=d"(hi0));
    __asm__ volatile("rdtsc" : "=a"(lo1), "=d"(hi1));
    return ((uint64_t)hi1 << 32 | lo1) >= ((uint64_t)hi0 << 32 | lo0);
}

struct where {
    uintptr_t addr;
    off_t file_off;
};

static int find_file_off(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct where *w = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t va = w->addr - info->dlpi_addr;
        if (ph->p_type == PT_LOAD && va >= ph->p_vaddr &&
            va < ph->p_vaddr + ph->p_filesz) {
            w->file_off = (off_t)(ph->p_offset + (va - ph->p_vaddr));
            return 1;
        }
    }
    return 1; /* only the program itself */
}

static void vfork_maps_code(void)
{
    struct where w = {(uintptr_t)tsc_goes_forward, -1};
    dl_iterate_phdr(find_file_off, &w);
    CHECK(w.file_off >= 0);
    off_t page = w.file_off & ~(off_t)4095;
    size_t in_page = (size_t)(w.file_off - page);
    child_map = NULL;
    fflush(stdout);
    pid_t pid = vfork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int fd = open("/proc/self/exe", O_RDONLY);
        if (fd < 0)
            _exit(2);
        char *m = mmap(NULL, 2 * 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE,
                       fd, page);
        close(fd);
        if (m == MAP_FAILED)
            _exit(3);
        child_map = m;
        _exit(0);
    }
    wait_exit0(pid);
    CHECK(child_map != NULL);
    int (*copy)(void) = (int (*)(void))(child_map + in_page);
    printf("the child's mapping of this code runs in the parent: %d\n",
           copy());
    CHECK(munmap((void *)child_map, 2 * 4096) == 0);
}

int main(void)
{
    vfork_write();
    vfork_mmap_and_brk();
    spawn_missing();
    spawn_true();
    clone_vm_write();
    clone_vm_futex_and_cleartid();
    vfork_exec_cleartid();
    memory_outlives_its_maker();
    vfork_beside_a_thread();
    robust_lock_of_a_dead_child();
    vfork_protects_and_unmaps();
    vfork_maps_big();
    vfork_attaches_sysv_shm();
    vfork_maps_code();
    printf("ok\n");
    return 0;
}
