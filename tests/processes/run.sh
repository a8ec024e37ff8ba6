#!/usr/bin/env bash
# tests/processes/run.sh HVRUN [HVRUN...]
#
# Process-tree tests: fork, exec, wait, kill, pipes and FIFOs between guest
# processes (each one its own VM under hvrun). For each hvrun binary given:
#
#   same/*    the command runs natively (once, the reference for every
#             HVRUN) and under
#             `HVRUN run --no-virtualize-metadata --no-virtualize-time -- CMD`,
#             each in a fresh working directory; stdout and exit status must
#             match (and match the expected status when the table gives one);
#   verify/*  `HVRUN run --verify -- CMD` (default flags) exits 0 and says
#             "hvrun: verify: deterministic";
#   linger/*  the run ends with its first process (a background child's
#             later output is cut off, as documented); with --linger it
#             lasts while another process holds its stdout (the output is
#             what a shell's $(...) gets natively), ends once that process
#             lets go of it (a daemon that redirected its output), and
#             verifies;
#   pid-model/*  the first process is pid 2, a virtual shell's child, and
#             dies of a default SIGTERM; with --as-init it is pid 1, the
#             orphans' parent, and survives its own SIGTERM;
#   host-pid/*  hvrun with a small pid in a pid namespace of its own (a
#             container's), that pid among the guest's tids: each thread's
#             /proc/PID/task/TID/stat is its own, on both backends; and
#             above them: no other /proc/PID/task/N exists (hvrun's own
#             task directory never shows through);
#   container/*  bwrap (a mount namespace, which hvrun refuses), mount and
#             umount fail under hvrun with the message and status they give
#             natively in an unprivileged container
#             (tests/processes/nsdeny.c): bwrap as root and as nobody;
#             sanitize-*: programs built with -fsanitize=address, leak,
#             thread and undefined find what they find natively (ASan's
#             terabytes of MAP_NORESERVE shadow, LeakSanitizer's ptrace of
#             its own threads);
#             py-pty-fork, script-*: a controlling terminal on a pty
#             (pty.fork's child, script's shell, an interactive bash's
#             job control over it);
#   cpuid/in-guest-ptrace  under --backend ptrace (whose CPUID shows the
#             host CPU the stub is on), 2000 CPUIDs of a site in a function
#             with a jump table (tests/guest/cpuid_inline.c) are answered by
#             a stub in the guest, without an exit each, and 2000 of sites
#             whose span starts before the CPUID (ld.so's shapes);
#   gcc/*     (when gcc is installed) two separate `HVRUN run -- gcc` builds
#             of a file printing __DATE__ " " __TIME__ give byte-identical
#             binaries that run; `HVRUN run --verify -- gcc -c t.c` exits 0.
#
# Prints "PASS name" / "FAIL name: reason" / "SKIP name: reason" per case,
# then "N passed, N failed[, N skipped]". Exits 1 if anything failed.
#
# Environment: HVRUN_PROC_TIMEOUT (seconds per run, default 120),
# GUEST_DIR (default build/guest), HVRUN_TEST_KVM_DEV (default /dev/kvm;
# without it everything is skipped).

# The table callbacks are called through for_each_case.
# shellcheck disable=SC2317
set -u

if [ $# -lt 1 ]; then
    echo "usage: $0 HVRUN [HVRUN...]" >&2
    exit 2
fi

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
GUEST_DIR=${GUEST_DIR:-$ROOT/build/guest}
TIMEOUT=${HVRUN_PROC_TIMEOUT:-120}
KVM_DEV=${HVRUN_TEST_KVM_DEV:-/dev/kvm}
SYS_PATH=/usr/local/bin:/usr/bin:/bin

# ---- the tables -------------------------------------------------------------
#
# One case per line: name | status | command
#   status  "=" means "whatever the native run gives"; a number is checked
#           for both the native and the hvrun run.
#   command split like a shell word list; the first word is looked up in
#           PATH once and both runs use the same absolute path. GUEST/ is
#           build/guest/. Every run gets a fresh, empty working directory
#           (holding the Makefile for the make case).

SAME_TABLE=$(cat <<'EOF'
subshells       | 0   | sh -c 'for i in 1 2 3; do (echo $i; (echo nested)); done'
pipeline        | 0   | sh -c 'seq 1000 | grep 7 | sort -r | head -5 | wc -l'
bash-cmdsubst   | 0   | bash -c 'x=$(echo sub); echo $((6*7)) $x'
exit-7          | 7   | sh -c 'exit 7'
kill-self-term  | 143 | sh -c 'kill -TERM $$'
bg-wait         | 0   | bash -c 'sleep 0.01 & wait; echo waited'
trap-usr1       | 0   | bash -c 'trap "echo usr1" USR1; kill -USR1 $$; echo after'
xargs           | 0   | sh -c 'seq 5 | xargs echo'
python3-subproc | 0   | /usr/bin/python3 -B -c 'import subprocess; print(subprocess.run(["echo","hi"], capture_output=True).stdout)'
make            | 0   | make -s
proc_tree       | 0   | GUEST/proc_tree
fifo            | 0   | sh -c 'mkfifo f; (echo through > f) & cat f; wait'
flock           | 0   | sh -c ': > lk; flock lk sh -c "echo holder; sleep 0.05; echo released" & sleep 0.01; flock lk echo second; wait'
py-multiproc    | 0   | /usr/bin/python3 -B -c 'import multiprocessing as m; p = m.Pool(2); print(p.map(abs, [-1, -2, -3])); p.close(); p.join()'
py-asyncio      | 0   | /usr/bin/python3 -B -c 'import asyncio; print(asyncio.run(asyncio.sleep(0.01, result=5)))'
py-bigsend      | 0   | /usr/bin/python3 -B $ROOT/tests/processes/bigsend.py
py-peercred     | 0   | /usr/bin/python3 -B $ROOT/tests/processes/peercred.py
py-sock-timeout | 0   | /usr/bin/python3 -B $ROOT/tests/processes/sock_timeout.py
pipe-lock       | 0   | /usr/bin/python3 -B -c 'import fcntl, os; r, w = os.pipe(); fcntl.lockf(w, fcntl.LOCK_EX); print("pipe lock ok")'
py-threads      | 0   | /usr/bin/python3 -B -c 'import threading, queue; q = queue.Queue(); t = threading.Thread(target=lambda: q.put(42)); t.start(); t.join(); print(q.get())'
py-memfd        | 0   | /usr/bin/python3 -B $ROOT/tests/processes/memfd.py
spinner-sleep   | 0   | sh -c '/usr/bin/python3 -B -c "while 1: pass" & sleep 1; kill $!; wait; echo killed'
unshare-r-id    | 0   | unshare -r id
unshare-r-nobody | 0  | setpriv --reuid 65534 --regid 65534 --clear-groups unshare -r sh -c 'id; cat /proc/self/uid_map /proc/self/gid_map /proc/self/setgroups; stat -c "%u %g" /'
unshare-r-setpriv | 0 | setpriv --reuid 65534 --regid 65534 --clear-groups unshare -r id
unshare-uts     | 0   | unshare -r -u sh -c 'hostname inner; hostname; cat /proc/sys/kernel/hostname'
unshare-pid     | 0   | unshare -r -p -f sh -c 'echo $$ $PPID; sh -c "echo \$\$ \$PPID"'
unshare-ipc-owner | 0 | setpriv --reuid 65534 --regid 65534 --clear-groups sh -c 'id=$(ipcmk -M 4096 | sed "s/.*: //"); unshare -r sh -c "ipcs -m | grep -w $id | cut -c22-40"; ipcrm -m $id'
unshare-ipc     | 0   | sh -c 'id=$(ipcmk -M 4096 | sed "s/.*: //"); ipcs -m | grep -qw $id && echo seen; unshare -r -i sh -c "ipcs -m | grep -c 0x"; ipcrm -m $id && echo removed'
strace-ls       | 0   | strace -f -o /dev/null ls /
strace-pipeline | 0   | sh -c 'strace -f -o t sh -c "echo hi | cat"; grep -oE "execve\(\"[^\"]+\"|[+]{3} exited with [0-9]+" t | sort | uniq -c'
gdb-bt          | 0   | sh -c 'cc -g -O0 -o crash "$1" && gdb -batch -ex run -ex bt ./crash 2>&1 | grep -E "^#|received signal|about to"' sh $ROOT/tests/processes/crash_bt.c
# gdb-watch: three sessions, each single-stepped by hvrun under kvm_pvm
# (watchpoints kept by TF): kvm_pvm now and then let TF into the guest
# kernel's exception stub (vmm/kvm.c trap_in_stub), 8 of 12 runs of one
# session on a loaded host before the fix.
gdb-watch       | 0   | sh -c 'cc -g -O0 -o w "$1" && for i in 1 2 3; do gdb -batch -ex "watch g" -ex run -ex c -ex c ./w 2>&1 | grep -E "atchpoint|Old value|New value|g="; done' sh $ROOT/tests/processes/watch_loop.c
strace-threads  | 0   | sh -c 'strace -f -o t "$1" >/dev/null; grep -oE "write\(1, \"thread|exit\(0|[+]{3} exited with [0-9]+" t | sort | uniq -c' sh $GUEST_DIR/tid_unique
strace-group-exit | 0 | sh -c 'strace -f -o t "$1" group-exit >/dev/null; echo "status $?"; grep -oE "exit_group\(3|[+]{3} exited with [0-9]+|pause\(" t | sort | uniq -c' sh $GUEST_DIR/tid_unique
strace-seccomp-bpf | 0 | sh -c 'strace -f --seccomp-bpf -e trace=write,execve -o t sh -c "echo hi; ls /nonexistent" 2>&1; grep -oE "execve\(\"[^\"]+\"|write\([0-9], \"[^\"]*\"|[+]{3} exited with [0-9]+" t'
sanitize-asan   | 0   | sh -c 'cc -g -fsanitize=address -o s "$1" || exit; for m in overflow uaf stack leak threads; do ./s $m >o 2>e; echo "$m: status $?"; cat o; grep -oE "ERROR: [A-Za-z]+Sanitizer: [a-z-]+|(READ|WRITE) of size [0-9]+|(Direct|Indirect) leak of [0-9]+ byte.s. in [0-9]+ object|SUMMARY: [A-Za-z]+Sanitizer: [^/]*" e; done' sh $ROOT/tests/processes/sanitize.c
sanitize-others | 0   | sh -c 'cc -g -fsanitize=leak -o l "$1" && ./l leak 2>e; echo "lsan: status $?"; grep -oE "(Direct|Indirect) leak of [0-9]+ byte.s.|SUMMARY: [A-Za-z]+Sanitizer: [^/]*" e; cc -g -fsanitize=undefined -o u "$1" && ./u ub 2>e; echo "ubsan: status $?"; grep -oE "runtime error: [^0-9]*" e; cc -g -fsanitize=thread -o t "$1" && ./t race 2>e; echo "tsan: status $?"; grep -oE "WARNING: ThreadSanitizer: [a-z ]+|SUMMARY: ThreadSanitizer: [^/]*" e | sort -u' sh $ROOT/tests/processes/sanitize.c
py-pty-fork     | 0   | /usr/bin/python3 -B $ROOT/tests/processes/pty_fork.py
script-echo     | 0   | script -qc 'echo hi' /dev/null
script-bash-i   | 0   | sh $ROOT/tests/processes/script_bash.sh
script-ctty     | 0   | script -qc 'tty >/dev/null && echo has tty; ps -o stat= -p $$; sh -c "ps -o stat= -p \$\$"' /dev/null
keyctl          | 0   | sh $ROOT/tests/processes/keyctl.sh
setsid-leads    | 0   | setsid -w sh -c 'set -- $(cut -d" " -f5,6 /proc/$$/stat); echo leads group $(($1 == $$)) session $(($2 == $$))'
EOF
)

# name | status | command, run as `HVRUN run --verify -- command`; the
# status must be 0 (the column keeps '|' in commands out of the split).
VERIFY_TABLE=$(cat <<'EOF'
pipeline        | 0   | sh -c 'seq 100 | sort -r | head -3'
proc_tree       | 0   | GUEST/proc_tree
py-multiproc    | 0   | /usr/bin/python3 -B -c 'import multiprocessing as m, time; p = m.Pool(2); print(p.map(abs, [-1, -2, -3]), time.time()); p.close(); p.join()'
py-http-local   | 0   | /usr/bin/python3 -B $ROOT/tests/processes/http_local.py
ipcs            | 0   | sh -c 'ipcmk -M 8192; ipcs -m; ipcs -q'
unshare-r-id    | 0   | unshare -r id
strace-ls       | 0   | strace -f -o /dev/null ls /
strace-pipeline | 0   | strace -f -o /dev/null sh -c 'echo hi | cat'
gdb-bt          | 0   | sh -c 'cc -g -O0 -o crash "$1" && gdb -iex "maint set worker-threads 0" -batch -ex run -ex bt ./crash' sh $ROOT/tests/processes/crash_bt.c
setsid-ps       | 0   | setsid -w sh -c 'ps -o pid,ppid,pgid,sid,comm'
keyctl          | 0   | sh -c 'sh "$1"; cat /proc/keys /proc/key-users' sh $ROOT/tests/processes/keyctl.sh
sanitize-threads | 0  | sh -c 'cc -g -fsanitize=address -o s "$1" && ./s threads; echo "status $?"' sh $ROOT/tests/processes/sanitize.c
py-pty-fork     | 0   | /usr/bin/python3 -B $ROOT/tests/processes/pty_fork.py
script-echo     | 0   | script -qc 'echo hi' /dev/null
script-bash-i   | 0   | sh $ROOT/tests/processes/script_bash.sh
EOF
)

# ---- bookkeeping --------------------------------------------------------------

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

# Calls FN name status command for each non-comment line of a table (the
# command, the last field, may itself contain '|').
# A case runs beside another (HVRUN_TEST_JOBS, tests/lib.sh) unless it is
# in SERIAL_CASES: those that use or count what the host has one of for
# everyone (System V IPC, the key rings, file locks with sleeps), time
# themselves, hold a pty, or are heavy (the sanitizers' shadow memory).
SERIAL_CASES=" bg-wait flock spinner-sleep py-sock-timeout py-asyncio
unshare-ipc-owner unshare-ipc ipcs keyctl py-pty-fork script-echo
script-bash-i script-ctty setsid-leads setsid-ps sanitize-asan
sanitize-others sanitize-threads py-http-local py-bigsend "
SERIAL_CASES=${SERIAL_CASES//$'\n'/ }

for_each_case() {
    local table=$1 fn=$2 name status cmd par
    # fd 3, so that nothing the cases run can eat the table.
    while IFS='|' read -r -u 3 name status cmd; do
        trim_to name "$name"
        case $name in '' | '#'*) continue ;; esac
        trim_to status "$status"
        trim_to cmd "$cmd"
        par=par_case
        [[ $SERIAL_CASES == *" $name "* ]] && par=par_serial
        "$par" "$fn" "$name" "$status" "$cmd"
    done 3<<<"$table"
    par_drain
}

# ---- scratch area (under build/, not /tmp: the guest's /tmp is private) ---------

mkdir -p "$ROOT/build" || exit 1
WORK=$(mktemp -d "$ROOT/build/proc-tests.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM
OUT=$WORK/out
mkdir -p "$OUT"

# The environment every program gets, natively and under hvrun.
# HVRUN_BACKEND (the Makefile sets it where there is no /dev/kvm) is
# kept: hvrun reads its default backend there.
GUEST_ENV=(${HVRUN_BACKEND:+"HVRUN_BACKEND=$HVRUN_BACKEND"} "PATH=$SYS_PATH" HOME=/ LC_ALL=C LANG=C TZ=UTC TERM=dumb)
for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do
    if [ -n "${!v:-}" ]; then GUEST_ENV+=("$v=${!v}"); fi
done
ulimit -c 0 2>/dev/null

prog() { PATH=$SYS_PATH type -P "$1"; }

# The make case's Makefile: a chain of dependent targets built in order.
write_makefile() {
    cat >"$1/Makefile" <<'EOF'
all: c.txt
	@cat c.txt
	@echo all done
c.txt: b.txt
	@echo making c
	@cat b.txt > c.txt; echo c >> c.txt
b.txt: a.txt
	@echo making b
	@cat a.txt > b.txt; echo b >> b.txt
a.txt:
	@echo making a
	@echo a > a.txt
EOF
}

# ---- running one program ------------------------------------------------------

# run_prog HVRUN-PREFIX-OR-EMPTY CWD OUTFILE ERRFILE PROG ARGS...
# HVRUN-PREFIX is a string of words ("HV run --verify --"); prints the status.
run_prog() {
    local pre=$1 cwd=$2 out=$3 err=$4
    shift 4
    local -a prefix=()
    [ -n "$pre" ] && read -r -a prefix <<<"$pre"
    local status
    {
        (cd "$cwd" && exec timeout -k 5 "$TIMEOUT" \
            env -i "${GUEST_ENV[@]}" "${prefix[@]}" "$@" </dev/null >"$out" \
            2>"$err")
        status=$?
    } 2>/dev/null
    echo "$status"
}

first_line() {
    local l
    l=$(head -n 1 "$1" | cut -c1-160)
    printf '%s' "${l:-(empty)}"
}

describe_output() {
    printf '%s bytes sha256 %s' "$(wc -c <"$1")" "$(sha256sum <"$1" | cut -c1-12)"
}

timed_out() { [ "$1" = 124 ] || [ "$1" = 137 ]; }

# resolve_cmd "COMMAND": sets ARGV to the word list, first word resolved.
# Returns 1 (and sets WHY) when the program is missing.
resolve_cmd() {
    eval "ARGV=($1)"
    local p=${ARGV[0]}
    case $p in
    GUEST/*)
        p=$GUEST_DIR/${p#GUEST/}
        if [ ! -x "$p" ]; then
            WHY="$p is not built (make build/guest/$(basename "$p"))"
            return 1
        fi
        ;;
    /*)
        if [ ! -x "$p" ]; then
            WHY="$p is not installed"
            return 1
        fi
        ;;
    *)
        p=$(prog "$p")
        if [ -z "$p" ]; then
            WHY="${ARGV[0]} is not installed"
            return 1
        fi
        ;;
    esac
    ARGV[0]=$p
}

# ---- same/*: native vs hvrun -------------------------------------------------------

# native_reference NAME: case NAME's native run (ARGV), made once for
# every HVRUN given, in OUT/native.NAME.{out,err,status}; prints its
# exit status.
# The native run of case NAME, made once for every HVRUN (the first
# binary's case makes it; a later one's, which may run beside it, waits).
native_reference() {
    local name=$1 nbase=$OUT/native.$1 ncwd=$WORK/native.$1
    if mkdir "$nbase.lock" 2>/dev/null; then
        mkdir -p "$ncwd"
        [ "$name" = make ] && write_makefile "$ncwd"
        run_prog "" "$ncwd" "$nbase.out" "$nbase.err" "${ARGV[@]}" \
            >"$nbase.status.tmp"
        mv "$nbase.status.tmp" "$nbase.status"
    else
        while [ ! -e "$nbase.status" ]; do sleep 0.05; done
    fi
    cat "$nbase.status"
}

same_case() {
    local name=$1 want=$2 cmd=$3
    local full=$LABEL:same/$name base=$OUT/$ID.same.$name
    local -a ARGV
    local WHY=""
    if ! resolve_cmd "$cmd"; then
        skip "$full" "$WHY"
        return
    fi
    local hcwd=$WORK/$ID.$name.hvrun
    mkdir -p "$hcwd"
    if [ "$name" = make ]; then
        write_makefile "$hcwd"
    fi
    local nst hst
    nst=$(native_reference "$name")
    cp "$OUT/native.$name.out" "$base.native"
    cp "$OUT/native.$name.err" "$base.native.err"
    hst=$(run_prog "$HV run --no-virtualize-metadata --no-virtualize-time --" \
        "$hcwd" "$base.hvrun" "$base.hvrun.err" "${ARGV[@]}")
    if timed_out "$hst" && [ "$nst" != "$hst" ]; then
        fail "$full" "hvrun run timed out after ${TIMEOUT}s (status $hst); stdout so far: $(first_line "$base.hvrun"); stderr: $(first_line "$base.hvrun.err")"
        show_tail "$base.hvrun.err"
        return
    fi
    if [ "$want" != "=" ] && [ "$nst" != "$want" ]; then
        fail "$full" "the native run itself exited $nst, expected $want (test environment problem?); stderr: $(first_line "$base.native.err")"
        return
    fi
    local problems=""
    if [ "$hst" != "$nst" ]; then
        problems="exit status: native $nst, hvrun $hst"
    fi
    if ! cmp -s "$base.native" "$base.hvrun"; then
        problems="${problems:+$problems; }stdout differs (native $(describe_output "$base.native"), hvrun $(describe_output "$base.hvrun"))"
        if [ "$(wc -c <"$base.hvrun")" -lt 2000 ] &&
            [ "$(wc -c <"$base.native")" -lt 2000 ]; then
            local dl
            dl=$(diff "$base.native" "$base.hvrun" | grep '^[<>]' | head -n 3 |
                tr '\n' ' ' | cut -c1-200)
            problems="$problems: $dl"
        fi
    fi
    if [ -n "$problems" ]; then
        fail "$full" "$problems; hvrun stderr: $(first_line "$base.hvrun.err")"
    else
        pass "$full"
    fi
}

# ---- verify/*: --verify with default flags ----------------------------------------

# verify_check NAME BASE STATUS: exit 0 and "hvrun: verify: deterministic".
verify_check() {
    local full=$1 b=$2 st=$3 line
    line=$(grep -E '^hvrun: verify: ' "$b.err" | head -n 1 | cut -c1-300)
    if [ "$st" = 0 ] && [[ $line == "hvrun: verify: deterministic"* ]]; then
        pass "$full"
    elif timed_out "$st"; then
        fail "$full" "timed out after ${TIMEOUT}s; stderr: $(first_line "$b.err")"
        show_tail "$b.err"
    elif [ -z "$line" ]; then
        fail "$full" "exit $st and no 'hvrun: verify:' line; stderr: $(first_line "$b.err")"
    else
        fail "$full" "exit $st; $line"
    fi
}

verify_case() {
    local name=$1 cmd=$3
    local full=$LABEL:verify/$name b=$OUT/$ID.verify.$name
    local -a ARGV
    local WHY=""
    if ! resolve_cmd "$cmd"; then
        skip "$full" "$WHY"
        return
    fi
    local cwd=$WORK/$ID.verify.$name
    mkdir -p "$cwd"
    local st
    st=$(run_prog "$HV run --verify --" "$cwd" "$b.out" "$b.err" "${ARGV[@]}")
    verify_check "$full" "$b" "$st"
}

# ---- gcc/* ---------------------------------------------------------------------------

gcc_cases() {
    local gcc
    gcc=$(prog gcc)
    if [ -z "$gcc" ]; then
        for n in same-binary-twice verify-compile; do
            skip "$LABEL:gcc/$n" "gcc is not installed"
        done
        return
    fi
    local cwd=$WORK/$ID.gcc b=$OUT/$ID.gcc
    mkdir -p "$cwd"
    cat >"$cwd/t.c" <<'EOF'
#include <stdio.h>
int main(void)
{
    puts(__DATE__ " " __TIME__);
    return 0;
}
EOF
    local full=$LABEL:gcc/same-binary-twice s1 s2 problems=""
    s1=$(run_prog "$HV run --" "$cwd" "$b.1.out" "$b.1.err" "$gcc" -o a1 t.c)
    s2=$(run_prog "$HV run --" "$cwd" "$b.2.out" "$b.2.err" "$gcc" -o a2 t.c)
    if [ "$s1" != 0 ]; then
        problems="gcc -o a1 exited $s1 ($(first_line "$b.1.err"))"
    elif [ "$s2" != 0 ]; then
        problems="gcc -o a2 exited $s2 ($(first_line "$b.2.err"))"
    elif [ ! -f "$cwd/a1" ] || [ ! -f "$cwd/a2" ]; then
        problems="gcc exited 0 but a1 or a2 is missing"
    elif ! cmp -s "$cwd/a1" "$cwd/a2"; then
        problems="a1 and a2 differ: $(cmp "$cwd/a1" "$cwd/a2" 2>&1 | head -n 1 | sed "s|$cwd/||g")"
    else
        local rs
        rs=$(run_prog "" "$cwd" "$b.a1.out" "$b.a1.err" ./a1)
        if [ "$rs" != 0 ] || [ ! -s "$b.a1.out" ]; then
            problems="./a1 exited $rs, stdout '$(first_line "$b.a1.out")', stderr $(first_line "$b.a1.err")"
        fi
    fi
    if [ -n "$problems" ]; then
        fail "$full" "$problems"
    else
        pass "$full"
    fi

    local st
    st=$(run_prog "$HV run --verify --" "$cwd" "$b.v.out" "$b.v.err" "$gcc" -c t.c)
    verify_check "$LABEL:gcc/verify-compile" "$b.v" "$st"
    # Again, now that t.o exists: run 2 must start from the old t.o too.
    st=$(run_prog "$HV run --verify --" "$cwd" "$b.r.out" "$b.r.err" "$gcc" -c t.c)
    verify_check "$LABEL:gcc/verify-recompile" "$b.r" "$st"
}

# ---- cache: KVM_GET_SUPPORTED_CPUID kept per boot ---------------------------------

# hvrun writes its CPUID cache under XDG_CACHE_HOME, and a damaged cache is
# only a miss: the run works and the file is written afresh.
cache_case() {
    local full=$LABEL:cache/supported-cpuid dir=$WORK/$ID.cache problems=""
    local truebin f
    if ! needs_kvm "$HV"; then
        skip "$full" "KVM_GET_SUPPORTED_CPUID's cache is the kvm backend's"
        return
    fi
    truebin=$(prog true)
    mkdir -p "$dir"
    XDG_CACHE_HOME=$dir "$HV" run -- "$truebin" || problems="first run failed"
    f=$(ls "$dir"/hvrun/supported-cpuid-* 2>/dev/null | head -n 1)
    if [ -z "$problems" ] && [ -z "$f" ]; then
        problems="no cache file under $dir/hvrun"
    elif [ -z "$problems" ]; then
        local size
        size=$(stat -c %s "$f")
        printf 'garbage' >"$f"
        XDG_CACHE_HOME=$dir "$HV" run -- "$truebin" ||
            problems="run with a damaged cache failed"
        [ -z "$problems" ] && [ "$(stat -c %s "$f")" != "$size" ] &&
            problems="damaged cache not rewritten ($(stat -c %s "$f") bytes, was $size)"
    fi
    if [ -n "$problems" ]; then fail "$full" "$problems"; else pass "$full"; fi
}

# ---- verify/changes: run 1 changes files that existed; run 2 starts from them --

# Appends to, removes, renames and chmods files that exist before the run,
# and makes a directory named with a trailing slash;
# --verify must put them back before run 2 (its cat would print what run 1
# appended otherwise), and leave the result of one run behind.
changes_case() {
    local full=$LABEL:verify/changes-existing cwd=$WORK/$ID.changes
    local b=$OUT/$ID.changes
    mkdir -p "$cwd/d"
    echo one >"$cwd/log.txt"
    echo keep >"$cwd/gone.txt"
    echo x >"$cwd/d/f"
    ln -s log.txt "$cwd/link"
    local st
    st=$(run_prog "$HV run --verify --" "$cwd" "$b.out" "$b.err" "$(prog sh)" -c \
        'cat log.txt; echo appended >>log.txt; rm gone.txt; rm -r d; mv link link2; chmod 600 log.txt; mkdir new/ && echo n >new/f && rm -rf new; mkdir kept/; echo k >kept/f')
    verify_check "$full" "$b" "$st"
    local after
    after=$(cd "$cwd" && printf '%s|' * && tr '\n' ' ' <log.txt && stat -c %a log.txt)
    if [ "$after" != "kept|link2|log.txt|one appended 600" ]; then
        fail "$full:result" "after --verify: '$after', want one run's result"
    else
        pass "$full:result"
    fi
}

# ---- main -----------------------------------------------------------------------

skip_same() { skip "$LABEL:same/$1" "$SKIP_REASON"; }
skip_verify() { skip "$LABEL:verify/$1" "$SKIP_REASON"; }
skip_all() {
    SKIP_REASON=$1
    for_each_case "$SAME_TABLE" skip_same
    for_each_case "$VERIFY_TABLE" skip_verify
    skip "$LABEL:gcc/same-binary-twice" "$1"
    skip "$LABEL:gcc/verify-compile" "$1"
    skip "$LABEL:gcc/verify-recompile" "$1"
    skip "$LABEL:verify/changes-existing" "$1"
    skip "$LABEL:verify/changes-existing:result" "$1"
    skip "$LABEL:cache/supported-cpuid" "$1"
    skip "$LABEL:linger/default-ends-with-first" "$1"
    skip "$LABEL:linger/background-output" "$1"
    skip "$LABEL:linger/daemon-lets-go" "$1"
    skip "$LABEL:linger/verify" "$1"
    skip "$LABEL:pid-model/default" "$1"
    skip "$LABEL:pid-model/as-init" "$1"
    skip "$LABEL:host-pid/threads-stat" "$1"
    skip "$LABEL:cpuid/in-guest-ptrace" "$1"
}

# The first process is a virtual shell's child (pid 2, ppid 32767, a
# default SIGTERM kills it); with --as-init it is pid 1 and the run's init
# (ppid 0; its own SIGTERM without a handler is not delivered; orphans
# are its children).
pid_model_cases() {
    local out st
    local prog='echo $$ $PPID; (sh -c "sleep 0.05; echo orphan of \$(ps -o ppid= -p \$\$)" &); sleep 0.3; kill -TERM $$; echo survived'
    out=$(timeout "$TIMEOUT" "$HV" run -- sh -c "$prog" 2>&1)
    st=$?
    if [ "$st" = 143 ] && [ "$out" = "$(printf '2 32767\norphan of 1')" ]; then
        pass "$LABEL:pid-model/default"
    else
        fail "$LABEL:pid-model/default" "exit $st, printed '$out'"
    fi
    out=$(timeout "$TIMEOUT" "$HV" run --as-init -- sh -c "$prog" 2>&1)
    st=$?
    if [ "$st" = 0 ] && [ "$out" = "$(printf '1 0\norphan of 1\nsurvived')" ]; then
        pass "$LABEL:pid-model/as-init"
    else
        fail "$LABEL:pid-model/as-init" "exit $st, printed '$out'"
    fi
}

# hvrun in a pid namespace of its own with a small pid (as in a container),
# that pid among the guest's tids: each thread's /proc/PID/task/TID/stat
# is that thread's (tests/guest/task_stat_threads.c). hvrun took its own
# host pid in a guest's path for "self" once, and LTP's futex_wake02
# waited forever for a thread that read as running.
host_pid_cases() {
    local bin=$ROOT/build/guest/task_stat_threads skip out b
    local want="30 threads listed, 30 asleep in their stat, 0 other tids found"
    if ! unshare -p -f --mount-proc true 2>/dev/null; then
        skip "$LABEL:host-pid/threads-stat" "unshare -p -f --mount-proc is not permitted here"
        return
    fi
    for b in kvm ptrace; do
        # 40: hvrun's own host tids above the guest's 30 threads' (its
        # task directory must not show through an exited or unknown tid)
        for skip in 3 12 40; do
            out=$(timeout "$TIMEOUT" unshare -p -f --mount-proc sh -c \
                'i=0; while [ $i -lt '"$skip"' ]; do /bin/true; i=$((i+1)); done; "$@"' \
                sh "$HV" run --backend "$b" -- "$bin" 2>&1 | tail -n 1)
            if [ "$out" = "$want" ]; then
                pass "$LABEL:host-pid/threads-stat-$b-$skip"
            else
                fail "$LABEL:host-pid/threads-stat-$b-$skip" "printed '$out'"
            fi
        done
    done
}

linger_cases() {
    local d=$TMP_LINGER/$ID out native st
    mkdir -p "$d"
    local bg='(sleep 0.2; echo late) & echo early'
    out=$(cd "$d" && timeout "$TIMEOUT" "$HV" run -- sh -c "$bg" 2> /dev/null)
    if [ "$out" = early ]; then
        pass "$LABEL:linger/default-ends-with-first"
    else
        fail "$LABEL:linger/default-ends-with-first" "printed '$out'"
    fi
    native=$(cd "$d" && sh -c "$bg")
    (cd "$d" && timeout "$TIMEOUT" "$HV" run --linger -- sh -c "$bg" > out 2> err)
    st=$?
    if [ "$st" = 0 ] && [ "$(cat "$d/out")" = "$native" ]; then
        pass "$LABEL:linger/background-output"
    else
        fail "$LABEL:linger/background-output" "exit $st, printed '$(head -c 200 "$d/out")', native '$native': $(head -c 200 "$d/err")"
    fi
    (cd "$d" && timeout 60 "$HV" run --linger -- \
        sh -c '(exec > /dev/null 2>&1; sleep 1000) & echo started' > out 2> err)
    st=$?
    if [ "$st" = 0 ] && [ "$(cat "$d/out")" = started ]; then
        pass "$LABEL:linger/daemon-lets-go"
    else
        fail "$LABEL:linger/daemon-lets-go" "exit $st, printed '$(head -c 200 "$d/out")': $(head -c 200 "$d/err")"
    fi
    (cd "$d" && timeout "$TIMEOUT" "$HV" run --linger --verify -- sh -c "$bg" > out 2> err)
    st=$?
    if [ "$st" = 0 ] && grep -q '^hvrun: verify: deterministic' "$d/err" &&
        [ "$(cat "$d/out")" = "$native" ]; then
        pass "$LABEL:linger/verify"
    else
        fail "$LABEL:linger/verify" "exit $st: $(head -c 200 "$d/err")"
    fi
}

# ---- container/*: namespaces hvrun refuses, as a container refuses them ----------
#
# hvrun refuses mount namespaces and mounts with EPERM (it keeps no mount
# table). What needs them must fail as in an unprivileged container,
# natively emulated by tests/processes/nsdeny.c (Docker's default seccomp
# profile: unshare, setns, namespace clones and mounts EPERM), with the
# same message and exit status: bwrap as root and as nobody, mount(8) and
# umount(8) as root.

# container_compare NAME COMMAND...: stderr and a non-zero status alike.
container_compare() {
    local name=$1 d=$WORK/container
    shift
    mkdir -p "$d"
    (cd "$d" && env -i "${GUEST_ENV[@]}" timeout "$TIMEOUT" "$NSDENY" "$@" \
        > n.out 2> n.err)
    local nst=$?
    (cd "$d" && env -i "${GUEST_ENV[@]}" timeout "$TIMEOUT" "$HV" run -- "$@" \
        > h.out 2> h.all)
    local hst=$?
    grep -v '^hvrun: ' "$d/h.all" > "$d/h.err"
    if [ "$nst" = "$hst" ] && [ "$nst" != 0 ] && cmp -s "$d/n.err" "$d/h.err"; then
        pass "$LABEL:container/$name"
    else
        fail "$LABEL:container/$name" "native $nst '$(head -c 200 "$d/n.err")', hvrun $hst '$(head -c 200 "$d/h.err")'"
    fi
}

container_cases() {
    local bwrap mount umount setpriv
    NSDENY=$WORK/nsdeny
    bwrap=$(prog bwrap) mount=$(prog mount) umount=$(prog umount)
    setpriv=$(prog setpriv)
    if [ -z "$bwrap" ] || [ -z "$mount" ] || [ -z "$setpriv" ] ||
        ! cc -o "$NSDENY" "$ROOT/tests/processes/nsdeny.c" -lseccomp 2>/dev/null; then
        skip "$LABEL:container/*" "bwrap, mount, setpriv or libseccomp-dev missing"
        return
    fi
    local args=(--ro-bind / / --dev /dev --proc /proc true)
    container_compare bwrap-root "$bwrap" "${args[@]}"
    container_compare bwrap-nobody "$setpriv" --reuid 65534 --regid 65534 \
        --clear-groups "$bwrap" "${args[@]}"
    container_compare mount "$mount" -t tmpfs none /mnt
    container_compare umount "$umount" /mnt
}

# A run started in a directory of the host's /tmp sees it through the
# private /tmp as the directory it is (the entry is linked in like a bind
# mount): realpath of the cwd is the path, not ELOOP (gdb's library
# lookup failed on it).
tmp_cwd_case() {
    local full=$LABEL:tmp/cwd-realpath dir out
    dir=$(mktemp -d /tmp/proc-cwd-test.XXXXXX) || {
        fail "$full" "mktemp failed"
        return
    }
    out=$(cd "$dir" && timeout "$TIMEOUT" "$HV" run -- sh -c \
        'realpath .; readlink -f "$PWD"; test -L "$PWD" && echo link; test -d "$PWD" && echo dir; echo x > f; cat f' 2>&1)
    local want
    want=$(printf '%s\n%s\ndir\nx' "$dir" "$dir")
    if [ "$out" = "$want" ] && [ -f "$dir/f" ]; then
        pass "$full"
    else
        fail "$full" "got '$(printf %s "$out" | tr '\n' '|')', wanted '$(printf %s "$want" | tr '\n' '|')'"
    fi
    rm -rf "$dir"
}

# An AF_UNIX socket a guest binds under /tmp is in its private /tmp, not
# the host's (tests/guest/unix_tmp_path.c compares what the guest sees
# with native; here the host side: nothing left in the host's /tmp).
tmp_unix_socket_case() {
    local full=$LABEL:tmp/unix-socket-private out
    rm -f /tmp/unix-tmp-path.stream
    out=$(cd "$WORK" && timeout "$TIMEOUT" "$HV" run -- \
        "$GUEST_DIR/unix_tmp_path" keep 2>&1)
    if [ -e /tmp/unix-tmp-path.stream ]; then
        fail "$full" "the socket file is in the host's /tmp"
        rm -f /tmp/unix-tmp-path.stream
    elif ! printf '%s\n' "$out" | grep -q '^bind: ok$'; then
        fail "$full" "got '$(printf %s "$out" | tr '\n' '|')'"
    else
        pass "$full"
    fi
}

# A tracer's hardware watchpoint and breakpoint (tests/processes/
# hw_breakpoints.c): as natively under --backend ptrace (the stub's own
# debug registers) and under kvm (where the host gives the guest none,
# kvm_pvm, hvrun keeps them by single-stepping the tracee).
hw_breakpoints_case() {
    local full=$LABEL:ptrace/hw-breakpoints prog=$WORK/hw_breakpoints
    if ! command -v cc > /dev/null ||
        ! cc -O0 -o "$prog" "$ROOT/tests/processes/hw_breakpoints.c" 2> /dev/null; then
        skip "$full" "no C compiler to build the test program"
        return
    fi
    local native pt kvm
    native=$("$prog" 2>&1)
    if [[ $native != *"si_code 4, DR6 0x2"* ]]; then
        skip "$full" "this host gives no hardware breakpoints natively (a kvm-pvm guest's kernel): '$(printf %s "$native" | tr '\n' '|' | cut -c1-120)'"
        return
    fi
    pt=$(timeout "$TIMEOUT" "$HV" run --backend ptrace -- "$prog" 2>&1)
    kvm=$(timeout "$TIMEOUT" "$HV" run -- "$prog" 2>&1)
    if [ "$pt" = "$native" ] && [ "$kvm" = "$native" ] &&
        [[ $native == *"si_code 4, DR6 0x2"* ]]; then
        pass "$full"
    else
        fail "$full" "native '$(printf %s "$native" | tr '\n' '|')', ptrace '$(printf %s "$pt" | tr '\n' '|')', kvm '$(printf %s "$kvm" | tr '\n' '|')'"
    fi
}

# A CPUID the stub answers costs no exit: 2000 of them make fewer than
# 100 exceptions (a host's ld.so may have sites no stub fits, which trap);
# so do 2000 through spans that start at the leaf's mov, before the CPUID
# (`cpuid_inline back N`: two sites, N times each). Under kvm too, where
# the stubs answer from the VM's table (a CPUID's exit to KVM is no exit
# hvrun sees: the sites in the guest are what is checked there).
cpuid_in_guest_case() {
    cpuid_in_guest_backend ptrace
    if [ -e "$KVM_DEV" ]; then
        cpuid_in_guest_backend kvm
    fi
}

cpuid_in_guest_backend() {
    local backend=$1
    local full=$LABEL:cpuid/in-guest-$backend prog=$GUEST_DIR/cpuid_inline
    if [ ! -x "$prog" ]; then
        fail "$full" "$prog not built"
        return
    fi
    local out err exc args
    for args in "2000" "back 1000"; do
        # shellcheck disable=SC2086 # two words on purpose
        err=$(timeout "$TIMEOUT" "$HV" run --backend "$backend" --summary-json -- \
            "$prog" $args 2>&1 >/dev/null)
        # shellcheck disable=SC2086
        out=$(timeout "$TIMEOUT" "$HV" run --backend "$backend" -- "$prog" $args 2>&1)
        exc=$(grep -o '"exception_exits": [0-9]*' <<<"$err" | grep -o '[0-9]*$')
        if [ "$out" != "2000 cpuids" ] || [ -z "$exc" ] || [ "$exc" -ge 100 ] ||
            ! grep -q '"cpuid_sites_in_guest": [1-9]' <<<"$err"; then
            fail "$full" "$args: printed '$out', $exc exceptions: $err"
            return
        fi
    done
    pass "$full"
}

TMP_LINGER=$WORK/linger

for hvarg in "$@"; do
    LABEL=$hvarg
    ID=${hvarg//\//_}
    case $hvarg in
    /*) HV=$hvarg ;;
    *) HV=$PWD/$hvarg ;;
    esac
    if [ ! -e "$KVM_DEV" ] && needs_kvm "$HV"; then
        skip_all "no $KVM_DEV on this host (hvrun needs KVM)"
        continue
    fi
    if [ ! -x "$HV" ]; then
        fail "$LABEL:setup" "$HV is not an executable (build it first)"
        continue
    fi
    for_each_case "$SAME_TABLE" same_case
    for_each_case "$VERIFY_TABLE" verify_case
    changes_case
    cache_case
    linger_cases
    pid_model_cases
    host_pid_cases
    container_cases
    tmp_cwd_case
    tmp_unix_socket_case
    hw_breakpoints_case
    cpuid_in_guest_case
    gcc_cases
done

finish
