#!/usr/bin/env bash
# tests/confine/seccomp.sh HVRUN [HVRUN...]
#
# hvrun confines itself (cli/confine.c). For each hvrun binary given, seen
# from outside through /proc/<hvrun pid>/status while a guest blocks reading
# a FIFO the test holds open:
#
#   seccomp/installed     Seccomp: 2 (a filter) and NoNewPrivs: 1
#   seccomp/off           --no-seccomp: Seccomp: 0
#   seccomp/denied        HVRUN_SECCOMP_SELFTEST=1 makes hvrun call mount(2)
#                         after the filter: exit 125 and exactly one line
#                         naming the call
#   seccomp/selftest-off  the same hook under --no-seccomp: the run is normal
#   seccomp/deny-NAME     the hook's other calls: execve, mprotect with
#                         PROT_EXEC, socket(AF_PACKET), rt_sigaction(SIGSYS)
#                         and (release build; the ASan build lets them
#                         through for LeakSanitizer) ptrace, a fork-style
#                         clone, kill of another pid: exit 125 naming it
#   ptrace-seccomp/*      the same under --backend ptrace: installed, and
#                         every deny-NAME but ptrace (that backend's own
#                         call; its stubs are started by a process forked
#                         before the filter)
#   caps/dropped          (as root) CapEff, CapPrm and CapBnd hold only the
#                         kept set, CapInh and CapAmb nothing
#   caps/root-file-access (as root) a root guest still reads a mode-000 file
#                         and chowns, as natively
#   caps/no-device-nodes  (as root) mknod of a char device is refused
#                         (CAP_MKNOD dropped), a FIFO still works
#   help/no-seccomp       `hvrun run --help` lists --no-seccomp
#   fs-policy/writes(-ptrace)  --fs-policy (each backend): the working directory, the guest's
#                         /tmp and /dev/null writable, the host readable, a
#                         directory outside refused (EACCES), exit 0 and
#                         no hvrun complaint (its private /tmp removed)
#   fs-policy/verify      --fs-policy --verify of a run that changes an
#                         existing file: deterministic
#   fs-policy/default-off without it the same outside write works
#
# Prints "PASS name" / "FAIL name: reason" / "SKIP name: reason" per case,
# then "N passed, N failed[, N skipped]". Exits 1 if anything failed.
#
# Environment: HVRUN_TEST_KVM_DEV (default /dev/kvm; without it everything
# is skipped).
set -u

if [ $# -lt 1 ]; then
    echo "usage: $0 HVRUN [HVRUN...]" >&2
    exit 2
fi

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
KVM_DEV=${HVRUN_TEST_KVM_DEV:-/dev/kvm}
# shellcheck source=tests/lib.sh
. "$ROOT/tests/lib.sh"

# The capabilities cli/confine.c keeps: CHOWN, DAC_OVERRIDE,
# DAC_READ_SEARCH, FOWNER, FSETID, NET_BIND_SERVICE, NET_RAW, SYS_RESOURCE,
# and SETGID, SETUID (a guest that dropped root gets its own file access:
# syscall-proxy/kernel/fscred.c).
KEPT_CAPS=$(( (1 << 0) | (1 << 1) | (1 << 2) | (1 << 3) | (1 << 4) |
    (1 << 6) | (1 << 7) | (1 << 10) | (1 << 13) | (1 << 24) ))

mkdir -p "$ROOT/build" || exit 1
WORK=$(mktemp -d "$ROOT/build/confine-tests.XXXXXX") || exit 1
BLOCKED_PID=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
    [ -n "$BLOCKED_PID" ] && kill "$BLOCKED_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ENV=(PATH=/usr/local/bin:/usr/bin:/bin HOME=/ LC_ALL=C LANG=C TZ=UTC)
for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do
    if [ -n "${!v:-}" ]; then ENV+=("$v=${!v}"); fi
done

status_field() { awk -v k="$1:" '$1 == k {print $2}' "$2"; }

# blocked_status HV STATUSFILE [RUN OPTIONS...]: starts `HV run OPTIONS --
# cat` reading a FIFO this script holds open, copies /proc/<pid>/status
# once the filter would be in (the guest has started: cat blocks in read),
# then closes the FIFO and reaps hvrun. Returns 1 if it never got there.
blocked_status() {
    local hv=$1 out=$2 fifo=$WORK/fifo
    shift 2
    # The last case's output goes first: the subshell truncates cat.out
    # only after it opened the FIFO, which lets the loop below go on, so a
    # "ready" left there was read before hvrun ran (cc22: the status of
    # the subshell itself, Seccomp 0 and every capability, under load).
    rm -f "$fifo" "$WORK/cat.out" && mkfifo "$fifo" || return 1
    (cd "$WORK" && exec env -i "${ENV[@]}" "$hv" run "$@" -- /bin/cat \
        <"$fifo" >"$WORK/cat.out" 2>"$WORK/cat.err") &
    BLOCKED_PID=$!
    exec 3>"$fifo"
    echo ready >&3
    # cat echoes the line only once the guest runs, after set-up.
    local i ok=1
    for ((i = 0; i < 300; i++)); do
        if grep -q ready "$WORK/cat.out" 2>/dev/null; then
            cp "/proc/$BLOCKED_PID/status" "$out" && ok=0
            break
        fi
        sleep 0.05
    done
    exec 3>&-
    wait "$BLOCKED_PID"
    BLOCKED_PID=
    return $ok
}

# case_installed [GROUP RUN-OPTIONS...]: the filter is in (GROUP seccomp,
# or ptrace-seccomp with --backend ptrace: hvrun confines itself there too,
# its stubs started by a process forked before the filter).
case_installed() {
    local st=$WORK/status group=${1:-seccomp}
    [ $# -gt 0 ] && shift
    if ! blocked_status "$HV" "$st" "$@"; then
        fail "$LABEL:$group/installed" "the guest never ran ($(head -c 200 "$WORK/cat.err"))"
        return
    fi
    local sc nnp
    sc=$(status_field Seccomp "$st")
    nnp=$(status_field NoNewPrivs "$st")
    if [ "$sc" = 2 ] && [ "$nnp" = 1 ]; then
        pass "$LABEL:$group/installed"
    else
        fail "$LABEL:$group/installed" "Seccomp: $sc NoNewPrivs: $nnp (want 2 and 1)"
    fi
    [ "$group" = seccomp ] && case_caps "$st"
}

case_caps() {
    local st=$1 own
    own=$(status_field CapEff /proc/self/status)
    if [ "$((16#$own))" -eq 0 ]; then
        skip "$LABEL:caps/dropped" "not running with capabilities"
        return
    fi
    local f v bad=""
    for f in CapEff CapPrm CapBnd; do
        v=$(status_field "$f" "$st")
        if [ -z "$v" ] || [ $((16#$v & ~KEPT_CAPS)) -ne 0 ]; then
            bad+=" $f=$v"
        fi
    done
    for f in CapInh CapAmb; do
        v=$(status_field "$f" "$st")
        if [ -z "$v" ] || [ $((16#$v)) -ne 0 ]; then bad+=" $f=$v"; fi
    done
    # DAC_OVERRIDE stays when we had it: root guests keep root's access.
    v=$(status_field CapEff "$st")
    if [ $((16#$own & 2)) -ne 0 ] && [ $((16#${v:-0} & 2)) -eq 0 ]; then
        bad+=" CAP_DAC_OVERRIDE dropped"
    fi
    if [ -z "$bad" ]; then
        pass "$LABEL:caps/dropped"
    else
        fail "$LABEL:caps/dropped" "beyond the kept set $(printf %x $KEPT_CAPS):$bad"
    fi
}

case_off() {
    local st=$WORK/status
    if ! blocked_status "$HV" "$st" --no-seccomp; then
        fail "$LABEL:seccomp/off" "the guest never ran"
        return
    fi
    local sc
    sc=$(status_field Seccomp "$st")
    if [ "$sc" = 0 ]; then
        pass "$LABEL:seccomp/off"
    else
        fail "$LABEL:seccomp/off" "Seccomp: $sc with --no-seccomp (want 0)"
    fi
}

case_denied() {
    local code lines
    (cd "$WORK" && env -i "${ENV[@]}" HVRUN_SECCOMP_SELFTEST=1 "$HV" run \
        -- /bin/echo guest-ran >"$WORK/d.out" 2>"$WORK/d.err")
    code=$?
    lines=$(wc -l <"$WORK/d.err")
    local want="hvrun: seccomp: host syscall mount (165) is not in hvrun's allowlist"
    if [ "$code" = 125 ] && [ "$lines" = 1 ] &&
        grep -qF "$want" "$WORK/d.err" && [ ! -s "$WORK/d.out" ]; then
        pass "$LABEL:seccomp/denied"
    else
        fail "$LABEL:seccomp/denied" "exit $code, $lines stderr lines: $(head -c 300 "$WORK/d.err")"
    fi
    (cd "$WORK" && env -i "${ENV[@]}" HVRUN_SECCOMP_SELFTEST=1 "$HV" run \
        --no-seccomp -- /bin/echo guest-ran >"$WORK/d.out" 2>"$WORK/d.err")
    code=$?
    if [ "$code" = 0 ] && [ "$(cat "$WORK/d.out")" = guest-ran ] &&
        [ ! -s "$WORK/d.err" ]; then
        pass "$LABEL:seccomp/selftest-off"
    else
        fail "$LABEL:seccomp/selftest-off" "exit $code: $(head -c 300 "$WORK/d.err")"
    fi
}

# The hook's calls and the host syscall each must be stopped at.
# deny_cases [RUN OPTIONS...]: with --backend ptrace (ptrace-seccomp/*),
# the same list but ptrace(2), which that backend needs.
deny_cases() {
    local sanitizer=0 name call code opts=("$@") group=seccomp
    [ $# -gt 0 ] && group=ptrace-seccomp
    ldd "$HV" 2>/dev/null | grep -q libasan && sanitizer=1
    for pair in execve:execve mprotect-exec:mprotect socket-packet:socket \
        sigaction-sigsys:rt_sigaction ptrace:ptrace fork:clone kill-other:kill; do
        name=${pair%%:*} call=${pair#*:}
        [ $# -gt 0 ] && [ "$name" = ptrace ] && continue
        (cd "$WORK" && env -i "${ENV[@]}" HVRUN_SECCOMP_SELFTEST="$name" "$HV" \
            run "${opts[@]}" -- /bin/true >/dev/null 2>"$WORK/d.err")
        code=$?
        if [ $sanitizer = 1 ] && [[ $name =~ ^(ptrace|fork|kill-other)$ ]]; then
            if [ "$code" = 0 ] && grep -q "$name was not blocked" "$WORK/d.err"; then
                pass "$LABEL:$group/deny-$name"
            else
                fail "$LABEL:$group/deny-$name" "ASan build: exit $code: $(head -c 200 "$WORK/d.err")"
            fi
            continue
        fi
        if [ "$code" = 125 ] && [ "$(wc -l <"$WORK/d.err")" = 1 ] &&
            grep -q "host syscall $call (" "$WORK/d.err"; then
            pass "$LABEL:$group/deny-$name"
        else
            fail "$LABEL:$group/deny-$name" "exit $code: $(head -c 200 "$WORK/d.err")"
        fi
    done
}

# root_case NAME SCRIPT: the same sh script natively and under hvrun, each
# in a fresh directory; outputs and statuses must match.
root_case() {
    local name=$1 script=$2 d n h
    if [ "$(id -u)" != 0 ]; then
        skip "$LABEL:caps/$name" "not running as root"
        return
    fi
    d=$(mktemp -d "$WORK/native.XXXXXX") && h=$(mktemp -d "$WORK/hv.XXXXXX") || return
    n=$(cd "$d" && env -i "${ENV[@]}" /bin/sh -c "$script" 2>&1; echo "status $?")
    hvout=$(cd "$h" && env -i "${ENV[@]}" "$HV" run -- /bin/sh -c "$script" 2>&1; echo "status $?")
    if [ "$n" = "$hvout" ]; then
        pass "$LABEL:caps/$name"
    else
        fail "$LABEL:caps/$name" "native '$n' vs hvrun '$hvout'"
    fi
}

case_root_files() {
    root_case root-file-access \
        'echo secret > f; chmod 000 f; cat f; chown 1234:1234 f; mkdir d; chmod 000 d; echo x > d/g; cat d/g'
    if [ "$(id -u)" != 0 ]; then
        skip "$LABEL:caps/no-device-nodes" "not running as root"
        return
    fi
    local out code
    out=$(cd "$WORK" && rm -f null2 p && env -i "${ENV[@]}" "$HV" run -- \
        /bin/sh -c 'mknod p p && echo fifo-ok; mknod null2 c 1 3 && echo device-made' 2>&1)
    code=$?
    if [ "$code" != 0 ] && printf '%s' "$out" | grep -q fifo-ok &&
        ! printf '%s' "$out" | grep -q device-made && [ ! -e "$WORK/null2" ]; then
        pass "$LABEL:caps/no-device-nodes"
    else
        fail "$LABEL:caps/no-device-nodes" "exit $code: $out"
    fi
    rm -f "$WORK/null2" "$WORK/p"
}

case_help() {
    if "$HV" run --help 2>&1 | grep -q -- '--no-seccomp'; then
        pass "$LABEL:help/no-seccomp"
    else
        fail "$LABEL:help/no-seccomp" "hvrun run --help does not list --no-seccomp"
    fi
}

# --fs-policy runs from $WORK/fs/cwd, with $WORK/fs/outside next to it.
case_fs_policy() {
    local d=$WORK/fs out code c
    rm -rf "$d" && mkdir -p "$d/cwd" "$d/outside" || return
    if (cd "$d/cwd" && "$HV" run --fs-policy -- /bin/true 2>&1) |
        grep -q "has no Landlock"; then
        for c in writes writes-ptrace verify default-off; do
            skip "$LABEL:fs-policy/$c" "this kernel has no Landlock"
        done
        return
    fi
    # Under ptrace every process after the first is a stub the spawner
    # started inside hvrun's Landlock domain (else hvrun may not trace it).
    local backend name
    for backend in kvm ptrace; do
        name=writes
        [ "$backend" = ptrace ] && name=writes-ptrace
        rm -f "$d/cwd/f"
        out=$(cd "$d/cwd" && env -i "${ENV[@]}" "$HV" run --backend "$backend" \
            --fs-policy -- /bin/sh -c \
            'echo in > f && cat f && echo t > /tmp/t && cat /tmp/t &&
             mkdir -p /tmp/a/b && echo > /dev/null && head -c 5 /etc/passwd && echo &&
             { echo no > ../outside/g; echo "outside $?"; } 2>/dev/null' 2>"$d/err")
        code=$?
        local want=$'in\nt\nroot:\noutside 2'
        if [ "$code" = 0 ] && [ "$out" = "$want" ] && [ ! -s "$d/err" ] &&
            [ ! -e "$d/outside/g" ]; then
            pass "$LABEL:fs-policy/$name"
        else
            fail "$LABEL:fs-policy/$name" "exit $code, out '$out', err $(head -c 200 "$d/err")"
        fi
    done
    echo old > "$d/cwd/f"
    out=$(cd "$d/cwd" && env -i "${ENV[@]}" "$HV" run --fs-policy --verify -- \
        /bin/sh -c 'cat f; echo new >> f; echo made > g' 2>&1)
    code=$?
    if [ "$code" = 0 ] && printf '%s' "$out" | grep -q "verify: deterministic" &&
        [ "$(cat "$d/cwd/f")" = $'old\nnew' ]; then
        pass "$LABEL:fs-policy/verify"
    else
        fail "$LABEL:fs-policy/verify" "exit $code: $(printf '%s' "$out" | head -c 300)"
    fi
    out=$(cd "$d/cwd" && env -i "${ENV[@]}" "$HV" run -- /bin/sh -c \
        'echo yes > ../outside/g && cat ../outside/g' 2>&1)
    if [ "$out" = yes ]; then
        pass "$LABEL:fs-policy/default-off"
    else
        fail "$LABEL:fs-policy/default-off" "$out"
    fi
}

ALL_CASES="seccomp/installed caps/dropped seccomp/off seccomp/denied
seccomp/selftest-off seccomp/deny-execve seccomp/deny-mprotect-exec
seccomp/deny-socket-packet seccomp/deny-sigaction-sigsys seccomp/deny-ptrace
seccomp/deny-fork seccomp/deny-kill-other caps/root-file-access caps/no-device-nodes help/no-seccomp
fs-policy/writes fs-policy/writes-ptrace fs-policy/verify fs-policy/default-off"

for hvarg in "$@"; do
    LABEL=$hvarg
    case $hvarg in
    /*) HV=$hvarg ;;
    *) HV=$PWD/$hvarg ;;
    esac
    if [ ! -x "$HV" ]; then
        fail "$LABEL:setup" "$HV is not an executable (build it first)"
        continue
    fi
    # The ptrace backend needs no /dev/kvm.
    case_installed ptrace-seccomp --backend ptrace
    deny_cases --backend ptrace
    if [ ! -e "$KVM_DEV" ]; then
        for c in $ALL_CASES; do skip "$LABEL:$c" "no $KVM_DEV on this host"; done
        continue
    fi
    case_installed
    case_off
    case_denied
    deny_cases
    case_root_files
    case_help
    case_fs_policy
done

finish
