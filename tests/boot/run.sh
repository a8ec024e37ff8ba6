#!/usr/bin/env bash
# tests/boot/run.sh HVRUN [HVRUN...] - nested QEMU-TCG boots under hvrun.
#
#   images/reproducible   `make images`' outputs built twice (images/check.sh)
#                         have the same sha256
#   HVRUN:boot/verify     `HVRUN run --verify -- qemu-system-x86_64 -accel tcg
#                         ...` in default mode (no -icount, no -rtc base, no
#                         hvrun flag) boots the images' kernel to the init's
#                         last line, QEMU exits by itself with status 0, and
#                         the two runs are identical
#   HVRUN:boot/same-log   a plain `HVRUN run` of the same boot prints the
#                         byte-identical serial log (first HVRUN only)
#   HVRUN:boot/verify-icount     the same boot with QEMU's -icount
#                         shift=0,sleep=off verifies (first HVRUN only)
#   HVRUN:boot/verify-under-load the default boot verifies with two CPU
#                         burners running beside it (first HVRUN only)
#
# Needs build/images (make images) and qemu-system-x86_64; without them each
# case is a counted SKIP. HVRUN_TEST_TIMEOUT: seconds per run (default 300).
set -u

if [ $# -lt 1 ]; then
    echo "usage: $0 HVRUN [HVRUN...]" >&2
    exit 2
fi

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
IMAGES_DIR=${IMAGES_DIR:-$ROOT/build/images}
TIMEOUT=${HVRUN_TEST_TIMEOUT:-300}
LAST_LINE='INIT: all done'
BANNER='Linux version 6.1'

# shellcheck source=tests/lib.sh
. "$ROOT/tests/lib.sh"

WORK=$(mktemp -d "$ROOT/build/boot-tests.XXXXXX") || exit 1
burners=()
trap '[ ${#burners[@]} -gt 0 ] && kill "${burners[@]}" 2>/dev/null; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

QEMU=$(type -P qemu-system-x86_64)
why_skip=
if [ -z "$QEMU" ]; then
    why_skip="qemu-system-x86_64 is not installed (make test installs qemu-system-x86)"
elif [ ! -s "$IMAGES_DIR/vmlinux" ] || [ ! -s "$IMAGES_DIR/initramfs.cpio.gz" ]; then
    why_skip="$IMAGES_DIR has no vmlinux/initramfs.cpio.gz (make images)"
fi

# The boot: the PVH entry of the images' vmlinux (no in-guest
# decompression), one vCPU, the serial console on stdout.
# shellcheck disable=SC2054 # the commas are QEMU's
QEMU_ARGS=(-accel tcg,thread=single -smp 1 -m 128 -nographic -no-reboot
    -kernel "$IMAGES_DIR/vmlinux" -initrd "$IMAGES_DIR/initramfs.cpio.gz"
    -append 'console=ttyS0 rdinit=/init loglevel=7 panic=-1')

# boot_problem LOG STATUS: why a boot's serial log is not a good one, or
# nothing.
boot_problem() {
    local log=$1 st=$2
    if [ "$st" = 124 ] || [ "$st" = 137 ]; then
        echo "timed out after ${TIMEOUT}s"
    elif [ "$st" != 0 ]; then
        echo "exit $st"
    elif ! grep -qaF "$BANNER" "$log"; then
        echo "no '$BANNER' in the serial log"
    elif ! grep -qaF "$LAST_LINE" "$log"; then
        echo "no '$LAST_LINE' in the serial log (last: $(tail -n 1 "$log" | cut -c1-120))"
    elif grep -qa 'Kernel panic' "$log"; then
        echo "the kernel panicked: $(grep -a -m1 'Kernel panic' "$log" | cut -c1-160)"
    fi
}

# ---- images/reproducible ---------------------------------------------------------

if [ -n "$why_skip" ]; then
    skip images/reproducible "$why_skip"
elif "$ROOT/images/check.sh" "$WORK/images-check" >"$WORK/check.out" 2>&1; then
    pass images/reproducible
else
    fail images/reproducible "images/check.sh: $(tail -n 3 "$WORK/check.out" | tr '\n' ' ' | cut -c1-300)"
fi

# ---- per hvrun -------------------------------------------------------------------

# boot_verify NAME HV LOGBASE [QEMU flags...]: one `HV run --verify` boot;
# on a difference, where the two runs' detlogs part.
boot_verify() {
    local name=$1 hv=$2 b=$3 start st secs line problem
    shift 3
    start=$(date +%s%N)
    timeout -k 5 "$TIMEOUT" "$hv" run --verify --detlog "$b.detlog" -- \
        "$QEMU" "${QEMU_ARGS[@]}" "$@" </dev/null >"$b.log" 2>"$b.err"
    st=$?
    secs=$(( ($(date +%s%N) - start) / 1000000 ))
    line=$(grep -a '^hvrun: verify: ' "$b.err" | head -n 1 | cut -c1-300)
    problem=$(boot_problem "$b.log" "$st")
    if [ -z "$problem" ] && [[ $line == "hvrun: verify: deterministic"* ]]; then
        pass "$name"
        echo "    two boots in ${secs} ms"
    else
        fail "$name" "${problem:-$line}"
        show_tail "$b.err" 20
        [ -s "$b.detlog.2" ] && "$hv" detlog "$b.detlog" "$b.detlog.2" | sed 's/^/    | /'
    fi
}

first=1
for hv in "$@"; do
    why_skip_hv=$why_skip
    if [ -z "$why_skip_hv" ] && [ ! -e /dev/kvm ] && needs_kvm "$hv"; then
        why_skip_hv="no /dev/kvm on this host (hvrun needs KVM)"
    fi
    if [ -n "$why_skip_hv" ]; then
        why_skip=$why_skip_hv
        skip "$hv:boot/verify" "$why_skip"
        if [ $first = 1 ]; then
            skip "$hv:boot/same-log" "$why_skip"
            skip "$hv:boot/verify-icount" "$why_skip"
            skip "$hv:boot/verify-under-load" "$why_skip"
        fi
        first=0
        continue
    fi
    b=$WORK/$(echo "$hv" | tr '/' '_')
    boot_verify "$hv:boot/verify" "$hv" "$b.verify"
    if [ $first = 1 ]; then
        timeout -k 5 "$TIMEOUT" "$hv" run -- "$QEMU" "${QEMU_ARGS[@]}" \
            </dev/null >"$b.run.log" 2>"$b.run.err"
        st=$?
        problem=$(boot_problem "$b.run.log" "$st")
        if [ -n "$problem" ]; then
            fail "$hv:boot/same-log" "$problem"
            show_tail "$b.run.err" 20
        elif cmp -s "$b.run.log" "$b.verify.log"; then
            pass "$hv:boot/same-log"
        else
            fail "$hv:boot/same-log" "the serial log differs from --verify's: $(cmp "$b.run.log" "$b.verify.log" 2>&1 | head -n 1)"
        fi
        # QEMU's own deterministic clock: the vCPU thread computes with no
        # clock read at all, a syscall now and then.
        boot_verify "$hv:boot/verify-icount" "$hv" "$b.icount" \
            -icount shift=0,sleep=off
        # Two CPU burners beside it: hvrun's slices and exits fall at other
        # host times, the run must not change.
        burners=()
        for _ in 1 2; do
            sh -c 'while :; do :; done' &
            burners+=($!)
        done
        boot_verify "$hv:boot/verify-under-load" "$hv" "$b.load"
        kill "${burners[@]}" 2>/dev/null
        wait "${burners[@]}" 2>/dev/null
        burners=()
    fi
    first=0
done

finish
