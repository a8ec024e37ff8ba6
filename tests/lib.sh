# tests/lib.sh - what every test runner here shares: PASS/FAIL/SKIP lines,
# the closing "N passed, N failed[, N skipped]" line and exit status, and
# trimming of table fields. Sourced by run-guest-tests.sh,
# determinism/run.sh and processes/run.sh.
# shellcheck shell=bash

n_pass=0
n_fail=0
n_skip=0
pass() { echo "PASS $1"; n_pass=$((n_pass + 1)); }
fail() { echo "FAIL $1: $2"; n_fail=$((n_fail + 1)); }
skip() { echo "SKIP $1: $2"; n_skip=$((n_skip + 1)); }
# The end of a failed run's stderr, indented under its FAIL line: a run
# stopped by the timeout lists there what each guest thread waited on.
show_tail() { [ -s "$1" ] && tail -n "${2:-40}" "$1" | cut -c1-300 | sed 's/^/    | /'; true; }

finish() {
    if [ "$n_skip" -gt 0 ]; then
        echo "$n_pass passed, $n_fail failed, $n_skip skipped"
    else
        echo "$n_pass passed, $n_fail failed"
    fi
    [ "$n_fail" -eq 0 ]
    exit $?
}

# needs_kvm HVRUN: whether runs of HVRUN need /dev/kvm: not under
# HVRUN_BACKEND=ptrace (hvrun's default backend then; the Makefile sets it
# on a host without /dev/kvm, a VM guest without nested virtualisation)
# nor through the ptrace wrapper (tests/parity/hvrun-ptrace): the ptrace
# backend needs no virtualisation.
needs_kvm() {
    [ "${HVRUN_BACKEND:-}" = ptrace ] && return 1
    case $1 in
    */hvrun-ptrace) return 1 ;;
    esac
    return 0
}

# have_kvm: whether a case that names --backend kvm itself can run.
have_kvm() { [ -e "${HVRUN_TEST_KVM_DEV:-/dev/kvm}" ]; }

trim() {
    local s=$1
    s=${s#"${s%%[![:space:]]*}"}
    s=${s%"${s##*[![:space:]]}"}
    printf '%s' "$s"
}
