/*
 * recording.h - the file of a recorded run (`hvrun record`, issue 11): a
 * header that says what ran and where, then every value that came from
 * outside the deterministic model, in order. Pure data: no mechanism, no
 * process object; the proxy decides what to record and replays from it.
 *
 * Layout (docs/RECORDING.md):
 *
 *   "HVRUNREC"  u32 format version  u32 header bytes  u64 FNV-1a(header)
 *   header      a flattened device tree (libfdt), checked with
 *               fdt_check_full on load
 *   body        one zstd frame (with its content checksum) holding the
 *               events, the last one DET_REC_END
 *   "HVRUNEND"  u64 FNV-1a(body)
 *
 * Integers are little-endian. A file that is truncated, has any bit
 * changed, or has another format version is refused on load with a
 * one-line reason, before a single event is handed out. The writer
 * writes PATH.tmp and renames it to PATH only when the recording is
 * complete, so a recording is never half there under its name.
 */
#ifndef DET_RECORDING_H
#define DET_RECORDING_H

#include <stddef.h>
#include <stdint.h>

#define DET_REC_FORMAT_VERSION 1
#define DET_REC_MAX_STRINGS 4096 /* per list: argv, env, options, gaps */

/* What ran, and what of the host mattered. */
struct det_rec_header {
    const char *hvrun_version;
    const char *backend;             /* kvm, ptrace */
    const char *cpu;                 /* the CPU the guest saw */
    const char *cpu_seen;            /* its identity (vendor, features) */
    const char *cwd;
    const char *const *argv;         /* NULL-terminated */
    const char *const *env;          /* NULL-terminated */
    const char *const *options;      /* the run's flags, NULL-terminated */
    const char *const *host_gaps;    /* sources not controlled, NULL-term. */
};

enum det_rec_kind {
    DET_REC_SYSCALL = 1, /* a host-performed call: value = result, data =
                            what it wrote into guest memory */
    DET_REC_INPUT,       /* bytes read from outside (stdin, a socket) */
    DET_REC_SIGNAL,      /* a signal from outside: value = signo */
    DET_REC_PREEMPT,     /* a host-timed cut: value = where (RIP) */
    DET_REC_WAIT,        /* which host wait ended: value = thread */
    DET_REC_END,         /* value = exit status; data = u64 digest, u64 n */
    DET_REC_OUTPUT,      /* bytes the run wrote: value = 1 stdout, 2 stderr */
    DET_REC_DETLOG,      /* one event of the run's detlog: data = a
                            struct det_record as det_log_save writes it */
    DET_REC_VALUE,       /* a value the host gave detcore (det_tap): value =
                            its enum det_source, data = the bytes */
    DET_REC_FILE,        /* a file the run read, as it was at its first
                            open: data = u32 key length, the key (the path
                            it was opened by), u32 name length, the name
                            (its resolved path), its struct stat, the
                            bytes */
    DET_REC_DIR,         /* a directory listing the run read: data = u32
                            key length, the key (its path), the host's
                            getdents64 records */
    DET_REC_STAT,        /* a stat of a path and its result: data = u32
                            key length, the key, u8 nofollow, i32 result,
                            the struct stat */
    DET_REC_QUERY,       /* another question about a path (readlink,
                            access): data = u32 key length, the key, i32
                            kind, i32 argument, i64 result, the bytes */
    DET_REC_PRESTATE,    /* what a path the run changed was before it ran
                            (cli/prestate.c): data = u8 kind (A absent, F
                            file, L symlink, D directory), u32 st_mode, u32
                            path length, the path, the bytes */
    DET_REC_LINK,        /* an event of an exchange with a peer outside
                            the run (syscall-proxy/net/outside.c,
                            outside_udp.c): data = u32 link, u8 kind (C
                            connect, D data, E end; U datagram flow, G
                            datagram, R its error), u64 the run's event
                            count, i64 value, the bytes */
    DET_REC_KIND_MAX = DET_REC_LINK,
};

struct det_rec_event {
    uint8_t kind;
    uint32_t tid;
    uint16_t nr;        /* the syscall it belongs to, 0xffff for none */
    int64_t value;
    uint32_t len;
    const uint8_t *data; /* len bytes; owned by the writer's caller or the
                            loaded recording */
};

struct det_rec_writer;

/* Creates PATH.tmp and writes the header. 0 or -errno. */
int det_rec_create(struct det_rec_writer **out, const char *path,
                   const struct det_rec_header *h);
int det_rec_append(struct det_rec_writer *w, const struct det_rec_event *ev);
/* Appends DET_REC_END, completes the file and renames it to PATH. Frees w
 * whatever happens. 0 or -errno. */
int det_rec_finish(struct det_rec_writer *w, int exit_status,
                   uint64_t detlog_digest);
/* Removes PATH.tmp and frees w (a run that failed to record). */
void det_rec_abandon(struct det_rec_writer *w);

/* A recording loaded and checked whole. */
struct det_recording {
    void *file;            /* the file's bytes */
    size_t file_len;
    const void *fdt;       /* the header, inside file */
    uint8_t *body;         /* the decompressed events */
    size_t body_len;
    struct det_rec_event *events;
    size_t nr_events;      /* the last is DET_REC_END */
    int exit_status;
    uint64_t detlog_digest;
};

/*
 * Loads and checks PATH. 0, or -errno with a one-line reason in why:
 * -ENOENT and friends for the file itself, -EINVAL for anything wrong in
 * it (truncated, corrupt, not a recording), -EPROTO for a format version
 * this hvrun does not read.
 */
int det_rec_load(const char *path, struct det_recording *r, char *why,
                 size_t why_len);
void det_rec_free(struct det_recording *r);

/* A header string ("hvrun-version", "backend", "cpu", "cwd") or NULL. */
const char *det_rec_string(const struct det_recording *r, const char *name);
/* Element i of a header list ("argv", "env", "options", "host-gaps"), or
 * NULL past its end. */
const char *det_rec_list(const struct det_recording *r, const char *name,
                         int i);

#endif
