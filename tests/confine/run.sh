#!/usr/bin/env bash
# tests/confine/run.sh HVRUN [HVRUN...]
#
# The guest never reaches hvrun or another host process through /proc,
# checked from outside the run (the guest-side routes are
# tests/guest/proc_routes.c, compared with a native run):
#   host-pids-hidden     a host process's /proc entry is ENOENT through a
#                        symlink to /proc, and a listing of it shows guest
#                        pids only;
#   hvrun-untouched      while a guest that wrote /proc/self/comm,
#                        coredump_filter and oom_score_adj (directly and
#                        through a symlink) is still running, hvrun's own
#                        files hold what they held before;
#   hvrun-environ-hidden /proc/<hvrun's pid>/environ and mem reached by a
#                        symlink are the guest's, never hvrun's;
#   kernel-knobs-ro      a guest (root here) cannot change the host kernel
#                        through /proc/sys or /sys: the write fails, the
#                        host's value stays.
# Prints PASS/FAIL/SKIP lines and "N passed, N failed[, N skipped]".
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib.sh"
KVM_DEV=${HVRUN_TEST_KVM_DEV:-/dev/kvm}
[ $# -ge 1 ] || { echo "usage: $0 HVRUN..." >&2; exit 2; }

WORK=$(mktemp -d /var/tmp/hvrun-confine.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

abs() { (cd "$(dirname "$1")" && printf '%s/%s' "$(pwd)" "$(basename "$1")"); }

host_pids_hidden() {
    local hv n=$1:confine/host-pids-hidden out
    hv=$(abs "$1")
    out=$(cd "$WORK" && timeout 60 "$hv" run -- sh -c '
        ln -sf /proc pl
        cat pl/'"$$"'/cmdline >/dev/null 2>&1 && echo "host pid readable"
        test -e pl/'"$$"' && echo "host pid exists"
        ls pl | grep -E "^[0-9]+$" | tr "\n" " "
        rm -f pl' 2>&1)
    if grep -q 'host pid' <<<"$out"; then
        fail "$n" "the guest reached host pid $$: $out"
    # The first guest process is pid 2 (pid 1 is the run's virtual init).
    elif ! grep -Eq '^(1 )?2( [0-9]+)* ?$' <<<"$out" || grep -Eq '[0-9]{3,}' <<<"$out"; then
        fail "$n" "the listing of /proc through a symlink is not the guest's pids: '$out'"
    else
        pass "$n"
    fi
}

hvrun_untouched() {
    local hv n=$1:confine/hvrun-untouched d=$WORK/untouched
    hv=$(abs "$1")
    mkdir -p "$d" && rm -f "$d/fifo" "$d/pid" && mkfifo "$d/fifo"
    (cd "$d" && exec sh -c 'echo $$ > pid; exec "$0" run -- sh -c "
        ln -sf /proc/self/comm c
        echo guest-name > c
        echo 0x7f > /proc/self/coredump_filter
        echo 999 > /proc/thread-self/oom_score_adj
        read a < c; read b < /proc/self/coredump_filter
        read o < /proc/self/oom_score_adj; echo \$a \$b \$o
        read x < fifo"' "$hv" >"$d/out" 2>&1) &
    local bg=$! i pid=
    for i in $(seq 100); do
        [ -s "$d/pid" ] && [ -s "$d/out" ] && break
        kill -0 "$bg" 2>/dev/null || break
        sleep 0.1
    done
    pid=$(cat "$d/pid" 2>/dev/null)
    local comm cf adj
    comm=$(cat "/proc/$pid/comm" 2>/dev/null)
    cf=$(cat "/proc/$pid/coredump_filter" 2>/dev/null)
    adj=$(cat "/proc/$pid/oom_score_adj" 2>/dev/null)
    kill -0 "$bg" 2>/dev/null && timeout 20 sh -c 'echo go > "$1"' sh "$d/fifo"
    wait "$bg"
    local want_out
    want_out='guest-name 0000007f 999'
    if [ "$comm" != hvrun ] || [ "$cf" != "$(cat /proc/self/coredump_filter)" ] || [ "$adj" != "$(cat /proc/self/oom_score_adj)" ]; then
        fail "$n" "hvrun's own files changed: comm '$comm', coredump_filter '$cf', oom_score_adj '$adj'"
    elif [ "$(cat "$d/out")" != "$want_out" ]; then
        fail "$n" "the guest did not read back what it wrote: $(tr '\n' ' ' <"$d/out")"
    else
        pass "$n"
    fi
}

hvrun_environ_hidden() {
    local hv n=$1:confine/hvrun-environ-hidden out
    hv=$(abs "$1")
    out=$(cd "$WORK" && env HVRUN_HOST_SECRET=leaked timeout 60 "$hv" run --base-env minimal -- \
        sh -c 'ln -sf /proc/self/environ e; tr "\0" "\n" < e; rm -f e' 2>&1)
    if grep -q leaked <<<"$out"; then
        fail "$n" "the guest read hvrun's environment (HVRUN_HOST_SECRET)"
    elif [ -z "$out" ]; then
        fail "$n" "no environment read through the symlink"
    else
        pass "$n"
    fi
}

kernel_knobs_ro() {
    local hv n=$1:confine/kernel-knobs-ro knob=/proc/sys/kernel/printk_ratelimit v out
    hv=$(abs "$1")
    v=$(cat "$knob")
    out=$(cd "$WORK" && timeout 60 "$hv" run -- sh -c "echo $((v + 1)) > $knob && echo wrote" 2>&1)
    if [ "$(cat "$knob")" != "$v" ]; then
        echo "$v" > "$knob"
        fail "$n" "the guest changed the host's $knob"
    elif grep -q wrote <<<"$out"; then
        fail "$n" "the write to $knob succeeded"
    else
        pass "$n"
    fi
}

for hv in "$@"; do
    if [ ! -e "$KVM_DEV" ] && needs_kvm "$hv"; then
        for c in host-pids-hidden hvrun-untouched hvrun-environ-hidden kernel-knobs-ro; do
            skip "$hv:confine/$c" "no $KVM_DEV on this host"
        done
        continue
    fi
    host_pids_hidden "$hv"
    hvrun_untouched "$hv"
    hvrun_environ_hidden "$hv"
    kernel_knobs_ro "$hv"
done
finish
