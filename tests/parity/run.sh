#!/usr/bin/env bash
# tests/parity/run.sh HVRUN
#
# Two mechanisms, one policy: every command of the table below runs under
# `HVRUN run --backend kvm` and `HVRUN run --backend ptrace`, and their
# stdout, stderr and exit status must be the same bytes (virtualised values
# included: time, urandom, pids, inodes, addresses, /proc/self/maps). A
# difference fails the case and shows both sides, unless the backends'
# CPUIDs differ on this host (doctor: "CPUID control: no") and both runs
# with --cpuid-rewrite are the same bytes (same_with_model: counted
# progress, so logical time, follows the code CPUID picks). Then:
#   verify/*   `--backend ptrace --verify` passes on every case (two runs
#              of the program agree on every event);
#   exitkill   SIGKILL of a ptrace hvrun in the middle of a process tree
#              leaves none of its stubs (PTRACE_O_EXITKILL) nor their
#              spawner;
#   stop-computing  SIGTERM ends a ptrace run whose guest only computes.
# Prints PASS/FAIL/SKIP per case and "N passed, N failed[, N skipped]"
# (tests/lib.sh). Without /dev/kvm the comparisons are skipped with that
# reason; the ptrace-only cases still run.
#
# Environment: HVRUN_PARITY_TIMEOUT (seconds per run, default 120),
# HVRUN_TEST_KVM_DEV (default /dev/kvm).
set -u

if [ $# -ne 1 ]; then
    echo "usage: $0 HVRUN" >&2
    exit 2
fi
case $1 in
/*) HVRUN=$1 ;;
*) HVRUN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") ;;
esac
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
G=$ROOT/build/guest
TIMEOUT=${HVRUN_PARITY_TIMEOUT:-120}
KVM_DEV=${HVRUN_TEST_KVM_DEV:-/dev/kvm}
# shellcheck source=../lib.sh
. "$ROOT/tests/lib.sh"

WORK=$(mktemp -d /tmp/hvrun-parity.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/fix"
printf 'b\na\nc\na\n' > "$WORK/fix/lines.txt"
seq 1 5000 > "$WORK/fix/nums.txt"

# Programs of this directory's own, built for the run.
cc -O1 -o "$WORK/int80" "$ROOT/tests/parity/int80.c"
cc -O1 -o "$WORK/errnos" "$ROOT/tests/parity/errnos.c"
cc -O1 -o "$WORK/vsyscall" "$ROOT/tests/parity/vsyscall.c"

# One case per line: name | command (split like a shell word list). The
# commands run in $WORK/fix with stdin from /dev/null.
CASES=$(cat <<EOF
hello_static      | $G/hello_static
hello_pie         | $G/hello_pie
hello_nopie       | $G/hello_nopie
echo              | echo hello parity
true              | true
false             | false
sh-pipe           | sh -c 'echo a | cat'
sh-tree           | sh -c '(echo 1; (echo 2; echo 3) | cat) | sort -r; echo done'
sh-200-true       | sh -c 'i=0; while [ \$i -lt 200 ]; do sh -c true; i=\$((i+1)); done; echo \$i'
python-print      | python3 -c 'print(1)'
python-values     | python3 -c 'import os, time, random; print(os.getpid(), time.time(), os.urandom(8).hex(), random.random(), id(object()))'
python-threads    | python3 -c 'import threading; out=[]; ts=[threading.Thread(target=lambda i=i: out.append(i)) for i in range(8)]; [t.start() for t in ts]; [t.join() for t in ts]; print(out)'
python-fork       | python3 -c 'import os; pids=[os.fork() or os._exit(7) for _ in range(3)]; print(sorted(os.waitpid(p, 0)[1] >> 8 for p in pids), len(set(pids)))'
ls-la-etc         | ls -la /etc
ls-lai            | ls -lai .
stat              | stat lines.txt
maps              | cat /proc/self/maps
date              | date
sort-uniq         | sh -c 'sort lines.txt | uniq -c'
wc                | wc nums.txt
sha256            | sha256sum nums.txt
dd-bs1            | dd if=nums.txt of=/dev/null bs=1 count=5000
gzip-pipe         | sh -c 'gzip -c nums.txt | gzip -dc | tail -n 2'
awk               | awk 'BEGIN { srand(); print rand() }'
urandom           | od -An -tx1 -N16 /dev/urandom
proc_tree         | $G/proc_tree
thread_signals    | $G/thread_signals
lock_pingpong     | $G/lock_pingpong
segv_handler      | $G/segv_handler
sig_default       | $G/sig_default
badptr            | $G/badptr
fpu_signal        | $G/fpu_signal
exitcode-42       | $G/exitcode 42
det_sources       | $G/det_sources
shm_fork          | $G/shm_fork
vfork_share       | $G/vfork_share
keys              | $G/keys
keyctl-serials    | sh -c 'keyctl new_session; keyctl add user k v @s; keyctl show @s; cat /proc/keys /proc/key-users'
python-spawn      | python3 -c 'import os, subprocess; print(subprocess.run(["sh", "-c", "echo hi | tr a-z A-Z"], capture_output=True).stdout); print(os.waitpid(os.posix_spawn("/bin/true", ["true"], {}), 0)[1])'
mm_ranges         | $G/mm_ranges
mremap_edges      | $G/mremap_edges
madvise_edges     | $G/madvise_edges
mm_advice         | $G/mm_advice
mm_file_edges     | $G/mm_file_edges
mm_32bit          | $G/mm_32bit
mm_lock_limits    | $G/mm_lock_limits
vvar              | $G/vvar
futex_fault       | $G/futex_fault
timers            | $G/timers
sig_wait          | $G/sig_wait
epoll_test        | $G/epoll_test
user_port_io      | $G/user_port_io
tsc_wake          | $G/tsc_wake
wake_clock        | $G/wake_clock
rdtsc_deltas      | $G/rdtsc_deltas print
rdtsc_fast        | $G/rdtsc_fast --print-tsc
int80             | $WORK/int80
errnos            | $WORK/errnos
vsyscall          | $WORK/vsyscall
gcc-hello         | sh -c 'printf "int main(void){return 3;}\\n" > h.c && gcc -o h h.c && ./h; echo \$?'
EOF
)

# Cases whose results differ by the host's hypervisor, not by hvrun: run,
# and reported as SKIP with the reason when they differ.
#   int80: kvm_pvm turns INT 0x80 into #UD (SIGILL); a VMX/SVM vCPU gives
#   #NP for the absent gate and ptrace's stub #GP: SIGSEGV SI_KERNEL both.
#   python-values: where the backends' CPUIDs differ (det_sources' cpuid_
#   lines; doctor: "CPUID control: no"), ld.so's search of the legacy
#   platform subdirectories (AT_PLATFORM from CPUID) makes a different
#   number of calls, and so logical time reads differently.
known_difference() {
    case $1 in
    int80) [ -e /sys/module/kvm_pvm ] &&
        echo "kvm_pvm gives #UD for INT 0x80 where VMX/SVM and ptrace give SIGSEGV" ;;
    python-values) cpuid_differs &&
        echo "the backends' CPUIDs differ on this host (ld.so's library search follows it)" ;;
    esac
}

CPUID_DIFFERS="" # yes/no once asked
cpuid_differs() {
    local k p
    [ -n "$CPUID_DIFFERS" ] && { [ "$CPUID_DIFFERS" = yes ]; return; }
    k=$(cd "$WORK" && "$HVRUN" run --backend kvm -- "$G/det_sources" 2>/dev/null | grep '^cpuid_')
    p=$(cd "$WORK" && "$HVRUN" run --backend ptrace -- "$G/det_sources" 2>/dev/null | grep '^cpuid_')
    if [ "$k" != "$p" ]; then CPUID_DIFFERS=yes; else CPUID_DIFFERS=no; fi
    [ "$CPUID_DIFFERS" = yes ]
}

# Runs one backend; writes $base.out/.err/.st. RUN_OPTS: more options.
RUN_OPTS=()
run_backend() {
    local backend=$1 base=$2
    shift 2
    (cd "$WORK/fix" && timeout "$TIMEOUT" "$HVRUN" run --backend "$backend" \
        "${RUN_OPTS[@]}" -- "$@" < /dev/null > "$base.out" 2> "$base.err")
    echo $? > "$base.st"
}

# same_with_model NAME CMD...: where the backends' CPUIDs differ, whether
# the two runs are the same bytes with --cpuid-rewrite (the model under
# both): counted progress follows the loops CPUID picks (glibc's string
# functions, ld.so's search), so logical time, and every clock a program
# prints, differs by backend there without it.
same_with_model() {
    local name=$1 k=$WORK/$1.kvm-model p=$WORK/$1.ptrace-model
    shift
    cpuid_differs || return 1
    RUN_OPTS=(--cpuid-rewrite)
    run_backend kvm "$k" "$@"
    run_backend ptrace "$p" "$@"
    RUN_OPTS=()
    cmp -s "$k.st" "$p.st" && cmp -s "$k.out" "$p.out" &&
        cmp -s "$k.err" "$p.err"
}

show_side() {
    local label=$1 base=$2
    echo "    --- $label: exit $(cat "$base.st")"
    head -c 2000 "$base.out" | sed 's/^/    out| /'
    head -c 2000 "$base.err" | sed 's/^/    err| /'
}

compare_case() {
    local name=$1
    shift
    local k=$WORK/$name.kvm p=$WORK/$name.ptrace
    run_backend kvm "$k" "$@"
    run_backend ptrace "$p" "$@"
    local what=""
    case $(cat "$k.st") in
    12[4-7]) what="the kvm run itself failed (exit $(cat "$k.st"))" ;;
    esac
    cmp -s "$k.st" "$p.st" || what="${what:+$what, }exit status"
    if ! cmp -s "$k.out" "$p.out" && [ "$name" = det_sources ] &&
        cmp -s <(grep -Ev '^(cpuid_|auxv_hwcap)' "$k.out") \
            <(grep -Ev '^(cpuid_|auxv_hwcap)' "$p.out"); then
        # Where neither backend controls CPUID fully (doctor: "CPUID
        # control: no"), each shows what its CPU gives: kvm_pvm the model's
        # identity with the host's features, the ptrace stub the host's
        # own; AT_HWCAP describes that CPU too. Everything else must still
        # be the same bytes.
        echo "    (det_sources: the cpuid_ and auxv_hwcap lines differ by backend on this host; compared without them)"
    else
        cmp -s "$k.out" "$p.out" || what="${what:+$what, }stdout"
    fi
    cmp -s "$k.err" "$p.err" || what="${what:+$what, }stderr"
    if [ -z "$what" ]; then
        pass "parity/$name"
        return
    fi
    if same_with_model "$name" "$@"; then
        pass "parity/$name (with --cpuid-rewrite: $what differ by the backends' CPUIDs on this host without it)"
        return
    fi
    local known
    known=$(known_difference "$name")
    if [ -n "$known" ]; then
        skip "parity/$name" "$what differ: $known"
        return
    fi
    fail "parity/$name" "$what differ"
    show_side kvm "$k"
    show_side ptrace "$p"
    diff -u "$k.out" "$p.out" | head -n 20 | sed 's/^/    diff| /'
}

verify_case() {
    local name=$1
    shift
    local b=$WORK/$name.verify line
    (cd "$WORK/fix" && timeout "$TIMEOUT" "$HVRUN" run --backend ptrace \
        --verify -- "$@" < /dev/null > "$b.out" 2> "$b.err")
    local st=$?
    line=$(grep -E '^hvrun: verify: ' "$b.err" | head -n 1 | cut -c1-200)
    # The program's own status (false, a crash, exit 42) with the verdict
    # that both runs agreed; 120 means they differed.
    if [[ $line == "hvrun: verify: deterministic"* ]] && [ "$st" != 124 ]; then
        pass "verify/$name"
    else
        fail "verify/$name" "exit $st; ${line:-no verify line}"
        show_tail "$b.err"
    fi
}

for_each_case() {
    local fn=$1 line name cmd
    while IFS= read -r line; do
        [ -n "$line" ] || continue
        name=$(trim "${line%%|*}")
        cmd=$(trim "${line#*|}")
        eval "set -- $cmd"
        "$fn" "$name" "$@"
    done <<< "$CASES"
}

# SIGKILL of hvrun while its guests block: its stubs must go with it.
exitkill_case() {
    local fifo=$WORK/fifo hv stubs="" s left=""
    mkfifo "$fifo"
    # The fifo is held open for writing (fd 9) so the guests' reads block.
    exec 9<> "$fifo"
    "$HVRUN" run --backend ptrace -- sh -c 'cat | cat | cat' < "$fifo" \
        > /dev/null 2>&1 &
    hv=$!
    # hvrun's child is its stub spawner (vmm/ptrace_spawner.c); the stubs
    # are the spawner's children.
    local spawner=""
    for _ in $(seq 1 100); do
        spawner=$(ps -o pid= --ppid "$hv" 2>/dev/null | tr -s ' \n' ' ')
        stubs=""
        [ -n "${spawner// /}" ] &&
            stubs=$(ps -o pid= --ppid "${spawner// /}" 2>/dev/null | tr -s ' \n' ' ')
        [ "$(echo "$stubs" | wc -w)" -ge 4 ] && break
        sleep 0.1
    done
    if [ "$(echo "$stubs" | wc -w)" -lt 4 ]; then
        fail exitkill "the process tree did not start (stubs: '$stubs')"
        kill -9 "$hv" 2>/dev/null
        wait "$hv" 2>/dev/null
        exec 9>&-
        return
    fi
    # Each stub runs under its seccomp filter (the net under SYSEMU). A
    # stub the spawner just made gets it before its first guest
    # instruction, while it is stopped: look again for a while. A stub
    # spawned ahead for the next fork or exec (not yet seized: no tracer)
    # has run nothing and gets it when it is taken.
    local unfiltered=""
    for _ in $(seq 1 50); do
        unfiltered=""
        for s in $stubs; do
            [ -e "/proc/$s" ] || continue
            grep -q '^TracerPid:[[:space:]]*0$' "/proc/$s/status" 2>/dev/null &&
                continue
            grep -q '^Seccomp:[[:space:]]*2' "/proc/$s/status" 2>/dev/null ||
                unfiltered="$unfiltered $s"
        done
        [ -z "$unfiltered" ] && break
        sleep 0.1
    done
    if [ -z "$unfiltered" ]; then
        pass "stub-seccomp-filtered ($(echo "$stubs" | wc -w) stubs)"
    else
        fail stub-seccomp-filtered "no seccomp filter in stubs:$unfiltered"
    fi
    kill -9 "$hv"
    wait "$hv" 2>/dev/null
    exec 9>&-
    for _ in $(seq 1 50); do
        left=""
        for s in $stubs $spawner; do
            if [ -e "/proc/$s" ] &&
                ! grep -q '^State:.*Z' "/proc/$s/status" 2>/dev/null; then
                left="$left $s"
            fi
        done
        [ -z "$left" ] && break
        sleep 0.1
    done
    if [ -z "$left" ]; then
        pass "exitkill ($(echo "$stubs" | wc -w) stubs and the spawner gone)"
    else
        fail exitkill "stubs left after SIGKILL of hvrun:$left"
    fi
}

skip_case() { skip "parity/$1" "no $KVM_DEV on this host"; }

# The stub's filter kills it when a guest syscall reaches the host kernel
# (HVRUN_PTRACE_SELFTEST=cont resumes the guest with PTRACE_CONT once):
# hvrun reports it, and nothing of the guest's ran natively.
seccomp_net_case() {
    local out=$WORK/net.out err=$WORK/net.err st
    HVRUN_PTRACE_SELFTEST=cont timeout -k 5 "$TIMEOUT" "$HVRUN" run \
        --backend ptrace -- "$G/hello_static" > "$out" 2> "$err"
    st=$?
    if [ "$st" = 125 ] && [ ! -s "$out" ] &&
        grep -q 'killed by its seccomp filter' "$err"; then
        pass stub-seccomp-net
    else
        fail stub-seccomp-net "exit $st, stdout '$(head -c 100 "$out")', stderr: $(head -c 300 "$err")"
    fi
}
# SIGTERM of a ptrace hvrun whose guest computes (no syscall to stop at):
# the run must still end at once, as KVM_RUN's EINTR ends kvm's.
stop_case() {
    local hv st i
    "$HVRUN" run --backend ptrace -- python3 -c \
        'print(sum(i * i for i in range(10**9)))' > /dev/null 2>&1 &
    hv=$!
    sleep 0.5
    kill -TERM "$hv"
    for i in $(seq 1 50); do
        kill -0 "$hv" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$hv" 2>/dev/null; then
        kill -9 "$hv"
        wait "$hv" 2>/dev/null
        fail stop-computing "hvrun did not end within 5 s of SIGTERM"
        return
    fi
    wait "$hv"
    st=$?
    if [ "$st" -eq 143 ]; then
        pass stop-computing
    else
        fail stop-computing "exit $st, not 143"
    fi
}

if [ -e "$KVM_DEV" ]; then
    for_each_case compare_case
else
    for_each_case skip_case
fi
# Every case verifies under ptrace too (two runs agree on every event).
verify_one() {
    verify_case "$@"
}
for_each_case verify_one
exitkill_case
seccomp_net_case
stop_case
finish
