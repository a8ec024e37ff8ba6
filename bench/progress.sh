#!/usr/bin/env bash
# bench/progress.sh HVRUN: what counting progress in software costs
# (--progress software, issue 29; syscall-proxy/mm/progress.c) on
# compute-bound programs: each case runs natively, under `hvrun run
# --progress none` and under `hvrun run --progress software`, interleaved
# (the order turns each repetition), and the medians and the ratio
# software/none are printed. The cases: bzip2 compressing BENCH_BZ_MB MB
# of bench/gendata text, bench/progressloop (a tight LCG loop, one counted
# back edge per iteration, BENCH_LOOP_N iterations), python3 summing
# squares in a loop, when installed node doing the same, and exec: sh
# running /bin/true BENCH_EXEC_N times (what the rewrite at each exec
# costs a short process). The first run of each case is thrown away (the
# back edges' cache is filled there). Each row gives the medians of wall
# time and of CPU time (perf stat's task-clock of the run's every process
# and thread, hvrun's and the guest's: on a loaded machine wall time
# follows the load, CPU time much less; "-" without perf) and both ratios
# software/none. No timing is asserted. The backend is hvrun's default
# (set HVRUN_BACKEND=ptrace where there is no /dev/kvm).
#
# BENCH_PROGRESS_REPS (default 5), BENCH_BZ_MB (6), BENCH_LOOP_N
# (1000000000), BENCH_PY_N (3000000), BENCH_EXEC_N (50),
# BENCH_PROGRESS_CASES (default all: "bzip2 loop python3 node exec").
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: bench/progress.sh HVRUN" >&2
    exit 2
fi
HVRUN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
[ -x "$HVRUN" ] || { echo "bench: $1 is not an executable hvrun" >&2; exit 2; }
REPS=${BENCH_PROGRESS_REPS:-5}
BZ_MB=${BENCH_BZ_MB:-6}
LOOP_N=${BENCH_LOOP_N:-1000000000}
PY_N=${BENCH_PY_N:-3000000}
EXEC_N=${BENCH_EXEC_N:-50}
# CPU time from perf stat (Debian: linux-perf) where it can count here.
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_work progress
cc -O2 -o "$WORK/progressloop" "$ROOT/bench/progressloop.c"
cc -O2 -o "$WORK/gendata" "$ROOT/bench/gendata.c"
"$WORK/gendata" $((BZ_MB * 1024 * 1024)) >"$WORK/data.txt"

# one MODE CASE: a run's wall and CPU time in ms, "WALL CPU" (MODE native,
# none or software).
one() {
    local mode=$1
    shift
    local pre=() t0 t1
    [ ${#PERF[@]} -gt 0 ] && pre=("${PERF[@]}" -o "$WORK/perf" --)
    [ "$mode" != native ] && pre+=("$HVRUN" run --progress "$mode" --)
    t0=$(date +%s%N)
    case $1 in
    bzip2) "${pre[@]}" bzip2 -c "$WORK/data.txt" >/dev/null ;;
    loop) "${pre[@]}" "$WORK/progressloop" "$LOOP_N" >/dev/null ;;
    python3) "${pre[@]}" /usr/bin/python3 -c \
        "x=0
for i in range($PY_N): x += i*i
print(x)" >/dev/null ;;
    node) "${pre[@]}" node -e \
        "let x=0; for (let i=0;i<$PY_N*10;i++) x+=i*i%7; console.log(x)" \
        >/dev/null ;;
    exec) "${pre[@]}" /bin/sh -c \
        "i=0; while [ \$i -lt $EXEC_N ]; do /bin/true; i=\$((i+1)); done" ;;
    esac
    t1=$(date +%s%N)
    local cpu
    cpu=$(bench_cpu_ms)
    echo "$(((t1 - t0) / 1000000)) $cpu"
}

cases=(bzip2 loop python3)
command -v node >/dev/null && cases+=(node)
cases+=(exec)
# shellcheck disable=SC2206 # a list of words
[ -n "${BENCH_PROGRESS_CASES:-}" ] && cases=($BENCH_PROGRESS_CASES)
echo "| case | native ms (CPU) | --progress none ms (CPU) | --progress software ms (CPU) | software/none wall | software/none CPU |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for c in "${cases[@]}"; do
    one software "$c" >/dev/null # fills the back edges' cache
    : >"$WORK/native" ; : >"$WORK/none" ; : >"$WORK/software"
    for r in $(seq 1 "$REPS"); do
        echo "bench: $c $r/$REPS" >&2
        if [ $((r % 2)) = 1 ]; then order=(native none software)
        else order=(software none native); fi
        for m in "${order[@]}"; do one "$m" "$c" >>"$WORK/$m"; done
    done
    for m in native none software; do
        read -r "w_$m" < <(cut -d' ' -f1 "$WORK/$m" | median)
        read -r "c_$m" < <(cut -d' ' -f2 "$WORK/$m" | median)
    done
    # shellcheck disable=SC2154 # set by the read above
    echo "| $c | $w_native ($c_native) | $w_none ($c_none) | $w_software ($c_software) | $(ratio "$w_none" "$w_software") | $(ratio "$c_none" "$c_software") |"
done
