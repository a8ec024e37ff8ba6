# tests/lib/sandbox.sh - the bubblewrap sandbox the outside suites run in
# (sourced by tests/stress/run.sh and tests/ltp/run.sh).
#
# sandbox_run BWRAP-OPTIONS... COMMAND...: COMMAND in namespaces of its own
# (pid, net, ipc, uts, cgroup where the kernel has it), / read-only, a
# minimal /dev with /dev/kvm bound in (for hvrun's kvm backend), a private
# /tmp, /var/tmp and /dev/shm, /proc/sys read-only; it dies with the
# caller. The caller adds its capabilities (--cap-drop/--cap-add), binds
# and --chdir. The project's tree (ROOT, the caller's) stays visible,
# read-only, wherever it is: a checkout under /tmp or /var/tmp would
# otherwise lose its hvrun and its built tests to the private ones.
sandbox_run() {
    local kvm=() tree=()
    [ -e /dev/kvm ] && kvm=(--dev-bind /dev/kvm /dev/kvm)
    [ -n "${ROOT:-}" ] && tree=(--ro-bind "$ROOT" "$ROOT")
    bwrap --ro-bind / / --dev /dev "${kvm[@]}" --proc /proc \
        --ro-bind /proc/sys /proc/sys \
        --tmpfs /tmp --tmpfs /var/tmp --tmpfs /dev/shm "${tree[@]}" \
        --unshare-pid --unshare-net --unshare-ipc --unshare-uts \
        --unshare-cgroup-try --die-with-parent --new-session "$@"
}
