#!/usr/bin/env bash
# tests/record/run.sh HVRUN [HVRUN...]
#
# `hvrun record` and `hvrun replay` (cli/cmd_record.c). For each binary:
#   rec/NAME       record -o FILE of a case, then replay FILE: the same
#                  stdout and exit status, and "identical to the recording"
#   verify/NAME    record --verify of the case: exit status as recorded,
#                  the replay identical
#   stdin-fed      a replay reads the recorded stdin, not its own
#   copied         a recording copied to a fresh directory replays
#   cross-backend  recorded under kvm, replayed under ptrace, and back
#   file-changed, file-deleted  `cat FILE | sha256sum; ls -l FILE` replays
#                  the recorded bytes after FILE changed or was deleted
#   program-replaced  the program a recording ran was replaced on the host:
#                  the replay runs the recorded one
#   listing-replayed  `ls -l DIR` replays the recorded listing after a file
#                  was added to DIR
#   stat-replayed  `stat -c %s FILE` replays the recorded size after FILE
#                  grew (the stat of a path is recorded, opened or not)
#   readlink-replayed  `readlink LINK; test -r FILE` replays the recorded
#                  answers after LINK was pointed elsewhere
#   diverged       a file the run opened read-write (not recorded yet)
#                  changed: the replay says it diverged and exits 121, never
#                  a silent wrong replay
#   host-time-and-random  date and /dev/urandom under --no-virtualize-time
#                  --no-virtualize-random: the replay prints the recorded
#                  values (the host's, from the recording)
#   list-rm-clean  recordings under $XDG_DATA_HOME/hvrun/recordings: list
#                  shows them, rm ID removes one, clean the rest
#   corrupt        10 truncations and 100 single-bit flips of a recording:
#                  each refused with one line, exit 125
# Prints PASS/FAIL/SKIP per case and "N passed, N failed[, N skipped]".
set -u

if [ $# -lt 1 ]; then
    echo "usage: $0 HVRUN [HVRUN...]" >&2
    exit 2
fi
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
KVM_DEV=${HVRUN_TEST_KVM_DEV:-/dev/kvm}
TIMEOUT=${HVRUN_TEST_TIMEOUT:-120}
# shellcheck source=../lib.sh
. "$ROOT/tests/lib.sh"

WORK=$(mktemp -d /var/tmp/hvrun-record-tests.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export XDG_DATA_HOME=$WORK/data
G=$ROOT/build/guest
PY=/usr/bin/python3

# One case per line: name | command (a shell word list). Every case gets
# "one\ntwo\n" on stdin when recorded and /dev/null when replayed. gcc
# works in the guest's private /tmp: a replay re-runs the program on the
# host's files, so a run that changes its own inputs (a prog.c it wrote
# in the working directory) diverges when replayed after it (reported).
CASES=$(cat <<END_OF_CASES
single     | $G/hello_pie
pipeline   | sh -c 'seq 1 100000 | grep 7 | sort -r | head'
fork-kill  | $PY $ROOT/tests/record/fork_kill.py
threads    | $G/race_print
py-async   | $PY $ROOT/tests/record/threads_async.py
stdin      | sh -c 'read a; read b; echo "got \$a and \$b"'
tcp        | $PY $ROOT/tests/record/tcp_loopback.py
gcc        | sh -c 'cd /tmp && printf "int main(void){return 7;}\\n" > prog.c && gcc -o prog prog.c && ./prog; echo \$?'
END_OF_CASES
)

hv() { timeout -k 5 "$TIMEOUT" "$HV" "$@"; }

# rec_case NAME CMD...: record, replay, compare; then record --verify.
rec_case() {
    local name=$1
    shift
    local d=$WORK/$ID.$name st1 st2
    mkdir -p "$d"
    (cd "$d" && printf 'one\ntwo\n' | hv record -o rec.hvrec -- "$@" > rec.out 2> rec.err)
    st1=$?
    if [ ! -s "$d/rec.hvrec" ]; then
        fail "$L:rec/$name" "no recording (exit $st1): $(head -c 300 "$d/rec.err")"
        return
    fi
    (cd "$d" && hv replay rec.hvrec < /dev/null > rep.out 2> rep.err)
    st2=$?
    if [ "$st1" = "$st2" ] && cmp -s "$d/rec.out" "$d/rep.out" &&
        grep -q '^hvrun: replay: identical to the recording' "$d/rep.err"; then
        pass "$L:rec/$name"
    else
        fail "$L:rec/$name" "record exit $st1, replay exit $st2; $(grep '^hvrun: replay' "$d/rep.err" | head -n 1)"
    fi
    (cd "$d" && printf 'one\ntwo\n' | hv record --verify -o v.hvrec -- "$@" > v.out 2> v.err)
    st2=$?
    if [ "$st1" = "$st2" ] && cmp -s "$d/rec.out" "$d/v.out" &&
        grep -q '^hvrun: replay: identical to the recording' "$d/v.err"; then
        pass "$L:verify/$name"
    else
        fail "$L:verify/$name" "record exit $st1, record --verify exit $st2; $(grep '^hvrun: replay' "$d/v.err" | head -n 1)"
    fi
}

for_each_case() {
    local line name cmd
    while IFS= read -r line; do
        [ -n "$line" ] || continue
        name=$(trim "${line%%|*}")
        cmd=$(trim "${line#*|}")
        eval "set -- $cmd"
        rec_case "$name" "$@"
    done <<< "$CASES"
}

# A recording made under one backend replays under the other.
cross_backend_case() {
    local d=$WORK/$ID.cross bad="" from to
    mkdir -p "$d"
    for from in kvm ptrace; do
        to=ptrace
        [ $from = ptrace ] && to=kvm
        (cd "$d" && hv record --backend $from -o $from.hvrec -- "$PY" \
            "$ROOT/tests/record/threads_async.py" > $from.out 2> /dev/null)
        (cd "$d" && hv replay --backend $to $from.hvrec > $to.out 2> $to.err)
        if ! cmp -s "$d/$from.out" "$d/$to.out" ||
            ! grep -q '^hvrun: replay: identical' "$d/$to.err"; then
            bad="$bad $from->$to: $(grep '^hvrun: replay' "$d/$to.err" | head -n 1)"
        fi
    done
    if [ -z "$bad" ]; then
        pass "$L:cross-backend (kvm->ptrace, ptrace->kvm)"
    else
        fail "$L:cross-backend" "$bad"
    fi
}

stdin_and_copy_cases() {
    local d=$WORK/$ID.misc out
    mkdir -p "$d/elsewhere"
    (cd "$d" && printf 'recorded\n' | hv record -o in.hvrec -- sh -c 'read x; echo "read $x"' > /dev/null 2>&1)
    out=$(cd "$d" && printf 'other\n' | hv replay in.hvrec 2> /dev/null)
    if [ "$out" = "read recorded" ]; then
        pass "$L:stdin-fed"
    else
        fail "$L:stdin-fed" "replay printed '$out'"
    fi
    cp "$d/in.hvrec" "$d/elsewhere/copy.hvrec"
    out=$(cd "$d/elsewhere" && hv replay copy.hvrec 2> /dev/null < /dev/null)
    if [ "$out" = "read recorded" ]; then
        pass "$L:copied"
    else
        fail "$L:copied" "replay of the copy printed '$out'"
    fi
}

# replays_same NAME DIR CHANGE CMD...: record CMD in DIR, run the shell
# command CHANGE there (the host changes), replay: the same stdout and
# status, and "identical to the recording".
replays_same() {
    local name=$1 d=$2 change=$3 st1 st2
    shift 3
    (cd "$d" && hv record -o "$name.hvrec" -- "$@" > "$name.rec.out" 2> /dev/null)
    st1=$?
    (cd "$d" && eval "$change")
    (cd "$d" && hv replay "$name.hvrec" > "$name.out" 2> "$name.err")
    st2=$?
    if [ "$st1" = "$st2" ] && cmp -s "$d/$name.rec.out" "$d/$name.out" &&
        grep -q '^hvrun: replay: identical' "$d/$name.err"; then
        pass "$L:$name"
    else
        fail "$L:$name" "record exit $st1, replay exit $st2: $(head -c 300 "$d/$name.err")"
    fi
}

diverged_cases() {
    local d=$WORK/$ID.div st
    mkdir -p "$d/dir"
    # What the guest read of a file is in the recording: the replay prints
    # the recorded bytes after the file changed, and after it was deleted.
    echo abc > "$d/f.txt"
    replays_same file-changed "$d" 'echo xyz > f.txt' \
        sh -c 'cat f.txt | sha256sum; ls -l f.txt'
    echo abc > "$d/f.txt"
    replays_same file-deleted "$d" 'rm -f f.txt' \
        sh -c 'cat f.txt | sha256sum; ls -l f.txt'
    # The program execve loads is recorded too: replaced on the host since,
    # the replay still runs the recorded one.
    cp "$G/hello_pie" "$d/prog"
    replays_same program-replaced "$d" "cp '$G/hello_static' prog" ./prog
    # Directory listings are recorded: a file added since is not listed.
    touch "$d/dir/a"
    replays_same listing-replayed "$d" 'touch dir/b' ls -l dir
    # The stat of a path is recorded, whether or not the run opened it.
    echo 12345 > "$d/size.txt"
    replays_same stat-replayed "$d" 'echo 1234567890 > size.txt' \
        stat -c %s size.txt
    # A symlink's target and an access check are recorded.
    ln -sfn first "$d/lnk"
    replays_same readlink-replayed "$d" 'ln -sfn second-target lnk' \
        sh -c 'readlink lnk; test -r size.txt && echo r'
    # A file opened for reading and writing is not recorded yet: a replay
    # after it changed says it diverged (exit 121), never passes as a good
    # replay.
    echo before > "$d/rw.txt"
    (cd "$d" && hv record -o w.hvrec -- "$PY" -c 'print(open("rw.txt", "r+").read())' > /dev/null 2>&1)
    echo after > "$d/rw.txt"
    (cd "$d" && hv replay w.hvrec > /dev/null 2> w.err)
    st=$?
    if [ "$st" = 121 ] && grep -q '^hvrun: replay: diverged from the recording' "$d/w.err"; then
        pass "$L:diverged"
    else
        fail "$L:diverged" "exit $st: $(head -c 300 "$d/w.err")"
    fi
    # The host's time and randomness are in the recording: replayed.
    (cd "$d" && hv record --no-virtualize-time --no-virtualize-random \
        -o t.hvrec -- sh -c 'date +%s.%N; od -An -tx1 -N16 /dev/urandom' \
        > t.rec.out 2> /dev/null)
    sleep 0.2
    (cd "$d" && hv replay t.hvrec > t.out 2> t.err)
    st=$?
    if [ "$st" = 0 ] && cmp -s "$d/t.rec.out" "$d/t.out" &&
        grep -q '^hvrun: replay: identical' "$d/t.err" &&
        [ "$(head -c 4 "$d/t.out")" -gt 1700 ]; then
        pass "$L:host-time-and-random"
    else
        fail "$L:host-time-and-random" "exit $st: $(head -c 300 "$d/t.err")"
    fi
}

list_cases() {
    local d=$WORK/$ID.list id n line
    rm -rf "$XDG_DATA_HOME"
    mkdir -p "$d"
    (cd "$d" && hv record -- echo listed > /dev/null 2> rec.err)
    id=$(sed -n 's/^hvrun: record: \([^ ]*\) .*/\1/p' "$d/rec.err")
    sleep 1 # ids are to the second
    (cd "$d" && hv record -- true > /dev/null 2>&1)
    n=$(hv record list | wc -l)
    line=$(hv record list | grep -F "$id")
    if [ -z "$id" ] || [ "$n" != 2 ] || [[ $line != *"exit 0"*"echo listed"* ]]; then
        fail "$L:list-rm-clean" "id '$id', $n listed: $(hv record list | head -c 300)"
        return
    fi
    if ! (cd "$d" && hv replay "$id" > /dev/null 2>&1) || ! hv record rm "$id" ||
        [ "$(hv record list | wc -l)" != 1 ] || hv record rm "$id" 2> /dev/null; then
        fail "$L:list-rm-clean" "replay ID / rm ID"
        return
    fi
    hv record clean > /dev/null
    if [ "$(hv record list | wc -l)" = 0 ]; then
        pass "$L:list-rm-clean"
    else
        fail "$L:list-rm-clean" "clean left: $(hv record list)"
    fi
}

corrupt_case() {
    local d=$WORK/$ID.bad size i bad="" st lines
    mkdir -p "$d"
    (cd "$d" && hv record -o good.hvrec -- sh -c 'echo corrupt me' > /dev/null 2>&1)
    size=$(stat -c %s "$d/good.hvrec")
    for i in $(seq 1 10); do
        head -c $((size * i / 11)) "$d/good.hvrec" > "$d/cut.hvrec"
        (cd "$d" && hv replay cut.hvrec > /dev/null 2> cut.err)
        st=$?
        lines=$(wc -l < "$d/cut.err")
        { [ "$st" = 125 ] && [ "$lines" = 1 ]; } || bad="$bad cut$i:$st/$lines"
    done
    "$PY" "$ROOT/tests/record/flip_bits.py" "$d/good.hvrec" "$d" 100
    for i in $(seq 1 100); do
        (cd "$d" && hv replay "flip$i.hvrec" > /dev/null 2> flip.err)
        st=$?
        lines=$(wc -l < "$d/flip.err")
        { [ "$st" = 125 ] && [ "$lines" = 1 ]; } || bad="$bad flip$i:$st/$lines"
    done
    if [ -z "$bad" ]; then
        pass "$L:corrupt (10 truncations, 100 bit flips refused)"
    else
        fail "$L:corrupt" "not refused with one line and 125:$bad"
    fi
}

for hvarg in "$@"; do
    L=$hvarg
    ID=${hvarg//\//_}
    case $hvarg in
    /*) HV=$hvarg ;;
    *) HV=$PWD/$hvarg ;;
    esac
    if [ ! -e "$KVM_DEV" ]; then
        skip "$L:record" "no $KVM_DEV on this host"
        continue
    fi
    for_each_case
    cross_backend_case
    stdin_and_copy_cases
    diverged_cases
    list_cases
    corrupt_case
done
finish
