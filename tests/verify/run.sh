#!/usr/bin/env bash
# tests/verify/run.sh HVRUN [HVRUN...]
#
# --verify must leave the files exactly as ONE native run of the program
# leaves them, and touch nothing else. Each case builds the same starting
# tree twice, runs the program natively in one copy and under
# `HVRUN run --verify` in the other, and compares the two trees (names,
# types, link counts, sizes, modes, content hashes, symlink targets; names
# with newlines included). A directory next to them, which no program
# names, must not change at all. Every program first prints the tree it
# starts from, so run 2 starting from other files than run 1 shows up as
# "nondeterministic".
#
#   verify-files/newline-names     names containing "\n" that spell existing
#                                  names (x\nvictim.txt, y\nsrc/main.c):
#                                  the existing files survive
#   verify-files/hard-links        appends through a hard link to a file that
#                                  existed: contents back, link count and
#                                  inode kept
#   verify-files/hard-links-removed  removes links of such a file and makes
#                                  others: the removed ones come back as
#                                  links of the same file
#   verify-files/renamed-dirs      renames of directories that existed (into
#                                  another one, to a new name, a file in one
#                                  changed)
#   verify-files/mixed             atomic save over a file, rm of a file,
#                                  chmod, a symlink replaced, a directory
#                                  swapped for a symlink to the outside one
#   verify-files/unix-socket-file verify-files/foreign-file-kept bind(2) of an AF_UNIX path: the socket
#                                  file is removed before run 2
#   verify-files/foreign-file-kept a directory run 1 made, into which
#                                  someone else put a file meanwhile: kept
#   verify-files/sigint-run1       SIGINT during run 1, SIGTERM during run 2:
#   verify-files/sigterm-run2      exit 130/143 saying "interrupted", the tree
#                                  as it was before, no scratch dir left
#   verify-files/sigkill-swept     after SIGKILL of hvrun, the next hvrun run
#                                  removes the scratch dirs it left in /tmp
#
# Prints "PASS name" / "FAIL name: reason" / "SKIP name: reason" per case,
# then "N passed, N failed[, N skipped]". Exits 1 if anything failed.
# Environment: HVRUN_VERIFY_TIMEOUT (seconds per run, default 60),
# HVRUN_TEST_KVM_DEV (default /dev/kvm; without it everything is skipped).

# The start_* functions are called indirectly (fresh's argument) and the
# single-quoted programs are guest shell code.
# shellcheck disable=SC2317,SC2016
set -u

if [ $# -lt 1 ]; then
    echo "usage: $0 HVRUN [HVRUN...]" >&2
    exit 2
fi

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TIMEOUT=${HVRUN_VERIFY_TIMEOUT:-60}
KVM_DEV=${HVRUN_TEST_KVM_DEV:-/dev/kvm}
# HVRUN_BACKEND (the Makefile sets it where there is no /dev/kvm) is
# kept: hvrun reads its default backend there.
GUEST_ENV=(${HVRUN_BACKEND:+"HVRUN_BACKEND=$HVRUN_BACKEND"} PATH=/usr/bin:/bin HOME=/ LC_ALL=C LANG=C TZ=UTC)
for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do
    if [ -n "${!v:-}" ]; then GUEST_ENV+=("$v=${!v}"); fi
done

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

mkdir -p "$ROOT/build" || exit 1
WORK=$(mktemp -d "$ROOT/build/verify-tests.XXXXXX") || exit 1
BG=()
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
    local p
    for p in "${BG[@]}"; do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the tree listing ------------------------------------------------------------

# One line per entry below $1, in name order: the name (newlines and other
# bytes escaped), type, link count, size, mode, and a content hash (files)
# or the target (symlinks).
tree_of() {
    (
        cd "$1" || exit 1
        find . -mindepth 1 -printf '%P\0' | sort -z |
            while IFS= read -r -d '' f; do
                local what
                what=$(stat -c '%F %h %s %a' -- "$f")
                if [ -L "$f" ]; then
                    what="$what -> $(readlink -- "$f" | od -An -c | tr -s ' ')"
                elif [ -f "$f" ]; then
                    what="$what $(sha256sum <"$f" | cut -c1-16)"
                fi
                printf '%q %s\n' "$f" "$what"
            done
    )
}

# Both copies of the starting tree, made by the function named $1, and the
# untouched neighbour directory.
fresh() {
    rm -rf "$WORK/nat" "$WORK/hv" "$WORK/outside"
    mkdir -p "$WORK/nat" "$WORK/hv" "$WORK/outside"
    printf 'not yours\n' >"$WORK/outside/main.c"
    mkdir "$WORK/outside/sub"
    printf 'keep\n' >"$WORK/outside/sub/data"
    (cd "$WORK/nat" && "$1") && (cd "$WORK/hv" && "$1")
}

# What the program does first: print the tree it starts from (so that run
# 2 starting elsewhere than run 1 is caught by --verify).
SHOW_START='find . -printf "%P %y %n %s %m\n" | LC_ALL=C sort; cat ./* 2>/dev/null; '

# hv_verify NAME PROGRAM: the sh program natively in nat/, under --verify in
# hv/, then the comparisons. Extra checks come from $EXTRA_CHECK (a function
# name) if set.
hv_verify() {
    local name=$1 prog=$SHOW_START$2 st line outside_before diffs
    outside_before=$(tree_of "$WORK/outside")
    (cd "$WORK/nat" && env -i "${GUEST_ENV[@]}" /bin/sh -c "$prog" >/dev/null 2>&1)
    st=$(
        cd "$WORK/hv" &&
            timeout -k 5 "$TIMEOUT" env -i "${GUEST_ENV[@]}" \
                "$HV" run --verify -- /bin/sh -c "$prog" \
                </dev/null >"$WORK/out" 2>"$WORK/err"
        echo $?
    )
    line=$(grep -a '^hvrun: verify: ' "$WORK/err" | head -n 1 | cut -c1-300)
    if [ "$st" != 0 ] || [[ $line != "hvrun: verify: deterministic"* ]]; then
        fail "$name" "exit $st; ${line:-$(head -c 300 "$WORK/err" | tr '\n' ' ')}"
        return
    fi
    if grep -aq 'could not be undone\|cannot put back\|cannot remove\|cannot rename' "$WORK/err"; then
        fail "$name" "undo problems: $(grep -a 'hvrun: --verify' "$WORK/err" | head -n 3 | tr '\n' ' ')"
        return
    fi
    diffs=$(diff <(tree_of "$WORK/nat") <(tree_of "$WORK/hv") | head -n 12)
    if [ -n "$diffs" ]; then
        fail "$name" "tree after --verify differs from one native run: $(tr '\n' ' ' <<<"$diffs")"
        return
    fi
    if [ "$(tree_of "$WORK/outside")" != "$outside_before" ]; then
        fail "$name" "the directory next to it changed"
        return
    fi
    if [ -n "${EXTRA_CHECK:-}" ]; then
        local why
        why=$("$EXTRA_CHECK")
        if [ -n "$why" ]; then
            fail "$name" "$why"
            return
        fi
    fi
    pass "$name"
}

# ---- the cases --------------------------------------------------------------------

start_victims() {
    printf 'precious\n' >victim.txt
    mkdir src
    printf 'int main;\n' >src/main.c
}

case_newline_names() {
    fresh start_victims
    hv_verify "$L:verify-files/newline-names" '
        n=$(printf "x\nvictim.txt"); echo gone >"$n"
        d=$(printf "y\nsrc"); mkdir "$d"; echo gone >"$d/main.c"
        e=$(printf "\nz"); mkdir "$e"; echo z >"$e/$(printf "\nsrc")"'
}

start_links() {
    printf 'one\n' >a
    ln a b
    mkdir sub
    ln a sub/c
}

# Same inode for a, b and sub/c as before the run, three links.
same_inode() {
    local now
    now=$(stat -c '%i %h' "$WORK/hv/a" "$WORK/hv/b" "$WORK/hv/sub/c" | sort -u)
    [ "$now" = "$INODE_BEFORE 3" ] || echo "inode/link count of a, b, sub/c: '$(tr '\n' ' ' <<<"$now")', expected '$INODE_BEFORE 3'"
}

case_hard_links() {
    fresh start_links
    INODE_BEFORE=$(stat -c %i "$WORK/hv/a")
    EXTRA_CHECK=same_inode hv_verify "$L:verify-files/hard-links" '
        echo two >>b; echo three >>sub/c; chmod 600 a'
}

# a's inode as before, with the link count one native run leaves (a, b, b2).
same_inode_removed() {
    local now
    now=$(stat -c '%i %h' "$WORK/hv/a" "$WORK/hv/b" | sort -u)
    [ "$now" = "$INODE_BEFORE 3" ] || echo "inode/link count of a, b: '$(tr '\n' ' ' <<<"$now")', expected '$INODE_BEFORE 3'"
}

case_hard_links_removed() {
    fresh start_links
    INODE_BEFORE=$(stat -c %i "$WORK/hv/a")
    EXTRA_CHECK=same_inode_removed hv_verify "$L:verify-files/hard-links-removed" '
        echo two >>a; rm b; rm sub/c; ln a b2; echo b >b; rm b; ln a b'
}

start_dirs() {
    mkdir dirA dirB dirC
    printf 'a\n' >dirA/f
    mkdir dirA/deep
    printf 'deep\n' >dirA/deep/g
    printf 'c\n' >dirC/h
}

case_renamed_dirs() {
    fresh start_dirs
    hv_verify "$L:verify-files/renamed-dirs" '
        mv dirA dirB/; mv dirC dirD; echo more >>dirD/h
        mkdir dirA; echo new >dirA/f; mv dirB/dirA/deep dirA/'
}

start_mixed() {
    printf 'v1\n' >config
    chmod 640 config
    printf 'bye\n' >old.log
    ln -s config current
    mkdir src
    printf 'code\n' >src/main.c
    mkdir -p old/deeper
    printf 'x\n' >old/deeper/x
    chmod 700 old/deeper
}

case_mixed() {
    fresh start_mixed
    hv_verify "$L:verify-files/mixed" "
        echo v2 >config.tmp && mv config.tmp config; rm old.log
        chmod 755 src; rm current; ln -s old.log current
        mv src src.old; ln -s '$WORK/outside' src
        echo made >made; rm made; mv src.old/main.c made
        rm -r old; mkdir old; echo other >old/x"
}

start_empty() { :; }

case_socket_file() {
    local name=$L:verify-files/unix-socket-file py
    py=$(type -P python3)
    if [ -z "$py" ]; then
        skip "$name" "python3 is not installed"
        return
    fi
    fresh start_empty
    hv_verify "$name" "$py"' -c "import socket; socket.socket(socket.AF_UNIX).bind(\"s.sock\")"'
}

# The scratch dirs a run of hvrun pid $1 holds (their lock names the pid or
# a child of it).
scratch_of() {
    local d pid
    for d in /tmp/hvrun-tmp.* /tmp/hvrun-verify.*; do
        [ -f "$d/lock" ] || continue
        pid=$(cat "$d/lock" 2>/dev/null)
        [ -n "$pid" ] || continue
        if [ "$pid" = "$1" ] ||
            [ "$(awk '{print $4}' "/proc/$pid/stat" 2>/dev/null)" = "$1" ]; then
            echo "$d"
        fi
    done
}

# Starts --verify of the program in the background (pid in HVPID).
start_bg() {
    (
        cd "$WORK/hv" &&
            exec timeout -k 5 "$TIMEOUT" env -i "${GUEST_ENV[@]}" \
                "$HV" run --verify -- /bin/sh -c "$1" \
                </dev/null >"$WORK/out" 2>"$WORK/err"
    ) &
    TPID=$!
    BG+=("$TPID")
    HVPID=
    local _
    for _ in $(seq 200); do
        HVPID=$(pgrep -P "$TPID" -x hvrun | head -n 1)
        [ -n "$HVPID" ] && break
        sleep 0.05
    done
}

# wait_for COND: up to TIMEOUT seconds for the shell condition.
wait_for() {
    local _
    for _ in $(seq $((TIMEOUT * 20))); do
        eval "$1" && return 0
        sleep 0.05
    done
    return 1
}

start_interrupt() {
    printf 'orig\n' >a
    mkdir d
    printf 'in d\n' >d/f
}

LOOP_PROG='echo x >>a; mkdir newd; echo n >newd/f; mv d d2; : >started; while :; do :; done'
# Run 1 reads a line from the fifo (the test writes it), run 2 blocks there.
GATE_PROG='echo x >>a; mkdir newd; echo n >newd/f; mv d d2; : >started; read x <"$GATE"'

# case_interrupt NAME SIGNAL RUN: the signal during run RUN (1 or 2).
case_interrupt() {
    local name=$1 sig=$2 run=$3 want
    want=$((128 + $(kill -l "$sig")))
    fresh start_interrupt
    local before st dirs
    before=$(tree_of "$WORK/hv")
    rm -f "$WORK/gate"
    mkfifo "$WORK/gate"
    if [ "$run" = 2 ]; then
        GUEST_ENV+=("GATE=$WORK/gate")
        start_bg "$GATE_PROG"
        unset 'GUEST_ENV[${#GUEST_ENV[@]}-1]'
    else
        start_bg "$LOOP_PROG"
    fi
    if [ -z "$HVPID" ]; then
        fail "$name" "hvrun did not start"
        return
    fi
    if [ "$run" = 2 ]; then
        local vdir # read by the wait_for condition
        wait_for '[ -e "$WORK/hv/started" ]'
        # shellcheck disable=SC2034
        vdir=$(scratch_of "$HVPID" | grep hvrun-verify | head -n 1)
        echo go >"$WORK/gate" # run 1 goes on and ends
        wait_for '[ -d "$vdir/journal2" ] && [ -e "$WORK/hv/started" ]' ||
            { fail "$name" "run 2 did not start"; return; }
    else
        wait_for '[ -e "$WORK/hv/started" ]' ||
            { fail "$name" "the program did not start"; return; }
    fi
    dirs=$(scratch_of "$HVPID")
    kill -s "$sig" "$HVPID"
    wait "$TPID"
    st=$?
    local problems="" d
    [ "$st" = "$want" ] || problems="exit $st, expected $want;"
    grep -aq "^hvrun: verify: interrupted by SIG$sig during run $run" "$WORK/err" ||
        problems="$problems no 'interrupted by SIG$sig during run $run' line (stderr: $(head -c 200 "$WORK/err" | tr '\n' ' '));"
    ! grep -aq 'nondeterministic' "$WORK/err" || problems="$problems says nondeterministic;"
    [ "$(tree_of "$WORK/hv")" = "$before" ] ||
        problems="$problems tree not restored: $(diff <(echo "$before") <(tree_of "$WORK/hv") | head -n 6 | tr '\n' ' ');"
    [ -n "$dirs" ] || problems="$problems found no scratch dirs of the run to check;"
    for d in $dirs; do
        [ ! -e "$d" ] || problems="$problems $d left;"
    done
    if [ -z "$problems" ]; then pass "$name"; else fail "$name" "${problems% }"; fi
}

# A directory run 1 made that holds a file someone else put there while
# run 1 ran: it is left (and said so), the file survives.
case_foreign_file_kept() {
    local name=$L:verify-files/foreign-file-kept
    fresh start_empty
    rm -f "$WORK/gate"
    mkfifo "$WORK/gate"
    GUEST_ENV+=("GATE=$WORK/gate")
    start_bg 'mkdir made; echo mine >made/mine; : >started; read x <"$GATE"; echo done'
    unset 'GUEST_ENV[${#GUEST_ENV[@]}-1]'
    wait_for '[ -e "$WORK/hv/started" ]' ||
        { fail "$name" "the program did not start"; return; }
    echo theirs >"$WORK/hv/made/theirs"
    # Let run 1 and then run 2 go on past the gate. A write that finds
    # the reader gone is EPIPE, not the loop's death by SIGPIPE (which
    # left run 2 waiting at the gate until the timeout).
    (trap '' PIPE; while :; do echo go >"$WORK/gate"; done) 2>/dev/null &
    local gate_pid=$!
    BG+=("$gate_pid")
    wait "$TPID"
    local st=$?
    kill "$gate_pid" 2>/dev/null
    wait "$gate_pid" 2>/dev/null
    local problems=""
    # Run 2 starts with made/ kept, so its mkdir fails: the runs differ.
    [ "$st" = 120 ] || problems="exit $st, expected 120 (runs that differ);"
    [ "$(cat "$WORK/hv/made/theirs" 2>/dev/null)" = theirs ] ||
        problems="the file run 1 did not make is gone;"
    grep -aq "left (it holds files the run did not make): .*made" "$WORK/err" ||
        problems="$problems no line saying made/ was left (stderr: $(head -c 300 "$WORK/err" | tr '\n' ' '));"
    if [ -z "$problems" ]; then pass "$name"; else fail "$name" "${problems% }"; fi
}

case_sigkill_swept() {
    local name=$L:verify-files/sigkill-swept
    fresh start_interrupt
    # The private /tmp is made at the guest's first use of /tmp
    # (syscall-proxy/fs/hermetic.c): this run uses it.
    start_bg ": >/tmp/used; $LOOP_PROG"
    wait_for '[ -e "$WORK/hv/started" ]' ||
        { fail "$name" "the program did not start"; return; }
    local dirs d left="" problems=""
    dirs=$(scratch_of "$HVPID")
    [ "$(wc -w <<<"$dirs")" -ge 2 ] ||
        problems="expected a private /tmp and a verify dir, found '$dirs';"
    kill -KILL "$HVPID"
    wait "$TPID" 2>/dev/null
    sleep 0.2 # the run itself dies of PR_SET_PDEATHSIG
    for d in $dirs; do [ -e "$d" ] && left="$left $d"; done
    # A live run's scratch must survive the sweep: one running meanwhile.
    start_bg ': >started2; while :; do :; done'
    wait_for '[ -e "$WORK/hv/started2" ]'
    local live
    live=$(scratch_of "$HVPID")
    (cd "$WORK" && timeout -k 5 "$TIMEOUT" "$HV" run -- /bin/true) ||
        problems="$problems a run after it failed;"
    for d in $dirs; do
        [ ! -e "$d" ] || problems="$problems $d not removed by the next run;"
    done
    for d in $live; do
        [ -e "$d" ] || problems="$problems the live run's $d was removed;"
    done
    [ -n "$live" ] || problems="$problems no scratch dirs of the live run found;"
    kill -INT "$HVPID"
    wait "$TPID" 2>/dev/null
    [ -n "$left" ] || echo "  (note: $name: the killed run's dirs were gone before the sweep)"
    if [ -z "$problems" ]; then pass "$name"; else fail "$name" "${problems% }"; fi
}

ALL_CASES="verify-files/newline-names verify-files/hard-links
verify-files/hard-links-removed verify-files/renamed-dirs verify-files/mixed
verify-files/unix-socket-file verify-files/foreign-file-kept
verify-files/sigint-run1
verify-files/sigterm-run2 verify-files/sigkill-swept"

for hvarg in "$@"; do
    L=$hvarg
    case $hvarg in
    /*) HV=$hvarg ;;
    *) HV=$PWD/$hvarg ;;
    esac
    if [ ! -e "$KVM_DEV" ] && needs_kvm "$HV"; then
        for c in $ALL_CASES; do skip "$L:$c" "no $KVM_DEV on this host (hvrun needs KVM)"; done
        continue
    fi
    if [ ! -x "$HV" ]; then
        fail "$L:setup" "$HV is not an executable (build it first)"
        continue
    fi
    case_newline_names
    case_hard_links
    case_hard_links_removed
    case_renamed_dirs
    case_mixed
    case_socket_file
    case_foreign_file_kept
    case_interrupt "$L:verify-files/sigint-run1" INT 1
    case_interrupt "$L:verify-files/sigterm-run2" TERM 2
    case_sigkill_swept
done

finish
