/*
 * det.h - detcore: the one door for every value that could differ between
 * runs (time, randomness, ids, the machine, file metadata, ordering).
 * syscall-proxy asks here and never reads host time, host entropy, host
 * inode numbers or directory order itself.
 *
 * Each source can be switched off (--no-virtualize-*): then the door passes
 * the host's value through, so `--verify` can be shown to catch it.
 */
#ifndef DET_H
#define DET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

/* ---- configuration ------------------------------------------------------- */

/* 2021-12-31T23:59:59Z, Hermit's default epoch. */
#define DET_DEFAULT_EPOCH_NS (1640995199LL * 1000000000LL)
/* Logical time: the machine booted this long before the run started. */
#define DET_BOOT_OFFSET_NS (10LL * 1000000000LL)
/* Every syscall (any guest event) advances logical time by this much. */
#define DET_EVENT_NS 1000LL
/* Coarse clocks tick at 250 Hz, as CONFIG_HZ=250 kernels do. */
#define DET_COARSE_NS 4000000LL

struct det_config {
    uint64_t seed;            /* --seed */
    int64_t epoch_ns;         /* --epoch: CLOCK_REALTIME at the start */
    bool virtualize_time;     /* clocks, sleeps, timestamps */
    bool virtualize_random;   /* getrandom, /dev/urandom, AT_RANDOM, uuids */
    bool virtualize_metadata; /* stat canonicalisation, getdents order */
    bool virtualize_host;     /* uname, sysinfo, /proc machine files */
    const char *hostname;     /* uname nodename; "hvrun" by default */
    const char *domainname;   /* "(none)" by default */
    uint32_t uid, gid;        /* what getuid/getgid report */
    uint64_t mem_total_bytes; /* --memory: the machine's RAM (sysinfo,
                                 /proc/meminfo) and the guest memory limit */
    bool chaos;               /* --chaos: seeded adversarial scheduling
                                 (det_sched.h) */
    /* The scheduler's seed (--repeat N --chaos: one per run), the guest's
     * randomness staying --seed's; unset: --seed's. */
    bool chaos_seed_set;
    uint64_t chaos_seed;
    /* Filesystems layered over the host's (a replay's private tree,
     * cli/isolate.c): a file seen through one is the host file under it. */
    const struct det_layered_dev *layered;
    int nr_layered;
};

/*
 * A layered filesystem (Linux overlayfs with xino=on) over the host
 * filesystem lower_dev: its files' st_ino is the host file's with bit 63
 * set, a file made in it has a number of the upper layer's (kept apart
 * from the host's by bit 62 here), and its root is the host's root_ino.
 */
struct det_layered_dev {
    uint64_t dev, lower_dev;
    uint64_t root_ino, lower_root_ino;
};
/* Every directory's st_size (st_blocks: this over 512). */
#define DET_DIR_SIZE 4096
#define DET_LAYER_LOWER_BIT (1ULL << 63)
#define DET_LAYER_UPPER_TAG (1ULL << 62)

void det_config_defaults(struct det_config *c);

/* ---- the detlog ---------------------------------------------------------- */

/*
 * The ordered record of events whose results matter: one record per
 * syscall (number and result) and one per virtualised value (its source
 * and a hash of the bytes). --verify compares the detlogs of two runs and
 * names the first record that differs.
 */
enum det_source {
    DET_SRC_SYSCALL = 0, /* a syscall and its result */
    DET_SRC_TIME,
    DET_SRC_RANDOM,
    DET_SRC_IDS,
    DET_SRC_METADATA,
    DET_SRC_HOST,        /* uname, sysinfo, /proc machine files */
    DET_SRC_SCHED,       /* thread switches */
    DET_SRC_EXTERNAL,    /* input from outside the sandbox */
    DET_SRC_COUNT
};

struct det_record {
    uint16_t nr;       /* syscall number (or 0xffff when not a syscall) */
    uint8_t source;    /* enum det_source */
    uint8_t pad;
    uint32_t tid;
    int64_t value;     /* syscall result, or the first 8 bytes of a value */
    uint64_t hash;     /* of the whole value (0 for syscall records) */
};

struct det_log {
    struct det_record *recs;
    size_t n, cap;
    uint64_t digest;   /* running FNV-1a over the records */
    bool keep;         /* keep records (for --verify), else digest only */
};

/* ---- state --------------------------------------------------------------- */

struct det_rng {
    uint32_t key[8];
    uint64_t counter;
    uint8_t block[64];
    unsigned used; /* bytes of block already handed out */
};

enum det_stream { DET_STREAM_GUEST, DET_STREAM_SCHED, DET_STREAM_MISC,
                  DET_NR_STREAMS };

struct det_meta; /* file identity and timestamps (meta.c) */

/*
 * Where the values a run takes from the host go (hvrun record) or come
 * from (hvrun replay): today the host's time and randomness when they are
 * not virtualised (--no-virtualize-time, --no-virtualize-random). NULL:
 * neither.
 */
struct det_tap {
    /* Recording: each value as the host gave it. */
    void (*put)(void *ctx, enum det_source src, const void *buf, size_t len);
    /* Replaying: fills buf with the next recorded value; false when that
     * is not a value of this source and length (the run went another
     * way): the host's value is taken, and the detlog shows where. */
    bool (*get)(void *ctx, enum det_source src, void *buf, size_t len);
    void *ctx;
};

struct det_state {
    struct det_config cfg;
    const struct det_tap *tap; /* record / replay of host values, or NULL */
    int64_t now_ns;           /* logical ns since the run started */
    int64_t host_start_ns;    /* host CLOCK_MONOTONIC at det_init */
    uint64_t events;          /* guest events (syscalls) */
    uint16_t cur_nr;          /* the syscall being served (for the log) */
    uint32_t cur_tid;
    struct det_rng rng[DET_NR_STREAMS];
    struct det_log log;
    /* --schedule FILE's switches (det_sched.h), or NULL. */
    const struct det_schedule *schedule;
    uint64_t chaos_low;       /* the next lowered --chaos priority */
    struct det_meta *meta;
    char boot_id[37];         /* /proc/sys/kernel/random/boot_id */
    char hostname[65], domainname[65]; /* sethostname is seen only inside */
    uint64_t reads[DET_SRC_COUNT]; /* virtualised reads per source */
    uint32_t ports_handed;    /* ephemeral ports given so far (det_port) */
    uint32_t unix_names_handed; /* AF_UNIX autobind names (det_unix_name) */
};

int det_init(struct det_state *d, const struct det_config *cfg);

/* A value from the host: the recorded one when replaying (true), else
 * the caller takes it from the host and passes it to det_tap_put. */
bool det_tap_get(struct det_state *d, enum det_source src, void *buf,
                 size_t len);
void det_tap_put(struct det_state *d, enum det_source src, const void *buf,
                 size_t len);
void det_destroy(struct det_state *d);

/* The next ephemeral port for a guest socket bound to port 0: Linux's
 * default range (32768-60999) in order from its start, so a run's ports
 * follow its binds, not the host's choice (a port the host has in use is
 * skipped by the caller asking again). */
/* The run's next ephemeral port: DET_PORT_FIRST, +1, ... round the
 * range Linux's ip_local_port_range has by default. */
#define DET_PORT_FIRST 32768
#define DET_PORT_COUNT (60999 - DET_PORT_FIRST + 1)
uint16_t det_port(struct det_state *d);

/* The next AF_UNIX autobind name's number, 0, 1, 2... in the order of the
 * run's autobinds: the guest sees "\0%05x" of it where Linux would show
 * a name of the host kernel's choosing (net/unix_name.c). */
uint32_t det_unix_name(struct det_state *d);

/* Counts one guest event (syscall nr of thread tid); logical time advances
 * with it, and later log records name it. */
void det_event(struct det_state *d, uint32_t tid, uint16_t nr);

/* ---- time (clock.c) ------------------------------------------------------ */

/* The logical clock as the guest's vDSO computes it (vdso_abi.h): each
 * vDSO call is an event; time = base + elapsed, elapsed = now_ns + calls *
 * event_ns. virtual_time false: the vDSO asks the kernel. */
struct det_clock_page {
    bool virtual_time;
    int64_t now_ns, epoch_ns, boot_ns, event_ns, coarse_ns;
};
void det_clock_page(const struct det_state *d, struct det_clock_page *out);
/* The guest's vDSO answered `calls` more clock reads: they count as events
 * (logical time advances) and as time reads. */
void det_clock_fold(struct det_state *d, uint64_t calls);
/* The detlog record of `calls` folded reads: one record for all the reads
 * between two points of the program's progress that are the same in every
 * run (not a host interruption, which can fall anywhere). None for 0. */
void det_clock_log_folded(struct det_state *d, uint64_t calls);
/* A guest thread computed for ns of host time without an event (a time
 * slice ran out): logical time advances by as much. Nothing with host
 * time, which passed by itself. */
void det_clock_computed(struct det_state *d, uint64_t ns);
/* A trapped RDTSC/RDTSCP: an event like a clock read (logical time
 * advances by DET_EVENT_NS, one time read, one detlog record); the TSC
 * runs at 1 GHz from boot, so it is CLOCK_MONOTONIC in ns. */
uint64_t det_clock_tsc(struct det_state *d);

/* Fills *ts for clockid; 0 or -EINVAL for an unknown clock. */
int det_clock_gettime(struct det_state *d, int clockid, struct timespec *ts);
int det_clock_getres(struct det_state *d, int clockid, struct timespec *ts);
/* Sleeping: logical time jumps by ns (nothing really sleeps), or the host
 * sleeps when time is not virtualised. */
void det_sleep(struct det_state *d, uint64_t ns);
/* Logical CLOCK_REALTIME now, in ns (file timestamps). */
int64_t det_realtime_ns(struct det_state *d);
/* A timespec (tv_nsec within [0, 1e9)) as ns, saturating at INT64_MIN and
 * INT64_MAX (about 1677 and 2262): a guest may pass any tv_sec. */
int64_t det_timespec_ns(const struct timespec *ts);
/* A guest read of a CPU clock the proxy keeps (its threads' own time,
 * kernel/time.c): a time read, its value in the detlog. */
void det_clock_cpu_read(struct det_state *d, uint64_t ns);
/* The elapsed clock as CPU time of the whole machine (/proc/stat). */
int64_t det_cputime_ns(struct det_state *d);
/* clockid's reading now, in ns, for hvrun's own bookkeeping (timer
 * expiries, checked before every scheduling decision): unlike
 * det_clock_gettime it is neither logged nor counted as a guest read.
 * clockid must be one det_clock_gettime accepts. */
int64_t det_clock_peek_ns(struct det_state *d, int clockid);

/* ---- randomness (random.c) ----------------------------------------------- */

/* Guest-visible random bytes (getrandom, /dev/urandom, AT_RANDOM). */
void det_random_fill(struct det_state *d, void *buf, size_t len);
/* Bytes from another stream (scheduler choices, ids). */
void det_stream_fill(struct det_state *d, enum det_stream s, void *buf,
                     size_t len);
/* A random (version 4) UUID string, 36 chars + NUL. */
void det_uuid(struct det_state *d, char out[37]);

/* ---- the machine (machine.c) --------------------------------------------- */

struct det_uname {
    char sysname[65], nodename[65], release[65], version[65], machine[65],
        domainname[65];
};
void det_get_uname(struct det_state *d, struct det_uname *u);
int det_set_hostname(struct det_state *d, const char *name, size_t len);
int det_set_domainname(struct det_state *d, const char *name, size_t len);
/* Machine figures (sysinfo, /proc/meminfo): the RAM is --memory (8 GiB by
 * default, 64 MiB to 256 GiB); an idle machine has a quarter of it in use
 * and no swap. */
#define DET_MEM_TOTAL_BYTES (8ULL << 30)
#define DET_MEM_MIN_BYTES (64ULL << 20)
#define DET_MEM_MAX_BYTES (256ULL << 30)
static inline uint64_t det_mem_free_bytes(const struct det_config *c)
{
    return c->mem_total_bytes - c->mem_total_bytes / 4;
}
#define DET_NR_CPUS 1

/* ---- file metadata (meta.c) ---------------------------------------------- */

/* Canonicalises a host stat result in place: st_dev and st_ino mapped to
 * deterministic sequences, times from the logical clock for files the
 * guest wrote and from the epoch for the rest. */
void det_stat_canon(struct det_state *d, struct stat *st);
/* The mtime det_stat_canon would show for the host file (dev, ino) whose
 * own mtime is host_mtime_ns, without numbering the file or counting a
 * read: nothing the guest can see changes. */
int64_t det_mtime_seen_ns(struct det_state *d, uint64_t dev, uint64_t ino,
                          int64_t host_mtime_ns);
/* The virtual inode number for a host (dev, ino) (getdents d_ino). */
uint64_t det_ino(struct det_state *d, uint64_t host_dev, uint64_t host_ino);
uint64_t det_dev(struct det_state *d, uint64_t host_dev);
/* The host device behind a device number the guest was shown (det_dev's,
 * or the host's own when metadata is not virtualised); false for one it
 * was never shown. */
bool det_host_dev(const struct det_state *d, uint64_t dev, uint64_t *host_dev);
/* Inodes of host_dev (procfs) are made per lookup: their numbers are
 * DET_FIRST_EPHEMERAL_INO plus the low 28 bits of the key, no sequence. */
void det_meta_ephemeral_dev(struct det_state *d, uint64_t host_dev);
#define DET_FIRST_EPHEMERAL_INO 0xf0000000ULL
/* The guest changed this file's data or metadata now. */
void det_note_write(struct det_state *d, uint64_t host_dev, uint64_t ino);
/* Only the file's metadata changed now (chmod, chown, link, rename): its
 * ctime moves, its atime and mtime stay what they were. */
void det_note_change(struct det_state *d, uint64_t host_dev, uint64_t ino);
/* The run made this directory (mkdir); det_was_created asks. Its number
 * is forgotten with the file (det_forget_file), so a host inode reused
 * later is not taken for it. */
void det_note_created(struct det_state *d, uint64_t host_dev, uint64_t ino);
bool det_was_created(struct det_state *d, uint64_t host_dev, uint64_t ino);
/* The guest set explicit times (utimensat); NULL entries mean "now". */
void det_note_times(struct det_state *d, uint64_t host_dev, uint64_t ino,
                    const struct timespec *atime,
                    const struct timespec *mtime);
/* The file's last link is gone: forget its identity (the host may reuse
 * the inode number for a different file). */
void det_forget_file(struct det_state *d, uint64_t host_dev, uint64_t ino);
/* The host object behind a file became another (a checkpoint's restored
 * copy of a run gets new stdout and stderr pipes): the new (dev, ino)
 * keeps the old one's virtual inode number and times, so the guest sees
 * the same file. */
void det_meta_rekey(struct det_state *d, uint64_t host_dev, uint64_t ino,
                    uint64_t new_dev, uint64_t new_ino);

/* ---- the detlog (detlog.c) ----------------------------------------------- */

/* Records the current syscall's result. */
void det_log_syscall(struct det_state *d, int64_t result);
/* Records a value handed to the guest (a clock reading, random bytes...)
 * under the current syscall. */
void det_log_value(struct det_state *d, enum det_source src,
                   const void *bytes, size_t len);
uint64_t det_log_digest(const struct det_state *d);
/* Writes the records to path (binary); 0 or -errno. */
int det_log_save(const struct det_state *d, const char *path);
/* The detlog's records to fd, in det_log_save's format. */
int det_log_write(const struct det_state *d, int fd);
/* Loads records saved by det_log_save; caller frees *recs. */
int det_log_load(const char *path, struct det_record **recs, size_t *n);
const char *det_source_name(enum det_source s);

#endif
