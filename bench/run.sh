#!/usr/bin/env bash
# bench/run.sh HVRUN: side-by-side benchmarks, native vs hvrun, in one run.
#
# Every case runs native and under `HVRUN run --summary`, interleaved
# (rep 1: native then hvrun, rep 2: hvrun then native, ...), and reports the
# medians and the ratio hvrun/native. Exit counts come from --summary. There
# are no pass/fail timing assertions: the machines are shared and noisy, so
# this script reports numbers and exits 0 unless something actually broke
# (a program failing, a missing --summary line).
#
# Knobs (environment): BENCH_STARTUP_REPS (20), BENCH_DD_REPS (5),
# BENCH_DD_COUNT (20000), BENCH_BZ_REPS (5), BENCH_BZ_MB (6),
# BENCH_DOCTOR_REPS (3), BENCH_TOUCH_REPS (5), BENCH_TOUCH_PAGES (4000),
# BENCH_SPAWN_REPS (5), BENCH_SPAWN_COUNT (100), BENCH_FE_COUNT (50), BENCH_CLOCK_COUNT (1000000). The defaults keep the whole run near one minute on
# an idle kvm_pvm host (under three when the host is busy).
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: bench/run.sh HVRUN" >&2
    exit 2
fi
if [ ! -e /dev/kvm ]; then
    echo "SKIP: /dev/kvm is missing (hvrun's kvm backend needs it); no benchmarks run"
    exit 0
fi
if [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
    echo "SKIP: /dev/kvm is not readable and writable by $(id -un); no benchmarks run"
    exit 0
fi

HVRUN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
if [ ! -x "$HVRUN" ]; then
    echo "bench: $1 is not an executable hvrun (run make first)" >&2
    exit 2
fi
SRC=$(cd "$(dirname "$0")" && pwd)
OUT=$(dirname "$HVRUN")/bench # build/bench next to build/hvrun

STARTUP_REPS=${BENCH_STARTUP_REPS:-20}
DD_REPS=${BENCH_DD_REPS:-5}
DD_COUNT=${BENCH_DD_COUNT:-20000}
BZ_REPS=${BENCH_BZ_REPS:-5}
BZ_MB=${BENCH_BZ_MB:-6}
DOCTOR_REPS=${BENCH_DOCTOR_REPS:-3}
TOUCH_REPS=${BENCH_TOUCH_REPS:-5}
TOUCH_PAGES=${BENCH_TOUCH_PAGES:-4000}
SPAWN_REPS=${BENCH_SPAWN_REPS:-5}
SPAWN_COUNT=${BENCH_SPAWN_COUNT:-100}
FE_COUNT=${BENCH_FE_COUNT:-50}
CLOCK_COUNT=${BENCH_CLOCK_COUNT:-1000000}

# ---- what the benchmarks need ------------------------------------------------
# cc and libc.a (for the static helpers), bzip2, dd. Installed from Debian
# packages when missing (a no-op when present). Max RSS comes from wait4()
# in bench/timeit.c, so /usr/bin/time is not needed.
missing=()
command -v cc >/dev/null 2>&1 || missing+=(gcc)
[ -e /usr/lib/x86_64-linux-gnu/libc.a ] || missing+=(libc6-dev)
command -v bzip2 >/dev/null 2>&1 || missing+=(bzip2)
command -v dd >/dev/null 2>&1 || missing+=(coreutils)
if [ ${#missing[@]} -gt 0 ]; then
    echo "bench: installing: ${missing[*]}"
    if [ "$(id -u)" -ne 0 ]; then
        echo "bench: not root; install ${missing[*]} by hand" >&2
        exit 1
    fi
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq "${missing[@]}") >/dev/null
fi

# ---- helpers, built into build/bench ------------------------------------------
mkdir -p "$OUT"
CFLAGS_B=(-O2 -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE)
build() { # build NAME EXTRA-FLAGS...: $SRC/NAME.c -> $OUT/NAME when stale
    local name=$1
    shift
    if [ ! -x "$OUT/$name" ] || [ "$SRC/$name.c" -nt "$OUT/$name" ]; then
        cc "${CFLAGS_B[@]}" "$@" -o "$OUT/$name" "$SRC/$name.c"
    fi
}
build timeit
build gendata
build sysloop
build true_static -static
build true_bare -static -nostdlib
build touch -static -nostdlib
build forkexec -static
build clockloop

TMP=$(mktemp -d "${TMPDIR:-/tmp}/hvrun-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

TRUE_BIN=$(type -P true) # the program, not the shell builtin
DD_BIN=$(type -P dd)
BZIP2_BIN=$(type -P bzip2)
SH_BIN=$(type -P sh)

# run1 TAG MODE IN OUT CMD...: one timed run. MODE is native or hvrun.
# Appends "wall_ns maxrss_kb" to $TMP/TAG.MODE and, for hvrun, "syscalls
# exits" from the --summary line to $TMP/TAG.sum.
run1() {
    local tag=$1 mode=$2 in=$3 out=$4
    shift 4
    local -a cmd=("$@")
    if [ "$mode" = hvrun ]; then
        cmd=("$HVRUN" run --summary -- "$@")
    fi
    local res
    res=$("$OUT/timeit" -i "$in" -o "$out" -- "${cmd[@]}" 3>&1 1>/dev/null \
        2>"$TMP/stderr")
    local ns rss code
    read -r ns rss code <<<"$res"
    if [ "$code" != 0 ]; then
        echo "bench: $tag ($mode) exited $code: ${cmd[*]}" >&2
        cat "$TMP/stderr" >&2
        exit 1
    fi
    echo "$ns $rss" >>"$TMP/$tag.$mode"
    if [ "$mode" = hvrun ]; then
        local line
        line=$(grep '^hvrun: summary:' "$TMP/stderr" || true)
        if [ -z "$line" ]; then
            echo "bench: $tag: no --summary line from hvrun" >&2
            cat "$TMP/stderr" >&2
            exit 1
        fi
        # "syscalls exits wall_s" (wall: hvrun's own timer, VM setup to exit)
        sed -E 's/.*syscalls ([0-9]+),.* exits ([0-9]+) .*wall ([0-9.]+) s.*/\1 \2 \3/' \
            <<<"$line" >>"$TMP/$tag.sum"
    fi
}

# pair TAG REPS IN OUT CMD...: REPS interleaved native/hvrun runs, the order
# alternating each repetition so neither side always runs on a warmer cache.
pair() {
    local tag=$1 reps=$2 in=$3 out=$4 i
    shift 4
    : >"$TMP/$tag.native"
    : >"$TMP/$tag.hvrun"
    : >"$TMP/$tag.sum"
    for ((i = 0; i < reps; i++)); do
        if ((i % 2 == 0)); then
            run1 "$tag" native "$in" "$out" "$@"
            run1 "$tag" hvrun "$in" "$out" "$@"
        else
            run1 "$tag" hvrun "$in" "$out" "$@"
            run1 "$tag" native "$in" "$out" "$@"
        fi
    done
}

# median FILE COLUMN: median of one column (mean of the middle two if even).
median() {
    sort -g -k"$2,$2" "$1" | awk -v c="$2" '{ v[NR] = $c }
        END { if (NR == 0) { print "nan"; exit }
              if (NR % 2) print v[(NR + 1) / 2];
              else printf "%.6g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
spread() { # spread FILE COLUMN SCALE: "min..max" scaled, for the detail lines
    sort -g -k"$2,$2" "$1" | awk -v c="$2" -v s="$3" '{ v[NR] = $c }
        END { printf "%.3g..%.3g", v[1] / s, v[NR] / s }'
}
calc() { awk "BEGIN { printf \"$1\n\", $2 }"; }
exits_per_syscall() { # summed over every hvrun run of the case
    awk '{ s += $1; e += $2 } END { if (s) printf "%.3f", e / s; else print "-" }' \
        "$TMP/$1.sum"
}
syscalls_of() { median "$TMP/$1.sum" 1; }

ROWS=()
row() { # row NAME NATIVE HVRUN RATIO EXITS/SYSCALL
    ROWS+=("$(printf '%-34s %12s %12s %9s %14s' "$@")")
}

T_START=$EPOCHSECONDS
echo "== hvrun bench: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "   host: $(uname -r), nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
echo "   load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "   hvrun: $HVRUN ($("$HVRUN" --version 2>&1 | head -1))"
"$HVRUN" doctor >"$TMP/doctor" 2>&1 || true
HYPERVISOR=$(sed -n 's/^hypervisor: *//p' "$TMP/doctor" | cut -d' ' -f1)
echo "   hypervisor: ${HYPERVISOR:-unknown}"

# ---- 1. raw syscall round trip -------------------------------------------------
echo "-- syscall round trip: hvrun doctor x$DOCTOR_REPS, native getpid loop"
: >"$TMP/rt.hvrun"
: >"$TMP/rt.native"
for ((i = 0; i < DOCTOR_REPS; i++)); do
    "$OUT/sysloop" 200000 >>"$TMP/rt.native"
    "$HVRUN" doctor 2>&1 | sed -n 's/.*syscall round trip \([0-9.]*\) us.*/\1/p' \
        >>"$TMP/rt.hvrun"
done
if [ ! -s "$TMP/rt.hvrun" ]; then
    echo "bench: hvrun doctor printed no syscall round trip:" >&2
    cat "$TMP/doctor" >&2
    exit 1
fi
RT_US=$(median "$TMP/rt.hvrun" 1)
RT_NAT_NS=$(median "$TMP/rt.native" 1)
RT_EXITS=$(sed -n 's/.*calls, \([0-9]*\) exit.*/\1/p' "$TMP/doctor")
echo "   hvrun doctor: median $RT_US us (runs: $(tr '\n' ' ' <"$TMP/rt.hvrun"))"
echo "   native getpid: median $RT_NAT_NS ns"
row "syscall round trip (getpid)" "$(calc '%.2f us' "$RT_NAT_NS / 1000")" \
    "$(calc '%.1f us' "$RT_US")" "$(calc '%.0fx' "$RT_US * 1000 / $RT_NAT_NS")" \
    "${RT_EXITS:-?}.000"

# ---- 2. startup ------------------------------------------------------------------
startup() { # startup TAG LABEL PROGRAM
    echo "-- startup: $2 x$STARTUP_REPS"
    pair "$1" "$STARTUP_REPS" /dev/null /dev/null "$3"
    local n h
    n=$(median "$TMP/$1.native" 1)
    h=$(median "$TMP/$1.hvrun" 1)
    echo "   native $(calc '%.2f' "$n / 1e6") ms ($(spread "$TMP/$1.native" 1 1e6))," \
        "hvrun $(calc '%.2f' "$h / 1e6") ms ($(spread "$TMP/$1.hvrun" 1 1e6);" \
        "$(calc '%.0f' "$(median "$TMP/$1.sum" 3) * 1000") ms by hvrun's own --summary clock)," \
        "$(syscalls_of "$1") syscalls"
    row "startup $2 (ms)" "$(calc '%.2f' "$n / 1e6")" "$(calc '%.2f' "$h / 1e6")" \
        "$(calc '%.1fx' "$h / $n")" "$(exits_per_syscall "$1") ($(syscalls_of "$1"))"
}
startup true "$TRUE_BIN" "$TRUE_BIN"
startup static "true_static" "$OUT/true_static"
startup bare "true_bare" "$OUT/true_bare"

# ---- 2b. first touch of fresh memory -------------------------------------------
# No exits at all: hvrun builds the guest page tables up front, but on a
# nested software hypervisor (kvm_pvm) each guest page still costs the
# hypervisor work the first time it is touched, invisible to hvrun. Marginal
# cost: (t(N pages) - t(0 pages)) / N, for write-first and read-then-write.
echo "-- first touch: $TOUCH_PAGES fresh 4 KiB pages x$TOUCH_REPS (and 0 for the baseline)"
pair touch0 "$TOUCH_REPS" /dev/null /dev/null "$OUT/touch" 0
touch_case() { # touch_case MODE LABEL
    pair "touch_$1" "$TOUCH_REPS" /dev/null /dev/null "$OUT/touch" "$TOUCH_PAGES" "$1"
    local n h
    n=$(calc '%.3f' "($(median "$TMP/touch_$1.native" 1) - $(median "$TMP/touch0.native" 1)) / 1000 / $TOUCH_PAGES")
    h=$(calc '%.2f' "($(median "$TMP/touch_$1.hvrun" 1) - $(median "$TMP/touch0.hvrun" 1)) / 1000 / $TOUCH_PAGES")
    echo "   $2: native $n us/page, hvrun $h us/page"
    row "first touch, $2 (us/page)" "$n" "$h" \
        "$(calc '%.0fx' "$h / ($n > 0 ? $n : 1e-9)")" "$(exits_per_syscall "touch_$1") ($(syscalls_of "touch_$1"))"
}
touch_case w write
touch_case rw "read+write"

# ---- 2c. process spawning: N x `sh -c true` ------------------------------------------
# One sh runs a loop that spawns `sh -c true` N times (fork, exec of sh,
# exit, wait: under hvrun each child is a new VM, each exec another). The
# per-spawn cost is the marginal one: (t(N) - t(0)) / N, so the outer sh's
# own start-up is not smeared over the spawns.
SPAWN_SCRIPT="n=\$1; i=0; while [ \$i -lt \$n ]; do $SH_BIN -c true; i=\$((i+1)); done"
echo "-- spawn: $SPAWN_COUNT x \`sh -c true\` from one sh x$SPAWN_REPS (and 0 for the baseline)"
pair spawn0 "$SPAWN_REPS" /dev/null /dev/null "$SH_BIN" -c "$SPAWN_SCRIPT" spawn 0
pair spawn "$SPAWN_REPS" /dev/null /dev/null "$SH_BIN" -c "$SPAWN_SCRIPT" spawn "$SPAWN_COUNT"
SP_N=$(median "$TMP/spawn.native" 1)
SP_H=$(median "$TMP/spawn.hvrun" 1)
SP0_N=$(median "$TMP/spawn0.native" 1)
SP0_H=$(median "$TMP/spawn0.hvrun" 1)
SP_S=$(syscalls_of spawn)
SP_MS_N=$(calc '%.3f' "($SP_N - $SP0_N) / 1e6 / $SPAWN_COUNT")
SP_MS_H=$(calc '%.2f' "($SP_H - $SP0_H) / 1e6 / $SPAWN_COUNT")
echo "   $SPAWN_COUNT spawns: native $(calc '%.1f' "$SP_N / 1e6") ms ($(spread "$TMP/spawn.native" 1 1e6))," \
    "hvrun $(calc '%.1f' "$SP_H / 1e6") ms ($(spread "$TMP/spawn.hvrun" 1 1e6)), $SP_S syscalls over the tree"
echo "   0 spawns: native $(calc '%.2f' "$SP0_N / 1e6") ms, hvrun $(calc '%.2f' "$SP0_H / 1e6") ms"
echo "   per spawn (fork+exec+exit+wait): native $SP_MS_N ms, hvrun $SP_MS_H ms"
row "$SPAWN_COUNT \`sh -c true\` spawns (ms)" "$(calc '%.1f' "$SP_N / 1e6")" \
    "$(calc '%.1f' "$SP_H / 1e6")" "$(calc '%.1fx' "$SP_H / $SP_N")" \
    "$(exits_per_syscall spawn) ($SP_S)"
row "  fork+exec per spawn (ms)" "$SP_MS_N" "$SP_MS_H" \
    "$(calc '%.0fx' "$SP_MS_H / ($SP_MS_N > 0 ? $SP_MS_N : 1e-9)")" "(derived)"

# ---- 2d. fork and exec, one at a time ------------------------------------------------
# A static program forks N children that exit at once (then N that exec the
# static true), reaping each. Per fork: (t(f, N) - t(f, 0)) / N; per exec:
# (t(e, N) - t(f, N)) / N, the exec of a static glibc program and its run.
echo "-- fork/exec: $FE_COUNT children, _exit at once / exec true_static, x$SPAWN_REPS"
pair fe0 "$SPAWN_REPS" /dev/null /dev/null "$OUT/forkexec" f 0
pair fef "$SPAWN_REPS" /dev/null /dev/null "$OUT/forkexec" f "$FE_COUNT"
pair fee "$SPAWN_REPS" /dev/null /dev/null "$OUT/forkexec" e "$FE_COUNT" "$OUT/true_static"
for m in native hvrun; do
    declare "FE0_$m=$(median "$TMP/fe0.$m" 1)" "FEF_$m=$(median "$TMP/fef.$m" 1)" \
        "FEE_$m=$(median "$TMP/fee.$m" 1)"
done
FORK_N=$(calc '%.3f' "($FEF_native - $FE0_native) / 1e6 / $FE_COUNT")
FORK_H=$(calc '%.2f' "($FEF_hvrun - $FE0_hvrun) / 1e6 / $FE_COUNT")
EXEC_N=$(calc '%.3f' "($FEE_native - $FEF_native) / 1e6 / $FE_COUNT")
EXEC_H=$(calc '%.2f' "($FEE_hvrun - $FEF_hvrun) / 1e6 / $FE_COUNT")
echo "   per fork+exit+wait: native $FORK_N ms, hvrun $FORK_H ms"
echo "   per exec of true_static (and its run): native $EXEC_N ms, hvrun $EXEC_H ms"
row "  fork+exit+wait (ms)" "$FORK_N" "$FORK_H" \
    "$(calc '%.0fx' "$FORK_H / ($FORK_N > 0 ? $FORK_N : 1e-9)")" "$(exits_per_syscall fef)"
row "  exec true_static + run (ms)" "$EXEC_N" "$EXEC_H" \
    "$(calc '%.0fx' "$EXEC_H / ($EXEC_N > 0 ? $EXEC_N : 1e-9)")" "$(exits_per_syscall fee)"

# ---- 2e. clock reads ----------------------------------------------------------------
# clock_gettime through libc: natively the kernel's vDSO, under hvrun its own
# (answered from the logical clock without an exit). Marginal cost per call.
echo "-- clock reads: $CLOCK_COUNT x clock_gettime(CLOCK_MONOTONIC) x$SPAWN_REPS (and 0)"
pair clk0 "$SPAWN_REPS" /dev/null /dev/null "$OUT/clockloop" 0
pair clk "$SPAWN_REPS" /dev/null /dev/null "$OUT/clockloop" "$CLOCK_COUNT"
CLK_N=$(calc '%.4f' "($(median "$TMP/clk.native" 1) - $(median "$TMP/clk0.native" 1)) / 1000 / $CLOCK_COUNT")
CLK_H=$(calc '%.4f' "($(median "$TMP/clk.hvrun" 1) - $(median "$TMP/clk0.hvrun" 1)) / 1000 / $CLOCK_COUNT")
echo "   per call: native $CLK_N us, hvrun $CLK_H us ($(syscalls_of clk) syscalls in the hvrun run)"
row "clock_gettime (us/call)" "$CLK_N" "$CLK_H" \
    "$(calc '%.1fx' "$CLK_H / ($CLK_N > 0 ? $CLK_N : 1e-9)")" \
    "$(exits_per_syscall clk) ($(syscalls_of clk))"

# ---- 3. syscall-heavy: dd bs=1 -----------------------------------------------------
# Per-syscall cost is the marginal one: (t(count=N) - t(count=0)) /
# (syscalls(N) - syscalls(0)), so start-up is not smeared over the calls. The
# native side is assumed to make the same calls as the guest (same binary,
# same libc); hvrun's count is the one measured.
echo "-- syscall-heavy: dd bs=1 count=$DD_COUNT x$DD_REPS (and count=0 for the baseline)"
pair dd0 "$DD_REPS" /dev/null /dev/null "$DD_BIN" if=/dev/zero of=/dev/null bs=1 count=0
pair dd "$DD_REPS" /dev/null /dev/null "$DD_BIN" if=/dev/zero of=/dev/null bs=1 count="$DD_COUNT"
DD_S=$(syscalls_of dd)
DD0_S=$(syscalls_of dd0)
DD_N=$(median "$TMP/dd.native" 1)
DD_H=$(median "$TMP/dd.hvrun" 1)
DD0_N=$(median "$TMP/dd0.native" 1)
DD0_H=$(median "$TMP/dd0.hvrun" 1)
DS=$((DD_S - DD0_S))
DD_US_N=$(calc '%.3f' "($DD_N - $DD0_N) / 1000 / $DS")
DD_US_H=$(calc '%.1f' "($DD_H - $DD0_H) / 1000 / $DS")
echo "   count=$DD_COUNT: native $(calc '%.3f' "$DD_N / 1e9") s ($(spread "$TMP/dd.native" 1 1e9))," \
    "hvrun $(calc '%.3f' "$DD_H / 1e9") s ($(spread "$TMP/dd.hvrun" 1 1e9)), $DD_S syscalls"
echo "   count=0: native $(calc '%.2f' "$DD0_N / 1e6") ms, hvrun $(calc '%.2f' "$DD0_H / 1e6") ms, $DD0_S syscalls"
echo "   whole run per syscall: native $(calc '%.3f' "$DD_N / 1000 / $DD_S") us," \
    "hvrun $(calc '%.1f' "$DD_H / 1000 / $DD_S") us"
row "dd bs=1 (us/syscall)" "$DD_US_N" "$DD_US_H" \
    "$(calc '%.0fx' "$DD_US_H / ($DD_US_N > 0 ? $DD_US_N : 1e-9)")" \
    "$(exits_per_syscall dd) ($DD_S)"

# ---- 4. compute-bound: bzip2 -c ---------------------------------------------------
echo "-- compute-bound: bzip2 -c of $BZ_MB MB of generated text x$BZ_REPS"
"$OUT/gendata" $((BZ_MB * 1000000)) 1 >"$TMP/data.txt"
pair bz "$BZ_REPS" "$TMP/data.txt" /dev/null "$BZIP2_BIN" -c
BZ_N=$(median "$TMP/bz.native" 1)
BZ_H=$(median "$TMP/bz.hvrun" 1)
BZ_S=$(syscalls_of bz)
echo "   native $(calc '%.3f' "$BZ_N / 1e9") s ($(spread "$TMP/bz.native" 1 1e9))," \
    "hvrun $(calc '%.3f' "$BZ_H / 1e9") s ($(spread "$TMP/bz.hvrun" 1 1e9)), $BZ_S syscalls"
row "bzip2 -c ${BZ_MB}MB (s)" "$(calc '%.3f' "$BZ_N / 1e9")" "$(calc '%.3f' "$BZ_H / 1e9")" \
    "$(calc '%.2fx' "$BZ_H / $BZ_N")" "$(exits_per_syscall bz) ($BZ_S)"
# What is left of the hvrun time once every exit is charged at the doctor's
# round trip: an estimate of the guest's pure compute speed (derived, noisy).
BZ_ADJ=$(calc '%.6g' "$BZ_H - $BZ_S * $RT_US * 1000")
echo "   less $BZ_S exits x $RT_US us: hvrun $(calc '%.3f' "$BZ_ADJ / 1e9") s"
row "  same, less exits x round trip" "$(calc '%.3f' "$BZ_N / 1e9")" \
    "$(calc '%.3f' "$BZ_ADJ / 1e9")" "$(calc '%.2fx' "$BZ_ADJ / $BZ_N")" "(derived)"

# ---- 5. memory ------------------------------------------------------------------
RSS_N=$(median "$TMP/bz.native" 2)
RSS_H=$(median "$TMP/bz.hvrun" 2)
echo "-- memory: max RSS of bzip2 -c (wait4 ru_maxrss): native $RSS_N KiB, hvrun $RSS_H KiB"
row "max RSS, bzip2 (MiB)" "$(calc '%.1f' "$RSS_N / 1024")" "$(calc '%.1f' "$RSS_H / 1024")" \
    "$(calc '%.2fx' "$RSS_H / $RSS_N")" "-"

# ---- table ----------------------------------------------------------------------
echo
echo "== summary ($(date -u '+%Y-%m-%d %H:%M UTC'), nproc $(nproc), ${HYPERVISOR:-unknown}," \
    "load $(cut -d' ' -f1-3 /proc/loadavg), $((EPOCHSECONDS - T_START)) s)"
printf '%-34s %12s %12s %9s %14s\n' case native hvrun ratio "exits/syscall"
for r in "${ROWS[@]}"; do
    echo "$r"
done
echo "(medians; ratio = hvrun/native; exits/syscall over all hvrun runs, syscalls in parentheses)"
