# bench/lib.sh - what bench/progress.sh and bench/progress_start.sh share:
# perf stat's CPU-time prefix where perf can count here, and a scratch
# directory under build/ (not /tmp: the guest's /tmp is private).
# shellcheck shell=bash

# PERF: perf stat's prefix (Debian: linux-perf), empty where it cannot
# count task-clock here.
# shellcheck disable=SC2034 # read by the scripts that source this
PERF=()
if command -v perf >/dev/null &&
    perf stat -x, -e task-clock -o /dev/null -- true 2>/dev/null; then
    PERF=(perf stat "-x," -e task-clock)
fi
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# bench_work NAME: WORK, a scratch directory removed at exit.
bench_work() {
    WORK=$(mktemp -d "$ROOT/build/bench-$1.XXXXXX") || exit 1
    # shellcheck disable=SC2064 # WORK is set now
    trap "rm -rf '$WORK'" EXIT
}

# bench_cpu_ms: the CPU time (ms) perf stat wrote to $WORK/perf, or "-".
bench_cpu_ms() {
    if [ ${#PERF[@]} -gt 0 ]; then
        awk -F, '$3 == "task-clock" {printf "%d", $1}' "$WORK/perf"
    else
        echo -
    fi
}

# median: of the numbers on stdin ("-" when one is "-").
median() { sort -n | awk '$1 == "-" {d = 1} {v[NR]=$1} END {print d ? "-" : (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

# ratio A B: B/A as "N.NNx" ("-" when either is "-").
ratio() {
    case "$1$2" in *-*) echo - ;;
    *) awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2fx", a ? b / a : 0}' ;;
    esac
}
