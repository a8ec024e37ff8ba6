#!/bin/bash
# tests/stress/run.sh - stress-ng's stressors natively and under hvrun.
#
# For every stressor that `stress-ng --stressors` lists (or the subset in
# STRESSORS="a b c"): run it natively, then under `hvrun run --verify` on the
# kvm and the ptrace backend, each run in a bubblewrap sandbox of its own
# (stressors are destructive: own pid/net/ipc/uts namespaces, / read-only,
# private /tmp, /var/tmp and /dev/shm, no capabilities, /dev/kvm bound in).
# Results go to $STRESS_OUT (build/stress): one file per stressor and mode,
# so an interrupted pass resumes where it stopped (delete a result file, or
# set STRESS_REDO=1, to run it again). At the end docs/STRESS.md is written
# from every result there (`run.sh --report` writes only the report).
# Each pass appends to $STRESS_OUT/provenance/MODE the date, the hvrun
# build (hvrun --version) and how many stressors it was given, and the
# report says, per column, which builds and dates its rows come from.
#
# A column that cannot be re-run on this host (kvm without /dev/kvm) is
# kept by `IMPORT_MODES=kvm run.sh --import DOC` (the default: kvm): DOC's
# verdicts, ratios and causes for those modes become result files in
# $STRESS_OUT (rc "-", the ratio as DOC gave it, the cause in cause/S.MODE,
# no log), and DOC's own account of its builds becomes the column's
# provenance. A pass with MODES="native ptrace" then rewrites the native and
# ptrace columns and the report keeps the imported kvm rows.
#
# How a run is made to finish deterministically:
#   1. native, timed: `--STRESSOR 1 --timeout 3s --metrics-brief` gives the
#      pass/fail verdict on this machine and B, the bogo ops done in 3 s.
#   2. native, counted: `--STRESSOR-ops N` with N = B/100 (at least 1), about
#      30 ms of native work (hvrun runs a syscall-heavy stressor 20-200
#      times slower): the baseline time for the ratio.
#   3. hvrun --verify with the same `--STRESSOR-ops N` and virtual time. A
#      counted run does a fixed amount of work, so its output and detlog can
#      agree between the two runs; a timed one cannot: a 3 s timeout in
#      logical time is millions of syscalls (logical time moves ~1 us per
#      event), minutes of host time, and a computing loop's bogo-op count
#      depends on where host-timed preemption cuts it. Bogo-op metrics are
#      left out under hvrun for the same reason (usr/sys columns).
#   Stressors that do no counted op natively (B = 0, or the counted run
#   fails) run timed under hvrun instead, with --no-virtualize-time and -q:
#   they are timed by the wall clock, once, without --verify (their detlog
#   holds host clock readings, which differ between any two runs), and only
#   the exit status counts.
#
# Environment: STRESSORS (subset), JOBS (parallel stressors, at most 2),
# MODES (default "native kvm ptrace"), HVRUN (default build/hvrun),
# HVRUN_LIMIT (host seconds for one hvrun invocation, at least; default 60),
# HVRUN_RATIO_LIMIT (a --verify pair also gets this many times its two
# runs' native counted time, default 100: limit_for),
# STRESS_OUT, STRESS_DOC (default docs/STRESS.md; empty: no report),
# IMPORT_MODES (--import: the columns to take from DOC, default kvm).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SELF="$ROOT/tests/stress/run.sh"
HVRUN=${HVRUN:-$ROOT/build/hvrun}
OUT=${STRESS_OUT:-$ROOT/build/stress}
DOC=${STRESS_DOC-$ROOT/docs/STRESS.md}
CAUSES="$ROOT/tests/stress/causes.txt"
MODES=${MODES:-native kvm ptrace}
HVRUN_LIMIT=${HVRUN_LIMIT:-60}
HVRUN_RATIO_LIMIT=${HVRUN_RATIO_LIMIT:-100}
NATIVE_SECONDS=3
JOBS=${JOBS:-2}
[ "$JOBS" -gt 2 ] && JOBS=2
export HVRUN OUT MODES HVRUN_LIMIT HVRUN_RATIO_LIMIT

# One sandbox per run; the working directory is a private tmpfs, where
# stress-ng puts its temporary files.
. "$ROOT/tests/lib/sandbox.sh"
sandbox() { sandbox_run --cap-drop ALL --chdir /var/tmp "$@"; }

now() { date +%s.%N; }
elapsed() { echo "$1 $(now)" | awk '{ printf "%.2f", $2 - $1 }'; }

# status <rc>: the verdict word for an exit status.
status_of() {
    case $1 in
    0) echo pass ;;
    120) echo differs ;;
    124 | 137) echo timeout ;;
    125) echo hvrun-error ;;
    *) echo "fail($1)" ;;
    esac
}

# A run that exited 0 without running the stressor: stress-ng skips one
# that a missing syscall or privilege makes unsupported, and exits 0.
not_run() { grep -q -E 'No stress workers invoked|stressor will be skipped' "$1" 2>/dev/null; }

# The verdict of stressor $1 in mode $2 from its result and log: "skipped"
# natively, "unsupported" under hvrun, for a run that did not run it.
verdict() {
    local st
    read -r st _ <"$OUT/results/$1.$2"
    if [ "$st" = pass ] && not_run "$OUT/log/$1.$2"; then
        [ "$2" = native ] && st=skipped || st=unsupported
    fi
    echo "$st"
}

# The bogo-op count of stressor $1 in metrics-brief log $2 (0 if none).
bogo_ops() {
    awk -v s="$1" '$2 == "metrc:" && $4 == s { print $5; found = 1; exit }
                   END { if (!found) print 0 }' "$2"
}

run_native() {
    local s=$1 r="$OUT/results/$s.native" log="$OUT/log/$s.native"
    local t0 rc secs ops n nrc nsecs mode
    t0=$(now)
    sandbox timeout -k 5 $((NATIVE_SECONDS + 30)) stress-ng --"$s" 1 \
        --timeout ${NATIVE_SECONDS}s --metrics-brief >"$log" 2>&1
    rc=$?
    secs=$(elapsed "$t0")
    ops=$(bogo_ops "$s" "$log")
    [[ $ops =~ ^[0-9]+$ ]] || ops=0
    n=$((ops / 100))
    [ $n -lt 1 ] && n=1
    mode=counted nrc=0 nsecs=0
    if [ $rc -eq 0 ] && [ "$ops" -gt 0 ]; then
        t0=$(now)
        sandbox timeout -k 5 60 stress-ng --"$s" 1 --"$s"-ops $n \
            --timeout 60s >"$log.counted" 2>&1
        nrc=$?
        nsecs=$(elapsed "$t0")
        [ $nrc -eq 0 ] || mode=timed
    else
        mode=timed
    fi
    [ $mode = timed ] && nsecs=$secs
    echo "$(status_of $rc) $rc $secs $ops $n $mode $nsecs" >"$r"
}

# limit_for STRESSOR: host seconds for its hvrun invocation. A counted
# --verify pair does the native counted run's work twice, and stress-ng's
# "N = B/100, about 30 ms" is far more for a stressor whose one op is
# hundreds of thousands of calls (mmap: 2.65 s natively for its one op):
# such a pair gets HVRUN_RATIO_LIMIT times the native time per run, so
# the limit catches a hang, not a syscall-heavy stressor's exit cost
# (20-200x native under either backend; `strace -f` pays the same order).
limit_for() {
    local mode nsecs
    read -r _ _ _ _ _ mode nsecs <"$OUT/results/$1.native"
    awk -v l="$HVRUN_LIMIT" -v k="$HVRUN_RATIO_LIMIT" -v m="$mode" -v n="$nsecs" \
        'BEGIN { t = (m == "counted") ? 2 * k * n : 0; printf "%d", (t > l ? t + 0.5 : l) }'
}

run_hvrun() {
    local s=$1 backend=$2 r="$OUT/results/$s.$2" log="$OUT/log/$s.$2"
    local nat mode n t0 rc args opts
    read -r _ _ _ _ n mode _ <"$OUT/results/$s.native"
    if [ "$(verdict "$s" native)" != pass ]; then
        echo "skip 0 0" >"$r"
        return
    fi
    opts=(--backend "$backend")
    if [ "$mode" = counted ]; then
        opts+=(--verify)
        args=(--"$s"-ops "$n" --timeout 60s)
    else
        opts+=(--no-virtualize-time)
        args=(--timeout ${NATIVE_SECONDS}s -q)
    fi
    t0=$(now)
    sandbox timeout -k 5 "$(limit_for "$s")" "$HVRUN" run "${opts[@]}" -- \
        stress-ng --"$s" 1 "${args[@]}" >"$log" 2>&1
    rc=$?
    echo "$(status_of $rc) $rc $(elapsed "$t0")" >"$r"
}

# One stressor, every mode not yet done; one progress line.
run_stressor() {
    local s=$1 line="$1:" m st
    mkdir -p "$OUT/results" "$OUT/log"
    for m in $MODES; do
        if [ ! -s "$OUT/results/$s.$m" ] || [ -n "${STRESS_REDO:-}" ]; then
            if [ "$m" = native ]; then
                run_native "$s"
            else
                [ -s "$OUT/results/$s.native" ] || run_native "$s"
                run_hvrun "$s" "$m"
            fi
        fi
        line+=" $m=$(verdict "$s" "$m")"
    done
    echo "$line"
}

if [ "${1:-}" = __one ]; then
    run_stressor "$2"
    exit 0
fi

# ---- the report ------------------------------------------------------------

# Why a run failed, as its log shows it: unsupported syscalls hvrun logged,
# the --verify difference, or stress-ng's own failure line.
diagnose() {
    local log=$1 enosys s
    s=$(basename "$log")
    s=${s%.*}
    # An imported result has no log, only the cause its report gave.
    [ -f "$log" ] || { cat "${log/\/log\//\/cause\/}" 2>/dev/null; return; }
    enosys=$(grep -o 'unsupported syscall [a-z0-9_]*' "$log" |
        awk '{ print $3 }' | sort -u | paste -sd, -)
    [ -n "$enosys" ] && printf 'ENOSYS: %s; ' "$enosys"
    grep -m1 -o 'nondeterministic: differs in: [a-z, ;]*' "$log" |
        sed 's/;* *$/; /' | tr -d '\n'
    grep -m1 -E 'hvrun: .*(failed|error|Bad address|stub)' "$log" |
        grep -v 'unsupported syscall' | cut -c1-140 | sed 's/$/; /' | tr -d '\n'
    grep -m1 -E 'stress-ng: (fail|error):' "$log" | cut -c1-160 | tr -d '\n'
    grep -m1 -o 'interrupted by SIGTERM during run [0-9] of 2' "$log" |
        sed "s/^/not done in $(limit_for "$s") s of host time: /" | tr -d '\n'
}

# The curated cause of a stressor's mismatch (tests/stress/causes.txt:
# "STRESSOR[/BACKEND] cause..."), if any.
curated_cause() {
    local s=$1 b=$2
    [ -f "$CAUSES" ] || return
    awk -v a="$s/$b" -v s="$s" '/^#/ { next } $1 == a { $1 = ""; print substr($0, 2); f = 1; exit }
        END { if (!f) exit 1 }' "$CAUSES" && return
    awk -v s="$s" '/^#/ { next } $1 == s { $1 = ""; print substr($0, 2); exit }' "$CAUSES"
}

# host seconds of one hvrun run ($1: the whole invocation, $3: its number of
# runs) over the native run's ($2).
ratio() { awk -v h="$1" -v n="$2" -v k="$3" 'BEGIN { if (n > 0) printf "%.1f", h / k / n; else print "-" }'; }

# The ratio column of stressor $1 in mode $2 (native baseline $3, $4 runs):
# an imported result's own ratio, else computed from its host seconds.
mode_ratio() {
    local rc secs imported
    read -r _ rc secs imported <"$OUT/results/$1.$2"
    if [ "$rc" = - ]; then echo "${imported:--}"; else ratio "$secs" "$3" "$4"; fi
}

# Is the result of stressor $1 in mode $2 imported from a report?
imported() { [ "$(awk '{ print $2; exit }' "$OUT/results/$1.$2")" = - ]; }

report() {
    local s nat nrc nsecs ops n mode nbase total=0 npass=0 kpass=0 ppass=0
    local rows="" mism="" kst pst kc pc kr pr
    for r in "$OUT"/results/*.native; do
        [ -e "$r" ] || continue
        s=$(basename "$r" .native)
        read -r _ nrc nsecs ops n mode nbase <"$r"
        nat=$(verdict "$s" native)
        total=$((total + 1))
        kst=- pst=-
        [ -s "$OUT/results/$s.kvm" ] && kst=$(verdict "$s" kvm)
        [ -s "$OUT/results/$s.ptrace" ] && pst=$(verdict "$s" ptrace)
        [ "$nat" = pass ] || continue
        npass=$((npass + 1))
        [ "$kst" = pass ] && kpass=$((kpass + 1))
        [ "$pst" = pass ] && ppass=$((ppass + 1))
        kc="" pc="" runs=2 kr=- pr=-
        [ "$mode" = timed ] && runs=1
        [ "$kst" != - ] && kr=$(mode_ratio "$s" kvm "$nbase" $runs)
        [ "$pst" != - ] && pr=$(mode_ratio "$s" ptrace "$nbase" $runs)
        [ "$kst" != pass ] && [ "$kst" != - ] && kc="$(curated_cause "$s" kvm)"
        [ "$kst" != pass ] && [ "$kst" != - ] && [ -z "$kc" ] && imported "$s" kvm &&
            kc="$(diagnose "$OUT/log/$s.kvm")"
        [ "$kst" = timeout ] && [ "$pst" = pass ] && [ -z "$kc" ] &&
            kc="slow, not a hang: passes under ptrace; a kvm_pvm syscall round trip (hvrun doctor) made the --verify pair of this syscall-heavy stressor take over $(limit_for "$s") s"
        [ "$kst" != pass ] && [ "$kst" != - ] && [ -z "$kc" ] && kc="$(diagnose "$OUT/log/$s.kvm")"
        [ "$pst" != pass ] && [ "$pst" != - ] &&
            pc="$(curated_cause "$s" ptrace)" && [ -z "$pc" ] && pc="$(diagnose "$OUT/log/$s.ptrace")"
        [ "$kst" != pass ] && [ "$kst" != - ] && [ -z "$kc" ] && kc="no diagnosis yet (log/$s.kvm)"
        [ "$pst" != pass ] && [ "$pst" != - ] && [ -z "$pc" ] && pc="no diagnosis yet (log/$s.ptrace)"
        rows+="| $s | pass ($ops ops/3 s) | $mode $n | $kst | $pst | $kr | $pr |"$'\n'
        [ -n "$kc$pc" ] || continue
        if [ "$kc" = "$pc" ]; then
            mism+="- **$s** (kvm $kst, ptrace $pst): $kc"$'\n'
        else
            [ -n "$kc" ] && mism+="- **$s** (kvm $kst): $kc"$'\n'
            [ -n "$pc" ] && mism+="- **$s** (ptrace $pst): $pc"$'\n'
        fi
    done
    {
        cat "$ROOT/tests/stress/header.md"
        echo
        echo "## Which build each column is from"
        echo
        echo "A row is the most recent run of that stressor in that mode."
        echo
        local m
        for m in native kvm ptrace; do
            [ -s "$OUT/provenance/$m" ] || continue
            echo "- $m:"
            sed 's/^/  /' "$OUT/provenance/$m"
        done
        echo
        echo "## Totals"
        echo
        echo "$total stressors tried; $npass pass natively on this machine" \
            "(in the sandbox, without capabilities); of those $kpass pass" \
            "under kvm and $ppass under ptrace (exit 0, the stressor ran, and" \
            "--verify agrees). A native skip (stress-ng exits 0 without" \
            "running the stressor) is not counted as a native pass."
        echo
        echo "## Mismatches"
        echo
        printf '%s' "$mism"
        echo
        echo "## Native failures and skips (not run under hvrun)"
        echo
        echo "Exit status in parentheses; *skipped*: stress-ng exited 0" \
            "without running it (no privilege in the sandbox, or no support" \
            "in this kernel or machine)."
        echo
        for r in "$OUT"/results/*.native; do
            s=$(basename "$r" .native)
            read -r _ nrc _ <"$r"
            nat=$(verdict "$s" native)
            [ "$nat" = pass ] && continue
            [ "$nat" = skipped ] && nrc=skipped
            printf '%s (%s) ' "$s" "$nrc"
        done
        echo
        echo
        echo "## Every stressor that passes natively"
        echo
        echo "hvrun run: counted N = \`--STRESSOR-ops N\` under --verify and" \
            "virtual time; timed = \`--timeout 3s\` once, --no-virtualize-time." \
            "ratio: host seconds of one hvrun run (half the --verify pair;" \
            "hvrun start-up included) over the native run of the same work."
        echo
        echo "| stressor | native | hvrun run | kvm | ptrace | kvm ratio | ptrace ratio |"
        echo "|---|---|---|---|---|---|---|"
        printf '%s' "$rows"
    } >"$DOC"
    echo "report: $DOC ($npass native passes; kvm $kpass, ptrace $ppass)"
}

# ---- keeping a column that cannot be re-run here ------------------------------

# import_doc DOC: for each mode of IMPORT_MODES, DOC's verdict, ratio and
# cause of every stressor its table lists, as result files in $OUT
# ("VERDICT - - RATIO", cause/S.MODE), and DOC's account of its builds as
# the mode's provenance. Stressors that fail natively have no hvrun result
# in DOC (they were not run under hvrun) and get none.
import_doc() {
    local doc=$1 m col rev
    [ -f "$doc" ] || { echo "run.sh: no $doc" >&2; return 1; }
    rev=$(git -C "$ROOT" log -1 --format=%h -- "$doc" 2>/dev/null)
    mkdir -p "$OUT/results" "$OUT/cause" "$OUT/provenance"
    for m in ${IMPORT_MODES:-kvm}; do
        case $m in
        kvm) col=0 ;;
        ptrace) col=1 ;;
        *) echo "run.sh: cannot import mode $m" >&2; return 1 ;;
        esac
        awk -v m="$m" -v col="$col" -v out="$OUT" '
            function put(f, text) { print text > f; close(f) }
            /^## Mismatches/ { part = "mism"; next }
            /^## Every stressor/ { part = "table"; next }
            /^## / { part = ""; next }
            part == "mism" && /^- \*\*/ {
                s = $2; gsub(/\*/, "", s)
                p = index($0, "): "); head = substr($0, 1, p); c = substr($0, p + 3)
                if (head ~ ("[(, ]" m " ")) cause[s] = c
                next
            }
            part == "table" && /^\| / && !/^\| stressor/ && !/^\|---/ {
                n = split($0, f, /[ ]*\|[ ]*/)
                verdict[f[2]] = f[5 + col]; ratio[f[2]] = f[7 + col]
            }
            END {
                for (s in verdict) {
                    if (verdict[s] == "-" || verdict[s] == "") continue
                    put(out "/results/" s "." m, verdict[s] " - - " ratio[s])
                    if (s in cause) put(out "/cause/" s "." m, cause[s])
                    k++
                }
                print "import: " k + 0 " " m " results from the report"
            }' "$doc" || return 1
        # DOC's account of mode m: its own section (written by this
        # script), else the older hand-written paragraph. An account that
        # is already an import is kept as it is, not nested.
        awk -v m="$m" '/^## Which build each column is from/ { sec = 1; next }
            sec && /^## / { exit }
            sec && $0 == "- " m ":" { on = 1; next }
            sec && /^- / { on = 0 }
            on { sub(/^  /, ""); print }' "$doc" >"$OUT/provenance/$m.doc"
        [ -s "$OUT/provenance/$m.doc" ] ||
            awk '/^Which build each result is from:/ { on = 1 } on && /^$/ { exit } on' \
                "$doc" >"$OUT/provenance/$m.doc"
        {
            if grep -q '^imported by' "$OUT/provenance/$m.doc"; then
                cat "$OUT/provenance/$m.doc"
            else
                echo "imported by \`run.sh --import\` from ${doc#"$ROOT"/} as committed at" \
                    "\`${rev:-unknown}\` (not re-run since); that report said of its builds:"
                sed 's/^/> /' "$OUT/provenance/$m.doc"
            fi
        } >"$OUT/provenance/$m.new"
        mv "$OUT/provenance/$m.new" "$OUT/provenance/$m"
        rm -f "$OUT/provenance/$m.doc"
    done
}

if [ "${1:-}" = --import ]; then
    [ $# = 2 ] || { echo "usage: [IMPORT_MODES=kvm] run.sh --import DOC" >&2; exit 2; }
    import_doc "$2"
    exit
fi

if [ "${1:-}" = --report ]; then
    report
    exit 0
fi

# ---- the pass ----------------------------------------------------------------

for tool in stress-ng bwrap; do
    command -v $tool >/dev/null || { echo "run.sh: $tool is missing (make stress installs it)"; exit 2; }
done
[ -x "$HVRUN" ] || { echo "run.sh: $HVRUN is missing (make all)"; exit 2; }
mkdir -p "$OUT/results" "$OUT/log"
list=${STRESSORS:-$(stress-ng --stressors)}
count=$(echo $list | wc -w)
echo "stress: $count stressors, modes: $MODES, $JOBS at a time; results in $OUT"
mkdir -p "$OUT/provenance"
subset=all
[ -n "${STRESSORS:-}" ] && subset="$(echo $list | cut -c1-300)"
pass="$("$HVRUN" --version | head -1); $count stressors: $subset"
for m in $MODES; do
    # A resumed pass (same build, same stressors) is not a new line.
    [ "$(tail -1 "$OUT/provenance/$m" 2>/dev/null | sed 's/^[^:]*:[^:]*: //')" = "$pass" ] ||
        echo "$(date -u '+%Y-%m-%d %H:%M UTC'): $pass" >>"$OUT/provenance/$m"
done
echo $list | tr ' ' '\n' | xargs -P "$JOBS" -I{} "$SELF" __one {} |
    awk -v n="$count" '{ printf "[%d/%d] %s\n", NR, n, $0; fflush() }'
[ -n "$DOC" ] && report
exit 0
