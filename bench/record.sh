#!/usr/bin/env bash
# bench/record.sh HVRUN: what recording costs (issue 11). For each row,
# `hvrun run`, `hvrun record -o FILE` and `hvrun replay FILE` side by side,
# REPS times interleaved, the median wall time of each and the ratios to
# run; then the recording's size (the copies of the files the run read
# included: ld.so, libc, python's modules) and its events (detlog events,
# about one per syscall); below the table, what a million more events add
# (dd at two counts). No timing is asserted.
#
# BENCH_REPS (default 5), BENCH_DD_COUNT (20000).
# Output: a markdown table on stdout, progress on stderr.
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: bench/record.sh HVRUN" >&2
    exit 2
fi
HVRUN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
[ -x "$HVRUN" ] || { echo "bench: $1 is not an executable hvrun" >&2; exit 2; }
REPS=${BENCH_REPS:-5}
DD_COUNT=${BENCH_DD_COUNT:-20000}
WORK=$(mktemp -d /var/tmp/hvrun-bench-record.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
seq 1 $((DD_COUNT / 4)) > nums.txt

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

# row NAME CMD...
row() {
    local name=$1
    shift
    local i t0 t1 run=() rec=() rep=()
    for ((i = 0; i < REPS; i++)); do
        echo "bench: $name $((i + 1))/$REPS" >&2
        t0=$(now); "$HVRUN" run -- "$@" > /dev/null 2>&1 || true; t1=$(now)
        run+=("$(echo "$t1 - $t0" | bc)")
        t0=$(now); "$HVRUN" record -o r.hvrec -- "$@" > /dev/null 2>&1 || true; t1=$(now)
        rec+=("$(echo "$t1 - $t0" | bc)")
        t0=$(now); "$HVRUN" replay r.hvrec > /dev/null 2>&1 || true; t1=$(now)
        rep+=("$(echo "$t1 - $t0" | bc)")
    done
    local mr mc mp size events
    mr=$(printf '%s\n' "${run[@]}" | median)
    mc=$(printf '%s\n' "${rec[@]}" | median)
    mp=$(printf '%s\n' "${rep[@]}" | median)
    size=$(stat -c %s r.hvrec)
    events=$("$HVRUN" replay r.hvrec 2>&1 > /dev/null |
        sed -n 's/.*identical to the recording (\([0-9]*\) events.*/\1/p')
    printf '| %s | %.3f s | %.3f s (%.2fx) | %.3f s (%.2fx) | %d KiB | %s |\n' \
        "$name" "$mr" "$mc" "$(echo "$mc / $mr" | bc -l)" "$mp" \
        "$(echo "$mp / $mr" | bc -l)" "$((size / 1024))" "${events:-?}"
}

# The size of a recording of dd bs=1 with COUNT reads: bytes and events.
dd_size() {
    "$HVRUN" record -o d.hvrec -- dd if=nums.txt of=/dev/null bs=1 \
        count="$1" > /dev/null 2>&1
    echo "$(stat -c %s d.hvrec) $("$HVRUN" replay d.hvrec 2>&1 > /dev/null |
        sed -n 's/.*identical to the recording (\([0-9]*\) events.*/\1/p')"
}

echo "| command | run | record | replay | recording | events |"
echo "|---|---|---|---|---|---|"
row "dd bs=1 count=$DD_COUNT" dd if=nums.txt of=/dev/null bs=1 count="$DD_COUNT"
row "python3 -c pass" /usr/bin/python3 -c pass
row "seq | grep | sort | head" sh -c 'seq 1 100000 | grep 7 | sort -r | head'
read -r s1 e1 < <(dd_size "$((DD_COUNT / 2))")
read -r s2 e2 < <(dd_size "$DD_COUNT")
echo
echo "A million more events (dd bs=1, $((DD_COUNT / 2)) vs $DD_COUNT reads) add" \
    "$(( (s2 - s1) * 1000000 / (e2 - e1) / 1024 )) KiB to a recording."
