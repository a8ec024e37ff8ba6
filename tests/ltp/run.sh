#!/bin/bash
# tests/ltp/run.sh - the Linux Test Project's syscall suite natively and
# under hvrun (make ltp; not part of make test).
#
# 1. Build (once): LTP's source (the newest ../shared/ltp/ltp-*.tar.gz
#    beside the project, or LTP_SRC=DIR, a source tree) is extracted or
#    copied into build/ltp/src, configured, and only lib/ and
#    testcases/kernel/syscalls are built (make -j$JOBS) and installed into
#    build/ltp/root/opt/ltp (testcases/bin, testcases/data). LTP's source
#    never enters the project's tree. build/ltp/built marks a finished build
#    (rm -rf build/ltp to build again, e.g. from another LTP_SRC).
# 2. Run: every runtest/syscalls entry (or those whose name matches
#    LTP_TESTS=regex; LTP_SAMPLE=N keeps every Nth of them, the 1st, the
#    N+1th, ...; LTP_SAMPLE_AT=K starts at the Kth instead, so K=2 is
#    another sample of the same size; "1 3" is both samples) natively and under
#    `hvrun run --backend B` for each backend,
#    as root, with TMPDIR a scratch directory of its own per test and mode,
#    each run in a bubblewrap sandbox (tests/lib/sandbox.sh: own uts, ipc,
#    net, pid namespaces, / read-only except the scratch directory, private
#    /tmp and /dev/shm) with only the capabilities hvrun keeps for a root
#    guest (cli/confine.c), because LTP run natively as root changes the
#    host (adjtimex once left this machine's time_constant changed) and
#    because that is the fair native column. hvrun runs in the same sandbox.
#    One result file per test and mode in $LTP_OUT/results (NAME.MODE:
#    "VERDICT rc seconds"), the output in $LTP_OUT/log, so an interrupted
#    pass resumes where it stopped (LTP_REDO=1 runs done ones again).
# 3. Report: docs/LTP.md from every result in $LTP_OUT (`run.sh --report`
#    writes only the report): totals per verdict and mode, each test whose
#    verdict under hvrun differs from native with its cause in one line
#    (tests/ltp/causes.txt: "NAME[/BACKEND] cause", hand-diagnosed; else
#    the first TFAIL/TBROK line and hvrun's unsupported-syscall lines).
#    LTP_REPORT_FROM="DIR..." merges several result directories (samples
#    run apart, re-runs of some entries) into one report: an entry's result
#    is that of the last directory holding it, and each directory's
#    `selection` (which entries, when, which hvrun) is quoted in turn.
#    `run.sh --import DOC DIR` turns a committed report back into a result
#    directory (verdicts and causes, no logs) for the entries of the sample
#    LTP_SAMPLE, LTP_SAMPLE_AT (a list: "1 3"), so that results whose
#    directories are gone can be merged with new ones.
#
# Verdict of one run, from LTP's exit status (bits TFAIL 1, TBROK 2,
# TWARN 4, TCONF 32): timeout (LTP_TIMEOUT host seconds passed), TBROK,
# TFAIL, TWARN, TCONF (only TCONF: nothing ran), TPASS (0), or other
# (killed by a signal, hvrun's own error 125, ...).
#
# Verify modes: MODES="kvm-verify ptrace-verify" (make ltp-verify) runs
# each entry that passed under the backend (in the result directories a
# report reads) again as `hvrun run --verify`, in twice the time limit;
# the report's "Under --verify" part counts the entries that verify
# (verdict nondet: the two runs differed).
#
# Environment: JOBS (parallel tests, default 2), MODES (default "native kvm
# ptrace", without kvm where the host has no /dev/kvm), LTP_TIMEOUT (host
# seconds per run, default 120), HVRUN (default
# build/hvrun), LTP_BUILD (LTP's build, default build/ltp: another
# checkout's, reused), HVRUN_ARGS (more `hvrun run` options), LTP_OUT
# (default build/ltp-results), LTP_DOC (default docs/LTP.md; empty: no report).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SELF="$ROOT/tests/ltp/run.sh"
HVRUN=${HVRUN:-$ROOT/build/hvrun}
HVRUN_ARGS=${HVRUN_ARGS:-}
BUILD=${LTP_BUILD:-$ROOT/build/ltp}
LTPROOT="$BUILD/root/opt/ltp"
RUNTEST="$BUILD/src/runtest/syscalls"
OUT=${LTP_OUT:-$ROOT/build/ltp-results}
DOC=${LTP_DOC-$ROOT/docs/LTP.md}
CAUSES="$ROOT/tests/ltp/causes.txt"
# The result directories a report reads, the later overriding the earlier.
REPORT_FROM=${LTP_REPORT_FROM:-$OUT}
# kvm where the host offers /dev/kvm (a VM without nested virtualisation
# has none: its kvm column would be all "other").
if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
    DEFAULT_MODES="native kvm ptrace"
else
    DEFAULT_MODES="native ptrace"
fi
MODES=${MODES:-$DEFAULT_MODES}
LTP_TIMEOUT=${LTP_TIMEOUT:-120}
JOBS=${JOBS:-2}
export HVRUN HVRUN_ARGS OUT MODES LTP_TIMEOUT

. "$ROOT/tests/lib/sandbox.sh"

# The capabilities hvrun keeps as root (cli/confine.c, docs/SECURITY.md):
# the native run gets these and no more, hvrun the same (it keeps them).
KEPT_CAPS="CAP_CHOWN CAP_DAC_OVERRIDE CAP_DAC_READ_SEARCH CAP_FOWNER
    CAP_FSETID CAP_NET_BIND_SERVICE CAP_NET_RAW CAP_SYS_RESOURCE
    CAP_SETUID CAP_SETGID"

# Of those, the ones this host's bounding set has: bwrap 0.8 asked to add a
# capability it cannot have (this machine's root has no CAP_SYS_RESOURCE)
# silently keeps every capability instead.
cap_number() { awk -v c="$1" '$2 == c { print $3 + 0; exit }' /usr/include/linux/capability.h; }
host_caps() {
    local c n bnd
    bnd=$((16#$(awk '/^CapBnd:/ { print $2 }' /proc/self/status)))
    for c in "$@"; do
        n=$(cap_number "$c")
        [ -n "$n" ] && [ $(((bnd >> n) & 1)) = 1 ] && echo "$c"
    done
}
KEPT_CAPS=$(host_caps $KEPT_CAPS | tr '\n' ' ')

# The native run also gets what a container's root has that reaches
# nothing outside the sandbox's namespaces (its own pid namespace for kill):
# hvrun's root guest has these virtually. (SETUID and SETGID are hvrun's
# own: it takes a guest's file ids with them, kernel/fscred.c; without them
# natively every test that drops to "nobody" is TBROK.) LTP_NATIVE_EXTRA_CAPS= (empty) gives the native
# run only hvrun's own set.
NATIVE_EXTRA_CAPS=$(host_caps ${LTP_NATIVE_EXTRA_CAPS-CAP_KILL CAP_SETPCAP CAP_SYS_CHROOT} | tr '\n' ' ')

# sandbox SCRATCH MODE COMMAND...: COMMAND as root in the sandbox, the
# scratch directory its writable working directory and TMPDIR.
sandbox() {
    local scratch=$1 mode=$2 caps=(--cap-drop ALL) c
    shift 2
    for c in $KEPT_CAPS; do caps+=(--cap-add "$c"); done
    if [ "$mode" = native ]; then
        for c in $NATIVE_EXTRA_CAPS; do caps+=(--cap-add "$c"); done
    fi
    sandbox_run "${caps[@]}" --bind "$scratch" "$scratch" --chdir "$scratch" \
        --setenv TMPDIR "$scratch" --setenv LTPROOT "$LTPROOT" \
        --setenv PATH "$LTPROOT/testcases/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
        "$@"
}

# ---- the build ------------------------------------------------------------

ltp_source() {
    local tgz
    if [ -n "${LTP_SRC:-}" ]; then
        [ -d "$LTP_SRC" ] || { echo "run.sh: LTP_SRC=$LTP_SRC is not a directory" >&2; return 1; }
        mkdir -p "$BUILD/src"
        (cd "$LTP_SRC" && tar --exclude=.git -cf - .) | tar -xf - -C "$BUILD/src"
        git -C "$LTP_SRC" rev-parse HEAD >"$BUILD/commit" 2>/dev/null ||
            echo "$(basename "$LTP_SRC")" >"$BUILD/commit"
        return
    fi
    tgz=$(ls "$ROOT"/../shared/ltp/ltp-*.tar.gz /work/shared/ltp/ltp-*.tar.gz 2>/dev/null | tail -1)
    [ -n "$tgz" ] || { echo "run.sh: no ../shared/ltp/ltp-*.tar.gz (set LTP_SRC=DIR)" >&2; return 1; }
    mkdir -p "$BUILD/src"
    tar -xzf "$tgz" -C "$BUILD/src" --strip-components=1 || return 1
    # git archive puts the commit in the archive's header; else its name
    # (ltp-COMMIT.tar.gz) says it.
    { zcat "$tgz" | git get-tar-commit-id 2>/dev/null ||
        basename "$tgz" .tar.gz | sed 's/^ltp-//'; } >"$BUILD/commit"
}

build_ltp() {
    [ -e "$BUILD/built" ] && return 0
    echo "ltp: building LTP's lib and syscall tests in $BUILD (log: $BUILD/build.log)"
    [ -e "$BUILD/src/configure.ac" ] || ltp_source || return 1
    (
        set -e
        cd "$BUILD/src"
        [ -x configure ] || make autotools
        [ -e include/config.h ] || ./configure
        make -j"$JOBS" -C lib
        # A test that fails to build (a header this system lacks) must not
        # stop the rest: -k, and the entry is "notbuilt" in the report.
        make -j"$JOBS" -k -C testcases/kernel/syscalls || true
        make -k -C testcases/kernel/syscalls install DESTDIR="$BUILD/root" || true
    ) >>"$BUILD/build.log" 2>&1 || { echo "run.sh: LTP build failed (see $BUILD/build.log)" >&2; return 1; }
    touch "$BUILD/built"
}

# ---- one test ---------------------------------------------------------------

now() { date +%s.%N; }
elapsed() { echo "$1 $(now)" | awk '{ printf "%.1f", $2 - $1 }'; }

# The verdict word for LTP's exit status $1.
verdict_of() {
    local rc=$1
    case $rc in
    0) echo TPASS ;;
    124 | 137) echo timeout ;;
    32) echo TCONF ;;
    120) echo nondet ;; # hvrun --verify: the two runs differed
    *)
        if [ "$rc" -ge 64 ]; then echo other
        elif [ $((rc & 2)) -ne 0 ]; then echo TBROK
        elif [ $((rc & 1)) -ne 0 ]; then echo TFAIL
        elif [ $((rc & 4)) -ne 0 ]; then echo TWARN
        else echo other
        fi ;;
    esac
}

# Whether entry $1 passed under mode $2 in the result directories a
# report reads (the last holding it): what a verify mode runs again.
passed_under() {
    local d v=-
    for d in $REPORT_FROM; do [ -s "$d/results/$1.$2" ] && read -r v _ <"$d/results/$1.$2"; done
    [ "$v" = TPASS ]
}

# The command line of entry $1 in runtest/syscalls.
command_of() { awk -v n="$1" '$1 == n { $1 = ""; print substr($0, 2); exit }' "$RUNTEST"; }

# run_mode NAME MODE: one run, its result file written last (atomically),
# so an interrupted run is done again on the next pass.
run_mode() {
    local name=$1 mode=$2 cmd scratch log t0 rc bin first pre=()
    local r="$OUT/results/$name.$mode" backend=$mode verify=() limit=$LTP_TIMEOUT
    log="$OUT/log/$name.$mode"
    # B-verify: `hvrun run --verify` (two runs, compared) of an entry that
    # passed under B, in twice the time.
    if [[ $mode == *-verify ]]; then
        backend=${mode%-verify}
        passed_under "$name" "$backend" || { echo "notrun 0 0" >"$r"; return; }
        verify=(--verify)
        limit=$((LTP_TIMEOUT * 2))
    fi
    cmd=$(command_of "$name")
    read -r first _ <<<"$cmd"
    if [[ $first != */* ]] && [ ! -x "$LTPROOT/testcases/bin/$first" ] &&
        ! command -v "$first" >/dev/null; then
        echo "notbuilt 0 0" >"$r"
        return
    fi
    # shellcheck disable=SC2206 # HVRUN_ARGS: options, split on spaces
    [ "$mode" = native ] || pre=("$HVRUN" run --backend "$backend" "${verify[@]}" $HVRUN_ARGS --)
    scratch="$OUT/scratch/$name.$mode"
    rm -rf "$scratch"
    mkdir -p "$scratch"
    chmod 1777 "$scratch"
    t0=$(now)
    # An entry with shell syntax runs through sh; a plain one is exec'd
    # directly, so the test is the first process of the run.
    if [[ $cmd =~ [\;\|\&\$\<\>\`\"\'] ]]; then
        sandbox "$scratch" "$backend" timeout -k 5 "$limit" "${pre[@]}" /bin/sh -c "$cmd" >"$log" 2>&1
    else
        bin=$first
        [ -x "$LTPROOT/testcases/bin/$first" ] && bin="$LTPROOT/testcases/bin/$first"
        # shellcheck disable=SC2086
        sandbox "$scratch" "$backend" timeout -k 5 "$limit" "${pre[@]}" "$bin" ${cmd#"$first"} >"$log" 2>&1
    fi
    rc=$?
    echo "$(verdict_of $rc) $rc $(elapsed "$t0")" >"$r.part" && mv "$r.part" "$r"
    rm -rf "$scratch"
}

run_test() {
    local name=$1 line="$1:" m v
    for m in $MODES; do
        if [ ! -s "$OUT/results/$name.$m" ] || [ -n "${LTP_REDO:-}" ]; then
            run_mode "$name" "$m"
        fi
        read -r v _ <"$OUT/results/$name.$m"
        line+=" $m=$v"
    done
    echo "$line"
}

if [ "${1:-}" = __one ]; then
    run_test "$2"
    exit 0
fi

# ---- the report ---------------------------------------------------------------

# The hand-diagnosed cause of NAME's difference under BACKEND, if any.
curated_cause() {
    local n=$1 b=$2
    [ -f "$CAUSES" ] || return
    awk -v a="$n/$b" '/^#/ { next } $1 == a { $1 = ""; print substr($0, 2); f = 1; exit }
        END { if (!f) exit 1 }' "$CAUSES" && return
    awk -v n="$n" '/^#/ { next } $1 == n { $1 = ""; print substr($0, 2); exit }' "$CAUSES"
}

# The cause as the log shows it: hvrun's unsupported syscalls, hvrun's own
# error line, LTP's first TFAIL/TBROK line (TCONF if there is none); for a
# timeout, the limit and the last line LTP printed.
diagnose() {
    local log=$1 v=$2 enosys line
    # An imported result has no log, only the cause its report gave.
    [ -f "$log" ] || { cat "${log/\/log\//\/cause\/}" 2>/dev/null; return; }
    enosys=$(grep -o 'unsupported syscall [a-z0-9_]*' "$log" |
        awk '{ print $3 }' | sort -u | paste -sd, -)
    [ -n "$enosys" ] && printf 'hvrun: ENOSYS %s; ' "$enosys"
    if [ "$v" = timeout ]; then
        line=$(grep -v '^hvrun: ' "$log" | grep -v '^$' | tail -1 | sed 's/^[^ ]*\.c:[0-9]*: //' | cut -c1-160)
        printf 'not done in %.0f s of host time; last: %s' \
            "$(awk '{ print $3 }' "${log/\/log\//\/results\/}")" "$line"
        return
    fi
    line=$(grep -m1 -E '^hvrun: ' "$log" | grep -v 'unsupported syscall' | cut -c1-160)
    [ -n "$line" ] && printf '%s; ' "$line"
    line=$(grep -m1 -E 'T(FAIL|BROK)' "$log")
    [ -z "$line" ] && line=$(grep -m1 -E 'TCONF' "$log")
    printf '%s' "$(echo "$line" | sed 's/^[^ ]*\.[ch]:[0-9]*: //' | cut -c1-200)"
}

# The directory of REPORT_FROM that holds NAME.MODE's result: the last one.
result_dir() {
    local d found=
    for d in $REPORT_FROM; do [ -s "$d/results/$1.$2" ] && found=$d; done
    echo "${found:-$OUT}"
}
log_of() { echo "$(result_dir "$1" "$2")/log/$1.$2"; }

verdict() {
    local v=- d
    d=$(result_dir "$1" "$2")
    [ -s "$d/results/$1.$2" ] && read -r v _ <"$d/results/$1.$2"
    echo "$v"
}

md_escape() { sed 's/|/\\|/g; s/`/'"'"'/g'; }

# The report's "Under --verify" part: for each B-verify mode with results,
# the entries that pass under B, how many of them verify, and why the
# others do not.
verify_report() {
    local vmodes vm b n v c ok total
    vmodes=$(for d in $REPORT_FROM; do ls "$d/results" 2>/dev/null; done |
        sed -n 's/^.*\.\([a-z]*-verify\)$/\1/p' | sort -u)
    [ -n "$vmodes" ] || return 0
    echo
    echo "## Under --verify"
    echo
    echo "Each entry that passes under a backend, run again as \`hvrun run" \
        "--verify\` (two runs whose stdout, stderr, exit status and detlog" \
        "must be identical; \`MODES=\"kvm-verify ptrace-verify\"\`, \`make" \
        "ltp-verify\`), in twice the time limit. *nondet*: the runs differed."
    for vm in $vmodes; do
        b=${vm%-verify} ok=0 total=0
        local others=""
        for n in $names; do
            [ "$(verdict "$n" "$b")" = TPASS ] || continue
            v=$(verdict "$n" "$vm")
            [ "$v" = - ] && continue
            total=$((total + 1))
            if [ "$v" = TPASS ]; then ok=$((ok + 1)); continue; fi
            c=$(curated_cause "$n" "$vm")
            [ -z "$c" ] && c=$(diagnose "$(log_of "$n" "$vm")" "$v")
            others+="- $n ($v): $(echo "$c" | md_escape)"$'\n'
        done
        echo
        echo "**$b**: $ok of the $total entries that pass under $b and ran" \
            "under --verify verify$( [ "$total" -gt 0 ] && awk -v a=$ok -v t=$total 'BEGIN { printf " (%.1f%%)", 100 * a / t }')."
        [ -n "$others" ] && { echo; printf '%s' "$others"; }
    done
}

report() {
    local names n m v nat c total=0 npass=0 mism="" row="" row_m row_v row_c verdicts="TPASS TFAIL TBROK TWARN TCONF timeout other notbuilt"
    # verify modes have their own part (verify_report)
    local m0 base_modes=""
    for m0 in $MODES; do [[ $m0 == *-verify ]] || base_modes+="$m0 "; done
    local MODES=${base_modes:-$DEFAULT_MODES}
    declare -A tally pass
    names=$(for d in $REPORT_FROM; do ls "$d/results" 2>/dev/null; done |
        sed -n 's/\.native$//p' | sort -u)
    for n in $names; do
        total=$((total + 1))
        nat=$(verdict "$n" native)
        [ "$nat" = TPASS ] && npass=$((npass + 1))
        for m in $MODES; do
            v=$(verdict "$n" "$m")
            tally[$m.$v]=$((${tally[$m.$v]:-0} + 1))
            [ "$nat" = TPASS ] && [ "$v" = TPASS ] && pass[$m]=$((${pass[$m]:-0} + 1))
            [ "$m" = native ] || [ "$v" = - ] || [ "$v" = "$nat" ] && continue
            c=$(curated_cause "$n" "$m")
            # Passing under hvrun only: why it does not pass natively.
            [ -z "$c" ] && [ "$v" = TPASS ] && c=$(diagnose "$(log_of "$n" native)" "$nat") &&
                [ -n "$c" ] && c="natively: $c"
            [ -z "$c" ] && c=$(diagnose "$(log_of "$n" "$m")" "$v")
            [ -z "$c" ] && c="no diagnosis yet (log/$n.$m)"
            c=$(echo "$c" | md_escape)
            # The same verdict and cause on another backend: one row.
            if [ -n "$row" ] && [ "$row_v|$row_c" = "$v|$c" ]; then
                row="$n|$row_m, $m|$nat|$v|$c"
                row_m+=", $m"
                continue
            fi
            [ -n "$row" ] && mism+="$row"$'\n'
            row="$n|$m|$nat|$v|$c" row_m=$m row_v=$v row_c=$c
        done
        [ -n "$row" ] && mism+="$row"$'\n'
        row=""
    done
    {
        cat "$ROOT/tests/ltp/header.md"
        echo
        echo "LTP: commit \`$(cat "$BUILD/commit" 2>/dev/null || echo unknown)\`," \
            "version $(cat "$BUILD/src/VERSION" 2>/dev/null || echo unknown)."
        for d in $REPORT_FROM; do [ -f "$d/selection" ] && { echo; cat "$d/selection"; }; done
        echo
        echo "## Totals"
        echo
        echo "$total entries run; $npass pass natively. Of those, under hvrun:" \
            "$(for m in $MODES; do [ "$m" = native ] || printf '%s %d (%s), ' "$m" "${pass[$m]:-0}" \
                "$(awk -v a="${pass[$m]:-0}" -v b="$npass" 'BEGIN { if (b) printf "%.0f%%", 100 * a / b; else print "-" }')"; done |
                sed 's/, $//')."
        echo
        printf '| mode |'; for v in $verdicts; do printf ' %s |' "$v"; done; echo
        printf '|---|'; for v in $verdicts; do printf -- '---|'; done; echo
        for m in $MODES; do
            printf '| %s |' "$m"
            for v in $verdicts; do printf ' %s |' "${tally[$m.$v]:-0}"; done
            echo
        done
        echo
        echo "## Differences from native"
        echo
        echo "Each test whose verdict under a backend is not the native one;" \
            "the cause is hand-diagnosed (tests/ltp/causes.txt) or else taken" \
            "from the log: hvrun's unsupported syscalls and LTP's first" \
            "TFAIL/TBROK line."
        echo
        echo "| test | backend | native | hvrun | cause |"
        echo "|---|---|---|---|---|"
        printf '%s' "$mism" | awk -F'|' 'NF >= 5 { c = $5; for (i = 6; i <= NF; i++) c = c "|" $i;
            printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, c }'
        echo
        echo "## Not passing natively"
        echo
        echo "The entries that do not pass natively in the sandbox (no loop" \
            "devices, /proc/sys read-only, no CAP_SYS_ADMIN: mount fails), with" \
            "the native verdict, the backends' and the first line saying why."
        echo
        for n in $names; do
            nat=$(verdict "$n" native)
            [ "$nat" = TPASS ] && continue
            c=$(curated_cause "$n" native)
            [ -z "$c" ] && c=$(diagnose "$(log_of "$n" native)" "$nat")
            printf -- '- %s (%s' "$n" "$nat"
            for m in $MODES; do [ "$m" = native ] || printf '; %s %s' "$m" "$(verdict "$n" "$m")"; done
            printf '): %s\n' "$(echo "$c" | md_escape)"
        done
        verify_report
    } >"$DOC"
    echo "report: $DOC ($total entries, $npass native passes;$(for m in $MODES; do
        [ "$m" = native ] || printf ' %s %d' "$m" "${pass[$m]:-0}"; done))"
}

# The entries a pass runs: runtest/syscalls' names, those matching
# LTP_TESTS, every LTP_SAMPLE-th from each start in LTP_SAMPLE_AT.
selected_entries() {
    local list at
    list=$(awk '!/^#/ && NF >= 2 { print $1 }' "$RUNTEST")
    [ -n "${LTP_TESTS:-}" ] && list=$(echo "$list" | grep -E -- "$LTP_TESTS")
    if [ -n "${LTP_SAMPLE:-}" ]; then
        list=$(for at in ${LTP_SAMPLE_AT:-1}; do
            echo "$list" | awk -v n="$LTP_SAMPLE" -v at="$at" '(NR - at) % n == 0'
        done)
    fi
    echo "$list"
}

# import_doc DOC DIR: DOC's verdicts and causes for the selected entries as
# result files in DIR (rc "-", no time, no log; cause/NAME.MODE the cause
# DOC gave). An entry DOC does not list passed in every mode: the report
# lists each entry that differs from native or does not pass natively.
import_doc() {
    local doc=$1 dir=$2 rev
    [ -f "$doc" ] || { echo "run.sh: no $doc" >&2; return 1; }
    rm -rf "$dir"
    mkdir -p "$dir/results" "$dir/cause"
    selected_entries | awk -v dir="$dir" -v modes="$MODES" '
        function put(n, m, v, c) {
            print v " - 0" > (dir "/results/" n "." m); close(dir "/results/" n "." m)
            if (c != "") { print c > (dir "/cause/" n "." m); close(dir "/cause/" n "." m) }
        }
        function unescape(c) { gsub(/\\\|/, "|", c); return c }
        FNR == NR { sel[++count] = $0; next }
        /^## Differences from native/ { part = "diff"; next }
        /^## Not passing natively/ { part = "notpass"; next }
        /^## / { part = ""; next }
        part == "diff" && /^\| / && !/^\| test \|/ {
            line = $0; gsub(/\\\|/, "\001", line)
            k = split(line, f, /[ ]*\|[ ]*/)
            c = f[6]; for (i = 7; i < k; i++) c = c "|" f[i]
            gsub(/\001/, "|", c)
            nb = split(f[3], b, /, /)
            for (i = 1; i <= nb; i++) { diffv[f[2] "." b[i]] = f[5]; diffc[f[2] "." b[i]] = c }
            next
        }
        part == "notpass" && /^- [^ ]+ \(/ {
            n = $2; rest = substr($0, length(n) + 5)
            p = index(rest, "): "); inner = substr(rest, 1, p - 1); c = substr(rest, p + 3)
            k = split(inner, f, /; /)
            np[n] = 1; npv[n ".native"] = f[1]; npc[n] = unescape(c)
            for (i = 2; i <= k; i++) { split(f[i], mv, / /); npv[n "." mv[1]] = mv[2] }
        }
        END {
            nm = split(modes, ms, / /)
            for (j = 1; j <= count; j++) {
                n = sel[j]
                for (i = 1; i <= nm; i++) {
                    m = ms[i]
                    if (n in np) {
                        v = npv[n "." m]; if (v == "") v = "-"
                        c = (m == "native") ? npc[n] : ""
                        if (m != "native" && (n "." m) in diffc) c = unescape(diffc[n "." m])
                    } else if (m != "native" && (n "." m) in diffv) {
                        v = diffv[n "." m]; c = unescape(diffc[n "." m])
                    } else { v = "TPASS"; c = "" }
                    if (v != "-") put(n, m, v, c)
                }
            }
        }' - "$doc"
    rev=$(git -C "$ROOT" log -1 --format=%h -- "$doc" 2>/dev/null)
    {
        echo "From ${doc#"$ROOT"/} as committed at \`${rev:-unknown}\` (its verdicts" \
            "and causes, re-read by \`run.sh --import\`; the logs are not kept):"
        awk '/^LTP: commit/ { on = 1; next } /^## Totals/ { exit } on' "$doc" |
            sed '/./,$!d' | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
    } >"$dir/selection"
    local imported=("$dir"/results/*.native)
    echo "import: ${#imported[@]} entries from $doc into $dir"
}

if [ "${1:-}" = --import ]; then
    [ $# = 3 ] || { echo "usage: run.sh --import DOC DIR" >&2; exit 2; }
    import_doc "$2" "$3"
    exit
fi

if [ "${1:-}" = --report ]; then
    report
    exit 0
fi

# ---- the pass -------------------------------------------------------------------

for tool in bwrap make autoconf automake; do
    command -v $tool >/dev/null || { echo "run.sh: $tool is missing (make ltp installs it)"; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "run.sh: LTP's syscall tests run as root"; exit 2; }
[ -x "$HVRUN" ] || { echo "run.sh: $HVRUN is missing (make all)"; exit 2; }
build_ltp || exit 1
mkdir -p "$OUT/results" "$OUT/log" "$OUT/scratch"
list=$(selected_entries)
count=$(echo "$list" | grep -c .)
# The sample's first entries, for each start: "2, 7, 12, ..." (several
# starts: "from the 1st and 3rd").
sample_from=""
for at in ${LTP_SAMPLE_AT:-1}; do
    sample_from+="${sample_from:+; }entries $at, $((at + ${LTP_SAMPLE:-1})), $((at + 2 * ${LTP_SAMPLE:-1})), ..."
done
{
    printf 'The entries run: '
    if [ -z "${LTP_TESTS:-}${LTP_SAMPLE:-}" ]; then
        echo "all of runtest/syscalls ($count)."
    else
        echo "a **sample** of $count of runtest/syscalls'" \
            "$(awk '!/^#/ && NF >= 2' "$RUNTEST" | wc -l) entries${LTP_TESTS:+, those matching \`$LTP_TESTS\`}${LTP_SAMPLE:+, every ${LTP_SAMPLE}th in file order ($sample_from)}" \
            "(\`make ltp${LTP_TESTS:+ LTP_TESTS=...}${LTP_SAMPLE:+ LTP_SAMPLE=$LTP_SAMPLE}${LTP_SAMPLE_AT:+ LTP_SAMPLE_AT=$LTP_SAMPLE_AT}\`);" \
            "the full run is \`make ltp\` with no filter."
    fi
    echo
    echo "Run $(date -u +%Y-%m-%d) on $(nproc) CPUs of a" \
        "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)," \
        "host Linux $(uname -r), hvrun at" \
        "\`$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)\`."
} >"$OUT/selection"
# The sandbox must see LTP's tests and hvrun: a run where it does not would
# end every entry "other" and be resumed as done.
mkdir -p "$OUT/scratch/preflight"
if ! sandbox "$OUT/scratch/preflight" native test -x "$LTPROOT/testcases/bin/abort01" -a -x "$HVRUN"; then
    echo "run.sh: the sandbox does not see $LTPROOT/testcases/bin or $HVRUN (tests/lib/sandbox.sh)" >&2
    exit 1
fi
echo "ltp: $count entries, modes: $MODES, $JOBS at a time, ${LTP_TIMEOUT} s each; results in $OUT"
echo "$list" | xargs -P "$JOBS" -I{} "$SELF" __one {} |
    awk -v n="$count" '{ printf "[%d/%d] %s\n", NR, n, $0; fflush() }'
[ -n "$DOC" ] && report
exit 0
