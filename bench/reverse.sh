#!/usr/bin/env bash
# bench/reverse.sh HVRUN: what going back costs under `hvrun run --gdb`
# (issue 28; cli/gdbserver_reverse.c). A program that makes 2N events (N
# raw getpid calls twice over: bench/sysloop), gdb attached in batch mode:
# `monitor goto 2N` and continue (forward: the run itself), then `monitor
# goto N` and continue (back N events: a new run instance replaying the
# session's log silently to event N), then reverse-continue to a
# breakpoint at main (back to near the start, through a scan and a
# reach: two runs). Each step's wall time is taken by gdb's `shell date`
# around it; a plain `hvrun run` of the same program is timed for
# comparison. No timing is asserted.
#
# Checkpoints (docs/DEBUGGING.md): the forward run leaves automatic ones
# every HVRUN_GDB_CHECKPOINT_EVENTS events (default 100000, thinned past
# HVRUN_GDB_CHECKPOINTS, default 16), so going back is a restore and a
# short run; HVRUN_GDB_CHECKPOINT_EVENTS=0 times it without them (a run
# from the start each time).
#
# BENCH_REVERSE_EVENTS: N (default 200000; the issue's figure is
# 1000000, about a minute per run under ptrace on a 2-core VM). The
# backend is hvrun's default (kvm) or HVRUN_BACKEND's; both take
# checkpoints.
# Output: a markdown table on stdout, progress on stderr.
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: bench/reverse.sh HVRUN" >&2
    exit 2
fi
HVRUN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
[ -x "$HVRUN" ] || { echo "bench: $1 is not an executable hvrun" >&2; exit 2; }
command -v gdb >/dev/null || { echo "SKIP bench/reverse: needs gdb"; exit 0; }
N=${BENCH_REVERSE_EVENTS:-200000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /var/tmp/hvrun-bench-reverse.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cc -O2 -g -o "$WORK/sysloop" "$ROOT/bench/sysloop.c"

now() { date +%s.%N; }

echo "bench: plain run of $((2 * N)) calls" >&2
t0=$(now)
"$HVRUN" run --summary -- "$WORK/sysloop" $((2 * N)) >/dev/null \
    2>"$WORK/plain.err"
t1=$(now)
plain=$(echo "$t1 - $t0" | bc)
events=$(grep -o 'detlog [0-9]* events' "$WORK/plain.err" | grep -o '[0-9]*')

echo "bench: under gdb: forward to $((2 * N)), back to $N, back to main" >&2
sock=$WORK/gdb.sock
"$HVRUN" run --gdb "unix:$sock" -- "$WORK/sysloop" $((2 * N)) \
    >/dev/null 2>"$WORK/run.err" &
pid=$!
for _ in $(seq 200); do
    [ -S "$sock" ] && break
    sleep 0.05
done
gdb -batch -nx -ex "target extended-remote $sock" \
    -ex 'break main' -ex 'continue' -ex 'delete' \
    -ex 'shell date +T0=%s.%N' \
    -ex "monitor goto $((2 * N))" -ex 'continue' \
    -ex 'shell date +T1=%s.%N' \
    -ex "monitor goto $N" -ex 'continue' \
    -ex 'shell date +T2=%s.%N' -ex 'monitor when' \
    -ex 'monitor info checkpoints' \
    -ex 'break main' -ex 'reverse-continue' \
    -ex 'shell date +T3=%s.%N' -ex 'monitor when' -ex 'kill' \
    "$WORK/sysloop" >"$WORK/gdb.out" 2>&1 || true
wait "$pid" || true
t() { grep -o "^$1=[0-9.]*" "$WORK/gdb.out" | cut -d= -f2; }
if [ -z "$(t T3)" ]; then
    echo "bench: the gdb session did not finish:" >&2
    tail -20 "$WORK/gdb.out" >&2
    exit 1
fi
fwd=$(echo "$(t T1) - $(t T0)" | bc)
back=$(echo "$(t T2) - $(t T1)" | bc)
tomain=$(echo "$(t T3) - $(t T2)" | bc)
at=$(grep -o '^Current event: [0-9]*' "$WORK/gdb.out" | head -1 |
    grep -o '[0-9]*$')

echo "| step | events | wall s |"
echo "| --- | ---: | ---: |"
echo "| plain \`hvrun run\` of the program | $events | $plain |"
echo "| under gdb: forward to event $((2 * N)) | $((2 * N)) | $fwd |"
echo "| under gdb: \`monitor goto $N\` back (stopped at $at) | $N back | $back |"
echo "| under gdb: reverse-continue to \`main\` (scan + reach) | $N back | $tomain |"
echo "checkpoints: $(grep -c '^[ *] *[0-9]* event' "$WORK/gdb.out")" \
    "(HVRUN_GDB_CHECKPOINT_EVENTS=${HVRUN_GDB_CHECKPOINT_EVENTS:-100000})," \
    "backend ${HVRUN_BACKEND:-kvm}"
grep -m1 '^hvrun: no automatic checkpoints' "$WORK/gdb.out" >&2 || true
