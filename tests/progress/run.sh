#!/usr/bin/env bash
# tests/progress/run.sh HVRUN [HVRUN...]
#
# Counted progress without a PMU (--progress software, docs/DETERMINISM.md
# "Counted progress"). For each hvrun binary given, with virtual time:
#
#   progress/alarm-MODE  tests/progress/progress_alarm.c MODE -v (alarm(1),
#                        setitimer(ITIMER_REAL), a timerfd read; the last
#                        two of 100 ms here, to be quick) computes with a
#                        write every 100,000 iterations until the timer
#                        fires: it must end with "MODE fired" within
#                        HVRUN_PROGRESS_LIMIT seconds (natively 1 s; without
#                        counting it waits ~100x as long), print the same
#                        iteration count in HVRUN_PROGRESS_RUNS runs, and
#                        pass --verify (two more runs, the same output);
#   progress/spin        tests/progress/progress_spin.c -v: one thread spins on a
#                        flag the other sets after a syscall: the same,
#                        nonzero, spin count in 10 runs, no host-timed cut
#                        (--summary), and --verify passes;
#   progress/hostdata    tests/progress/progress_hostdata.c: computes as
#                        long as NUMA node 0's free memory figure says
#                        (libnuma, QEMU's start-up, read it) and prints the
#                        logical time that took: the same in 5 runs (the
#                        host's figure changes all the time; hvrun's model
#                        does not);
#   progress/unixname    tests/progress/progress_unixname.c: computes as
#                        long as the name an AF_UNIX autobind gave says
#                        (Linux picks it at random) and prints the logical
#                        time that took: the same in 5 runs (the name is
#                        the run's, net/unix_name.c);
#   progress/groups      tests/progress/progress_groups.c: short loops that
#                        run as unrolled groups (their trampolines hold
#                        some: the program's "groups" argument), leaving a
#                        group from every turn, faulting inside one, and a
#                        loop with CF live that may not be one: the same
#                        output as natively (but the time it took), and
#                        the same output, logical time and detlog digest
#                        as a run whose loops turn in the text
#                        (HVRUN_LOOP_COPIES=0: each turn counted there);
#   progress/image-cache tests/progress/progress_spin.c -v with a fresh cache
#                        directory (XDG_CACHE_HOME): the first run makes
#                        the images of its texts and keeps them
#                        (progress-image-*), the second maps them ("the
#                        cache's" in --log debug); both print the same and
#                        have the same detlog digest (--summary), and
#                        --verify with another fresh directory passes (its
#                        first run cold, its second warm). Then entries cut
#                        short, a cache directory that cannot be made, and
#                        (where `unshare -m` may mount) a full one: each
#                        run the same as the first, a cut entry replaced.
#
# The programs are not in tests/guest: every suite runs those in the
# default mode too, where the alarm case waits ~100x as long as natively.
#
# Prints "PASS name" / "FAIL name: reason" / "SKIP name: reason" per case,
# then "N passed, N failed[, N skipped]". Exits 1 if anything failed.
#
# Environment: HVRUN_PROGRESS_RUNS (runs of each alarm case before
# --verify's two, default 1; 10 for the issue's acceptance),
# HVRUN_PROGRESS_LIMIT (seconds one alarm run may take, default 20),
# HVRUN_TEST_KVM_DEV (default /dev/kvm; without it and without
# HVRUN_BACKEND=ptrace everything is skipped).
set -u

if [ $# -lt 1 ]; then
    echo "usage: $0 HVRUN [HVRUN...]" >&2
    exit 2
fi

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RUNS=${HVRUN_PROGRESS_RUNS:-1}
LIMIT=${HVRUN_PROGRESS_LIMIT:-20}
GUEST=$ROOT/build/progress

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

n_pass=0
n_fail=0
n_skip=0

# runs_same N HVRUN PROG ARGS...: N runs with --progress software print
# the same stdout, each within LIMIT seconds; echoes it (or FAILED why).
runs_same() {
    local n=$1 hv=$2
    shift 2
    local first="" out i
    for i in $(seq 1 "$n"); do
        out=$(timeout -k 5 "$LIMIT" "$hv" run --progress software -- "$@" \
            2>/dev/null) || {
            echo "FAILED run $i: exit status $? (limit ${LIMIT}s)"
            return 1
        }
        if [ -z "$first" ]; then
            first=$out
        elif [ "$out" != "$first" ]; then
            echo "FAILED run $i printed '$out', run 1 '$first'"
            return 1
        fi
    done
    echo "$first"
}

verify_ok() {
    local hv=$1
    shift
    "$hv" run --progress software --verify -- "$@" >/dev/null 2>&1
}

case_alarm() {
    local hv=$1 mode=$2 n=$3 name="$4:progress/alarm-$2" ms=$5 out
    out=$(runs_same "$n" "$hv" "$GUEST/progress_alarm" "$mode" -v "$ms")
    case $out in
    FAILED*) fail "$name" "${out#FAILED }"; return ;;
    "$mode fired after "*" iterations") ;;
    *) fail "$name" "printed '$out', expected '$mode fired after N iterations'"; return ;;
    esac
    if ! verify_ok "$hv" "$GUEST/progress_alarm" "$mode" -v "$ms"; then
        fail "$name" "--verify did not pass"
        return
    fi
    pass "$name ($out, the same in $n runs and --verify's two)"
}

case_spin() {
    local hv=$1 name="$2:progress/spin" out sum
    out=$(runs_same 10 "$hv" "$GUEST/progress_spin" -v)
    case $out in
    FAILED*) fail "$name" "${out#FAILED }"; return ;;
    "flag seen after 0 spins") fail "$name" "the spinner never spun"; return ;;
    "flag seen after "*" spins") ;;
    *) fail "$name" "printed '$out'"; return ;;
    esac
    sum=$("$hv" run --progress software --summary -- "$GUEST/progress_spin" \
        2>&1 >/dev/null | grep -o 'host-timed cuts [0-9]*')
    if [ "$sum" != "host-timed cuts 0" ]; then
        fail "$name" "--summary says '${sum:-nothing}', expected no host-timed cut"
        return
    fi
    if ! verify_ok "$hv" "$GUEST/progress_spin" -v; then
        fail "$name" "--verify did not pass"
        return
    fi
    pass "$name ($out, the same in 10 runs, no host-timed cut, --verify passes)"
}

case_hostdata() {
    local hv=$1 name="$2:progress/hostdata" out
    out=$(runs_same 5 "$hv" "$GUEST/progress_hostdata")
    case $out in
    FAILED*) fail "$name" "${out#FAILED }"; return ;;
    "node 0 meminfo read, computed for "*" ns") ;;
    *) fail "$name" "printed '$out'"; return ;;
    esac
    pass "$name ($out, the same in 5 runs)"
}

case_unixname() {
    local hv=$1 name="$2:progress/unixname" out
    out=$(runs_same 5 "$hv" "$GUEST/progress_unixname")
    case $out in
    FAILED*) fail "$name" "${out#FAILED }"; return ;;
    "autobound, computed for "*" ns") ;;
    *) fail "$name" "printed '$out'"; return ;;
    esac
    pass "$name ($out, the same in 5 runs)"
}

# groups_run HVRUN [ENV=VALUE...]: "STDOUT|DIGEST" of a run of
# progress_groups (the minimal guest environment: the variable given
# to hvrun stays out of the guest's).
groups_run() {
    local hv=$1 err out
    shift
    err=$(mktemp)
    out=$(env "$@" timeout -k 5 "$LIMIT" "$hv" run --base-env minimal \
        --progress software --summary -- "$GUEST/progress_groups" 2>"$err")
    echo "$out|$(grep -o 'digest [0-9a-f]*' "$err" | head -1)"
    rm -f "$err"
}

case_groups() {
    local hv=$1 name="$2:progress/groups" native heads copies plain
    native=$("$GUEST/progress_groups")
    heads=$("$hv" run --progress software -- "$GUEST/progress_groups" groups \
        2>&1)
    if [ "$heads" != "group heads: some" ]; then
        fail "$name" "its trampolines hold no group: '$heads'"
        return
    fi
    copies=$(groups_run "$hv" HVRUN_LOOP_COPIES=1)
    plain=$(groups_run "$hv" HVRUN_LOOP_COPIES=0)
    # all but the last line (the time the cases took) as natively
    if [ "$(sed '$d' <<<"${copies%|*}")" != "$(sed '$d' <<<"$native")" ]; then
        fail "$name" "printed '${copies%|*}', natively '$native'"
    elif [ "$copies" != "$plain" ]; then
        fail "$name" "with groups '$copies', loops in the text '$plain'"
    else
        pass "$name (as natively, ${copies##*|} with groups and without)"
    fi
}

# summary_of HVRUN CACHE_DIR [WRAPPER...]: a run of progress_spin with
# XDG_CACHE_HOME CACHE_DIR (--log debug), under WRAPPER if given:
# "STDOUT|DIGEST|N" where N counts its texts mapped from the cache's
# images. The guest gets the minimal environment: with the host's it
# would see XDG_CACHE_HOME, and a longer value there moves its stack and
# what its string loops count, so the digests of runs with different
# cache directories differed by the directory's name, not the cache.
summary_of() {
    local hv=$1 dir=$2 err out
    shift 2
    err=$(mktemp)
    out=$(XDG_CACHE_HOME=$dir "$@" timeout -k 5 "$LIMIT" "$hv" run \
        --base-env minimal --progress software --summary --log debug -- \
        "$GUEST/progress_spin" -v 2>"$err")
    echo "$out|$(grep -o 'digest [0-9a-f]*' "$err" | head -1)|$(grep -c \
        "from the run's image (the cache's)" "$err")"
    rm -f "$err"
}

case_image_cache() {
    local hv=$1 name="$2:progress/image-cache" d cold warm again entry n
    d=$(mktemp -d)
    cold=$(summary_of "$hv" "$d")
    n=$(find "$d/hvrun" -name 'progress-image-*' | wc -l)
    warm=$(summary_of "$hv" "$d")
    if [ "$n" -lt 2 ]; then
        fail "$name" "the cold run kept $n images (expected the program's, ld.so's and libc's)"
    elif [ "${cold##*|}" != 0 ] || [ "${warm##*|}" -lt 2 ]; then
        fail "$name" "texts from the cache's images: cold run ${cold##*|}, warm run ${warm##*|}"
    elif [ "${cold%|*}" != "${warm%|*}" ] || [ -z "${cold#*|}" ]; then
        fail "$name" "cold run '$cold', warm run '$warm' (stdout|digest|cached texts)"
    elif ! XDG_CACHE_HOME="$d/fresh" verify_ok "$hv" "$GUEST/progress_spin" -v; then
        fail "$name" "--verify with a fresh cache directory did not pass"
    else
        # Cut short (a header whose file is too short): a miss, replaced.
        for entry in "$d"/hvrun/progress-image-*; do
            truncate -s 4096 "$entry"
        done
        again=$(summary_of "$hv" "$d")
        n=$(find "$d/hvrun" -name 'progress-image-*' -size -5k | wc -l)
        if [ "${again%|*}" != "${cold%|*}" ] || [ "${again##*|}" != 0 ] ||
            [ "$n" != 0 ]; then
            fail "$name" "with entries cut short: '$again' (cold '$cold'), $n still short"
        else
            # A cache directory that cannot be made (its parent a file:
            # unwritable for root too), then a full one.
            : >"$d/file"
            again=$(summary_of "$hv" "$d/file")
            if [ "${again%|*}" != "${cold%|*}" ]; then
                fail "$name" "with an unwritable cache directory: '$again' (cold '$cold')"
            elif ! full_cache_same "$hv" "$d"; then
                fail "$name" "with a full cache directory: not as with a cache"
            else
                pass "$name (${cold%%|*}; ${warm##*|} texts from the cache, the same digest cold and warm; cut, unwritable and full caches fall back)"
            fi
        fi
    fi
    rm -rf "$d"
}

# full_cache_same HVRUN DIR: a run whose cache directory is on a full
# 1 MiB tmpfs (a mount namespace of its own) prints what one with the
# cache directory DIR does there; true where it cannot mount.
full_cache_same() {
    local hv=$1 d=$2 want got
    # sh mounts DIR/full (when asked), then runs the rest of its arguments.
    local mount_full='if [ "$0" = full ]; then
            mount -t tmpfs -o size=1m tmpfs "$XDG_CACHE_HOME" || exit 99
            mkdir "$XDG_CACHE_HOME/hvrun"
            head -c 2m /dev/zero >"$XDG_CACHE_HOME/hvrun/filler" 2>/dev/null
        fi
        exec "$@"'
    mkdir -p "$d/full"
    unshare -m true 2>/dev/null || return 0
    want=$(summary_of "$hv" "$d" unshare -m sh -c "$mount_full" plain)
    got=$(summary_of "$hv" "$d/full" unshare -m sh -c "$mount_full" full)
    case $got in "|"*) return 0 ;; esac # could not mount
    [ "${got%|*}" = "${want%|*}" ] || {
        echo "full: '$got', with a cache: '$want'" >&2
        return 1
    }
}

for hv in "$@"; do
    label=$(basename "$(dirname "$hv")")/$(basename "$hv")
    if needs_kvm "$hv" && ! have_kvm; then
        skip "$label:progress" "no /dev/kvm and HVRUN_BACKEND is not ptrace"
        continue
    fi
    if [ ! -x "$GUEST/progress_alarm" ] || [ ! -x "$GUEST/progress_spin" ] ||
        [ ! -x "$GUEST/progress_hostdata" ] ||
        [ ! -x "$GUEST/progress_unixname" ] ||
        [ ! -x "$GUEST/progress_groups" ]; then
        fail "$label:progress" "build/progress/progress_alarm, progress_spin, progress_hostdata, progress_unixname or progress_groups missing (make test builds them)"
        continue
    fi
    case_spin "$hv" "$label"
    case_hostdata "$hv" "$label"
    case_unixname "$hv" "$label"
    case_image_cache "$hv" "$label"
    case_groups "$hv" "$label"
    case_alarm "$hv" alarm "$RUNS" "$label" 1000
    case_alarm "$hv" itimer "$RUNS" "$label" 100
    case_alarm "$hv" timerfd "$RUNS" "$label" 100
done

finish
