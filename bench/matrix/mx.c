/*
 * mx.c - the small C workloads of the reference matrix (bench/matrix.rows),
 * one per subcommand: `mx NAME`. Each prints what it computed, nothing
 * that depends on time, pids or addresses unless the row is about that
 * (those rows are compared between hvrun's two runs only).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int libm(void)
{
    double s = 0;
    for (int i = 1; i <= 1000; i++)
        s += sqrt((double)i) * sin((double)i);
    printf("%.10f\n", s);
    return 0;
}

static long counter;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *add_many(void *arg)
{
    long n = (long)arg;
    for (long i = 0; i < n; i++) {
        pthread_mutex_lock(&lock);
        counter++;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

static int threads(int n, long each)
{
    pthread_t t[16];
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, add_many, (void *)each);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    printf("counter %ld\n", counter);
    return 0;
}

static int openmp(void)
{
    long sum = 0;
#pragma omp parallel for reduction(+ : sum)
    for (long i = 0; i < 1000000; i++)
        sum += i % 7;
    printf("sum %ld\n", sum);
    return 0;
}

static volatile sig_atomic_t got;
static void on_sig(int s) { got = s; }

static int sigusr1(void)
{
    signal(SIGUSR1, on_sig);
    raise(SIGUSR1);
    printf("got signal %d\n", (int)got);
    return 0;
}

static int alarm_pause(void)
{
    signal(SIGALRM, on_sig);
    alarm(1);
    pause();
    printf("alarm %d\n", (int)got);
    return 0;
}

static void on_info(int s, siginfo_t *si, void *u)
{
    (void)u;
    got = s + (si->si_code == SI_USER ? 1000 : 0);
}

static int sigaction_info(void)
{
    struct sigaction sa = {.sa_sigaction = on_info, .sa_flags = SA_SIGINFO};
    sigaction(SIGUSR2, &sa, NULL);
    kill(getpid(), SIGUSR2);
    printf("siginfo %d\n", (int)got);
    return 0;
}

static int sigprocmask_pending(void)
{
    sigset_t s, p;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    signal(SIGUSR1, on_sig);
    sigprocmask(SIG_BLOCK, &s, NULL);
    raise(SIGUSR1);
    sigpending(&p);
    printf("pending %d delivered %d\n", sigismember(&p, SIGUSR1), (int)got);
    sigprocmask(SIG_UNBLOCK, &s, NULL);
    printf("after unblock %d\n", (int)got);
    return 0;
}

static int malloc_io(void)
{
    char *b = malloc(1 << 20);
    for (int i = 0; i < (1 << 20); i++)
        b[i] = (char)('a' + i % 26);
    FILE *f = fopen("mx-io.tmp", "w");
    fwrite(b, 1, 1 << 20, f);
    fclose(f);
    memset(b, 0, 1 << 20);
    f = fopen("mx-io.tmp", "r");
    size_t n = fread(b, 1, 1 << 20, f);
    fclose(f);
    unlink("mx-io.tmp");
    unsigned h = 0;
    for (size_t i = 0; i < n; i++)
        h = h * 31 + (unsigned char)b[i];
    free(b);
    printf("read %zu hash %08x\n", n, h);
    return 0;
}

static int fork_pipe(void)
{
    int p[2];
    if (pipe(p) < 0)
        return 1;
    pid_t c = fork();
    if (c == 0) {
        close(p[0]);
        dprintf(p[1], "hello from the child\n");
        _exit(7);
    }
    close(p[1]);
    char buf[64] = {0};
    ssize_t n = read(p[0], buf, sizeof(buf) - 1);
    int st;
    waitpid(c, &st, 0);
    printf("%.*s", (int)(n > 0 ? n : 0), buf);
    printf("child exit %d\n", WEXITSTATUS(st));
    return 0;
}

static int fork_wait_pid(void)
{
    pid_t c = fork();
    if (c == 0)
        _exit(3);
    int st;
    pid_t w = waitpid(c, &st, 0);
    printf("child %d reaped %d exit %d (parent %d)\n", (int)c, (int)w,
           WEXITSTATUS(st), (int)getpid());
    return 0;
}

/* A bounded queue with condition variables. */
static int q[8], qn, qhead, produced_sum, consumed_sum;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER,
                      not_full = PTHREAD_COND_INITIALIZER;

static void *producer(void *a)
{
    (void)a;
    for (int i = 1; i <= 2000; i++) {
        pthread_mutex_lock(&lock);
        while (qn == 8)
            pthread_cond_wait(&not_full, &lock);
        q[(qhead + qn++) % 8] = i;
        produced_sum += i;
        pthread_cond_signal(&not_empty);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

static int prodcons(void)
{
    pthread_t t;
    pthread_create(&t, NULL, producer, NULL);
    for (int k = 0; k < 2000; k++) {
        pthread_mutex_lock(&lock);
        while (qn == 0)
            pthread_cond_wait(&not_empty, &lock);
        consumed_sum += q[qhead];
        qhead = (qhead + 1) % 8;
        qn--;
        pthread_cond_signal(&not_full);
        pthread_mutex_unlock(&lock);
    }
    pthread_join(t, NULL);
    printf("produced %d consumed %d\n", produced_sum, consumed_sum);
    return 0;
}

static __thread int tls_value;

static void *tls_worker(void *a)
{
    tls_value = (int)(long)a;
    for (int i = 0; i < 1000; i++)
        tls_value += 1;
    return (void *)(long)tls_value;
}

static int tls(void)
{
    pthread_t t[4];
    long sum = 0;
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, tls_worker, (void *)(i * 10));
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        sum += (long)r;
    }
    printf("tls sum %ld main %d\n", sum, tls_value);
    return 0;
}

static void *compute(void *a)
{
    unsigned long x = (unsigned long)a, s = 0;
    for (int i = 0; i < 2000000; i++) {
        x = x * 6364136223846793005UL + 1442695040888963407UL;
        s += x >> 60;
    }
    return (void *)s;
}

static int compute8(void)
{
    pthread_t t[8];
    unsigned long total = 0;
    for (long i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, compute, (void *)(i + 1));
    for (int i = 0; i < 8; i++) {
        void *r;
        pthread_join(t[i], &r);
        total += (unsigned long)r;
    }
    printf("total %lu\n", total);
    return 0;
}

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static long shared_value;

static void *rw_worker(void *a)
{
    long id = (long)a, seen = 0;
    for (int i = 0; i < 2000; i++) {
        if (i % 10 == (int)id) {
            pthread_rwlock_wrlock(&rw);
            shared_value++;
            pthread_rwlock_unlock(&rw);
        } else {
            pthread_rwlock_rdlock(&rw);
            seen += shared_value >= 0;
            pthread_rwlock_unlock(&rw);
        }
    }
    return (void *)seen;
}

static int rwlock(void)
{
    pthread_t t[4];
    long seen = 0;
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, rw_worker, (void *)i);
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        seen += (long)r;
    }
    printf("writes %ld reads %ld\n", shared_value, seen);
    return 0;
}

static pthread_barrier_t barrier;
static atomic_int phase_count;

static void *barrier_worker(void *a)
{
    (void)a;
    for (int i = 0; i < 50; i++) {
        atomic_fetch_add(&phase_count, 1);
        pthread_barrier_wait(&barrier);
    }
    return NULL;
}

static int barrier_test(void)
{
    pthread_t t[4];
    pthread_barrier_init(&barrier, NULL, 4);
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, barrier_worker, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    printf("phases %d\n", atomic_load(&phase_count));
    return 0;
}

static sem_t items, slots;
static int ring[4], ring_in, ring_out;

static void *sem_producer(void *a)
{
    (void)a;
    for (int i = 1; i <= 1000; i++) {
        sem_wait(&slots);
        ring[ring_in++ % 4] = i;
        sem_post(&items);
    }
    return NULL;
}

static int sem_pc(void)
{
    sem_init(&items, 0, 0);
    sem_init(&slots, 0, 4);
    pthread_t t;
    pthread_create(&t, NULL, sem_producer, NULL);
    long sum = 0;
    for (int i = 0; i < 1000; i++) {
        sem_wait(&items);
        sum += ring[ring_out++ % 4];
        sem_post(&slots);
    }
    pthread_join(t, NULL);
    printf("sum %ld\n", sum);
    return 0;
}

/* A three-state futex mutex (Drepper's "Futexes are tricky"). */
static atomic_int fmutex;

static void fmutex_lock(void)
{
    int c = 0;
    if (atomic_compare_exchange_strong(&fmutex, &c, 1))
        return;
    if (c != 2)
        c = atomic_exchange(&fmutex, 2);
    while (c != 0) {
        syscall(SYS_futex, &fmutex, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
        c = atomic_exchange(&fmutex, 2);
    }
}

static void fmutex_unlock(void)
{
    if (atomic_fetch_sub(&fmutex, 1) != 1) {
        atomic_store(&fmutex, 0);
        syscall(SYS_futex, &fmutex, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
}

static long fcount;

static void *futex_worker(void *a)
{
    (void)a;
    for (int i = 0; i < 10000; i++) {
        fmutex_lock();
        fcount++;
        fmutex_unlock();
    }
    return NULL;
}

static int futex_mutex(void)
{
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, futex_worker, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    printf("count %ld\n", fcount);
    return 0;
}

static void *pool_task(void *a)
{
    long n = (long)a, f = 1;
    for (long i = 2; i <= n; i++)
        f = f * i % 1000003;
    return (void *)f;
}

static int thread_pool(void)
{
    long total = 0;
    for (int round = 0; round < 4; round++) {
        pthread_t t[4];
        for (long i = 0; i < 4; i++)
            pthread_create(&t[i], NULL, pool_task, (void *)(1000 + round * 4 + i));
        for (int i = 0; i < 4; i++) {
            void *r;
            pthread_join(t[i], &r);
            total += (long)r;
        }
    }
    printf("pool total %ld\n", total);
    return 0;
}

static void *tid_worker(void *a)
{
    (void)a;
    return (void *)(long)gettid();
}

static int gettid4(void)
{
    pthread_t t[4];
    printf("main tid %d\n", (int)gettid());
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, tid_worker, NULL);
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        printf("thread tid %ld\n", (long)r);
    }
    return 0;
}

static int identity(void)
{
    printf("pid %d ppid %d uid %d gid %d euid %d\n", (int)getpid(),
           (int)getppid(), (int)getuid(), (int)getgid(), (int)geteuid());
    return 0;
}

static int sysconf_values(void)
{
    printf("pagesize %ld nprocs %ld clk_tck %ld open_max %ld\n",
           sysconf(_SC_PAGESIZE), sysconf(_SC_NPROCESSORS_ONLN),
           sysconf(_SC_CLK_TCK), sysconf(_SC_OPEN_MAX));
    return 0;
}

static int socketpairs(void)
{
    int s[2];
    char b[32] = {0};
    socketpair(AF_UNIX, SOCK_STREAM, 0, s);
    write(s[0], "stream", 6);
    read(s[1], b, sizeof(b) - 1);
    printf("%s\n", b);
    close(s[0]);
    close(s[1]);
    socketpair(AF_UNIX, SOCK_DGRAM, 0, s);
    write(s[1], "dgram", 5);
    memset(b, 0, sizeof(b));
    read(s[0], b, sizeof(b) - 1);
    printf("%s\n", b);
    int p[2];
    pipe2(p, O_CLOEXEC);
    printf("cloexec %d\n", (fcntl(p[0], F_GETFD) & FD_CLOEXEC) != 0);
    int e = eventfd(3, 0);
    uint64_t v = 4;
    write(e, &v, 8);
    read(e, &v, 8);
    printf("eventfd %llu\n", (unsigned long long)v);
    return 0;
}

static int clocks(void)
{
    struct timespec a, b, r;
    clock_gettime(CLOCK_MONOTONIC, &a);
    clock_gettime(CLOCK_REALTIME, &b);
    clock_getres(CLOCK_MONOTONIC, &r);
    struct timeval tv;
    gettimeofday(&tv, NULL);
    printf("mono %lld.%09ld real %lld.%09ld res %ld tv %lld.%06ld\n",
           (long long)a.tv_sec, a.tv_nsec, (long long)b.tv_sec, b.tv_nsec,
           r.tv_nsec, (long long)tv.tv_sec, (long)tv.tv_usec);
    return 0;
}

static int mmap_tests(void)
{
    char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(p, 7, 1 << 20);
    p = mremap(p, 1 << 20, 2 << 20, MREMAP_MAYMOVE);
    printf("mremap kept %d\n", p[(1 << 20) - 1]);
    madvise(p, 1 << 20, MADV_DONTNEED);
    printf("after dontneed %d\n", p[0]);
    void *b0 = sbrk(0);
    sbrk(65536);
    printf("brk grew %ld\n", (long)((char *)sbrk(0) - (char *)b0));
    return 0;
}

static sigjmp_buf jb;
static void on_segv(int s)
{
    (void)s;
    siglongjmp(jb, 1);
}

static int mprotect_segv(void)
{
    char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mprotect(p, 4096, PROT_READ);
    signal(SIGSEGV, on_segv);
    if (sigsetjmp(jb, 1) == 0) {
        p[0] = 1;
        printf("no fault\n");
    } else {
        printf("caught SIGSEGV\n");
    }
    return 0;
}

static int readiness(void)
{
    int a[2], b[2];
    pipe(a);
    pipe(b);
    write(b[1], "x", 1);
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = b[0]}, out[2];
    epoll_ctl(ep, EPOLL_CTL_ADD, b[0], &ev);
    ev.data.fd = a[0];
    epoll_ctl(ep, EPOLL_CTL_ADD, a[0], &ev);
    int n = epoll_wait(ep, out, 2, 100);
    printf("epoll %d ready, b %d\n", n, out[0].data.fd == b[0]);
    struct pollfd pf[2] = {{a[0], POLLIN, 0}, {b[0], POLLIN, 0}};
    printf("poll %d\n", poll(pf, 2, 50));
    fd_set r;
    FD_ZERO(&r);
    FD_SET(a[0], &r);
    FD_SET(b[0], &r);
    struct timeval tv = {0, 50000};
    printf("select %d b %d\n", select(b[0] + 1, &r, NULL, NULL, &tv),
           FD_ISSET(b[0], &r) != 0);
    int tf = timerfd_create(CLOCK_MONOTONIC, 0);
    struct itimerspec its = {.it_value = {0, 20000000}};
    timerfd_settime(tf, 0, &its, NULL);
    uint64_t exp;
    read(tf, &exp, 8);
    printf("timerfd %llu\n", (unsigned long long)exp);
    sigset_t m;
    sigemptyset(&m);
    sigaddset(&m, SIGUSR1);
    sigprocmask(SIG_BLOCK, &m, NULL);
    int sf = signalfd(-1, &m, 0);
    raise(SIGUSR1);
    struct signalfd_siginfo si;
    read(sf, &si, sizeof(si));
    printf("signalfd %u\n", si.ssi_signo);
    return 0;
}

/* Small data-structure apps. */
struct node {
    int key;
    struct node *left, *right, *next;
};

static struct node *bst_insert(struct node *t, struct node *n)
{
    if (!t)
        return n;
    if (n->key < t->key)
        t->left = bst_insert(t->left, n);
    else
        t->right = bst_insert(t->right, n);
    return t;
}

static long bst_sum_depth(const struct node *t, int d)
{
    return t ? d + bst_sum_depth(t->left, d + 1) + bst_sum_depth(t->right, d + 1)
             : 0;
}

static int data_structures(void)
{
    struct node *list = NULL, *tree = NULL;
    unsigned x = 12345;
    for (int i = 0; i < 5000; i++) {
        struct node *n = calloc(1, sizeof(*n));
        x = x * 1103515245 + 12345;
        n->key = (int)(x >> 8) % 100000;
        n->next = list;
        list = n;
        tree = bst_insert(tree, n);
    }
    long len = 0;
    for (struct node *n = list; n; n = n->next)
        len++;
    enum { H = 8192 };
    static int table[H];
    int collisions = 0;
    for (struct node *n = list; n; n = n->next) {
        unsigned h = (unsigned)n->key * 2654435761u % H;
        while (table[h]) {
            h = (h + 1) % H;
            collisions++;
        }
        table[h] = n->key + 1;
    }
    static double a[64][64], b[64][64], c[64][64];
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < 64; j++) {
            a[i][j] = i + j;
            b[i][j] = i - j;
        }
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < 64; j++)
            for (int k = 0; k < 64; k++)
                c[i][j] += a[i][k] * b[k][j];
    printf("list %ld depth-sum %ld collisions %d trace %.1f\n", len,
           bst_sum_depth(tree, 0), collisions, c[10][10] + c[63][0]);
    return 0;
}

static int argv_env(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        printf("argv[%d] %s\n", i, argv[i]);
    const char *h = getenv("HOME");
    printf("HOME set %d\n", h != NULL);
    struct utsname u;
    uname(&u);
    printf("uname %s %s\n", u.sysname, u.machine);
    return 0;
}

static int sorted_readdir(void)
{
    struct dirent **names;
    int n = scandir("/etc", &names, NULL, alphasort);
    int shown = 0;
    for (int i = 0; i < n; i++) {
        if (shown < 5 && names[i]->d_name[0] != '.') {
            printf("%s\n", names[i]->d_name);
            shown++;
        }
        free(names[i]);
    }
    free(names);
    return 0;
}

int main(int argc, char **argv)
{
    const char *w = argc > 1 ? argv[1] : "";
    if (!strcmp(w, "libm"))
        return libm();
    if (!strcmp(w, "pthreads4"))
        return threads(4, 10000);
    if (!strcmp(w, "mutex16"))
        return threads(16, 2000);
    if (!strcmp(w, "openmp"))
        return openmp();
    if (!strcmp(w, "sigusr1"))
        return sigusr1();
    if (!strcmp(w, "alarm"))
        return alarm_pause();
    if (!strcmp(w, "siginfo"))
        return sigaction_info();
    if (!strcmp(w, "sigmask"))
        return sigprocmask_pending();
    if (!strcmp(w, "malloc-io"))
        return malloc_io();
    if (!strcmp(w, "fork-pipe"))
        return fork_pipe();
    if (!strcmp(w, "fork-wait"))
        return fork_wait_pid();
    if (!strcmp(w, "prodcons"))
        return prodcons();
    if (!strcmp(w, "tls"))
        return tls();
    if (!strcmp(w, "compute8"))
        return compute8();
    if (!strcmp(w, "rwlock"))
        return rwlock();
    if (!strcmp(w, "barrier"))
        return barrier_test();
    if (!strcmp(w, "sem"))
        return sem_pc();
    if (!strcmp(w, "futex"))
        return futex_mutex();
    if (!strcmp(w, "pool"))
        return thread_pool();
    if (!strcmp(w, "gettid"))
        return gettid4();
    if (!strcmp(w, "identity"))
        return identity();
    if (!strcmp(w, "sysconf"))
        return sysconf_values();
    if (!strcmp(w, "sockets"))
        return socketpairs();
    if (!strcmp(w, "clocks"))
        return clocks();
    if (!strcmp(w, "mmap"))
        return mmap_tests();
    if (!strcmp(w, "mprotect"))
        return mprotect_segv();
    if (!strcmp(w, "readiness"))
        return readiness();
    if (!strcmp(w, "data"))
        return data_structures();
    if (!strcmp(w, "argv"))
        return argv_env(argc, argv);
    if (!strcmp(w, "readdir"))
        return sorted_readdir();
    fprintf(stderr, "mx: unknown workload '%s'\n", w);
    return 2;
}
