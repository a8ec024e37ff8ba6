/*
 * det_sources: prints, one labelled line each, every value a program can
 * read that differs between two runs on an ordinary Linux host: addresses
 * (stack, heap, code, libc, mmap), AT_RANDOM, every clock (through libc and
 * through the raw syscall), gettimeofday, time, getrandom, /dev/urandom,
 * pid/ppid/tid, the processor counts, the affinity mask, getrusage,
 * sysinfo, uname, stat of a file it creates, CPUID leaves 0 and 1, the
 * name an AF_UNIX autobind gives (the kernel's random one on Linux), and
 * CLOCK_MONOTONIC around nanosleep(50 ms).
 *
 * Under hvrun two runs must print identical bytes (tests/determinism).
 *
 *   det_sources            print the values (exit 0; 1 if a call failed)
 *   det_sources --check    print nothing but "det_sources: check ok", or
 *                          one "det_sources: FAIL ..." line per broken
 *                          plausibility rule and exit 1. The rules hold on
 *                          Linux too: clocks move forward, the 50 ms sleep
 *                          advances CLOCK_MONOTONIC (and REALTIME, BOOTTIME)
 *                          by >= 50 ms, random bytes are not all zero and
 *                          two draws differ, the processor counts are >= 1.
 *
 * The scratch file is /tmp/det_sources.PID (hvrun gives each run a private
 * /tmp), or DIR/det_sources.PID with --dir DIR; it is removed at the end.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/times.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static int check_mode;
static int n_fail;   /* plausibility failures (--check) */
static int n_errors; /* calls that failed */

/* Printing is suppressed in --check mode. */
static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...)
{
    if (check_mode)
        return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
}

static void rule(int ok, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void rule(int ok, const char *fmt, ...)
{
    if (ok || !check_mode)
        return;
    va_list ap;
    va_start(ap, fmt);
    printf("det_sources: FAIL ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    n_fail++;
}

static void error(const char *what)
{
    int e = errno;
    printf("%s: ERROR errno %d (%s)\n", what, e, strerror(e));
    n_errors++;
}

static void hex(const char *label, const unsigned char *p, size_t n)
{
    if (check_mode)
        return;
    printf("%s: ", label);
    for (size_t i = 0; i < n; i++)
        printf("%02x", p[i]);
    printf("\n");
}

static int all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

static int64_t ts_ns(const struct timespec *ts)
{
    return (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

struct clk {
    const char *name;
    clockid_t id;
};

static const struct clk clocks[] = {
    {"realtime", CLOCK_REALTIME},
    {"monotonic", CLOCK_MONOTONIC},
    {"boottime", CLOCK_BOOTTIME},
    {"realtime_coarse", CLOCK_REALTIME_COARSE},
    {"monotonic_coarse", CLOCK_MONOTONIC_COARSE},
    {"monotonic_raw", CLOCK_MONOTONIC_RAW},
    {"process_cputime", CLOCK_PROCESS_CPUTIME_ID},
    {"thread_cputime", CLOCK_THREAD_CPUTIME_ID},
};
#define NCLOCKS (sizeof(clocks) / sizeof(clocks[0]))

/* Reads a clock through libc (vDSO when there is one); -1 on failure. */
static int64_t read_clock(clockid_t id, const char *what)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0) {
        error(what);
        return -1;
    }
    return ts_ns(&ts);
}

static void print_ns(const char *label, int64_t ns)
{
    const char *sign = ns < 0 ? "-" : "";
    uint64_t u = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
    out("%s: %s%" PRIu64 ".%09" PRIu64 "\n", label, sign, u / 1000000000ULL,
        u % 1000000000ULL);
}

static void clocks_section(void)
{
    int64_t libc_ns[NCLOCKS], raw_ns[NCLOCKS];
    char label[64];

    for (size_t i = 0; i < NCLOCKS; i++) {
        snprintf(label, sizeof(label), "clock_%s", clocks[i].name);
        libc_ns[i] = read_clock(clocks[i].id, label);
        if (libc_ns[i] >= 0)
            print_ns(label, libc_ns[i]);
    }
    /* The same clocks through the syscall itself, bypassing any vDSO. */
    for (size_t i = 0; i < NCLOCKS; i++) {
        struct timespec ts;
        snprintf(label, sizeof(label), "sys_clock_%s", clocks[i].name);
        if (syscall(SYS_clock_gettime, clocks[i].id, &ts) != 0) {
            error(label);
            raw_ns[i] = -1;
            continue;
        }
        raw_ns[i] = ts_ns(&ts);
        print_ns(label, raw_ns[i]);
        /* Read later, so never behind the libc reading (coarse clocks tick
         * in steps but never go backwards). */
        if (libc_ns[i] >= 0)
            rule(raw_ns[i] >= libc_ns[i],
                 "%s went backwards: libc %" PRId64 " then syscall %" PRId64,
                 clocks[i].name, libc_ns[i], raw_ns[i]);
    }
    for (size_t i = 0; i < NCLOCKS; i++) {
        struct timespec ts;
        snprintf(label, sizeof(label), "clock_getres_%s", clocks[i].name);
        if (clock_getres(clocks[i].id, &ts) != 0) {
            error(label);
            continue;
        }
        print_ns(label, ts_ns(&ts));
    }

    /* Fine clocks read after coarse ones are not behind them. */
    int64_t mc = read_clock(CLOCK_MONOTONIC_COARSE, "monotonic_coarse");
    int64_t m = read_clock(CLOCK_MONOTONIC, "monotonic");
    int64_t b = read_clock(CLOCK_BOOTTIME, "boottime");
    rule(m >= mc, "CLOCK_MONOTONIC %" PRId64 " behind MONOTONIC_COARSE %" PRId64
         " read before it", m, mc);
    rule(b >= m, "CLOCK_BOOTTIME %" PRId64 " behind MONOTONIC %" PRId64
         " read before it", b, m);
    rule(m > 0, "CLOCK_MONOTONIC is %" PRId64, m);
    int64_t rc = read_clock(CLOCK_REALTIME_COARSE, "realtime_coarse");
    int64_t r = read_clock(CLOCK_REALTIME, "realtime");
    rule(r >= rc, "CLOCK_REALTIME %" PRId64 " behind REALTIME_COARSE %" PRId64
         " read before it", r, rc);
    rule(r > 1000000000LL * 946684800LL,
         "CLOCK_REALTIME %" PRId64 " is before 2000", r);

    struct timeval tv;
    if (gettimeofday(&tv, NULL) != 0) {
        error("gettimeofday");
    } else {
        out("gettimeofday: %lld.%06ld\n", (long long)tv.tv_sec,
            (long)tv.tv_usec);
        int64_t g = (int64_t)tv.tv_sec * 1000000000LL + tv.tv_usec * 1000LL;
        /* The microsecond value truncates the realtime read before it. */
        rule(g + 1000 >= r && g - r < 1000000000LL,
             "gettimeofday %" PRId64 " ns far from CLOCK_REALTIME %" PRId64,
             g, r);
    }
    time_t t = time(NULL);
    out("time: %lld\n", (long long)t);
    /* time() reads the coarse clock, which may still be a tick behind a
     * second boundary the fine clock passed: one second of slack. */
    rule((int64_t)t + 1 >= r / 1000000000LL &&
             (int64_t)t - r / 1000000000LL < 2,
         "time() %lld far from CLOCK_REALTIME %" PRId64, (long long)t, r);

    /* A run of monotonic readings never goes backwards. */
    int64_t prev = read_clock(CLOCK_MONOTONIC, "monotonic");
    int64_t first = prev;
    for (int i = 0; i < 1000; i++) {
        int64_t now = read_clock(CLOCK_MONOTONIC, "monotonic");
        rule(now >= prev, "CLOCK_MONOTONIC went backwards: %" PRId64
             " then %" PRId64, prev, now);
        if (now < prev)
            break;
        prev = now;
    }
    out("monotonic_1000_reads_span_ns: %" PRId64 "\n", prev - first);

    int64_t cpu = read_clock(CLOCK_PROCESS_CPUTIME_ID, "process_cputime");
    rule(cpu > 0, "CLOCK_PROCESS_CPUTIME_ID is %" PRId64 " after work", cpu);
}

static void sleep_section(void)
{
    int64_t m0 = read_clock(CLOCK_MONOTONIC, "sleep monotonic before");
    int64_t r0 = read_clock(CLOCK_REALTIME, "sleep realtime before");
    int64_t b0 = read_clock(CLOCK_BOOTTIME, "sleep boottime before");
    struct timespec req = {0, 50000000}, rem = {0, 0};
    if (nanosleep(&req, &rem) != 0)
        error("nanosleep");
    int64_t m1 = read_clock(CLOCK_MONOTONIC, "sleep monotonic after");
    int64_t r1 = read_clock(CLOCK_REALTIME, "sleep realtime after");
    int64_t b1 = read_clock(CLOCK_BOOTTIME, "sleep boottime after");
    print_ns("sleep_monotonic_before", m0);
    print_ns("sleep_monotonic_after", m1);
    print_ns("sleep_monotonic_delta", m1 - m0);
    print_ns("sleep_realtime_delta", r1 - r0);
    print_ns("sleep_boottime_delta", b1 - b0);
    out("sleep_remaining: %lld.%09ld\n", (long long)rem.tv_sec,
        (long)rem.tv_nsec);
    rule(m1 > m0, "CLOCK_MONOTONIC not after the sleep: %" PRId64
         " then %" PRId64, m0, m1);
    rule(m1 - m0 >= 50000000LL,
         "nanosleep(50 ms) advanced CLOCK_MONOTONIC by only %" PRId64 " ns",
         m1 - m0);
    rule(r1 - r0 >= 50000000LL,
         "nanosleep(50 ms) advanced CLOCK_REALTIME by only %" PRId64 " ns",
         r1 - r0);
    rule(b1 - b0 >= 50000000LL,
         "nanosleep(50 ms) advanced CLOCK_BOOTTIME by only %" PRId64 " ns",
         b1 - b0);
    /* A 50 ms sleep that took a minute of logical time is wrong as well. */
    rule(m1 - m0 < 60000000000LL,
         "nanosleep(50 ms) advanced CLOCK_MONOTONIC by %" PRId64 " ns", m1 - m0);

    /* clock_nanosleep with an absolute deadline 20 ms ahead. */
    struct timespec dl;
    int64_t target = m1 + 20000000LL;
    dl.tv_sec = target / 1000000000LL;
    dl.tv_nsec = target % 1000000000LL;
    int e = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &dl, NULL);
    if (e != 0) {
        errno = e;
        error("clock_nanosleep");
    }
    int64_t m2 = read_clock(CLOCK_MONOTONIC, "abs sleep monotonic after");
    print_ns("abs_sleep_monotonic_after", m2);
    rule(m2 >= target, "clock_nanosleep(TIMER_ABSTIME) woke at %" PRId64
         " before its deadline %" PRId64, m2, target);
}

static void random_section(void)
{
    unsigned char at[16], gr[16], ur[16];
    const unsigned char *p = (const unsigned char *)getauxval(AT_RANDOM);
    if (!p) {
        printf("at_random: ERROR no AT_RANDOM\n");
        n_errors++;
        memset(at, 0, sizeof(at));
    } else {
        memcpy(at, p, 16);
        hex("at_random", at, 16);
    }
    ssize_t n = getrandom(gr, sizeof(gr), 0);
    if (n != (ssize_t)sizeof(gr)) {
        error("getrandom");
        memset(gr, 0, sizeof(gr));
    } else {
        hex("getrandom", gr, 16);
    }
    unsigned char big[4096];
    n = getrandom(big, sizeof(big), GRND_NONBLOCK);
    if (n != (ssize_t)sizeof(big))
        error("getrandom 4096");
    else
        hex("getrandom_4096_tail", big + sizeof(big) - 16, 16);

    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || read(fd, ur, sizeof(ur)) != (ssize_t)sizeof(ur)) {
        error("/dev/urandom");
        memset(ur, 0, sizeof(ur));
    } else {
        hex("dev_urandom", ur, 16);
    }
    if (fd >= 0)
        close(fd);

    rule(p && !all_zero(at, 16), "AT_RANDOM is all zero");
    /* A vDSO, as Linux gives: the clock reads above went through it. */
    rule(getauxval(AT_SYSINFO_EHDR) != 0, "no vDSO (AT_SYSINFO_EHDR)");
    rule(!all_zero(gr, 16), "getrandom gave all zero bytes");
    rule(!all_zero(ur, 16), "/dev/urandom gave all zero bytes");
    rule(!all_zero(big, sizeof(big)), "getrandom(4096) gave all zero bytes");
    rule(memcmp(gr, ur, 16) != 0, "getrandom and /dev/urandom gave the same "
         "16 bytes");
    rule(memcmp(at, gr, 16) != 0, "AT_RANDOM and getrandom gave the same "
         "16 bytes");
    rule(memcmp(gr, big, 16) != 0, "two getrandom calls gave the same bytes");

    /* libc's own seeding path: rand() after srand(time ^ pid) is what many
     * programs do; shown so a changing pid or time shows up here too. */
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    out("rand_seeded_time_pid: %d\n", rand());
}

static void ids_section(void)
{
    pid_t pid = getpid(), ppid = getppid();
    out("pid: %d\n", (int)pid);
    out("ppid: %d\n", (int)ppid);
    out("tid: %ld\n", (long)syscall(SYS_gettid));
    out("pgid: %d\n", (int)getpgid(0));
    out("sid: %d\n", (int)getsid(0));
    out("uid: %d euid: %d gid: %d egid: %d\n", (int)getuid(), (int)geteuid(),
        (int)getgid(), (int)getegid());
    rule(pid > 0, "getpid() is %d", (int)pid);
    rule(ppid >= 0, "getppid() is %d", (int)ppid);
}

static void cpu_section(void)
{
    int np = get_nprocs(), npc = get_nprocs_conf();
    long on = sysconf(_SC_NPROCESSORS_ONLN), conf = sysconf(_SC_NPROCESSORS_CONF);
    out("get_nprocs: %d\n", np);
    out("get_nprocs_conf: %d\n", npc);
    out("sysconf_nprocessors_onln: %ld\n", on);
    out("sysconf_nprocessors_conf: %ld\n", conf);
    cpu_set_t set;
    CPU_ZERO(&set);
    int aff = -1;
    if (sched_getaffinity(0, sizeof(set), &set) != 0)
        error("sched_getaffinity");
    else
        aff = CPU_COUNT(&set);
    out("sched_getaffinity_count: %d\n", aff);
    out("sched_getcpu: %d\n", sched_getcpu());
    out("sysconf_clk_tck: %ld\n", sysconf(_SC_CLK_TCK));
    out("sysconf_pagesize: %ld\n", sysconf(_SC_PAGESIZE));
    out("sysconf_phys_pages: %ld\n", sysconf(_SC_PHYS_PAGES));
    out("sysconf_avphys_pages: %ld\n", sysconf(_SC_AVPHYS_PAGES));
    rule(np >= 1, "get_nprocs() is %d", np);
    rule(on >= 1, "sysconf(_SC_NPROCESSORS_ONLN) is %ld", on);
    rule(aff >= 1, "sched_getaffinity count is %d", aff);
    rule(np <= npc, "get_nprocs() %d > get_nprocs_conf() %d", np, npc);

    unsigned a, b, c, d;
    __cpuid(0, a, b, c, d);
    char vendor[13];
    memcpy(vendor, &b, 4);
    memcpy(vendor + 4, &d, 4);
    memcpy(vendor + 8, &c, 4);
    vendor[12] = 0;
    out("cpuid_0: eax=%08x ebx=%08x ecx=%08x edx=%08x vendor=%s\n", a, b, c, d,
        vendor);
    rule(a >= 1, "CPUID leaf 0 reports max leaf %u", a);
    __cpuid(1, a, b, c, d);
    out("cpuid_1: eax=%08x ebx=%08x ecx=%08x edx=%08x\n", a, b, c, d);
}

static void rusage_section(void)
{
    /* Some work, so the counters have something to count. */
    volatile uint64_t x = 1;
    for (int i = 0; i < 200000; i++)
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    static const struct {
        const char *name;
        int who;
    } whos[] = {{"self", RUSAGE_SELF}, {"children", RUSAGE_CHILDREN},
                {"thread", RUSAGE_THREAD}};
    for (size_t i = 0; i < sizeof(whos) / sizeof(whos[0]); i++) {
        struct rusage ru;
        char label[64];
        snprintf(label, sizeof(label), "getrusage_%s", whos[i].name);
        if (getrusage(whos[i].who, &ru) != 0) {
            error(label);
            continue;
        }
        out("%s: utime=%ld.%06ld stime=%ld.%06ld maxrss=%ld ixrss=%ld "
            "idrss=%ld isrss=%ld minflt=%ld majflt=%ld nswap=%ld inblock=%ld "
            "oublock=%ld msgsnd=%ld msgrcv=%ld nsignals=%ld nvcsw=%ld "
            "nivcsw=%ld\n",
            label, (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec,
            (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec, ru.ru_maxrss,
            ru.ru_ixrss, ru.ru_idrss, ru.ru_isrss, ru.ru_minflt, ru.ru_majflt,
            ru.ru_nswap, ru.ru_inblock, ru.ru_oublock, ru.ru_msgsnd,
            ru.ru_msgrcv, ru.ru_nsignals, ru.ru_nvcsw, ru.ru_nivcsw);
    }
    struct tms t;
    clock_t ticks = times(&t);
    out("times: ret=%ld utime=%ld stime=%ld cutime=%ld cstime=%ld\n",
        (long)ticks, (long)t.tms_utime, (long)t.tms_stime, (long)t.tms_cutime,
        (long)t.tms_cstime);
}

static void sysinfo_section(void)
{
    struct sysinfo si;
    if (sysinfo(&si) != 0) {
        error("sysinfo");
        return;
    }
    out("sysinfo: uptime=%ld loads=%lu,%lu,%lu totalram=%lu freeram=%lu "
        "sharedram=%lu bufferram=%lu totalswap=%lu freeswap=%lu procs=%u "
        "totalhigh=%lu freehigh=%lu mem_unit=%u\n",
        si.uptime, si.loads[0], si.loads[1], si.loads[2], si.totalram,
        si.freeram, si.sharedram, si.bufferram, si.totalswap, si.freeswap,
        (unsigned)si.procs, si.totalhigh, si.freehigh, si.mem_unit);
    rule(si.totalram > 0, "sysinfo totalram is 0");
    rule(si.freeram <= si.totalram, "sysinfo freeram %lu > totalram %lu",
         si.freeram, si.totalram);
    rule(si.procs >= 1, "sysinfo procs is %u", (unsigned)si.procs);
}

/* An AF_UNIX socket bound to just its family: Linux names it "\0" and
 * five hex digits of its choosing. */
static void unix_autobind_section(void)
{
    int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    socklen_t len = sizeof(sa);
    if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa_family_t)) != 0 ||
        getsockname(s, (struct sockaddr *)&sa, &len) != 0) {
        error("unix autobind");
        if (s >= 0)
            close(s);
        return;
    }
    close(s);
    size_t n = len - offsetof(struct sockaddr_un, sun_path);
    rule(n == 6 && sa.sun_path[0] == '\0' &&
             strspn(sa.sun_path + 1, "0123456789abcdef") >= 5,
         "unix autobind name is not a NUL and five hex digits (%zu bytes)", n);
    hex("unix_autobind_name", (const unsigned char *)sa.sun_path,
        n < sizeof(sa.sun_path) ? n : sizeof(sa.sun_path));
}

static void uname_section(void)
{
    struct utsname u;
    if (uname(&u) != 0) {
        error("uname");
        return;
    }
    out("uname_sysname: %s\n", u.sysname);
    out("uname_nodename: %s\n", u.nodename);
    out("uname_release: %s\n", u.release);
    out("uname_version: %s\n", u.version);
    out("uname_machine: %s\n", u.machine);
    out("uname_domainname: %s\n", u.domainname);
    char hn[256];
    if (gethostname(hn, sizeof(hn)) != 0)
        error("gethostname");
    else
        out("gethostname: %s\n", hn);
    rule(!strcmp(u.sysname, "Linux"), "uname sysname is '%s'", u.sysname);
    rule(!strcmp(u.machine, "x86_64"), "uname machine is '%s'", u.machine);
}

static void print_stat(const char *label, const struct stat *st)
{
    out("%s: dev=%llu ino=%llu mode=%o nlink=%lu uid=%u gid=%u rdev=%llu "
        "size=%lld blksize=%ld blocks=%lld\n",
        label, (unsigned long long)st->st_dev,
        (unsigned long long)st->st_ino, (unsigned)st->st_mode,
        (unsigned long)st->st_nlink, (unsigned)st->st_uid,
        (unsigned)st->st_gid, (unsigned long long)st->st_rdev,
        (long long)st->st_size, (long)st->st_blksize,
        (long long)st->st_blocks);
    out("%s_times: atime=%lld.%09ld mtime=%lld.%09ld ctime=%lld.%09ld\n",
        label, (long long)st->st_atim.tv_sec, st->st_atim.tv_nsec,
        (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
        (long long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec);
}

static void file_section(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/det_sources.%d", dir, (int)getpid());
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) {
        error("create scratch file");
        return;
    }
    static const char data[] = "determinism is a property of the whole run\n";
    if (write(fd, data, sizeof(data) - 1) != (ssize_t)sizeof(data) - 1)
        error("write scratch file");
    struct stat st, st2;
    if (fstat(fd, &st) != 0)
        error("fstat scratch file");
    else
        print_stat("fstat_created", &st);
    close(fd);
    if (stat(path, &st2) != 0) {
        error("stat scratch file");
    } else {
        print_stat("stat_created", &st2);
        rule(st2.st_size == (off_t)sizeof(data) - 1,
             "stat size %lld, wrote %zu", (long long)st2.st_size,
             sizeof(data) - 1);
        rule(st2.st_ino == st.st_ino && st2.st_dev == st.st_dev,
             "stat and fstat disagree on the file's identity");
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        /* Written just now: mtime is not in the future, nor long ago. */
        rule(ts_ns(&st2.st_mtim) <= ts_ns(&now),
             "mtime of the file just written (%lld.%09ld) is after "
             "CLOCK_REALTIME (%lld.%09ld)",
             (long long)st2.st_mtim.tv_sec, st2.st_mtim.tv_nsec,
             (long long)now.tv_sec, now.tv_nsec);
        rule(ts_ns(&now) - ts_ns(&st2.st_mtim) < 60000000000LL,
             "mtime of the file just written is %" PRId64 " ns ago",
             ts_ns(&now) - ts_ns(&st2.st_mtim));
    }
    /* A second file: its identity differs from the first. */
    char path2[4200];
    snprintf(path2, sizeof(path2), "%s.2", path);
    fd = open(path2, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) {
        error("create second scratch file");
    } else {
        struct stat st3;
        if (fstat(fd, &st3) != 0) {
            error("fstat second scratch file");
        } else {
            print_stat("fstat_second", &st3);
            rule(st3.st_ino != st.st_ino, "two live files share inode %llu",
                 (unsigned long long)st3.st_ino);
        }
        close(fd);
        unlink(path2);
    }
    if (stat(dir, &st) != 0)
        error("stat scratch dir");
    else
        out("scratch_dir_dev_same: %d\n", st.st_dev == st2.st_dev);
    unlink(path);
}

static int stack_probe(void)
{
    return 0;
}

static void address_section(void)
{
    int local = 0;
    void *small = malloc(32);
    void *large = malloc(4 << 20); /* served by mmap */
    void *anon = mmap(NULL, 65536, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    out("addr_stack: %p\n", (void *)&local);
    out("addr_heap_small: %p\n", small);
    out("addr_heap_large: %p\n", large);
    out("addr_brk: %p\n", sbrk(0));
    out("addr_mmap: %p\n", anon);
    out("addr_code_main: %p\n", (void *)(uintptr_t)stack_probe);
    out("addr_libc_printf: %p\n", (void *)(uintptr_t)printf);
    out("addr_execfn: %p\n", (void *)getauxval(AT_EXECFN));
    out("auxv_sysinfo_ehdr: %#lx\n", getauxval(AT_SYSINFO_EHDR));
    out("auxv_hwcap: %#lx hwcap2: %#lx\n", getauxval(AT_HWCAP),
        getauxval(AT_HWCAP2));
    out("auxv_minsigstksz: %lu\n", getauxval(AT_MINSIGSTKSZ));
    rule(small != NULL && large != NULL && anon != MAP_FAILED,
         "allocation failed");
    free(small);
    free(large);
    if (anon != MAP_FAILED)
        munmap(anon, 65536);
    (void)stack_probe();
}

int main(int argc, char **argv)
{
    const char *dir = "/tmp";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--check")) {
            check_mode = 1;
        } else if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
            dir = argv[++i];
        } else {
            fprintf(stderr, "usage: det_sources [--check] [--dir DIR]\n");
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);

    address_section();
    random_section();
    clocks_section();
    ids_section();
    cpu_section();
    rusage_section();
    sysinfo_section();
    uname_section();
    unix_autobind_section();
    file_section(dir);
    sleep_section();

    if (check_mode) {
        if (n_fail == 0 && n_errors == 0)
            printf("det_sources: check ok\n");
        return n_fail || n_errors ? 1 : 0;
    }
    out("errors: %d\n", n_errors);
    return n_errors ? 1 : 0;
}
