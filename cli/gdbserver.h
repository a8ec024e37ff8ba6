/*
 * gdbserver.h - `hvrun run --gdb PORT|unix:PATH`: a GDB remote serial
 * protocol server over a run (gdb's "Remote Protocol" appendix).
 *
 * The server is hvrun's, not the guest's: it meets the run through the
 * world loop's debugger hooks (struct proxy_debugger, config.h) and reads
 * and writes guest state through what guest ptrace uses (kernel/ptrace.h's
 * register and XSAVE paths, kernel.h's FOLL_FORCE-style memory access), so
 * a stop, a register read or a breakpoint is no event of the run.
 * gdbserver_target.c turns guest state into gdb's x86-64 register layout.
 */
#ifndef CLI_GDBSERVER_H
#define CLI_GDBSERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct proxy_debugger;
struct proxy_process;
struct gdb_server;

/*
 * Listens where spec says ("PORT" on 127.0.0.1, "HOST:PORT", or
 * "unix:PATH") and waits for gdb to connect, saying so on stderr unless
 * quiet; with start_event (a TCP port only), gdb is let in when the run
 * has made that many events instead. 0, or -errno with why filled in.
 */
int cli_gdb_open(const char *spec, bool quiet, uint64_t start_event,
                 struct gdb_server **out, char *why, size_t why_len);
/* The same server on fd, a connection already made (gdbserver_reverse.c's
 * socket to a run it drives); 0 or -errno. */
int cli_gdb_open_fd(int fd, uint64_t start_event, struct gdb_server **out);
/* cli_gdb_open's halves: the listening socket (its "waiting" line said
 * unless quiet; a unix socket's path into unix_path), or -errno with why;
 * then gdb's connection (the listening socket closed, the path removed),
 * or -errno. */
int cli_gdb_listen(const char *spec, bool quiet, uint64_t start_event,
                   char *unix_path, size_t path_len, char *why,
                   size_t why_len);
int cli_gdb_accept(int listen_fd, char *unix_path);
/* The line cli_gdb_listen says (with its newline) into out. */
void cli_gdb_waiting_line(const char *spec, uint64_t start_event, char *out,
                          size_t len);
/* The hooks proxy_config.debugger points at. */
const struct proxy_debugger *cli_gdb_debugger(struct gdb_server *g);
/*
 * The run is over (wait_status as the first process ended it): gdb is
 * told, if it was not, then served until it leaves; everything closed.
 */
void cli_gdb_close(struct gdb_server *g, int wait_status);

/* ---- gdbserver_reverse.c: reverse execution ---------------------------- */

struct run_options;
struct run_summary;
/*
 * `--gdb` as a front end: listens for gdb, runs the program in a child
 * process (an instance: cli_run_once with o->gdb_instance) whose server
 * it relays gdb's packets to, logging those that steer the run; gdb's
 * reverse execution (bc, bs) and `monitor goto` backwards start a new
 * instance and replay the log to the point wanted (docs/DEBUGGING.md).
 * Returns the exit code of the run that went on to the end, sum filled.
 */
int cli_gdb_front_end(const struct run_options *o, const char *path,
                      const char *detlog_path, const char *journal_dir,
                      struct run_summary *sum);

/* ---- gdbserver_checkpoint.c: checkpoints of an instance ----------------- */

struct proxy_world;
/*
 * QHvrunCheckpoint at a stop: the instance copies itself by fork (the
 * checkpoint), which then waits for restores on a channel. Returns 0 in
 * the original (*chan the channel's other end, for the front end: send
 * it with cli_gdb_checkpoint_reply), 1 in a restored copy (standing at
 * the stop, its connection gdb_fd's number), or -errno with why.
 */
int cli_gdb_checkpoint(struct proxy_world *w, int gdb_fd, int *chan,
                       char *why, size_t why_len);
/* Reaps this instance's checkpoints that have ended (deleted by the
 * front end); at each stop and checkpoint. */
void cli_gdb_checkpoints_reap(void);
/* The reply "OK" on gdb_fd with chan attached (SCM_RIGHTS); 0 or -1. */
int cli_gdb_checkpoint_reply(int gdb_fd, int chan);
/* The instance child's summary pipe (a restored copy gets a new one). */
void cli_gdb_checkpoint_set_sum_fd(int fd);
/* The front end's side: restore the checkpoint on chan with fds (its
 * gdb connection, the helper of cli_gdb_helper_start, the summary pipe,
 * stdout and stderr; -1 where none): the restored instance's pid, and
 * the checkpoint's stdout and stderr offsets (offset[1], [2]). */
int cli_gdb_checkpoint_restore(int chan, const int fds[5], int *pid,
                               long long offset[3], char *why,
                               size_t why_len);
/* The backend's helper a restored instance needs (vmm_helper_start). */
int cli_gdb_helper_start(const char *backend, int *fd, int *pid, char *why,
                         size_t why_len);

/* ---- gdbserver_target.c: guest state in gdb's terms ------------------- */

/* The x86-64 target description gdb reads with qXfer:features:read. */
extern const char cli_gdb_target_xml[];
/* Bytes of the 'g' packet's register block. */
#define GDB_REGS_BYTES 816
/* Register numbers of the target description. */
#define GDB_NR_REGS 76
/* Register n's place and size in the 'g' block; -1 for no such one. */
int cli_gdb_reg_at(int n, size_t *bytes);
/* Thread tid of q (a thread of it) as the 'g' block; 0 or -errno. */
int cli_gdb_regs_get(struct proxy_process *q, int tid,
                     uint8_t out[GDB_REGS_BYTES]);
/* The 'G' block into thread tid of q; 0 or -errno. */
int cli_gdb_regs_set(struct proxy_process *q, int tid,
                     const uint8_t in[GDB_REGS_BYTES]);
/* q's auxiliary vector as the loader made it (up to AT_NULL): bytes
 * written to out, at most cap. */
size_t cli_gdb_auxv(struct proxy_process *q, uint8_t *out, size_t cap);

#endif
