#!/usr/bin/env bash
# run-guest-tests.sh HVRUN [HVRUN...]
#
# For each hvrun binary given:
#   (a) every guest program in build/guest/ runs natively and under
#       `HVRUN run -- PROG`; stdout and exit status must match (and match
#       the expected status when the table gives one); the self-checking
#       programs of HVRUN_ONLY_PROGRAMS run under hvrun only;
#   (b) the real-program matrix: the same comparison for ordinary Debian
#       programs on a fixture directory this script creates;
#   (c) error cases: a missing program (127), a non-ELF file and a FIFO
#       (126).
# Prints "PASS name" / "FAIL name: reason" / "SKIP name: reason" per case,
# then "N passed, N failed[, N skipped]". Exits 1 if anything failed.
#
# Environment: HVRUN_TEST_TIMEOUT (seconds per run, default 120; the
# programs of GUEST_LONG_PROGRAMS in tests/lib.sh: HVRUN_TEST_LONG_TIMEOUT),
# GUEST_DIR (default build/guest next to this script's tests/ directory),
# HVRUN_TEST_KVM_DEV (default /dev/kvm; without it everything is skipped),
# HVRUN_TEST_ONLY (shell patterns, space separated: only the cases whose
# name, e.g. guest/mqueue or matrix/ls-la, matches one of them run),
# HVRUN_TEST_JOBS (cases run at once, default the number of CPUs, at
# most 4; tests/lib.sh): the programs of GUEST_SERIAL_PROGRAMS
# (tests/lib.sh) run alone.
#
# Each case's native run is made once and is the reference for every
# HVRUN given (the first binary's case makes it, a later one reuses it).

# The table callbacks are called through for_each_case.
# shellcheck disable=SC2317
set -u

if [ $# -lt 1 ]; then
    echo "usage: $0 HVRUN [HVRUN...]" >&2
    exit 2
fi

ROOT=$(cd "$(dirname "$0")/.." && pwd)
GUEST_DIR=${GUEST_DIR:-$ROOT/build/guest}
SUITE_TIMEOUT=${HVRUN_TEST_TIMEOUT:-120}
TIMEOUT=$SUITE_TIMEOUT
KVM_DEV=${HVRUN_TEST_KVM_DEV:-/dev/kvm}

# ---- the tables -------------------------------------------------------------
#
# One case per line: name | status | stdin | command
#   status  "=" means "whatever the native run gives"; a number is checked
#           for both the native and the hvrun run.
#   stdin   "-" is /dev/null; "FILE" redirects a fixture file; "pipe:FILE"
#           feeds the fixture file through a pipe (cat FILE | PROG).
#   command split like a shell word list; the first word is looked up in
#           PATH once and both runs use the same absolute path.
# Guest programs: the command is the program's name in build/guest plus
# arguments. A built guest program missing from the table runs without
# arguments and must exit 0.

GUEST_TABLE=$(cat <<'EOF'
hello_static    | 0   | -  | hello_static
hello_nopie     | 0   | -  | hello_nopie
hello_pie       | 0   | -  | hello_pie
mem             | 0   | -  | mem
segv_handler    | 0   | -  | segv_handler
sig_default     | 139 | -  | sig_default
fileops         | 0   | -  | fileops
badptr          | 0   | -  | badptr
fpu_signal      | 0   | -  | fpu_signal
exitcode-0      | 0   | -  | exitcode 0
exitcode-42     | 42  | -  | exitcode 42
exitcode-255    | 255 | -  | exitcode 255
det_sources     | 0   | -  | det_sources --check
trap_spin_wait-rdtsc | 0 | - | trap_spin_wait --rdtsc
tsc_prctl       | 0   | -  | tsc_prctl
pid_model-term  | 143 | -  | pid_model --term-self
EOF
)

# Guest programs whose hvrun result differs from Linux by design (none yet):
# their names, space separated; they are run but only reported as SKIP.
DIFFERENT_BY_DESIGN=""

# Guest programs that check hvrun's own model, which no native run has
# (proc_init: /proc/1 of the run's virtual init, where natively pid 1 is
# the host's init; scoped_walk_renames: that no scoped openat2 walk fails
# with the EAGAIN a host rename can give one natively): they check themselves, run under hvrun only and must
# exit with the expected status (the table's, else 0).
HVRUN_ONLY_PROGRAMS="proc_init scoped_walk_renames"

# Guest programs run under hvrun with virtual time kept (they print no
# clock values): what they check needs it (tsc_prctl: on kvm_pvm, RDTSC
# traps only at the sites rewritten under virtual time; alarm_busy_child:
# there the timer falls at the same call of the child in every run, so how
# late its signal is delivered does not depend on the host's speed;
# dontneed_text_tsc, text_write_tsc: RDTSC is rewritten only under virtual time;
# cputime_sleep: the CPU clocks the proxy keeps per thread are virtual
# time's; clock_threads: it checks the vDSO's counted clock reads, which
# only virtual time has: with host time passed through each of its
# 600,000 reads is a system call, 18-23 s a run here against 0.2 s).
VIRTUAL_TIME_PROGRAMS="tsc_prctl alarm_busy_child dontneed_text_tsc text_write_tsc cputime_sleep clock_threads"
KEEP_TIME=""


MATRIX_TABLE=$(cat <<'EOF'
echo            | 0 | -               | echo hi
true            | 0 | -               | true
false           | 1 | -               | false
cat             | 0 | -               | cat text.txt
ls-la           | 0 | -               | ls -la lsdir
wc              | 0 | -               | wc text.txt big.txt
sha256sum       | 0 | -               | sha256sum big.bin
md5sum          | 0 | -               | md5sum big.bin
base64          | 0 | -               | base64 mixed.bin
sort            | 0 | -               | sort words.txt
uniq            | 0 | -               | uniq -c sorted.txt
sed             | 0 | -               | sed -e 's/o/0/g' -e '/^#/d' text.txt
awk             | 0 | -               | awk '{ n += NF; s = s $1 } END { print NR, n, length(s) }' text.txt
tr              | 0 | pipe:text.txt   | tr a-z A-Z
od              | 0 | -               | od -c small.bin
factor          | 0 | -               | factor 1234567
seq             | 0 | -               | seq 10
gzip            | 0 | -               | gzip -c big.txt
bzip2           | 0 | -               | bzip2 -c big.txt
xz              | 0 | -               | xz -c big.txt
zstd            | 0 | -               | zstd -q -c big.txt
openssl         | 0 | -               | openssl dgst -sha256 big.bin
sqlite3         | 0 | -               | sqlite3 :memory: 'select 1+1; select sqlite_version();'
perl            | 0 | -               | perl -e 'print 6*7, "\n"'
python3         | 0 | -               | /usr/bin/python3 -c 'import json, hashlib; print(json.dumps({"h": hashlib.sha256(b"x").hexdigest()}))'
bc              | 0 | pipe:bc.in      | bc -l
EOF
)

# ---- bookkeeping --------------------------------------------------------------

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

# Calls FN name status stdin command for each non-comment line of a table.
for_each_case() {
    local table=$1 fn=$2 name status stdin cmd
    # fd 3, so that nothing the cases run can eat the table.
    while IFS='|' read -r -u 3 name status stdin cmd; do
        # trim_to, not $(trim): a subshell per field cost ~10 s a suite.
        trim_to name "$name"
        case $name in '' | '#'*) continue ;; esac
        trim_to status "$status"
        trim_to stdin "$stdin"
        trim_to cmd "$cmd"
        "$fn" "$name" "$status" "$stdin" "$cmd"
    done 3<<<"$table"
}

# ---- the scratch area and its fixtures ----------------------------------------

TMP=$(mktemp -d "${TMPDIR:-/tmp}/hvrun-guest-tests.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
FIX=$TMP/fixture
OUT=$TMP/out
WORK=$TMP/work
mkdir -p "$FIX" "$OUT" "$WORK"

make_fixtures() (
    set -e
    cd "$FIX"
    cat >text.txt <<'EOF'
# a comment line that sed deletes
The quick brown fox jumps over the lazy dog.
Pack my box with five dozen liquor jugs.
How vexingly quick daft zebras jump!
  indented line with    several   spaces
tabs	between	words	here
# another comment
Sphinx of black quartz, judge my vow.
last line without a trailing newline
EOF
    printf 'no newline at the end' >>text.txt
    # Deterministic words with duplicates (a multiplicative sequence).
    i=0
    while [ $i -lt 3000 ]; do
        echo "w$(((i * 7919) % 997))"
        i=$((i + 1))
    done >words.txt
    LC_ALL=C sort words.txt >sorted.txt
    # A few MB for the compressors and digests.
    seq 1 100000 | sed 's/$/ lorem ipsum dolor sit amet/' >big.txt
    gzip -n -9 -c big.txt >big.bin
    cat big.txt >>big.bin
    head -c 100000 big.bin >mixed.bin
    printf 'hello\tworld\n\000\001\177\200\377 end\r\n' >small.bin
    printf '4*a(1)\n' >bc.in
    # The ls -la directory: fixed names, sizes, modes and times.
    mkdir lsdir lsdir/subdir
    printf 'alpha\n' >lsdir/alpha.txt
    head -c 5000 big.txt >lsdir/beta.dat
    : >lsdir/empty
    printf '#!/bin/sh\nexit 0\n' >lsdir/script.sh
    chmod 0755 lsdir/script.sh
    chmod 0600 lsdir/beta.dat
    ln -s alpha.txt lsdir/link
    ln lsdir/alpha.txt lsdir/hardlink.txt
    for f in lsdir/alpha.txt lsdir/beta.dat lsdir/empty lsdir/script.sh \
        lsdir/subdir; do
        touch -d '2021-02-03 04:05:06.5 UTC' "$f"
    done
    touch -h -d '2020-01-01 00:00:00 UTC' lsdir/link
    touch -d '2022-12-31 23:59:59 UTC' lsdir
    # Not an ELF, but executable: hvrun must refuse it with 126.
    printf 'this is plain text, not a program\n' >not-an-elf.txt
    chmod 0755 not-an-elf.txt
    touch -d '2021-01-01 00:00:00 UTC' .
)

if ! make_fixtures; then
    fail "fixtures" "could not create the fixture directory in $FIX"
    finish
fi

# The environment every program gets, natively and under hvrun.
# HVRUN_BACKEND (the Makefile sets it where there is no /dev/kvm) is
# kept: hvrun reads its default backend there.
GUEST_ENV=(${HVRUN_BACKEND:+"HVRUN_BACKEND=$HVRUN_BACKEND"} PATH=/usr/local/bin:/usr/bin:/bin HOME="$FIX" LC_ALL=C LANG=C
    TZ=UTC TERM=dumb)
for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do
    if [ -n "${!v:-}" ]; then GUEST_ENV+=("$v=${!v}"); fi
done

# No core files from native crashes; the soft limit only, so a program may
# raise its own (tests/guest/core_dump.c), as under hvrun, whose guests
# start with RLIMIT_CORE 0 and an unlimited hard limit.
ulimit -S -c 0 2>/dev/null

# ---- running one program ------------------------------------------------------

# run_prog HVRUN_OR_EMPTY CWD STDIN OUTFILE ERRFILE PROG ARGS...
# Runs natively (empty HVRUN) or under HVRUN; prints the exit status.
run_prog() {
    local hv=$1 cwd=$2 in=$3 out=$4 err=$5
    shift 5
    local pre=()
    # File times, inode numbers and clocks are virtualised by default, which
    # no native run can match: compare with those sources passed through
    # (tests/determinism/ covers the default mode).
    if [ -n "$hv" ] && [ -n "$KEEP_TIME" ]; then
        pre=("$hv" run --no-virtualize-metadata --)
    elif [ -n "$hv" ]; then
        pre=("$hv" run --no-virtualize-metadata --no-virtualize-time --)
    fi
    local src=/dev/null pipe=""
    case $in in
    - | '') ;;
    pipe:*) pipe=$FIX/${in#pipe:} ;;
    *) src=$FIX/$in ;;
    esac
    local status
    {
        if [ -n "$pipe" ]; then
            cat -- "$pipe" | (cd "$cwd" && exec timeout -k 5 "$TIMEOUT" \
                env -i "${GUEST_ENV[@]}" "${pre[@]}" "$@" >"$out" 2>"$err")
        else
            (cd "$cwd" && exec timeout -k 5 "$TIMEOUT" \
                env -i "${GUEST_ENV[@]}" "${pre[@]}" "$@" <"$src" >"$out" \
                2>"$err")
        fi
        status=$?
    } 2>/dev/null
    echo "$status"
}

describe_output() {
    local f=$1
    local bytes sum
    bytes=$(wc -c <"$f")
    sum=$(sha256sum <"$f" | cut -c1-12)
    printf '%s bytes sha256 %s' "$bytes" "$sum"
}

first_line() {
    local l
    l=$(head -n 1 "$1" | cut -c1-160)
    printf '%s' "${l:-(empty)}"
}

# compare NAME WANT_STATUS NATIVE_STATUS HV_STATUS BASE
# BASE.native/.hvrun hold stdout, BASE.hvrun.err hvrun's stderr.
compare() {
    local name=$1 want=$2 nst=$3 hst=$4 base=$5
    if { [ "$hst" = 124 ] || [ "$hst" = 137 ]; } && [ "$nst" != "$hst" ]; then
        fail "$name" "hvrun run timed out after ${TIMEOUT}s (status $hst); stderr: $(first_line "$base.hvrun.err")"
        return
    fi
    if [ "$want" != "=" ] && [ "$nst" != "$want" ]; then
        fail "$name" "the native run itself exited $nst, expected $want (test environment problem?); stderr: $(first_line "$base.native.err")"
        return
    fi
    local problems=""
    if [ "$hst" != "$nst" ]; then
        problems="exit status: native $nst, hvrun $hst"
    fi
    if ! cmp -s "$base.native" "$base.hvrun"; then
        local d
        d=$(cmp "$base.native" "$base.hvrun" 2>&1 | head -n 1 |
            sed -e "s|$base\.||g")
        problems="${problems:+$problems; }stdout differs (native $(describe_output "$base.native"), hvrun $(describe_output "$base.hvrun"); $d)"
        if [ "$(wc -c <"$base.hvrun")" -lt 2000 ] &&
            [ "$(wc -c <"$base.native")" -lt 2000 ]; then
            local dl
            dl=$(diff "$base.native" "$base.hvrun" | grep '^[<>]' | head -n 2 |
                tr '\n' ' ' | cut -c1-200)
            problems="$problems; diff: $dl"
        fi
    fi
    if [ -n "$problems" ]; then
        fail "$name" "$problems; hvrun stderr: $(first_line "$base.hvrun.err")"
    else
        pass "$name"
    fi
}

# selected NAME: whether HVRUN_TEST_ONLY (if set) lets case NAME run.
selected() {
    [ -z "${HVRUN_TEST_ONLY:-}" ] && return 0
    local pat
    for pat in $HVRUN_TEST_ONLY; do
        # shellcheck disable=SC2053
        [[ $1 == $pat ]] && return 0
    done
    return 1
}

# run_case LABEL HVRUN NAME WANT STDIN CWD PROG ARGS...
# CWD "fresh" gives each run its own empty directory.
run_case() {
    local label=$1 hv=$2 name=$3 want=$4 in=$5 cwd=$6
    shift 6
    local id=${label//\//_}.${name//\//_}
    local base=$OUT/$id nbase=$OUT/native.${name//\//_} ncwd=$cwd hcwd=$cwd
    selected "$name" || return 0
    if [ "$cwd" = fresh ]; then
        ncwd=$WORK/native.${name//\//_}
        hcwd=$WORK/$id.hvrun
        mkdir -p "$hcwd"
    fi
    local nst hst why
    nst=$(native_reference "$nbase" "$ncwd" "$in" "$@")
    cp "$nbase.out" "$base.native"
    cp "$nbase.err" "$base.native.err"
    why=$(native_unfit "$name" "$base.native")
    if [ -n "$why" ]; then
        skip "$label:$name" "$why"
        return 0
    fi
    hst=$(run_prog "$hv" "$hcwd" "$in" "$base.hvrun" "$base.hvrun.err" "$@")
    compare "$label:$name" "$want" "$nst" "$hst" "$base"
}

# native_reference NBASE CWD STDIN PROG ARGS...: a case's native run,
# made once (NBASE.out, NBASE.err, NBASE.status) and reused for every
# HVRUN; prints its exit status. The first binary's case makes it; a
# later binary's case, which may start while that one still runs beside
# it, waits for it.
native_reference() {
    local nbase=$1 ncwd=$2 in=$3
    shift 3
    if mkdir "$nbase.lock" 2>/dev/null; then
        [ -d "$ncwd" ] || mkdir -p "$ncwd"
        run_prog "" "$ncwd" "$in" "$nbase.out" "$nbase.err" "$@" \
            >"$nbase.status.tmp"
        mv "$nbase.status.tmp" "$nbase.status"
    else
        while [ ! -e "$nbase.status" ]; do sleep 0.05; done
    fi
    cat "$nbase.status"
}

# native_unfit NAME NATIVE_STDOUT: why this host's native run of case NAME
# is no reference for Linux's behaviour, or nothing.
native_unfit() {
    case $1 in
    tsc_prctl | */tsc_prctl)
        # A kernel that is itself a kvm-pvm guest takes PR_SET_TSC but
        # cannot have CR4.TSD honoured: RDTSC still reads in SIGSEGV mode.
        if grep -qx 'rdtsc: read' "$2"; then
            echo "this host's kernel accepts PR_TSC_SIGSEGV but RDTSC still reads (CR4.TSD not honoured, a kvm-pvm guest): the native run is no reference"
        fi ;;
    file_attr | */file_attr)
        # file_getattr is Linux 6.17's: an older host has no reference.
        if grep -q '^not checked here: ' "$2"; then
            sed -n 's/^not checked here: //p' "$2" | head -n 1
        fi ;;
    core_dump | */core_dump)
        # hvrun names cores by the host's core_pattern and gives guests an
        # unlimited hard RLIMIT_CORE; natively either may rule cores out.
        if grep -q '^not checked here: ' "$2"; then
            sed -n 's/^not checked here: //p' "$2" | head -n 1
        fi ;;
    esac
}

# run_hvrun_only LABEL HVRUN NAME WANT STDIN CWD PROG ARGS...
# A self-checking program of HVRUN_ONLY_PROGRAMS: no native run to compare
# with, so its exit status decides; a failure shows its first FAIL line.
run_hvrun_only() {
    local label=$1 hv=$2 name=$3 want=$4 in=$5 cwd=$6
    shift 6
    local id=${label//\//_}.${name//\//_}
    local base=$OUT/$id hcwd=$cwd
    selected "$name" || return 0
    if [ "$cwd" = fresh ]; then
        hcwd=$WORK/$id.hvrun
        mkdir -p "$hcwd"
    fi
    [ "$want" = "=" ] && want=0
    local hst seen
    hst=$(run_prog "$hv" "$hcwd" "$in" "$base.hvrun" "$base.hvrun.err" "$@")
    if [ "$hst" = "$want" ]; then
        pass "$label:$name"
        return
    fi
    seen=$(grep -m 1 '^FAIL' "$base.hvrun" | cut -c1-160)
    fail "$label:$name" "exit status $hst, expected $want (hvrun only, no native run); stdout: ${seen:-$(first_line "$base.hvrun")}; hvrun stderr: $(first_line "$base.hvrun.err")"
}

# guest_run LABEL HVRUN NAME WANT STDIN CWD PROG ARGS...: run_case, or
# run_hvrun_only for the programs of HVRUN_ONLY_PROGRAMS (by program name).
# The programs of GUEST_SERIAL_PROGRAMS run alone, the others beside
# others.
guest_run() {
    local prog fn=run_case par=par_case
    prog=${7##*/}
    if [[ $GUEST_LONG_PROGRAMS == *" $prog "* ]] && [ "$2" != "$FIRST_HVRUN" ] &&
        needs_kvm "$2"; then
        skip "$1:$3" "long under kvm (GUEST_LONG_PROGRAMS, tests/lib.sh): run with the suite's first hvrun only; each build runs it under ptrace"
        return
    fi
    local TIMEOUT # run_prog's and compare's, for this case
    TIMEOUT=$(time_limit_for "$prog" "$SUITE_TIMEOUT")
    if [[ " $HVRUN_ONLY_PROGRAMS " == *" $prog "* ]]; then
        fn=run_hvrun_only
    fi
    if [[ $GUEST_SERIAL_PROGRAMS == *" $prog "* ]]; then
        par=par_serial
    fi
    "$par" "$fn" "$@"
}

# ---- (a) guest programs ---------------------------------------------------------

CUR_LABEL=""
CUR_HVRUN=""
GUEST_SEEN=" "

guest_case() {
    local name=$1 want=$2 in=$3 cmd=$4
    local -a argv
    eval "argv=($cmd)"
    local prog=${argv[0]}
    GUEST_SEEN="$GUEST_SEEN$prog "
    selected "guest/$name" || return 0
    local full="$CUR_LABEL:guest/$name"
    if [ ! -x "$GUEST_DIR/$prog" ]; then
        fail "$full" "$GUEST_DIR/$prog is not built (make build/guest/$prog)"
        return
    fi
    argv[0]=$GUEST_DIR/$prog
    if [[ " $DIFFERENT_BY_DESIGN " == *" $name "* ]]; then
        skip "$full" "differs from Linux by design"
        return
    fi
    KEEP_TIME=""
    if [[ " $VIRTUAL_TIME_PROGRAMS " == *" $name "* ]]; then
        KEEP_TIME=1
    fi
    guest_run "$CUR_LABEL" "$CUR_HVRUN" "guest/$name" "$want" "$in" fresh \
        "${argv[@]}"
    KEEP_TIME=""
}

run_guest_programs() {
    GUEST_SEEN=" "
    for_each_case "$GUEST_TABLE" guest_case
    # Programs nobody added to the table: run them bare, expecting 0.
    local p n
    for p in "$GUEST_DIR"/*; do
        if [ ! -f "$p" ] || [ ! -x "$p" ]; then continue; fi
        n=${p##*/}
        [[ $GUEST_SEEN == *" $n "* ]] && continue
        selected "guest/$n" || continue
        KEEP_TIME=""
        if [[ " $VIRTUAL_TIME_PROGRAMS " == *" $n "* ]]; then
            KEEP_TIME=1
        fi
        guest_run "$CUR_LABEL" "$CUR_HVRUN" "guest/$n" 0 - fresh "$p"
        KEEP_TIME=""
    done
}

# ---- (b) the real-program matrix ------------------------------------------------

matrix_case() {
    local name=$1 want=$2 in=$3 cmd=$4
    local -a argv
    eval "argv=($cmd)"
    local full="$CUR_LABEL:matrix/$name" path
    selected "matrix/$name" || return 0
    path=$(PATH=/usr/local/bin:/usr/bin:/bin type -P "${argv[0]}")
    if [ -z "$path" ]; then
        skip "$full" "${argv[0]} is not installed (make deps installs it)"
        return
    fi
    argv[0]=$path
    # All read the fixture directory; none writes to it.
    par_case run_case "$CUR_LABEL" "$CUR_HVRUN" "matrix/$name" "$want" "$in" \
        "$FIX" "${argv[@]}"
}

# ---- (c) error cases -------------------------------------------------------------

# error_case NAME WANT_STATUS MUST_CONTAIN... -- PROG
error_case() {
    local name=$1 want=$2
    shift 2
    local -a needles=()
    while [ "$1" != "--" ]; do
        needles+=("$1")
        shift
    done
    shift
    selected "error/$name" || return 0
    local full="$CUR_LABEL:error/$name"
    local id=${CUR_LABEL//\//_}.error.$name
    local base=$OUT/$id
    mkdir -p "$WORK/$id"
    local st
    st=$(run_prog "$CUR_HVRUN" "$WORK/$id" - "$base.out" "$base.err" "$@")
    local problems="" lines
    [ "$st" = "$want" ] || problems="exit status $st, expected $want"
    lines=$(wc -l <"$base.err")
    if [ "$lines" != 1 ]; then
        problems="${problems:+$problems; }stderr has $lines lines, expected 1"
    fi
    local n
    for n in "${needles[@]}"; do
        if ! grep -qF -- "$n" "$base.err"; then
            problems="${problems:+$problems; }stderr does not mention '$n'"
        fi
    done
    if [ -s "$base.out" ]; then
        problems="${problems:+$problems; }unexpected stdout"
    fi
    if [ -n "$problems" ]; then
        fail "$full" "$problems; stderr: $(first_line "$base.err")"
    else
        pass "$full"
    fi
}

run_error_cases() {
    error_case missing-program 127 hvrun-no-such-program -- \
        hvrun-no-such-program
    error_case missing-path 127 /nonexistent/hvrun-no-such-program -- \
        /nonexistent/hvrun-no-such-program
    error_case not-elf 126 "$FIX/not-an-elf.txt" "not an ELF" -- \
        "$FIX/not-an-elf.txt"
    # An executable FIFO is not a regular file: refused at once, as Linux
    # refuses it (EACCES), without waiting for a writer.
    rm -f "$WORK/fifo-prog" && mkfifo -m 0755 "$WORK/fifo-prog"
    error_case fifo 126 "$WORK/fifo-prog" "not a regular file" -- \
        "$WORK/fifo-prog"
}

# ---- main -----------------------------------------------------------------------

skip_case() { skip "$CUR_LABEL:$SKIP_KIND/$1" "$SKIP_REASON"; }

FIRST_HVRUN=""
for hv in "$@"; do
    CUR_LABEL=$hv
    case $hv in
    /*) CUR_HVRUN=$hv ;;
    *) CUR_HVRUN=$PWD/$hv ;;
    esac
    FIRST_HVRUN=${FIRST_HVRUN:-$CUR_HVRUN}
    if [ ! -e "$KVM_DEV" ] && needs_kvm "$CUR_HVRUN"; then
        SKIP_REASON="no $KVM_DEV on this host (hvrun needs KVM)"
        SKIP_KIND=guest
        for_each_case "$GUEST_TABLE" skip_case
        SKIP_KIND=matrix
        for_each_case "$MATRIX_TABLE" skip_case
        SKIP_KIND=error
        for n in missing-program missing-path not-elf; do skip_case "$n"; done
        continue
    fi
    if [ ! -x "$CUR_HVRUN" ]; then
        fail "$CUR_LABEL:setup" "$CUR_HVRUN is not an executable (build it first)"
        continue
    fi
    run_guest_programs
    for_each_case "$MATRIX_TABLE" matrix_case
    run_error_cases
done

finish
