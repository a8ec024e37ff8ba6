#!/usr/bin/env bash
# bench/backends.sh HVRUN: native, `hvrun run --backend kvm`, `hvrun run
# --backend ptrace` and `strace -f` side by side, in one run, on the same
# commands (issue 10's table). Each row runs every column REPS times,
# interleaved and rotated (rep 1: native kvm ptrace strace, rep 2: kvm
# ptrace strace native, ...), and prints the median wall time of each and
# its ratio to native. A backend that cannot run here (no /dev/kvm, ptrace
# not built or not permitted) is a column of "n/a" with the reason below
# the table. No timing is asserted: the machines are shared and noisy.
#
# Rows marked "par:" run nproc copies of the command at once, each under
# its own prefix (N concurrent hvrun runs: whether runs scale over cores).
#
# BENCH_REPS (default 5), BENCH_DD_COUNT (20000), BENCH_SH_COUNT (200),
# BENCH_RDTSC_COUNT (100000), BENCH_ROWS (a regex: only rows whose title
# matches run).
# Output: a markdown table on stdout, progress on stderr.
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: bench/backends.sh HVRUN" >&2
    exit 2
fi
HVRUN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
[ -x "$HVRUN" ] || { echo "bench: $1 is not an executable hvrun" >&2; exit 2; }
SRC=$(cd "$(dirname "$0")" && pwd)
OUT=$(dirname "$HVRUN")/bench
REPS=${BENCH_REPS:-5}
DD_COUNT=${BENCH_DD_COUNT:-20000}
SH_COUNT=${BENCH_SH_COUNT:-200}
RDTSC_COUNT=${BENCH_RDTSC_COUNT:-100000}
ROW_FILTER=${BENCH_ROWS:-}
NPAR=$(nproc)

missing=()
for p in strace gcc bzip2 python3 make; do
    command -v "$p" >/dev/null 2>&1 || missing+=("$p")
done
/usr/bin/python3 -c "import pytest" 2>/dev/null || missing+=(python3-pytest)
if [ ${#missing[@]} -gt 0 ]; then
    echo "bench: installing: ${missing[*]}" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq "${missing[@]}") >/dev/null
fi

mkdir -p "$OUT"
for t in timeit rdtscloop; do
    if [ ! -x "$OUT/$t" ] || [ "$SRC/$t.c" -nt "$OUT/$t" ]; then
        cc -O2 -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -o "$OUT/$t" \
            "$SRC/$t.c"
    fi
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/hvrun-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
cd "$TMP"
printf '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n' >hello.c
head -c $((4 << 20)) /dev/urandom | od -An -tx1 >bz.in # 4 MiB of random, as text
# The bytes themselves: bzip2's move-to-front loop is hot on these, a
# short loop whose counting once doubled the time (docs/PERFORMANCE.md).
head -c $((4 << 20)) /dev/urandom >bzr.in

# A multi-file C project for `make -j2` (16 units, one header).
mkdir -p proj
printf 'int unit(int);\n' >proj/u.h
for i in $(seq 1 16); do
    printf '#include "u.h"\n#include <stdio.h>\n#include <string.h>\nint f%d(int x) { char b[64]; snprintf(b, sizeof b, "%%d", x); return (int)strlen(b) + %d; }\n' \
        "$i" "$i" >"proj/f$i.c"
done
printf '#include <stdio.h>\nint main(void) { puts("proj"); return 0; }\n' >proj/main.c
{
    printf 'OBJS := main.o'
    for i in $(seq 1 16); do printf ' f%d.o' "$i"; done
    printf '\nproj: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n%%.o: %%.c u.h\n\t$(CC) -O1 -c -o $@ $<\nclean:\n\trm -f proj *.o\n'
} >proj/Makefile

# A configure-like script: the spawn pattern of autoconf's checks (a
# heredoc'd test program, the compiler, sed and grep on its output, test).
cat >configure.sh <<'CONF'
#!/bin/sh
n=0
for h in stdio.h stdlib.h string.h unistd.h fcntl.h errno.h time.h signal.h \
    sys/types.h sys/stat.h sys/wait.h sys/mman.h limits.h stdint.h; do
    printf '#include <%s>\nint main(void) { return 0; }\n' "$h" >conftest.c
    if cc -c -o conftest.o conftest.c 2>conftest.err; then
        def=$(echo "HAVE_$h" | tr 'a-z./' 'A-Z__' | sed 's/__*/_/g')
        echo "#define $def 1" >>confdefs.h
        n=$((n + 1))
    fi
    grep -q error conftest.err && echo "no $h"
    test -f conftest.o && rm -f conftest.o
done
for f in strlen memcpy mmap fork; do
    printf 'char %s(void);\nint main(void) { return (int)(long)%s; }\n' "$f" "$f" >conftest.c
    cc -o conftest conftest.c 2>/dev/null && echo "#define HAVE_$(echo "$f" | tr a-z A-Z) 1" >>confdefs.h
    rm -f conftest
done
rm -f conftest.c conftest.err confdefs.h
echo "$n headers"
CONF

# A pytest session of 50 small tests.
mkdir -p pyt
{
    echo 'import json, os, re'
    for i in $(seq 1 50); do
        printf 'def test_%d(tmp_path):\n    p = tmp_path / "f"\n    p.write_text(json.dumps({"i": %d}))\n    assert json.loads(p.read_text())["i"] == %d and re.match(r"\\d+", str(%d))\n' "$i" "$i" "$i" "$i"
    done
} >pyt/test_many.py

# ---- the columns ------------------------------------------------------------
COLS=(native kvm ptrace strace)
declare -A WHY=()
column_cmd() { # column_cmd COL: the prefix that runs a command in that column
    case $1 in
    native) ;;
    kvm) printf '%s\n' "$HVRUN" run --backend kvm -- ;;
    ptrace) printf '%s\n' "$HVRUN" run --backend ptrace -- ;;
    strace) printf '%s\n' strace -f -qq -o /dev/null ;;
    esac
}
probe() { # probe COL: can the column run /bin/true? else WHY[COL]
    local col=$1 out
    mapfile -t pre < <(column_cmd "$col")
    if ! out=$("${pre[@]}" /bin/true 2>&1); then
        WHY[$col]=$(printf '%s' "$out" | head -n 1 | cut -c1-160)
        [ -n "${WHY[$col]}" ] || WHY[$col]="exit status $?"
    fi
}
for c in "${COLS[@]}"; do probe "$c"; done

# ---- the rows ---------------------------------------------------------------
ROWS=(
    "startup (/bin/true)|/bin/true"
    "dd bs=1 count=$DD_COUNT|dd if=/dev/zero of=/dev/null bs=1 count=$DD_COUNT status=none"
    "ls -la /usr/bin|ls -la /usr/bin"
    "$SH_COUNT x sh -c true|sh -c 'i=0; while [ \$i -lt $SH_COUNT ]; do sh -c true; i=\$((i+1)); done'"
    "python3 -c pass|python3 -c pass"
    "gcc hello.c|gcc -o hello hello.c"
    "bzip2 4 MiB|bzip2 -c bz.in"
    "bzip2 4 MiB random bytes|bzip2 -c bzr.in"
    "rdtsc x $RDTSC_COUNT|$OUT/rdtscloop $RDTSC_COUNT"
    "configure-like script|sh configure.sh"
    "make -j2 (17 C files)|make -s -C proj clean && make -s -j2 -C proj"
    "pytest, 50 tests|/usr/bin/python3 -m pytest -q -p no:cacheprovider pyt"
    "$NPAR x bzip2 at once|par:bzip2 -c bz.in"
)

median() { sort -n | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print ""}'; }

# one ROW COL: one timed run, its wall ns appended to $TMP/ROW.COL
one() {
    local r=$1 col=$2 cmd=$3 res ns rss code
    mapfile -t pre < <(column_cmd "$col")
    if [[ $cmd == par:* ]]; then
        # nproc copies at once, each under its own prefix; any failure fails.
        local one_cmd="" # native: no prefix (printf of none gives '')
        [ ${#pre[@]} -gt 0 ] && one_cmd="$(printf '%q ' "${pre[@]}")"
        one_cmd="$one_cmd sh -c $(printf '%q' "${cmd#par:}") >/dev/null"
        pre=()
        cmd="pids=; for i in \$(seq $NPAR); do $one_cmd & pids=\"\$pids \$!\"; done; st=0; for p in \$pids; do wait \$p || st=1; done; exit \$st"
    fi
    res=$("$OUT/timeit" -o /dev/null -- "${pre[@]}" sh -c "$cmd" 3>&1 \
        2>"$TMP/err") || true
    read -r ns rss code <<<"$res"
    if [ "${code:-1}" != 0 ]; then
        WHY[$col]="row '$r' exited ${code:-?}: $(head -n 1 "$TMP/err" | cut -c1-120)"
        return
    fi
    echo "$ns" >>"$TMP/$r.$col"
}

nrows=${#ROWS[@]}
for ((r = 0; r < nrows; r++)); do
    cmd=${ROWS[r]#*|}
    if [ -n "$ROW_FILTER" ] && ! [[ ${ROWS[r]%%|*} =~ $ROW_FILTER ]]; then
        continue
    fi
    echo "bench: row $((r + 1))/$nrows: ${ROWS[r]%%|*}" >&2
    for ((i = 0; i < REPS; i++)); do
        for ((k = 0; k < ${#COLS[@]}; k++)); do
            col=${COLS[(k + i) % ${#COLS[@]}]}
            [ -z "${WHY[$col]:-}" ] && one "$r" "$col" "$cmd"
        done
    done
done

# ---- the table -------------------------------------------------------------
host=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
hyp=$("$HVRUN" doctor 2>/dev/null | sed -n 's/^hypervisor: *//p' | cut -d' ' -f1)
echo "$(date -u +%Y-%m-%d), $host, $(nproc) cores, ${hyp:-no kvm}, load $(cut -d' ' -f1-3 /proc/loadavg); median of $REPS, wall seconds (x native)"
echo
echo "| command | native | kvm | ptrace | strace -f |"
echo "|---------|--------|-----|--------|-----------|"
for ((r = 0; r < nrows; r++)); do
    if [ -n "$ROW_FILTER" ] && ! [[ ${ROWS[r]%%|*} =~ $ROW_FILTER ]]; then
        continue
    fi
    line="| ${ROWS[r]%%|*} |"
    base=$(median <"$TMP/$r.native" 2>/dev/null || true)
    for col in "${COLS[@]}"; do
        m=$( [ -s "$TMP/$r.$col" ] && median <"$TMP/$r.$col" || true)
        if [ -z "$m" ]; then
            line+=" n/a |"
        elif [ "$col" = native ] || [ -z "$base" ]; then
            line+=" $(awk -v n="$m" 'BEGIN {printf "%.3f", n / 1e9}') |"
        else
            line+=" $(awk -v n="$m" -v b="$base" 'BEGIN {printf "%.3f (%.1fx)", n / 1e9, n / b}') |"
        fi
    done
    echo "$line"
done
for col in "${COLS[@]}"; do
    [ -n "${WHY[$col]:-}" ] && echo && echo "$col: n/a: ${WHY[$col]}"
done
exit 0
