#!/usr/bin/env bash
# bench/progress_start.sh HVRUN: what counted progress (--progress
# software) costs a process start, with progress.c's images kept in the
# cache directory (warm) and without them (cold: the images made in the
# run, as before they were kept; the back edges' lists kept in both).
# Cases: python3 -c pass, gcc -c hello.c, 50 x `sh -c true` in one run,
# /bin/true. Modes: --progress none, software warm, software cold, each
# with a cache directory of its own (XDG_CACHE_HOME); cold removes the
# progress-image-* entries before each run. Interleaved (the order turns
# each repetition); prints the medians of CPU time (perf stat task-clock
# of every process and thread of the run, hvrun's and the guest's; "-"
# without perf) and wall time in ms, and the ratios to none. No timing is
# asserted. The backend is hvrun's default (HVRUN_BACKEND=ptrace where
# there is no /dev/kvm). BENCH_PROGRESS_REPS (default 7).
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: bench/progress_start.sh HVRUN" >&2
    exit 2
fi
HVRUN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
[ -x "$HVRUN" ] || { echo "bench: $1 is not an executable hvrun" >&2; exit 2; }
REPS=${BENCH_PROGRESS_REPS:-7}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_work start
printf '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n' \
    >"$WORK/hello.c"
mkdir -p "$WORK/none" "$WORK/warm" "$WORK/cold"

# one MODE CASE: "WALL CPU" of a run in ms.
one() {
    local mode=$1 c=$2 progress=software pre=() t0 t1 cpu=-
    [ "$mode" = none ] && progress=none
    [ "$mode" = cold ] && rm -f "$WORK/cold/hvrun/"progress-image-*
    [ ${#PERF[@]} -gt 0 ] && pre=("${PERF[@]}" -o "$WORK/perf" --)
    pre+=(env XDG_CACHE_HOME="$WORK/$mode" "$HVRUN" run --progress
        "$progress" --cwd "$WORK" --)
    t0=$(date +%s%N)
    case $c in
    python3) "${pre[@]}" /usr/bin/python3 -c pass ;;
    gcc) "${pre[@]}" gcc -c hello.c -o hello.o ;;
    sh50) "${pre[@]}" /bin/sh -c \
        'i=0; while [ $i -lt 50 ]; do sh -c true; i=$((i+1)); done' ;;
    true) "${pre[@]}" /bin/true ;;
    esac >/dev/null
    t1=$(date +%s%N)
    cpu=$(bench_cpu_ms)
    echo "$(((t1 - t0) / 1000000)) $cpu"
}

cases=(python3 gcc sh50 true)
echo "| case | none CPU (wall) | software warm | software cold | warm/none CPU | cold/none CPU | warm/none wall |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
for c in "${cases[@]}"; do
    for m in none warm cold; do one "$m" "$c" >/dev/null; done # the caches
    : >"$WORK/t.none"; : >"$WORK/t.warm"; : >"$WORK/t.cold"
    for r in $(seq 1 "$REPS"); do
        echo "bench: $c $r/$REPS" >&2
        case $((r % 3)) in
        1) order=(none warm cold) ;;
        2) order=(warm cold none) ;;
        0) order=(cold none warm) ;;
        esac
        for m in "${order[@]}"; do one "$m" "$c" >>"$WORK/t.$m"; done
    done
    for m in none warm cold; do
        read -r "w_$m" < <(cut -d' ' -f1 "$WORK/t.$m" | median)
        read -r "c_$m" < <(cut -d' ' -f2 "$WORK/t.$m" | median)
    done
    # shellcheck disable=SC2154 # set by the read above
    echo "| $c | $c_none ($w_none) | $c_warm ($w_warm) | $c_cold ($w_cold) | $(ratio "$c_none" "$c_warm") | $(ratio "$c_none" "$c_cold") | $(ratio "$w_none" "$w_warm") |"
done
