#!/usr/bin/env bash
# tests/runners/run.sh HVRUN [HVRUN...]
#
# hvrun under the test runners people use (docs/TEST-RUNNERS.md), and
# `hvrun run --repeat N` / `--report FILE`. Each sample project here has a
# plain test, a thread race (common/race.c and its kin in each language)
# and a time-dependent assertion (common/timing.c and kin); natively the
# last two fail now and then, under hvrun they pass every run. For each
# runner (ctest, meson, pytest, go test -exec, cargo's runner, make check;
# bazel --run_under is documented only: counted SKIP, below):
#   RUNNER/native     the suite natively 10 times: how often it failed
#                     (printed with the result; native luck decides, so
#                     not asserted); measured with the first HVRUN only
#                     (no hvrun takes part), the count repeated for the
#                     others
#   RUNNER/hvrun      the suite under hvrun 10 times: every run passes
#                     and the runner says every test ran
#   RUNNER/failure    with SAMPLE_FAIL set the plain test fails: the
#                     runner under hvrun fails too (exit status not 0)
# and, with the first HVRUN only:
#   repeat/same       --repeat 5 of a program printing virtualised values:
#                     every run the same, exit 0, one line saying so
#   repeat/differs    --repeat 3 under --no-virtualize-random: exit 120,
#                     each differing run named
#   repeat/chaos      --repeat 4 --chaos of race_print --interleaving: the
#                     runs differ (other schedules), each named with its
#                     seed; race_print's sorted output: all the same
#   repeat/files      --repeat 3 of a program appending a line to a file:
#                     afterwards the file has one line more (each run
#                     starts from the files as they were; the last run's
#                     changes stay)
#   repeat/jobs       --repeat 4 -j 2 (runs side by side, each on a CPU
#                     of its own): stdout and stderr byte-identical to
#                     -j 1's, for --chaos --seed 1 (runs that differ, named
#                     in run order) and for a program that prints the CPU
#                     it reads (CPUID's APIC id, sched_getcpu); and
#                     --repeat 3 -j 3 of the file-appending program:
#                     exit 0 or 120 (each may see the others' lines), a
#                     line saying the runs changed files side by side
#   report/json, report/junit  --report FILE: valid JSON / JUnit XML with
#                     one entry per run and the differing ones marked
#   pytest/verify     `hvrun run --verify -- python3 -m pytest`
# Prints PASS/FAIL/SKIP per case and "N passed, N failed[, N skipped]".
# HVRUN_RUNNER_ONLY=repeat runs only the --repeat/--report cases.
set -u

if [ $# -lt 1 ]; then
    echo "usage: $0 HVRUN [HVRUN...]" >&2
    exit 2
fi
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
KVM_DEV=${HVRUN_TEST_KVM_DEV:-/dev/kvm}
TIMEOUT=${HVRUN_TEST_TIMEOUT:-300}
REPS=${HVRUN_RUNNER_REPS:-10}
# shellcheck source=../lib.sh
. "$ROOT/tests/lib.sh"

WORK=$(mktemp -d /var/tmp/hvrun-runner-tests.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
PY=/usr/bin/python3
export GOCACHE=$WORK/gocache GOFLAGS=-mod=mod GOPATH=$WORK/gopath
export CARGO_HOME=$WORK/cargo-home
CARGO=/usr/bin/cargo # Debian's (no registry needed: no dependencies)

# A fresh copy of the sample projects for each hvrun binary.
copy_samples() {
    rm -rf "$WORK/s" && mkdir -p "$WORK/s"
    cp -r "$ROOT/tests/runners/"{common,ctest,meson,pytest,go,cargo,make} "$WORK/s/"
}

# One runner invocation per mode. $1: native|hvrun; the suite's exit
# status; its output in $WORK/out.
suite_ctest() {
    local emu="" d=$WORK/s/ctest/build-$1
    [ "$1" = hvrun ] && emu="-DCMAKE_CROSSCOMPILING_EMULATOR=$HV;run;--"
    if [ ! -d "$d" ]; then
        cmake -S "$WORK/s/ctest" -B "$d" "$emu" > "$WORK/build.log" 2>&1 &&
            cmake --build "$d" >> "$WORK/build.log" 2>&1 || return 99
    fi
    (cd "$d" && ctest --output-on-failure -V > "$WORK/out" 2>&1)
}
ran_ctest() { grep -q 'tests passed, 0 tests failed out of 3' "$WORK/out" && grep -q 'hello: ok' "$WORK/out"; }

suite_meson() {
    local d=$WORK/s/meson/build
    if [ ! -d "$d" ]; then
        (cd "$WORK/s/meson" && meson setup build > "$WORK/build.log" 2>&1) || return 99
    fi
    if [ "$1" = hvrun ]; then
        meson test -C "$d" --print-errorlogs --wrapper "$HV run --" > "$WORK/out" 2>&1
    else
        meson test -C "$d" --print-errorlogs > "$WORK/out" 2>&1
    fi
}
ran_meson() { grep -Eq '^Ok: +3' "$WORK/out"; }

suite_pytest() {
    local pre=()
    [ "$1" = hvrun ] && pre=("$HV" run --)
    (cd "$WORK/s/pytest" && timeout -k 5 "$TIMEOUT" "${pre[@]}" "$PY" -m pytest -v \
        -p no:cacheprovider > "$WORK/out" 2>&1)
}
ran_pytest() { grep -q '3 passed' "$WORK/out"; }

suite_go() {
    local ex=()
    [ "$1" = hvrun ] && ex=(-exec "$HV run --")
    (cd "$WORK/s/go" && go test -count=1 -v "${ex[@]}" . > "$WORK/out" 2>&1)
}
ran_go() { grep -q -- '--- PASS: TestLostUpdate' "$WORK/out" && grep -q '^ok' "$WORK/out"; }

suite_cargo() {
    local r=()
    [ "$1" = hvrun ] && r=(env "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=$HV run --")
    (cd "$WORK/s/cargo" && "${r[@]}" "$CARGO" test --offline --test sample > "$WORK/out" 2>&1)
}
ran_cargo() { grep -q 'test result: ok. 3 passed' "$WORK/out"; }

suite_make() {
    local lc=""
    [ "$1" = hvrun ] && lc="$HV run --"
    make -s -C "$WORK/s/make" check LOG_COMPILER="$lc" > "$WORK/out" 2>&1
}
ran_make() { grep -q '^# FAIL: 0' "$WORK/out" && grep -q 'hello: ok' "$WORK/s/make/hello.log"; }

# Why a runner cannot run here, or nothing.
missing() {
    case $1 in
    ctest) type -P cmake > /dev/null || echo "cmake is not installed" ;;
    meson) type -P meson > /dev/null || echo "meson is not installed" ;;
    pytest) "$PY" -c 'import pytest' 2> /dev/null || echo "python3-pytest is not installed" ;;
    go) type -P go > /dev/null || echo "golang-go is not installed" ;;
    cargo) [ -x "$CARGO" ] || echo "Debian's cargo is not installed" ;;
    make) type -P make > /dev/null || echo "make is not installed" ;;
    esac
}

# RUNNER -> how many of its REPS native runs failed (measured once).
declare -A NATIVE_FAILS=()

runner_cases() {
    local r=$1 i st nfail=0 bad=""
    local why
    why=$(missing "$r")
    if [ -n "$why" ]; then
        skip "$L:$r" "$why"
        return
    fi
    if [ -n "${NATIVE_FAILS[$r]:-}" ]; then
        pass "$L:$r/native (failed ${NATIVE_FAILS[$r]} of $REPS runs natively, counted with the first binary)"
    else
        "suite_$r" native
        st=$?
        if [ "$st" = 99 ]; then
            fail "$L:$r" "the sample project did not build: $(tail -n 3 "$WORK/build.log" | tr '\n' ' ' | cut -c1-300)"
            return
        fi
        [ "$st" = 0 ] || nfail=1
        for i in $(seq 2 "$REPS"); do
            "suite_$r" native || nfail=$((nfail + 1))
        done
        NATIVE_FAILS[$r]=$nfail
        pass "$L:$r/native (failed $nfail of $REPS runs natively)"
    fi
    for i in $(seq 1 "$REPS"); do
        "suite_$r" hvrun
        st=$?
        if [ "$st" != 0 ] || ! "ran_$r"; then
            bad="run $i exit $st: $(grep -Eai 'fail|error|hvrun' "$WORK/out" | head -n 4 | tr '\n' ' ' | cut -c1-300)"
            break
        fi
    done
    if [ -z "$bad" ]; then
        pass "$L:$r/hvrun ($REPS of $REPS runs passed)"
    else
        fail "$L:$r/hvrun" "$bad"
    fi
    SAMPLE_FAIL=1 "suite_$r" hvrun
    st=$?
    if [ "$st" != 0 ] && grep -q 'failing as asked\|hello.*FAIL\|FAIL.*hello\|hello .*Failed' "$WORK/out" "$WORK/s/make/hello.log" 2> /dev/null; then
        pass "$L:$r/failure (exit $st)"
    else
        fail "$L:$r/failure" "SAMPLE_FAIL=1: exit $st: $(head -c 300 "$WORK/out")"
    fi
}

# ---- --repeat and --report ---------------------------------------------------------

hv() { (cd "$WORK" && timeout -k 5 "$TIMEOUT" "$HV" "$@"); }

# repeat/jobs: -j J changes when the runs run, never what is reported.
repeat_jobs_cases() {
    local g=$ROOT/build/guest st1 st2 bad=""
    for args in "--chaos --seed 1 -- $g/race_print --interleaving" \
        "-- $g/cpu_number --values"; do
        # shellcheck disable=SC2086 # args are words
        hv run --repeat 4 $args > "$WORK/j1.out" 2> "$WORK/j1.err"
        st1=$?
        # shellcheck disable=SC2086
        hv run --repeat 4 -j 2 $args > "$WORK/j2.out" 2> "$WORK/j2.err"
        st2=$?
        if { [ "$st1" != 0 ] && [ "$st1" != 120 ]; } || [ "$st1" != "$st2" ] || ! cmp -s "$WORK/j1.out" "$WORK/j2.out" ||
            ! cmp -s "$WORK/j1.err" "$WORK/j2.err" || [ ! -s "$WORK/j1.err" ]; then
            bad="${args%% -- *}: -j 1 exit $st1, -j 2 exit $st2; $(diff "$WORK/j1.err" "$WORK/j2.err" | head -c 300)"
            break
        fi
    done
    mkdir -p "$WORK/fj" && echo first > "$WORK/fj/log.txt"
    (cd "$WORK/fj" && timeout -k 5 "$TIMEOUT" "$HV" run --repeat 3 -j 3 -- sh -c 'echo run >> log.txt; wc -l < log.txt' > out 2> err)
    st1=$?
    if [ -z "$bad" ] && { { [ "$st1" != 0 ] && [ "$st1" != 120 ]; } || [ ! -s "$WORK/fj/log.txt" ] ||
        ! grep -q '^hvrun: repeat: runs 1-3 changed files while they ran side by side (-j 3)' "$WORK/fj/err"; }; then
        bad="-j 3 appending: exit $st1, log.txt has $(wc -l < "$WORK/fj/log.txt") lines; $(head -c 300 "$WORK/fj/err")"
    fi
    if [ -z "$bad" ]; then pass "$L:repeat/jobs"; else fail "$L:repeat/jobs" "$bad"; fi
}

repeat_cases() {
    local st g=$ROOT/build/guest
    hv run --repeat 5 -- sh -c 'echo $$; od -An -N4 -tx1 /dev/urandom; date +%s.%N' > "$WORK/r.out" 2> "$WORK/r.err"
    st=$?
    if [ "$st" = 0 ] && grep -q '^hvrun: repeat: all 5 runs gave the same bytes' "$WORK/r.err" &&
        [ "$(wc -l < "$WORK/r.out")" = 3 ]; then
        pass "$L:repeat/same"
    else
        fail "$L:repeat/same" "exit $st: $(head -c 300 "$WORK/r.err")"
    fi
    hv run --repeat 3 --no-virtualize-random --report "$WORK/d.json" -- od -An -N8 -tx1 /dev/urandom > /dev/null 2> "$WORK/d.err"
    st=$?
    if [ "$st" = 120 ] && grep -q '^hvrun: repeat: run 2 differs from run 1 in: stdout' "$WORK/d.err" &&
        grep -q '^hvrun: repeat: 2 of 3 runs differ from run 1' "$WORK/d.err"; then
        pass "$L:repeat/differs"
    else
        fail "$L:repeat/differs" "exit $st: $(head -c 300 "$WORK/d.err")"
    fi
    hv run --repeat 4 --chaos --seed 1 --report "$WORK/c.xml" -- "$g/race_print" --interleaving > /dev/null 2> "$WORK/c.err"
    st=$?
    hv run --repeat 4 --chaos --seed 1 -- "$g/race_print" > /dev/null 2> "$WORK/c2.err"
    local st2=$?
    if [ "$st" = 120 ] && grep -q 'run [234] (--chaos seed [234]) differs from run 1 in: stdout' "$WORK/c.err" &&
        [ "$st2" = 0 ] && grep -q 'all 4 runs gave the same bytes.*--chaos seeds 1-4' "$WORK/c2.err"; then
        pass "$L:repeat/chaos"
    else
        fail "$L:repeat/chaos" "exit $st/$st2: $(head -c 200 "$WORK/c.err") $(head -c 200 "$WORK/c2.err")"
    fi
    mkdir -p "$WORK/f" && echo first > "$WORK/f/log.txt"
    (cd "$WORK/f" && timeout -k 5 "$TIMEOUT" "$HV" run --repeat 3 -- sh -c 'echo run >> log.txt; wc -l < log.txt' > out 2> err)
    st=$?
    if [ "$st" = 0 ] && [ "$(cat "$WORK/f/out")" = 2 ] && [ "$(wc -l < "$WORK/f/log.txt")" = 2 ]; then
        pass "$L:repeat/files"
    else
        fail "$L:repeat/files" "exit $st, printed '$(cat "$WORK/f/out")', log.txt has $(wc -l < "$WORK/f/log.txt") lines"
    fi
    repeat_jobs_cases
    if "$PY" - "$WORK/d.json" << 'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["mode"] == "repeat" and r["runs"] == 3 and len(r["results"]) == 3, r
assert r["deterministic"] is False and r["differing_runs"] == 2, r
assert r["results"][0]["same_as_run_1"] and not r["results"][1]["same_as_run_1"], r
assert "stdout" in r["results"][1]["differs_in"], r
EOF
    then
        pass "$L:report/json"
    else
        fail "$L:report/json" "$(head -c 300 "$WORK/d.json")"
    fi
    if "$PY" - "$WORK/c.xml" << 'EOF'
import sys, xml.etree.ElementTree as E
s = E.parse(sys.argv[1]).getroot()
assert s.tag == "testsuite" and s.get("tests") == "4", s.attrib
cases = s.findall("testcase")
assert len(cases) == 4 and "seed 1" in cases[0].get("name"), [c.attrib for c in cases]
assert int(s.get("failures")) == sum(1 for c in cases if c.find("failure") is not None) >= 1
EOF
    then
        pass "$L:report/junit"
    else
        fail "$L:report/junit" "$(head -c 300 "$WORK/c.xml")"
    fi
    if [ -z "$(missing pytest)" ]; then
        (cd "$WORK/s/pytest" && timeout -k 5 "$TIMEOUT" "$HV" run --verify -- "$PY" -m pytest -q \
            -p no:cacheprovider > "$WORK/v.out" 2> "$WORK/v.err")
        st=$?
        if [ "$st" = 0 ] && grep -q '3 passed' "$WORK/v.out" &&
            grep -q '^hvrun: verify: deterministic' "$WORK/v.err"; then
            pass "$L:pytest/verify"
        else
            fail "$L:pytest/verify" "exit $st: $(tail -c 300 "$WORK/v.err")"
        fi
    fi
}

first=1
for hvarg in "$@"; do
    L=$hvarg
    case $hvarg in
    /*) HV=$hvarg ;;
    *) HV=$PWD/$hvarg ;;
    esac
    if [ ! -e "$KVM_DEV" ] && needs_kvm "$HV"; then
        skip "$L:runners" "no $KVM_DEV on this host"
        continue
    fi
    if [ "${HVRUN_RUNNER_ONLY:-}" = repeat ]; then
        copy_samples
        [ "$first" = 1 ] && repeat_cases
        first=0
        continue
    fi
    copy_samples
    for r in ctest meson pytest go cargo make; do
        runner_cases "$r"
    done
    # tests/runners/bazel is the project docs/TEST-RUNNERS.md shows; Debian's
    # bazel-bootstrap (4.2.3) fetches rules_cc from the network for any
    # cc_test, and no machine here has the network.
    skip "$L:bazel" "Debian's bazel-bootstrap needs rules_cc from the network for cc_test (none here); documented only"
    [ "$first" = 1 ] && repeat_cases
    first=0
done
finish
