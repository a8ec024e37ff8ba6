#!/usr/bin/env bash
# bench/progress.sh HVRUN: what counting progress in software costs
# (--progress software, issue 29; syscall-proxy/mm/progress.c) on
# compute-bound programs: each case runs natively, under `hvrun run
# --progress none` and under `hvrun run --progress software`, interleaved
# (the order turns each repetition), and the medians and the ratio
# software/none are printed. The cases: bzip2 compressing BENCH_BZ_MB MB
# of bench/gendata text, bench/progressloop (a tight LCG loop, one counted
# back edge per iteration, BENCH_LOOP_N iterations), python3 summing
# squares in a loop and, when installed, node doing the same. The first
# run of each case is thrown away (the back edges' cache is filled
# there). No timing is asserted. The backend is hvrun's default (set
# HVRUN_BACKEND=ptrace where there is no /dev/kvm).
#
# BENCH_PROGRESS_REPS (default 5), BENCH_BZ_MB (6), BENCH_LOOP_N
# (1000000000), BENCH_PY_N (3000000).
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
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# Under build/, not /tmp: the guest's /tmp is private.
WORK=$(mktemp -d "$ROOT/build/bench-progress.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cc -O2 -o "$WORK/progressloop" "$ROOT/bench/progressloop.c"
cc -O2 -o "$WORK/gendata" "$ROOT/bench/gendata.c"
"$WORK/gendata" $((BZ_MB * 1024 * 1024)) >"$WORK/data.txt"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# one MODE CASE: a run's wall time in ms (MODE native, none or software).
one() {
    local mode=$1 t0 t1
    shift
    local pre=()
    [ "$mode" != native ] && pre=("$HVRUN" run --progress "$mode" --)
    t0=$(now_ms)
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
    esac
    t1=$(now_ms)
    echo $((t1 - t0))
}

median() { sort -n | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

cases=(bzip2 loop python3)
command -v node >/dev/null && cases+=(node)
echo "| case | native ms | --progress none ms | --progress software ms | software/none |"
echo "| --- | ---: | ---: | ---: | ---: |"
for c in "${cases[@]}"; do
    one software "$c" >/dev/null # fills the back edges' cache
    : >"$WORK/native" ; : >"$WORK/none" ; : >"$WORK/software"
    for r in $(seq 1 "$REPS"); do
        echo "bench: $c $r/$REPS" >&2
        if [ $((r % 2)) = 1 ]; then order=(native none software)
        else order=(software none native); fi
        for m in "${order[@]}"; do one "$m" "$c" >>"$WORK/$m"; done
    done
    n=$(median <"$WORK/native")
    a=$(median <"$WORK/none")
    b=$(median <"$WORK/software")
    echo "| $c | $n | $a | $b | $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2fx", b / a}') |"
done
