#!/usr/bin/env bash
# tests/fuzz/run-syscalls.sh HVRUN SYSFUZZ SECONDS
#
# Runs the syscall fuzzer (tests/fuzz/sysfuzz.c) under HVRUN (the debug
# build: ASan/UBSan) seed after seed, each in a fresh scratch directory,
# for SECONDS. A finding is any run that does not exit 0 (hvrun's 125, a
# crash of hvrun, a timeout of the whole run), or whose stderr holds a
# sanitizer report; its stderr is kept in build/fuzz/findings/syscalls/
# seed-N.err and it is reproduced with
#   cd SCRATCH && HVRUN run -- SYSFUZZ N CHILDREN CALLS -v
# Environment: FUZZ_SEED (first seed, default: the time), FUZZ_CHILDREN
# (50), FUZZ_CALLS (40), FUZZ_RUN_TIMEOUT (300 s per run).
set -u
hvrun=$(realpath "$1")
prog=$(realpath "$2")
seconds=${3:-600}
root=$(cd "$(dirname "$0")/../.." && pwd)
findings=$root/build/fuzz/findings/syscalls
mkdir -p "$findings"
scratch=$(mktemp -d "$root/build/fuzz/sysfuzz-scratch.XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
seed=${FUZZ_SEED:-$(date +%s)}
children=${FUZZ_CHILDREN:-50}
calls=${FUZZ_CALLS:-40}
run_timeout=${FUZZ_RUN_TIMEOUT:-300}
end=$((SECONDS + seconds))
runs=0
found=0
echo "fuzz-syscalls: ${seconds}s from seed $seed ($children children x $calls calls per run)"
while [ $SECONDS -lt $end ]; do
    rm -rf "$scratch/run"
    mkdir -p "$scratch/run" && touch "$scratch/run/.sysfuzz-scratch"
    (cd "$scratch/run" && exec timeout -k 5 "$run_timeout" "$hvrun" run -- \
        "$prog" "$seed" "$children" "$calls" >../out 2>../err)
    st=$?
    runs=$((runs + 1))
    why=""
    [ $st -eq 0 ] || why="exit status $st"
    if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:|UndefinedBehaviorSanitizer' \
        "$scratch/err"; then
        why="${why:+$why, }sanitizer report"
    fi
    if [ -n "$why" ]; then
        found=$((found + 1))
        cp "$scratch/err" "$findings/seed-$seed.err"
        echo "FINDING seed $seed: $why: $(grep -v 'unsupported syscall' "$scratch/err" | grep -m1 -E 'ERROR|runtime error|hvrun' | cut -c1-200)"
    fi
    seed=$((seed + 1))
done
echo "fuzz-syscalls: $runs runs ($((runs * children)) children, $((runs * children * calls)) calls) in ${seconds}s, $found findings"
[ $found -eq 0 ]
