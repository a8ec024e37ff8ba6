#!/usr/bin/env bash
# tests/record/run.sh HVRUN [HVRUN...]
#
# `hvrun record` and `hvrun replay` (cli/cmd_record.c). For each binary:
#   rec/NAME       record -o FILE of a case, then replay FILE: the same
#                  stdout and exit status, and "identical to the recording"
#   verify/NAME    record --verify of the case: exit status as recorded,
#                  the replay identical
#                  (rec/stdio-links: the links of fds 0-2, the files
#                  hvrun made them, read the same in the record, the
#                  replay and record --verify: /tmp/hvrun-capture/...)
#   stdin-fed      a replay reads the recorded stdin, not its own
#   copied         a recording copied to a fresh directory replays
#   plain-file-name  `replay NAME` of a file NAME here that is no id
#   cross-backend  recorded under kvm, replayed under ptrace, and back
#   file-changed, file-deleted  `cat FILE | sha256sum; ls -l FILE` replays
#                  the recorded bytes after FILE changed or was deleted
#   program-replaced  the program a recording ran was replaced on the host:
#                  the replay runs the recorded one
#   program-deleted  ... and after it was deleted
#   listing-replayed  `ls -l DIR` replays the recorded listing after a file
#                  was added to DIR
#   stat-replayed  `stat -c %s FILE` replays the recorded size after FILE
#                  grew (the stat of a path is recorded, opened or not)
#   readlink-replayed  `readlink LINK; test -r FILE` replays the recorded
#                  answers after LINK was pointed elsewhere
#   rw-restored    a file the run opened read-write and wrote changed on
#                  the host: the replay starts from the recorded bytes
#   rw-untouched   ... and leaves the host's file as it was
#   reread-served  a file read twice replays after it changed
#   fifo-from-outside  a FIFO written by a process outside the run (cat
#                  alone; head beside a shell, the writer there first) and
#                  one read outside: replayed after they and the FIFO were
#                  gone, under kvm and ptrace (the open does not wait);
#                  record --verify
#   fifo-writer-silent  head beside a shell reads a FIFO whose outside
#                  writer opened first and writes only later, and one whose
#                  writer opens only while head waits: replayed after the
#                  writers and the FIFO were gone, kvm and ptrace
#   fifo-in-run    a FIFO both of whose ends are in the run (the reader
#                  first): replays (its open waits as recorded)
#   writes-off-host  a replay of a run that appends, creates, renames and
#                  removes changes nothing on the host (a listing with
#                  checksums of the tree is the same before and after)
#                  and leaves no scratch directory in /tmp
#   nonroot-writes-off-host  as uid 65534 (ptrace), a replay of a run that
#                  appends, creates, renames and removes in the user's own
#                  directory: identical, the tree's listing with checksums
#                  the same before, during (the guest paused between two
#                  marks) and after
#   nonroot-no-userns  ... with user namespaces refused (a seccomp filter of
#                  that process): the one-line message, identical, the
#                  files changed during the replay and undone after
#   dir-gone       the directory the run ran in was removed: the replay
#                  (from elsewhere) is identical, the directory still gone
#   outside-server  three connections to a server outside the run (its
#                  replies carry fresh random bytes, sent 50 ms apart):
#                  the replay after the server was stopped prints the
#                  recorded replies, under kvm and under ptrace; and
#                  record --verify with the server up (the replay does not
#                  reach it)
#   outside-refused  a connect to outside that was refused replays refused
#                  after a server listens on that port
#   outside-udp    a UDP client (connect/select with a timeout/recv, and
#                  sendto/recvfrom with SO_RCVTIMEO) of a server outside the
#                  run whose three replies to each query carry fresh random
#                  bytes, 50 ms apart: replayed after the server stopped,
#                  under kvm and ptrace (the replies, their source the
#                  server's); and record --verify with the server up
#   outside-udp-refused  the same client with no server there (a connected
#                  socket's ECONNREFUSED, a recvfrom that times out):
#                  replays the same while a server answers on that port
#   outside-unix   an AF_UNIX stream client of a server outside the run (a
#                  relative path and an abstract name; one reply passes
#                  fds, refused): replayed after the server stopped, under
#                  kvm and ptrace; and record --verify with it up
#   outside-unix-refused  connects to a socket file nobody listens on
#                  (ECONNREFUSED) and to a missing path (ENOENT): replay
#                  the same errors while a server listens at both
#   outside-unix-dgram  syslog-like AF_UNIX datagrams (logger -d -u, and
#                  unix_dgram_client.py's unnamed sends) to a server outside
#                  the run at a relative path and an abstract name, and a
#                  named client's query with three replies (fresh random
#                  bytes, 50 ms apart; connect/select/recv and
#                  sendto/recvfrom with SO_RCVTIMEO; one of 150000 bytes
#                  with 100000-byte replies): as native (random
#                  bytes masked; the server got what it gets natively);
#                  replayed after the server stopped, under kvm and ptrace;
#                  a replay while a server is at both names sends it
#                  nothing; record --verify
#   outside-unix-dgram-refused  datagrams and a connect to a socket file
#                  nobody has bound (ECONNREFUSED) and to a missing path
#                  (ENOENT): as native; replay the same errors while a
#                  server is bound at both
#   outside-seqpacket  an AF_UNIX SOCK_SEQPACKET client (seqpacket_client.py)
#                  of a server outside the run (seqpacket_server.py) at a
#                  relative path and an abstract name: messages of 5, 0, 1
#                  and 100000 bytes each way, the server's with fresh
#                  random bytes, 50 ms apart: as native (random bytes
#                  masked; the server got what it gets natively, the empty
#                  message too); replayed after the server stopped, under
#                  kvm and ptrace; a replay while a server is at both names
#                  sends it nothing; record --verify
#   outside-seqpacket-refused  seqpacket connects to a socket file nobody
#                  listens on (ECONNREFUSED), a missing path (ENOENT) and a
#                  stream listener (EPROTOTYPE): as native; replay the same
#                  errors while a seqpacket server listens at all three
#   seqpacket-accepted-from-outside  a seqpacket server in the run
#                  (seqpacket_inrun_server.py, a relative path) and a
#                  client from outside (seqpacket_accept_client.py):
#                  messages of 10, 0, 100000 and 3 bytes in, replies with
#                  random bytes, an empty and a 1-byte message out: both
#                  sides as native (masked); replayed after the client
#                  ended, under kvm and ptrace, while a probe from outside
#                  finds nothing listening; record --verify
#   accepted-from-outside  a python server in the run (TCP over IPv4 and
#                  IPv6, AF_UNIX at a relative path) serves a client from
#                  outside on each (fresh random bytes both ways, 50 ms
#                  apart) and one from inside: as native (random bytes
#                  masked); replayed after the client ended, under kvm and
#                  ptrace, while a probe from outside finds nothing
#                  listening at the ports (refused); record --verify
#   accept-timed   a server in the run whose accept has a timeout: a
#                  client from outside during the wait (hvrun waited host
#                  time for it) and none at all (absent): each replays the
#                  same under kvm and ptrace, the absent one while a probe
#                  connects to the port at replay (refused)
#   udp-server-in-run  a UDP server in the run answers three queries from
#                  outside (a connected socket: replies must come from the
#                  port it bound; fresh random bytes) and one from inside:
#                  as native (masked); replayed after the client ended,
#                  under kvm and ptrace, while a probe from outside gets no
#                  answer; record --verify
#   unix-dgram-server-in-run  an AF_UNIX datagram server in the run at a
#                  relative path and an abstract name answers three queries
#                  from a named client outside (fresh random bytes both
#                  ways), takes one datagram from an unnamed sender outside
#                  (no address) and one from a client inside (sendto and
#                  connect): as native (masked); replayed after the client
#                  ended, under kvm and ptrace, while a probe outside sends
#                  to both names and none of its sends is taken; record
#                  --verify
#   multicast-in-run  a UDP socket of the run bound to the wildcard
#                  address joins a group on loopback and takes three
#                  datagrams a sender outside sends to it (fresh random
#                  bytes), with IP_MULTICAST_ALL as Linux has it (all) and
#                  0 set before the bind (own): as native (masked);
#                  replayed after the sender ended, under kvm and ptrace,
#                  while a sender to the group runs; record --verify
#   stopped-by-signal  a run of two computing threads stopped from outside
#                  by SIGINT (exit 130): recorded up to there; the replay
#                  stops at the same point (the same lines, exit 130),
#                  under kvm and under ptrace; the same for a pipeline
#                  whose cat waits on its pipe (/pipe) and for two C
#                  threads reading the clock through the vDSO (/clock)
#   host-time-and-random  date and /dev/urandom under --no-virtualize-time
#                  --no-virtualize-random: the replay prints the recorded
#                  values (the host's, from the recording)
#   host-timers    interval timers, alarm, POSIX timers and timerfds under
#                  --no-virtualize-time (tests/guest timers, alarm_spin,
#                  timerfd_test): the replay's timers fire where the
#                  recorded run's did (hvrun's own looks at the host clock
#                  are in the recording)
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
# The backends each replay is checked under: both where /dev/kvm is here.
REPLAY_BACKENDS="kvm ptrace"
[ -e "$KVM_DEV" ] || REPLAY_BACKENDS=ptrace
TIMEOUT=${HVRUN_TEST_TIMEOUT:-120}
# shellcheck source=../lib.sh
. "$ROOT/tests/lib.sh"

WORK=$(mktemp -d /var/tmp/hvrun-record-tests.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# cpu_seen HVRUN BACKEND: the CPU the guest's CPUID shows under BACKEND
# (--summary-json's cpu_seen).
cpu_seen() {
    local hv
    hv=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
    (cd "$WORK" && "$hv" run --backend "$2" --summary-json -- /bin/true 2>&1 \
        >/dev/null | grep -o '"cpu_seen": "[^"]*"')
}

# A recording replays under the other backend as it ran only where the
# guest sees the same CPU under both: code that reads CPUID picks its
# loops by it (glibc's string functions), and counted progress, so the
# logical time, follows them. Where the two differ (kvm_pvm: the model's
# identity with the host's features under kvm, the host's CPU under
# ptrace; any host where only one backend controls CPUID) the recordings
# of the default backend replay under it alone, and cross-backend records
# with --cpuid-rewrite (the model under both) and checks that a replay of
# a plain recording says that the CPU differed when it diverges.
CROSS_OPTS=()
if [ "$REPLAY_BACKENDS" != ptrace ] &&
    [ "$(cpu_seen "$1" kvm)" != "$(cpu_seen "$1" ptrace)" ]; then
    REPLAY_BACKENDS=${HVRUN_BACKEND:-kvm}
    CROSS_OPTS=(--cpuid-rewrite)
fi
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
stdio-links | sh -c 'readlink /proc/self/fd/0 /proc/self/fd/1 /proc/self/fd/2'
tcp        | $PY $ROOT/tests/record/tcp_loopback.py
in-run-sockets | $PY $ROOT/tests/record/inrun_sockets.py
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
        par_case rec_case "$name" "$@"
    done <<< "$CASES"
}

# A recording made under one backend replays under the other.
cross_backend_case() {
    local d=$WORK/$ID.cross bad="" from to
    if ! have_kvm; then
        skip "$L:cross-backend" "no /dev/kvm on this host (a recording made under kvm replayed under ptrace and back)"
        return
    fi
    mkdir -p "$d"
    for from in kvm ptrace; do
        to=ptrace
        [ $from = ptrace ] && to=kvm
        (cd "$d" && hv record --backend $from "${CROSS_OPTS[@]}" \
            -o $from.hvrec -- "$PY" "$ROOT/tests/record/threads_async.py" \
            > $from.out 2> /dev/null)
        (cd "$d" && hv replay --backend $to $from.hvrec > $to.out 2> $to.err)
        if ! cmp -s "$d/$from.out" "$d/$to.out" ||
            ! grep -q '^hvrun: replay: identical' "$d/$to.err"; then
            bad="$bad $from->$to: $(grep '^hvrun: replay' "$d/$to.err" | head -n 1)"
        fi
    done
    local plain="" st
    if [ ${#CROSS_OPTS[@]} -gt 0 ]; then
        # Without --cpuid-rewrite: identical, or a divergence that names
        # the CPU (never an unexplained one).
        plain=", --cpuid-rewrite; a plain recording's divergence names the CPU"
        (cd "$d" && hv record --backend kvm -o plain.hvrec -- "$PY" \
            "$ROOT/tests/record/threads_async.py" > plain.out 2> /dev/null)
        (cd "$d" && hv replay --backend ptrace plain.hvrec > plain.p.out 2> plain.p.err)
        st=$?
        if ! grep -q '^hvrun: replay: identical' "$d/plain.p.err" &&
            { [ "$st" != 121 ] ||
                ! grep -q "^hvrun: replay: the guest's CPU differed" "$d/plain.p.err"; }; then
            bad="$bad plain kvm->ptrace: exit $st, $(grep '^hvrun: replay' "$d/plain.p.err" | head -c 300)"
        fi
    fi
    if [ -z "$bad" ]; then
        pass "$L:cross-backend (kvm->ptrace, ptrace->kvm$plain)"
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
    # A plain file name that is no recording id is the file here.
    cp "$d/in.hvrec" "$d/elsewhere/plain-name"
    out=$(cd "$d/elsewhere" && hv replay plain-name 2> /dev/null < /dev/null)
    if [ "$out" = "read recorded" ]; then
        pass "$L:plain-file-name"
    else
        fail "$L:plain-file-name" "replay plain-name printed '$out'"
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
    # ... and one deleted since replays too (hvrun finds the recorded one).
    cp "$G/hello_pie" "$d/prog2"
    replays_same program-deleted "$d" "rm -f prog2" ./prog2
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
    # What a file the run opened read-write held before it is recorded:
    # changed on the host since, the replay starts from the recorded bytes,
    # and the host's file is left as it is.
    echo before > "$d/rw.txt"
    replays_same rw-restored "$d" 'echo after > rw.txt' \
        "$PY" -c 'f = open("rw.txt", "r+"); print(f.read()); f.write("x")'
    if [ "$(cat "$d/rw.txt")" = after ]; then
        pass "$L:rw-untouched"
    else
        fail "$L:rw-untouched" "rw.txt is now '$(head -c 100 "$d/rw.txt")'"
    fi
    # Something a replay cannot serve (a file the guest reads through a
    # path it did not read when recorded) and that changed: the replay
    # says it diverged (exit 121), never passes as a good replay.
    echo before > "$d/other.txt"
    (cd "$d" && hv record -o w.hvrec -- sh -c 'cat other.txt; cat other.txt' > /dev/null 2>&1)
    echo after > "$d/other.txt"
    (cd "$d" && hv replay w.hvrec > /dev/null 2> w.err)
    st=$?
    if [ "$st" = 0 ] && grep -q '^hvrun: replay: identical' "$d/w.err"; then
        pass "$L:reread-served"
    else
        fail "$L:reread-served" "exit $st: $(head -c 300 "$d/w.err")"
    fi
    fifo_cases "$d"
    fifo_silent_cases "$d"
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

# FIFOs whose other end is a process outside the run (net/outside_fifo.c):
# what an outside writer sent (fresh random bytes, 50 ms apart) replays
# after the writer and the FIFO are gone; a write for an outside reader
# goes out recording and is dropped replaying (the open does not wait).
fifo_cases() {
    local d=$1 st bad="" w
    rm -f "$d/fifo" && mkfifo "$d/fifo"
    (cd "$d" && timeout 60 sh -c 'exec 3> fifo; for i in 1 2 3; do od -An -tx1 -N4 /dev/urandom >&3; sleep 0.05; done') &
    w=$!
    (cd "$d" && hv record -o f.hvrec -- cat fifo > f.rec.out 2> f.rec.err)
    st=$?
    wait "$w"
    # A reader beside a shell (other guests alive): the writer outside
    # opened first and wrote already.
    "$PY" -c 'import os,sys,time
fd = os.open(sys.argv[1], os.O_RDWR)
for i in range(3):
    os.write(fd, b"line %d %s\n" % (i, os.urandom(4).hex().encode())); time.sleep(0.05)
time.sleep(1); os.close(fd)' "$d/fifo" &
    w=$!
    sleep 0.3
    (cd "$d" && hv record -o s.hvrec -- sh -c 'head -n 3 fifo; echo done' > s.rec.out 2> s.rec.err)
    local sst=$?
    wait "$w"
    (cd "$d" && timeout 60 cat fifo > reader.out) &
    w=$!
    (cd "$d" && hv record -o o.hvrec -- sh -c 'echo to-outside > fifo; echo done' > o.rec.out 2> o.rec.err)
    local ost=$?
    wait "$w"
    rm -f "$d/fifo"
    [ "$(wc -l < "$d/f.rec.out")" = 3 ] || bad="recorded: $(head -c 200 "$d/f.rec.out" "$d/f.rec.err");"
    grep -q '^line 2 ' "$d/s.rec.out" || bad="$bad recorded beside sh: $(head -c 200 "$d/s.rec.out" "$d/s.rec.err");"
    grep -q '^to-outside$' "$d/reader.out" || bad="$bad the outside reader got: $(head -c 100 "$d/reader.out");"
    bad="$bad$(replayed_both "$d" f "$st")$(replayed_both "$d" s "$sst")$(replayed_both "$d" o "$ost")"
    if [ -z "$bad" ]; then
        pass "$L:fifo-from-outside (writer and reader outside; replayed after they and the FIFO were gone, kvm and ptrace)"
    else
        fail "$L:fifo-from-outside" "$bad"
    fi
    mkfifo "$d/fifo"
    (cd "$d" && timeout 60 sh -c 'exec 3> fifo; for i in 1 2 3; do od -An -tx1 -N4 /dev/urandom >&3; sleep 0.05; done') &
    w=$!
    (cd "$d" && hv record --verify -o v.hvrec -- cat fifo > v.out 2> v.err)
    st=$?
    wait "$w"
    rm -f "$d/fifo"
    if [ "$st" = 0 ] && [ "$(wc -l < "$d/v.out")" = 3 ] &&
        grep -q '^hvrun: replay: identical' "$d/v.err"; then
        pass "$L:verify/fifo-from-outside"
    else
        fail "$L:verify/fifo-from-outside" "exit $st: $(grep '^hvrun' "$d/v.err" | head -c 300)"
    fi
}

# FIFOs whose outside writer is silent when the guest's reader opens
# (others alive: a shell waits for head): the writer opened first (it is
# there, has written nothing), or opens only while head waits in its open.
# Also a FIFO whose ends are both in the run, the reader first.
fifo_silent_cases() {
    local d=$1 st lst ist bad="" w
    local writer='import os,sys,time
time.sleep(float(sys.argv[2]))
fd = os.open(sys.argv[1], os.O_WRONLY)
time.sleep(0.3)
for i in range(3):
    os.write(fd, b"line %d %s\n" % (i, os.urandom(4).hex().encode())); time.sleep(0.05)
os.close(fd)'
    rm -f "$d/fifo" && mkfifo "$d/fifo"
    "$PY" -c "$writer" "$d/fifo" 0 &
    w=$!
    sleep 0.3 # the writer waits in its open: there before head's
    (cd "$d" && hv record -o q.hvrec -- sh -c 'head -n 3 fifo; echo done' > q.rec.out 2> q.rec.err)
    st=$?
    wait "$w"
    "$PY" -c "$writer" "$d/fifo" 0.3 &
    w=$!
    (cd "$d" && hv record -o l.hvrec -- sh -c 'head -n 3 fifo; echo done' > l.rec.out 2> l.rec.err)
    lst=$?
    wait "$w"
    (cd "$d" && hv record -o i.hvrec -- sh -c 'cat fifo & echo in-run > fifo; wait; echo done' > i.rec.out 2> i.rec.err)
    ist=$?
    [ "$(cat "$d/i.rec.out")" = "$(printf 'in-run\ndone')" ] || bad="in-run recorded: $(head -c 200 "$d/i.rec.out" "$d/i.rec.err");"
    bad="$bad$(replayed_both "$d" i "$ist")"
    if [ -z "$bad" ]; then
        pass "$L:fifo-in-run (the reader first; replayed, kvm and ptrace)"
    else
        fail "$L:fifo-in-run" "$bad"
    fi
    bad=""
    rm -f "$d/fifo"
    grep -q '^line 2 ' "$d/q.rec.out" || bad="recorded, writer first: $(head -c 200 "$d/q.rec.out" "$d/q.rec.err");"
    grep -q '^line 2 ' "$d/l.rec.out" || bad="$bad recorded, writer later: $(head -c 200 "$d/l.rec.out" "$d/l.rec.err");"
    bad="$bad$(replayed_both "$d" q "$st")$(replayed_both "$d" l "$lst")"
    if [ -z "$bad" ]; then
        pass "$L:fifo-writer-silent (opened first or while head waited; replayed after the writer and the FIFO were gone, kvm and ptrace)"
    else
        fail "$L:fifo-writer-silent" "$bad"
    fi
}

# An AF_UNIX datagram server outside the run (unix_dgram_server.py) at
# DIR/dg.sock and the abstract name $2, logging what it gets to DIR/$3;
# its pid in $DGRAM_PID.
start_dgram_server() {
    local i
    rm -f "$1/dg.sock" "$1/dg.sock.ready"
    # in DIR: the client's relative name is the server's too, natively
    (cd "$1" && exec "$PY" "$ROOT/tests/record/unix_dgram_server.py" "$1/dg.sock" "$2" "$1/$3") &
    DGRAM_PID=$!
    for i in $(seq 1 100); do
        [ -e "$1/dg.sock.ready" ] && break
        sleep 0.05
    done
}

stop_dgram_server() {
    kill "$DGRAM_PID" 2> /dev/null
    wait "$DGRAM_PID" 2> /dev/null
    rm -f "$1/dg.sock" "$1/dg.sock.ready"
}

# AF_UNIX datagrams to a server outside the run (unix_dgram_client.py):
# logger's and the client's; each run against a fresh server (its counts
# in the replies start again).
outside_unix_dgram_cases() {
    local d=$WORK/$ID.dgram st vst bad="" client=$ROOT/tests/record/unix_dgram_client.py
    local abs=hvrun-record-dgram-$$-$ID
    local run="logger -d -u dg.sock -t hvrun-test 'a line from logger' && \"$PY\" \"$client\" dg.sock @$abs"
    mkdir -p "$d"
    rm -f "$d"/*.log
    start_dgram_server "$d" "$abs" native.log
    (cd "$d" && sh -c "$run" > native.out 2>&1)
    stop_dgram_server "$d"
    start_dgram_server "$d" "$abs" rec.log
    (cd "$d" && hv record -o o.hvrec -- sh -c "$run" > o.rec.out 2> o.rec.err)
    st=$?
    stop_dgram_server "$d"
    start_dgram_server "$d" "$abs" verify.log
    (cd "$d" && hv record --verify -o v.hvrec -- sh -c "$run" > v.out 2> v.err)
    vst=$?
    stop_dgram_server "$d"
    { grep -q '^dgram 2 of u1 seen 9 ' "$d/o.rec.out" &&
        grep -q '^dgram 2 of 150004 bytes .*(100041 bytes)' "$d/o.rec.out" &&
        grep -q "^peer b'$d/dg.sock'" "$d/o.rec.out" &&
        cmp -s <(masked "$d/native.out") <(masked "$d/o.rec.out") &&
        grep -q 'hvrun-test: a line from logger$' "$d/rec.log" &&
        [ "$(grep -c '^<13>log line' "$d/rec.log")" = 4 ] &&
        cmp -s <(grep -v logger "$d/native.log") <(grep -v logger "$d/rec.log"); } ||
        bad="recorded (against native): $(head -c 300 "$d/o.rec.out" "$d/o.rec.err" "$d/rec.log");"
    bad="$bad$(replayed_both "$d" o "$st")"
    # A server at both names while replaying gets nothing.
    start_dgram_server "$d" "$abs" replay.log
    (cd "$d" && hv replay o.hvrec > o.up.out 2> o.up.err)
    local ust=$?
    stop_dgram_server "$d"
    { [ "$ust" = "$st" ] && cmp -s "$d/o.rec.out" "$d/o.up.out" &&
        [ ! -e "$d/replay.log" ]; } ||
        bad="$bad replayed beside a server: exit $ust, it got $(head -c 200 "$d/replay.log" 2>&1);"
    if [ -z "$bad" ]; then
        pass "$L:outside-unix-dgram (replayed after the server stopped, kvm and ptrace; as native; nothing sent at replay)"
    else
        fail "$L:outside-unix-dgram" "$bad"
    fi
    verified outside-unix-dgram "$d" "$vst" '^dgram 2 of q0'
    # A socket file nobody has bound, and no file: the errors replay while
    # a server is bound at both.
    rm -f "$d/dead.sock" "$d/none.sock"
    "$PY" -c 'import socket,sys; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).bind(sys.argv[1])' "$d/dead.sock"
    (cd "$d" && hv record -o r.hvrec -- "$PY" "$client" dead.sock none.sock > r.rec.out 2> r.rec.err)
    st=$?
    (cd "$d" && "$PY" "$client" dead.sock none.sock > r.native.out 2>&1)
    rm -f "$d/dead.sock"
    start_dgram_server "$d" "$abs" squat.log
    ln -s dg.sock "$d/dead.sock"
    ln -s dg.sock "$d/none.sock"
    bad=$(replayed_both "$d" r "$st")
    stop_dgram_server "$d"
    if [ -z "$bad" ] && grep -q '^connect failed: Connection refused' "$d/r.rec.out" &&
        grep -q '^sendto failed: No such file or directory' "$d/r.rec.out" &&
        cmp -s "$d/r.native.out" "$d/r.rec.out" && [ ! -e "$d/squat.log" ]; then
        pass "$L:outside-unix-dgram-refused"
    else
        fail "$L:outside-unix-dgram-refused" "$bad $(head -c 300 "$d/r.rec.out")"
    fi
}

# An AF_UNIX seqpacket server outside the run (seqpacket_server.py) at
# DIR/sq.sock and the abstract name $2, logging to DIR/$3; pid in $SEQ_PID.
start_seqpacket_server() {
    local i
    rm -f "$1/sq.sock" "$1/sq.sock.ready"
    (cd "$1" && exec "$PY" "$ROOT/tests/record/seqpacket_server.py" "$1/sq.sock" "$2" "$1/$3") &
    SEQ_PID=$!
    for i in $(seq 1 100); do
        [ -e "$1/sq.sock.ready" ] && break
        sleep 0.05
    done
}

stop_seqpacket_server() {
    kill "$SEQ_PID" 2> /dev/null
    wait "$SEQ_PID" 2> /dev/null
    rm -f "$1/sq.sock" "$1/sq.sock.ready"
}

# SOCK_SEQPACKET connections to a server outside the run
# (seqpacket_client.py); each run against a fresh server.
outside_seqpacket_cases() {
    local d=$WORK/$ID.seq st vst ust bad="" client=$ROOT/tests/record/seqpacket_client.py
    local abs=hvrun-record-seq-$$-$ID
    mkdir -p "$d"
    rm -f "$d"/*.log
    start_seqpacket_server "$d" "$abs" native.log
    (cd "$d" && "$PY" "$client" sq.sock "@$abs" > native.out 2>&1)
    stop_seqpacket_server "$d"
    start_seqpacket_server "$d" "$abs" rec.log
    (cd "$d" && hv record -o o.hvrec -- "$PY" "$client" sq.sock "@$abs" > o.rec.out 2> o.rec.err)
    st=$?
    stop_seqpacket_server "$d"
    start_seqpacket_server "$d" "$abs" verify.log
    (cd "$d" && hv record --verify -o v.hvrec -- "$PY" "$client" sq.sock "@$abs" > v.out 2> v.err)
    vst=$?
    stop_seqpacket_server "$d"
    { [ "$(grep -c '^message of 0 bytes: $' "$d/o.rec.out")" = 2 ] &&
        [ "$(grep -c '^message of 100000 bytes [0-9a-f]\{8\} repeated True$' "$d/o.rec.out")" = 2 ] &&
        [ "$(grep -c '^end$' "$d/o.rec.out")" = 2 ] &&
        grep -q "^peer '$d/sq.sock'" "$d/o.rec.out" &&
        grep -q "^peer b'.x00$abs'" "$d/o.rec.out" &&
        cmp -s <(masked "$d/native.out") <(masked "$d/o.rec.out") &&
        [ "$(grep -c ': message of 0 bytes$' "$d/rec.log")" = 2 ] &&
        cmp -s <(sort "$d/native.log") <(sort "$d/rec.log"); } ||
        bad="recorded (against native): $(head -c 300 "$d/o.rec.out" "$d/o.rec.err" "$d/rec.log");"
    bad="$bad$(replayed_both "$d" o "$st")"
    # A server at both names while replaying gets nothing.
    start_seqpacket_server "$d" "$abs" replay.log
    (cd "$d" && hv replay o.hvrec > o.up.out 2> o.up.err)
    ust=$?
    stop_seqpacket_server "$d"
    { [ "$ust" = "$st" ] && cmp -s "$d/o.rec.out" "$d/o.up.out" &&
        [ ! -e "$d/replay.log" ]; } ||
        bad="$bad replayed beside a server: exit $ust, it got $(head -c 200 "$d/replay.log" 2>&1);"
    if [ -z "$bad" ]; then
        pass "$L:outside-seqpacket (replayed after the server stopped, kvm and ptrace; as native; nothing sent at replay)"
    else
        fail "$L:outside-seqpacket" "$bad"
    fi
    verified outside-seqpacket "$d" "$vst" '^message of 13 bytes: last '
    # Nobody listening, no file, a stream listener: the errors replay
    # while a seqpacket server listens at all three.
    rm -f "$d/dead.sock" "$d/none.sock" "$d/stream.sock"
    "$PY" -c 'import socket,sys,time
socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).bind(sys.argv[1])
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[2])
s.listen()
open(sys.argv[2] + ".ready", "w").close()
time.sleep(60)' "$d/dead.sock" "$d/stream.sock" &
    local other=$! i
    for i in $(seq 1 100); do
        [ -e "$d/stream.sock.ready" ] && break
        sleep 0.05
    done
    (cd "$d" && hv record -o r.hvrec -- "$PY" "$client" dead.sock none.sock stream.sock > r.rec.out 2> r.rec.err)
    st=$?
    (cd "$d" && "$PY" "$client" dead.sock none.sock stream.sock > r.native.out 2>&1)
    kill "$other" 2> /dev/null
    wait "$other" 2> /dev/null
    rm -f "$d/dead.sock" "$d/stream.sock" "$d/stream.sock.ready"
    start_seqpacket_server "$d" "$abs" squat.log
    ln -s sq.sock "$d/dead.sock"
    ln -s sq.sock "$d/none.sock"
    ln -s sq.sock "$d/stream.sock"
    bad=$(replayed_both "$d" r "$st")
    stop_seqpacket_server "$d"
    if [ -z "$bad" ] && grep -q '^connect failed: Connection refused' "$d/r.rec.out" &&
        grep -q '^connect failed: No such file or directory' "$d/r.rec.out" &&
        grep -q '^connect failed: Protocol wrong type for socket' "$d/r.rec.out" &&
        cmp -s "$d/r.native.out" "$d/r.rec.out" && [ ! -e "$d/squat.log" ]; then
        pass "$L:outside-seqpacket-refused"
    else
        fail "$L:outside-seqpacket-refused" "$bad $(head -c 300 "$d/r.rec.out")"
    fi
}

# A server outside the run (tests/record/outside_server.py, or $2) in the
# background; its port in $OUTSIDE_PORT, its pid in $OUTSIDE_PID.
start_outside_server() {
    local portfile=$1/port i
    rm -f "$portfile"
    "$PY" "$ROOT/tests/record/${2:-outside_server.py}" "$portfile" &
    OUTSIDE_PID=$!
    for i in $(seq 1 100); do
        [ -s "$portfile" ] && break
        sleep 0.05
    done
    OUTSIDE_PORT=$(cat "$portfile" 2> /dev/null)
}

stop_outside_server() {
    kill "$OUTSIDE_PID" 2> /dev/null
    wait "$OUTSIDE_PID" 2> /dev/null
}

outside_cases() {
    local d=$WORK/$ID.out st bad="" b client=$ROOT/tests/record/outside_client.py
    mkdir -p "$d"
    start_outside_server "$d"
    (cd "$d" && hv record -o o.hvrec -- "$PY" "$client" "$OUTSIDE_PORT" > o.rec.out 2> o.rec.err)
    st=$?
    (cd "$d" && hv record --verify -o v.hvrec -- "$PY" "$client" "$OUTSIDE_PORT" > v.out 2> v.err)
    local vst=$?
    stop_outside_server
    grep -q '^chunk 2 of req2' "$d/o.rec.out" || bad="recorded: $(head -c 200 "$d/o.rec.out" "$d/o.rec.err");"
    for b in $REPLAY_BACKENDS; do
        (cd "$d" && hv replay --backend $b o.hvrec > o.$b.out 2> o.$b.err)
        if [ $? != "$st" ] || ! cmp -s "$d/o.rec.out" "$d/o.$b.out" ||
            ! grep -q '^hvrun: replay: identical' "$d/o.$b.err"; then
            bad="$bad $b: $(grep -v '^chunk\|^peer' "$d/o.$b.err" | head -c 300);"
        fi
    done
    if [ -z "$bad" ]; then
        pass "$L:outside-server (replayed after the server stopped, kvm and ptrace)"
    else
        fail "$L:outside-server" "$bad"
    fi
    if [ "$vst" = 0 ] && grep -q '^chunk 2 of req2' "$d/v.out" &&
        grep -q '^hvrun: replay: identical' "$d/v.err"; then
        pass "$L:verify/outside-server"
    else
        fail "$L:verify/outside-server" "exit $vst: $(grep '^hvrun' "$d/v.err" | head -c 300)"
    fi
    # A refused connect replays refused, whatever listens there now.
    (cd "$d" && hv record -o r.hvrec -- "$PY" "$client" "$OUTSIDE_PORT" > r.rec.out 2> /dev/null)
    start_outside_server "$d" # another port, most likely: listen on the old
    "$PY" -c 'import socket,sys,time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); time.sleep(30)' "$OUTSIDE_PORT" 2> /dev/null &
    local squatter=$!
    sleep 0.3
    (cd "$d" && hv replay r.hvrec > r.out 2> r.err)
    st=$?
    kill "$squatter" 2> /dev/null
    wait "$squatter" 2> /dev/null
    stop_outside_server
    if [ "$st" = 0 ] && grep -q '^connect failed' "$d/r.out" &&
        cmp -s "$d/r.rec.out" "$d/r.out" && grep -q '^hvrun: replay: identical' "$d/r.err"; then
        pass "$L:outside-refused"
    else
        fail "$L:outside-refused" "exit $st: $(head -c 300 "$d/r.out" "$d/r.err")"
    fi
}

# replayed_both DIR NAME STATUS: NAME.hvrec in DIR replays under kvm and
# ptrace with NAME.rec.out's bytes and STATUS; prints what differed.
replayed_both() {
    local d=$1 n=$2 st=$3 b bad=""
    for b in $REPLAY_BACKENDS; do
        (cd "$d" && hv replay --backend $b "$n.hvrec" > "$n.$b.out" 2> "$n.$b.err")
        if [ $? != "$st" ] || ! cmp -s "$d/$n.rec.out" "$d/$n.$b.out" ||
            ! grep -q '^hvrun: replay: identical' "$d/$n.$b.err"; then
            bad="$bad $b: $(grep '^hvrun' "$d/$n.$b.err" | head -c 300);"
        fi
    done
    printf '%s' "$bad"
}

# verified NAME DIR STATUS WANT: record --verify's result in DIR/v.* had
# exit 0, WANT in its output and an identical replay.
verified() {
    if [ "$3" = 0 ] && grep -q "$4" "$2/v.out" &&
        grep -q '^hvrun: replay: identical' "$2/v.err"; then
        pass "$L:verify/$1"
    else
        fail "$L:verify/$1" "exit $3: $(grep '^hvrun' "$2/v.err" | head -c 300)"
    fi
}

# The servers' replies with their random bytes masked.
masked() { sed -E 's/ [0-9a-f]{8}( |$)/ HEX\1/g' "$1"; }

# UDP to a server outside the run (udp_server.py, udp_client.py).
outside_udp_cases() {
    local d=$WORK/$ID.udp st vst bad="" client=$ROOT/tests/record/udp_client.py
    mkdir -p "$d"
    start_outside_server "$d" udp_server.py
    "$PY" "$client" "$OUTSIDE_PORT" > "$d/native.out" 2>&1
    (cd "$d" && hv record -o o.hvrec -- "$PY" "$client" "$OUTSIDE_PORT" > o.rec.out 2> o.rec.err)
    st=$?
    (cd "$d" && hv record --verify -o v.hvrec -- "$PY" "$client" "$OUTSIDE_PORT" > v.out 2> v.err)
    vst=$?
    stop_outside_server
    { grep -q '^dgram 2 of q2 .* from the server: True' "$d/o.rec.out" &&
        cmp -s <(masked "$d/native.out") <(masked "$d/o.rec.out"); } ||
        bad="recorded (against native): $(head -c 300 "$d/o.rec.out" "$d/o.rec.err");"
    bad="$bad$(replayed_both "$d" o "$st")"
    if [ -z "$bad" ]; then
        pass "$L:outside-udp (replayed after the server stopped, kvm and ptrace; as native)"
    else
        fail "$L:outside-udp" "$bad"
    fi
    verified outside-udp "$d" "$vst" '^dgram 2 of q1'
    # Nothing there: the errors replay while a server answers on the port.
    (cd "$d" && hv record -o r.hvrec -- "$PY" "$client" "$OUTSIDE_PORT" missing > r.rec.out 2> r.rec.err)
    st=$?
    "$PY" "$client" "$OUTSIDE_PORT" missing > "$d/r.native.out" 2>&1
    "$PY" -c 'import socket,sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", int(sys.argv[1])))
while True:
    d, a = s.recvfrom(100); s.sendto(b"squatter", a)' "$OUTSIDE_PORT" 2> /dev/null &
    local squatter=$!
    sleep 0.3
    bad=$(replayed_both "$d" r "$st")
    kill "$squatter" 2> /dev/null
    wait "$squatter" 2> /dev/null
    if [ -z "$bad" ] && grep -q '^recv failed: Connection refused' "$d/r.rec.out" &&
        grep -q '^recvfrom failed: timed out' "$d/r.rec.out" &&
        cmp -s "$d/r.native.out" "$d/r.rec.out"; then
        pass "$L:outside-udp-refused"
    else
        fail "$L:outside-udp-refused" "$bad $(head -c 300 "$d/r.rec.out")"
    fi
}

# An AF_UNIX stream server outside the run (unix_server.py, unix_client.py)
# at the relative path srv.sock and an abstract name of this test's.
outside_unix_cases() {
    local d=$WORK/$ID.unix st vst bad="" i client=$ROOT/tests/record/unix_client.py
    local abs=hvrun-record-test-$$-$ID srv
    mkdir -p "$d"
    rm -f "$d/srv.sock" "$d/srv.sock.ready"
    "$PY" "$ROOT/tests/record/unix_server.py" "$d/srv.sock" "$abs" &
    srv=$!
    for i in $(seq 1 100); do
        [ -e "$d/srv.sock.ready" ] && break
        sleep 0.05
    done
    (cd "$d" && "$PY" "$client" srv.sock "@$abs" > native.out 2>&1)
    (cd "$d" && hv record -o o.hvrec -- "$PY" "$client" srv.sock "@$abs" > o.rec.out 2> o.rec.err)
    st=$?
    (cd "$d" && hv record --verify -o v.hvrec -- "$PY" "$client" srv.sock "@$abs" > v.out 2> v.err)
    vst=$?
    kill "$srv" 2> /dev/null
    wait "$srv" 2> /dev/null
    rm -f "$d/srv.sock"
    # Natively the fds came (hvrun refuses them): the rest is the same.
    { grep -q '^a line with fds' "$d/o.rec.out" &&
        grep -q "^peer b'.x00$abs'" "$d/o.rec.out" &&
        cmp -s <(masked "$d/native.out" | grep -v '^fds passed') \
            <(masked "$d/o.rec.out" | grep -v '^fds passed') &&
        grep -q 'SCM_RIGHTS); not relayed' "$d/o.rec.err"; } ||
        bad="recorded: $(head -c 300 "$d/o.rec.out" "$d/o.rec.err");"
    bad="$bad$(replayed_both "$d" o "$st")"
    if [ -z "$bad" ]; then
        pass "$L:outside-unix (replayed after the server stopped, kvm and ptrace; as native)"
    else
        fail "$L:outside-unix" "$bad"
    fi
    verified outside-unix "$d" "$vst" '^chunk 2 of fds'
    # A socket file nobody listens on, and no file: the errors replay
    # while a server listens at both.
    "$PY" -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$d/dead.sock"
    (cd "$d" && hv record -o r.hvrec -- "$PY" "$client" dead.sock none.sock > r.rec.out 2> r.rec.err)
    st=$?
    (cd "$d" && "$PY" "$client" dead.sock none.sock > r.native.out 2>&1)
    rm -f "$d/dead.sock" "$d/srv.sock.ready"
    "$PY" "$ROOT/tests/record/unix_server.py" "$d/dead.sock" "$abs" &
    srv=$!
    for i in $(seq 1 100); do
        [ -e "$d/srv.sock.ready" ] && break
        sleep 0.05
    done
    ln -s dead.sock "$d/none.sock"
    bad=$(replayed_both "$d" r "$st")
    kill "$srv" 2> /dev/null
    wait "$srv" 2> /dev/null
    if [ -z "$bad" ] && grep -q '^connect failed: Connection refused' "$d/r.rec.out" &&
        grep -q '^connect failed: No such file or directory' "$d/r.rec.out" &&
        cmp -s "$d/r.native.out" "$d/r.rec.out"; then
        pass "$L:outside-unix-refused"
    else
        fail "$L:outside-unix-refused" "$bad $(head -c 300 "$d/r.rec.out")"
    fi
}

# A seqpacket server in the run (seqpacket_inrun_server.py) accepting a
# client from outside (seqpacket_accept_client.py) at a relative path.
seqpacket_accepted_case() {
    local d=$WORK/$ID.seqacc st vst bad="" srv=$ROOT/tests/record/seqpacket_inrun_server.py
    local client=$ROOT/tests/record/seqpacket_accept_client.py cl probe
    mkdir -p "$d"
    rm -f "$d/srv.sock" "$d/srv.sock.ready"
    (cd "$d" && { "$PY" "$client" srv.sock > native.client 2>&1 & "$PY" "$srv" srv.sock > native.out 2>&1; wait; })
    rm -f "$d/srv.sock" "$d/srv.sock.ready"
    (cd "$d" && { "$PY" "$client" srv.sock > o.client 2>&1 & cl=$!
        hv record -o o.hvrec -- "$PY" "$srv" srv.sock > o.rec.out 2> o.rec.err; echo $? > o.st; wait $cl; })
    st=$(cat "$d/o.st")
    { grep -q '^got 0 bytes: $' "$d/o.rec.out" && grep -q '^got 100000 bytes$' "$d/o.rec.out" &&
        grep -q '^end$' "$d/o.client" &&
        cmp -s <(masked "$d/native.out") <(masked "$d/o.rec.out") &&
        cmp -s <(masked "$d/native.client") <(masked "$d/o.client"); } ||
        bad="recorded (against native): $(head -c 300 "$d/o.rec.out" "$d/o.rec.err" "$d/o.client");"
    # While the replays run, a client from outside finds nothing listening.
    rm -f "$d/srv.sock" "$d/srv.sock.ready"
    "$PY" -c 'import socket,sys,time
got = 0
for i in range(150):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        s.connect(sys.argv[1]); got += 1
    except OSError:
        pass
    s.close()
    time.sleep(0.02)
print("reached", got)' "$d/srv.sock" > "$d/probe.out" 2>&1 &
    probe=$!
    bad="$bad$(replayed_both "$d" o "$st")"
    wait "$probe"
    grep -q '^reached 0$' "$d/probe.out" || bad="$bad probe: $(cat "$d/probe.out");"
    if [ -z "$bad" ]; then
        pass "$L:seqpacket-accepted-from-outside (as native; replayed after the client ended, kvm and ptrace, unreachable)"
    else
        fail "$L:seqpacket-accepted-from-outside" "$bad"
    fi
    rm -f "$d/srv.sock" "$d/srv.sock.ready"
    (cd "$d" && { "$PY" "$client" srv.sock > v.client 2>&1 & cl=$!
        hv record --verify -o v.hvrec -- "$PY" "$srv" srv.sock > v.out 2> v.err; echo $? > v.st; wait $cl; })
    vst=$(cat "$d/v.st")
    verified seqpacket-accepted-from-outside "$d" "$vst" '^got 3 bytes: bye'
}

# A server in the run (inrun_server.py) accepting clients from outside
# (accept_client.py), one each on IPv4, IPv6 and AF_UNIX.
accepted_cases() {
    local d=$WORK/$ID.acc st vst bad="" srv=$ROOT/tests/record/inrun_server.py
    local client=$ROOT/tests/record/accept_client.py cl probe
    mkdir -p "$d"
    rm -f "$d/port" "$d/srv.sock"
    (cd "$d" && { "$PY" "$client" port srv.sock > native.client 2>&1 & "$PY" "$srv" port srv.sock > native.out 2>&1; wait; })
    rm -f "$d/port"
    (cd "$d" && { "$PY" "$client" port srv.sock > o.client 2>&1 & cl=$!
        hv record -o o.hvrec -- "$PY" "$srv" port srv.sock > o.rec.out 2> o.rec.err; echo $? > o.st; wait $cl; })
    st=$(cat "$d/o.st")
    { grep -q '^unix got line2' "$d/o.rec.out" && grep -q '^inside got inside' "$d/o.rec.out" &&
        [ "$(grep -c ' ack line' "$d/o.client")" = 9 ] &&
        cmp -s <(masked "$d/native.out") <(masked "$d/o.rec.out"); } ||
        bad="recorded (against native): $(head -c 300 "$d/o.rec.out" "$d/o.rec.err");"
    # While the replays run, nothing from outside reaches the ports. The
    # probe's source ports are below the host's ephemeral range (as in
    # accept_timed_cases: none may be a port a replayed bind takes).
    "$PY" -c 'import socket,sys,time
p4, p6 = map(int, open(sys.argv[1]).read().split())
got = 0
for i in range(100):
    for fam, a, me in ((socket.AF_INET, ("127.0.0.1", p4), "127.0.0.1"), (socket.AF_INET6, ("::1", p6), "::1")):
        s = socket.socket(fam)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((me, 21200 + i))
            s.connect(a); got += 1
        except OSError:
            pass
        s.close()
    time.sleep(0.02)
print("reached", got)' "$d/port" > "$d/probe.out" 2>&1 &
    probe=$!
    bad="$bad$(replayed_both "$d" o "$st")"
    wait "$probe"
    grep -q '^reached 0$' "$d/probe.out" || bad="$bad probe: $(cat "$d/probe.out");"
    if [ -z "$bad" ]; then
        pass "$L:accepted-from-outside (as native; replayed after the client ended, kvm and ptrace, unreachable)"
    else
        fail "$L:accepted-from-outside" "$bad"
    fi
    rm -f "$d/port" "$d/srv.sock"
    (cd "$d" && { "$PY" "$client" port srv.sock > v.client 2>&1 & cl=$!
        hv record --verify -o v.hvrec -- "$PY" "$srv" port srv.sock > v.out 2> v.err; echo $? > v.st; wait $cl; })
    vst=$(cat "$d/v.st")
    verified accepted-from-outside "$d" "$vst" '^v6 got line2'
}

# A timed accept (accept_timeout.py): a client from outside comes during
# the wait, or none comes.
accept_timed_cases() {
    local d=$WORK/$ID.acct st0 st1 rp bad="" srv=$ROOT/tests/record/accept_timeout.py
    mkdir -p "$d"
    rm -f "$d/port"
    (cd "$d" && hv record -o t1.hvrec -- "$PY" "$srv" port 20 > t1.rec.out 2> t1.rec.err; echo $? > t1.st) &
    rp=$!
    for i in $(seq 1 200); do
        [ -s "$d/port" ] && break
        sleep 0.05
    done
    sleep 0.2
    "$PY" -c 'import os,socket,sys
s = socket.create_connection(("127.0.0.1", int(open(sys.argv[1]).read())))
s.sendall(b"hi %s\n" % os.urandom(4).hex().encode())
s.close()' "$d/port"
    wait "$rp"
    st1=$(cat "$d/t1.st")
    grep -q '^client sent hi ' "$d/t1.rec.out" || bad="recorded: $(head -c 200 "$d/t1.rec.out" "$d/t1.rec.err");"
    bad="$bad$(replayed_both "$d" t1 "$st1")"
    rm -f "$d/port"
    (cd "$d" && hv record -o t0.hvrec -- "$PY" "$srv" port 0.3 > t0.rec.out 2> t0.rec.err)
    st0=$?
    # The probe's own ports are below the host's ephemeral range, where the
    # replay's binds take the run's ports (32768, ...): one of its source
    # ports on the port a replayed bind wants would make the replay take
    # the next port and diverge (DETERMINISM.md, ephemeral ports).
    "$PY" -c 'import socket,sys,time
got = 0
for i in range(100):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", 21000 + i))
        s.connect(("127.0.0.1", int(open(sys.argv[1]).read()))); got += 1
    except OSError:
        pass
    s.close(); time.sleep(0.02)
print("reached", got)' "$d/port" > "$d/probe.out" 2>&1 &
    rp=$!
    grep -q '^no client$' "$d/t0.rec.out" || bad="$bad recorded absent: $(head -c 200 "$d/t0.rec.out");"
    bad="$bad$(replayed_both "$d" t0 "$st0")"
    wait "$rp"
    grep -q '^reached 0$' "$d/probe.out" || bad="$bad probe: $(cat "$d/probe.out");"
    if [ -z "$bad" ]; then
        pass "$L:accept-timed (a client during the wait, and none: replayed by kvm and ptrace, unreachable)"
    else
        fail "$L:accept-timed" "$bad"
    fi
}

# A UDP server in the run (udp_inrun_server.py) queried from outside
# (udp_query.py).
udp_server_cases() {
    local d=$WORK/$ID.udpsrv st vst bad="" srv=$ROOT/tests/record/udp_inrun_server.py
    local client=$ROOT/tests/record/udp_query.py cl probe
    mkdir -p "$d"
    rm -f "$d/port"
    (cd "$d" && { "$PY" "$client" port > native.client 2>&1 & "$PY" "$srv" port > native.out 2>&1; wait; })
    rm -f "$d/port"
    (cd "$d" && { "$PY" "$client" port > o.client 2>&1 & cl=$!
        hv record -o o.hvrec -- "$PY" "$srv" port > o.rec.out 2> o.rec.err; echo $? > o.st; wait $cl; })
    st=$(cat "$d/o.st")
    { grep -q '^query 2 q2' "$d/o.rec.out" && grep -q '^inside got inside answer from the server True' "$d/o.rec.out" &&
        [ "$(grep -c '^reply ans q' "$d/o.client")" = 3 ] &&
        cmp -s <(masked "$d/native.out") <(masked "$d/o.rec.out"); } ||
        bad="recorded (against native): $(head -c 300 "$d/o.rec.out" "$d/o.rec.err" "$d/o.client");"
    "$PY" -c 'import socket,sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(0.2)
got = 0
for _ in range(10):
    s.sendto(b"probe 00000000", ("127.0.0.1", int(open(sys.argv[1]).read())))
    try:
        s.recv(100); got += 1
    except OSError:
        pass
print("answered", got)' "$d/port" > "$d/probe.out" 2>&1 &
    probe=$!
    bad="$bad$(replayed_both "$d" o "$st")"
    wait "$probe"
    grep -q '^answered 0$' "$d/probe.out" || bad="$bad probe: $(cat "$d/probe.out");"
    if [ -z "$bad" ]; then
        pass "$L:udp-server-in-run (as native; replayed after the client ended, kvm and ptrace, no answer to outside)"
    else
        fail "$L:udp-server-in-run" "$bad"
    fi
    rm -f "$d/port"
    (cd "$d" && { "$PY" "$client" port > v.client 2>&1 & cl=$!
        hv record --verify -o v.hvrec -- "$PY" "$srv" port > v.out 2> v.err; echo $? > v.st; wait $cl; })
    vst=$(cat "$d/v.st")
    verified udp-server-in-run "$d" "$vst" '^query 2 q2'
}

# An AF_UNIX datagram server in the run (unix_dgram_inrun_server.py) at a
# relative path and an abstract name, queried from outside
# (unix_dgram_query.py: a named client and an unnamed sender).
unix_dgram_server_cases() {
    local d=$WORK/$ID.udgsrv st vst bad="" srv=$ROOT/tests/record/unix_dgram_inrun_server.py
    local client=$ROOT/tests/record/unix_dgram_query.py cl probe
    local abs=hvrun-record-udgsrv-$$-$ID
    mkdir -p "$d"
    rm -f "$d/ready" "$d/srv.dg"
    (cd "$d" && { "$PY" "$client" srv.dg "$abs" ready > native.client 2>&1 & "$PY" "$srv" srv.dg "$abs" ready > native.out 2>&1; wait; })
    rm -f "$d/ready"
    (cd "$d" && { "$PY" "$client" srv.dg "$abs" ready > o.client 2>&1 & cl=$!
        hv record -o o.hvrec -- "$PY" "$srv" srv.dg "$abs" ready > o.rec.out 2> o.rec.err; echo $? > o.st; wait $cl; })
    st=$(cat "$d/o.st")
    { grep -q "^query 2 q2 .* from 'cl.dg'$" "$d/o.rec.out" &&
        grep -qF "from b'\\x00$abs-cl'" "$d/o.rec.out" &&
        [ "$(grep -c '^query 3 unnamed .* from None$' "$d/o.rec.out")" = 2 ] &&
        [ "$(grep -c '^inside got inside answer from the server True' "$d/o.rec.out")" = 2 ] &&
        [ "$(grep -c '^reply ans q.* from the server True' "$d/o.client")" = 6 ] &&
        cmp -s <(masked "$d/native.out") <(masked "$d/o.rec.out") &&
        cmp -s <(masked "$d/native.client") <(masked "$d/o.client"); } ||
        bad="recorded (against native): $(head -c 300 "$d/o.rec.out" "$d/o.rec.err" "$d/o.client");"
    # While the replays run, a sender outside at both names reaches nothing.
    "$PY" -c 'import socket,sys,time
sent, errs = 0, set()
for i in range(150):
    for name in (sys.argv[1], b"\0" + sys.argv[2].encode()):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            s.sendto(b"probe 00000000", name); sent += 1
        except OSError as e:
            errs.add(e.errno)
        s.close()
    time.sleep(0.02)
print("sent", sent, "errors", sorted(errs))' "$d/srv.dg" "$abs" > "$d/probe.out" 2>&1 &
    probe=$!
    bad="$bad$(replayed_both "$d" o "$st")"
    wait "$probe"
    grep -q '^sent 0 ' "$d/probe.out" || bad="$bad probe: $(cat "$d/probe.out");"
    if [ -z "$bad" ]; then
        pass "$L:unix-dgram-server-in-run (as native; replayed after the client ended, kvm and ptrace, nothing from outside: $(cat "$d/probe.out"))"
    else
        fail "$L:unix-dgram-server-in-run" "$bad"
    fi
    rm -f "$d/ready" "$d/srv.dg"
    (cd "$d" && { "$PY" "$client" srv.dg "$abs" ready > v.client 2>&1 & cl=$!
        hv record --verify -o v.hvrec -- "$PY" "$srv" srv.dg "$abs" ready > v.out 2> v.err; echo $? > v.st; wait $cl; })
    vst=$(cat "$d/v.st")
    verified unix-dgram-server-in-run "$d" "$vst" '^query 3 unnamed'
}

# A multicast receiver in the run (mcast_inrun_receiver.py: a UDP socket
# bound to the wildcard address that joins a group on loopback) and a
# sender outside (mcast_send.py); "all": IP_MULTICAST_ALL as Linux has
# it, "own": 0 set before the bind.
multicast_cases() {
    local d=$WORK/$ID.mcast st vst bad="" how cl probe
    local rcv=$ROOT/tests/record/mcast_inrun_receiver.py snd=$ROOT/tests/record/mcast_send.py
    local group=239.255.$(( $$ % 200 )).$(( $$ / 200 % 200 + 1 )) port=$(( 25000 + $$ % 5000 ))
    mkdir -p "$d"
    for how in all own; do
        bad=""
        rm -f "$d/ready"
        (cd "$d" && { "$PY" "$snd" "$group" "$port" 127.0.0.1 ready & timeout 20 "$PY" "$rcv" "$group" "$port" 127.0.0.1 $how ready > $how.native.out 2>&1; wait; })
        rm -f "$d/ready"
        (cd "$d" && { "$PY" "$snd" "$group" "$port" 127.0.0.1 ready & cl=$!
            hv record -o $how.hvrec -- "$PY" "$rcv" "$group" "$port" 127.0.0.1 $how ready > $how.rec.out 2> $how.rec.err; echo $? > $how.st; wait $cl; })
        st=$(cat "$d/$how.st")
        { [ "$(grep -c '^got m[0-2] .* from 127.0.0.1 port$' "$d/$how.rec.out")" = 3 ] &&
            cmp -s <(masked "$d/$how.native.out") <(masked "$d/$how.rec.out"); } ||
            bad="recorded (against native): $(head -c 300 "$d/$how.native.out" "$d/$how.rec.out" "$d/$how.rec.err");"
        # A sender to the group while the replays run reaches nothing there.
        "$PY" -c 'import socket,sys,time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("127.0.0.1"))
for i in range(100):
    s.sendto(b"probe 00000000", (sys.argv[1], int(sys.argv[2]))); time.sleep(0.02)' "$group" "$port" &
        probe=$!
        bad="$bad$(replayed_both "$d" $how "$st")"
        wait "$probe"
        if [ -z "$bad" ]; then
            pass "$L:multicast-in-run/$how (as native; replayed after the sender ended, kvm and ptrace, beside a sender to the group)"
        else
            fail "$L:multicast-in-run/$how" "$bad"
        fi
    done
    rm -f "$d/ready"
    (cd "$d" && { "$PY" "$snd" "$group" "$port" 127.0.0.1 ready & cl=$!
        hv record --verify -o v.hvrec -- "$PY" "$rcv" "$group" "$port" 127.0.0.1 all ready > v.out 2> v.err; echo $? > v.st; wait $cl; })
    vst=$(cat "$d/v.st")
    verified multicast-in-run "$d" "$vst" '^got m2 '
}

# stopped_case [pipe|clock]: with "pipe", the program's output goes
# through a cat that waits on the pipe when the run is stopped: hvrun's
# report of where each thread waited is part of the compared stderr, and
# once said a host fd number that differs between a run and its replay.
# With "clock", two C threads that read the clock through the vDSO
# (guest/clock_threads): the signal falls while one computes, after
# clock reads no record logs, or after its turn began and before it made
# an event; the replay once went on past the recording, in half the runs.
stopped_case() {
    local d=$WORK/$ID.stop${1:-} pid st bad="" b
    local wait_s=${STOP_AFTER:-2}
    local cmd=("$PY" "$ROOT/tests/record/ticks.py")
    # (the read of a file first: the replay then holds one host fd more)
    [ "${1:-}" = pipe ] &&
        cmd=(/bin/sh -c 'read x < /etc/passwd; "$0" "$1" | cat' "${cmd[@]}")
    [ "${1:-}" = clock ] && cmd=("$G/clock_threads" forever)
    mkdir -p "$d"
    (cd "$d" && exec "$HV" record -o s.hvrec -- "${cmd[@]}" > s.rec.out 2> s.rec.err) &
    pid=$!
    sleep "$wait_s"
    kill -INT "$pid"
    wait "$pid"
    st=$?
    [ "$st" = 130 ] && grep -q 'stopped by signal 2 after' "$d/s.rec.err" ||
        bad="record exit $st: $(tail -c 300 "$d/s.rec.err");"
    for b in $REPLAY_BACKENDS; do
        (cd "$d" && hv replay --backend $b s.hvrec > s.$b.out 2> s.$b.err)
        st=$?
        if [ "$st" != 130 ] || ! cmp -s "$d/s.rec.out" "$d/s.$b.out" ||
            ! grep -q '^hvrun: replay: identical' "$d/s.$b.err"; then
            bad="$bad $b exit $st: $(grep '^hvrun: replay' "$d/s.$b.err" | head -c 300);"
        fi
    done
    # The recording's output is written at its end, so how far the
    # program got shows only then: on a loaded machine the debug build's
    # python3 once printed nothing in two seconds. Once more, longer.
    if [ -z "$bad" ] && [ "$(wc -l < "$d/s.rec.out")" -le 2 ] &&
        [ -z "${STOP_AFTER:-}" ]; then
        rm -rf "$d"
        STOP_AFTER=8 stopped_case "$@"
        return
    fi
    if [ -z "$bad" ] && [ "$(wc -l < "$d/s.rec.out")" -gt 2 ]; then
        pass "$L:stopped-by-signal${1:+/$1} ($(wc -l < "$d/s.rec.out") lines, replayed by kvm and ptrace)"
    else
        fail "$L:stopped-by-signal${1:+/$1}" "$bad lines $(wc -l < "$d/s.rec.out")"
    fi
}

host_timers_case() {
    local d=$WORK/$ID.timers prog st1 st2 bad=""
    mkdir -p "$d"
    for prog in timers alarm_spin timerfd_test; do
        (cd "$d" && hv record --no-virtualize-time -o $prog.hvrec -- "$G/$prog" > $prog.rec.out 2> /dev/null)
        st1=$?
        (cd "$d" && hv replay $prog.hvrec > $prog.out 2> $prog.err)
        st2=$?
        if [ "$st1" != "$st2" ] || ! cmp -s "$d/$prog.rec.out" "$d/$prog.out" ||
            ! grep -q '^hvrun: replay: identical' "$d/$prog.err"; then
            bad="$bad $prog (record $st1, replay $st2): $(grep '^hvrun: replay' "$d/$prog.err" | head -c 250);"
        fi
    done
    if [ -z "$bad" ]; then
        pass "$L:host-timers"
    else
        fail "$L:host-timers" "$bad"
    fi
}

# A listing of DIR's tree with each file's bytes' checksum and mode.
tree_state() {
    (cd "$1" && find . -path ./state -prune -o -printf '%y %m %p %l\n' | sort &&
        find . -type f ! -name 'state*' -exec sha256sum {} + | sort)
}

scratch_dirs() {
    find /tmp -maxdepth 1 -name 'hvrun-replay.*' -type d 2> /dev/null | sort
}

isolation_cases() {
    local d=$WORK/$ID.iso st
    rm -rf "$d" && mkdir -p "$d/work/old" "$d/elsewhere"
    echo keep > "$d/work/old/f"
    echo log1 > "$d/work/log.txt"
    echo gone > "$d/work/victim.txt"
    (cd "$d/work" && hv record -o ../iso.hvrec -- sh -c \
        'echo log2 >> log.txt; cat log.txt; mkdir made; echo new > made/n;
         mv old moved; rm victim.txt; ls -l; cat moved/f' \
        > ../iso.rec.out 2> /dev/null)
    tree_state "$d/work" > "$d/state.before"
    scratch_dirs > "$d/scratch.before"
    (cd "$d/work" && hv replay ../iso.hvrec > ../iso.out 2> ../iso.err)
    st=$?
    tree_state "$d/work" > "$d/state.after"
    # The replay's scratch directory goes with it (one was left, empty, in
    # the host's /tmp after every isolated replay); another run's in use
    # has files in it.
    local left
    left=$(scratch_dirs | comm -13 "$d/scratch.before" - |
        while read -r s; do [ -z "$(ls -A "$s" 2> /dev/null)" ] && echo "$s"; done)
    if [ "$st" = 0 ] && cmp -s "$d/iso.rec.out" "$d/iso.out" &&
        grep -q '^hvrun: replay: identical' "$d/iso.err" &&
        cmp -s "$d/state.before" "$d/state.after" && [ -z "$left" ]; then
        pass "$L:writes-off-host"
    else
        fail "$L:writes-off-host" "exit $st: $(head -c 300 "$d/iso.err") $(diff "$d/state.before" "$d/state.after" | head -c 300) left in /tmp: $left"
    fi
    rm -rf "$d/work"
    (cd "$d/elsewhere" && hv replay ../iso.hvrec > ../gone.out 2> ../gone.err)
    st=$?
    if [ "$st" = 0 ] && cmp -s "$d/iso.rec.out" "$d/gone.out" &&
        grep -q '^hvrun: replay: identical' "$d/gone.err" && [ ! -e "$d/work" ]; then
        pass "$L:dir-gone"
    else
        fail "$L:dir-gone" "exit $st: $(head -c 300 "$d/gone.err")"
    fi
}

# As an unprivileged user (uid/gid 65534, no groups; HOME and
# XDG_DATA_HOME its own): `replay` of ARGS... (a wrapper, or none) in DIR,
# the host's tree of DIR/work listed (tree_state) DURING the replay into
# DIR/NAME.during, while the guest spins between printing MARK-start and
# MARK-end (its live stdout in the replay's scratch directory on the
# host's /tmp says where it is): "checked" in DIR/NAME.when if that listing
# was taken between the two, else what went wrong. Exit status in
# DIR/NAME.st.
nonroot_replay() {
    local d=$1 name=$2 mark=$3 pid f i when="the guest's start mark never seen"
    shift 3
    (cd "$d/work" && exec setpriv --reuid=65534 --regid=65534 --clear-groups \
        env HOME="$d" XDG_DATA_HOME="$d/data" "$@" timeout -k 5 "$TIMEOUT" \
        "$HV" replay ../nr.hvrec > "../$name.out" 2> "../$name.err") &
    pid=$!
    for i in $(seq 1 1200); do
        f=$(grep -l -F -x "$mark-start" /tmp/hvrun-replay.*/stdout 2> /dev/null | head -n 1)
        if [ -n "$f" ]; then
            tree_state "$d/work" > "$d/$name.during"
            if grep -q -F -x "$mark-end" "$f" 2> /dev/null || [ ! -e "$f" ]; then
                when="the guest had ended when the listing was taken"
            else
                when=checked
            fi
            break
        fi
        kill -0 "$pid" 2> /dev/null || break
        sleep 0.05
    done
    wait "$pid"
    echo $? > "$d/$name.st"
    echo "$when" > "$d/$name.when"
}

# The user's files as the run finds them, in DIR/work.
nonroot_files() {
    mkdir -p "$1/work"
    echo log1 > "$1/work/log.txt"
    echo gone > "$1/work/victim.txt"
    echo renamed > "$1/work/a"
    chown -R 65534:65534 "$1"
}

# Non-root replays (ptrace: /dev/kvm is root's here) of a run that appends
# to, creates, renames and removes files in a directory the user owns:
#   nonroot-writes-off-host  in its private tree (a user namespace): the
#       replay identical, the host's tree the same before, during and after
#   nonroot-no-userns  where a user namespace is refused (a seccomp filter
#       of that process, tests/record/no_userns.py): the one-line message,
#       the replay identical, the host's files changed during it (the check
#       sees it) and put back after
nonroot_cases() {
    local d=$WORK/$ID.nonroot mark="nonroot-mark-$ID-$$" st bad
    local msg="hvrun: replay: the replay's writes cannot be kept off the host's files (not root, and a user namespace: Operation not permitted); they are undone after it"
    if ! setpriv --reuid=65534 --regid=65534 --clear-groups unshare -U true 2> /dev/null; then
        skip "$L:nonroot-writes-off-host" "uid 65534 may not make a user namespace here"
        return
    fi
    chmod 0711 "$WORK" # the user reaches its own directory in it
    rm -rf "$d" && mkdir -p "$d"
    nonroot_files "$d"
    (cd "$d/work" && setpriv --reuid=65534 --regid=65534 --clear-groups \
        env HOME="$d" XDG_DATA_HOME="$d/data" timeout -k 5 "$TIMEOUT" "$HV" \
        record --backend ptrace -o ../nr.hvrec -- sh -c \
        'echo log2 >> log.txt; cat log.txt; echo new > made; mv a b; rm victim.txt
         ls; echo "$0-start"; i=0; while [ $i -lt 1000000 ]; do i=$((i+1)); done
         echo "$0-end"' "$mark" > "$d/rec.out" 2> "$d/rec.err")
    st=$?
    if [ "$st" != 0 ] || [ ! -s "$d/nr.hvrec" ]; then
        fail "$L:nonroot-writes-off-host" "record as uid 65534: exit $st: $(head -c 300 "$d/rec.err")"
        return
    fi
    tree_state "$d/work" > "$d/state.before"
    nonroot_replay "$d" iso "$mark"
    tree_state "$d/work" > "$d/iso.after"
    st=$(cat "$d/iso.st")
    bad=""
    [ "$st" = 0 ] || bad="$bad exit $st;"
    cmp -s "$d/rec.out" "$d/iso.out" || bad="$bad stdout differs;"
    grep -q '^hvrun: replay: identical' "$d/iso.err" || bad="$bad not identical;"
    ! grep -q 'cannot be kept off' "$d/iso.err" || bad="$bad not isolated;"
    [ "$(cat "$d/iso.when")" = checked ] || bad="$bad $(cat "$d/iso.when");"
    cmp -s "$d/state.before" "$d/iso.during" || bad="$bad changed during: $(diff "$d/state.before" "$d/iso.during" | head -c 200);"
    cmp -s "$d/state.before" "$d/iso.after" || bad="$bad changed after: $(diff "$d/state.before" "$d/iso.after" | head -c 200);"
    if [ -z "$bad" ]; then
        pass "$L:nonroot-writes-off-host"
    else
        fail "$L:nonroot-writes-off-host" "$bad $(head -c 700 "$d/iso.err")"
    fi
    # Against the host's files the replay needs them as the run found them,
    # the same files (detcore knows them by inode): put back in place.
    rm "$d/work/made" && mv "$d/work/b" "$d/work/a" && nonroot_files "$d"
    tree_state "$d/work" > "$d/state.before"
    nonroot_replay "$d" undo "$mark" "$PY" "$ROOT/tests/record/no_userns.py"
    tree_state "$d/work" > "$d/undo.after"
    st=$(cat "$d/undo.st")
    bad=""
    [ "$st" = 0 ] || bad="$bad exit $st;"
    cmp -s "$d/rec.out" "$d/undo.out" || bad="$bad stdout differs;"
    grep -q '^hvrun: replay: identical' "$d/undo.err" || bad="$bad not identical;"
    grep -q -F -x "$msg" "$d/undo.err" || bad="$bad no fallback message;"
    [ "$(cat "$d/undo.when")" = checked ] || bad="$bad $(cat "$d/undo.when");"
    ! cmp -s "$d/state.before" "$d/undo.during" || bad="$bad the host's files unchanged during the replay against them;"
    cmp -s "$d/state.before" "$d/undo.after" || bad="$bad not undone: $(diff "$d/state.before" "$d/undo.after" | head -c 200);"
    if [ -z "$bad" ]; then
        pass "$L:nonroot-no-userns"
    else
        fail "$L:nonroot-no-userns" "$bad $(head -c 700 "$d/undo.err")"
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

# refused DIR NAME: whether `replay NAME.hvrec` in DIR is refused with
# exit 125 and one line; DIR/NAME.bad says how it was not (else empty).
# shellcheck disable=SC2317 # called through par_case
refused() {
    local d=$1 n=$2 st lines
    (cd "$d" && hv replay "$n.hvrec" > /dev/null 2> "$n.err")
    st=$?
    lines=$(wc -l < "$d/$n.err")
    if [ "$st" = 125 ] && [ "$lines" = 1 ]; then
        : > "$d/$n.bad"
    else
        echo " $n:$st/$lines" > "$d/$n.bad"
    fi
}

corrupt_case() {
    local d=$WORK/$ID.bad size i bad=""
    mkdir -p "$d"
    (cd "$d" && hv record -o good.hvrec -- sh -c 'echo corrupt me' > /dev/null 2>&1)
    size=$(stat -c %s "$d/good.hvrec")
    for i in $(seq 1 10); do
        head -c $((size * i / 11)) "$d/good.hvrec" > "$d/cut$i.hvrec"
    done
    "$PY" "$ROOT/tests/record/flip_bits.py" "$d/good.hvrec" "$d" 100
    # The 110 replays HVRUN_TEST_JOBS at a time (tests/lib.sh), then
    # their results in order.
    for i in $(seq 1 10); do par_case refused "$d" "cut$i"; done
    for i in $(seq 1 100); do par_case refused "$d" "flip$i"; done
    par_drain
    for i in $(seq 1 10); do bad="$bad$(cat "$d/cut$i.bad")"; done
    for i in $(seq 1 100); do bad="$bad$(cat "$d/flip$i.bad")"; done
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
    if [ ! -e "$KVM_DEV" ] && needs_kvm "$HV"; then
        skip "$L:record" "no $KVM_DEV on this host"
        continue
    fi
    # Each group beside another (HVRUN_TEST_JOBS, tests/lib.sh): each has
    # its own directory, files and sockets. Alone: those whose probe checks
    # that nothing reaches a replay's ports (another group's run may hold
    # the same port number for real: a run's port is the host's when free),
    # the one that times host timers, and those that look at what every
    # run leaves (the replays' scratch directories, the recordings' store).
    for_each_case
    for group in cross_backend_case stdin_and_copy_cases diverged_cases \
        outside_cases outside_udp_cases outside_unix_cases \
        outside_unix_dgram_cases outside_seqpacket_cases \
        seqpacket_accepted_case unix_dgram_server_cases stopped_case \
        "stopped_case pipe" "stopped_case clock" nonroot_cases; do
        # shellcheck disable=SC2086 # a group's name and its argument
        par_case $group
    done
    for group in accepted_cases accept_timed_cases udp_server_cases \
        multicast_cases host_timers_case isolation_cases list_cases; do
        par_serial $group
    done
    corrupt_case
done
finish
