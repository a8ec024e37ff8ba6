#!/usr/bin/env bash
# tests/gdb/run.sh HVRUN [HVRUN...]
#
# `hvrun run --gdb` (cli/gdbserver.c) driven by gdb in batch mode. For each
# binary:
#   gdb/threads     a two-thread program (tests/gdb/gdb_threads.c): break on
#                   add_one, continue, bt names worker, info threads shows
#                   both, print the global, finish returns its value; then
#                   break at the call into a shared library, step into it
#                   (gdb_lib.c), bt, continue to the end
#   gdb/same-run    that session's stdout and detlog digest equal a run
#                   without gdb (stdout to a file both times); the program
#                   copies add_one's code through a pipe while gdb's
#                   breakpoint is in it, and prints the same checksum
#   gdb/stepi       stepi twice, the registers: rip moved, the thread the
#                   same; monitor when names the event count
#   gdb/watch       watch -l counter after a breakpoint in worker:
#                   continue stops at the write (Old value = 0, New value
#                   = 1) in worker; the run's stdout and detlog digest are
#                   still those without gdb
#   gdb/watch-map   a watchpoint set at main steps through malloc's 1 MiB
#                   mmap (tests/gdb/gdb_watch_map.c): the mapping is made
#                   (the ptrace backend's injected call without the
#                   guest's TF) and the write is caught (New value = 42)
#   gdb/replay      hvrun record of the program, then hvrun replay --gdb
#                   PORT with the gdb/threads session's first half: the
#                   same answers (breakpoint, bt, print), and the replay
#                   still "identical to the recording"
#   gdb/interrupt   ^C (0x03) to a program that sleeps forever
#                   (tests/gdb/gdb_spin.c), spoken by tests/gdb/interrupt.py:
#                   a SIGINT stop (T02), then vKill ends the run (137)
#   gdb/fork        tests/gdb/gdb_fork.c with set detach-on-fork off: the
#                   fork child becomes inferior 2 and stops at child_work
#                   (bt names main, print a global), exits; inferior 1 goes
#                   on; the same stdout and digest as without gdb
#   gdb/exec        the same program's execve of itself: catch exec stops
#                   at the new image, a breakpoint set there (after_exec)
#                   is hit, bt names main
#   gdb/start       monitor when at add_one's second hit names event N;
#                   hvrun run --gdb PORT --gdb-start N lets gdb in at
#                   event N (monitor when says N, counter still 0), and
#                   monitor goto N+10 then continue stops at event N+10;
#                   a goto behind the start event goes back to it ("No
#                   more reverse-execution history")
#   gdb/schedule    tests/guest/lost_update.c --racy under the schedule of
#                   the first --chaos seed's run that loses an update
#                   (lost_schedule: --schedule-out, then --schedule
#                   FILE): break in adder, watch -l counter (Old value =
#                   0, New value = 1), bt names adder, continue: the same
#                   total and detlog digest as the schedule's run without
#                   gdb (breakpoints, steps and watches change no turn)
#   gdb/reverse     reverse execution (cli/gdbserver_reverse.c) on that
#                   run: break where it prints the lost total, watch -l
#                   counter, reverse-continue stops at the last write
#                   (Old value / New value) and bt names adder;
#                   reverse-stepi then stepi give the same `info
#                   registers`; reverse-continue again walks back to the
#                   write before; break adder and reverse-continue twice
#                   reach both threads' entries, a third says "No more
#                   reverse-execution history"; then continued to the
#                   end: the same stdout and detlog digest as without gdb
#   gdb/reverse-replay  hvrun record of that run, hvrun replay --gdb with
#                   the same session up to the second reverse-continue:
#                   the same answers (values, bt, registers), and the
#                   replay still "identical to the recording"
#   gdb/reverse-break  gdb_threads: break add_one, continue twice (x=0,
#                   x=1), reverse-continue is back at x=0 (a stop gdb
#                   continued from), reverse-finish at the call in
#                   worker, monitor goto 50 goes back to event 50; with
#                   stdin a pipe from outside,
#                   reverse-continue is refused with the reason
#   gdb/idle-interrupt  ^C while every thread waits (cat reading a FIFO
#                   nobody writes): the SIGINT stop still comes
#   gdb/deadlock    tests/gdb/gdb_deadlock.c (two locks, opposite orders):
#                   gdb is told of the deadlock and gets the run stopped
#                   there; thread apply all bt shows both threads waiting
#                   in their pthread_mutex_lock; continue ends the run
#   gdb/crash       a NULL write (tests/gdb/gdb_crash.c): gdb stops at the
#                   SIGSEGV in crash_here; continued, the program dies of it
#                   (hvrun exit 139), as without gdb
#   gdb/detach      detach at a breakpoint: the run goes on to the same
#                   output
#   gdb/checkpoint  checkpoints (tests/guest/lost_update.c --racy, two
#                   threads, ~490 events): with automatic ones every 20
#                   events (thinned past 16: every 40), monitor goto 250 is a
#                   restore (the trace says so) and gives the same
#                   monitor when (event, thread, detlog digest), registers,
#                   stack words and threads as the same session without
#                   checkpoints (a run from the start); there, monitor
#                   checkpoint at 250, goto 100, monitor restart 1 (a
#                   checkpoint ahead) gives them again; both sessions
#                   continued to the end print the same bytes and detlog
#                   digest as without gdb
#   gdb/checkpoint-fork  tests/gdb/gdb_ckpt_fork.c (a parent and a child
#                   writing lines) with stdout a pipe: goto 300, back to
#                   150 and to 100 with a checkpoint every 20 events (two
#                   processes restored, a new pipe as the old one) give
#                   the same when/registers, the same output and the same
#                   detlog digest as without checkpoints
#   gdb/checkpoint-pipe  tests/gdb/gdb_ckpt_pipe.c (a child writes lines
#                   into a pipe its parent reads slowly, so the pipe holds
#                   bytes at the checkpoints, its write end closed): the
#                   same session as checkpoint-fork restores checkpoints
#                   (not refused) and gives the same answers, output and
#                   detlog digest as without checkpoints
#   gdb/checkpoint-socket  tests/gdb/gdb_ckpt_socket.c (a child writes
#                   lines into a stream socket pair and datagrams into a
#                   datagram pair its parent reads slowly): the same
#                   session restores checkpoints holding both pairs' queues
#                   and gives the same answers, output and detlog digest
#   gdb/checkpoint-event  tests/gdb/gdb_ckpt_event.c (a child writes lines
#                   into a pipe and adds to an eventfd; its parent waits
#                   for both in epoll_wait): the same session restores
#                   checkpoints holding the eventfd's count and the epoll
#                   instance's entries, with the same answers and output
#   gdb/checkpoint-fds  tests/gdb/gdb_ckpt_fds.c (a periodic timerfd read
#                   turn by turn, a signalfd with a queued signal and a
#                   message queue with a message pending between turns):
#                   the same session restores checkpoints holding all
#                   three, with the same answers and output
#   gdb/checkpoint-close  gdb_ckpt_pipe: monitor checkpoint when the
#                   parent has read the last line (its writer about to
#                   exit), the copy made to wait 500 ms before it closes
#                   its ends (HVRUN_GDB_CHECKPOINT_STALL_MS, a loaded
#                   host), continued to the end: the same output and
#                   detlog digest as without gdb (the reader's end of file
#                   comes when the writer exits, not when the copy closes)
#   gdb/checkpoint-hold  tests/gdb/gdb_ckpt_hold.c MODE: monitor checkpoint
#                   where the program holds a flock, an fcntl lock, a
#                   named FIFO, a memfd, a pidfd or an attached System V
#                   segment says why not ("hvrun: no checkpoint: ...")
#                   and the run goes on; a flock taken and closed after a
#                   checkpoint is gone (a new open's flock gets it), and a
#                   segment written after a checkpoint holds its earlier
#                   bytes when restored (goto 140 twice, the second a
#                   restore, the same answer): output and detlog digest
#                   as without gdb
#   gdb/checkpoint-reap  gdb_ckpt_hold close: a checkpoint whose copy
#                   fails (HVRUN_GDB_CHECKPOINT_FAIL) says why and the run
#                   goes on, and two checkpoints deleted before a stepi:
#                   the run's hvrun is left no zombie child (the failed
#                   copy and the deleted checkpoints stayed zombies for the
#                   rest of the run)
#   gdb/checkpoint-state  tests/gdb/gdb_ckpt_state.c (a CLONE_VM child
#                   of a process that has exited, running on its memory,
#                   which reaches past the first 256 MiB of guest-physical
#                   memory; an SSE sum and a rounding mode held across
#                   syscalls, the fs base): the same session as
#                   checkpoint-fork restores checkpoints that hold a
#                   retired memory owner and gives the same answers,
#                   output and detlog digest
#   gdb/checkpoint-kvm  under --backend kvm whatever the suite's backend
#                   (the others run under it: HVRUN_BACKEND, else kvm):
#                   automatic checkpoints are taken (monitor info
#                   checkpoints lists them), goto 300 then back to 100 is
#                   a restore (the trace says so), none refused
#   gdb/goto-no-checkpoint  with every checkpoint's copy made to fail
#                   (HVRUN_GDB_CHECKPOINT_FAIL) a continue to a monitor
#                   goto past the automatic checkpoints' spacing stops at
#                   the goto's event, not at the program's end
#
# HVRUN_GDB_CASES="reverse checkpoint ..." runs only those cases.
#
# Prints "PASS name" / "FAIL name: reason" / "SKIP name: reason" per case,
# then "N passed, N failed[, N skipped]". Exits 1 if anything failed.
# Needs gdb, cc and python3; without them every case is a counted SKIP.
# The single-quoted patterns and gdb commands name gdb's $1, $pc: not
# the shell's.
# shellcheck disable=SC2016
set -u

if [ $# -lt 1 ]; then
    echo "usage: $0 HVRUN [HVRUN...]" >&2
    exit 2
fi

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib.sh
. "$ROOT/tests/lib.sh"
TIMEOUT=${HVRUN_GDB_TIMEOUT:-60}
BIN=$ROOT/build/gdb
WORK=$(mktemp -d "$ROOT/build/gdb-test.XXXXXX")
trap '[ -n "${HVRUN_GDB_KEEP:-}" ] || rm -rf "$WORK"' EXIT

build_programs() {
    mkdir -p "$BIN" &&
        cc -g -O0 -shared -fPIC -o "$BIN/libgdb_lib.so" \
            "$ROOT/tests/gdb/gdb_lib.c" &&
        cc -g -O0 -pthread -o "$BIN/gdb_threads" \
            "$ROOT/tests/gdb/gdb_threads.c" -L"$BIN" -lgdb_lib \
            -Wl,-rpath,"$BIN" &&
        cc -g -O0 -o "$BIN/gdb_crash" "$ROOT/tests/gdb/gdb_crash.c" &&
        cc -g -O0 -o "$BIN/gdb_spin" "$ROOT/tests/gdb/gdb_spin.c" &&
        cc -g -O0 -o "$BIN/gdb_fork" "$ROOT/tests/gdb/gdb_fork.c" &&
        cc -g -O0 -pthread -o "$BIN/lost_update" "$ROOT/tests/guest/lost_update.c" &&
        cc -g -O0 -pthread -o "$BIN/gdb_deadlock" "$ROOT/tests/gdb/gdb_deadlock.c" &&
        cc -g -O0 -o "$BIN/gdb_watch_map" "$ROOT/tests/gdb/gdb_watch_map.c" &&
        cc -g -O0 -o "$BIN/gdb_ckpt_fork" "$ROOT/tests/gdb/gdb_ckpt_fork.c" &&
        cc -g -O0 -o "$BIN/gdb_ckpt_pipe" "$ROOT/tests/gdb/gdb_ckpt_pipe.c" &&
        cc -g -O0 -o "$BIN/gdb_ckpt_socket" "$ROOT/tests/gdb/gdb_ckpt_socket.c" &&
        cc -g -O0 -o "$BIN/gdb_ckpt_event" "$ROOT/tests/gdb/gdb_ckpt_event.c" &&
        cc -g -O0 -o "$BIN/gdb_ckpt_fds" "$ROOT/tests/gdb/gdb_ckpt_fds.c" &&
        cc -g -O0 -o "$BIN/gdb_ckpt_state" "$ROOT/tests/gdb/gdb_ckpt_state.c" &&
        cc -g -O0 -o "$BIN/gdb_ckpt_hold" "$ROOT/tests/gdb/gdb_ckpt_hold.c"
}

# session NAME HVRUN PROGRAM [GDB ARGS...]: PROGRAM under HVRUN run --gdb
# and gdb -batch with the arguments; NAME.out/.err are hvrun's streams,
# NAME.gdb gdb's output, NAME.rc hvrun's exit status. RUN_OPTS (hvrun
# run's options) and PROG_ARGS (the program's), arrays, are added.
RUN_OPTS=()
PROG_ARGS=()
session() {
    local name=$1 hvrun=$2 prog=$3
    shift 3
    local sock=$WORK/$name.sock
    "$hvrun" run --summary "${RUN_OPTS[@]}" --gdb "unix:$sock" -- "$prog" \
        "${PROG_ARGS[@]}" \
        >"$WORK/$name.out" 2>"$WORK/$name.err" &
    local pid=$!
    for _ in $(seq 200); do
        [ -S "$sock" ] && break
        grep -q "waiting for gdb" "$WORK/$name.err" 2>/dev/null && break
        sleep 0.05
    done
    timeout "$TIMEOUT" gdb -batch -nx -ex "target extended-remote $sock" \
        "$@" "$prog" >"$WORK/$name.gdb" 2>&1
    local waited=0
    while kill -0 "$pid" 2>/dev/null && [ $waited -lt $((TIMEOUT * 10)) ]; do
        sleep 0.1
        waited=$((waited + 1))
    done
    kill -0 "$pid" 2>/dev/null && kill "$pid"
    wait "$pid"
    echo $? >"$WORK/$name.rc"
}

# plain HVRUN NAME PROGRAM: the same run without gdb.
plain() {
    "$1" run --summary "${RUN_OPTS[@]}" -- "$3" "${PROG_ARGS[@]}" \
        >"$WORK/$2.out" 2>"$WORK/$2.err"
    echo $? >"$WORK/$2.rc"
}

digest() { grep -o 'digest [0-9a-f]*' "$1"; }

# expect CASE FILE PATTERN...: every extended regex in FILE, in order of
# the arguments (each anywhere); the first missing one fails the case.
expect() {
    local case=$1 file=$2
    shift 2
    for pat in "$@"; do
        if ! grep -Eq -- "$pat" "$file"; then
            fail "$case" "no '$pat' in gdb's output"
            show_tail "$file"
            return 1
        fi
    done
    return 0
}

run_case_threads() {
    local hvrun=$1 tag=$2
    session "threads$tag" "$hvrun" "$BIN/gdb_threads" \
        -ex 'break add_one' -ex 'continue' -ex 'bt' -ex 'info threads' \
        -ex 'print counter' -ex 'finish' \
        -ex 'condition 1 x > 100' -ex 'break gdb_threads.c:40' -ex 'continue' -ex 'step' -ex 'bt' \
        -ex 'continue'
    local g=$WORK/threads$tag.gdb
    expect "gdb/threads$tag" "$g" \
        'hit Breakpoint 1, add_one \(x=0\)' \
        '#1 .* in worker \(arg=' \
        '^\* 2 +Thread [0-9a-f.]+ +add_one' \
        '^  1 +Thread ' \
        '^\$1 = 0$' \
        'Value returned is \$2 = 1' \
        'gdb_lib_scale \(x=6\) at .*gdb_lib.c:7' \
        '#1 .* in main \(\) at .*gdb_threads.c:40' \
        'exited normally' || return
    pass "gdb/threads$tag"
    plain "$hvrun" "plain$tag" "$BIN/gdb_threads"
    if ! cmp -s "$WORK/threads$tag.out" "$WORK/plain$tag.out"; then
        fail "gdb/same-run$tag" "stdout differs from a run without gdb"
        diff "$WORK/plain$tag.out" "$WORK/threads$tag.out" | head -5
    elif [ "$(digest "$WORK/threads$tag.err")" != \
        "$(digest "$WORK/plain$tag.err")" ] ||
        [ -z "$(digest "$WORK/plain$tag.err")" ]; then
        fail "gdb/same-run$tag" "detlog $(digest "$WORK/threads$tag.err")" \
            "under gdb, $(digest "$WORK/plain$tag.err") without"
    else
        pass "gdb/same-run$tag"
    fi
}

run_case_stepi() {
    local hvrun=$1 tag=$2
    session "stepi$tag" "$hvrun" "$BIN/gdb_threads" \
        -ex 'break add_one' -ex 'continue' -ex 'print $pc' -ex 'stepi' \
        -ex 'stepi' -ex 'print $pc' -ex 'thread' -ex 'monitor when' \
        -ex 'delete' -ex 'continue'
    local g=$WORK/stepi$tag.gdb
    expect "gdb/stepi$tag" "$g" '^\$1 = .*<add_one' '^\$2 = .*<add_one\+' \
        'Current thread is 2 ' 'Current event: [0-9]+ \(thread [0-9]+' \
        'exited normally' || return
    local pc1 pc2
    pc1=$(grep -o '^\$1 = .*' "$g")
    pc2=$(grep -o '^\$2 = .*' "$g")
    if [ "${pc1#\$1}" = "${pc2#\$2}" ]; then
        fail "gdb/stepi$tag" "stepi did not move: $pc1 / $pc2"
        return
    fi
    pass "gdb/stepi$tag"
}

run_case_watch() {
    local hvrun=$1 tag=$2
    session "watch$tag" "$hvrun" "$BIN/gdb_threads" \
        -ex 'break worker' -ex 'continue' -ex 'watch -l counter' \
        -ex 'continue' -ex 'bt' -ex 'delete' -ex 'continue'
    local g=$WORK/watch$tag.gdb
    expect "gdb/watch$tag" "$g" 'atchpoint 2: -location counter' \
        'Old value = 0' 'New value = 1' '#0 +worker \(arg=' \
        'exited normally' || return
    [ -s "$WORK/plain$tag.out" ] || plain "$hvrun" "plain$tag" "$BIN/gdb_threads"
    if ! cmp -s "$WORK/watch$tag.out" "$WORK/plain$tag.out" ||
        [ "$(digest "$WORK/watch$tag.err")" != "$(digest "$WORK/plain$tag.err")" ]; then
        fail "gdb/watch$tag" "stdout or detlog digest differ from a run" \
            "without gdb"
        return
    fi
    pass "gdb/watch$tag"
}

# A free TCP port on 127.0.0.1 (a replay's unix socket would be in its
# private tree), and whether something listens on it yet.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
listening() {
    local hex
    hex=$(printf '%04X' "$1")
    grep -q ":$hex 00000000:0000 0A" /proc/net/tcp
}

run_case_replay() {
    local hvrun=$1 tag=$2 port
    local rec=$WORK/threads$tag.hvrec
    if ! "$hvrun" record -o "$rec" -- "$BIN/gdb_threads" \
        >/dev/null 2>"$WORK/record$tag.err"; then
        fail "gdb/replay$tag" "hvrun record failed"
        show_tail "$WORK/record$tag.err"
        return
    fi
    port=$(free_port)
    "$hvrun" replay --gdb "$port" "$rec" >"$WORK/replay$tag.out" \
        2>"$WORK/replay$tag.err" &
    local pid=$!
    for _ in $(seq 200); do
        listening "$port" && break
        sleep 0.05
    done
    timeout "$TIMEOUT" gdb -batch -nx -ex "target extended-remote :$port" \
        -ex 'break add_one' -ex 'continue' -ex 'bt' -ex 'info threads' \
        -ex 'print counter' -ex 'delete' -ex 'continue' "$BIN/gdb_threads" \
        >"$WORK/replay$tag.gdb" 2>&1
    wait "$pid"
    local rc=$?
    expect "gdb/replay$tag" "$WORK/replay$tag.gdb" \
        'hit Breakpoint 1, add_one \(x=0\)' '#1 .* in worker \(arg=' \
        '^\* 2 +Thread [0-9a-f.]+ +add_one' '^\$1 = 0$' \
        'exited normally' || return
    if [ $rc -ne 0 ] || ! grep -q "identical to the recording" \
        "$WORK/replay$tag.err"; then
        fail "gdb/replay$tag" "the replay under gdb differed (exit $rc)"
        show_tail "$WORK/replay$tag.err"
        return
    fi
    pass "gdb/replay$tag"
}

run_case_interrupt() {
    local hvrun=$1 tag=$2 port
    port=$(free_port)
    "$hvrun" run --gdb "$port" -- "$BIN/gdb_spin" \
        >/dev/null 2>"$WORK/interrupt$tag.err" &
    local pid=$!
    for _ in $(seq 200); do
        listening "$port" && break
        sleep 0.05
    done
    timeout "$TIMEOUT" python3 "$ROOT/tests/gdb/interrupt.py" "$port" \
        >"$WORK/interrupt$tag.gdb" 2>&1
    wait "$pid"
    local rc=$?
    expect "gdb/interrupt$tag" "$WORK/interrupt$tag.gdb" \
        '^start: T05thread:p[0-9a-f]+\.[0-9a-f]+;' \
        '^stop: T02thread:p[0-9a-f]+\.[0-9a-f]+;' '^kill: OK' || return
    if [ $rc -ne 137 ]; then
        fail "gdb/interrupt$tag" "hvrun exit $rc after vKill, not 137"
        show_tail "$WORK/interrupt$tag.err"
        return
    fi
    pass "gdb/interrupt$tag"
}

run_case_fork() {
    local hvrun=$1 tag=$2
    session "fork$tag" "$hvrun" "$BIN/gdb_fork" \
        -ex 'set detach-on-fork off' -ex 'break child_work' \
        -ex 'continue' -ex 'info inferiors' -ex 'bt' \
        -ex 'print child_value' -ex 'continue' -ex 'inferior 1' \
        -ex 'delete' -ex 'continue'
    expect "gdb/fork$tag" "$WORK/fork$tag.gdb" \
        'New inferior 2 \(process [0-9]+\)' \
        'Thread 2\.1 hit Breakpoint 1\.2, child_work \(x=5\)' \
        '^\* 2 +process [0-9]+' '#1 .* in main \(' '^\$1 = 5$' \
        'Inferior 2 \(process [0-9]+\) exited normally' \
        'Inferior 1 \(process [0-9]+\) exited normally' || return
    plain "$hvrun" "fork-plain$tag" "$BIN/gdb_fork"
    if ! cmp -s "$WORK/fork$tag.out" "$WORK/fork-plain$tag.out" ||
        [ "$(digest "$WORK/fork$tag.err")" != "$(digest "$WORK/fork-plain$tag.err")" ]; then
        fail "gdb/fork$tag" "stdout or detlog digest differ from a run" \
            "without gdb"
        return
    fi
    pass "gdb/fork$tag"
}

run_case_exec() {
    local hvrun=$1 tag=$2
    session "exec$tag" "$hvrun" "$BIN/gdb_fork" -ex 'catch exec' \
        -ex 'continue' -ex 'break after_exec' -ex 'continue' -ex 'bt' \
        -ex 'continue'
    expect "gdb/exec$tag" "$WORK/exec$tag.gdb" \
        'is executing new program: .*gdb_fork' \
        "Catchpoint 1 \\(exec'd .*gdb_fork\\)" \
        'Breakpoint 2, after_exec \(x=1\)' \
        '#1 .* in main \(argc=2' 'exited normally' || return
    pass "gdb/exec$tag"
}

run_case_start() {
    local hvrun=$1 tag=$2 port event
    session "when$tag" "$hvrun" "$BIN/gdb_threads" -ex 'break add_one' \
        -ex 'continue' -ex 'continue' -ex 'monitor when' -ex 'delete' \
        -ex 'continue'
    event=$(grep -o '^Current event: [0-9]*' "$WORK/when$tag.gdb" |
        grep -o '[0-9]*$')
    if [ -z "$event" ]; then
        fail "gdb/start$tag" "no event number from monitor when"
        show_tail "$WORK/when$tag.gdb"
        return
    fi
    port=$(free_port)
    "$hvrun" run --gdb "$port" --gdb-start "$event" -- "$BIN/gdb_threads" \
        >"$WORK/start$tag.out" 2>"$WORK/start$tag.err" &
    local pid=$!
    for _ in $(seq 200); do
        listening "$port" && break
        sleep 0.05
    done
    timeout "$TIMEOUT" gdb -batch -nx -ex "target extended-remote :$port" \
        -ex 'monitor when' -ex 'print counter' \
        -ex "monitor goto $((event + 10))" -ex 'continue' \
        -ex 'monitor when' -ex 'monitor goto 1' -ex 'continue' \
        -ex 'monitor when' "$BIN/gdb_threads" >"$WORK/start$tag.gdb" 2>&1
    wait "$pid"
    expect "gdb/start$tag" "$WORK/start$tag.gdb" \
        "^Current event: $event " '^\$1 = 0$' \
        "^Current event: $((event + 10)) " \
        'goes back to event 1 on' 'No more reverse-execution history' \
        "^Current event: $event " || return
    pass "gdb/start$tag"
}

# lost_schedule HVRUN SCHED: the schedule of the first --chaos seed (1, 2,
# ...) under which lost_update --racy loses an update (exits 1) into
# SCHED, as `hvrun analyze` would find it: which seed does depends on how
# many events the run has (a call answered in the guest is none), not on
# what these cases check. Nothing in SCHED when no seed up to 40 does.
lost_schedule() {
    local hvrun=$1 sched=$2 seed
    for seed in $(seq 40); do
        if ! "$hvrun" run --chaos --seed "$seed" --schedule-out "$sched" -- \
            "$BIN/lost_update" --racy >/dev/null 2>&1; then
            return 0
        fi
    done
    : >"$sched"
}

run_case_schedule() {
    local hvrun=$1 tag=$2
    local sched=$WORK/lost$tag.sched
    lost_schedule "$hvrun" "$sched"
    RUN_OPTS=(--schedule "$sched")
    PROG_ARGS=(--racy)
    session "schedule$tag" "$hvrun" "$BIN/lost_update" \
        -ex 'break adder' -ex 'continue' -ex 'watch -l counter' \
        -ex 'continue' -ex 'bt 1' -ex 'delete' -ex 'continue'
    plain "$hvrun" "schedule-plain$tag" "$BIN/lost_update"
    RUN_OPTS=()
    PROG_ARGS=()
    expect "gdb/schedule$tag" "$WORK/schedule$tag.gdb" 'Breakpoint 1, adder' \
        'Old value = 0' 'New value = 1' '#0 +adder \(' 'exited with code' ||
        return
    if ! cmp -s "$WORK/schedule$tag.out" "$WORK/schedule-plain$tag.out" ||
        [ "$(digest "$WORK/schedule$tag.err")" != \
            "$(digest "$WORK/schedule-plain$tag.err")" ]; then
        fail "gdb/schedule$tag" "under gdb: $(cat "$WORK/schedule$tag.out")" \
            "$(digest "$WORK/schedule$tag.err"); without:" \
            "$(cat "$WORK/schedule-plain$tag.out")" \
            "$(digest "$WORK/schedule-plain$tag.err")"
        return
    fi
    pass "gdb/schedule$tag"
}

# The reverse session on lost_update (gdb's arguments), run by $1 into
# $2.gdb: gdb connects to port $3 (a TCP port) or the unix socket $3.
REVERSE_SESSION=()
reverse_session_args() {
    local line
    line=$(grep -n 'printf("total' "$ROOT/tests/guest/lost_update.c" |
        cut -d: -f1)
    REVERSE_SESSION=(-ex "break lost_update.c:$line" -ex 'continue'
        -ex 'watch -l counter' -ex 'reverse-continue' -ex 'bt 1'
        -ex 'echo REGS-A\n' -ex 'info registers' -ex 'echo REGS-A-END\n'
        -ex 'reverse-stepi'
        -ex 'stepi' -ex 'echo REGS-B\n' -ex 'info registers'
        -ex 'echo REGS-END\n' -ex 'reverse-continue' -ex 'bt 1')
    # (the replay's session stops there: each step back is a new run)
    [ "${1:-}" = short ] ||
        REVERSE_SESSION+=(-ex 'delete' -ex 'break adder'
            -ex 'reverse-continue' -ex 'monitor when' -ex 'reverse-continue'
            -ex 'monitor when' -ex 'reverse-continue')
    REVERSE_SESSION+=(-ex 'delete' -ex 'continue')
}

# registers NAME.gdb FROM TO: the lines between two echo marks.
registers() { sed -n "/^$2\$/,/^$3\$/p" "$1" | sed '1d;$d'; }

# The answers a reverse session gave up to its second reverse-continue
# (to compare a run's and a replay's).
reverse_answers() {
    sed '/^Breakpoint 3 at/,$d' "$1" | grep -E '^(Old|New) value|^#0 '
    registers "$1" REGS-A REGS-A-END
}

check_reverse() {
    local case=$1 g=$2 walk=${3:-}
    expect "$case" "$g" 'Old value = [0-9]+' 'New value = [0-9]+' \
        '#0 +adder \(' 'exited with code 01' || return 1
    [ "$walk" = short ] || expect "$case" "$g" 'hit Breakpoint 3, adder' \
        'No more reverse-execution history' || return 1
    local a b
    a=$(registers "$g" REGS-A REGS-A-END)
    b=$(registers "$g" REGS-B REGS-END)
    if [ -z "$a" ] || [ "$a" != "$b" ]; then
        fail "$case" "reverse-stepi then stepi: other registers"
        diff <(echo "$a") <(echo "$b") | head -5
        return 1
    fi
    if [ "$(grep -cE '^#0 +adder' "$g")" -lt 2 ]; then
        fail "$case" "the second reverse-continue did not stop in adder"
        show_tail "$g"
        return 1
    fi
    return 0
}

run_case_reverse() {
    local hvrun=$1 tag=$2
    local sched=$WORK/lost$tag.sched
    [ -s "$sched" ] || lost_schedule "$hvrun" "$sched"
    RUN_OPTS=(--schedule "$sched")
    PROG_ARGS=(--racy)
    reverse_session_args
    session "reverse$tag" "$hvrun" "$BIN/lost_update" "${REVERSE_SESSION[@]}"
    plain "$hvrun" "reverse-plain$tag" "$BIN/lost_update"
    RUN_OPTS=()
    PROG_ARGS=()
    check_reverse "gdb/reverse$tag" "$WORK/reverse$tag.gdb" || return
    if ! cmp -s "$WORK/reverse$tag.out" "$WORK/reverse-plain$tag.out" ||
        [ "$(digest "$WORK/reverse$tag.err")" != \
            "$(digest "$WORK/reverse-plain$tag.err")" ]; then
        fail "gdb/reverse$tag" "went back and on to the end: " \
            "$(cat "$WORK/reverse$tag.out")" \
            "$(digest "$WORK/reverse$tag.err"); without gdb:" \
            "$(cat "$WORK/reverse-plain$tag.out")" \
            "$(digest "$WORK/reverse-plain$tag.err")"
        return
    fi
    pass "gdb/reverse$tag"
}

run_case_reverse_replay() {
    local hvrun=$1 tag=$2 port
    local rec=$WORK/lost$tag.hvrec sched=$WORK/lost$tag.sched
    if ! "$hvrun" record --schedule "$sched" -o "$rec" -- \
        "$BIN/lost_update" --racy >/dev/null 2>"$WORK/lostrec$tag.err" &&
        [ ! -s "$rec" ]; then
        fail "gdb/reverse-replay$tag" "hvrun record failed"
        show_tail "$WORK/lostrec$tag.err"
        return
    fi
    port=$(free_port)
    "$hvrun" replay --gdb "$port" "$rec" >"$WORK/rreplay$tag.out" \
        2>"$WORK/rreplay$tag.err" &
    local pid=$!
    for _ in $(seq 200); do
        listening "$port" && break
        sleep 0.05
    done
    reverse_session_args short
    timeout "$TIMEOUT" gdb -batch -nx -ex "target extended-remote :$port" \
        "${REVERSE_SESSION[@]}" "$BIN/lost_update" \
        >"$WORK/rreplay$tag.gdb" 2>&1
    wait "$pid"
    check_reverse "gdb/reverse-replay$tag" "$WORK/rreplay$tag.gdb" short ||
        return
    if ! grep -q "identical to the recording" "$WORK/rreplay$tag.err"; then
        fail "gdb/reverse-replay$tag" "the replay under gdb differed"
        show_tail "$WORK/rreplay$tag.err"
        return
    fi
    if [ "$(reverse_answers "$WORK/rreplay$tag.gdb")" != \
        "$(reverse_answers "$WORK/reverse$tag.gdb")" ]; then
        fail "gdb/reverse-replay$tag" "other answers than under hvrun run"
        diff <(reverse_answers "$WORK/reverse$tag.gdb") \
            <(reverse_answers "$WORK/rreplay$tag.gdb") | head -8
        return
    fi
    pass "gdb/reverse-replay$tag"
}

run_case_reverse_break() {
    local hvrun=$1 tag=$2
    session "rbreak$tag" "$hvrun" "$BIN/gdb_threads" -ex 'break add_one' \
        -ex 'continue' -ex 'continue' -ex 'reverse-continue' \
        -ex 'info args' -ex 'reverse-finish' -ex 'bt 1' -ex 'delete' \
        -ex 'monitor goto 50' -ex 'continue' -ex 'monitor when' \
        -ex 'continue'
    local g=$WORK/rbreak$tag.gdb
    expect "gdb/reverse-break$tag" "$g" 'add_one \(x=1\)' '^x = 0$' \
        '#0 .* in worker \(arg=0x0\) at .*gdb_threads.c:26' \
        'goes back to event 50' '^Current event: 50 ' \
        'exited normally' || return
    if [ "$(grep -c 'hit Breakpoint 1, add_one (x=0)' "$g")" -ne 2 ]; then
        fail "gdb/reverse-break$tag" "reverse-continue: not back at x=0"
        show_tail "$g"
        return
    fi
    # stdin a pipe from outside: going back refused, and said why
    local sock=$WORK/rrefuse$tag.sock
    echo input | "$hvrun" run --gdb "unix:$sock" -- "$BIN/gdb_threads" \
        >"$WORK/rrefuse$tag.out" 2>"$WORK/rrefuse$tag.err" &
    local pid=$!
    for _ in $(seq 200); do
        [ -S "$sock" ] && break
        sleep 0.05
    done
    timeout "$TIMEOUT" gdb -batch -nx -ex "target extended-remote $sock" \
        -ex 'break add_one' -ex 'continue' -ex 'reverse-continue' \
        -ex 'delete' -ex 'continue' "$BIN/gdb_threads" \
        >"$WORK/rrefuse$tag.gdb" 2>&1
    wait "$pid"
    expect "gdb/reverse-break$tag" "$WORK/rrefuse$tag.gdb" \
        'no reverse execution: stdin is a terminal or a pipe' \
        'exited normally' || return
    pass "gdb/reverse-break$tag"
}

run_case_idle_interrupt() {
    local hvrun=$1 tag=$2 port
    local fifo=$WORK/idle$tag.fifo
    mkfifo "$fifo"
    exec 9<>"$fifo" # a writer that never writes: cat waits
    port=$(free_port)
    "$hvrun" run --gdb "$port" -- /bin/cat <"$fifo" >/dev/null \
        2>"$WORK/idle$tag.err" &
    local pid=$!
    for _ in $(seq 200); do
        listening "$port" && break
        sleep 0.05
    done
    timeout "$TIMEOUT" python3 "$ROOT/tests/gdb/interrupt.py" "$port" \
        >"$WORK/idle$tag.gdb" 2>&1
    wait "$pid"
    local rc=$?
    exec 9>&-
    expect "gdb/idle-interrupt$tag" "$WORK/idle$tag.gdb" \
        '^stop: T02thread:p[0-9a-f]+\.[0-9a-f]+;' '^kill: OK' || return
    if [ $rc -ne 137 ]; then
        fail "gdb/idle-interrupt$tag" "hvrun exit $rc after vKill, not 137"
        return
    fi
    pass "gdb/idle-interrupt$tag"
}

run_case_deadlock() {
    local hvrun=$1 tag=$2
    session "deadlock$tag" "$hvrun" "$BIN/gdb_deadlock" -ex 'continue' \
        -ex 'thread apply all bt' -ex 'continue'
    expect "gdb/deadlock$tag" "$WORK/deadlock$tag.gdb" \
        'hvrun: deadlock: every guest thread waits' 'Thread 1 stopped' \
        'in take_b_then_a \(' 'in main \(\) at .*gdb_deadlock.c:27' \
        'Program terminated' || return
    pass "gdb/deadlock$tag"
}

run_case_watch_map() {
    local hvrun=$1 tag=$2
    session "watchmap$tag" "$hvrun" "$BIN/gdb_watch_map" -ex 'break main' \
        -ex 'continue' -ex 'watch -l watched' -ex 'continue' -ex 'delete' \
        -ex 'continue'
    expect "gdb/watch-map$tag" "$WORK/watchmap$tag.gdb" 'Old value = 0' \
        'New value = 42' 'exited normally' || return
    if ! grep -q '^watched 42$' "$WORK/watchmap$tag.out"; then
        fail "gdb/watch-map$tag" "the program did not print watched 42"
        show_tail "$WORK/watchmap$tag.err"
        return
    fi
    pass "gdb/watch-map$tag"
}

run_case_crash() {
    local hvrun=$1 tag=$2
    session "crash$tag" "$hvrun" "$BIN/gdb_crash" -ex 'continue' -ex 'bt' \
        -ex 'continue'
    local g=$WORK/crash$tag.gdb
    expect "gdb/crash$tag" "$g" 'received signal SIGSEGV' \
        'crash_here \(p=0x0\) at .*gdb_crash.c:7' '#1 .* main \(\)' \
        'terminated with signal SIGSEGV' || return
    plain "$hvrun" "crash-plain$tag" "$BIN/gdb_crash"
    if [ "$(cat "$WORK/crash$tag.rc")" != "$(cat "$WORK/crash-plain$tag.rc")" ]; then
        fail "gdb/crash$tag" "exit $(cat "$WORK/crash$tag.rc") under gdb," \
            "$(cat "$WORK/crash-plain$tag.rc") without"
        return
    fi
    pass "gdb/crash$tag"
}

run_case_detach() {
    local hvrun=$1 tag=$2
    session "detach$tag" "$hvrun" "$BIN/gdb_threads" \
        -ex 'break add_one' -ex 'continue' -ex 'detach'
    expect "gdb/detach$tag" "$WORK/detach$tag.gdb" 'hit Breakpoint 1' \
        'Inferior 1 \(process [0-9]+\) detached' || return
    [ -s "$WORK/plain$tag.out" ] || plain "$hvrun" "plain$tag" "$BIN/gdb_threads"
    if ! cmp -s "$WORK/detach$tag.out" "$WORK/plain$tag.out"; then
        fail "gdb/detach$tag" "stdout differs from a run without gdb"
        show_tail "$WORK/detach$tag.err"
        return
    fi
    pass "gdb/detach$tag"
}

# The answers at event 250 (monitor when, registers, stack, threads),
# the WANT-th time in FILE: the lines from "Current event: 250" on while
# they are such answers, sorted; gdb's own thread numbers and order left
# out (they follow the session, not the run).
at250() {
    awk -v want="$2" '
        /^Current event: 250 / { n++; on = (n == want); if (on) print; next }
        on && /^(r[a-z0-9]+ +0x|0x[0-9a-f]+:|  Id +Target|[* ] [0-9]+ +Thread)/ {
            sub(/^[* ] [0-9]+ +/, ""); print; next }
        { on = 0 }' "$1" | sort
}

run_case_checkpoint() {
    local hvrun=$1 tag=$2 total_line
    total_line=$(grep -n 'printf("total' "$ROOT/tests/guest/lost_update.c" |
        cut -d: -f1)
    local answers=(-ex 'monitor when' -ex 'info registers rip rsp rbp rax rbx'
        -ex 'x/6gx $sp' -ex 'info threads')
    PROG_ARGS=(--racy)
    # (the variables' values the same length: the guest's environment,
    # and so its stack, the same)
    HVRUN_GDB_CHECKPOINT_EVENTS=20 HVRUN_GDB_TRACE=$WORK/ckpa$tag.trace \
        session "ckpa$tag" "$hvrun" "$BIN/lost_update" \
        -ex "break lost_update.c:$total_line" -ex 'continue' \
        -ex 'monitor info checkpoints' -ex 'monitor goto 250' -ex 'continue' \
        "${answers[@]}" -ex 'delete' -ex 'continue'
    HVRUN_GDB_CHECKPOINT_EVENTS=00 HVRUN_GDB_TRACE=$WORK/ckpb$tag.trace \
        session "ckpb$tag" "$hvrun" "$BIN/lost_update" \
        -ex "break lost_update.c:$total_line" -ex 'continue' \
        -ex 'monitor goto 250' -ex 'continue' "${answers[@]}" \
        -ex 'monitor checkpoint' -ex 'monitor goto 100' -ex 'continue' \
        -ex 'monitor restart 1' -ex 'continue' "${answers[@]}" \
        -ex 'monitor info checkpoints' -ex 'delete' -ex 'continue'
    # The sessions' variables too, of the same lengths: with counted
    # progress, start-up's loops over the environment count into logical
    # time (two more variables: ~120 units, another detlog digest).
    [ -s "$WORK/ckplain$tag.out" ] ||
        HVRUN_GDB_CHECKPOINT_EVENTS=00 HVRUN_GDB_TRACE=$WORK/ckpl$tag.trace \
            plain "$hvrun" "ckplain$tag" "$BIN/lost_update"
    PROG_ARGS=()
    expect "gdb/checkpoint$tag" "$WORK/ckpa$tag.gdb" \
        '^  2 event 40, thread [0-9]+ \(automatic\)' 'every 40 events' \
        '^Current event: 250 .*detlog digest [0-9a-f]+' \
        'exited normally' || return
    expect "gdb/checkpoint$tag" "$WORK/ckpb$tag.gdb" \
        '^Checkpoint 1 at event 250' 'back to event 100' \
        'goes to checkpoint 1 \(event 250\)' '^\* 1 event 250' \
        'exited normally' || return
    if ! grep -q "restored checkpoint" "$WORK/ckpa$tag.trace" ||
        ! grep -q "restored checkpoint 1 " "$WORK/ckpb$tag.trace" ||
        grep -q "failed" "$WORK/ckpa$tag.trace" "$WORK/ckpb$tag.trace"; then
        fail "gdb/checkpoint$tag" "no checkpoint was restored, or a" \
            "replay from one failed"
        grep -h "restored\|failed" "$WORK/ckpa$tag.trace" \
            "$WORK/ckpb$tag.trace" | head -4
        return
    fi
    local a b b2
    a=$(at250 "$WORK/ckpa$tag.gdb" 1)
    b=$(at250 "$WORK/ckpb$tag.gdb" 1)
    b2=$(at250 "$WORK/ckpb$tag.gdb" 2)
    if [ -z "$b" ] || [ "$a" != "$b" ] || [ "$b" != "$b2" ]; then
        fail "gdb/checkpoint$tag" "other answers at event 250 through a" \
            "checkpoint than from the start"
        diff <(echo "$b") <(echo "$a") | head -6
        diff <(echo "$b") <(echo "$b2") | head -6
        return
    fi
    for s in ckpa ckpb; do
        if ! cmp -s "$WORK/$s$tag.out" "$WORK/ckplain$tag.out" ||
            [ "$(digest "$WORK/$s$tag.err")" != \
                "$(digest "$WORK/ckplain$tag.err")" ]; then
            fail "gdb/checkpoint$tag" "$s: $(cat "$WORK/$s$tag.out")" \
                "$(digest "$WORK/$s$tag.err"); without gdb:" \
                "$(cat "$WORK/ckplain$tag.out")" \
                "$(digest "$WORK/ckplain$tag.err")"
            return
        fi
    done
    pass "gdb/checkpoint$tag"
}

# gdb/goto-no-checkpoint: with checkpoints refused (each copy made to
# fail), a continue to a `monitor goto` past the first automatic
# checkpoint's spacing stops at the goto's event (it once ran on to the
# program's end: the refused checkpoint's chunk end replaced gdb's goto;
# found under kvm when kvm took no checkpoints).
run_case_goto_no_checkpoint() {
    local hvrun=$1 tag=$2 n=gotonc$2
    HVRUN_GDB_CHECKPOINT_EVENTS=20 HVRUN_GDB_CHECKPOINT_FAIL=1 \
        session "$n" "$hvrun" "$BIN/gdb_ckpt_fork" \
        -ex 'monitor goto 300' -ex 'continue' -ex 'monitor when' \
        -ex 'continue'
    expect "gdb/goto-no-checkpoint$tag" "$WORK/$n.gdb" \
        "^hvrun: no automatic checkpoints: the checkpoint's copy failed" \
        '^Current event: 300 ' 'exited normally' || return
    pass "gdb/goto-no-checkpoint$tag"
}

# gdb/checkpoint-kvm: checkpoints under --backend kvm, taken and
# restored, whatever backend the suite runs the other cases under.
run_case_checkpoint_kvm() {
    local hvrun=$1 tag=$2 n=ckkvm$2
    if ! have_kvm; then
        skip "gdb/checkpoint-kvm$tag" "no /dev/kvm here"
        return
    fi
    RUN_OPTS=(--backend kvm)
    HVRUN_GDB_CHECKPOINT_EVENTS=20 HVRUN_GDB_TRACE=$WORK/$n.trace \
        session "$n" "$hvrun" "$BIN/gdb_ckpt_fork" \
        -ex 'monitor goto 300' -ex 'continue' -ex 'monitor info checkpoints' \
        -ex 'monitor goto 100' -ex 'continue' -ex 'monitor when' \
        -ex 'continue'
    RUN_OPTS=()
    expect "gdb/checkpoint-kvm$tag" "$WORK/$n.gdb" \
        '^  2 event 40, thread [0-9]+ \(automatic\)' '^Current event: 100 ' \
        'exited normally' || return
    if grep -q 'no automatic checkpoints\|no checkpoint' "$WORK/$n.gdb" ||
        ! grep -q "restored checkpoint" "$WORK/$n.trace" ||
        grep -q "failed" "$WORK/$n.trace"; then
        fail "gdb/checkpoint-kvm$tag" "no checkpoint taken or restored under" \
            "kvm: $(grep -h -m1 'no automatic\|no checkpoint\|failed' \
                "$WORK/$n.gdb" "$WORK/$n.trace")"
        return
    fi
    pass "gdb/checkpoint-kvm$tag"
}

# await_run PID: waits for PID (a run whose gdb has gone) TIMEOUT seconds
# at most, then ends it and its children (a gdb that never connected
# leaves hvrun waiting for one for ever).
await_run() {
    local pid=$1 waited=0
    while kill -0 "$pid" 2>/dev/null && [ $waited -lt $((TIMEOUT * 10)) ]; do
        sleep 0.1
        waited=$((waited + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
        pkill -P "$pid"
        kill "$pid"
    fi
    wait "$pid"
}

# checkpoint_session CASE PROGRAM LINES HVRUN TAG: PROGRAM (stdout a
# pipe) under gdb, goto 300, back to 150 and to 100, without automatic
# checkpoints and with one every 20 events: the same when/registers, a
# restore in the second (none failed), the same LINES lines of output and
# detlog digest.
checkpoint_session() {
    local name=$1 prog=$2 lines=$3 hvrun=$4 tag=$5 k w=$WORK/$1
    for k in 00 20; do
        local sock=$w$k.sock
        (HVRUN_GDB_CHECKPOINT_EVENTS=$k HVRUN_GDB_TRACE=$w$k$tag.trace \
            "$hvrun" run --summary "${RUN_OPTS[@]}" --detlog "$w$k$tag.detlog" \
            --gdb "unix:$sock" -- "$BIN/$prog" 2>"$w$k$tag.err" |
            cat >"$w$k$tag.out") &
        local pid=$!
        for _ in $(seq 200); do
            [ -S "$sock" ] && break
            sleep 0.05
        done
        timeout "$TIMEOUT" gdb -batch -nx -ex "target extended-remote $sock" \
            -ex 'monitor goto 300' -ex 'continue' -ex 'monitor goto 150' \
            -ex 'continue' -ex 'monitor when' -ex 'info registers rip rsp' \
            -ex 'monitor goto 100' -ex 'continue' -ex 'monitor when' \
            -ex 'continue' "$BIN/$prog" >"$w$k$tag.gdb" 2>&1
        await_run "$pid"
    done
    local a b
    a=$(grep -E '^(Current event|rip|rsp)' "${w}00$tag.gdb")
    b=$(grep -E '^(Current event|rip|rsp)' "${w}20$tag.gdb")
    if [ -z "$a" ] || [ "$a" != "$b" ]; then
        fail "gdb/$name$tag" "other answers with checkpoints"
        diff <(echo "$a") <(echo "$b") | head -6
        return
    fi
    if ! grep -q "restored checkpoint" "${w}20$tag.trace" ||
        grep -q "failed" "${w}20$tag.trace"; then
        fail "gdb/$name$tag" "no checkpoint restored, or one failed:" \
            "$(grep -m1 -E 'failed|refused' "${w}20$tag.trace")"
        return
    fi
    if ! cmp -s "${w}00$tag.out" "${w}20$tag.out" ||
        [ "$(wc -l <"${w}20$tag.out")" != "$lines" ] ||
        [ "$(digest "${w}00$tag.err")" != "$(digest "${w}20$tag.err")" ]; then
        fail "gdb/$name$tag" "output or detlog digest differ:" \
            "$(digest "${w}00$tag.err") / $(digest "${w}20$tag.err")," \
            "$(wc -l <"${w}00$tag.out") / $(wc -l <"${w}20$tag.out") lines"
        diff "${w}00$tag.out" "${w}20$tag.out" | head -4
        "$hvrun" detlog "${w}00$tag.detlog" "${w}20$tag.detlog" | head -16
        return
    fi
    pass "gdb/$name$tag"
}

run_case_checkpoint_fork() {
    checkpoint_session checkpoint-fork gdb_ckpt_fork 200 "$1" "$2"
}

run_case_checkpoint_pipe() {
    checkpoint_session checkpoint-pipe gdb_ckpt_pipe 121 "$1" "$2"
}

run_case_checkpoint_socket() {
    checkpoint_session checkpoint-socket gdb_ckpt_socket 121 "$1" "$2"
}

run_case_checkpoint_event() {
    checkpoint_session checkpoint-event gdb_ckpt_event 121 "$1" "$2"
}

run_case_checkpoint_fds() {
    checkpoint_session checkpoint-fds gdb_ckpt_fds 100 "$1" "$2"
}

run_case_checkpoint_state() {
    checkpoint_session checkpoint-state gdb_ckpt_state 150 "$1" "$2"
}

# A checkpoint taken just before the pipe's writer exits, its copy slow
# to start (HVRUN_GDB_CHECKPOINT_STALL_MS, as on a loaded host), and the
# run continued to its end: the parent reads the end of file as without
# the checkpoint (the same output and detlog digest as a run without gdb),
# not once the copy has closed its ends (a wakeup from outside the run).
run_case_checkpoint_close() {
    local hvrun=$1 tag=$2
    local n=ckclose$tag line
    line=$(grep -n 'SYS_getppid' "$ROOT/tests/gdb/gdb_ckpt_pipe.c" | cut -d: -f1)
    # (the parent has read all 970 bytes; the child is at its return)
    HVRUN_GDB_CHECKPOINT_EVENTS=0 HVRUN_GDB_CHECKPOINT_STALL_MS=500 \
        session "$n" "$hvrun" "$BIN/gdb_ckpt_pipe" \
        -ex "break gdb_ckpt_pipe.c:$line if total == 970" -ex 'continue' \
        -ex 'delete' -ex 'monitor checkpoint' -ex 'continue'
    HVRUN_GDB_CHECKPOINT_EVENTS=0 HVRUN_GDB_CHECKPOINT_STALL_MS=500 \
        plain "$hvrun" "$n-plain" "$BIN/gdb_ckpt_pipe"
    expect "gdb/checkpoint-close$tag" "$WORK/$n.gdb" 'Breakpoint 1, main' \
        '^Checkpoint 1 at event' 'exited normally' || return
    if ! cmp -s "$WORK/$n.out" "$WORK/$n-plain.out" ||
        [ "$(digest "$WORK/$n.err")" != "$(digest "$WORK/$n-plain.err")" ]; then
        fail "gdb/checkpoint-close$tag" "after the checkpoint:" \
            "$(tail -1 "$WORK/$n.out") $(digest "$WORK/$n.err"); without gdb:" \
            "$(tail -1 "$WORK/$n-plain.out") $(digest "$WORK/$n-plain.err")"
        return
    fi
    pass "gdb/checkpoint-close$tag"
}

# The things a checkpoint cannot copy (tests/gdb/gdb_ckpt_hold.c MODE):
# monitor checkpoint where the program holds one says why not, and the
# run goes on to its end; and those it must copy rather than share (the
# run's open files, a System V segment's memory) give the same output
# and detlog digest as without gdb after a checkpoint (and a restore).
run_case_checkpoint_hold() {
    local hvrun=$1 tag=$2 mode n why
    local data=$WORK/hold.data fifo=$WORK/hold.fifo
    [ -e "$data" ] || echo data >"$data"
    [ -p "$fifo" ] || mkfifo "$fifo"
    for mode in flock plock fifo memfd pidfd shm-attached; do
        case $mode in
        flock | plock) why='a file lock \(flock, fcntl\) is held' ;;
        fifo) why='a named FIFO' ;;
        memfd) why='a memfd' ;;
        pidfd) why='a pidfd' ;;
        shm-attached) why='System V shared memory segment is attached' ;;
        esac
        n=hold-$mode$tag
        PROG_ARGS=("$mode" "$data" "$fifo")
        HVRUN_GDB_CHECKPOINT_EVENTS=0 session "$n" "$hvrun" \
            "$BIN/gdb_ckpt_hold" -ex 'break mark' -ex 'continue' \
            -ex 'monitor checkpoint' -ex 'delete' -ex 'continue'
        PROG_ARGS=()
        expect "gdb/checkpoint-hold$tag" "$WORK/$n.gdb" \
            "^hvrun: no checkpoint: .*$why" 'exited normally' || return
        if ! grep -q "^$mode: done" "$WORK/$n.out"; then
            fail "gdb/checkpoint-hold$tag" "$mode: the run did not go on"
            show_tail "$WORK/$n.err"
            return
        fi
    done
    local close=(-ex 'break mark' -ex 'continue' -ex 'monitor checkpoint'
        -ex 'delete' -ex 'continue')
    # shm: automatic checkpoints every 50 events (at 50 and 100 the
    # segment is detached, in the 200 calls after its first write); goto
    # 140, on to mark2 (the segment written again), goto 140 again (back
    # to the stop of the first goto: the same answer) restores the one
    # at 100, and on to mark2 the segment holds what it held then
    local shm=(-ex 'break mark2' -ex 'monitor goto 140' -ex 'continue'
        -ex 'monitor when' -ex 'continue' -ex 'print seen'
        -ex 'monitor goto 140' -ex 'continue' -ex 'monitor when'
        -ex 'continue' -ex 'print seen' -ex 'delete' -ex 'continue')
    for mode in close shm; do
        n=hold-$mode$tag
        PROG_ARGS=("$mode" "$data")
        if [ "$mode" = close ]; then
            HVRUN_GDB_CHECKPOINT_EVENTS=00 HVRUN_GDB_TRACE=$WORK/$n.trace \
                session "$n" "$hvrun" "$BIN/gdb_ckpt_hold" "${close[@]}"
        else
            HVRUN_GDB_CHECKPOINT_EVENTS=50 HVRUN_GDB_TRACE=$WORK/$n.trace \
                session "$n" "$hvrun" "$BIN/gdb_ckpt_hold" "${shm[@]}"
        fi
        # (the variables of the same lengths: the guest's environment)
        HVRUN_GDB_CHECKPOINT_EVENTS=00 HVRUN_GDB_TRACE=$WORK/$n.trace \
            plain "$hvrun" "$n-plain" "$BIN/gdb_ckpt_hold"
        PROG_ARGS=()
        if [ "$mode" = close ]; then
            expect "gdb/checkpoint-hold$tag" "$WORK/$n.gdb" \
                '^Checkpoint 1 at event' 'exited normally' || return
        else
            expect "gdb/checkpoint-hold$tag" "$WORK/$n.gdb" \
                'exited normally' || return
            local at140
            at140=$(grep '^Current event: 140 ' "$WORK/$n.gdb" | sort -u)
            if [ "$(grep -c '^\$[0-9] = "before' "$WORK/$n.gdb")" != 2 ] ||
                [ "$(grep -c '^Current event: 140 ' "$WORK/$n.gdb")" != 2 ] ||
                [ "$(echo "$at140" | wc -l)" != 1 ] ||
                ! grep -q 'restored checkpoint' "$WORK/$n.trace"; then
                fail "gdb/checkpoint-hold$tag" "shm: going back to 140 (a" \
                    "restore), the segment did not hold what it held there:" \
                    "$(grep -E '^(\$[0-9] = |Current event)' "$WORK/$n.gdb" |
                        tr '\n' ' ')" \
                    "$(grep -c 'restored checkpoint' "$WORK/$n.trace") restores"
                return
            fi
        fi
        if ! cmp -s "$WORK/$n.out" "$WORK/$n-plain.out" ||
            [ "$(digest "$WORK/$n.err")" != "$(digest "$WORK/$n-plain.err")" ]; then
            fail "gdb/checkpoint-hold$tag" "$mode: $(head -1 "$WORK/$n.out")" \
                "$(digest "$WORK/$n.err"); without gdb:" \
                "$(head -1 "$WORK/$n-plain.out") $(digest "$WORK/$n-plain.err")"
            return
        fi
    done
    pass "gdb/checkpoint-hold$tag"
}

# zombies SOCK: the gdb command that prints "zombies: N", how many zombie
# children the hvrun processes of the session on socket SOCK have (their
# command line names it: --gdb unix:SOCK).
zombies() {
    local cmd='shell echo zombies: $(ps -o stat= --ppid "$(pgrep -d, -f -- unix:SOCK)" | grep -c "^Z")'
    echo "${cmd//SOCK/$1}"
}

# A checkpoint's copy that fails, and checkpoints deleted: reaped by the
# run (its hvrun has no zombie child at the next stop), which goes on.
run_case_checkpoint_reap() {
    local hvrun=$1 tag=$2 n data=$WORK/hold.data
    [ -e "$data" ] || echo data >"$data"
    n=reap-fail$tag
    PROG_ARGS=(close "$data")
    HVRUN_GDB_CHECKPOINT_EVENTS=0 HVRUN_GDB_CHECKPOINT_FAIL=1 \
        session "$n" "$hvrun" "$BIN/gdb_ckpt_hold" -ex 'break mark' \
        -ex 'continue' -ex 'monitor checkpoint' -ex "$(zombies "$WORK/$n.sock")" \
        -ex 'delete' -ex 'continue'
    PROG_ARGS=()
    expect "gdb/checkpoint-reap$tag" "$WORK/$n.gdb" \
        "^hvrun: no checkpoint: the checkpoint's copy failed: made to fail" \
        '^zombies: 0$' 'exited normally' || return
    if ! grep -q '^close: done' "$WORK/$n.out"; then
        fail "gdb/checkpoint-reap$tag" "the run did not go on"
        show_tail "$WORK/$n.err"
        return
    fi
    n=reap-delete$tag
    PROG_ARGS=(close "$data")
    HVRUN_GDB_CHECKPOINT_EVENTS=0 session "$n" "$hvrun" \
        "$BIN/gdb_ckpt_hold" -ex 'break mark' -ex 'continue' \
        -ex 'monitor checkpoint' -ex 'monitor checkpoint' \
        -ex 'monitor delete checkpoint 1' -ex 'monitor delete checkpoint 2' \
        -ex 'shell sleep 0.5' -ex 'stepi' -ex "$(zombies "$WORK/$n.sock")" \
        -ex 'delete' -ex 'continue'
    PROG_ARGS=()
    expect "gdb/checkpoint-reap$tag" "$WORK/$n.gdb" '^Checkpoint 2 at event' \
        '^Deleted checkpoint 2' '^zombies: 0$' 'exited normally' || return
    pass "gdb/checkpoint-reap$tag"
}

if ! command -v gdb >/dev/null || ! command -v cc >/dev/null ||
    ! command -v python3 >/dev/null; then
    for c in threads same-run stepi watch watch-map replay interrupt fork exec start schedule reverse reverse-replay reverse-break idle-interrupt deadlock crash detach checkpoint checkpoint-fork checkpoint-pipe checkpoint-socket checkpoint-event checkpoint-fds checkpoint-state checkpoint-close checkpoint-hold checkpoint-reap checkpoint-kvm goto-no-checkpoint; do
        skip "gdb/$c" "needs gdb, cc and python3 (apt-get install gdb gcc python3)"
    done
    finish
fi
if ! build_programs; then
    fail "gdb/build" "could not build tests/gdb's programs"
    finish
fi
# run CASE HVRUN TAG: run_case_CASE unless HVRUN_GDB_CASES leaves it out.
# Every case runs under the suite's backend (HVRUN_BACKEND, else kvm),
# checkpoints too (both backends take them); checkpoint-kvm names kvm.
run() {
    case " ${HVRUN_GDB_CASES:-$1} " in *" $1 "*) ;; *) return ;; esac
    "run_case_${1//-/_}" "$2" "$3"
    RUN_OPTS=()
}
for hvrun in "$@"; do
    tag=""
    case $hvrun in */debug/*) tag="-debug" ;; esac
    for c in threads stepi watch watch-map replay interrupt fork exec start \
        schedule reverse reverse-replay reverse-break idle-interrupt \
        deadlock crash detach checkpoint checkpoint-fork checkpoint-pipe \
        checkpoint-socket checkpoint-event checkpoint-fds checkpoint-state \
        checkpoint-close checkpoint-hold checkpoint-reap checkpoint-kvm \
        goto-no-checkpoint; do
        run "$c" "$hvrun" "$tag"
    done
done
finish
