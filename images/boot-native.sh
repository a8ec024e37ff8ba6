#!/bin/bash
# images/boot-native.sh - boot the `make images` kernel + initramfs in
# QEMU-TCG natively (no hvrun) and check that it works: the serial log has
# the kernel's banner and the init's last line, no panic, and QEMU exited
# by itself with status 0 (the init powers off by ACPI) within TIMEOUT.
#
#   images/boot-native.sh [KERNEL...]     KERNEL: vmlinux | vmlinuz | a path
#
# Without arguments: vmlinux (the PVH entry: no in-guest decompression),
# and vmlinuz only when vmlinux fails. Prints per kernel the wall time to
# the init's last line and to QEMU's exit; the serial log is kept in
# IMAGES_DIR/boot-KERNEL.log.
#
# Environment: IMAGES_DIR (build/images), TIMEOUT (120 s), APPEND_EXTRA
# (added to the kernel command line, e.g. no_timer_check), QEMU_PREFIX
# (a command QEMU runs under, e.g. "build/hvrun run --"; empty: native).
set -uo pipefail

IMAGES_DIR=${IMAGES_DIR:-build/images}
TIMEOUT=${TIMEOUT:-120}
APPEND_EXTRA=${APPEND_EXTRA:-}
read -r -a prefix <<<"${QEMU_PREFIX:-}"
LAST_LINE='INIT: all done'
BANNER='Linux version 6.1'

now_ns() { date +%s%N; }
ms_since() { echo $((($(now_ns) - $1) / 1000000)); }

# Boots kernel $1; 0 when the boot worked, 1 with the reason otherwise.
boot() {
    local kernel=$1 name log start pid rc t_last=
    name=$(basename "$kernel")
    log=$IMAGES_DIR/boot-$name.log
    [ -f "$kernel" ] || { echo "FAIL $name: $kernel missing (run make images)"; return 1; }
    : >"$log"
    start=$(now_ns)
    timeout "$TIMEOUT" "${prefix[@]}" qemu-system-x86_64 \
        -accel tcg,thread=single -smp 1 -m 128 -nographic -no-reboot \
        -kernel "$kernel" -initrd "$IMAGES_DIR/initramfs.cpio.gz" \
        -append "console=ttyS0 rdinit=/init loglevel=7 panic=-1${APPEND_EXTRA:+ $APPEND_EXTRA}" \
        </dev/null >"$log" 2>&1 &
    pid=$!
    # Poll the log for the init's last line to time it (20 ms resolution).
    while kill -0 "$pid" 2>/dev/null; do
        if [ -z "$t_last" ] && grep -qF "$LAST_LINE" "$log"; then
            t_last=$(ms_since "$start")
        fi
        sleep 0.02
    done
    wait "$pid"
    rc=$?
    local t_exit
    t_exit=$(ms_since "$start")
    if [ -z "$t_last" ] && grep -qF "$LAST_LINE" "$log"; then
        t_last=$t_exit
    fi

    local why=
    if [ "$rc" = 124 ]; then
        why="QEMU still running after ${TIMEOUT}s (killed)"
    elif [ "$rc" != 0 ]; then
        why="QEMU exited with status $rc"
    elif ! grep -qF "$BANNER" "$log"; then
        why="no '$BANNER' in the serial log"
    elif grep -q "IO-APIC + timer doesn't work" "$log"; then
        why="check_timer panic (try APPEND_EXTRA=no_timer_check)"
    elif grep -q 'Kernel panic' "$log"; then
        why="kernel panic: $(grep -m1 'Kernel panic' "$log")"
    elif [ -z "$t_last" ]; then
        why="no '$LAST_LINE' in the serial log"
    fi
    if [ -n "$why" ]; then
        echo "FAIL $name: $why; log: $log (last lines below)"
        tail -n 5 "$log" | sed 's/^/    /'
        return 1
    fi
    echo "PASS $name: '$LAST_LINE' at ${t_last} ms, QEMU exited (0) at ${t_exit} ms; log: $log"
}

kernel_path() {
    case $1 in
    vmlinux | vmlinuz) echo "$IMAGES_DIR/$1" ;;
    *) echo "$1" ;;
    esac
}

command -v qemu-system-x86_64 >/dev/null ||
    { echo "qemu-system-x86_64 not found: apt-get install qemu-system-x86"; exit 1; }

if [ $# -eq 0 ]; then
    boot "$(kernel_path vmlinux)" && exit 0
    echo "vmlinux (PVH entry) did not boot: trying vmlinuz"
    boot "$(kernel_path vmlinuz)"
    exit
fi
status=0
for k in "$@"; do
    boot "$(kernel_path "$k")" || status=1
done
exit "$status"
