#!/usr/bin/env bash
# bench/matrix.sh [options] - the reference program matrix (make matrix).
#
# Runs every row of bench/matrix.rows natively once (exit status, stdout),
# then under `hvrun run --backend B --verify` for each backend, --reps
# times on an idle host and once more beside two CPU burners, and writes
# docs/MATRIX.md: per row Hermit's published result, hvrun's on kvm and
# ptrace, under load, whether hvrun printed what the native run printed,
# and for each row that is not a PASS the cause in one line.
#
#   --quick            one repetition per backend, no run under load
#   --reps N           repetitions per backend on an idle host (default 3)
#   --backends "B..."  default "kvm ptrace"
#   --only REGEX       only rows whose section|name matches (a partial
#                      run: docs are written only with --out)
#   --fresh            forget the results of an earlier, interrupted run
#   --out FILE         where the table goes (default docs/MATRIX.md)
#   --hvrun PATH       default build/hvrun
#
# Resumable: each finished row is kept in build/matrix/state.tsv, and a
# run started again goes on after the last finished row (--fresh to
# start over). Progress on stderr: row k of N, elapsed.
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROWS=$ROOT/bench/matrix.rows
CAUSES=$ROOT/bench/matrix.causes
HV=$ROOT/build/hvrun
REPS=3
BACKENDS="kvm ptrace"
ONLY=""
QUICK=0
FRESH=0
OUT=""
RUN_TIMEOUT=${MATRIX_RUN_TIMEOUT:-300}
while [ $# -gt 0 ]; do
    case $1 in
    --quick) QUICK=1; REPS=1 ;;
    --reps) REPS=$2; shift ;;
    --backends) BACKENDS=$2; shift ;;
    --only) ONLY=$2; shift ;;
    --fresh) FRESH=1 ;;
    --out) OUT=$2; shift ;;
    --hvrun) HV=$2; shift ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "matrix: unknown option $1 (--help)" >&2; exit 2 ;;
    esac
    shift
done
[ -z "$OUT" ] && [ -z "$ONLY" ] && OUT=$ROOT/docs/MATRIX.md
case $HV in /*) ;; *) HV=$PWD/$HV ;; esac
if [ ! -x "$HV" ]; then
    echo "matrix: $HV is not built (make)" >&2
    exit 2
fi

STATE_DIR=$ROOT/build/matrix
W=$STATE_DIR/work   # the fixture directory rows run in (not under /tmp)
STATE=$STATE_DIR/state${ONLY:+.partial}.tsv
META=$STATE.meta    # which hvrun the rows ran, for the table's header
mkdir -p "$STATE_DIR"
[ "$FRESH" = 1 ] || [ -n "$ONLY" ] && rm -f "$STATE" "$META"
touch "$STATE"
# The rows run a copy of hvrun taken when the results started, so a
# rebuild meanwhile cannot mix two binaries in one table (a resumed run
# goes on with the same copy).
FROZEN=$STATE_DIR/hvrun${ONLY:+.partial}
if [ ! -s "$META" ] || [ ! -x "$FROZEN" ]; then
    rm -f "$STATE"
    touch "$STATE"
    cp "$HV" "$FROZEN"
    printf '%s\n%s\n' "$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)" \
        "$(cut -d' ' -f1-3 /proc/loadavg)" > "$META"
fi
HV=$FROZEN

trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; printf '%s' "${s%"${s##*[![:space:]]}"}"; }

# ---- fixtures -------------------------------------------------------------------

make_fixtures() {
    mkdir -p "$W/bin"
    local m=$ROOT/bench/matrix
    if [ ! -s "$W/in.txt" ]; then
        for i in $(seq 1 200); do
            echo "line $i alpha $((i * 7 % 13)) beta gamma $((i % 5))"
        done > "$W/in.txt"
        printf 'a 1\nb 2\nc 3\nd 4\n' > "$W/a.txt"
        printf 'a x\nc y\nd z\ne w\n' > "$W/b.txt"
        printf '#include <stdio.h>\nint main(void){printf("hi\\n");return 0;}\n' > "$W/hello.c"
        printf '#include <stdio.h>\nint main(void){printf("%%s %%s\\n", __DATE__, __TIME__);return 0;}\n' > "$W/date.c"
    fi
    [ "$W/bin/mx" -nt "$m/mx.c" ] ||
        gcc -O1 -fopenmp -pthread -o "$W/bin/mx" "$m/mx.c" -lm
    [ "$W/bin/mxx" -nt "$m/mxx.cc" ] ||
        g++ -O1 -std=c++17 -pthread -o "$W/bin/mxx" "$m/mxx.cc"
    local rustc=/usr/bin/rustc # Debian's
    [ -x "$rustc" ] || rustc=$(type -P rustc)
    if [ ! "$W/bin/mxrs" -nt "$m/mx.rs" ] && [ -n "$rustc" ]; then
        "$rustc" -O -o "$W/bin/mxrs" "$m/mx.rs"
    fi
    if [ ! "$W/bin/gosum" -nt "$m/sum.go" ] && type -P go > /dev/null; then
        (cd "$m" && GOCACHE=$STATE_DIR/gocache GOFLAGS=-mod=mod \
            go build -o "$W/bin/gosum" sum.go)
    fi
    cat > "$W/redis.sh" <<'EOF'
# redis-server on a unix socket in the working directory, then
# SET / GET / SHUTDOWN NOSAVE through redis-cli.
rm -f redis.sock dump.rdb
redis-server --port 0 --unixsocket "$PWD/redis.sock" --save '' --appendonly no \
    --daemonize no --loglevel warning > redis.log 2>&1 &
for i in $(seq 1 200); do [ -S redis.sock ] && break; sleep 0.05; done
redis-cli -s redis.sock SET foo bar
redis-cli -s redis.sock GET foo
redis-cli -s redis.sock SHUTDOWN NOSAVE > /dev/null 2>&1
wait
EOF
    cat > "$W/qemu-boot.sh" <<EOF
# The reproducible images' kernel (make images) booted by QEMU-TCG in
# default mode (no -icount, no pinned -rtc): the init's lines.
qemu-system-x86_64 -accel tcg,thread=single -smp 1 -m 128 -nographic -no-reboot \\
    -kernel "$ROOT/build/images/vmlinux" -initrd "$ROOT/build/images/initramfs.cpio.gz" \\
    -append 'console=ttyS0 rdinit=/init loglevel=7 panic=-1' | tr -d '\\r' | grep -a 'INIT:'
EOF
}

# ---- one row ----------------------------------------------------------------------

BURNERS=()
start_load() {
    local i
    for i in 1 2; do
        (while :; do :; done) &
        BURNERS+=($!)
    done
}
stop_load() {
    [ ${#BURNERS[@]} -gt 0 ] && kill "${BURNERS[@]}" 2> /dev/null
    wait "${BURNERS[@]}" 2> /dev/null
    BURNERS=()
}
trap 'stop_load; exit 130' INT TERM

# verify_once BACKEND CMD: one --verify run; prints "OK", "DIFF", "NONDET",
# "TIMEOUT" or "ERROR" and then the cause line on fd 3.
verify_once() {
    local b=$1 cmd=$2 st msg
    (cd "$W" && timeout -k 10 "$RUN_TIMEOUT" "$HV" run --backend "$b" --verify \
        -- /bin/bash -c "$cmd" > "$STATE_DIR/hv.out" 2> "$STATE_DIR/hv.err" < /dev/null)
    st=$?
    msg=$(grep -a '^hvrun: verify:' "$STATE_DIR/hv.err" | head -n 1)
    if [ "$st" = 124 ] || [ "$st" = 137 ]; then
        echo "TIMEOUT timed out after ${RUN_TIMEOUT} s"
    elif [[ $msg == "hvrun: verify: deterministic"* ]]; then
        echo "OK $st"
    elif [[ $msg == "hvrun: verify: nondeterministic"* ]]; then
        echo "NONDET ${msg#hvrun: verify: nondeterministic: }"
    else
        echo "ERROR hvrun exit $st: $(grep -a '^hvrun:' "$STATE_DIR/hv.err" | head -n 1 | cut -c1-200)"
    fi
}

# run_row SECTION NAME CMP CMD: a TSV line: section, name, native status,
# then per backend "passed/total", the load result, same-as-native, cause.
run_row() {
    local sec=$1 name=$2 cmp=$3 cmd=$4 nst b i r k ok total cause="" same="-"
    (cd "$W" && timeout -k 10 "$RUN_TIMEOUT" /bin/bash -c "$cmd" > "$STATE_DIR/native.out" 2> /dev/null < /dev/null)
    nst=$?
    local fields=()
    for b in $BACKENDS; do
        ok=0
        total=0
        for i in $(seq 1 "$REPS"); do
            r=$(verify_once "$b" "$cmd")
            total=$((total + 1))
            case $r in
            OK*)
                ok=$((ok + 1))
                if [ "$cmp" = native ]; then
                    if cmp -s "$STATE_DIR/native.out" "$STATE_DIR/hv.out" &&
                        [ "${r#OK }" = "$nst" ]; then
                        [ "$same" = no ] || same=yes
                    else
                        same=no
                        [ -n "$cause" ] || cause="$b: output differs from native (native exit $nst, hvrun ${r#OK }): $(diff <(head -c 2000 "$STATE_DIR/native.out") <(head -c 2000 "$STATE_DIR/hv.out") | grep '^[<>]' | head -n 2 | tr '\n' ' ' | cut -c1-160)"
                    fi
                fi
                ;;
            *) [ -n "$cause" ] || cause="$b: ${r#* }" ;;
            esac
            # a row that fails outright need not be repeated
            case $r in TIMEOUT*|ERROR*) break ;; esac
        done
        fields+=("$ok/$total")
    done
    local load="-"
    if [ "$QUICK" = 0 ]; then
        load=""
        start_load
        for b in $BACKENDS; do
            r=$(verify_once "$b" "$cmd")
            case $r in
            OK*) load="$load $b:1/1" ;;
            *) load="$load $b:0/1"; [ -n "$cause" ] || cause="$b under load: ${r#* }" ;;
            esac
        done
        stop_load
        load=$(trim "$load")
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$sec" "$name" "$nst" \
        "${fields[*]}" "$load" "$same" "$(printf '%s' "$cause" | tr '\t\n' '  ')"
}

# ---- the table ----------------------------------------------------------------------

# label PASSED/TOTAL: PASS, FLAKY n/m or FAIL.
label() {
    local ok=${1%/*} total=${1#*/}
    if [ "$total" = 0 ]; then echo "-"
    elif [ "$ok" = "$total" ]; then echo PASS
    elif [ "$ok" = 0 ]; then echo FAIL
    else echo "FLAKY $ok/$total"
    fi
}

write_doc() {
    local out=$1 n=0 npass=0 nkvm=0 nptrace=0 host cpu kind
    cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)
    kind=$("$HV" doctor 2>/dev/null | grep -E '^(hypervisor|CPUID control|PMU|RDTSC trap):' |
        sed 's/  */ /g; s/ (measured in a probe VM[^)]*)//' | cut -c1-110 | paste -sd ';' | sed 's/;/; /g')
    {
        echo "# The reference program matrix"
        echo
        echo "Generated by \`make matrix\` (bench/matrix.sh over bench/matrix.rows); do not edit by hand."
        echo
        echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); hvrun built from $(sed -n 1p "$META")"
        echo "- host: $(trim "$cpu"), $(nproc) cores, kernel $(uname -r)"
        echo "- hvrun doctor: $(trim "$kind")"
        echo "- load average when the rows started: $(sed -n 2p "$META"); when the table was written: $(cut -d' ' -f1-3 /proc/loadavg)"
        echo "- each row: \`hvrun run --backend B --verify -- bash -c COMMAND\`, $REPS time(s) per backend$([ "$QUICK" = 0 ] && echo ", then once per backend beside two CPU burners (\"under load\")"); whatever else the host ran meanwhile shows in the load averages above"
        echo "- PASS: every run verified (and, where the row compares with native, printed what the native run printed with the same exit status); FLAKY n/m: n of m verified; FAIL: none did"
        echo "- \"= native\": hvrun's stdout and exit status equal the native run's (\"-\": the row's output depends on time, randomness, pids or the host, so only hvrun's two runs are compared)"
        echo
        local sec="" line s name hermit cmpk cmd st nst res load same cause kv pv
        while IFS= read -r line; do
            case $line in ''|'#'*) continue ;; esac
            IFS='|' read -r s name hermit cmpk cmd <<< "$line"
            s=$(trim "$s"); name=$(trim "$name"); hermit=$(trim "$hermit"); cmd=$(trim "$cmd")
            st=$(awk -F'\t' -v s="$s" -v n="$name" '$1 == s && $2 == n' "$STATE" | tail -n 1)
            [ -n "$st" ] || continue
            IFS=$'\t' read -r _ _ nst res load same cause <<< "$st"
            if [ "$s" != "$sec" ]; then
                sec=$s
                echo
                echo "## $sec"
                echo
                echo "| row | command | Hermit | hvrun kvm | hvrun ptrace | under load | = native | cause (non-PASS) |"
                echo "|---|---|---|---|---|---|---|---|"
            fi
            read -r kv pv <<< "$res"
            local kl pl
            kl=$(label "${kv:-0/0}")
            pl=$(label "${pv:-0/0}")
            if [ "$same" = no ]; then
                [ "$kl" = PASS ] && kl="DIFF"
                [ "$pl" = PASS ] && pl="DIFF"
            fi
            local manual
            manual=$(awk -F'|' -v n="$name" '{gsub(/^ +| +$/, "", $1)} $1 == n {sub(/^[^|]*\| */, ""); print}' "$CAUSES" 2>/dev/null | head -n 1)
            [ -n "$manual" ] && cause=$manual
            n=$((n + 1))
            [ "$kl" = PASS ] && nkvm=$((nkvm + 1))
            [ "$pl" = PASS ] && nptrace=$((nptrace + 1))
            if [ "$kl" = PASS ] && [ "$pl" = PASS ] && [[ $load != *":0/1"* ]]; then
                npass=$((npass + 1))
                cause=""
            fi
            [ "$nst" != 0 ] && hermit="$hermit (native exit $nst here)"
            printf '| %s | `%s` | %s | %s | %s | %s | %s | %s |\n' "$name" \
                "$(printf '%s' "$cmd" | sed 's/|/\\|/g')" "$hermit" "$kl" "$pl" \
                "${load//:/ }" "${same/yes/yes}" "$(printf '%s' "$cause" | sed 's/|/\\|/g')"
        done < "$ROWS"
        echo
        echo "## Totals"
        echo
        echo "$n rows: PASS on kvm $nkvm, PASS on ptrace $nptrace; PASS on both backends and under load: $npass."
    } > "$out"
}

# ---- main ---------------------------------------------------------------------------

make_fixtures || { echo "matrix: building the fixtures failed" >&2; exit 2; }
mapfile -t LINES < <(grep -v '^[[:space:]]*#' "$ROWS" | grep -v '^[[:space:]]*$')
N=${#LINES[@]}
T0=$(date +%s)
k=0
RAN=0
for line in "${LINES[@]}"; do
    k=$((k + 1))
    IFS='|' read -r s name hermit cmpk cmd <<< "$line"
    s=$(trim "$s"); name=$(trim "$name"); cmpk=$(trim "$cmpk"); cmd=$(trim "$cmd")
    if [ -n "$ONLY" ] && ! [[ "$s|$name" =~ $ONLY ]]; then
        continue
    fi
    RAN=$((RAN + 1))
    if awk -F'\t' -v s="$s" -v n="$name" '$1 == s && $2 == n {f=1} END {exit !f}' "$STATE"; then
        continue # done in an earlier run
    fi
    printf 'matrix: row %d of %d (%s %s), %d s\n' "$k" "$N" "$s" "$name" \
        $(($(date +%s) - T0)) >&2
    run_row "$s" "$name" "$cmpk" "$cmd" >> "$STATE"
done
if [ -n "$OUT" ]; then
    write_doc "$OUT"
    echo "matrix: $RAN of $N rows run in $(($(date +%s) - T0)) s; $OUT written" >&2
    grep -A2 '^## Totals' "$OUT" | tail -n 1 >&2
else
    cat "$STATE"
fi
