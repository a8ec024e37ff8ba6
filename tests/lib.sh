# tests/lib.sh - what every test runner here shares: PASS/FAIL/SKIP lines,
# the closing "N passed, N failed[, N skipped]" line and exit status, and
# trimming of table fields. Sourced by run-guest-tests.sh,
# determinism/run.sh and processes/run.sh.
# shellcheck shell=bash

n_pass=0
n_fail=0
n_skip=0
# In a case par_case runs beside others, each result is also tallied in
# PAR_TALLY (one letter a line), which the suite's own process adds up; in
# the suite's own process a result is printed after those of the cases
# started before it.
PAR_TALLY=""
pass() { par_tally P; echo "PASS $1"; n_pass=$((n_pass + 1)); }
# (a reason given in several arguments is printed whole)
fail() { par_tally F; echo "FAIL $1: ${*:2}"; n_fail=$((n_fail + 1)); }
skip() { par_tally S; echo "SKIP $1: $2"; n_skip=$((n_skip + 1)); }
par_tally() {
    if [ -n "$PAR_TALLY" ]; then
        echo "$1" >>"$PAR_TALLY"
    else
        par_drain
    fi
}
# The end of a failed run's stderr, indented under its FAIL line: a run
# stopped by the timeout lists there what each guest thread waited on.
show_tail() { [ -s "$1" ] && tail -n "${2:-40}" "$1" | cut -c1-300 | sed 's/^/    | /'; true; }

finish() {
    par_drain
    if [ -n "$PAR_DIR" ]; then rm -rf "$PAR_DIR"; fi
    echo "$(basename "$(dirname "$0")")/$(basename "$0"): ${SECONDS}s"
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

# trim_to VAR STRING: STRING without its leading and trailing white space,
# into VAR, without the subshell of $(trim ...).
trim_to() {
    local s=$2
    s=${s#"${s%%[![:space:]]*}"}
    s=${s%"${s##*[![:space:]]}"}
    printf -v "$1" '%s' "$s"
}

trim() {
    local s=$1
    s=${s#"${s%%[![:space:]]*}"}
    s=${s%"${s##*[![:space:]]}"}
    printf '%s' "$s"
}

# ---- cases side by side ------------------------------------------------------
#
# HVRUN_TEST_JOBS (default: the number of CPUs, at most 4): how many cases
# a suite runs at once. `par_case FN ARGS...` runs one case in a
# subshell beside others, its output (stdout and stderr) kept in a file;
# the outputs are printed whole, in the order the cases were started, and
# the PASS/FAIL/SKIP counts come from each case's tally, so they and the
# exit status are exact. A case run so must change no variable a later
# case reads (it runs in a subshell) and share no name, port or file
# with another case. `par_serial FN ARGS...` runs a case alone: once every
# case before it has ended, with nothing beside it (cases that measure
# time or load, or hold the terminal). HVRUN_TEST_JOBS=1 runs every case
# in the suite's own process, one after the other, as before.
PAR_JOBS=${HVRUN_TEST_JOBS:-}
if [ -z "$PAR_JOBS" ]; then
    PAR_JOBS=$(nproc 2>/dev/null || echo 1)
    [ "$PAR_JOBS" -le 4 ] 2>/dev/null || PAR_JOBS=4
fi
[ "$PAR_JOBS" -ge 1 ] 2>/dev/null || PAR_JOBS=1
PAR_DIR=""
PAR_SEQ=0
PAR_NEXT=1
declare -A PAR_PID_SEQ=()
declare -A PAR_DONE=()

# Guest programs that run alone, with no other case beside them (natively
# and under hvrun): those that read clocks or the TSC, wait on timers or
# time-outs, race threads or processes on purpose, spin, hold a pty or the
# terminal's job control, use limits per user (pending signals, the key
# rings) or fill their fd table or memory up to a limit, so that another
# case's load or use cannot change what they see (fd_emfile_fork: one
# serial clean-run's chaos --verify of it differed at an EMFILE, with
# another tree's run of it beside). Every other case may run beside one
# (HVRUN_TEST_JOBS). Used by run-guest-tests.sh and the chaos runs of
# every program in determinism/run.sh.
GUEST_SERIAL_PROGRAMS="adjtime_query alarm_busy_child alarm_spin clock_settime_eperm
cpu_number cpuid_inline cputime_sleep ctty det_sources displaced_turn
dnotify_lease dontneed_text_tsc text_write_tsc fd_emfile_fork fd_fork_many fd_kinds_exit
fork_thousand
futex_pi futex_restart futex_waitv host_calls interval_spin job_control keys
lock_pingpong lost_update many_mappings mem_limit mm_advice mqueue
no_host_block order_violation partial_signal pause_signal_storm
pid_time_edges poll_nothing ppoll_mask ppoll_pending pty_epoll pty_inflight
pty_lock race_print rdtsc_deltas rdtsc_fast rt_queue session_first sigio_async
sig_wait sigchld_sleep sigpending_limit sleeper_vs_writer spin_wait
timerfd_test timers timerslack trap_spin_wait tsc_prctl tsc_wake vfork_chain_signal vfork_share
vvar wait_nothing wake_clock wake_spinner watchdog_compute"
# As one line, for " NAME " matches.
GUEST_SERIAL_PROGRAMS=" ${GUEST_SERIAL_PROGRAMS//$'\n'/ } "

# Guest programs whose run is long on a host by design, given
# HVRUN_TEST_LONG_TIMEOUT (default 600 s) instead of a suite's limit per
# run: fork_thousand holds 1000 processes alive, and under kvm each one is
# a VM in hvrun's own address space, so each KVM_CREATE_VM takes every
# lock of hvrun's ~47 host mappings per live process (the mmu notifier's
# registration) and each host mapping change calls every live VM's
# notifier: quadratic in live VMs, 19 s (release) and 56 s (debug) alone
# on a 2-core kvm_pvm host, over 120 s beside another run (ptrace: 1.5 s;
# docs/PERFORMANCE.md, "Many VMs alive at once"). Under kvm the guest
# suite runs them with its first hvrun (the release build) only, a counted
# SKIP for the others: the debug build's run there took 80-140 s of make
# test for what its sanitizers check in the same code under ptrace, where
# make test runs them with both builds.
GUEST_LONG_PROGRAMS=" fork_thousand "
LONG_TIMEOUT=${HVRUN_TEST_LONG_TIMEOUT:-600}

# time_limit_for NAME DEFAULT: the limit per run for guest program NAME.
time_limit_for() {
    if [[ $GUEST_LONG_PROGRAMS == *" $1 "* ]] && [ "$LONG_TIMEOUT" -gt "$2" ]; then
        echo "$LONG_TIMEOUT"
    else
        echo "$2"
    fi
}

# HVRUN_TEST_TIMES=FILE: each case's wall time is appended to FILE
# ("seconds<TAB>script<TAB>case and arguments"), to find the slow ones.
case_timed() {
    if [ -z "${HVRUN_TEST_TIMES:-}" ]; then
        "$@"
        return
    fi
    local t0=${EPOCHREALTIME/./} rc=0 t1
    "$@" || rc=$?
    t1=${EPOCHREALTIME/./}
    printf '%d.%02d\t%s\t%s\n' $(((t1 - t0) / 1000000)) $(((t1 - t0) / 10000 % 100)) \
        "$0" "$*" >>"$HVRUN_TEST_TIMES"
    return $rc
}

par_case() {
    if [ "$PAR_JOBS" -le 1 ]; then
        case_timed "$@"
        return
    fi
    if [ -z "$PAR_DIR" ]; then
        PAR_DIR=$(mktemp -d "${TMPDIR:-/tmp}/hvrun-par.XXXXXX") || {
            "$@"
            return
        }
    fi
    while [ "${#PAR_PID_SEQ[@]}" -ge "$PAR_JOBS" ]; do par_reap; done
    PAR_SEQ=$((PAR_SEQ + 1))
    local seq=$PAR_SEQ
    (
        PAR_TALLY=$PAR_DIR/$seq.tally
        : >"$PAR_TALLY"
        # A case that itself calls par_case runs those in turn, inside it.
        PAR_JOBS=1
        PAR_PID_SEQ=()
        case_timed "$@"
    ) >"$PAR_DIR/$seq.out" 2>&1 </dev/null &
    PAR_PID_SEQ[$!]=$seq
}

par_serial() {
    par_drain
    case_timed "$@"
}

# Waits for one running case to end, then prints what is ready in order.
par_reap() {
    local pid=""
    [ "${#PAR_PID_SEQ[@]}" -gt 0 ] || return 0
    wait -n -p pid "${!PAR_PID_SEQ[@]}"
    if [ -z "$pid" ] || [ -z "${PAR_PID_SEQ[$pid]:-}" ]; then
        return 0
    fi
    PAR_DONE[${PAR_PID_SEQ[$pid]}]=1
    unset "PAR_PID_SEQ[$pid]"
    par_flush
}

# Builtins only (mapfile, printf), no cat or rm: a process per case here,
# in the suite's own shell, cost ~10 s of a suite's wall time; the files
# go with PAR_DIR at the end.
par_flush() {
    local -a lines tally
    local t
    while [ -n "${PAR_DONE[$PAR_NEXT]:-}" ]; do
        mapfile -t lines <"$PAR_DIR/$PAR_NEXT.out"
        [ "${#lines[@]}" -eq 0 ] || printf '%s\n' "${lines[@]}"
        mapfile -t tally <"$PAR_DIR/$PAR_NEXT.tally"
        for t in "${tally[@]}"; do
            case $t in
            P) n_pass=$((n_pass + 1)) ;;
            F) n_fail=$((n_fail + 1)) ;;
            S) n_skip=$((n_skip + 1)) ;;
            esac
        done
        unset "PAR_DONE[$PAR_NEXT]"
        PAR_NEXT=$((PAR_NEXT + 1))
    done
}

# Waits for every running case and prints the rest.
par_drain() {
    while [ "${#PAR_PID_SEQ[@]}" -gt 0 ]; do par_reap; done
}
